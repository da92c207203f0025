"""kgroup.testing's faults as confluent-kafka (librdkafka) sees them: each one must give the
client behaviour a Kafka cluster's own failure gives, and the kit's inspection must show what
the broker holds."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from support.kit import (
    Deliveries,
    poll_until,
    poll_values,
    rdkafka_conf,
    rdkafka_consumer_conf,
    wait_until,
)

from kgroup.testing import Broker

pytestmark = pytest.mark.network


def values(broker: Broker, topic: str, partition: int | None = None) -> list[bytes | None]:
    return [r.value for r in broker.records(topic, partition)]


def produce_all(producer: Producer, topic: str, items: list[bytes], d: Deliveries) -> None:
    for v in items:
        producer.produce(topic, value=v, on_delivery=d)


@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "at-least-once"])
def test_request_timed_out_after_the_write_is_retried(broker: Broker, idempotent: bool) -> None:
    # Kafka: a produce whose answer is lost after the append (REQUEST_TIMED_OUT) is retried
    # by librdkafka (possibly persisted). The idempotent producer's retry carries the same
    # sequence, so the broker keeps one copy; without idempotence the batch is written twice,
    # which is what shows that the fault really answered the first produce.
    broker.create_topic("t")
    fault = broker.fail("produce", "REQUEST_TIMED_OUT", handled=True)
    assert [f["id"] for f in broker.faults()] == [fault.id]
    p = Producer(
        rdkafka_conf(
            broker.bootstrap_servers,
            {"enable.idempotence": idempotent, "acks": "all", "linger.ms": 20},
        )
    )
    d = Deliveries()
    items = [b"v%d" % i for i in range(5)]
    produce_all(p, "t", items, d)
    assert p.flush(10) == 0
    assert d.failed == [] and sorted(d.values) == items
    assert broker.faults() == []  # spent by the first produce
    expected = items if idempotent else items + items
    assert values(broker, "t") == expected


def test_consumer_finds_its_coordinator_again_after_not_coordinator(broker: Broker) -> None:
    # Kafka: a Heartbeat answered NOT_COORDINATOR makes the consumer look its coordinator up
    # again (FindCoordinator) and carry on in the same generation: no rebalance.
    broker.create_topic("t")
    p = Producer(rdkafka_conf(broker.bootstrap_servers))
    for i in range(10):
        p.produce("t", value=b"%d" % i)
    assert p.flush(10) == 0
    c = Consumer(rdkafka_consumer_conf(broker.bootstrap_servers, "g"))
    c.subscribe(["t"])
    try:
        assert poll_values(c, 5) == [b"%d" % i for i in range(5)]
        before = broker.group("g")
        assert before is not None and before.state == "Stable"
        broker.fail("heartbeat", "NOT_COORDINATOR", times=2, group="g")
        # until both heartbeats were answered NOT_COORDINATOR
        got = poll_until(c, lambda: broker.faults() == [], 10, "two heartbeats")
        got += poll_values(c, 5 - len(got))
        assert got == [b"%d" % i for i in range(5, 10)]
        c.commit(asynchronous=False)
        committed = broker.committed("g")
        assert committed[("t", 0)].offset == 10
        after = broker.group("g")
        assert after is not None and after.state == "Stable"
        assert after.generation == before.generation
        assert [m.member_id for m in after.members] == [m.member_id for m in before.members]
    finally:
        c.close()


def commit_until_done(c: Consumer, timeout: float = 10.0) -> None:
    """Commit synchronously, again while the coordinator answers it is away."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            c.commit(asynchronous=False)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            c.poll(0.1)


