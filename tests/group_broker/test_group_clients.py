"""Real consumer groups on kgroup's broker: confluent-kafka (librdkafka), kafka-python and
aiokafka consumers, unchanged, subscribe to a 12-partition topic, rebalance as members join and
leave, and commit synchronously after processing each record: every record is consumed, and
none twice."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from kgroup.broker import Broker

pytestmark = pytest.mark.network

PARTITIONS = 12
#: Client settings that keep rebalances quick: the broker's group.min.session.timeout.ms is
#: 6000, members learn of a rebalance at their next heartbeat.
SESSION_MS, HEARTBEAT_MS = 6000, 500


def _topic(broker: Broker, partitions: int = PARTITIONS) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"grp-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


def _produce(broker: Broker, topic: str, values: list[bytes]) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 5})
    for i, v in enumerate(values):
        p.produce(topic, value=v, partition=i % PARTITIONS)
    assert p.flush(30) == 0


def _wait(
    condition: Callable[[], bool], timeout: float, what: str, state: Callable[[], object] = str
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {state()}")
        time.sleep(0.05)


def _commit(consumer, message) -> None:
    """Commit after ``message`` synchronously, again until the rebalance it raced is over.

    A cooperative member keeps consuming while its group rebalances, so its commits race the
    rebalance: one that reaches the coordinator while the group completes it is refused with
    REBALANCE_IN_PROGRESS, one stamped with the generation the group just left with
    ILLEGAL_GENERATION; Kafka answers both so (its RebalanceInProgressException and
    CommitFailedException). The member still owns the partition: it gives partitions up only
    in poll(), and the group cannot move them before it has. So the commit is sent again, with
    the generation librdkafka holds by then."""
    from confluent_kafka import KafkaError, KafkaException

    retry = (KafkaError.REBALANCE_IN_PROGRESS, KafkaError.ILLEGAL_GENERATION)
    deadline = time.monotonic() + 10
    while True:
        try:
            consumer.commit(message=message, asynchronous=False)
            return
        except KafkaException as e:
            if e.args[0].code() not in retry or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class CkMember(threading.Thread):
    """A confluent-kafka consumer in a thread: poll, record, commit that record synchronously."""

    def __init__(self, broker: Broker, topic: str, group: str, seen: list, **config) -> None:
        super().__init__(daemon=True)
        self.conf = {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "partition.assignment.strategy": "range",
            **config,
        }
        self.topic, self.seen = topic, seen
        self.stop = threading.Event()
        self.assigned: list[int] = []
        self.errors: list[str] = []
        self.closed = threading.Event()

    def run(self) -> None:
        from confluent_kafka import Consumer

        c = Consumer(self.conf)
        c.subscribe([self.topic])
        try:
            while not self.stop.is_set():
                m = c.poll(0.1)
                self.assigned = sorted(tp.partition for tp in c.assignment())
                if m is None:
                    continue
                if m.error() is not None:
                    self.errors.append(str(m.error()))
                    continue
                self.seen.append(m.value())
                _commit(c, m)
        except Exception as e:  # surfaces in the test through .errors
            self.errors.append(repr(e))
        finally:
            c.close()
            self.closed.set()


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_confluent_group_of_three_consumes_every_record_once(broker: Broker, strategy: str) -> None:
    topic, group = _topic(broker), f"ck-{uuid.uuid4().hex[:6]}"
    first = [f"a{i}".encode() for i in range(600)]
    second = [f"b{i}".encode() for i in range(600)]
    _produce(broker, topic, first)
    seen: list[bytes] = []
    members = [
        CkMember(broker, topic, group, seen, **{"partition.assignment.strategy": strategy})
        for _ in range(3)
    ]
    try:
        # Members join one by one while records are being consumed: two rebalances mid-stream.
        for i, m in enumerate(members):
            m.start()
            _wait(lambda i=i: len(seen) >= 100 * (i + 1), 30, f"{100 * (i + 1)} records")
        _produce(broker, topic, second)
        _wait(lambda: len(seen) >= 1200, 60, "every record")
        _wait(
            lambda: sorted(p for m in members for p in m.assigned) == list(range(PARTITIONS)),
            30,
            "the final assignment",
            lambda: [(m.assigned, m.errors) for m in members],
        )
        time.sleep(0.5)  # a duplicate would arrive now
        # Range gives each of three members 4 of 12 partitions; sticky balances the same.
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
    topic, group = _topic(broker), f"leave-{uuid.uuid4().hex[:6]}"
    seen: list[bytes] = []
    a = CkMember(broker, topic, group, seen, **{"session.timeout.ms": 30_000})
    b = CkMember(broker, topic, group, seen, **{"session.timeout.ms": 30_000})
    a.start()
    b.start()
    try:
        _wait(lambda: len(a.assigned) == 6 and len(b.assigned) == 6, 30, "6 partitions each")
        left = set(b.assigned)
        b.stop.set()
        assert b.closed.wait(15)
        closed_at = time.monotonic()
        _wait(lambda: len(a.assigned) == PARTITIONS, 10, "the leaver's partitions to move")
        assert time.monotonic() - closed_at < 5
        assert left <= set(a.assigned)
        _produce(broker, topic, [b"after"] * 24)
        _wait(lambda: seen.count(b"after") == 24, 20, "records of every partition")
    finally:
        a.stop.set()
        b.stop.set()
        a.join(30)
        b.join(30)
    assert a.errors == b.errors == []


class KpMember:
    """A kafka-python consumer in a process of its own (``support.kafka_python_member``): the
    records it consumed and the size of its assignment, read from its output."""

    def __init__(self, broker: Broker, topic: str, group: str, assignor: str, seen: list) -> None:
        tests = Path(__file__).resolve().parents[1]
        args = [broker.bootstrap_servers, topic, group, assignor]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "support.kafka_python_member", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ, PYTHONPATH=str(tests)),
        )
        self.assigned = -1
        self.seen = seen
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            event = json.loads(line)
            if "value" in event:
                self.seen.append(event["value"].encode())
            else:
                self.assigned = event["assigned"]

    def close(self) -> int:
        """Leave the group and exit; the exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.reader.join(5)


@pytest.mark.parametrize("assignor", ["range", "roundrobin"])
def test_kafka_python_group_consumes_every_record_once(broker: Broker, assignor: str) -> None:
    topic, group = _topic(broker), f"kp-{uuid.uuid4().hex[:6]}"
    values = [f"k{i}".encode() for i in range(400)]
    _produce(broker, topic, values)
    seen: list[bytes] = []
    members = [KpMember(broker, topic, group, assignor, seen) for _ in range(2)]
    try:
        _wait(lambda: len(seen) >= 400, 60, "every record")
        _wait(
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

    topic, group = _topic(broker), f"aio-{uuid.uuid4().hex[:6]}"
    values = [f"x{i}".encode() for i in range(400)]
    _produce(broker, topic, values)
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
