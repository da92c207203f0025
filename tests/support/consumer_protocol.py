"""Members of KIP-848 consumer groups (``group.protocol=consumer``) for tests: kgroup's Consumer
or confluent-kafka's, polled by the test's own loop (:func:`poll_all`), each checking at every
assignment that no other member of its group still owns a partition it is given, and committing
each record synchronously. Used by tests/broker/ (confluent-kafka against kgroup's broker) and
tests/client/ (kgroup's client against kgroup's broker and Apache Kafka)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from support.consumers import commit_after

#: PARTITIONS is the partition count of the scenarios' topics.
PARTITIONS = 4
#: FAST are the broker's consumer-protocol timings for tests: Kafka's minimums (45 s sessions,
#: 5 s heartbeats) lowered so that members heartbeat every 100 ms and a rebalance takes a few
#: hundred milliseconds, and targets computed at every change of a group rather than at most once
#: a second (Kafka 4.3+'s group.consumer.assignment.interval.ms, 1000 by default).
FAST = {
    "group.consumer.min.heartbeat.interval.ms": 50,
    "group.consumer.heartbeat.interval.ms": 100,
    "group.consumer.min.session.timeout.ms": 1000,
    "group.consumer.session.timeout.ms": 3000,
    "group.consumer.assignment.interval.ms": 0,
    "group.initial.rebalance.delay.ms": 0,
}

#: CLASSIC are a classic-protocol member's settings beside consumer-protocol ones: short
#: sessions, so that a classic member is as quick to notice a rebalance as a consumer-protocol
#: one, and the range assignor. Not librdkafka's cooperative-sticky: in some runs its assignments
#: carried user data, and Kafka (as kgroup) refuses to upgrade a group whose assignments carry
#: user data ("an unsupported custom assignor is in use").
CLASSIC = {
    "partition.assignment.strategy": "range",
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 200,
}


class Member:
    """Member is one consumer with ``group.protocol=consumer`` (or ``protocol="classic"``, with
    the :data:`CLASSIC` settings): kgroup's (``kind="kgroup"``) or confluent-kafka's
    (``kind="confluent"``), subscribed to ``topic`` (a ``^`` pattern too).
    Its callbacks keep ``owned`` and record in ``errors`` a partition given while another
    member of ``members`` owns it; ``poll()`` keeps each record's value in ``seen`` and commits
    after it synchronously. ``config`` adds to or overrides the consumer's settings."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        group: str,
        members: list[Member],
        kind: str = "kgroup",
        protocol: str = "consumer",
        **config: Any,
    ) -> None:
        self.kind, self.topic, self.members = kind, topic, members
        self.protocol = protocol
        self.owned: set[int] = set()
        self.seen: list[bytes] = []
        self.errors: list[str] = []
        conf = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": protocol,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **(CLASSIC if protocol == "classic" else {}),
            **config,
        }
        if kind == "confluent":
            from confluent_kafka import Consumer as CkConsumer

            self.consumer: Any = CkConsumer({"broker.address.family": "v4", **conf})
        else:
            from kgroup import Consumer

            self.consumer = Consumer(conf)
        self.subscribe()
        members.append(self)

    def subscribe(self, **callbacks: Any) -> None:
        """Subscribe to the member's topic with its callbacks; ``callbacks`` replace them."""
        cbs = {"on_assign": self._assigned, "on_revoke": self._revoked, "on_lost": self._revoked}
        self.consumer.subscribe([self.topic], **{**cbs, **callbacks})

    def _assigned(self, consumer: Any, partitions: list) -> None:
        # The consumer protocol is incremental: the partitions added, not the whole assignment.
        given = {tp.partition for tp in partitions}
        for other in self.members:
            if other is not self and other.owned & given:
                self.errors.append(f"given {sorted(given)} still owned by another member")
        self.owned |= given

    def _revoked(self, consumer: Any, partitions: list) -> None:
        self.owned -= {tp.partition for tp in partitions}

    def poll(self) -> None:
        m = self.consumer.poll(0.05)
        if m is None:
            return
        if m.error() is not None:
            self.errors.append(str(m.error()))
            return
        if m.partition() not in self.owned:
            self.errors.append(f"record of partition {m.partition()}, owned {self.owned}")
        self.seen.append(m.value())
        if self.kind == "confluent":
            commit_after(self.consumer, m)
        else:
            self.consumer.commit(message=m, asynchronous=False)

    def close(self) -> None:
        self.consumer.close()
        self.members.remove(self)
        self.owned = set()