def test_group_follows_its_coordinator_when_it_moves_and_comes_back(broker: Broker) -> None:
    # Kafka: a coordinator failover unloads the group (NOT_COORDINATOR) and loads it again
    # from __consumer_offsets (COORDINATOR_LOAD_IN_PROGRESS): the committed offsets survive,
    # and the consumer keeps consuming and commits again once it finds the coordinator.
    broker.create_topic("t")
    p = Producer(rdkafka_conf(broker.bootstrap_servers))
    for i in range(10):
        p.produce("t", value=b"%d" % i)
    assert p.flush(10) == 0
    c = Consumer(rdkafka_consumer_conf(broker.bootstrap_servers, "g"))
    c.subscribe(["t"])
    try:
        assert poll_values(c, 5) == [b"%d" % i for i in range(5)]
        c.commit(asynchronous=False)
        assert broker.committed("g")[("t", 0)].offset == 5
        fault = broker.move_coordinator("g", seconds=0.5)
        assert any(f["id"] == fault.id for f in broker.faults())
        assert broker.group("g") is None  # unloaded
        assert poll_values(c, 5) == [b"%d" % i for i in range(5, 10)]
        commit_until_done(c)
        wait_until(lambda: broker.faults() == [], 10, "the coordinator to come back")
        assert broker.committed("g")[("t", 0)].offset == 10
        wait_until(lambda: (g := broker.group("g")) is not None and g.state == "Stable")
    finally:
        c.close()


def test_paused_broker_makes_an_idempotent_producer_wait_not_lose(broker: Broker) -> None:
    # Kafka: a broker stalled (a long GC pause) answers nothing; the producer's requests wait
    # (well inside request.timeout.ms) and everything is delivered once the broker goes on.
    broker.create_topic("t")
    p = Producer(rdkafka_conf(broker.bootstrap_servers, {"enable.idempotence": True}))
    d = Deliveries()
    produce_all(p, "t", [b"a%d" % i for i in range(5)], d)
    assert p.flush(10) == 0
    with broker.paused():
        produce_all(p, "t", [b"b%d" % i for i in range(5)], d)
        assert p.flush(0.7) > 0  # nothing answered
        assert len(d.ok) == 5
    assert p.flush(10) == 0
    assert d.failed == []
    expected = [b"a%d" % i for i in range(5)] + [b"b%d" % i for i in range(5)]
    assert sorted(d.values) == sorted(expected)
    assert values(broker, "t") == expected


def test_paused_past_the_request_timeout_still_delivers_once(broker: Broker) -> None:
    # Kafka: past request.timeout.ms librdkafka gives the in-flight produce up and sends it
    # again (possibly persisted); the idempotent producer's retry is answered as a duplicate
    # if the first one was written after all: every record once.
    broker.create_topic("t")
    p = Producer(
        rdkafka_conf(
            broker.bootstrap_servers,
            {"enable.idempotence": True, "request.timeout.ms": 300, "socket.timeout.ms": 300},
        )
    )
    d = Deliveries()
    assert p.list_topics("t", timeout=5).topics["t"].error is None
    with broker.paused():
        produce_all(p, "t", [b"%d" % i for i in range(20)], d)
        p.flush(1.0)
    assert p.flush(15) == 0
    assert d.failed == []
    assert values(broker, "t") == [b"%d" % i for i in range(20)]


def test_leaderless_partition_holds_its_records_until_the_leader_is_back(
    broker: Broker,
) -> None:
    # Kafka: a partition without a leader (LEADER_NOT_AVAILABLE in Metadata) keeps its
    # records queued in the producer; the other partitions are served meanwhile.
    broker.create_topic("t", partitions=2)
    p = Producer(rdkafka_conf(broker.bootstrap_servers, {"enable.idempotence": True}))
    assert p.list_topics("t", timeout=5).topics["t"].error is None
    start = time.monotonic()
    broker.leaderless("t", 0, seconds=1.0)
    md = p.list_topics("t", timeout=5).topics["t"].partitions
    assert md[0].leader == -1 and md[1].leader >= 0
    d0, d1 = Deliveries(), Deliveries()
    p.produce("t", value=b"p0", partition=0, on_delivery=d0)
    p.produce("t", value=b"p1", partition=1, on_delivery=d1)
    assert p.flush(10) == 0
    assert d0.failed == [] and d1.failed == []
    assert d1.times[0] < d0.times[0]
    assert d0.times[0] - start >= 0.8
    assert values(broker, "t", 0) == [b"p0"] and values(broker, "t", 1) == [b"p1"]


