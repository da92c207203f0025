"""kgroup's client on a three-node Apache Kafka cluster while brokers die: what kgroup's users
do when they outgrow one machine.

kgroup's idempotent producer (acks=all) writes numbered records to a topic replicated three
times (min.insync.replicas=2) while a group of kgroup consumers, each committing every record
synchronously before the next, reads it. First the broker that leads a partition is killed
with kill -9, then (once it is back) the group's coordinator. Afterwards: every acknowledged
record is in the log exactly once (the idempotent producer's retries wrote nothing twice),
every record was consumed and none twice, the group is served by another coordinator, and
kgroup's AdminClient and tools name only live leaders.
"""

from __future__ import annotations

import collections
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from support.apache_kafka import KafkaCluster, run_kafka
from support.consumers import MemberProcess, assert_delivered, consumed, wait_balanced, wait_for

from kgroup import AdminClient, Consumer, Producer, TopicPartition

pytestmark = [pytest.mark.network, pytest.mark.slow]

PARTITIONS = 6


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaCluster]:
    # A dead broker is noticed after broker.session.timeout.ms (Kafka's default 9 s): shorter
    # here, so that leaders move within a few seconds.
    config = {
        "broker.session.timeout.ms": 4000,
        "broker.heartbeat.interval.ms": 500,
        "group.initial.rebalance.delay.ms": 0,
        "offsets.topic.num.partitions": 6,
        "min.insync.replicas": 2,
    }
    with run_kafka(3, config, heap="512m") as c:
        yield c


class NumberedProducer(threading.Thread):
    """kgroup's idempotent producer writing ``n0``, ``n1``, ... round-robin over the partitions,
    about 50 a second (members that commit each record synchronously through Kafka's replicated
    __consumer_offsets keep up with that on a loaded machine); ``acked`` holds what Kafka
    acknowledged, ``failed`` what it did not."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "delivery.timeout.ms": 60_000,
            }
        )
        self.topic = topic
        self.acked: list[str] = []
        self.failed: list[tuple[str, str]] = []
        self.halt = threading.Event()

    def _report(self, err, msg) -> None:
        value = msg.value().decode()
        if err is None:
            self.acked.append(value)
        else:
            self.failed.append((value, str(err)))

    def run(self) -> None:
        i = 0
        while not self.halt.is_set():
            for _ in range(10):
                self.producer.produce(
                    self.topic,
                    value=f"n{i}".encode(),
                    partition=i % PARTITIONS,
                    on_delivery=self._report,
                )
                i += 1
            self.producer.poll(0)
            self.halt.wait(0.2)

    def finish(self) -> list[str]:
        self.halt.set()
        self.join(30)
        assert self.producer.flush(90) == 0
        self.producer.close()
        assert self.failed == []
        return list(self.acked)


def leaders(admin: AdminClient, topic: str) -> dict[int, int]:
    md = admin.list_topics(topic, timeout=10)
    return {p: m.leader for p, m in md.topics[topic].partitions.items()}


def coordinator(admin: AdminClient, group: str) -> int:
    return admin.describe_consumer_groups([group])[group].result(10).coordinator.id


def wait_moved(admin: AdminClient, topic: str, dead: int) -> dict[int, int]:
    """Wait until no partition of ``topic`` is led by node ``dead``; the leaders then."""
    seen: dict[int, int] = {}

    def moved() -> bool:
        nonlocal seen
        seen = leaders(admin, topic)
        return all(leader not in (dead, -1) for leader in seen.values())

    wait_for(moved, 60, f"leaders off node {dead}", lambda: seen)
    return seen


def wait_rejoined(cluster: KafkaCluster, admin: AdminClient, topic: str, node: int) -> None:
    """Restart ``node`` and wait until it is back in every partition's in-sync replicas."""
    cluster.node(node).start()
    cluster.node(node).wait_started()

    def in_sync() -> bool:
        md = admin.list_topics(topic, timeout=10)
        return all(node in p.isrs for p in md.topics[topic].partitions.values())

    wait_for(in_sync, 60, f"node {node} back in sync")


