"""Kafka's consumer assignors (classic group protocol), computed in Rust.

The group leader decides which member consumes which partitions. Each assignor here makes the
decisions Java's makes, in the same order, so a kgroup leader and a Java leader hand out the
same partitions in the same list order:

- :class:`RangeAssignor` (``range``): per topic, consecutive ranges in member order; rack-aware
  as in KIP-881 when ``partition_racks`` and member racks are given.
- :class:`RoundRobinAssignor` (``roundrobin``): all partitions dealt around the members.
- :class:`StickyAssignor` (``sticky``): balanced, moving as few partitions as possible (eager).
- :class:`CooperativeStickyAssignor` (``cooperative-sticky``): the same plan, but a partition
  changing owner is withheld until its owner has revoked it (KIP-429, two rounds).

>>> from kgroup.assignors import RangeAssignor, Subscription
>>> out = RangeAssignor().assign({"t": 3}, {"c0": Subscription(["t"]), "c1": Subscription(["t"])})
>>> [tp.partition for tp in out["c0"].partitions], [tp.partition for tp in out["c1"].partitions]
([0, 1], [2])

Members are given in the order the coordinator listed them in the JoinGroup response (a Java
leader fills its ``HashMap`` in that order, which decides ties the way Java does). The result
maps every member id to an :class:`Assignment`, in the order of ``subscriptions``. Assignments
run with the GIL released.

Every assignor is an :class:`Assignor`, the interface a group member uses whichever assignor it
runs: :meth:`Assignor.subscription` builds what the member sends in JoinGroup, and
:meth:`Assignor.assign` is what the leader runs before SyncGroup. The payloads themselves are
encoded by :mod:`kgroup.assignors.consumer_protocol`.
"""

from __future__ import annotations

import abc
import enum
import time
from collections.abc import Callable, Iterable, Mapping
from typing import ClassVar, NamedTuple

from kgroup._native import assignors as _native
from kgroup._native.assignors import Assignment, Subscription

__all__ = [
    "ASSIGNORS",
    "Assignment",
    "Assignor",
    "CooperativeStickyAssignor",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "StickyAssignor",
    "Subscription",
    "TopicPartition",
    "assignor",
    "remaining_delay_ms",
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
Owned = Iterable[tuple[str, int]] | Assignment


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


class Assignor(abc.ABC):
    """Assignor is a consumer group assignor, Java's ``ConsumerPartitionAssignor``: the one
    interface a group member (leader or follower) needs, whichever assignor it runs.

    ``name`` is what the member advertises in JoinGroup (``range``, ``cooperative-sticky``) and
    ``supported_protocols`` the rebalance protocols it can run, preferred first. Assignors are
    deterministic: the same input gives the same output, in the same list order, as Java's.
    Instances are not thread-safe (the sticky ones remember the highest generation seen).
    """

    name: ClassVar[str]
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)

    @abc.abstractmethod
    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        *,
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, Assignment]:
        """The leader's step: assign the partitions of the subscribed topics to the members
        (``subscriptions`` in JoinGroup order). Topics missing from ``partitions_per_topic`` (or
        with 0 partitions) are skipped, as Java skips topics without metadata;
        ``partition_racks`` maps a partition to the racks of its replicas, for rack-aware
        assignors."""

    @classmethod
    def subscription(
        cls,
        topics: Iterable[str],
        owned: Owned | None = None,
        generation: int = -1,
        *,
        rack_id: str | None = None,
        group_instance_id: str | None = None,
    ) -> Subscription:
        """The member's step: the Subscription a Java member of this assignor sends in JoinGroup,
        with the partitions it ``owned`` and the ``generation`` it owned them in (ConsumerProtocol
        v1 and v2 carry both). ``owned`` may be an :class:`Assignment`, taken over without
        building tuples. This assignor sends no user data."""
        return Subscription(
            list(topics),
            user_data=None,
            owned_partitions=_owned(owned),
            generation_id=generation,
            rack_id=rack_id,
            group_instance_id=group_instance_id,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _owned(owned: Owned | None) -> Assignment | list[tuple[str, int]]:
    return owned if isinstance(owned, Assignment) else list(owned or ())


class _Stateless(Assignor):
    """An assignor that is one native function of the group: no state, no user data."""

    _native_assign: ClassVar[Callable[..., dict[str, Assignment]]]

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        *,
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, Assignment]:
        return type(self)._native_assign(
            *_args(partitions_per_topic, subscriptions, partition_racks)
        )


