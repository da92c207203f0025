"""DescribeGroups: v0-6. State, protocol and members of groups, with each member's metadata and
assignment. v1 adds throttle_time_ms; v3 authorized operations; v4 group_instance_id; v5 is
flexible; v6 answers GROUP_ID_NOT_FOUND (and a message) for a group that does not exist, where
v0-5 describe it as Dead (KIP-1043).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer (Kafka's KafkaApis.handleDescribeGroupsRequest): a group the principal may
not DESCRIBE answers GROUP_AUTHORIZATION_FAILED; the authorized operations asked for (v3+) are
the principal's on the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.coordinated import then, to_groups
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_GROUPS
VERSIONS = (0, 6)


#: UNKNOWN_STATE is the state a group refused is described with (Kafka's DescribeGroupsResponse).
UNKNOWN_STATE = ""
NOT_REQUESTED = -(2**31)


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    if ctx.state.authorizer is None:
        return ctx.state.groups.handle(ctx)
    request = ctx.request
    version = request.api_version
    names = list(request.body.groups)
    operations = version >= 3 and request.body.include_authorized_operations
    allowed = ctx.authorized(AclOperation.DESCRIBE, ResourceType.GROUP, names, str)
    refused = [
        {
            "error_code": errors.GroupAuthorizationFailed.code,
            "group_id": g,
            "group_state": UNKNOWN_STATE,
            "protocol_type": "",
            "protocol_data": "",
            "members": [],
            "authorized_operations": NOT_REQUESTED,
        }
        for g in names
        if g not in allowed
    ]
    if version < 3:
        for r in refused:
            del r["authorized_operations"]
    kept = [g for g in names if g in allowed]

    def merge(response: dict[str, Any]) -> dict[str, Any]:
        if operations:
            for g in response["groups"]:
                if g["error_code"] == 0:
                    g["authorized_operations"] = ctx.authorized_operations(
                        ResourceType.GROUP, g["group_id"]
                    )
        response["groups"] = refused + response["groups"]
        return response

    if not kept:
        return {"groups": refused}
    body = {**request.body.to_dict(), "groups": kept}
    return then(ctx, to_groups(ctx, body), merge)
