"""DescribeProducers: v0 (flexible). The active idempotent and transactional producers of
partitions (KIP-664, ``kafka-transactions.sh describe-producers``): each one's epoch, last
sequence and timestamp, the coordinator epoch of its last marker and the first offset of its
open transaction (-1 for none), as the partition's producer state holds them. An unknown
topic or partition answers UNKNOWN_TOPIC_OR_PARTITION.

With an authorizer, READ on each topic (else TOPIC_AUTHORIZATION_FAILED, with its message),
before the topic is looked up (Kafka's KafkaApis.handleDescribeProducersRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_PRODUCERS
VERSIONS = (0, 0)


def handle(ctx: RequestContext) -> dict[str, Any]:
    state = ctx.state
    topics = []
    readable = (
        None
        if state.authorizer is None
        else ctx.authorized(
            AclOperation.READ, ResourceType.TOPIC, ctx.request.body.topics, lambda t: t.name
        )
    )
    for t in ctx.request.body.topics:
        topic = state.topics.by_name.get(t.name)
        refused = readable is not None and t.name not in readable
        partitions = []
        for index in t.partition_indexes:
            out: dict[str, Any] = {
                "partition_index": index,
                "error_code": 0,
                "error_message": None,
                "active_producers": [],
            }
            if refused:
                # Kafka's handleDescribeProducersRequest: READ on the topic, before its lookup.
                out["error_code"] = errors.TopicAuthorizationFailed.code
                out["error_message"] = errors.TopicAuthorizationFailed.message
            elif topic is None or not 0 <= index < len(topic.partitions):
                out["error_code"] = errors.UnknownTopicOrPartition.code
            else:
                out["active_producers"] = [
                    {
                        "producer_id": p.producer_id,
                        "producer_epoch": p.producer_epoch,
                        "last_sequence": p.last_sequence,
                        "last_timestamp": p.last_timestamp,
                        "coordinator_epoch": p.coordinator_epoch,
                        "current_txn_start_offset": p.current_txn_start_offset,
                    }
                    for p in topic.partitions[index].log.producers()
                ]
            partitions.append(out)
        topics.append({"name": t.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
