"""AddPartitionsToTxn: v0-5. Partitions a transaction is about to write to, added before the
first batch to each. v0-3 are the client's (one transaction); v4+ carry several transactions
and ``verify_only`` (KIP-890 part 1: partition leaders asking whether a partition is already
in its transaction); v2 answers PRODUCER_FENCED where v0-1 answer INVALID_PRODUCER_EPOCH; v3 is
flexible; v5 answers TRANSACTION_ABORTABLE.

Served by the transaction coordinator (``kgroup.broker.coordinators.transactions``), which
writes the response frame once the transaction's new partitions are durable in
``__transaction_state``.

With an authorizer (Kafka's KafkaApis.handleAddPartitionsToTxnRequest): v4+ (brokers
verifying) needs CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED for the whole
request. Before v4 the producer needs WRITE on its transactional id (else every partition
answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and on each topic: when a topic is refused (an
internal one always is) or unknown, nothing is added, the refused answer
TOPIC_AUTHORIZATION_FAILED, the unknown UNKNOWN_TOPIC_OR_PARTITION, the rest
OPERATION_NOT_ATTEMPTED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.broker.topics import INTERNAL_TOPICS
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.ADD_PARTITIONS_TO_TXN
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes] | dict[str, Any]:
    state, request = ctx.state, ctx.request
    if state.authorizer is None:
        return state.transactions.handle(request)
    body = request.body
    if request.api_version >= 4:
        if not ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
            return {"error_code": errors.ClusterAuthorizationFailed.code}
        return state.transactions.handle(request)
    topics = body.v3_and_below_topics
    if not ctx.authorize(
        AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.v3_and_below_transactional_id
    ):
        return _answer(topics, lambda _t, _p: errors.TransactionalIdAuthorizationFailed.code)
    writable = ctx.authorized(
        AclOperation.WRITE,
        ResourceType.TOPIC,
        [t for t in topics if t.name not in INTERNAL_TOPICS],
        lambda t: t.name,
    )

    def code(name: str, index: int) -> int:
        if name not in writable:
            return errors.TopicAuthorizationFailed.code
        topic = state.topics.by_name.get(name)
        if topic is None or not 0 <= index < len(topic.partitions):
            return errors.UnknownTopicOrPartition.code
        return 0

    if all(code(t.name, i) == 0 for t in topics for i in t.partitions):
        return state.transactions.handle(request)
    return _answer(topics, lambda t, i: code(t, i) or errors.OperationNotAttempted.code)


def _answer(topics: Any, code: Any) -> dict[str, Any]:
    return {
        "results_by_topic_v3_and_below": [
            {
                "name": t.name,
                "results_by_partition": [
                    {"partition_index": i, "partition_error_code": code(t.name, i)}
                    for i in t.partitions
                ],
            }
            for t in topics
        ]
    }
