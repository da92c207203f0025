"""kgroup.testing's faults as kgroup's own client (``kgroup.Producer``, ``kgroup.Consumer``)
sees them; the classic and the consumer (KIP-848) group protocols in inspection."""

from __future__ import annotations

import time
from typing import Any

import pytest
from support.kit import Deliveries, poll_until, poll_values, wait_until

import kgroup
from kgroup import errors
from kgroup.testing import Broker

pytestmark = pytest.mark.network


def producer(broker: Broker, **conf: Any) -> kgroup.Producer:
    return kgroup.Producer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "retry.backoff.ms": 50,
            "retry.backoff.max.ms": 200,
            "linger.ms": 5,
            **{k.replace("_", "."): v for k, v in conf.items()},
        }
    )


def consumer(broker: Broker, group: str, **conf: Any) -> kgroup.Consumer:
    settings = {
        "bootstrap.servers": broker.bootstrap_servers,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "fetch.max.wait.ms": 50,
        "retry.backoff.ms": 50,
        **{k.replace("_", "."): v for k, v in conf.items()},
    }
    if settings.get("group.protocol") != "consumer":  # KIP-848: the broker sets them
        settings.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 100})
    return kgroup.Consumer(settings)


def values(broker: Broker, topic: str, **kw: Any) -> list[bytes | None]:
    return [r.value for r in broker.records(topic, **kw)]


def test_idempotent_producer_retries_a_timeout_without_duplicates(broker: Broker) -> None:
    broker.create_topic("t")
    p = producer(broker, enable_idempotence=True)
    d = Deliveries()
    try:
        broker.fail("produce", "REQUEST_TIMED_OUT", handled=True)
        for i in range(5):
            p.produce("t", value=b"%d" % i, on_delivery=d)
        assert p.flush(10) == 0
    finally:
        p.close()
    assert d.failed == []
    assert broker.faults() == []
    assert values(broker, "t") == [b"%d" % i for i in range(5)]


def test_storage_error_is_reported_and_retried(broker: Broker) -> None:
    # Kafka: KAFKA_STORAGE_ERROR is retriable: a producer without retries reports it, one
    # with retries writes the record once the disk answers again.
    broker.create_topic("t")
    once = producer(broker, enable_idempotence=False, retries=0)
    d = Deliveries()
    try:
        once.produce("t", value=b"warm", on_delivery=d)
        assert once.flush(10) == 0
        broker.fail_disk("t", 0)
        once.produce("t", value=b"lost", on_delivery=d)
        assert once.flush(10) == 0
    finally:
        once.close()
    [err] = d.failed
    assert err.code == errors.KafkaStorageError.code and err.retriable
    retrying = producer(broker)
    d = Deliveries()
    try:
        broker.fail_disk("t", 0, times=2)
        retrying.produce("t", value=b"kept", on_delivery=d)
        assert retrying.flush(10) == 0
    finally:
        retrying.close()
    assert d.failed == []
    assert values(broker, "t") == [b"warm", b"kept"]


def test_producer_waits_for_a_leader(broker: Broker) -> None:
    broker.create_topic("t")
    p = producer(broker)
    d = Deliveries()
    try:
        p.produce("t", value=b"warm", on_delivery=d)
        assert p.flush(10) == 0
        start = time.monotonic()
        broker.leaderless("t", seconds=0.8)
        p.produce("t", value=b"late", on_delivery=d)
        assert p.flush(10) == 0
        assert d.times[-1] - start >= 0.7
    finally:
        p.close()
    assert d.failed == []
    assert values(broker, "t") == [b"warm", b"late"]


def test_consumer_rediscovers_its_coordinator_and_commits(broker: Broker) -> None:
    broker.create_topic("t")
    p = producer(broker)
    for i in range(6):
        p.produce("t", value=b"%d" % i)
    assert p.flush(10) == 0
    p.close()
    c = consumer(broker, "g")
    c.subscribe(["t"])
    try:
        assert poll_values(c, 3) == [b"0", b"1", b"2"]
        broker.fail("heartbeat", "NOT_COORDINATOR", group="g")
        broker.fail("offset_commit", "NOT_COORDINATOR", group="g")
        got = poll_until(c, lambda: len(broker.faults()) == 1, 10, "a heartbeat")
        assert got + poll_values(c, 3 - len(got)) == [b"3", b"4", b"5"]
        c.commit(asynchronous=False)
        assert broker.faults() == []
        assert broker.committed("g")[("t", 0)].offset == 6
    finally:
        c.close()


def test_paused_broker_makes_the_consumer_wait(broker: Broker) -> None:
    broker.create_topic("t")
    p = producer(broker)
    c = consumer(broker, "g")
    c.subscribe(["t"])
    try:
        p.produce("t", value=b"a")
        assert p.flush(10) == 0
        assert poll_values(c, 1) == [b"a"]
        with broker.paused():
            assert c.poll(0.5) is None
        p.produce("t", value=b"b")
        assert p.flush(10) == 0
        assert poll_values(c, 1) == [b"b"]
    finally:
        c.close()
        p.close()


