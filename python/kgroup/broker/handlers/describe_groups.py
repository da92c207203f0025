"""DescribeGroups: v0-6. State, protocol and members of groups, with each member's metadata and
assignment. v1 adds throttle_time_ms; v3 authorized operations; v4 group_instance_id; v5 is
flexible; v6 answers GROUP_ID_NOT_FOUND (and a message) for a group that does not exist, where
v0-5 describe it as Dead (KIP-1043).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_GROUPS
VERSIONS = (0, 6)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