class RangeAssignor(_Stateless):
    """Kafka's ``RangeAssignor``: per topic, subscribers in member order take consecutive ranges.

    Members with a ``group_instance_id`` come first, by instance id, then the others by member
    id (Java's ``String.compareTo``). The first ``partitions % subscribers`` members of a topic get
    one extra partition. With ``partition_racks`` and member racks, partitions go to members on
    a rack holding a replica where balance allows (KIP-881), topics with the same subscribers
    and partition count staying co-partitioned.
    """

    name = "range"
    _native_assign = staticmethod(_native.assign_range)


class RoundRobinAssignor(_Stateless):
    """Kafka's ``RoundRobinAssignor``: partitions of all topics (sorted by topic, then partition)
    dealt in turn to the members in member order, skipping members not subscribed to the topic.
    ``partition_racks`` is accepted and ignored, as Java's round-robin assignor is not rack-aware.
    """

    name = "roundrobin"
    _native_assign = staticmethod(_native.assign_round_robin)


class StickyAssignor(Assignor):
    """Kafka's ``StickyAssignor`` (KIP-54), eager: a balanced assignment that keeps as many
    partitions as possible where they were.

    Like Java's, it reads each member's previous partitions and generation from the member's
    *user data* (StickyAssignor user data V1/V0, see :meth:`subscription`), because eager
    members revoke everything before joining. With equal subscriptions it uses Java's
    constrained path (counts differ by at most one); otherwise Java's general path.

    An instance remembers the highest generation it has seen, as Java's does; use one instance
    per group, like a Java leader. Conflicting claims on a partition go to the member of the
    higher generation; two claims from the same generation both lose it.
    """

    name = "sticky"
    _cooperative = False

    def __init__(self) -> None:
        self._engine = _native.StickyEngine(self._cooperative)
        self._delay_ms = 0
        self.last_transferring: dict[TopicPartition, str] = {}
        self.last_constrained: bool | None = None

    @property
    def max_generation(self) -> int:
        """The highest generation seen so far (-1 before any): Java's ``maxGeneration``."""
        return self._engine.max_generation

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        *,
        partition_racks: PartitionRacks | None = None,
        now_ms: int | None = None,
    ) -> dict[str, Assignment]:
        """Assign the partitions of the subscribed topics. ``now_ms`` is the time (any
        monotonic clock in milliseconds; ``time.monotonic()`` when omitted), read only by the
        scheduled rebalance delay of :class:`CooperativeStickyAssignor`. Afterwards
        :attr:`last_transferring` maps each partition that changes owner to its new owner, and
        :attr:`last_constrained` says whether all subscriptions were equal."""
        if now_ms is None:
            now_ms = time.monotonic_ns() // 1_000_000 if self._delay_ms else 0
        out, moving, constrained = self._engine.assign(
            *_args(partitions_per_topic, subscriptions, partition_racks), now_ms
        )
        self.last_transferring = dict(moving)
        self.last_constrained = constrained
        return out

    @classmethod
    def subscription(
        cls,
        topics: Iterable[str],
        owned: Owned | None = None,
        generation: int = -1,
        *,
        rack_id: str | None = None,
        group_instance_id: str | None = None,
    ) -> Subscription:
        """The Subscription a Java StickyAssignor member sends: its previous partitions and
        generation in V1 user data (null user data before its first assignment). ``owned`` may
        be an :class:`Assignment` (taken over without building tuples)."""
        if owned is not None and not isinstance(owned, Assignment):
            owned = list(owned)
        user_data = (
            None
            if owned is None
            else _native.consumer_protocol.encode_sticky_user_data(owned, generation)
        )
        return Subscription(
            list(topics),
            user_data=user_data,
            generation_id=generation,
            rack_id=rack_id,
            group_instance_id=group_instance_id,
        )

    def __repr__(self) -> str:
        delay = f"scheduled_rebalance_max_delay_ms={self._delay_ms}" if self._delay_ms else ""
        return f"{type(self).__name__}({delay})"


