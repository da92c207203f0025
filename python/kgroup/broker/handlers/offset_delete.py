"""OffsetDelete: v0. Delete a group's committed offsets of some partitions (KIP-496); refused
with GROUP_SUBSCRIBED_TO_TOPIC for a topic the group's members still consume.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.OFFSET_DELETE
VERSIONS = (0, 0)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
