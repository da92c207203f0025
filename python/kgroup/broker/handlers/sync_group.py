"""SyncGroup: v0-5. The leader hands out the generation's assignments; every member gets its
own, parked until the leader's arrives (and is durable). v1 adds throttle_time_ms; v3
group_instance_id; v4 is flexible; v5 the protocol type and name, checked against the
group's.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer, the principal must be allowed to READ the group, else the answer is
GROUP_AUTHORIZATION_FAILED (a v5+ request without its protocol type and name is
INCONSISTENT_GROUP_PROTOCOL first; Kafka's KafkaApis.handleSyncGroupRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.SYNC_GROUP
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes] | dict[str, Any]:
    request = ctx.request
    body = request.body
    if ctx.state.authorizer is not None and not ctx.authorize(
        AclOperation.READ, ResourceType.GROUP, body.group_id
    ):
        if request.api_version < 5 or (
            body.protocol_type is not None and body.protocol_name is not None
        ):
            return {"error_code": errors.GroupAuthorizationFailed.code, "assignment": b""}
    return ctx.state.groups.handle(ctx)
