"""Heartbeat: v0-4. A member keeps its session alive and learns of a rebalance
(REBALANCE_IN_PROGRESS). v1 adds throttle_time_ms; v3 group_instance_id; v4 is flexible.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer, the principal must be allowed to READ the group, else
GROUP_AUTHORIZATION_FAILED (Kafka's KafkaApis.handleHeartbeatRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.HEARTBEAT
VERSIONS = (0, 4)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes] | dict[str, Any]:
    if ctx.state.authorizer is not None and not ctx.authorize(
        AclOperation.READ, ResourceType.GROUP, ctx.request.body.group_id
    ):
        return {"error_code": errors.GroupAuthorizationFailed.code}
    return ctx.state.groups.handle(ctx)
