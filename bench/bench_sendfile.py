"""Fetch with sendfile beside Fetch copying, on uvloop and on asyncio's loop, in one run.

kgroup brokers run at once as processes of their own on 127.0.0.1, each on its own copy of the
same data, one per way of answering a Fetch:

- ``copy``: kgroup.fetch.sendfile=false, records read into memory, then copied into the response
  (the path before sendfile);
- ``inline``: every partition's records read straight into the response (min.bytes at its
  largest): one copy fewer, no sendfile;
- ``sendfile``: the default: partitions' records of at least kgroup.fetch.sendfile.min.bytes
  sent from the segment file with sendfile, smaller ones inlined;
- ``sendfile all``: min.bytes 0, every partition's records sent with sendfile (what the
  threshold is measured against);

on uvloop, and copy and sendfile on asyncio's loop. One confluent-kafka consumer in assign mode
reads every message of a 12-partition topic back from each (fetch.max.bytes 50 MB), in turn,
round after round, so that whatever else the machine does falls on all alike; the consumer
sets fetch.queue.backoff.ms 10 (see CONSUMER_EXTRA). Workloads:

- ``1 MB fetches``: 300,000 x 1 KB messages produced in batches of up to 1 MB (librdkafka's
  batch.size), max.partition.fetch.bytes 1 MB (its default): a fetch carries up to 12 MB;
- ``128 KB fetches``, ``64 KB fetches`` and ``16 KB fetches``: 300,000 x 1 KB messages
  produced in batches of about 4 KB, max.partition.fetch.bytes 128, 64 or 16 KB: every
  partition answers with about that much (the threshold is measured here);
- ``lz4 topic``: 300,000 x 1 KB compressible messages produced with lz4 (about a third of the
  bytes on disk and on the wire), 1 MB fetches.

Each figure is MB/s of message bytes (the best round, and the median), and the broker's CPU
seconds for a round (user + system, from /proc, the median): the consumer and the broker share
this machine's cores, so where the consumer is the bottleneck the broker's CPU shows what a path
saves. Ratios are to ``uvloop copy``. A summary prints at the end.

Run: ``.venv/bin/python -m pytest bench/bench_sendfile.py -o python_files='bench_*.py'
--benchmark-only -s``. ``KGROUP_BENCH_SENDFILE_MESSAGES`` (default 300,000) sets the messages,
``KGROUP_BENCH_SENDFILE_ROUNDS`` (default 5) the rounds; ``KGROUP_BENCH_SENDFILE_VARIANTS``
(comma-separated names) picks variants, and ``KGROUP_BENCH_SENDFILE_EXTRA`` adds one more
(``name=key:value;key:value``, ``loop:asyncio`` for the loop), e.g.
``min 32k=kgroup.fetch.sendfile.min.bytes:32768``; ``KGROUP_BENCH_SENDFILE_VERBOSE=1`` prints
every round.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator

import pytest

from bench import servers as bench_servers
from bench.servers import Server
from kgroup.broker.config import SENDFILE_MIN_BYTES

MESSAGES = int(os.environ.get("KGROUP_BENCH_SENDFILE_MESSAGES", 300_000))
ROUNDS = int(os.environ.get("KGROUP_BENCH_SENDFILE_ROUNDS", 5))
SIZE = 1024
PARTITIONS = 12
GROUP = "sendfile"
BASELINE = "uvloop copy"

#: VARIANTS: name -> (event loop, broker config).
VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "uvloop copy": ("uvloop", {"kgroup.fetch.sendfile": "false"}),
    "uvloop inline": ("uvloop", {"kgroup.fetch.sendfile.min.bytes": str(2**31 - 1)}),
    "uvloop sendfile": ("uvloop", {}),
    "uvloop sendfile all": ("uvloop", {"kgroup.fetch.sendfile.min.bytes": "0"}),
    "asyncio copy": ("asyncio", {"kgroup.fetch.sendfile": "false"}),
    "asyncio sendfile": ("asyncio", {}),
}


def _variants() -> dict[str, tuple[str, dict[str, str]]]:
    out = dict(VARIANTS)
    picked = os.environ.get("KGROUP_BENCH_SENDFILE_VARIANTS")
    if picked:
        out = {k: v for k, v in out.items() if k in picked.split(",")}
    extra = os.environ.get("KGROUP_BENCH_SENDFILE_EXTRA")
    if extra:
        name, _, spec = extra.partition("=")
        conf = dict(kv.split(":", 1) for kv in spec.split(";") if kv)
        out[name] = (conf.pop("loop", "uvloop"), conf)
    return out


#: WORKLOADS: name -> (topic, consumer settings).
WORKLOADS: dict[str, tuple[str, dict[str, int]]] = {
    "1 MB fetches": ("plain", {"max.partition.fetch.bytes": 1_048_576}),
    "128 KB fetches": ("small", {"max.partition.fetch.bytes": 131_072}),
    "64 KB fetches": ("small", {"max.partition.fetch.bytes": 65_536}),
    "16 KB fetches": ("small", {"max.partition.fetch.bytes": 16_384}),
    "lz4 topic": ("lz4", {"max.partition.fetch.bytes": 1_048_576}),
}

#: CONSUMER_EXTRA: librdkafka postpones a partition's next fetch by fetch.queue.backoff.ms
#: (1 s by default) once its local queue holds queued.max.messages.kbytes (64 MB): a broker
#: that answers 12 MB fetches fast fills it, and a round then takes 0.5 s or 1.5 to 3 s by
#: whether a backoff struck (measured: 98 to 936 MB/s for one broker). 10 ms keeps the rounds
#: about the broker. KGROUP_BENCH_SENDFILE_CONSUMER (key=value,...) overrides or adds settings.
CONSUMER_EXTRA = {"fetch.queue.backoff.ms": "10"} | dict(
    kv.split("=", 1) for kv in os.environ.get("KGROUP_BENCH_SENDFILE_CONSUMER", "").split(",") if kv
)

_results: dict[str, dict[str, tuple[float, float, float]]] = {}


@contextlib.contextmanager
def _broker(name: str, data: str, loop: str, config: dict[str, str]) -> Iterator[Server]:
    with bench_servers.kgroup(data, config, event_loop=loop, name=name) as s:
        yield s


def _produce(bootstrap: str, topic: str, compression: str, batch_size: int = 1_000_000) -> None:
    from confluent_kafka import Producer

    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "1",
            "linger.ms": 5,
            "batch.size": batch_size,
            "compression.type": compression,
            "queue.buffering.max.kbytes": 1_048_576,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    random_payload = os.urandom(SIZE)
    # Compressible: a quarter random, the rest text (lz4 keeps about a third).
    text = (b"the quick brown fox jumps over the lazy dog " * 20)[: SIZE - 256]
    for i in range(MESSAGES):
        value = random_payload if compression == "none" else os.urandom(256) + text
        while True:
            try:
                p.produce(topic, value, partition=i % PARTITIONS)
                break
            except BufferError:
                p.poll(0.001)
    assert p.flush(120) == 0


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Server]]:
    """The brokers, each on its own copy of the same data: random 1 KB messages in large
    batches and in 4 KB ones, and compressible ones produced with lz4."""
    from confluent_kafka.admin import AdminClient, NewTopic

    root = tempfile.mkdtemp(prefix="kgroup-bench-sendfile-")
    try:
        template = os.path.join(root, "template")
        topics = {k: f"{k}-{uuid.uuid4().hex[:6]}" for k in ("plain", "small", "lz4")}
        with _broker("template", template, "uvloop", {}) as s:
            admin = AdminClient({"bootstrap.servers": s.bootstrap})
            for name in topics.values():
                admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(30)
            _produce(s.bootstrap, topics["plain"], "none")
            _produce(s.bootstrap, topics["small"], "none", batch_size=4096)
            _produce(s.bootstrap, topics["lz4"], "lz4")
        with contextlib.ExitStack() as stack:
            out = {}
            for name, (loop, config) in _variants().items():
                data = os.path.join(root, name.replace(" ", "-"))
                shutil.copytree(template, data)
                out[name] = stack.enter_context(_broker(name, data, loop, config))
                out[name].topics = topics
            yield out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _consume(server: Server, topic: str, settings: dict[str, int]) -> float:
    """Read every message of ``topic`` back; the seconds it took."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": server.bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.max.bytes": 52_428_800,
            **CONSUMER_EXTRA,
            **settings,
        }
    )
    started = time.perf_counter()
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    n = 0
    while n < MESSAGES:
        for m in c.consume(10_000, 1.0):
            if m.error() is None:
                n += 1
    took = time.perf_counter() - started
    c.close()
    return took


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_consume(benchmark, servers: dict[str, Server], workload: str) -> None:
    benchmark.group = f"{GROUP}: consume {MESSAGES:,} x 1 KB, {workload}"
    topic_key, settings = WORKLOADS[workload]
    times: dict[str, list[float]] = {name: [] for name in servers}
    cpu: dict[str, list[float]] = {name: [] for name in servers}

    def run() -> None:
        for s in servers.values():  # a warm-up round: connections, page cache
            _consume(s, s.topics[topic_key], settings)
        for _ in range(ROUNDS):
            for name, s in servers.items():
                before = s.cpu_seconds()
                times[name].append(_consume(s, s.topics[topic_key], settings))
                cpu[name].append(s.cpu_seconds() - before)

    benchmark.pedantic(run, rounds=1, iterations=1)
    mb = MESSAGES * SIZE / 1e6
    _results[workload] = {
        name: (mb / min(t), mb / statistics.median(t), statistics.median(cpu[name]))
        for name, t in times.items()
    }
    if os.environ.get("KGROUP_BENCH_SENDFILE_VERBOSE"):
        for name, t in times.items():
            rounds = " ".join(f"{mb / x:6.0f}" for x in t)
            cpus = " ".join(f"{c:4.2f}" for c in cpu[name])
            print(f"\n{workload} / {name}: MB/s {rounds}; broker CPU s {cpus}", end="")


def test_summary(benchmark) -> None:
    """Print every figure with its ratio to uvloop copy (run last)."""
    benchmark.group = f"{GROUP}: summary"
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    if not _results:
        pytest.skip("run the whole module for the summary")
    lines = ["", f"Fetch: sendfile vs copy, one confluent-kafka consumer, {ROUNDS} rounds"]
    lines.append(f"  (kgroup.fetch.sendfile.min.bytes default {SENDFILE_MIN_BYTES:,}; consumer")
    lines.append(f"  settings {CONSUMER_EXTRA})")
    for workload, figures in _results.items():
        lines.append(f"  {workload}")
        base = figures.get(BASELINE)
        for name, (best, median, cpu) in figures.items():
            ratio = f"x{best / base[0]:5.2f}" if base else ""
            cpu_ratio = f"x{cpu / base[2]:5.2f}" if base and base[2] else ""
            lines.append(
                f"    {name:<22} best {best:7.1f} MB/s {ratio}   median {median:7.1f} MB/s   "
                f"broker CPU {cpu:5.2f} s {cpu_ratio}"
            )
    print("\n".join(lines))
