"""kgroup's assignors as kafka-python partition assignors.

Drop-in replacements for kafka-python's own, computed in Rust and equal to Java's (same
names, same decisions, same bytes), so a group can mix kafka-python and Java consumers and
large groups rebalance fast::

    from kafka import KafkaConsumer
    from kgroup.adapters.kafka_python import CooperativeStickyAssignor

    consumer = KafkaConsumer(
        "events", group_id="g", partition_assignment_strategy=[CooperativeStickyAssignor]
    )

Each class is what kafka-python expects (``name``, ``supported_protocols()``,
``metadata(topics)``, ``assign(cluster, members)``, ``on_assignment(assignment, generation)``).
Subscriptions are sent as ConsumerProtocol version 3, as Java's consumer sends them: sorted
topics, the member's owned partitions and generation (cooperative), its previous assignment in
the StickyAssignor user data (eager sticky), and its rack when given (``client_rack``).
Pass an instance instead of the class to set ``client_rack``.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.structs import TopicPartition as KafkaTopicPartition

from kgroup import assignors as _assignors
from kgroup.assignors.consumer_protocol import encode_sticky_user_data

__all__ = [
    "CooperativeStickyAssignor",
    "RangePartitionAssignor",
    "RoundRobinPartitionAssignor",
    "StickyPartitionAssignor",
]

_VERSION = 3


def _owned(metadata) -> list[tuple[str, int]]:
    return [
        (tp.topic, p)
        for tp in (getattr(metadata, "owned_partitions", None) or ())
        for p in tp.partitions
    ]


def _subscription(member) -> _assignors.Subscription:
    md = member.metadata
    generation = getattr(md, "generation_id", -1)
    return _assignors.Subscription(
        list(md.topics),
        user_data=md.user_data,
        owned_partitions=_owned(md),
        generation_id=-1 if generation is None else generation,
        rack_id=getattr(md, "rack_id", None) or None,
        group_instance_id=getattr(member, "group_instance_id", None),
    )


def _partition_racks(cluster, topics: Iterable[str]) -> dict[tuple[str, int], set[str]] | None:
    """Replica racks per partition from kafka-python's metadata cache (None without racks)."""
    parts = getattr(cluster, "_partitions", None)
    if not parts:
        return None
    out: dict[tuple[str, int], set[str]] = {}
    any_rack = False
    for t in topics:
        for p, meta in (parts.get(t) or {}).items():
            racks = set()
            for node in (
                getattr(meta, "replica_nodes", None) or getattr(meta, "replicas", None) or ()
            ):
                broker = cluster.broker_metadata(node)
                rack = getattr(broker, "rack", None) if broker is not None else None
                if rack:
                    racks.add(rack)
            any_rack |= bool(racks)
            out[(t, p)] = racks
    return out if any_rack else None


class _KgroupAssignor(AbstractPartitionAssignor):
    """Shared plumbing: kafka-python's objects in, kgroup's assignor in the middle."""

    name = ""
    _kind: type = _assignors.RangeAssignor
    _protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def __init__(self, client_rack: str | None = None) -> None:
        self.client_rack = client_rack
        self._assignor = self._kind()
        self.member_assignment: list[KafkaTopicPartition] | None = None
        self.generation = -1

    def supported_protocols(self) -> list[RebalanceProtocol]:
        return list(self._protocols)

    def _user_data(self) -> bytes | None:
        return None

    def _owned_partitions(self) -> list[tuple[str, int]]:
        return []

    def metadata(self, topics) -> ConsumerProtocolSubscription:
        owned: dict[str, list[int]] = {}
        for t, p in sorted(self._owned_partitions()):
            owned.setdefault(t, []).append(p)
        sub_tp = ConsumerProtocolSubscription.TopicPartition
        return ConsumerProtocolSubscription(
            version=_VERSION,
            topics=sorted(topics),
            user_data=self._user_data(),
            owned_partitions=[sub_tp(topic=t, partitions=ps) for t, ps in owned.items()],
            generation_id=self.generation,
            rack_id=self.client_rack,
        )

    def assign(self, cluster, members) -> dict[str, ConsumerProtocolAssignment]:
        subscriptions = {m.member_id: _subscription(m) for m in members}
        topics = {t for s in subscriptions.values() for t in s.topics}
        counts = {}
        for t in topics:
            parts = cluster.partitions_for_topic(t)
            if parts:
                counts[t] = len(parts)
        racks = None
        if any(s.rack_id for s in subscriptions.values()):
            racks = _partition_racks(cluster, counts)
        result = self._assignor.assign(counts, subscriptions, partition_racks=racks)
        out = {}
        for member_id, a in result.items():
            grouped: dict[str, list[int]] = {}
            for tp in a.partitions:  # by topic in order of first appearance, as Java writes it
                grouped.setdefault(tp.topic, []).append(tp.partition)
            out[member_id] = ConsumerProtocolAssignment(
                version=_VERSION,
                assigned_partitions=list(grouped.items()),
                user_data=a.user_data,
            )
        return out

    def on_assignment(self, assignment, generation) -> None:
        self.member_assignment = list(assignment.partitions())
        self.generation = generation


class RangePartitionAssignor(_KgroupAssignor):
    """Kafka's ``range`` assignor (kgroup.assignors.RangeAssignor)."""

    name = "range"
    _kind = _assignors.RangeAssignor


class RoundRobinPartitionAssignor(_KgroupAssignor):
    """Kafka's ``roundrobin`` assignor (kgroup.assignors.RoundRobinAssignor)."""

    name = "roundrobin"
    _kind = _assignors.RoundRobinAssignor


class StickyPartitionAssignor(_KgroupAssignor):
    """Kafka's eager ``sticky`` assignor: the previous assignment travels in the user data."""

    name = "sticky"
    _kind = _assignors.StickyAssignor

    def _user_data(self) -> bytes | None:
        if self.member_assignment is None:
            return None
        return encode_sticky_user_data(
            [(tp.topic, tp.partition) for tp in self.member_assignment], self.generation
        )


class CooperativeStickyAssignor(_KgroupAssignor):
    """Kafka's ``cooperative-sticky`` assignor (KIP-429): members keep their partitions while
    rebalancing; a partition changing owner is revoked first and assigned in a follow-up round."""

    name = "cooperative-sticky"
    _kind = _assignors.CooperativeStickyAssignor
    _protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def _user_data(self) -> bytes | None:
        return int(self.generation).to_bytes(4, "big", signed=True)

    def _owned_partitions(self) -> list[tuple[str, int]]:
        return [(tp.topic, tp.partition) for tp in self.member_assignment or ()]
