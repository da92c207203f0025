"""Kafka's consumer assignors (classic group protocol), computed in Rust.

The group leader decides which member consumes which partitions. Each assignor here makes the
decisions Java's makes, in the same order, so a kgroup leader and a Java leader hand out the
same partitions in the same list order:

- :class:`RangeAssignor` (``range``): per topic, consecutive ranges in member order; rack-aware
  as in KIP-881 when ``partition_racks`` and member racks are given.
- :class:`RoundRobinAssignor` (``roundrobin``): all partitions dealt around the members.

>>> from kgroup.assignors import RangeAssignor, Subscription
>>> out = RangeAssignor().assign({"t": 3}, {"c0": Subscription(["t"]), "c1": Subscription(["t"])})
>>> [tp.partition for tp in out["c0"].partitions], [tp.partition for tp in out["c1"].partitions]
([0, 1], [2])

Members are given in the order the coordinator listed them in the JoinGroup response (a Java
leader fills its ``HashMap`` in that order, which decides ties the way Java does). The result
maps every member id to an :class:`Assignment`, in the order of ``subscriptions``. Assignments
run with the GIL released.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from kgroup import _native
from kgroup._native import Assignment, Subscription

__all__ = [
    "Assignment",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "Subscription",
    "TopicPartition",
]


class TopicPartition(NamedTuple):
    """One partition of one topic."""

    topic: str
    partition: int


class RebalanceProtocol(enum.IntEnum):
    """Java's ``ConsumerPartitionAssignor.RebalanceProtocol``."""

    EAGER = 0
    COOPERATIVE = 1


PartitionRacks = Mapping[tuple[str, int], Iterable[str]]


def _args(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    partition_racks: PartitionRacks | None,
) -> tuple[dict, dict, dict | None]:
    ppt = partitions_per_topic if type(partitions_per_topic) is dict else dict(partitions_per_topic)
    subs = subscriptions if type(subscriptions) is dict else dict(subscriptions)
    racks = None
    if partition_racks is not None:
        racks = {tuple(k): list(v) for k, v in partition_racks.items()}
    return ppt, subs, racks


class RangeAssignor:
    """Kafka's ``RangeAssignor``: per topic, subscribers in member order take consecutive ranges.

    Members with a ``group_instance_id`` come first, by instance id, then the others by member
    id (Java's ``String.compareTo``). The first ``partitions % subscribers`` members of a topic get
    one extra partition. With ``partition_racks`` and member racks, partitions go to members on
    a rack holding a replica where balance allows (KIP-881), topics with the same subscribers
    and partition count staying co-partitioned.
    """

    name = "range"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        *,
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, Assignment]:
        """Assign the partitions of the subscribed topics; topics missing from
        ``partitions_per_topic`` (or with 0 partitions) are skipped, as Java skips topics
        without metadata."""
        return _native.assign_range(*_args(partitions_per_topic, subscriptions, partition_racks))

    def __repr__(self) -> str:
        return "RangeAssignor()"


class RoundRobinAssignor:
    """Kafka's ``RoundRobinAssignor``: partitions of all topics (sorted by topic, then partition)
    dealt in turn to the members in member order, skipping members not subscribed to the topic.
    ``partition_racks`` is accepted and ignored, as Java's round-robin assignor is not rack-aware.
    """

    name = "roundrobin"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        *,
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, Assignment]:
        """Assign the partitions of the subscribed topics round-robin."""
        ppt, subs, _ = _args(partitions_per_topic, subscriptions, None)
        return _native.assign_round_robin(ppt, subs)

    def __repr__(self) -> str:
        return "RoundRobinAssignor()"
