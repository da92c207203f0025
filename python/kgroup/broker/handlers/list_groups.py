"""ListGroups: v0-5. The groups this broker coordinates. v1 adds throttle_time_ms; v3 is
flexible; v4 a state filter (KIP-518); v5 a type filter (KIP-848: every group here is
classic).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer, a principal without DESCRIBE on the cluster sees only the groups it may
DESCRIBE (Kafka's KafkaApis.handleListGroupsRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.broker.coordinated import then
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.LIST_GROUPS
VERSIONS = (0, 5)


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    if ctx.state.authorizer is None or ctx.authorize(
        AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME
    ):
        return ctx.state.groups.handle(ctx)

    def keep(response: dict[str, Any]) -> dict[str, Any]:
        groups = response["groups"]
        allowed = ctx.authorized(
            AclOperation.DESCRIBE, ResourceType.GROUP, groups, lambda g: g["group_id"]
        )
        response["groups"] = [g for g in groups if g["group_id"] in allowed]
        return response

    return then(ctx, ctx.state.groups.handle(ctx), keep)
