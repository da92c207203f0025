"""kgroup Consumers in groups on kgroup's broker: with each assignor, members joining and
leaving while they consume and commit synchronously after each record consume every record
once; a group mixing kgroup and confluent-kafka members on cooperative-sticky does too; a
static member restarting within its session keeps its partitions without a rebalance; each
rebalance callback sees its own generation in consumer_group_metadata()."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from typing import Any, ClassVar

import pytest
from support.consumers import CkMember, create_topic, produce, wait_for
from support.groups import group_metadata

from kgroup import Consumer
from kgroup.broker import Broker
from kgroup.client import ConsumerGroupMetadata
from kgroup.client.types import ClientClosed, CommitFailed
from kgroup.errors import InvalidArgument, RebalanceInProgress

pytestmark = pytest.mark.network

SESSION_MS, HEARTBEAT_MS, PARTITIONS = 6000, 300, 6


class KgMember(CkMember):
    """A kgroup consumer in a thread (support.consumers.CkMember's loop): it commits each
    record synchronously, again while the group rebalances (as Java's users retry
    RebalanceInProgressException), and notes its revocations and generation."""

    defaults: ClassVar[dict[str, Any]] = {"heartbeat.interval.ms": HEARTBEAT_MS}

    def __init__(self, *args: Any, **config: Any) -> None:
        super().__init__(*args, **config)
        self.revokes = 0
        self.generation = -1

    def consumer(self) -> Any:
        return Consumer(self.conf)

    def callbacks(self) -> dict[str, Any]:
        def on_revoke(consumer, partitions) -> None:
            self.revokes += 1

        return {**super().callbacks(), "on_revoke": on_revoke}

    def observe(self, consumer: Any) -> None:
        self.generation = consumer.consumer_group_metadata().generation_id

    def commit(self, consumer: Any, message: Any) -> None:
        deadline = time.monotonic() + 10
        while True:
            try:
                consumer.commit(message=message, asynchronous=False)
                return
            except (RebalanceInProgress, CommitFailed):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)


def run_group(broker: Broker, members_conf: list[dict], kinds: list[str] | None = None) -> None:
    bs = broker.bootstrap_servers
    topic, group = create_topic(bs, PARTITIONS), f"kg-{uuid.uuid4().hex[:6]}"
    first = [f"a{i}".encode() for i in range(300)]
    total = 600 + 60 * len(members_conf)
    second = [f"b{i}".encode() for i in range(300)]
    produce(bs, topic, first, PARTITIONS)
    seen: list[bytes] = []
    kinds = kinds or ["kgroup"] * len(members_conf)
    members = [
        (KgMember if kind == "kgroup" else CkMember)(bs, topic, group, seen, **conf)
        for kind, conf in zip(kinds, members_conf, strict=True)
    ]
    try:
        # Members join one by one while records are being consumed.
        for i, m in enumerate(members):
            m.start()
            wait_for(lambda m=m: m.assigned != [], 30, f"member {i} assigned")
            produce(bs, topic, [f"j{i}-{n}".encode() for n in range(60)], PARTITIONS)
            wait_for(lambda i=i: len(seen) >= 60 * (i + 1), 30, f"{60 * (i + 1)} records")
        wait_for(
            lambda: sorted(p for m in members for p in m.assigned) == list(range(PARTITIONS)),
            30,
            "every partition assigned",
            lambda: [(m.assigned, m.errors) for m in members],
        )
        # The first member leaves mid-stream; the others take its partitions.
        members[0].stop.set()
        members[0].join(30)
        produce(bs, topic, second, PARTITIONS)
        wait_for(lambda: len(set(seen)) >= total, 60, "every record", lambda: len(set(seen)))
        wait_for(
            lambda: sorted(p for m in members[1:] for p in m.assigned) == list(range(PARTITIONS)),
            30,
            "the final assignment",
            lambda: [(m.assigned, m.errors) for m in members],
        )
    finally:
        for m in members:
            m.stop.set()
        for m in members:
            m.join(30)
    assert [m.errors for m in members] == [[] for _ in members]
    counts = Counter(seen)
    assert len(counts) == total
    assert [v for v, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_group_of_three_consumes_every_record_once(broker: Broker, strategy: str) -> None:
    run_group(broker, [{"partition.assignment.strategy": strategy}] * 3)


def test_mixed_kgroup_and_confluent_group_on_cooperative_sticky(broker: Broker) -> None:
    conf = {"partition.assignment.strategy": "cooperative-sticky"}
    run_group(broker, [conf] * 3, ["kgroup", "confluent", "kgroup"])


def test_static_member_restart_keeps_partitions_without_rebalance(broker: Broker) -> None:
    bs = broker.bootstrap_servers
    topic, group = create_topic(bs, PARTITIONS), f"st-{uuid.uuid4().hex[:6]}"
    seen: list[bytes] = []
    a = KgMember(bs, topic, group, seen, **{"group.instance.id": "a"})
    b = KgMember(bs, topic, group, seen, **{"group.instance.id": "b"})
    a.start()
    a.ready.wait(20)
    b.start()
    wait_for(
        lambda: sorted(a.assigned + b.assigned) == list(range(PARTITIONS)) and b.assigned != [],
        30,
        "both members assigned",
        lambda: (a.assigned, b.assigned),
    )
    generation, a_parts, b_rebalances = b.generation, a.assigned, b.rebalances
    try:
        a.stop.set()
        a.join(30)  # a static member's close() sends no LeaveGroup
        a2 = KgMember(bs, topic, group, seen, **{"group.instance.id": "a"})
        a2.start()
        wait_for(lambda: a2.assigned != [], 20, "the restarted member assigned")
        assert a2.assigned == a_parts
        assert a2.generation == generation == b.generation
        assert (b.rebalances, b.revokes) == (b_rebalances, 0)
        a2.stop.set()
        a2.join(30)
    finally:
        b.stop.set()
        b.join(30)
    assert a.errors == b.errors == []


def test_consumer_group_metadata_is_the_generation_of_each_rebalance(broker: Broker) -> None:
    bs = broker.bootstrap_servers
    topic, group = create_topic(bs, PARTITIONS), f"gm-{uuid.uuid4().hex[:6]}"
    alone = Consumer({"bootstrap.servers": bs})
    try:
        with pytest.raises(InvalidArgument):
            alone.consumer_group_metadata()
    finally:
        alone.close()
    conf = {
        "bootstrap.servers": bs,
        "group.id": group,
        "partition.assignment.strategy": "cooperative-sticky",
        "session.timeout.ms": SESSION_MS,
        "heartbeat.interval.ms": HEARTBEAT_MS,
        "enable.auto.commit": False,
    }
    seen: dict[str, list[tuple[ConsumerGroupMetadata, list[int]]]] = {"a": [], "b": []}

    def recorder(name: str) -> Any:
        def on_assign(consumer: Consumer, partitions: list) -> None:
            meta = consumer.consumer_group_metadata()
            seen[name].append((meta, sorted(tp.partition for tp in partitions)))

        return on_assign

    a, b = Consumer(conf), Consumer(conf)
    try:
        assert a.consumer_group_metadata() == ConsumerGroupMetadata(group, -1, "", None)
        a.subscribe([topic], on_assign=recorder("a"))
        wait_for(
            lambda: a.poll(0.05) is None and len(a.assignment()) == PARTITIONS, 20, "a assigned"
        )
        first = a.consumer_group_metadata()
        assert first.generation_id >= 1 and first.member_id == a.memberid()

        # b joins but its application thread does not poll: its background thread goes
        # through the cooperative rebalance's generations alone (nothing in the first, the
        # partitions a gave up in the next), and queues one assignment event for each.
        b.subscribe([topic], on_assign=recorder("b"))
        wait_for(
            lambda: a.poll(0.05) is None and b._membership is not None and b._membership.owned,
            30,
            "b's background thread assigned",
            lambda: (a.assignment(), seen),
        )
        assert b.consumer_group_metadata().generation_id == -1  # nothing handled yet
        wait_for(lambda: b.poll(0.05) is None and b.assignment() != [], 10, "b assigned")
        wait_for(
            lambda: (
                a.poll(0.05) is None
                and a.consumer_group_metadata().generation_id
                == b.consumer_group_metadata().generation_id
            ),
            20,
            "a and b in one generation",
            lambda: seen,
        )
        final = b.consumer_group_metadata()
        assert final.member_id == b.memberid() != a.memberid()
        # Each callback saw the generation its assignment came with, though b handled them
        # only after its background thread had reached the last one. Usually two: nothing in
        # the first generation, a's partitions in the next. Under load b's SyncGroup of the
        # first can come after a, having revoked, already rejoined: Kafka answers it
        # REBALANCE_IN_PROGRESS, and b's first assignment is the final one.
        b_generations = [m.generation_id for m, _ in seen["b"]]
        assert b_generations and b_generations == sorted(set(b_generations))
        assert b_generations[-1] == final.generation_id
        assert len(b_generations) == 1 or seen["b"][0][1] == []
        assert seen["b"][-1][1] == sorted(tp.partition for tp in b.assignment())
        a_generations = [m.generation_id for m, _ in seen["a"]]
        assert a_generations == sorted(set(a_generations))
        assert a_generations[0] == first.generation_id and a_generations[-1] == final.generation_id

        # The broker's record of each generation (its GroupMetadataValue in
        # __consumer_offsets) lists the member under that generation.
        members = {
            g["generation"]: {m["member_id"] for m in g["members"]}
            for g in group_metadata(bs, group)
        }
        for meta, _ in seen["a"] + seen["b"]:
            assert meta.group_id == group and meta.group_instance_id is None
            assert meta.member_id in members[meta.generation_id], (meta, members)

        b.unsubscribe()
        assert b.consumer_group_metadata() == ConsumerGroupMetadata(group, -1, "", None)
    finally:
        a.close()
        b.close()
    with pytest.raises(ClientClosed):
        a.consumer_group_metadata()
