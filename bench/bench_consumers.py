"""Consumers side by side on one kgroup broker: kgroup's Consumer (poll() one message at a time,
and consume_arrow), confluent-kafka's (librdkafka, C) and kafka-python's, in one run.

Each topic is filled once (12 partitions) by confluent-kafka's producer, with 1 KB and with
100 B values; then every client reads all of it from offset 0 in assign mode, one fresh consumer
per round, timed from assign() to the last message. poll() is called once per message (the
loop every confluent-kafka user writes); kafka-python iterates its consumer (its own
one-at-a-time API); consume_arrow reads up to 100,000 records a call. Settings are the same for
all: fetch.max.bytes 50 MiB, max.partition.fetch.bytes 1 MiB, fetch.min.bytes 1, no group
commits. librdkafka's ``fetch.queue.backoff.ms`` is 10 ms instead of its 1 s default, which
otherwise makes its figure swing between rounds (its queue fills and the fetcher sleeps a
second).

Targets (issue 12): kgroup's poll() at least 5x kafka-python and within 2x of confluent-kafka;
consume_arrow faster than confluent-kafka. Measured earlier against tansu: confluent-kafka polled
256,000 (1 KB) and 193,000 (100 B) messages/s; kafka-python consumed 5,500 and 36,000.

Run: ``.venv/bin/python -m pytest bench/bench_consumers.py -o python_files='bench_*.py'
-p no:cacheprovider --benchmark-only -s``. ``KGROUP_BENCH_CONSUME_MESSAGES`` (default 300,000)
sets the messages read per round (kafka-python reads a tenth of them).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator

import pytest

from bench import servers
from bench.servers import Server

MESSAGES = int(os.environ.get("KGROUP_BENCH_CONSUME_MESSAGES", 300_000))
PARTITIONS = 12
SIZES = (1024, 100)
FETCH = {
    "fetch.max.bytes": 52_428_800,
    "max.partition.fetch.bytes": 1_048_576,
    "fetch.min.bytes": 1,
}

_results: dict[tuple[str, int], float] = {}


@pytest.fixture(scope="module")
def broker() -> Iterator[Server]:
    data = tempfile.mkdtemp(prefix="kgroup-bench-consumers-")
    with servers.kgroup(data) as s:
        yield s
    shutil.rmtree(data, ignore_errors=True)


def _filled(server: Server, size: int) -> str:
    """A topic holding MESSAGES values of ``size`` bytes, spread over the partitions."""
    key = f"consume-{size}"
    if key in server.topics:
        return server.topics[key]
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"bench-{key}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": server.bootstrap})  # alive until result()
    admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(30)
    p = Producer(
        {
            "bootstrap.servers": server.bootstrap,
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    value = os.urandom(size)
    for i in range(MESSAGES):
        while True:
            try:
                p.produce(name, value, key=str(i).encode(), partition=i % PARTITIONS)
                break
            except BufferError:
                p.poll(0.01)
    assert p.flush(120) == 0
    server.topics[key] = name
    return name


def _confluent(server: Server, topic: str, n: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": server.bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.queue.backoff.ms": 10,
            **FETCH,
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    got = 0
    poll = c.poll
    while got < n:
        m = poll(1.0)
        if m is not None and m.error() is None:
            got += 1
    c.close()


def _kafka_python(server: Server, topic: str, n: int) -> None:
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(
        bootstrap_servers=server.bootstrap,
        enable_auto_commit=False,
        fetch_max_bytes=FETCH["fetch.max.bytes"],
        max_partition_fetch_bytes=FETCH["max.partition.fetch.bytes"],
        fetch_min_bytes=1,
        consumer_timeout_ms=10_000,
    )
    parts = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    c.assign(parts)
    c.seek_to_beginning(*parts)
    got = 0
    for _ in c:
        got += 1
        if got >= n:
            break
    c.close()


def _kgroup_consumer(server: Server, topic: str):
    from kgroup import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": server.bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            **FETCH,
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    return c


def _kgroup_poll(server: Server, topic: str, n: int) -> None:
    c = _kgroup_consumer(server, topic)
    got = 0
    poll = c.poll
    while got < n:
        m = poll(1.0)
        if m is not None and m.error() is None:
            got += 1
    c.close()


def _kgroup_arrow(server: Server, topic: str, n: int) -> None:
    c = _kgroup_consumer(server, topic)
    got = 0
    while got < n:
        got += c.consume_arrow(100_000, 1.0).num_rows
    c.close()


CLIENTS = {
    "confluent-kafka poll()": (_confluent, 1),
    "kafka-python": (_kafka_python, 10),
    "kgroup poll()": (_kgroup_poll, 1),
    "kgroup consume_arrow": (_kgroup_arrow, 1),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s}B")
@pytest.mark.parametrize("client", list(CLIENTS))
def test_consume(benchmark, broker: Server, client: str, size: int) -> None:
    fn, divisor = CLIENTS[client]
    n = MESSAGES // divisor
    topic = _filled(broker, size)
    benchmark.group = f"consume {size} B values, messages/s"
    benchmark.extra_info["items"] = n
    benchmark.extra_info["baseline"] = client.startswith("confluent")
    rounds = 1 if client == "kafka-python" else 3
    benchmark.pedantic(lambda: fn(broker, topic, n), rounds=rounds, iterations=1, warmup_rounds=0)
    _results[(client, size)] = n / benchmark.stats.stats.min


def test_summary(benchmark) -> None:
    """Print every figure with its ratios (run last)."""
    benchmark.group = "consume: summary"
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    if not _results:
        pytest.skip("run the whole module for the summary")
    lines = ["", "consumers on kgroup's broker: messages/s, MB/s, ratios"]
    for size in SIZES:
        base = _results.get(("confluent-kafka poll()", size), float("nan"))
        kp = _results.get(("kafka-python", size), float("nan"))
        for client in CLIENTS:
            r = _results.get((client, size))
            if r is None:
                continue
            lines.append(
                f"  {size:>5} B  {client:<24} {r:12,.0f} msg/s {r * size / 1e6:8.1f} MB/s"
                f"   x{r / base:5.2f} confluent   x{r / kp:6.1f} kafka-python"
            )
    print("\n".join(lines))