def test_connection_closed_on_a_produce_is_retried_without_duplicates(broker: Broker) -> None:
    # Kafka: a connection lost with a produce in flight: the idempotent producer reconnects
    # and sends the batch again with its sequence; nothing lost, nothing twice.
    broker.create_topic("t")
    p = Producer(
        rdkafka_conf(broker.bootstrap_servers, {"enable.idempotence": True, "linger.ms": 20})
    )
    assert p.list_topics("t", timeout=5).topics["t"].error is None
    broker.disconnect(after=1, api="produce")
    assert len(broker.faults()) == 1
    d = Deliveries()
    produce_all(p, "t", [b"%d" % i for i in range(5)], d)
    assert p.flush(10) == 0
    assert d.failed == []
    assert broker.faults() == []
    assert values(broker, "t") == [b"%d" % i for i in range(5)]


def test_delay_is_latency_the_client_sees(broker: Broker) -> None:
    broker.create_topic("t")
    p = Producer(rdkafka_conf(broker.bootstrap_servers, {"linger.ms": 0}))
    p.produce("t", value=b"warm")
    assert p.flush(10) == 0

    def produce_time() -> float:
        start = time.monotonic()
        p.produce("t", value=b"x")
        assert p.flush(10) == 0
        return time.monotonic() - start

    with broker.delay(1.0, "produce"):
        assert produce_time() >= 1.0
    assert produce_time() < 0.8


def test_expired_member_is_removed_and_its_consumer_joins_again(broker: Broker) -> None:
    # Kafka: a classic member whose session expires is removed and the group rebalances; its
    # next heartbeat is answered UNKNOWN_MEMBER_ID, its partitions are lost, and it joins again
    # with a new member id in a later generation.
    broker.create_topic("t")
    events: list[str] = []
    c = Consumer(rdkafka_consumer_conf(broker.bootstrap_servers, "g"))
    c.subscribe(
        ["t"],
        on_assign=lambda _c, ps: events.append("assign"),
        on_revoke=lambda _c, ps: events.append("revoke"),
        on_lost=lambda _c, ps: events.append("lost"),
    )
    try:
        wait_until(lambda: c.poll(0.05) is None and c.assignment() != [], 10, "an assignment")
        before = broker.group("g")
        assert before is not None and len(before.members) == 1
        old_member = before.members[0].member_id
        broker.expire_member("g", old_member)
        after_expiry = broker.group("g")
        assert after_expiry is not None
        assert old_member not in [m.member_id for m in after_expiry.members]

        def rejoined() -> bool:
            c.poll(0.05)
            g = broker.group("g")
            return (
                g is not None
                and g.state == "Stable"
                and len(g.members) == 1
                and g.members[0].member_id != old_member
            )

        wait_until(rejoined, 15, "the consumer to join again")
        after = broker.group("g")
        assert after is not None and after.generation > before.generation
        assert after.members[0].member_id == c.memberid()
        assert "lost" in events or "revoke" in events
        assert events.count("assign") >= 2
    finally:
        c.close()


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_disk_error_on_append_is_kafka_storage_error(storage: str) -> None:
    # Kafka: an I/O error on append answers KAFKA_STORAGE_ERROR, a retriable error:
    # librdkafka reports it where it may not retry, and retries it where it may.
    with Broker(storage=storage) as broker:
        broker.create_topic("t")
        once = Producer(
            rdkafka_conf(
                broker.bootstrap_servers,
                {"enable.idempotence": False, "message.send.max.retries": 0},
            )
        )
        d = Deliveries()
        assert once.list_topics("t", timeout=5).topics["t"].error is None
        broker.fail_disk("t", 0)
        once.produce("t", value=b"lost", on_delivery=d)
        assert once.flush(10) == 0
        assert len(d.failed) == 1
        err: KafkaError = d.failed[0]
        assert err.code() == KafkaError.KAFKA_STORAGE_ERROR
        assert values(broker, "t") == []

        retrying = Producer(rdkafka_conf(broker.bootstrap_servers, {"enable.idempotence": True}))
        d = Deliveries()
        assert retrying.list_topics("t", timeout=5).topics["t"].error is None
        broker.fail_disk("t", 0, times=2)
        retrying.produce("t", value=b"kept", on_delivery=d)
        assert retrying.flush(10) == 0
        assert d.failed == []
        assert values(broker, "t") == [b"kept"]


