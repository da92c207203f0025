"""Every kind of fault kgroup.testing arms is undone by ``clear_faults()`` (which the pytest
fixture calls at the end of each test: see test_kit_plugin.py), by ``Fault.remove()`` and by its
own ``seconds``: requests are answered normally and at once, leaders and the group coordinator
are back, the broker is not paused, the disk writes again."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from support.kit import Deliveries, rdkafka_conf, rdkafka_consumer_conf, wait_until

from kgroup.testing import Broker

pytestmark = pytest.mark.network

Arm = Callable[[Broker], object]

ARMS: dict[str, Arm] = {
    "fail": lambda b: [
        b.fail(api, "UNKNOWN_SERVER_ERROR", times=None)
        for api in ("produce", "fetch", "metadata", "find_coordinator", "offset_commit")
    ],
    "fail-handled": lambda b: b.fail("produce", "REQUEST_TIMED_OUT", times=None, handled=True),
    "delay": lambda b: b.delay(5.0),
    "disconnect": lambda b: b.disconnect(after=1),
    "pause": lambda b: b.pause(),
    "leaderless": lambda b: b.leaderless("t"),
    "move_coordinator": lambda b: b.move_coordinator(seconds=60),
    "fail_disk": lambda b: b.fail_disk("t", None, times=None),
}


def arm_all(b: Broker) -> None:
    for arm in ARMS.values():
        arm(b)


def assert_served_normally(broker: Broker) -> None:
    """A producer writes to both partitions of ``t``, its metadata names leaders, and group
    ``g``'s coordinator commits and fetches offsets, all answered at once."""
    assert broker.faults() == []
    start = time.monotonic()
    p = Producer(rdkafka_conf(broker.bootstrap_servers, {"enable.idempotence": True}))
    parts = p.list_topics("t", timeout=5).topics["t"].partitions
    assert sorted(parts) == [0, 1]
    assert all(pm.leader >= 0 and pm.error is None for pm in parts.values())
    d = Deliveries()
    p.produce("t", value=b"p0", partition=0, on_delivery=d)
    p.produce("t", value=b"p1", partition=1, on_delivery=d)
    assert p.flush(5) == 0
    assert d.failed == [] and sorted(d.values) == [b"p0", b"p1"]
    c = Consumer(rdkafka_consumer_conf(broker.bootstrap_servers, "g"))
    try:
        c.commit(offsets=[TopicPartition("t", 0, 1)], asynchronous=False)
        [tp] = c.committed([TopicPartition("t", 0)], timeout=5)
        assert tp.offset == 1
    finally:
        c.close()
    assert time.monotonic() - start < 3.0
    assert broker.committed("g")[("t", 0)].offset == 1
    assert b"p0" in [r.value for r in broker.records("t", 0)]


@pytest.fixture
def topic_broker(broker: Broker) -> Broker:
    broker.create_topic("t", partitions=2)
    return broker


@pytest.mark.parametrize("kind", [*ARMS, "all"])
def test_clear_faults_undoes_every_kind(topic_broker: Broker, kind: str) -> None:
    arm = arm_all if kind == "all" else ARMS[kind]
    arm(topic_broker)
    if kind != "fail_disk":  # a disk fault lives in the log's storage, not in faults()
        assert topic_broker.faults() != []
    topic_broker.clear_faults()
    assert_served_normally(topic_broker)


def test_clear_faults_after_clients_met_the_faults(topic_broker: Broker) -> None:
    # Clients that met the faults (a paused broker, a coordinator away) recover once they
    # are undone: nothing stays stuck in the broker.
    p = Producer(rdkafka_conf(topic_broker.bootstrap_servers, {"enable.idempotence": True}))
    assert p.list_topics("t", timeout=5).topics["t"].error is None
    arm_all(topic_broker)
    d = Deliveries()
    p.produce("t", value=b"waiting", partition=1, on_delivery=d)
    assert p.flush(0.5) == 1
    topic_broker.clear_faults()
    assert p.flush(10) == 0
    assert d.failed == []
    assert_served_normally(topic_broker)


