"""TxnOffsetCommit: v0-4. Offsets committed inside a transaction, sent to the group's
coordinator: written to ``__consumer_offsets`` in the producer's transactional batch and kept
pending, invisible to OffsetFetch, until the transaction's marker commits or aborts them. v2
adds leader epochs; v3 the member id, generation and group instance id, checked as a commit's
(KIP-447), and flexible versions; v4 answers TRANSACTION_ABORTABLE.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame once the records are durable.

With an authorizer (Kafka's KafkaApis.handleTxnOffsetCommitRequest): without WRITE on the
transactional id every partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED, without READ on
the group GROUP_AUTHORIZATION_FAILED; a topic the principal may not READ answers
TOPIC_AUTHORIZATION_FAILED for each of its partitions and is not committed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.handlers.offset_commit import commit_allowed, partition_errors
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.TXN_OFFSET_COMMIT
VERSIONS = (0, 4)


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    if ctx.state.authorizer is None:
        return ctx.state.groups.handle(ctx)
    body = ctx.request.body.to_dict()
    code = 0
    if not ctx.authorize(
        AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body["transactional_id"]
    ):
        code = errors.TransactionalIdAuthorizationFailed.code
    elif not ctx.authorize(AclOperation.READ, ResourceType.GROUP, body["group_id"]):
        code = errors.GroupAuthorizationFailed.code
    if code:
        return {"topics": partition_errors(body["topics"], code)}
    return commit_allowed(ctx, body, AclOperation.READ)
