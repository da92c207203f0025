"""ConsumerGroupDescribe: v0-1. State, epochs, assignor and members of KIP-848 consumer groups,
with each member's subscription, assignment and target assignment. A group that is not a
consumer group (a classic one) or does not exist is GROUP_ID_NOT_FOUND, on which clients fall
back to DescribeGroups. v1 (Kafka 4.0) adds each member's type (KIP-1099: classic or consumer
protocol). Every version is flexible.

Advertised only while ``group.coordinator.rebalance.protocols`` includes ``consumer`` (see
``api_versions``). Served by the group coordinator (``kgroup.broker.coordinators.groups``),
which writes the response frame.

With an authorizer (Kafka's KafkaApis.handleConsumerGroupDescribe): a group the principal may
not DESCRIBE answers GROUP_AUTHORIZATION_FAILED; one whose members' assignments name a topic
the principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED, without its members; the
authorized operations asked for are the principal's on the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.coordinated import then, to_groups
from kgroup.broker.handlers.api_versions import consumer_protocol
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.CONSUMER_GROUP_DESCRIBE
VERSIONS = (0, 1)
#: PROTOCOL is the group protocol of ``group.coordinator.rebalance.protocols`` this api needs.
PROTOCOL = "consumer"


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    state = ctx.state
    if state.authorizer is None or not consumer_protocol(state.config):
        return state.groups.handle(ctx)
    request = ctx.request
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
            for a in (m["assignment"], m["target_assignment"])
            for tp in a["topic_partitions"]
        }
        visible = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, topics, str)
        out = []
        for g in groups:
            hidden = any(
                tp["topic_name"] not in visible
                for m in g.get("members", [])
                for a in (m["assignment"], m["target_assignment"])
                for tp in a["topic_partitions"]
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
