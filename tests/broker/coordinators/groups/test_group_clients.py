"""Real consumer groups on kgroup's broker: confluent-kafka (librdkafka), kafka-python and
aiokafka consumers, unchanged, subscribe to a 12-partition topic, rebalance as members join and
leave, and commit synchronously after processing each record: every record is consumed, and
none twice."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter

import pytest
from support.consumers import (
    HEARTBEAT_MS,
    PARTITIONS,
    SESSION_MS,
    CkMember,
    KpMember,
    create_topic,
    produce,
    wait_for,
)

from kgroup.broker import Broker

pytestmark = pytest.mark.network


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_confluent_group_of_three_consumes_every_record_once(broker: Broker, strategy: str) -> None:
    topic, group = create_topic(broker.bootstrap_servers), f"ck-{uuid.uuid4().hex[:6]}"
    first = [f"a{i}".encode() for i in range(600)]
    second = [f"b{i}".encode() for i in range(600)]
    produce(broker.bootstrap_servers, topic, first)
    seen: list[bytes] = []
    members = [
        CkMember(
            broker.bootstrap_servers,
            topic,
            group,
            seen,
            **{"partition.assignment.strategy": strategy},
        )
        for _ in range(3)
    ]
    try:
        # Members join one by one while records are being consumed: two rebalances mid-stream.
        for i, m in enumerate(members):
            m.start()
            wait_for(lambda i=i: len(seen) >= 100 * (i + 1), 30, f"{100 * (i + 1)} records")
        produce(broker.bootstrap_servers, topic, second)
        wait_for(lambda: len(seen) >= 1200, 60, "every record")
        # Range gives each of three members 4 of 12 partitions; sticky balances the same. (The
        # records may all be consumed before the last rebalance ends: one member then holds
        # every partition for a while, so covering them all is not yet the end.)
        wait_for(
            lambda: (
                sorted(p for m in members for p in m.assigned) == list(range(PARTITIONS))
                and sorted(len(m.assigned) for m in members) == [4, 4, 4]
            ),
            30,
            "the final assignment",
            lambda: [(m.assigned, m.errors) for m in members],
        )
        time.sleep(0.5)  # a duplicate would arrive now
        assert sorted(len(m.assigned) for m in members) == [4, 4, 4]
    finally:
        for m in members:
            m.stop.set()
        for m in members:
            m.join(30)
    assert [m.errors for m in members] == [[], [], []]
    counts = Counter(seen)
    assert set(counts) == set(first + second)
    assert [v for v, n in counts.items() if n > 1] == []


def test_a_member_closing_moves_its_partitions_at_once(broker: Broker) -> None:
    # A long session: the move must come from the LeaveGroup that close() sends, not from the
    # session timing out.
    topic, group = create_topic(broker.bootstrap_servers), f"leave-{uuid.uuid4().hex[:6]}"
    seen: list[bytes] = []
    a = CkMember(broker.bootstrap_servers, topic, group, seen, **{"session.timeout.ms": 30_000})
    b = CkMember(broker.bootstrap_servers, topic, group, seen, **{"session.timeout.ms": 30_000})
    a.start()
    b.start()
    try:
        wait_for(lambda: len(a.assigned) == 6 and len(b.assigned) == 6, 30, "6 partitions each")
        left = set(b.assigned)
        b.stop.set()
        assert b.closed.wait(15)
        closed_at = time.monotonic()
        wait_for(lambda: len(a.assigned) == PARTITIONS, 10, "the leaver's partitions to move")
        assert time.monotonic() - closed_at < 5
        assert left <= set(a.assigned)
        produce(broker.bootstrap_servers, topic, [b"after"] * 24)
        wait_for(lambda: seen.count(b"after") == 24, 20, "records of every partition")
    finally:
        a.stop.set()
        b.stop.set()
        a.join(30)
        b.join(30)
    assert a.errors == b.errors == []


@pytest.mark.parametrize("assignor", ["range", "roundrobin"])
def test_kafka_python_group_consumes_every_record_once(broker: Broker, assignor: str) -> None:
    topic, group = create_topic(broker.bootstrap_servers), f"kp-{uuid.uuid4().hex[:6]}"
    values = [f"k{i}".encode() for i in range(400)]
    produce(broker.bootstrap_servers, topic, values)
    seen: list[bytes] = []
    members = [KpMember(broker.bootstrap_servers, topic, group, assignor, seen) for _ in range(2)]
    try:
        wait_for(lambda: len(seen) >= 400, 60, "every record")
        wait_for(
            lambda: sorted(m.assigned for m in members) == [6, 6],
            30,
            "6 partitions each",
            lambda: [m.assigned for m in members],
        )
        time.sleep(0.5)
    finally:
        codes = [m.close() for m in members]
    assert codes == [0, 0]
    assert sorted(seen) == sorted(values)


def test_aiokafka_group_consumes_every_record_once(broker: Broker) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.structs import TopicPartition

    topic, group = create_topic(broker.bootstrap_servers), f"aio-{uuid.uuid4().hex[:6]}"
    values = [f"x{i}".encode() for i in range(400)]
    produce(broker.bootstrap_servers, topic, values)
    seen: list[bytes] = []

    sizes: dict[int, int] = {}
    final: dict[int, int] = {}

    async def member(i: int, done: asyncio.Event) -> None:
        c = AIOKafkaConsumer(
            topic,
            bootstrap_servers=broker.bootstrap_servers,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
        )
        await c.start()
        try:
            while not done.is_set():
                batches = await c.getmany(timeout_ms=100)
                for tp, records in batches.items():
                    for r in records:
                        seen.append(r.value)
                        await c.commit({TopicPartition(tp.topic, tp.partition): r.offset + 1})
                sizes[i] = len(c.assignment())
                if len(seen) >= len(values) and sorted(sizes.values()) == [6, 6]:
                    final.update(sizes)  # before either member leaves
                    done.set()
        finally:
            await c.stop()

    async def main() -> None:
        done = asyncio.Event()
        await asyncio.wait_for(asyncio.gather(member(0, done), member(1, done)), 60)

    asyncio.run(main())
    assert sorted(final.values()) == [6, 6]
    assert sorted(seen) == sorted(values)
