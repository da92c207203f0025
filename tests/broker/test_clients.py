"""Real clients, unchanged, against kgroup's broker in assign mode (no groups): confluent-kafka
(librdkafka), kafka-python and aiokafka produce with every compression type, keys, headers,
null values and idempotence, and read every record back with the offset the producer was told,
and the same key, value, headers and timestamp.

Fetch takes one of three paths, and each is tested: ``inline`` (every partition's records read
straight into the response: kgroup.fetch.sendfile.min.bytes at its largest), ``sendfile`` (every
partition's records sent from the segment file with sendfile: min.bytes 0) and ``copy``
(kgroup.fetch.sendfile false: read into memory, then written). The default broker takes the
first two by size."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from support.kgroup_broker import run_broker

from kgroup.broker import Broker

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CLIENTS = ["confluent-kafka", "kafka-python", "aiokafka"]
PATHS = {
    "inline": {"kgroup.fetch.sendfile.min.bytes": 2**31 - 1},
    "sendfile": {"kgroup.fetch.sendfile.min.bytes": 0},
    "copy": {"kgroup.fetch.sendfile": False},
}


@pytest.fixture(scope="module", params=list(PATHS))
def path_broker(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[Broker]:
    """A broker whose Fetch takes the path named by the parameter."""
    with run_broker(tmp_path_factory.mktemp(request.param), PATHS[request.param]) as b:
        yield b


def check_path(b: Broker, before: tuple[int, int]) -> None:
    """The Fetch path b's configuration names was taken since ``before`` (its send stats)."""
    assert b.state is not None
    stats = b.state.send_stats
    calls, sent = stats.sendfile_calls - before[0], stats.sendfile_bytes - before[1]
    if b.config.get("kgroup.fetch.sendfile") and b.config.get("kgroup.fetch.sendfile.min.bytes"):
        assert calls == 0  # inlined
    elif b.config.get("kgroup.fetch.sendfile"):
        assert calls > 0 and sent > 0
    else:
        assert calls == 0


def stats_of(b: Broker) -> tuple[int, int]:
    assert b.state is not None
    return b.state.send_stats.sendfile_calls, b.state.send_stats.sendfile_bytes


@dataclass(frozen=True)
class Rec:
    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


def records(n: int, partitions: int, seed: int, big: bool = False) -> list[Rec]:
    rng = random.Random(seed)
    out = []
    base = 1_700_000_000_000
    for i in range(n):
        key = None if i % 7 == 3 else f"key-{rng.randrange(1000)}".encode()
        # A null value (a tombstone) needs a key: kafka-python refuses a record with neither.
        value = None if i % 11 == 5 and key is not None else rng.randbytes(rng.randrange(0, 2000))
        if big and i == 1:
            value = b"x" * 1_000_000  # 1 MB: what max.message.bytes allows by default
        headers = tuple((f"h{j}", rng.randbytes(3)) for j in range(i % 3))
        out.append(Rec(i % partitions, key, value, headers, base + i))
    return out


# -- confluent-kafka -----------------------------------------------------------------------


def ck_produce(bootstrap: str, topic: str, recs: list[Rec], codec: str) -> list[int]:
    from confluent_kafka import Producer

    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "compression.type": codec,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            "message.max.bytes": 2_000_000,
        }
    )
    offsets: list[int] = [-1] * len(recs)
    failures: list[str] = []

    def done(i: int):
        def cb(err, msg):
            if err is not None:
                failures.append(str(err))
            else:
                offsets[i] = msg.offset()

        return cb

    for i, r in enumerate(recs):
        p.produce(
            topic,
            value=r.value,
            key=r.key,
            partition=r.partition,
            timestamp=r.timestamp,
            headers=list(r.headers) or None,
            on_delivery=done(i),
        )
        p.poll(0)
    assert p.flush(60) == 0
    assert not failures, failures
    return offsets


def ck_consume(bootstrap: str, topic: str, partitions: int, n: int) -> list[tuple]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"unused-{uuid.uuid4()}",
            "enable.auto.commit": False,
            "fetch.max.bytes": 50_000_000,
            "max.partition.fetch.bytes": 2_000_000,
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[tuple] = []
    try:
        for _ in range(600):
            for m in c.consume(1000, 0.2):
                assert m.error() is None, m.error()
                hs = tuple(m.headers() or ())
                out.append((m.partition(), m.offset(), m.key(), m.value(), hs, m.timestamp()[1]))
            if len(out) >= n:
                break
    finally:
        c.close()
    return out


# -- kafka-python ---------------------------------------------------------------------------


def kp_produce(bootstrap: str, topic: str, recs: list[Rec], codec: str) -> list[int]:
    from kafka import KafkaProducer

    p = KafkaProducer(
        bootstrap_servers=bootstrap,
        compression_type=None if codec == "none" else codec,
        enable_idempotence=True,
        acks="all",
        max_request_size=2_000_000,
    )
    try:
        futures = [
            p.send(
                topic,
                value=r.value,
                key=r.key,
                partition=r.partition,
                timestamp_ms=r.timestamp,
                headers=list(r.headers),
            )
            for r in recs
        ]
        p.flush(60)
        return [f.get(30).offset for f in futures]
    finally:
        p.close(10)


