"""OffsetDelete: v0. Delete a group's committed offsets of some partitions (KIP-496); refused
with GROUP_SUBSCRIBED_TO_TOPIC for a topic the group's members still consume.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer (Kafka's KafkaApis.handleOffsetDeleteRequest): without DELETE on the group
the request answers GROUP_AUTHORIZATION_FAILED; a topic the principal may not READ answers
TOPIC_AUTHORIZATION_FAILED for each of its partitions and keeps its offsets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.handlers.offset_commit import commit_allowed
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.OFFSET_DELETE
VERSIONS = (0, 0)


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    if ctx.state.authorizer is None:
        return ctx.state.groups.handle(ctx)
    body = ctx.request.body.to_dict()
    if not ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, body["group_id"]):
        return {"error_code": errors.GroupAuthorizationFailed.code, "topics": []}
    return commit_allowed(ctx, body, AclOperation.READ)