def test_removing_a_delay_releases_the_answers_it_holds(topic_broker: Broker) -> None:
    # Undone means undone: an answer a delay holds back is sent once the delay is removed,
    # not at the end of the latency it was given (a session broker's next test would meet it).
    p = Producer(rdkafka_conf(topic_broker.bootstrap_servers))
    assert p.list_topics("t", timeout=5).topics["t"].error is None
    fault = topic_broker.delay(5.0, "produce")
    p.produce("t", value=b"held", partition=0)
    assert p.flush(0.3) == 1
    fault.remove()
    start = time.monotonic()
    assert p.flush(10) == 0
    assert time.monotonic() - start < 1.0


def test_faults_end_with_remove_and_with_their_block(topic_broker: Broker) -> None:
    with topic_broker.leaderless("t"):
        assert len(topic_broker.faults()) == 1
    fault = topic_broker.delay(5.0, "produce")
    fault.remove()
    fault.remove()  # twice: nothing
    with topic_broker.move_coordinator("g", seconds=60):
        pass
    with topic_broker.paused():
        pass
    wait_until(lambda: topic_broker.faults() == [], 5, "the coordinator to load")
    assert_served_normally(topic_broker)


def test_faults_with_seconds_end_by_themselves(topic_broker: Broker) -> None:
    topic_broker.leaderless("t", 0, seconds=0.3)
    topic_broker.move_coordinator(seconds=0.3)
    assert len(topic_broker.faults()) == 2
    wait_until(lambda: topic_broker.faults() == [], 5, "the faults to end")
    assert_served_normally(topic_broker)


def test_spent_faults_are_gone(topic_broker: Broker) -> None:
    topic_broker.fail("produce", "NOT_LEADER_OR_FOLLOWER", times=1)
    topic_broker.fail_disk("t", 1, times=1)
    p = Producer(rdkafka_conf(topic_broker.bootstrap_servers, {"enable.idempotence": True}))
    d = Deliveries()
    p.produce("t", value=b"0", partition=0, on_delivery=d)
    p.produce("t", value=b"1", partition=1, on_delivery=d)
    assert p.flush(10) == 0
    assert d.failed == []
    assert_served_normally(topic_broker)


def test_failed_fsync_takes_the_log_offline_until_clear_faults_restarts(broker: Broker) -> None:
    # kgroup (as Kafka taking a log directory offline): a failed fsync takes the partition's
    # log offline until the broker restarts; clear_faults() restarts it, on its data.
    broker.create_topic("t", partitions=2, config={"flush.messages": 1})
    port = broker.bootstrap_servers
    p = Producer(
        rdkafka_conf(
            broker.bootstrap_servers,
            {"enable.idempotence": False, "message.send.max.retries": 0},
        )
    )
    d = Deliveries()
    p.produce("t", value=b"before", partition=0, on_delivery=d)
    assert p.flush(10) == 0 and d.failed == []
    broker.fail_disk("t", 0, op="sync")
    p.produce("t", value=b"synced badly", partition=0, on_delivery=d)
    p.flush(10)

    def refused() -> bool:
        p.produce("t", value=b"refused", partition=0, on_delivery=d)
        p.flush(10)
        return bool(d.failed)

    wait_until(refused, 10, "the log to go offline")
    assert d.failed[-1].code() == KafkaError.KAFKA_STORAGE_ERROR
    broker.clear_faults()
    assert broker.running and broker.bootstrap_servers == port
    assert b"before" in [r.value for r in broker.records("t", 0)]
    assert_served_normally(broker)


def test_faults_of_a_broker_in_a_child_process_are_undone() -> None:
    with Broker(process=True) as broker:
        broker.create_topic("t", partitions=2)
        arm_all(broker)
        assert len(broker.faults()) >= 7
        broker.clear_faults()
        assert_served_normally(broker)