def poll_all(
    members: list[Member], until: Callable[[], bool], what: str, timeout: float = 30
) -> None:
    """poll_all polls every member in turn until ``until()``, then checks that none recorded an
    error; it fails naming ``what`` and each member's state after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            state = [(sorted(m.owned), len(m.seen), m.errors) for m in members]
            raise AssertionError(f"timed out waiting for {what}: {state}")
        for m in list(members):
            m.poll()
    for m in members:
        assert m.errors == [], m.errors


def quiet(members: list[Member], seconds: float = 1.0) -> None:
    """quiet polls every member for ``seconds`` more: a record seen twice would show now."""
    deadline = time.monotonic() + seconds
    poll_all(members, lambda: time.monotonic() > deadline, "a quiet while")


def values(prefix: str, n: int) -> list[bytes]:
    """values are ``n`` distinct record values, ``prefix-0`` to ``prefix-(n-1)``."""
    return [f"{prefix}-{i}".encode() for i in range(n)]


def group_name(prefix: str = "kip848") -> str:
    """group_name is a new group id."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def split_then_take_back(
    bootstrap: str,
    kind: str,
    *,
    while_split: Callable[[str], None] | None = None,
    timeout: float = 30,
    **b_config: Any,
) -> None:
    """split_then_take_back is the two-member scenario of a consumer-protocol group, on a new
    topic of :data:`PARTITIONS` partitions: member a takes every partition; b joins (with
    ``b_config``) and the broker's ``uniform`` assignor splits them 2/2, a's revocation before
    b's assignment (each :class:`Member` checks it at every assignment); ``while_split(group)``
    runs then; the records produced meanwhile are consumed exactly once; b leaves (epoch -1),
    a takes everything back and consumes the rest, again exactly once. ``kind`` is both
    members' client; ``timeout`` bounds each wait."""
    from support.consumers import create_topic, produce

    topic = create_topic(bootstrap, PARTITIONS)
    group = group_name()
    first = values("first", 200)
    produce(bootstrap, topic, first, PARTITIONS)
    members: list[Member] = []
    try:
        a = Member(bootstrap, topic, group, members, kind)
        poll_all(members, lambda: len(a.owned) == PARTITIONS, "a owning everything", timeout)
        b = Member(bootstrap, topic, group, members, kind, **b_config)
        poll_all(members, lambda: len(a.owned) == 2 and len(b.owned) == 2, "a 2/2 split", timeout)
        assert a.owned.isdisjoint(b.owned)
        if while_split is not None:
            while_split(group)
        second = values("second", 200)
        produce(bootstrap, topic, second, PARTITIONS)
        poll_all(members, lambda: len(a.seen + b.seen) >= 400, "every record", timeout)
        quiet(members)
        assert sorted(a.seen + b.seen) == sorted(first + second), "every record exactly once"
        assert b.seen, "the second member consumed its partitions' records"
        b.close()
        poll_all(members, lambda: len(a.owned) == PARTITIONS, "a taking everything back", timeout)
        third = values("third", 100)
        produce(bootstrap, topic, third, PARTITIONS)
        poll_all(members, lambda: len(a.seen + b.seen) >= 500, "the third batch", timeout)
        quiet(members)
        assert sorted(a.seen + b.seen) == sorted(first + second + third)
    finally:
        for m in list(members):
            m.close()