def kp_consume(bootstrap: str, topic: str, partitions: int, n: int) -> list[tuple]:
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        max_partition_fetch_bytes=2_000_000,
        fetch_max_bytes=50_000_000,
    )
    c.assign([TopicPartition(topic, p) for p in range(partitions)])
    c.seek_to_beginning()
    out: list[tuple] = []
    try:
        for _ in range(600):
            for msgs in c.poll(200).values():
                for m in msgs:
                    hs = tuple(m.headers or ())
                    out.append((m.partition, m.offset, m.key, m.value, hs, m.timestamp))
            if len(out) >= n:
                break
    finally:
        c.close()
    return out


# -- aiokafka -------------------------------------------------------------------------------


def ak_produce(bootstrap: str, topic: str, recs: list[Rec], codec: str) -> list[int]:
    from aiokafka import AIOKafkaProducer

    async def run() -> list[int]:
        p = AIOKafkaProducer(
            bootstrap_servers=bootstrap,
            compression_type=None if codec == "none" else codec,
            enable_idempotence=True,
            acks="all",
            max_request_size=2_000_000,
        )
        await p.start()
        try:
            futs = [
                await p.send(
                    topic,
                    value=r.value,
                    key=r.key,
                    partition=r.partition,
                    timestamp_ms=r.timestamp,
                    headers=list(r.headers),
                )
                for r in recs
            ]
            return [(await f).offset for f in futs]
        finally:
            await p.stop()

    return asyncio.run(run())


def ak_consume(bootstrap: str, topic: str, partitions: int, n: int) -> list[tuple]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> list[tuple]:
        c = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            enable_auto_commit=False,
            max_partition_fetch_bytes=2_000_000,
            fetch_max_bytes=50_000_000,
        )
        await c.start()
        try:
            c.assign([TopicPartition(topic, p) for p in range(partitions)])
            await c.seek_to_beginning()
            out: list[tuple] = []
            for _ in range(600):
                batches = await c.getmany(timeout_ms=200)
                for msgs in batches.values():
                    for m in msgs:
                        hs = tuple(m.headers or ())
                        out.append((m.partition, m.offset, m.key, m.value, hs, m.timestamp))
                if len(out) >= n:
                    break
            return out
        finally:
            await c.stop()

    return asyncio.run(run())


PRODUCE = {"confluent-kafka": ck_produce, "kafka-python": kp_produce, "aiokafka": ak_produce}
CONSUME = {"confluent-kafka": ck_consume, "kafka-python": kp_consume, "aiokafka": ak_consume}


def create_topic(bootstrap: str, partitions: int) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"clients-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


def check_round_trip(
    bootstrap: str, producer: str, consumer: str, codec: str, partitions: int, n: int, big: bool
) -> None:
    topic = create_topic(bootstrap, partitions)
    recs = records(n, partitions, seed=hash((producer, codec)) & 0xFFFF, big=big)
    offsets = PRODUCE[producer](bootstrap, topic, recs, codec)
    got = CONSUME[consumer](bootstrap, topic, partitions, n)
    expected = {
        (r.partition, off): (r.key, r.value, r.headers, r.timestamp)
        for r, off in zip(recs, offsets, strict=True)
    }
    seen = {(p, o): (k, v, h, ts) for p, o, k, v, h, ts in got}
    assert len(got) == len(seen) == n, "a record came back twice or not at all"
    assert seen == expected
    # Offsets are continuous from 0 in every partition.
    for p in range(partitions):
        offs = sorted(o for q, o in seen if q == p)
        assert offs == list(range(len(offs)))


@pytest.mark.network
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_round_trips_each_codec(path_broker: Broker, client: str, codec: str) -> None:
    before = stats_of(path_broker)
    check_round_trip(path_broker.bootstrap_servers, client, client, codec, 4, 300, big=False)
    check_path(path_broker, before)


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize(
    ("producer", "consumer"),
    [
        ("confluent-kafka", "kafka-python"),
        ("kafka-python", "aiokafka"),
        ("aiokafka", "confluent-kafka"),
    ],
)
def test_100_partitions_1mb_messages_across_clients(
    path_broker: Broker, producer: str, consumer: str
) -> None:
    before = stats_of(path_broker)
    check_round_trip(path_broker.bootstrap_servers, producer, consumer, "lz4", 100, 500, big=True)
    check_path(path_broker, before)


# -- clients speaking the protocol of Kafka 0.9 and 0.10 ----------------------------------

LEGACY = {
    # (Produce version, message format): kafka-python by api_version, librdkafka by fallback
    "kafka-python 0.9 (Produce v1, Fetch v1, magic 0)": ("kafka-python", (0, 9)),
    "kafka-python 0.10.1 (Produce v2, Fetch v3, magic 1)": ("kafka-python", (0, 10, 1)),
    "confluent-kafka 0.9.0 (Produce v1, Fetch v1, magic 0)": ("confluent-kafka", "0.9.0"),
    "confluent-kafka 0.10.0 (Produce v2, Fetch v2, magic 1)": ("confluent-kafka", "0.10.0"),
}


