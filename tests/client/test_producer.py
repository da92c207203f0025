"""kgroup's Producer against kgroup's broker and tansu: what it writes is read back by
confluent-kafka's Consumer (keys, values, headers, timestamps, the offsets in the delivery
reports), records land where Java's partitioner puts them, the idempotent producer's batches
carry a producer id and running sequences (in order also when batches wait for the connection to
the leader), delivery fails in time when the broker is gone, and close() leaves no thread
behind."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.kgroup_broker import BrokerProcess, run_broker

from kgroup.broker import Broker
from kgroup.client.cluster import Cluster
from kgroup.client.producer import Producer
from kgroup.errors import InvalidArgument, RequestTimedOut
from kgroup.partitioners import partition_for_key

pytestmark = pytest.mark.network

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.fixture(scope="module")
def kbroker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("producer")) as b:
        yield b


@pytest.fixture(params=["kgroup", "tansu", "kafka"])
def bootstrap(request: pytest.FixtureRequest) -> str:
    if request.param == "kgroup":
        return str(request.getfixturevalue("kbroker").bootstrap_servers)
    return str(request.getfixturevalue(request.param).bootstrap)


def create_topic(bootstrap: str, partitions: int = 1) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"prod-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    # Kafka's brokers lead a new topic's partitions a little after CreateTopics answers: a
    # produce before then gets NOT_LEADER_OR_FOLLOWER for its first batch and may have a later
    # one accepted first (docs/kafka-differences.md, "Reads right after a write").
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        t = admin.list_topics(name, timeout=5).topics.get(name)
        if (
            t is not None
            and t.error is None
            and len(t.partitions) == partitions
            and all(p.leader >= 0 for p in t.partitions.values())
        ):
            break
        time.sleep(0.05)
    return name


def read_back(bootstrap: str, topic: str, n: int, partitions: int = 1) -> list[Any]:
    """The first ``n`` records of ``topic`` read with confluent-kafka's Consumer."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"rb-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
        }
    )
    try:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        out: list[Any] = []
        deadline = time.monotonic() + 30
        while len(out) < n and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                out.append(m)
        assert len(out) == n, f"read {len(out)} of {n} records"
        return out
    finally:
        c.close()