#: CONSUMER_GROUPS: KIP-848 members heartbeat at the broker's interval (5 s by default).
CONSUMER_GROUPS = {
    "group.consumer.heartbeat.interval.ms": 200,
    "group.consumer.min.heartbeat.interval.ms": 100,
}


def test_consumer_protocol_member_expired_is_fenced_and_rejoins() -> None:
    # Kafka (KIP-848): a member whose session expires is fenced, the group epoch bumps, its
    # next heartbeat is answered UNKNOWN_MEMBER_ID and it joins again with epoch 0.
    with Broker(config=CONSUMER_GROUPS) as broker:
        consumer_protocol_member_rejoins(broker)


def consumer_protocol_member_rejoins(broker: Broker) -> None:
    broker.create_topic("t", partitions=2)
    c = consumer(broker, "g", group_protocol="consumer")
    c.subscribe(["t"])
    try:
        wait_until(lambda: c.poll(0.05) is None and len(c.assignment()) == 2, 10, "assignment")
        g = broker.group("g")
        assert g is not None
        assert (g.type, g.state) == ("consumer", "Stable")
        [m] = g.members
        assert m.member_id == c.memberid()
        assert dict(m.assignment) == {"t": [0, 1]}
        assert list(m.subscription) == ["t"]
        broker.expire_member("g", m.member_id)
        fenced = broker.group("g")
        assert fenced is not None and fenced.members == [] and fenced.generation > g.generation

        def rejoined() -> bool:
            c.poll(0.05)
            now = broker.group("g")
            return now is not None and now.state == "Stable" and len(now.members) == 1

        wait_until(rejoined, 15, "the member to join again")
        again = broker.group("g")
        assert again is not None and again.generation > fenced.generation
        assert dict(again.members[0].assignment) == {"t": [0, 1]}
    finally:
        c.close()


def test_transactions_are_inspected(broker: Broker) -> None:
    broker.create_topic("t")
    p = producer(broker, transactional_id="tx-open", transaction_timeout_ms=20000)
    try:
        p.init_transactions(10)
        p.begin_transaction()
        p.produce("t", value=b"pending")
        assert p.flush(10) == 0
        by_id = {t.transactional_id: t for t in broker.transactions()}
        txn = by_id["tx-open"]
        assert (txn.state, txn.timeout_ms, list(txn.partitions)) == ("Ongoing", 20000, [("t", 0)])
        assert txn.start_time_ms > 0
        assert values(broker, "t") == [b"pending"]
        assert values(broker, "t", committed_only=True) == []
        [prod] = broker.producers("t", 0)
        assert (prod.producer_id, prod.producer_epoch) == (txn.producer_id, txn.producer_epoch)
        assert prod.current_txn_start_offset == 0
    finally:
        p.close()  # aborts it, as Java's producer does on close
    assert broker.transactions()[0].state == "CompleteAbort"
    assert values(broker, "t", committed_only=True) == []


def test_load_in_progress_is_waited_out(broker: Broker) -> None:
    # Kafka: COORDINATOR_LOAD_IN_PROGRESS (a coordinator still loading its partition) is
    # retriable for InitProducerId and OffsetFetch alike.
    broker.create_topic("t")
    broker.fail("init_producer_id", "COORDINATOR_LOAD_IN_PROGRESS", transactional_id="tx")
    p = producer(broker, transactional_id="tx")
    try:
        p.init_transactions(10)
        p.begin_transaction()
        for i in range(4):
            p.produce("t", value=b"%d" % i)
        p.commit_transaction(10)
    finally:
        p.close()
    first = consumer(broker, "g")
    first.subscribe(["t"])
    try:
        assert poll_values(first, 2) == [b"0", b"1"]
        first.commit(offsets=[kgroup.TopicPartition("t", 0, 2)], asynchronous=False)
    finally:
        first.close()
    broker.fail("offset_fetch", "COORDINATOR_LOAD_IN_PROGRESS", group="g", times=2)
    second = consumer(broker, "g")
    second.subscribe(["t"])
    try:
        assert poll_values(second, 2) == [b"2", b"3"]  # from the committed offset
        assert broker.faults() == []
    finally:
        second.close()


def test_killed_broker_keeps_what_it_acknowledged_and_the_producer_goes_on() -> None:
    # Kafka: acks=all records acknowledged before a crash survive it; the idempotent producer
    # reconnects to the restarted broker and delivers the rest, each record once.
    with Broker(process=True) as broker:
        broker.create_topic("t", partitions=3)
        p = producer(broker, acks="all", enable_idempotence=True)
        d = Deliveries()
        try:
            for i in range(30):
                p.produce("t", key=b"%d" % i, value=b"a%d" % i, on_delivery=d)
            assert p.flush(10) == 0
            acked = set(d.values)
            for i in range(30):
                p.produce("t", key=b"%d" % i, value=b"b%d" % i, on_delivery=d)
            broker.kill()
            broker.restart()
            assert acked <= {r.value for r in broker.records("t")}
            assert p.flush(15) == 0
        finally:
            p.close()
        assert d.failed == []
        stored = [r.value for r in broker.records("t")]
        assert len(stored) == len(set(stored)) == 60
