"""LeaveGroup: v0-5. Members leave a group, which rebalances at once rather than after their
session timeouts. v1 adds throttle_time_ms; v3 a batch of members by member or instance id
(KIP-345), with an error per member; v4 is flexible; v5 a reason per member (KIP-800).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer, the principal must be allowed to READ the group, else
GROUP_AUTHORIZATION_FAILED (Kafka's KafkaApis.handleLeaveGroupRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.LEAVE_GROUP
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes] | dict[str, Any]:
    if ctx.state.authorizer is not None and not ctx.authorize(
        AclOperation.READ, ResourceType.GROUP, ctx.request.body.group_id
    ):
        return {"error_code": errors.GroupAuthorizationFailed.code, "members": []}
    return ctx.state.groups.handle(ctx)
