"""kgroup.testing's faults as kafka-python sees them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from support.kit import wait_until

from kgroup.testing import Broker

pytestmark = pytest.mark.network


def producer(broker: Broker, **conf: Any) -> KafkaProducer:
    return KafkaProducer(
        bootstrap_servers=broker.bootstrap_servers,
        acks="all",
        retry_backoff_ms=50,
        reconnect_backoff_ms=20,
        reconnect_backoff_max_ms=200,
        **conf,
    )


def consumer(broker: Broker, group: str, topic: str, **conf: Any) -> KafkaConsumer:
    """A consumer of ``group`` subscribed to ``topic``. It learns the topic's partitions
    before it subscribes: kafka-python 3.0.12 may drop the SyncGroup answer of the rebalance
    it starts when they arrive just after its first join (seen 1 run in 6), and then waits
    for an assignment forever."""
    c = KafkaConsumer(
        bootstrap_servers=broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=100,
        fetch_max_wait_ms=50,
        retry_backoff_ms=50,
        reconnect_backoff_ms=20,
        reconnect_backoff_max_ms=200,
        **conf,
    )
    assert c.partitions_for_topic(topic)
    c.subscribe([topic])
    return c


def consume(c: KafkaConsumer, count: int, timeout: float = 10.0) -> list[bytes]:
    out: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        assert time.monotonic() < deadline, f"consumed {len(out)} of {count} in {timeout} s"
        for records in c.poll(timeout_ms=100).values():
            out += [r.value for r in records]
    return out


def send(p: KafkaProducer, topic: str, items: list[bytes]) -> None:
    futures = [p.send(topic, value=v) for v in items]
    for f in futures:
        f.get(timeout=15)


@pytest.fixture
def topic(broker: Broker) -> Iterator[str]:
    broker.create_topic("t")
    yield "t"


def test_not_leader_or_follower_is_retried(broker: Broker, topic: str) -> None:
    # Kafka: NOT_LEADER_OR_FOLLOWER on produce: the producer refreshes its metadata and
    # retries; the records are written once.
    p = producer(broker, enable_idempotence=True)
    try:
        send(p, topic, [b"warm"])
        broker.fail("produce", "NOT_LEADER_OR_FOLLOWER", times=2, topic=topic)
        send(p, topic, [b"%d" % i for i in range(5)])
        assert broker.faults() == []
    finally:
        p.close()
    assert [r.value for r in broker.records(topic)] == [b"warm"] + [b"%d" % i for i in range(5)]


def test_consumer_reconnects_after_its_connections_close(broker: Broker, topic: str) -> None:
    # Kafka: a broker closing its connections (a restart, a network blip): the consumer
    # reconnects, stays in its group and goes on from its position.
    p = producer(broker)
    c = consumer(broker, "g", topic)
    try:
        send(p, topic, [b"%d" % i for i in range(5)])
        assert consume(c, 5) == [b"%d" % i for i in range(5)]
        assert broker.disconnect() >= 2  # the producer's and the consumer's at least
        send(p, topic, [b"%d" % i for i in range(5, 10)])
        assert consume(c, 5) == [b"%d" % i for i in range(5, 10)]
        broker.disconnect(after=2, api="fetch")
        send(p, topic, [b"%d" % i for i in range(10, 15)])
        assert consume(c, 5) == [b"%d" % i for i in range(10, 15)]
        wait_until(lambda: c.poll(timeout_ms=50) == {} and broker.faults() == [], 10, "fetches")
        c.commit()
        assert broker.committed("g")[(topic, 0)].offset == 15
    finally:
        c.close()
        p.close()


def test_consumer_waits_for_the_leader_of_its_partition(broker: Broker, topic: str) -> None:
    # Kafka: fetches of a partition without a leader answer NOT_LEADER_OR_FOLLOWER; the
    # consumer refreshes its metadata until a leader is back, then reads.
    p = producer(broker)
    try:
        send(p, topic, [b"a", b"b"])
    finally:
        p.close()
    start = time.monotonic()
    broker.leaderless(topic, seconds=1.0)
    c = consumer(broker, "g", topic)
    try:
        assert consume(c, 2) == [b"a", b"b"]
        assert time.monotonic() - start >= 0.8
    finally:
        c.close()


def test_commit_retries_not_coordinator(broker: Broker, topic: str) -> None:
    # Kafka: OffsetCommit answered NOT_COORDINATOR: the consumer marks its coordinator dead,
    # finds it again and commits there.
    p = producer(broker)
    c = consumer(broker, "g", topic)
    try:
        send(p, topic, [b"%d" % i for i in range(3)])
        assert len(consume(c, 3)) == 3
        broker.fail("offset_commit", "NOT_COORDINATOR", group="g")
        c.commit()
        assert broker.faults() == []
        assert broker.committed("g")[(topic, 0)].offset == 3
        assert c.committed(TopicPartition(topic, 0)) == 3
    finally:
        c.close()
        p.close()


def test_expired_member_joins_again(broker: Broker, topic: str) -> None:
    # Kafka: after its session expired the member's heartbeat is answered UNKNOWN_MEMBER_ID
    # and it joins the group again as a new member.
    c = consumer(broker, "g", topic)
    try:
        wait_until(lambda: c.poll(timeout_ms=50) == {} and c.assignment(), 10, "assignment")
        before = broker.group("g")
        assert before is not None and len(before.members) == 1
        broker.expire_member("g")

        def rejoined() -> bool:
            c.poll(timeout_ms=50)
            g = broker.group("g")
            return (
                g is not None
                and g.state == "Stable"
                and [m.member_id for m in g.members] != [m.member_id for m in before.members]
                and len(g.members) == 1
            )

        wait_until(rejoined, 15, "the consumer to join again")
        after = broker.group("g")
        assert after is not None and after.generation > before.generation
        assert c.assignment() == {TopicPartition(topic, 0)}
    finally:
        c.close()


def test_killed_broker_keeps_acknowledged_records_and_offsets() -> None:
    with Broker(process=True) as broker:
        broker.create_topic("t")
        p = producer(broker, enable_idempotence=True)
        c = consumer(broker, "g", "t")
        try:
            send(p, "t", [b"%d" % i for i in range(10)])
            assert len(consume(c, 10)) == 10
            c.commit()
            broker.kill()
            broker.restart()
            assert [r.value for r in broker.records("t")] == [b"%d" % i for i in range(10)]
            assert broker.committed("g")[("t", 0)].offset == 10
            send(p, "t", [b"after"])  # the producer reconnects by itself
            assert consume(c, 1) == [b"after"]
        finally:
            c.close()
            p.close()
