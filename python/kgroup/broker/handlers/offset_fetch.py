"""OffsetFetch: v0-9. A group's committed offsets. v2 fetches every partition for null topics
and adds a top-level error; v3 throttle_time_ms; v5 leader epochs; v6 is flexible; v7
require_stable (KIP-447: UNSTABLE_OFFSET_COMMIT while a commit is pending); v8 several groups
in one request; v9 member id and epoch (KIP-848).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.OFFSET_FETCH
VERSIONS = (0, 9)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
