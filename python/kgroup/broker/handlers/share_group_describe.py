"""ShareGroupDescribe: v1. State, epochs, assignor (``simple``) and members of KIP-932 share
groups, with each member's subscription and assignment. A group that is not a share group or
does not exist is GROUP_ID_NOT_FOUND. v1 (Kafka 4.1) is the first stable version. Every
version is flexible.

Served behind ``group.share.enable`` (off: every group UNSUPPORTED_VERSION, and ApiVersions
does not list it), by the group coordinator (``kgroup.broker.coordinators.groups``).

With an authorizer (Kafka 4.2's KafkaApis.handleShareGroupDescribe): a group the principal may
not DESCRIBE answers GROUP_AUTHORIZATION_FAILED; one whose members' assignments name a topic
the principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED, without its members; the
authorized operations asked for are the principal's on the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.coordinated import then, to_groups
from kgroup.broker.handlers.api_versions import share_enabled
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.SHARE_GROUP_DESCRIBE
VERSIONS = (1, 1)
#: PROTOCOL: listed in ApiVersions only while share groups are on (``api_versions``).
PROTOCOL = "share"


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    state = ctx.state
    request = ctx.request
    if not share_enabled(state.config):
        return {
            "groups": [
                {"group_id": g, "error_code": errors.UnsupportedVersion.code}
                for g in request.body.group_ids
            ]
        }
    if state.authorizer is None:
        return state.groups.handle(ctx)
    names = list(request.body.group_ids)
    operations = request.body.include_authorized_operations
    allowed = ctx.authorized(AclOperation.DESCRIBE, ResourceType.GROUP, names, str)
    refused = [
        {"error_code": errors.GroupAuthorizationFailed.code, "group_id": g}
        for g in names
        if g not in allowed
    ]
    kept = [g for g in names if g in allowed]

    def merge(response: dict[str, Any]) -> dict[str, Any]:
        groups = response["groups"]
        if operations:
            for g in groups:
                if g["error_code"] == 0:
                    g["authorized_operations"] = ctx.authorized_operations(
                        ResourceType.GROUP, g["group_id"]
                    )
        groups = refused + groups
        topics = {
            tp["topic_name"]
            for g in groups
            for m in g.get("members", [])
            for tp in m["assignment"]["topic_partitions"]
        }
        visible = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, topics, str)
        out = []
        for g in groups:
            hidden = any(
                tp["topic_name"] not in visible
                for m in g.get("members", [])
                for tp in m["assignment"]["topic_partitions"]
            )
            if hidden:
                g = {
                    "group_id": g["group_id"],
                    "error_code": errors.TopicAuthorizationFailed.code,
                    "error_message": "The group has described topic(s) that the client is not "
                    "authorized to describe.",
                    "members": [],
                }
            out.append(g)
        response["groups"] = out
        return response

    if not kept:
        return merge({"groups": []})
    body = {**request.body.to_dict(), "group_ids": kept}
    return then(ctx, to_groups(ctx, body), merge)