def test_killed_broker_keeps_every_acknowledged_record() -> None:
    # Kafka: acks=all records acknowledged before a crash are there after the restart, and
    # the idempotent producer resends what was in flight without writing anything twice.
    with Broker(process=True) as broker:
        broker.create_topic("t", partitions=2)
        p = Producer(
            rdkafka_conf(broker.bootstrap_servers, {"enable.idempotence": True, "acks": "all"})
        )
        d = Deliveries()
        produce_all(p, "t", [b"a%d" % i for i in range(100)], d)
        assert p.flush(10) == 0
        acked = set(d.values)
        assert len(acked) == 100
        produce_all(p, "t", [b"b%d" % i for i in range(100)], d)
        p.poll(0)
        broker.kill()
        p.poll(0.2)
        acked = set(d.values)  # whatever was acknowledged before the crash
        broker.restart()
        stored = values(broker, "t")
        assert acked <= set(stored)
        assert p.flush(15) == 0
        assert d.failed == []
        stored = values(broker, "t")
        assert len(stored) == len(set(stored)) == 200


def test_killed_broker_keeps_committed_offsets() -> None:
    with Broker(process=True) as broker:
        broker.create_topic("t")
        p = Producer(rdkafka_conf(broker.bootstrap_servers))
        for i in range(4):
            p.produce("t", value=b"%d" % i)
        assert p.flush(10) == 0
        c = Consumer(rdkafka_consumer_conf(broker.bootstrap_servers, "g"))
        c.subscribe(["t"])
        try:
            assert len(poll_values(c, 4)) == 4
            c.commit(asynchronous=False)
        finally:
            c.close()
        broker.kill()
        broker.restart()
        assert broker.committed("g")[("t", 0)].offset == 4


def first_assignment_time(broker: Broker) -> float:
    c = Consumer(rdkafka_consumer_conf(broker.bootstrap_servers, "g"))
    start = time.monotonic()
    c.subscribe(["t"])
    try:
        wait_until(lambda: c.poll(0.05) is None and c.assignment() != [], 10, "an assignment")
        return time.monotonic() - start
    finally:
        c.close()


def test_initial_rebalance_delay_is_the_test_default_and_kafkas_on_request() -> None:
    # Kafka's group.initial.rebalance.delay.ms (3 s by default) holds a new group's first
    # rebalance back; the kit sets it to 0 as Kafka's own test harness does.
    with Broker() as broker:
        broker.create_topic("t")
        assert first_assignment_time(broker) < 2.0
    with Broker(config={"group.initial.rebalance.delay.ms": 3000}) as broker:
        broker.create_topic("t")
        assert first_assignment_time(broker) >= 2.9


# -- inspection ---------------------------------------------------------------------------------


def test_records_are_inspected_as_stored(broker: Broker) -> None:
    broker.create_topic("t", partitions=2)
    p = Producer(rdkafka_conf(broker.bootstrap_servers, {"enable.idempotence": True}))
    for i in range(3):
        p.produce("t", key=b"k", value=b"v%d" % i, partition=1, headers=[("h", b"%d" % i)])
    p.produce("t", key=None, value=None, partition=0, timestamp=1234)
    assert p.flush(10) == 0
    one = broker.records("t", 1)
    assert [(r.topic, r.partition, r.offset, r.key, r.value) for r in one] == [
        ("t", 1, i, b"k", b"v%d" % i) for i in range(3)
    ]
    assert [list(r.headers) for r in one] == [[("h", b"%d" % i)] for i in range(3)]
    assert len({r.producer_id for r in one}) == 1 and one[0].producer_id >= 0
    assert [r.sequence for r in one] == [0, 1, 2]
    assert not any(r.transactional for r in one)
    zero = broker.records("t", 0)
    assert [(r.key, r.value, r.timestamp) for r in zero] == [(None, None, 1234)]
    assert [r.partition for r in broker.records("t")] == [0, 1, 1, 1]
    assert broker.end_offsets("t") == {0: 1, 1: 3}
    assert broker.topics() == {"t": 2}