class Reports:
    """Collects delivery reports as (err, topic, partition, offset, key, value, timestamp)."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def __call__(self, err: Any, msg: Any) -> None:
        self.items.append(
            (
                err,
                msg.topic(),
                msg.partition(),
                msg.offset(),
                msg.key(),
                msg.value(),
                msg.timestamp(),
            )
        )


def producer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("kgroup-producer")]


# -- configuration ------------------------------------------------------------------------------


def test_unknown_config_key_is_named() -> None:
    with pytest.raises(InvalidArgument, match=r"linger\.mss"):
        Producer({"bootstrap.servers": "127.0.0.1:1", "linger.mss": 5})


def test_idempotence_needs_acks_all_when_asked_for() -> None:
    with pytest.raises(InvalidArgument, match="acks=all"):
        Producer({"bootstrap.servers": "127.0.0.1:1", "acks": 1, "enable.idempotence": True})


def test_idempotence_quietly_off_when_not_asked_for() -> None:
    p = Producer({"bootstrap.servers": "127.0.0.1:1", "acks": 1})
    try:
        assert p._idempotent is False
    finally:
        p.close(0)


# -- round trips --------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_every_codec_reads_back(bootstrap: str, codec: str) -> None:
    topic = create_topic(bootstrap)
    reports = Reports()
    ts = int(time.time() * 1000) - 5000
    with Producer({"bootstrap.servers": bootstrap, "compression.type": codec}) as p:
        for i in range(50):
            p.produce(
                topic,
                value=b"v%d" % i * 10,
                key=b"k%d" % i,
                on_delivery=reports,
                timestamp=ts + i,
                headers=[("h", b"x%d" % i), ("n", None)],
            )
        assert p.flush(30) == 0
    assert [r[0] for r in reports.items] == [None] * 50
    offsets = [r[3] for r in reports.items]
    assert offsets == list(range(offsets[0], offsets[0] + 50))
    got = read_back(bootstrap, topic, 50)
    for i, m in enumerate(got):
        assert m.key() == b"k%d" % i
        assert m.value() == b"v%d" % i * 10
        assert m.timestamp() == (1, ts + i)
        assert m.offset() == offsets[i]
        assert [(k, v) for k, v in m.headers()] == [("h", b"x%d" % i), ("n", None)]


def test_keys_land_where_java_puts_them(bootstrap: str) -> None:
    # vector from kafkajs#357: Java's producer puts key "100:48069" in partition 9 of 12
    assert partition_for_key(b"100:48069", 12) == 9
    topic = create_topic(bootstrap, 12)
    reports = Reports()
    keys = [b"100:48069"] + [f"key-{i}".encode() for i in range(300)]
    with Producer({"bootstrap.servers": bootstrap}) as p:
        for k in keys:
            p.produce(topic, b"v", k, on_delivery=reports)
        assert p.flush(30) == 0
    assert {r[4]: r[2] for r in reports.items} == {k: partition_for_key(k, 12) for k in keys}
    got = read_back(bootstrap, topic, len(keys), 12)
    assert {m.key(): m.partition() for m in got} == {k: partition_for_key(k, 12) for k in keys}


def test_null_keys_stick_to_one_partition_per_batch(kbroker: Broker) -> None:
    bootstrap = kbroker.bootstrap_servers
    topic = create_topic(bootstrap, 12)
    reports = Reports()
    with Producer({"bootstrap.servers": bootstrap, "linger.ms": 50}) as p:
        for i in range(40):  # 40 small records: far under one batch.size
            p.produce(topic, b"%d" % i, on_delivery=reports)
        assert p.flush(30) == 0
    assert len({r[2] for r in reports.items}) == 1


@pytest.mark.parametrize("acks", ["0", "1", "all"])
def test_acks(bootstrap: str, acks: str) -> None:
    topic = create_topic(bootstrap)
    reports = Reports()
    with Producer({"bootstrap.servers": bootstrap, "acks": acks}) as p:
        for i in range(20):
            p.produce(topic, b"%d" % i, on_delivery=reports)
        assert p.flush(30) == 0
    assert [r[0] for r in reports.items] == [None] * 20
    if acks == "0":
        assert {r[3] for r in reports.items} == {-1}
    else:
        assert [r[3] for r in reports.items] == list(range(20))
    assert [m.value() for m in read_back(bootstrap, topic, 20)] == [b"%d" % i for i in range(20)]


def test_idempotent_batches_carry_producer_id_and_sequences(tmp_path: Path) -> None:
    from kgroup.protocol.records import decode_batches

    with run_broker(tmp_path / "data") as b:
        topic = create_topic(b.bootstrap_servers)
        with Producer({"bootstrap.servers": b.bootstrap_servers}) as p:
            assert p._idempotent
            for round_ in range(3):
                for i in range(10):
                    p.produce(topic, b"%d-%d" % (round_, i))
                assert p.flush(30) == 0
        logs = sorted((tmp_path / "data").rglob(f"{topic}-0/*.log"))
        batches = [bt for f in logs for bt in decode_batches(f.read_bytes())]
    assert len(batches) == 3
    assert {bt.producer_id for bt in batches} != {-1}
    assert len({bt.producer_id for bt in batches}) == 1
    assert [bt.base_sequence for bt in batches] == [0, 10, 20]


def test_batches_waiting_for_the_leader_connection_keep_their_order(
    kbroker: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen in the Spark sink under load: a new producer drained batches while its connection
    # to the leader was opening; one drained once it was open went out before those waiting
    # for it, and the broker answered OUT_OF_ORDER_SEQUENCE_NUMBER. Here the callers that
    # wait for a connection another one opens resume 200 ms late, so that the window is wide.
    opening = Cluster.connection

    async def late(self: Cluster, node_id: int) -> Any:
        waited = node_id in self._connecting
        conn = await opening(self, node_id)
        if waited:
            await asyncio.sleep(0.2)
        return conn

    monkeypatch.setattr(Cluster, "connection", late)
    bs = kbroker.bootstrap_servers
    topic = create_topic(bs)
    reports = Reports()
    with Producer({"bootstrap.servers": bs, "linger.ms": 0, "batch.size": 200}) as p:
        assert p._idempotent
        for i in range(100):
            p.produce(topic, b"%03d" % i, on_delivery=reports)
        assert p.flush(30) == 0
    assert [r[0] for r in reports.items if r[0] is not None] == []
    assert [r[5] for r in sorted(reports.items, key=lambda r: r[3])] == [
        b"%03d" % i for i in range(100)
    ]
    assert [m.value() for m in read_back(bs, topic, 100)] == [b"%03d" % i for i in range(100)]


def test_delivery_timeout_when_the_broker_is_gone(tmp_path: Path) -> None:
    proc = BrokerProcess(tmp_path / "data").start()
    try:
        topic = create_topic(proc.bootstrap)
        reports = Reports()
        p = Producer(
            {
                "bootstrap.servers": proc.bootstrap,
                "linger.ms": 0,
                "request.timeout.ms": 500,
                "delivery.timeout.ms": 1500,
                "retry.backoff.ms": 50,
            }
        )
        p.produce(topic, b"first", on_delivery=reports)
        assert p.flush(30) == 0
        proc.stop()
        t0 = time.monotonic()
        for i in range(5):
            p.produce(topic, b"%d" % i, on_delivery=reports)
        assert p.flush(15) == 0
        assert time.monotonic() - t0 < 10
        assert reports.items[0][0] is None
        errs = [r[0] for r in reports.items[1:]]
        assert len(errs) == 5
        assert all(isinstance(e, RequestTimedOut) for e in errs), errs
        p.close(0)
    finally:
        proc.stop()


def test_buffer_error_when_buffer_memory_is_full(kbroker: Broker) -> None:
    topic = create_topic(kbroker.bootstrap_servers)
    with Producer(
        {"bootstrap.servers": kbroker.bootstrap_servers, "buffer.memory": 20000, "linger.ms": 60000}
    ) as p:
        with pytest.raises(BufferError):
            for _ in range(100):
                p.produce(topic, b"x" * 1000)


def test_produce_arrow_equals_a_loop_of_produce(kbroker: Broker) -> None:
    pa = pytest.importorskip("pyarrow")
    bootstrap = kbroker.bootstrap_servers
    a, b = create_topic(bootstrap, 12), create_topic(bootstrap, 12)
    keys = [f"k{i}".encode() for i in range(500)]
    values = [b"value-%d" % i for i in range(500)]
    table = pa.table({"key": pa.array(keys, pa.binary()), "value": pa.array(values, pa.binary())})
    with Producer({"bootstrap.servers": bootstrap}) as p:
        assert p.produce_arrow(a, table) == 500
        for k, v in zip(keys, values, strict=True):
            p.produce(b, v, k)
        assert p.flush(30) == 0

    def layout(topic: str) -> dict[int, list[tuple[bytes, bytes]]]:
        out: dict[int, list[tuple[bytes, bytes]]] = {}
        for m in sorted(
            read_back(bootstrap, topic, 500, 12), key=lambda m: (m.partition(), m.offset())
        ):
            out.setdefault(m.partition(), []).append((m.key(), m.value()))
        return out

    assert layout(a) == layout(b)


def test_appended_counts_rows_per_partition_as_the_log_has_them(kbroker: Broker) -> None:
    # Keyed, null-keyed (the sticky partitioner's choice) and explicit rows: what appended()
    # says per partition is what each partition's log holds after the flush.
    pa = pytest.importorskip("pyarrow")
    bootstrap = kbroker.bootstrap_servers
    topic = create_topic(bootstrap, 6)
    keys = [f"k{i}".encode() if i % 3 else None for i in range(3000)]
    table = pa.table({"key": pa.array(keys, pa.binary()), "value": pa.array([b"v"] * 3000)})
    with Producer({"bootstrap.servers": bootstrap, "batch.size": 2000}) as p:
        assert p.appended(topic) == []
        p.produce_arrow(topic, table)
        p.produce(topic, b"x", partition=5)
        assert p.flush(30) == 0
        counts = p.appended(topic)
    assert sum(counts) == 3001 and len(counts) == 6
    assert sum(1 for n in counts if n) > 1  # the null keys moved between partitions
    got = read_back(bootstrap, topic, 3001, 6)
    per_partition = [0] * 6
    for m in got:
        per_partition[m.partition()] += 1
    assert per_partition == counts


def test_produce_arrow_headers_read_back_by_confluent(bootstrap: str) -> None:
    pa = pytest.importorskip("pyarrow")
    topic = create_topic(bootstrap, 3)
    n = 3000
    headers = [
        None
        if i % 7 == 0
        else [("i", b"%d" % i), ("null", None), ("ключ", b"\x00" * (i % 5))][: i % 4]
        for i in range(n)
    ]
    entry = pa.struct([("key", pa.string()), ("value", pa.binary())])
    table = pa.table(
        {
            "key": pa.array([b"k%d" % i for i in range(n)]),
            "value": pa.array([b"%d" % i for i in range(n)]),
            "headers": pa.array(
                [None if h is None else [{"key": k, "value": v} for k, v in h] for h in headers],
                pa.list_(entry),
            ),
        }
    )
    with Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True}) as p:
        assert p.produce_arrow(topic, table, headers="headers") == n
        assert p.flush(30) == 0
    got = {int(m.value()): m.headers() for m in read_back(bootstrap, topic, n, 3)}
    for i, h in enumerate(headers):
        # confluent gives None for a record without headers, (str, bytes | None) pairs otherwise.
        assert got[i] == (h or None), i


def test_produce_arrow_to_one_partition_and_with_a_configured_callback(kbroker: Broker) -> None:
    # An int partition sends every row there; a producer configured with on_delivery still
    # takes Arrow rows (they have no reports: the callback is never called for them).
    pa = pytest.importorskip("pyarrow")
    bootstrap = kbroker.bootstrap_servers
    topic = create_topic(bootstrap, 4)
    reports = Reports()
    table = pa.table({"key": [f"k{i}" for i in range(200)], "value": [b"v"] * 200})
    with Producer({"bootstrap.servers": bootstrap, "on_delivery": reports}) as p:
        assert p.produce_arrow(topic, table, partition=3) == 200
        assert p.flush(30) == 0
        assert p.appended(topic) == [0, 0, 0, 200]
        assert p.failed_without_report == 0
    assert reports.items == []
    assert {m.partition() for m in read_back(bootstrap, topic, 200, 4)} == {3}


def test_list_topics_and_len(kbroker: Broker) -> None:
    topic = create_topic(kbroker.bootstrap_servers, 3)
    with Producer({"bootstrap.servers": kbroker.bootstrap_servers, "linger.ms": 60000}) as p:
        md = p.list_topics(topic, timeout=10)
        assert sorted(md.topics[topic].partitions) == [0, 1, 2]
        assert md.brokers
        p.produce(topic, b"x", partition=1)
        assert len(p) == 1
        assert p.flush(10) == 0
        assert len(p) == 0


def test_unknown_topic_is_auto_created(kbroker: Broker) -> None:
    topic = f"auto-{uuid.uuid4().hex[:8]}"
    reports = Reports()
    with Producer({"bootstrap.servers": kbroker.bootstrap_servers}) as p:
        p.produce(topic, b"hello", on_delivery=reports)
        assert p.flush(30) == 0
    assert reports.items[0][0] is None and reports.items[0][3] == 0


def test_close_leaves_no_thread(kbroker: Broker) -> None:
    before = len(producer_threads())
    p = Producer({"bootstrap.servers": kbroker.bootstrap_servers})
    assert len(producer_threads()) == before + 1
    p.close()
    assert len(producer_threads()) == before


def test_poll_serves_reports_in_the_calling_thread(kbroker: Broker) -> None:
    topic = create_topic(kbroker.bootstrap_servers)
    seen: list[str] = []
    cb = lambda err, msg: seen.append(threading.current_thread().name)  # noqa: E731
    with Producer({"bootstrap.servers": kbroker.bootstrap_servers, "on_delivery": cb}) as p:
        p.produce(topic, b"x")
        deadline = time.monotonic() + 10
        n = 0
        while n == 0 and time.monotonic() < deadline:
            n = p.poll(0.5)
        assert n == 1
    assert seen == [threading.current_thread().name]
