"""SyncGroup: v0-5. The leader hands out the generation's assignments; every member gets its
own, parked until the leader's arrives (and is durable). v1 adds throttle_time_ms; v3
group_instance_id; v4 is flexible; v5 the protocol type and name, checked against the
group's.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.SYNC_GROUP
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
