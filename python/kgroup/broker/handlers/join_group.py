"""JoinGroup: v0-9. A member joins (or rejoins) a group and waits, parked, until the rebalance
completes; the leader gets every member's metadata to assign from. v1 adds the rebalance
timeout; v2 throttle_time_ms; v4 MEMBER_ID_REQUIRED, a new member's first join answered with
its id (KIP-394); v5 group_instance_id (static membership, KIP-345); v6 is flexible; v7 the
protocol type in the response; v8 a reason (KIP-800); v9 skip_assignment (KIP-814).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer, the principal must be allowed to READ the group, else the answer is
GROUP_AUTHORIZATION_FAILED with no member id or generation (Kafka's
KafkaApis.handleJoinGroupRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.JOIN_GROUP
VERSIONS = (0, 9)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes] | dict[str, Any]:
    request = ctx.request
    if ctx.state.authorizer is not None and not ctx.authorize(
        AclOperation.READ, ResourceType.GROUP, request.body.group_id
    ):
        version = request.api_version
        return {
            "error_code": errors.GroupAuthorizationFailed.code,
            "generation_id": -1,
            "protocol_name": None if version >= 7 else "",
            "leader": "",
            "member_id": "",
            "members": [],
        }
    return ctx.state.groups.handle(ctx)