def test_group_and_committed_offsets_are_inspected(broker: Broker) -> None:
    broker.create_topic("t", partitions=4)
    consumers = [
        Consumer(
            rdkafka_consumer_conf(
                broker.bootstrap_servers,
                "g",
                {"client.id": f"client-{i}", "partition.assignment.strategy": "range"},
            )
        )
        for i in range(2)
    ]
    try:
        for c in consumers:
            c.subscribe(["t"])

        def stable() -> bool:
            for c in consumers:
                c.poll(0.05)
            g = broker.group("g")
            return (
                g is not None
                and g.state == "Stable"
                and len(g.members) == 2
                and all(len(c.assignment()) == 2 for c in consumers)
            )

        wait_until(stable, 15, "two members, stable")
        g = broker.group("g")
        assert g is not None
        assert (g.type, g.state, g.protocol_type, g.protocol) == (
            "classic",
            "Stable",
            "consumer",
            "range",
        )
        assert g.generation >= 1 and g.assignment_epoch == -1
        assert all("127.0.0.1" in m.client_host for m in g.members)
        assert all(m.group_instance_id is None for m in g.members)
        by_client = {m.client_id: m for m in g.members}
        assert sorted(by_client) == ["client-0", "client-1"]
        for i, c in enumerate(consumers):
            m = by_client[f"client-{i}"]
            assert m.member_id == c.memberid()
            assert list(m.subscription) == ["t"]
            held = sorted(tp.partition for tp in c.assignment())
            assert dict(m.assignment) == {"t": held}
        assert sorted(p for m in g.members for p in m.assignment["t"]) == [0, 1, 2, 3]
        assert broker.groups() == ["g"]

        consumers[0].commit(
            offsets=[TopicPartition("t", 0, 7, metadata="seven")], asynchronous=False
        )
        committed = broker.committed("g")
        assert list(committed) == [("t", 0)]
        assert committed[("t", 0)].offset == 7
        # confluent-kafka sends the metadata with its C string's NUL; stored as it came.
        assert committed[("t", 0)].metadata.rstrip("\x00") == "seven"
    finally:
        for c in consumers:
            c.close()
    assert broker.group("g") is not None and broker.group("g").state == "Empty"  # type: ignore[union-attr]
    assert broker.group("nothing") is None


def test_open_transaction_is_listed_and_its_records_not_committed(broker: Broker) -> None:
    broker.create_topic("t")
    p = Producer(rdkafka_conf(broker.bootstrap_servers, {"transactional.id": "tx"}))
    p.init_transactions(10)
    p.begin_transaction()
    p.produce("t", value=b"open")
    assert p.flush(10) == 0
    [txn] = broker.transactions()
    assert txn.transactional_id == "tx" and txn.state == "Ongoing"
    assert txn.producer_id >= 0
    assert [tuple(tp) for tp in txn.partitions] == [("t", 0)]
    assert [r.value for r in broker.records("t")] == [b"open"]
    assert broker.records("t")[0].transactional
    assert broker.records("t", committed_only=True) == []
    p.abort_transaction(10)
    p.begin_transaction()
    p.produce("t", value=b"done")
    p.commit_transaction(10)
    assert [r.value for r in broker.records("t", committed_only=True)] == [b"done"]
    assert [r.value for r in broker.records("t")] == [b"open", b"done"]
    [txn] = broker.transactions()
    assert txn.state == "CompleteCommit"


# -- errors where Kafka answers them ------------------------------------------------------------


