"""DeleteGroups: v0-2. Delete groups and their offsets; only an Empty group can go, any other
is refused with NON_EMPTY_GROUP, an unknown one with GROUP_ID_NOT_FOUND. v1 changes only
throttling; v2 is flexible.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DELETE_GROUPS
VERSIONS = (0, 2)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
