"""OffsetCommit: v0-9. A group commits offsets; the answer comes once the records are durable
in __consumer_offsets, and only then does OffsetFetch see them. v1 adds the generation and
member id (and a per-partition timestamp, v1 only); v2-4 a retention time; v3
throttle_time_ms; v6 leader epochs; v7 group_instance_id; v8 is flexible; v9 member epochs
(KIP-848; a classic group reads the epoch as its generation).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.OFFSET_COMMIT
VERSIONS = (0, 9)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