def test_partition_filter_fails_only_that_partition(broker: Broker) -> None:
    # Kafka answers errors per partition: a produce to two partitions where one is refused
    # (a non-retriable error here, reported at once) delivers the other.
    broker.create_topic("t", partitions=2)
    p = Producer(rdkafka_conf(broker.bootstrap_servers, {"linger.ms": 50}))
    assert p.list_topics("t", timeout=5).topics["t"].error is None
    broker.fail("produce", "INVALID_RECORD", topic="t", partition=0, times=None)
    d0, d1 = Deliveries(), Deliveries()
    p.produce("t", value=b"refused", partition=0, on_delivery=d0)
    p.produce("t", value=b"written", partition=1, on_delivery=d1)
    assert p.flush(10) == 0
    assert [e.code() for e in d0.failed] == [KafkaError.INVALID_RECORD]
    assert d1.failed == [] and d1.values == [b"written"]
    assert values(broker, "t", 0) == [] and values(broker, "t", 1) == [b"written"]
    assert len(broker.faults()) == 1  # times=None: until removed


def test_transactional_id_filter_and_a_retried_concurrent_transactions(broker: Broker) -> None:
    # Kafka: AddPartitionsToTxn answered CONCURRENT_TRANSACTIONS (the previous transaction
    # still completing) is retried by the producer; only the filtered transactional id meets it.
    broker.create_topic("t")
    p = Producer(rdkafka_conf(broker.bootstrap_servers, {"transactional.id": "tx"}))
    p.init_transactions(10)
    broker.fail("add_partitions_to_txn", "CONCURRENT_TRANSACTIONS", transactional_id="other")
    broker.fail("add_partitions_to_txn", "CONCURRENT_TRANSACTIONS", transactional_id="tx", times=2)
    p.begin_transaction()
    p.produce("t", value=b"committed")
    p.commit_transaction(10)
    assert [f["transactional_id"] for f in broker.faults()] == ["other"]
    assert values(broker, "t") == [b"committed"]
    assert [r.value for r in broker.records("t", committed_only=True)] == [b"committed"]


def test_sync_group_rebalance_in_progress_makes_the_member_join_again(broker: Broker) -> None:
    # Kafka: SyncGroup answered REBALANCE_IN_PROGRESS sends the member back to JoinGroup; it
    # ends up assigned in a later generation.
    broker.create_topic("t")
    broker.fail("sync_group", "REBALANCE_IN_PROGRESS", group="g")
    c = Consumer(rdkafka_consumer_conf(broker.bootstrap_servers, "g"))
    c.subscribe(["t"])
    try:
        wait_until(lambda: c.poll(0.05) is None and c.assignment() != [], 10, "an assignment")
        assert broker.faults() == []
        g = broker.group("g")
        assert g is not None and g.state == "Stable" and len(g.members) == 1
    finally:
        c.close()


def test_metadata_error_for_a_topic_holds_its_records(broker: Broker) -> None:
    # Kafka: a topic Metadata answers LEADER_NOT_AVAILABLE for (as while it is being
    # created) keeps its records in the producer until Metadata knows it.
    broker.create_topic("t")
    broker.fail("metadata", "LEADER_NOT_AVAILABLE", topic="t", times=3)
    p = Producer(rdkafka_conf(broker.bootstrap_servers))
    d = Deliveries()
    p.produce("t", value=b"x", on_delivery=d)
    assert p.flush(10) == 0
    assert d.failed == [] and broker.faults() == []
    assert values(broker, "t") == [b"x"]


def test_static_member_stays_until_its_session_expires(broker: Broker) -> None:
    # Kafka (KIP-345): a static member that closes sends no LeaveGroup; the group keeps it
    # (and its partitions) until its session expires, which expire_member makes happen now.
    broker.create_topic("t")
    c = Consumer(
        rdkafka_consumer_conf(broker.bootstrap_servers, "g", {"group.instance.id": "static-1"})
    )
    c.subscribe(["t"])
    try:
        wait_until(lambda: c.poll(0.05) is None and c.assignment() != [], 10, "an assignment")
    finally:
        c.close()
    g = broker.group("g")
    assert g is not None and g.state == "Stable"
    [m] = g.members
    assert m.group_instance_id == "static-1" and dict(m.assignment) == {"t": [0]}
    broker.expire_member("g", m.member_id)
    g = broker.group("g")
    assert g is not None and g.members == [] and g.state == "Empty"
