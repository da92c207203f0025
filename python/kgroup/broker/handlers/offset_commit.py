"""OffsetCommit: v0-9. A group commits offsets; the answer comes once the records are durable
in __consumer_offsets, and only then does OffsetFetch see them. v1 adds the generation and
member id (and a per-partition timestamp, v1 only); v2-4 a retention time; v3
throttle_time_ms; v6 leader epochs; v7 group_instance_id; v8 is flexible; v9 member epochs
(KIP-848; a classic group reads the epoch as its generation).

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer (Kafka's KafkaApis.handleOffsetCommitRequest): without READ on the group
every partition answers GROUP_AUTHORIZATION_FAILED; a topic the principal may not READ answers
TOPIC_AUTHORIZATION_FAILED for each of its partitions and is not committed, the others are.
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

API_KEY = ApiKey.OFFSET_COMMIT
VERSIONS = (0, 9)


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    if ctx.state.authorizer is None:
        return ctx.state.groups.handle(ctx)
    body = ctx.request.body.to_dict()
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, body["group_id"]):
        return {"topics": partition_errors(body["topics"], errors.GroupAuthorizationFailed.code)}
    return commit_allowed(ctx, body, AclOperation.READ)


def partition_errors(topics: list[dict[str, Any]], code: int) -> list[dict[str, Any]]:
    """Every partition of ``topics`` (a commit's) answered with the error ``code``."""
    return [
        {
            "name": t["name"],
            "partitions": [
                {"partition_index": p["partition_index"], "error_code": code}
                for p in t["partitions"]
            ],
        }
        for t in topics
    ]


def commit_allowed(
    ctx: RequestContext, body: dict[str, Any], operation: AclOperation
) -> dict[str, Any] | Awaitable[dict[str, Any]] | bytes | asyncio.Future[bytes]:
    """Commit the topics of ``body`` the principal may do ``operation`` on; the others answer
    TOPIC_AUTHORIZATION_FAILED (OffsetCommit, TxnOffsetCommit, OffsetDelete alike)."""
    topics = body["topics"]
    allowed = ctx.authorized(operation, ResourceType.TOPIC, topics, lambda t: t["name"])
    refused = [t for t in topics if t["name"] not in allowed]
    if not refused:
        return to_groups(ctx, body)
    denied = partition_errors(refused, errors.TopicAuthorizationFailed.code)
    kept = [t for t in topics if t["name"] in allowed]
    if not kept:
        return {"topics": denied}

    def merge(response: dict[str, Any]) -> dict[str, Any]:
        response["topics"] = response["topics"] + denied
        return response

    return then(ctx, to_groups(ctx, {**body, "topics": kept}), merge)
