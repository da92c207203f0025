"""kgroup's clients beside confluent-kafka and kafka-python, against one kgroup broker.

Produce throughput, one record per ``produce()`` call and then ``flush()``, of:

- kgroup's ``Producer.produce`` (its native accumulator),
- confluent-kafka's ``Producer.produce`` (librdkafka; the baseline of each table),
- kafka-python's ``KafkaProducer.send``,
- kgroup's ``Producer.produce_arrow`` (a pyarrow table of the same records, one call).

Same settings for every client: acks=1, linger.ms=5, batch.size=1,000,000 (bytes), no
compression, null keys (each client's default partitioner for them) on a topic of 12
partitions, 1 KB and 100 B values; kgroup's idempotence is off (it needs acks=all). The broker is
kgroup's, with its data on disk, in a process of its own.

Targets: kgroup >= 5x kafka-python; kgroup's produce() within 2x of confluent-kafka's;
produce_arrow faster than confluent-kafka. ``test_summary`` prints messages/s, MB/s and the
ratios.

Run: ``.venv/bin/python -m pytest bench/bench_clients.py -o python_files='bench_*.py' -p
no:cacheprovider --benchmark-only -s``. ``KGROUP_BENCH_CLIENT_SCALE`` (default 1.0) scales the
message counts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bench import servers
from bench.servers import Server

SCALE = float(os.environ.get("KGROUP_BENCH_CLIENT_SCALE", 1.0))
PARTITIONS = 12
SIZES = {"1KB": 1024, "100B": 100}
#: messages per round, per client and size: a few seconds each
FAST = {"1KB": int(200_000 * SCALE), "100B": int(1_000_000 * SCALE)}
SLOW = {"1KB": int(20_000 * SCALE), "100B": int(50_000 * SCALE)}
SETTINGS = {"acks": "1", "linger.ms": 5, "batch.size": 1_000_000}

#: (what, client, size) -> messages/s of the best round
_results: dict[tuple[str, str, str], float] = {}
_busy: dict[tuple[str, str, str], float] = {}


@pytest.fixture(scope="module")
def kgroup_broker() -> Iterator[Server]:
    data = tempfile.mkdtemp(prefix="kgroup-bench-clients-")
    with servers.kgroup(data) as s:
        yield s
    shutil.rmtree(data, ignore_errors=True)


def _topic(server: Server, key: str) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    if key not in server.topics:
        name = f"bench-clients-{key}-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": server.bootstrap})
        admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(30)
        server.topics[key] = name
    return server.topics[key]


def _bench(
    benchmark: Any,
    what: str,
    client: str,
    size: str,
    n: int,
    run: Callable[[], None],
    server: Server | None = None,
) -> None:
    """Time ``run`` (best of 2 rounds); with ``server``, also how busy the broker process was
    (its CPU seconds over the wall time of the rounds: 1.0 is one core all the time)."""
    benchmark.group = f"clients: {what} {size}"
    cpu0, t0 = (server.cpu_seconds() if server else 0.0), time.perf_counter()
    benchmark.pedantic(run, rounds=2, iterations=1, warmup_rounds=0)
    if server is not None:
        _busy[(what, client, size)] = (server.cpu_seconds() - cpu0) / (time.perf_counter() - t0)
    benchmark.extra_info["items"] = n
    benchmark.extra_info["baseline"] = client == "confluent-kafka"
    _results[(what, client, size)] = n / benchmark.stats.stats.min


# -- produce --------------------------------------------------------------------------------------


def _kgroup_producer(server: Server) -> Any:
    from kgroup.client.producer import Producer

    return Producer(
        {
            "bootstrap.servers": server.bootstrap,
            **SETTINGS,
            "buffer.memory": 1 << 30,
            "enable.idempotence": False,
        }
    )


@pytest.mark.parametrize("size", list(SIZES))
def test_produce_kgroup(benchmark, kgroup_broker: Server, size: str) -> None:
    topic, n = _topic(kgroup_broker, size), FAST[size]
    payload = os.urandom(SIZES[size])
    p = _kgroup_producer(kgroup_broker)
    p.produce(topic, payload)
    assert p.flush(30) == 0
    produce, flush = p.produce, p.flush

    def run() -> None:
        for _ in range(n):
            produce(topic, payload)
        assert flush(120) == 0

    try:
        _bench(benchmark, "produce", "kgroup", size, n, run, kgroup_broker)
    finally:
        p.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_produce_arrow_kgroup(benchmark, kgroup_broker: Server, size: str) -> None:
    pa = pytest.importorskip("pyarrow")
    topic, n = _topic(kgroup_broker, size), FAST[size]
    payload = os.urandom(SIZES[size])
    table = pa.table({"value": pa.array([payload] * n, pa.binary())})
    p = _kgroup_producer(kgroup_broker)
    p.produce(topic, payload)
    assert p.flush(30) == 0

    def run() -> None:
        assert p.produce_arrow(topic, table, key=None) == n
        assert p.flush(120) == 0

    try:
        _bench(benchmark, "produce", "kgroup produce_arrow", size, n, run, kgroup_broker)
    finally:
        p.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_produce_confluent(benchmark, kgroup_broker: Server, size: str) -> None:
    from confluent_kafka import Producer

    topic, n = _topic(kgroup_broker, size), FAST[size]
    payload = os.urandom(SIZES[size])
    p = Producer(
        {
            "bootstrap.servers": kgroup_broker.bootstrap,
            **SETTINGS,
            "enable.idempotence": False,
            "queue.buffering.max.kbytes": 1_048_576,
            "queue.buffering.max.messages": 2_000_000,
        }
    )
    p.produce(topic, payload)
    assert p.flush(30) == 0
    produce = p.produce

    def run() -> None:
        for _ in range(n):
            produce(topic, payload)
        assert p.flush(120) == 0

    _bench(benchmark, "produce", "confluent-kafka", size, n, run, kgroup_broker)


@pytest.mark.parametrize("size", list(SIZES))
def test_produce_kafka_python(benchmark, kgroup_broker: Server, size: str) -> None:
    from kafka import KafkaProducer

    topic, n = _topic(kgroup_broker, size), SLOW[size]
    payload = os.urandom(SIZES[size])
    p = KafkaProducer(
        bootstrap_servers=kgroup_broker.bootstrap,
        acks=1,
        linger_ms=SETTINGS["linger.ms"],
        batch_size=SETTINGS["batch.size"],
    )
    p.send(topic, payload).get(30)
    send = p.send

    def run() -> None:
        for _ in range(n):
            send(topic, payload)
        p.flush(120)

    try:
        _bench(benchmark, "produce", "kafka-python", size, n, run, kgroup_broker)
    finally:
        p.close(10)


# -- consume --------------------------------------------------------------------------------------
# The consumer benchmarks go here (another engineer adds them): confluent-kafka's poll(),
# kafka-python's poll(), kgroup's Consumer.poll() and consume_arrow(), reading back what the
# produce benchmarks above wrote (_topic(kgroup_broker, size) holds at least FAST[size] records
# once they ran). Record each with _bench(benchmark, "consume", client, size, n, run) so the
# summary below prints them too.


# -- summary --------------------------------------------------------------------------------------


def test_summary(benchmark) -> None:
    """Print every figure, the ratios and the targets (run last)."""
    benchmark.group = "clients: summary"
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    if not _results:
        pytest.skip("run the whole module for the summary")
    lines = ["", "clients against one kgroup broker: acks=1, linger.ms=5, batch.size=1,000,000"]
    checks: list[tuple[str, bool]] = []
    for what in sorted({w for w, _, _ in _results}):
        for size in SIZES:
            rows = {c: r for (w, c, s), r in _results.items() if w == what and s == size}
            if not rows:
                continue
            base = rows.get("confluent-kafka")
            lines.append(f"  {what} {size}:")
            for client, rate in sorted(rows.items(), key=lambda cr: -cr[1]):
                ratio = f"{rate / base:6.2f}x confluent" if base else ""
                mbs = rate * SIZES[size] / 1e6
                busy = _busy.get((what, client, size))
                cpu = f"  broker {busy:4.2f} cores busy" if busy is not None else ""
                lines.append(f"    {client:<22} {rate:12,.0f} msg/s {mbs:9.1f} MB/s  {ratio}{cpu}")
            kg, ck = rows.get("kgroup"), base
            kp, arrow = rows.get("kafka-python"), rows.get("kgroup produce_arrow")
            if what == "produce" and kg and kp:
                checks.append((f"{size} kgroup >= 5x kafka-python", kg >= 5 * kp))
            if what == "produce" and kg and ck:
                checks.append((f"{size} kgroup within 2x of confluent-kafka", kg >= ck / 2))
            if what == "produce" and arrow and ck:
                checks.append((f"{size} produce_arrow faster than confluent-kafka", arrow > ck))
    for what, ok in checks:
        lines.append(f"  target: {what:<46} {'met' if ok else 'MISSED'}")
    print("\n".join(lines))