def _legacy_produce(client: str, version, bootstrap: str, topic: str, recs: list[Rec]) -> None:
    if client == "kafka-python":
        from kafka import KafkaProducer

        p = KafkaProducer(bootstrap_servers=bootstrap, api_version=version, acks=1)
        futures = [
            p.send(topic, r.value, r.key, partition=r.partition, timestamp_ms=r.timestamp)
            for r in recs
        ]
        p.flush(30)
        for f in futures:
            f.get(30)
        p.close(10)
        return
    from confluent_kafka import Producer

    conf = {"bootstrap.servers": bootstrap, "api.version.request": False}
    conf["broker.version.fallback"] = version
    cp = Producer(conf)
    failed = []
    for r in recs:
        cp.produce(
            topic,
            r.value,
            r.key,
            partition=r.partition,
            timestamp=r.timestamp,
            on_delivery=lambda err, _m: err and failed.append(err),
        )
    assert cp.flush(30) == 0 and not failed, failed


def _legacy_consume(client: str, version, bootstrap: str, topic: str, n: int) -> list[tuple]:
    out: list[tuple] = []
    if client == "kafka-python":
        from kafka import KafkaConsumer, TopicPartition

        c = KafkaConsumer(bootstrap_servers=bootstrap, api_version=version)
        c.assign([TopicPartition(topic, p) for p in range(2)])
        c.seek_to_beginning()
        for _ in range(300):
            for msgs in c.poll(200).values():
                # kafka-python says None where magic 0 has no timestamp; librdkafka -1
                out += [
                    (
                        m.partition,
                        m.offset,
                        m.key,
                        m.value,
                        -1 if m.timestamp is None else m.timestamp,
                    )
                    for m in msgs
                ]
            if len(out) >= n:
                break
        c.close()
        return out
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as TP

    conf = {"bootstrap.servers": bootstrap, "group.id": "legacy", "enable.auto.commit": False}
    conf.update({"api.version.request": False, "broker.version.fallback": version})
    cc = Consumer(conf)
    cc.assign([TP(topic, p, 0) for p in range(2)])
    for _ in range(100):
        for m in cc.consume(1000, 0.2):
            assert m.error() is None, m.error()
            kind, ts = m.timestamp()  # TIMESTAMP_NOT_AVAILABLE (magic 0) comes with 0
            out.append((m.partition(), m.offset(), m.key(), m.value(), ts if kind else -1))
        if len(out) >= n:
            break
    cc.close()
    return out


@pytest.mark.network
@pytest.mark.parametrize("legacy", LEGACY)
def test_old_protocol_clients_produce_and_fetch_legacy_message_formats(
    broker: Broker, legacy: str
) -> None:
    """Produce v0-2 carry magic 0 and 1 message sets, which the broker converts to batches of
    magic 2; Fetch v0-3 get them back down-converted, as Kafka 3.9 does both. A modern client
    reads what an old one wrote, and an old one what a modern one wrote (headers dropped)."""
    client, version = LEGACY[legacy]
    magic0 = "magic 0" in legacy
    recs = [r for r in records(60, 2, seed=7) if r.value is not None or r.key is not None]
    recs = [Rec(r.partition, r.key, r.value, (), r.timestamp) for r in recs]
    old = create_topic(broker.bootstrap_servers, 2)
    _legacy_produce(client, version, broker.bootstrap_servers, old, recs)
    by_partition: dict[int, list[Rec]] = {0: [], 1: []}
    for r in recs:
        by_partition[r.partition].append(r)
    expected = {
        (p, i): (r.key, r.value, -1 if magic0 else r.timestamp)
        for p, rs in by_partition.items()
        for i, r in enumerate(rs)
    }
    modern = {
        (p, o): (k, v, ts)
        for p, o, k, v, _h, ts in ck_consume(broker.bootstrap_servers, old, 2, len(recs))
    }
    assert modern == expected
    legacy_read = {
        (p, o): (k, v, ts)
        for p, o, k, v, ts in _legacy_consume(
            client, version, broker.bootstrap_servers, old, len(recs)
        )
    }
    assert legacy_read == expected

    # what a modern producer wrote, with headers, read by the old client
    new = create_topic(broker.bootstrap_servers, 2)
    full = records(40, 2, seed=8)
    offsets = ck_produce(broker.bootstrap_servers, new, full, "lz4")
    got = {
        (p, o): (k, v, ts)
        for p, o, k, v, ts in _legacy_consume(
            client, version, broker.bootstrap_servers, new, len(full)
        )
    }
    assert got == {
        (r.partition, off): (r.key, r.value, -1 if magic0 else r.timestamp)
        for r, off in zip(full, offsets, strict=True)
    }
