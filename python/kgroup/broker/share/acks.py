"""What ShareFetch and ShareAcknowledge share: the request's topics merged by topic id, and the
acknowledgements applied partition by partition (Kafka 4.2's ``KafkaApis.handleAcknowledgements``
and ``validateAcknowledgementBatches``, ``SharePartitionManager.acknowledge``)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup._native.share import validate_acknowledgement_batches
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.share.manager import now_ms

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext
    from kgroup.broker.topics import Partition

__all__ = ["AckResult", "acknowledge", "error_entry", "merged_partitions", "resolve"]

#: A partition's acknowledgement outcome: (error code, error message).
AckResult = tuple[int, str | None]
TopicIdPartition = tuple[uuid.UUID, int]
AckBatch = tuple[int, int, list[int]]


def error_entry(e: errors.KafkaError) -> AckResult:
    """An error as a response's (code, message): the error's own text, else Kafka's."""
    return e.code, (str(e) if e.args else e.message)


def merged_partitions(topics: Any) -> dict[TopicIdPartition, list[AckBatch]]:
    """The request's partitions with their acknowledgement batches, in request order. A topic
    may come in several entries (librdkafka writes a partition's added and acknowledging
    appearances apart): they are merged, not rejected."""
    out: dict[TopicIdPartition, list[AckBatch]] = {}
    for t in topics:
        for p in t.partitions:
            batches = out.setdefault((t.topic_id, p.partition_index), [])
            batches.extend(
                (b.first_offset, b.last_offset, list(b.acknowledge_types))
                for b in p.acknowledgement_batches
            )
    return out


def resolve(ctx: RequestContext, tp: TopicIdPartition) -> Partition:
    """The log partition of ``tp``: UNKNOWN_TOPIC_ID, TOPIC_AUTHORIZATION_FAILED (READ on the
    topic), UNKNOWN_TOPIC_OR_PARTITION, as Kafka checks them."""
    topic = ctx.state.topics.by_id.get(tp[0])
    if topic is None:
        raise errors.UnknownTopicId()
    if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic.name):
        raise errors.TopicAuthorizationFailed()
    if not 0 <= tp[1] < len(topic.partitions):
        raise errors.UnknownTopicOrPartition()
    return topic.partitions[tp[1]]


def acknowledge(
    ctx: RequestContext,
    group: str,
    member: str,
    acks: dict[TopicIdPartition, list[AckBatch]],
    supports_renew: bool,
    is_renew_ack: bool,
) -> dict[TopicIdPartition, AckResult]:
    """Apply each partition's acknowledgement batches, all or nothing per partition; the
    outcome per partition: INVALID_REQUEST (bad batches), the partition's lookup errors, an
    empty list NONE, no share partition for it UNKNOWN_TOPIC_OR_PARTITION, else the share
    partition's answer (INVALID_RECORD_STATE for a record the member does not hold). Each
    change is persisted, and a partition's waiting fetches are woken."""
    shares = ctx.state.shares
    out: dict[TopicIdPartition, AckResult] = {}
    for tp, batches in acks.items():
        try:
            validate_acknowledgement_batches(batches, supports_renew, is_renew_ack)
            p = resolve(ctx, tp)
            if not batches:
                out[tp] = (0, None)
                continue
            h = shares.existing(group, p)
            if h is None:
                raise errors.UnknownTopicOrPartition()
            if is_renew_ack:
                # Renewed locks run for the group's lock duration as it is now.
                h.share.record_lock_duration_ms = shares.lock_duration_ms(group)
            update = h.share.acknowledge(member, batches, now_ms())
        except errors.KafkaError as e:
            out[tp] = error_entry(e)
            continue
        shares.released(h, update)
        if update is None:
            # Renewed locks only: the timer moves with them.
            shares.arm(h)
        out[tp] = (0, None)
    return out