class CooperativeStickyAssignor(StickyAssignor):
    """Kafka's ``CooperativeStickyAssignor`` (KIP-429): the sticky plan, with every partition
    that changes owner left out of this round. Its owner sees it gone and revokes it; the
    follow-up rebalance then assigns it. No partition is ever assigned to a member while
    another member still owns it.

    Previous partitions come from ``owned_partitions`` and the generation from
    ``generation_id`` (protocol v2+), else from the 4-byte user data (see :meth:`subscription`).
    """

    name = "cooperative-sticky"
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)
    _cooperative = True

    def __init__(self, *, scheduled_rebalance_max_delay_ms: int = 0) -> None:
        """``scheduled_rebalance_max_delay_ms`` (KIP-415, Kafka Connect's
        ``scheduled.rebalance.max.delay.ms``; 0, the default, is Java's consumer behaviour):
        when a member disappears, its partitions stay unassigned for up to this long, so that
        it can come back (recognised by ``group_instance_id``, else member id; a new member
        with nothing and the same topics takes its place) without anything moving; then they
        are spread. While partitions are held back, each assignment's user data carries the
        remaining delay (:func:`remaining_delay_ms`), so members rejoin when it runs out."""
        super().__init__()
        self._delay_ms = int(scheduled_rebalance_max_delay_ms)
        self._engine = _native.StickyEngine(True, self._delay_ms)

    @property
    def scheduled_rebalance_max_delay_ms(self) -> int:
        return self._delay_ms

    @property
    def held_back(self) -> dict[str, tuple[tuple[TopicPartition, ...], int]]:
        """Partitions held back for departed members: ``{member_id: (partitions, deadline_ms)}``."""
        return self._engine.held_back

    @classmethod
    def subscription(
        cls,
        topics: Iterable[str],
        owned: Owned | None = None,
        generation: int = -1,
        *,
        rack_id: str | None = None,
        group_instance_id: str | None = None,
    ) -> Subscription:
        """The Subscription a Java CooperativeStickyAssignor member sends: owned partitions,
        generation, and the generation again as 4-byte user data. ``owned`` may be an
        :class:`Assignment` (taken over without building tuples)."""
        return Subscription(
            list(topics),
            user_data=int(generation).to_bytes(4, "big", signed=True),
            owned_partitions=_owned(owned),
            generation_id=generation,
            rack_id=rack_id,
            group_instance_id=group_instance_id,
        )


def remaining_delay_ms(assignment: Assignment) -> int | None:
    """The scheduled rebalance delay an assignment announces (KIP-415 option of
    :class:`CooperativeStickyAssignor`): rejoin after this many milliseconds. None when the
    assignment carries none (Java's assignors never do)."""
    data = assignment.user_data
    if not data or len(data) < 6 or int.from_bytes(data[:2], "big", signed=True) < 0:
        return None
    return int.from_bytes(data[2:6], "big", signed=True)


#: ASSIGNORS maps Kafka's assignor names to kgroup's classes.
ASSIGNORS: dict[str, type[Assignor]] = {
    cls.name: cls
    for cls in (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor)
}


def assignor(name: str) -> Assignor:
    """A new assignor by Kafka name (``range``, ``roundrobin``, ``sticky``,
    ``cooperative-sticky``)."""
    try:
        return ASSIGNORS[name]()
    except KeyError:
        from kgroup.errors import InvalidArgument

        raise InvalidArgument(
            f"unknown assignor {name!r}; known: {', '.join(sorted(ASSIGNORS))}"
        ) from None
