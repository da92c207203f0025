"""Transactions on kgroup's broker with real clients, unchanged: confluent-kafka's, kafka-python's
and aiokafka's transactional producers, read back by read_committed and read_uncommitted
consumers of each; consume-transform-produce with offsets sent to the transaction; a fenced
producer; and the broker killed with kill -9 with a transaction prepared and one open.

What each asserts is Kafka's semantics: a committed transaction is seen whole, an aborted one
never by read_committed readers (read_uncommitted ones see its records), an open one holds
read_committed readers at its first offset, and offsets sent to a transaction count only once
it commits."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from support.kgroup_broker import BrokerProcess, run_broker

from kgroup.broker import Broker

pytestmark = pytest.mark.network

ck = pytest.importorskip("confluent_kafka")
admin_module = pytest.importorskip("confluent_kafka.admin")  # ck.admin


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    # Transactions aborted at their timeout are looked for every second, not every 10.
    config = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000}
    with run_broker(tmp_path_factory.mktemp("txn"), config) as b:
        yield b


def new_topic(broker: Broker, partitions: int = 1) -> str:
    name = f"txn-{uuid.uuid4().hex[:8]}"
    admin = admin_module.AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    futures = admin.create_topics([admin_module.NewTopic(name, partitions, 1)])
    futures[name].result(10)
    return name


def producer(bootstrap: str, txn: str, **extra: Any) -> Any:
    p = ck.Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": txn,
            "transaction.timeout.ms": 10_000,
            "linger.ms": 5,
            **extra,
        }
    )
    p.init_transactions(10)
    return p


def read_all(
    bootstrap: str,
    topic: str,
    isolation: str,
    expect: int,
    timeout: float = 10.0,
    partitions: int = 1,
) -> list[bytes]:
    """The values a consumer with ``isolation.level=isolation`` reads from the start of every
    partition: ``expect`` of them, then a little longer to see nothing more comes."""
    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    c.assign([ck.TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    quiet_until = None
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.1)
            if m is not None and m.error() is None:
                got.append(m.value())
            if len(got) >= expect:
                quiet_until = quiet_until or time.monotonic() + 0.5
                if time.monotonic() >= quiet_until:
                    break
    finally:
        c.close()
    return got


def end_offset(bootstrap: str, topic: str, isolation: str, partition: int = 0) -> int:
    """The partition's end as a consumer of ``isolation`` sees it (ListOffsets latest: the last
    stable offset under read_committed, the high watermark otherwise)."""
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "w", "isolation.level": isolation})
    try:
        return int(c.get_watermark_offsets(ck.TopicPartition(topic, partition), 5)[1])
    finally:
        c.close()


def test_committed_seen_aborted_not(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = new_topic(broker, 2)
    p = producer(bootstrap, f"tx-{uuid.uuid4().hex[:6]}")
    p.begin_transaction()
    for i in range(10):
        p.produce(topic, f"c{i}".encode(), partition=i % 2)
    p.commit_transaction(10)
    p.begin_transaction()
    for i in range(5):
        p.produce(topic, f"a{i}".encode(), partition=i % 2)
    p.flush(10)
    p.abort_transaction(10)
    p.begin_transaction()
    p.produce(topic, b"c10", partition=0)
    p.commit_transaction(10)
    committed = read_all(bootstrap, topic, "read_committed", 11, partitions=2)
    assert sorted(committed) == sorted([f"c{i}".encode() for i in range(11)])
    everything = read_all(bootstrap, topic, "read_uncommitted", 16, partitions=2)
    assert sorted(everything) == sorted(
        [f"c{i}".encode() for i in range(11)] + [f"a{i}".encode() for i in range(5)]
    )
    # The markers take offsets: 11 + 5 records and 3 transactions' markers on 2 partitions.
    ends = [end_offset(bootstrap, topic, "read_uncommitted", i) for i in (0, 1)]
    assert sum(ends) == 16 + 2 + 2 + 1


def test_open_transaction_holds_read_committed(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = new_topic(broker)
    plain = ck.Producer({"bootstrap.servers": bootstrap})
    plain.produce(topic, b"before")
    plain.flush(10)
    p = producer(bootstrap, f"tx-{uuid.uuid4().hex[:6]}")
    p.begin_transaction()
    p.produce(topic, b"open")
    p.flush(10)
    # read_committed stops at the open transaction; read_uncommitted sees past it.
    assert read_all(bootstrap, topic, "read_committed", 1, timeout=2) == [b"before"]
    assert read_all(bootstrap, topic, "read_uncommitted", 2, timeout=5) == [b"before", b"open"]
    assert end_offset(bootstrap, topic, "read_committed") == 1
    assert end_offset(bootstrap, topic, "read_uncommitted") == 2
    p.commit_transaction(10)
    assert read_all(bootstrap, topic, "read_committed", 2) == [b"before", b"open"]


def test_fenced_producer(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = new_topic(broker)
    txn = f"tx-{uuid.uuid4().hex[:6]}"
    first = producer(bootstrap, txn)
    first.begin_transaction()
    first.produce(topic, b"zombie")
    first.flush(10)
    second = producer(bootstrap, txn)  # fences the first and aborts its transaction
    second.begin_transaction()
    second.produce(topic, b"live")
    second.commit_transaction(10)
    with pytest.raises(ck.KafkaException) as e:
        first.produce(topic, b"more")
        first.commit_transaction(10)
    assert e.value.args[0].fatal() or e.value.args[0].code() in (
        ck.KafkaError._FENCED,
        ck.KafkaError.PRODUCER_FENCED,
        ck.KafkaError.INVALID_PRODUCER_EPOCH,
    )
    assert read_all(bootstrap, topic, "read_committed", 1) == [b"live"]


def test_consume_transform_produce(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    source, sink = new_topic(broker), new_topic(broker)
    seed = ck.Producer({"bootstrap.servers": bootstrap})
    for i in range(20):
        seed.produce(source, f"{i}".encode())
    seed.flush(10)
    group = f"ctp-{uuid.uuid4().hex[:6]}"
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([source])
    p = producer(bootstrap, f"ctp-{uuid.uuid4().hex[:6]}")
    done = 0
    aborted_once = False
    deadline = time.monotonic() + 20
    while done < 20 and time.monotonic() < deadline:
        batch = consumer.consume(5, 0.5)
        batch = [m for m in batch if m.error() is None]
        if not batch:
            continue
        p.begin_transaction()
        for m in batch:
            p.produce(sink, m.value() + b"!")
        p.send_offsets_to_transaction(
            consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 10
        )
        if not aborted_once:
            # The first batch is aborted: its output never shows, its offsets never count,
            # and the consumer goes back to them.
            aborted_once = True
            p.abort_transaction(10)
            consumer.seek(ck.TopicPartition(source, 0, batch[0].offset()))
            continue
        p.commit_transaction(10)
        done += len(batch)
    consumer.close()
    assert done == 20
    out = read_all(bootstrap, sink, "read_committed", 20)
    assert sorted(out, key=lambda v: int(v[:-1])) == [f"{i}!".encode() for i in range(20)]
    admin = admin_module.AdminClient({"bootstrap.servers": bootstrap})
    [(_, f)] = admin.list_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions(group, [ck.TopicPartition(source, 0)])]
    ).items()
    assert [tp.offset for tp in f.result(10).topic_partitions] == [20]


def test_other_clients_read_committed(broker: Broker) -> None:
    """kafka-python and aiokafka read what confluent-kafka's transactions wrote, under both
    isolation levels."""
    bootstrap = broker.bootstrap_servers
    topic = new_topic(broker)
    p = producer(bootstrap, f"tx-{uuid.uuid4().hex[:6]}")
    p.begin_transaction()
    p.produce(topic, b"a")
    p.flush(10)
    p.abort_transaction(10)
    p.begin_transaction()
    p.produce(topic, b"c")
    p.commit_transaction(10)

    kafka = pytest.importorskip("kafka")
    for isolation, want in (("read_committed", [b"c"]), ("read_uncommitted", [b"a", b"c"])):
        kc = kafka.KafkaConsumer(
            bootstrap_servers=bootstrap,
            isolation_level=isolation,
            auto_offset_reset="earliest",
            consumer_timeout_ms=3000,
        )
        kc.assign([kafka.TopicPartition(topic, 0)])
        assert [m.value for m in kc] == want
        kc.close()

    aiokafka = pytest.importorskip("aiokafka")

    async def aio(isolation: str) -> list[bytes]:
        c = aiokafka.AIOKafkaConsumer(
            bootstrap_servers=bootstrap, isolation_level=isolation, auto_offset_reset="earliest"
        )
        await c.start()
        try:
            c.assign([aiokafka.TopicPartition(topic, 0)])
            got: list[bytes] = []
            end = time.monotonic() + 3
            while time.monotonic() < end:
                for msgs in (await c.getmany(timeout_ms=200)).values():
                    got += [m.value for m in msgs]
            return got
        finally:
            await c.stop()

    assert asyncio.run(aio("read_committed")) == [b"c"]
    assert asyncio.run(aio("read_uncommitted")) == [b"a", b"c"]


def test_kafka_python_and_aiokafka_transactions(broker: Broker) -> None:
    """The other clients' transactional producers (protocol v1, as Kafka 3.x's brokers)."""
    bootstrap = broker.bootstrap_servers
    topic = new_topic(broker)
    kafka = pytest.importorskip("kafka")
    kp = kafka.KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"kp-{topic}")
    kp.init_transactions()
    kp.begin_transaction()
    kp.send(topic, b"kp-aborted")
    kp.flush()
    kp.abort_transaction()
    kp.begin_transaction()
    kp.send(topic, b"kp")
    kp.commit_transaction()
    kp.close()

    aiokafka = pytest.importorskip("aiokafka")

    async def aio() -> None:
        ap = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"ap-{topic}")
        await ap.start()
        try:
            async with ap.transaction():
                await ap.send(topic, b"ap")
            await ap.begin_transaction()
            await ap.send(topic, b"ap-aborted")
            await ap.abort_transaction()
        finally:
            await ap.stop()

    asyncio.run(aio())
    assert read_all(bootstrap, topic, "read_committed", 2) == [b"kp", b"ap"]


def test_kill9_completes_prepared_and_aborts_open(tmp_path) -> None:
    """A broker killed with kill -9 right after a commit was answered finishes that commit at
    restart (the markers of a prepared transaction are written again), and a transaction left
    open is aborted at its timeout."""
    config = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": 500}
    with BrokerProcess(tmp_path / "data", config) as b:
        bootstrap = b.bootstrap
        admin = admin_module.AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([admin_module.NewTopic("t", 1, 1)])["t"].result(10)
        committed = producer(bootstrap, "committed")
        committed.begin_transaction()
        committed.produce("t", b"kept")
        committed.commit_transaction(10)
        hanging = producer(bootstrap, "hanging", **{"transaction.timeout.ms": 2000})
        hanging.begin_transaction()
        hanging.produce("t", b"dropped")
        hanging.flush(10)
        b.kill9()
        b.start()
        # Both transactions end: the LSO reaches the log end and only "kept" is committed.
        assert read_all(b.bootstrap, "t", "read_committed", 1, timeout=15) == [b"kept"]
        deadline = time.monotonic() + 15
        while True:
            lso = end_offset(b.bootstrap, "t", "read_committed")
            hw = end_offset(b.bootstrap, "t", "read_uncommitted")
            if lso == hw or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert lso == hw == 4  # kept, its commit marker, dropped, its abort marker
