"""Heartbeat: v0-4. A member keeps its session alive and learns of a rebalance
(REBALANCE_IN_PROGRESS). v1 adds throttle_time_ms; v3 group_instance_id; v4 is flexible.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.HEARTBEAT
VERSIONS = (0, 4)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
