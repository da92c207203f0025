"""OffsetFetch: v0-9. A group's committed offsets. v2 fetches every partition for null topics
and adds a top-level error; v3 throttle_time_ms; v5 leader epochs; v6 is flexible; v7
require_stable (KIP-447: UNSTABLE_OFFSET_COMMIT while a commit is pending); v8 several groups
in one request; v9 member id and epoch (KIP-848).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer (Kafka's KafkaApis.handleOffsetFetchRequest): a group the principal may not
DESCRIBE answers GROUP_AUTHORIZATION_FAILED (before v2, on each partition asked for); a topic
asked for that it may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED on each partition; when
every topic is asked for (null), those it may not DESCRIBE are left out.
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

API_KEY = ApiKey.OFFSET_FETCH
VERSIONS = (0, 9)


def _refused(topics: list[dict[str, Any]], code: int) -> list[dict[str, Any]]:
    """Every partition of ``topics`` (asked for) answered with the error ``code``."""
    return [
        {
            "name": t["name"],
            "partitions": [
                {"partition_index": i, "committed_offset": -1, "error_code": code}
                for i in t["partition_indexes"]
            ],
        }
        for t in topics
    ]


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    if ctx.state.authorizer is None:
        return ctx.state.groups.handle(ctx)
    version = ctx.request.api_version
    body = ctx.request.body.to_dict()
    batched = version >= 8
    groups = (
        body["groups"] if batched else [{"group_id": body["group_id"], "topics": body["topics"]}]
    )
    denied_code = errors.GroupAuthorizationFailed.code
    # Per group: None (refused whole), or the topics refused (all topics asked: filtered later).
    plans: list[list[dict[str, Any]] | None] = []
    sent: list[dict[str, Any]] = []
    for g in groups:
        if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g["group_id"]):
            plans.append(None)
            continue
        topics = g["topics"]
        if topics is None:
            plans.append([])
            sent.append(g)
            continue
        allowed = ctx.authorized(
            AclOperation.DESCRIBE, ResourceType.TOPIC, topics, lambda t: t["name"]
        )
        plans.append(
            _refused(
                [t for t in topics if t["name"] not in allowed],
                errors.TopicAuthorizationFailed.code,
            )
        )
        sent.append({**g, "topics": [t for t in topics if t["name"] in allowed]})

    def complete(group: dict[str, Any], asked: dict[str, Any], refused: list[dict[str, Any]]):
        if group.get("error_code", 0) != 0:
            return group
        if asked["topics"] is None:
            visible = ctx.authorized(
                AclOperation.DESCRIBE, ResourceType.TOPIC, group["topics"], lambda t: t["name"]
            )
            group["topics"] = [t for t in group["topics"] if t["name"] in visible]
        else:
            group["topics"] = group["topics"] + refused
        return group

    if not batched:
        [plan] = plans
        if plan is None:
            if version >= 2:
                return {"error_code": denied_code, "topics": []}
            return {"topics": _refused(groups[0]["topics"], denied_code)}

        def single(response: dict[str, Any]) -> dict[str, Any]:
            return complete(response, groups[0], plan)

        return then(ctx, to_groups(ctx, {**body, "topics": sent[0]["topics"]}), single)

    def batch(response: dict[str, Any]) -> dict[str, Any]:
        answered = {g["group_id"]: g for g in response["groups"]}
        out = []
        for g, plan in zip(groups, plans, strict=True):
            if plan is None:
                out.append({"group_id": g["group_id"], "error_code": denied_code, "topics": []})
            else:
                out.append(complete(answered[g["group_id"]], g, plan))
        response["groups"] = out
        return response

    if not sent:
        return batch({"groups": []})
    return then(ctx, to_groups(ctx, {**body, "groups": sent}), batch)