def read_log(bootstrap: str, topic: str) -> list[str]:
    """Every record of ``topic``, read by assignment from the start, to the log end."""
    with Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}"}
    ) as c:
        ends = {p: c.get_watermark_offsets(TopicPartition(topic, p))[1] for p in range(PARTITIONS)}
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got: list[str] = []
        positions = dict.fromkeys(range(PARTITIONS), 0)
        deadline = time.monotonic() + 60
        while any(positions[p] < ends[p] for p in positions) and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None or m.error() is not None:
                continue
            got.append(m.value().decode())
            positions[m.partition()] = m.offset() + 1
        assert positions == ends
        return got


def test_leader_then_coordinator_killed_under_an_idempotent_producer_and_a_group(
    cluster: KafkaCluster,
) -> None:
    bootstrap = cluster.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = cluster.create_topic(PARTITIONS, replication=3)
    group = f"failover-{uuid.uuid4().hex[:6]}"
    members = [
        MemberProcess(bootstrap, topic, group, "kgroup", name=f"m{i}", assignor="range")
        for i in range(3)
    ]
    producer = NumberedProducer(bootstrap, topic)
    try:
        wait_balanced(members, PARTITIONS)
        producer.start()
        wait_for(lambda: len(producer.acked) > 200, 30, "the first acks", lambda: producer.failed)

        # 1. kill -9 the leader of partition 0, while both sides work.
        victim = leaders(admin, topic)[0]
        cluster.node(victim).kill9()
        acked_at_kill = len(producer.acked)
        moved = wait_moved(admin, topic, victim)
        wait_for(lambda: len(producer.acked) > acked_at_kill + 200, 60, "acks after the kill")
        # The tools follow too: kgroup's `topics describe` names the new leaders.
        described = subprocess.run(
            [
                sys.executable,
                "-m",
                "kgroup.cli",
                "topics",
                "describe",
                "--topic",
                topic,
                "--bootstrap-server",
                bootstrap,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert f"Leader: {victim}\t" not in described
        assert {
            int(line.split("Partition: ")[1].split("\t")[0]): int(
                line.split("Leader: ")[1].split("\t")[0]
            )
            for line in described.splitlines()[1:]
        } == moved
        wait_rejoined(cluster, admin, topic, victim)

        # 2. kill -9 the group's coordinator.
        old = coordinator(admin, group)
        cluster.node(old).kill9()
        acked_at_kill = len(producer.acked)
        wait_for(lambda: coordinator(admin, group) != old, 60, "a new coordinator for the group")
        wait_for(lambda: len(producer.acked) > acked_at_kill + 200, 60, "acks after the kill")
        # Members commit through the new coordinator.
        committed = {m.name: len(m.committed) for m in members}
        wait_for(
            lambda: all(len(m.committed) > committed[m.name] for m in members if m.owned),
            60,
            "commits on the new coordinator",
            lambda: members,
        )
        wait_rejoined(cluster, admin, topic, old)

        values = producer.finish()
        wait_for(lambda: consumed(members, values), 120, "every record consumed", lambda: members)
        description = admin.describe_consumer_groups([group])[group].result(10)
        assert description.coordinator.id != old
        assert sorted(len(m.assignment) for m in description.members) == [2, 2, 2]
    finally:
        producer.halt.set()
        for m in members:
            m.stop()
        admin.close()
    assert [(m.name, m.errors) for m in members if m.errors] == []
    assert [m.proc.returncode for m in members] == [0, 0, 0]
    # Nothing acknowledged lost, nothing written twice.
    log = collections.Counter(read_log(bootstrap, topic))
    assert sorted(set(values) - set(log)) == [], "acknowledged records lost"
    assert [v for v, n in log.items() if n > 1] == [], "records written twice"
    # Nothing consumed twice (no member was killed: every record processed was committed).
    assert_delivered(members, list(log))
