"""LeaveGroup: v0-5. Members leave a group, which rebalances at once rather than after their
session timeouts. v1 adds throttle_time_ms; v3 a batch of members by member or instance id
(KIP-345), with an error per member; v4 is flexible; v5 a reason per member (KIP-800).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.LEAVE_GROUP
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
