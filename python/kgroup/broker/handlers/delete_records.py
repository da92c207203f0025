"""DeleteRecords: v0-2. Move partitions' log start offsets forward, deleting the records below
them (whole segments on disk; the rest become unreadable). v1 changes throttling; v2 is
flexible. An offset of -1 means the high watermark. Internal topics (``__consumer_offsets``)
are refused with INVALID_TOPIC_EXCEPTION, as Kafka refuses them.

With an authorizer, DELETE on each topic (else TOPIC_AUTHORIZATION_FAILED), before the topic
is looked up (Kafka's KafkaApis.handleDeleteRecordsRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DELETE_RECORDS
VERSIONS = (0, 2)


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, body = ctx.state, ctx.request.body
    topics = []
    # Kafka's handleDeleteRecordsRequest: DELETE on each topic, before it is looked up.
    deletable = (
        None
        if state.authorizer is None
        else ctx.authorized(AclOperation.DELETE, ResourceType.TOPIC, body.topics, lambda t: t.name)
    )
    for t in body.topics:
        topic = state.topics.by_name.get(t.name)
        if deletable is not None and t.name not in deletable:
            topic = None
        partitions = []
        for p in t.partitions:
            out: dict[str, Any] = {"partition_index": p.partition_index, "low_watermark": -1}
            try:
                if deletable is not None and t.name not in deletable:
                    raise errors.TopicAuthorizationFailed()
                if topic is None or not 0 <= p.partition_index < len(topic.partitions):
                    raise errors.UnknownTopicOrPartition()
                if topic.internal:
                    raise errors.InvalidTopicException(
                        f"Cannot delete records of internal topic {topic.name}"
                    )
                partition = topic.partitions[p.partition_index]
                hw = partition.high_watermark
                offset = hw if p.offset == -1 else p.offset
                if offset < 0 or offset > hw:
                    raise errors.OffsetOutOfRange(
                        f"Cannot delete records of partition {partition.name} before offset "
                        f"{p.offset}: it is above the high watermark {hw}"
                    )
                out["low_watermark"] = partition.log.delete_records(offset, hw)
                out["error_code"] = 0
            except errors.KafkaError as e:
                out["error_code"] = e.code
            partitions.append(out)
        topics.append({"name": t.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
