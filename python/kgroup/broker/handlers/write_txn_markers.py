"""WriteTxnMarkers: v0-1. Write commit or abort markers to partitions: what a transaction
coordinator sends each partition's leader, and what an admin client sends to abort a hanging
transaction with the producer id, epoch and coordinator epoch DescribeProducers showed it
(KIP-664, ``kafka-transactions.sh abort``). v1 is flexible.

This broker's own coordinator writes its markers in process (``TxnHost``); this handler is for
other senders. Each partition answers as Kafka's: UNKNOWN_TOPIC_OR_PARTITION for one that does
not exist, INVALID_PRODUCER_EPOCH for an epoch older than the producer's, and
TRANSACTION_COORDINATOR_FENCED for a coordinator epoch older than the one it last saw. A marker
on ``__consumer_offsets`` ends the transaction's offsets in the group coordinator, which answers
NOT_LEADER_OR_FOLLOWER while that partition loads, as Kafka maps its coordinator errors.

With an authorizer, ALTER or CLUSTER_ACTION on the cluster, else every partition answers
CLUSTER_AUTHORIZATION_FAILED (Kafka's KafkaApis.handleWriteTxnMarkersRequest).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.broker.topics import now_ms
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext
    from kgroup.broker.topics import Partition

API_KEY = ApiKey.WRITE_TXN_MARKERS
VERSIONS = (0, 1)


def handle(ctx: RequestContext) -> dict[str, Any] | asyncio.Future[dict[str, Any]]:
    state = ctx.state
    if state.authorizer is not None and not (
        ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
        or ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME)
    ):
        # Kafka's handleWriteTxnMarkersRequest: ALTER or CLUSTER_ACTION on the cluster, else
        # every partition fails.
        code = errors.ClusterAuthorizationFailed.code
        return {
            "markers": [
                {
                    "producer_id": m.producer_id,
                    "topics": [
                        {
                            "name": t.name,
                            "partitions": [
                                {"partition_index": i, "error_code": code}
                                for i in t.partition_indexes
                            ],
                        }
                        for t in m.topics
                    ],
                }
                for m in ctx.request.body.markers
            ]
        }
    now = now_ms()
    written: list[Partition] = []
    markers = []
    for m in ctx.request.body.markers:
        topics = []
        for t in m.topics:
            partitions = []
            for index in t.partition_indexes:
                code = 0
                try:
                    p = state.transactions.append_marker(
                        t.name,
                        index,
                        m.producer_id,
                        m.producer_epoch,
                        m.transaction_result,
                        m.coordinator_epoch,
                        now,
                    )
                    lg = p.log
                    if lg.unflushed_messages >= lg.flush_messages:
                        written.append(p)
                except errors.KafkaError as e:
                    code = e.code
                partitions.append({"partition_index": index, "error_code": code})
            topics.append({"name": t.name, "partitions": partitions})
        markers.append({"producer_id": m.producer_id, "topics": topics})
    response = {"markers": markers}
    if not written:
        return response
    # Written to logs that reached flush.messages: answered once fsynced, as any append then.
    out: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def durable(error: BaseException | None) -> None:
        if out.done():
            return
        if error is not None:
            failed = {(p.topic.name, p.index) for p in written}
            for m in markers:
                for t in m["topics"]:
                    for p in t["partitions"]:
                        if (t["name"], p["partition_index"]) in failed:
                            p["error_code"] = errors.KafkaStorageError.code
        out.set_result(response)

    state.flusher.when_durable(written, durable)
    return out
