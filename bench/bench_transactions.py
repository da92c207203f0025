"""Transactions: kgroup's broker beside Apache Kafka 4.4, with the same confluent-kafka client
and settings, in one run (each broker a process of its own on 127.0.0.1, its data on disk:
bench/servers.py).

- commit latency: a transaction of one 1 KB message (begin, produce, commit), one after the
  other: p50 and p99 of the wall time per transaction. Each is AddPartitionsToTxn, Produce,
  EndTxn and, on the broker, PrepareCommit, the marker and CompleteCommit;
- transactional produce throughput: ``KGROUP_BENCH_TXN_MESSAGES`` (200,000) 1 KB messages over
  12 partitions in transactions of ``KGROUP_BENCH_TXN_SIZE`` (10,000); MB/s from the first
  produce() to the last commit;
- read_committed consume throughput: the same messages read back by one read_committed
  consumer in assign mode (the markers skipped, the aborted transactions' list empty); MB/s;
- and the broker's cores meanwhile (its CPU seconds over the wall time).

Run::

    .venv/bin/python -m pytest bench/bench_transactions.py -o python_files='bench_*.py' \\
        -p no:cacheprovider --benchmark-only

The summary prints the figures side by side with kgroup's ratio to Kafka (above 1x: kgroup is
ahead) and the load average they were taken at.
"""

from __future__ import annotations

import os
import statistics
import time
import uuid
from collections.abc import Iterator

import pytest

from bench import servers
from bench.report import side_by_side, summary
from bench.servers import Server

MESSAGES = int(os.environ.get("KGROUP_BENCH_TXN_MESSAGES", 200_000))
TXN_SIZE = int(os.environ.get("KGROUP_BENCH_TXN_SIZE", 10_000))
COMMITS = int(os.environ.get("KGROUP_BENCH_TXN_COMMITS", 500))
ROUNDS = int(os.environ.get("KGROUP_BENCH_TXN_ROUNDS", 3))
PARTITIONS = 12
SIZE = 1024
GROUP = "transactions"

_results: dict[str, dict[str, float]] = {}


@pytest.fixture(scope="module", params=["kgroup", "kafka"])
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    with servers.start(request.param) as s:
        yield s


def _record(server: Server, what: str, value: float) -> None:
    _results.setdefault(server.name, {})[what] = value


def _topic(server: Server, key: str) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    if key not in server.topics:
        name = f"bench-txn-{key}-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": server.bootstrap})
        admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(30)
        time.sleep(1)  # Kafka's controller and log dirs settle
        server.topics[key] = name
    return server.topics[key]


def _producer(server: Server, txn: str):
    from confluent_kafka import Producer

    p = Producer(
        {
            "bootstrap.servers": server.bootstrap,
            "transactional.id": txn,
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    p.init_transactions(60)
    return p


def test_commit_latency(benchmark, server: Server) -> None:
    benchmark.group = f"{GROUP}: commit one 1 KB message, {COMMITS} transactions"
    topic = _topic(server, "latency")
    p = _producer(server, f"latency-{uuid.uuid4().hex[:6]}")
    payload = os.urandom(SIZE)
    times: list[float] = []

    def run() -> None:
        times.clear()
        for i in range(COMMITS):
            started = time.perf_counter()
            p.begin_transaction()
            p.produce(topic, payload, partition=i % PARTITIONS)
            p.commit_transaction(30)
            times.append(time.perf_counter() - started)

    benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=1)
    times.sort()
    _record(server, "commit p50 ms", times[len(times) // 2] * 1000)
    _record(server, "commit p99 ms", times[int(len(times) * 0.99)] * 1000)


def test_transactional_produce_throughput(benchmark, server: Server) -> None:
    benchmark.group = f"{GROUP}: produce {MESSAGES:,} x 1 KB in transactions of {TXN_SIZE:,}"
    topic = _topic(server, "throughput")
    p = _producer(server, f"throughput-{uuid.uuid4().hex[:6]}")
    payload = os.urandom(SIZE)
    walls: list[float] = []
    cores: list[float] = []

    def run() -> None:
        cpu, started = server.cpu_seconds(), time.perf_counter()
        for start in range(0, MESSAGES, TXN_SIZE):
            p.begin_transaction()
            for i in range(start, min(start + TXN_SIZE, MESSAGES)):
                while True:
                    try:
                        p.produce(topic, payload, partition=i % PARTITIONS)
                        break
                    except BufferError:
                        p.poll(0.01)
            p.commit_transaction(60)
        walls.append(time.perf_counter() - started)
        cores.append((server.cpu_seconds() - cpu) / walls[-1])

    benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    benchmark.extra_info["items"] = MESSAGES * SIZE
    _record(server, "transactional produce MB/s", MESSAGES * SIZE / 1e6 / min(walls))
    _record(server, "transactional produce: broker cores", statistics.median(cores))


def test_read_committed_throughput(benchmark, server: Server) -> None:
    from confluent_kafka import Consumer, TopicPartition

    benchmark.group = f"{GROUP}: read_committed consume {MESSAGES:,} x 1 KB"
    topic = _topic(server, "throughput")
    # The transactions test_transactional_produce_throughput committed (it runs first).
    walls: list[float] = []
    cores: list[float] = []

    def run() -> None:
        c = Consumer(
            {
                "bootstrap.servers": server.bootstrap,
                "group.id": f"bench-{uuid.uuid4().hex[:6]}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "fetch.max.bytes": 52_428_800,
            }
        )
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        cpu, started = server.cpu_seconds(), time.perf_counter()
        got = 0
        deadline = time.monotonic() + 120
        while got < MESSAGES and time.monotonic() < deadline:
            for m in c.consume(10_000, 1.0):
                if m.error() is None:
                    got += 1
        walls.append(time.perf_counter() - started)
        cores.append((server.cpu_seconds() - cpu) / walls[-1])
        c.close()
        assert got >= MESSAGES

    benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    benchmark.extra_info["items"] = MESSAGES * SIZE
    _record(server, "read_committed consume MB/s", MESSAGES * SIZE / 1e6 / min(walls))
    _record(server, "read_committed consume: broker cores", statistics.median(cores))


def _lower_is_better(what: str) -> bool:
    return what.endswith(" ms")


def _compared(what: str) -> bool:
    return "cores" not in what


@summary("transactions: kgroup (disk) vs Apache Kafka 4.4 (disk), confluent-kafka")
def _summary() -> list[str]:
    if not _results:
        return []
    return [
        f"{COMMITS} one-message transactions; {MESSAGES:,} x 1 KB in transactions of "
        f"{TXN_SIZE:,} (best of {ROUNDS}); MB/s: higher is better, ms: lower",
        *side_by_side(_results, _lower_is_better, _compared, names=["kgroup", "kafka"]),
    ]
