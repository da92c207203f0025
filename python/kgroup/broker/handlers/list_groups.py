"""ListGroups: v0-5. The groups this broker coordinates. v1 adds throttle_time_ms; v3 is
flexible; v4 a state filter (KIP-518); v5 a type filter (KIP-848: every group here is
classic).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.LIST_GROUPS
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
