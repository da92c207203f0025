"""The consumer's per-record work in Rust (kgroup._native.client.FetchQueue): push 100,000
records of a 1 KB or a 100 B value (a 16-byte key, one header), as 100 pushes of 1,000 records
(one partition's Fetch of about 1 MB or 100 KB, in batches of 250, uncompressed), then take them
out as confluent-kafka's poll() loop does:

- pop: one Message per call, reading value() (the poll-then-value pattern);
- pop_no_value: the same without value() (what creating a message costs);
- pop_many: lists of 500 messages, reading value();
- pop_arrow: Arrow batches of 10,000 rows (Spark's Kafka schema), no Python object per record;
- push: decoding alone (the network thread's share);
- baseline: kgroup.protocol.records.decode_batches reading every value (a decoder that makes a
  Record object per record).

Run: `make bench`, or `.venv/bin/python -m pytest bench/bench_client_native.py
-o python_files='bench_*.py' -p no:cacheprovider --benchmark-only`.
"""

from __future__ import annotations

import pytest

from kgroup._native.client import FetchQueue
from kgroup.protocol.records import decode_batches, encode_batch

N = 100_000
PUSHES = 100
PER_PUSH = N // PUSHES
PER_BATCH = 250
T0 = 1_700_000_000_000


def fetches(value_size: int) -> list[bytes]:
    value = bytes(range(256)) * (value_size // 256) + bytes(value_size % 256)
    out = []
    for p in range(PUSHES):
        base = p * PER_PUSH
        batches = []
        for b in range(0, PER_PUSH, PER_BATCH):
            o = base + b
            rows = [
                (o + i, T0 + o + i, b"key-%012d" % (o + i), value, [("h", b"1")])
                for i in range(PER_BATCH)
            ]
            batches.append(encode_batch(rows, base_offset=o))
        out.append(b"".join(batches))
    return out


@pytest.fixture(scope="module", params=[1000, 100], ids=["1KB", "100B"])
def data(request) -> tuple[int, list[bytes]]:
    return request.param, fetches(request.param)


def run(benchmark, group: str, fn, *, baseline: bool = False):
    benchmark.group = group
    benchmark.extra_info["items"] = N
    if baseline:
        benchmark.extra_info["baseline"] = True
    return benchmark.pedantic(fn, rounds=5, iterations=1, warmup_rounds=1)


def push_all(q: FetchQueue, parts: list[bytes]) -> None:
    for p, records in enumerate(parts):
        q.push("bench", 0, records, p * PER_PUSH)


def test_push(benchmark, data):
    size, parts = data

    def fn() -> int:
        q = FetchQueue()
        push_all(q, parts)
        return len(q)

    assert run(benchmark, f"consume {size}B", fn) == N


def test_pop(benchmark, data):
    size, parts = data

    def fn() -> int:
        q = FetchQueue()
        push_all(q, parts)
        n = 0
        pop = q.pop
        while (m := pop()) is not None:
            n += len(m.value())
        return n

    assert run(benchmark, f"consume {size}B", fn) == N * size


def test_pop_no_value(benchmark, data):
    size, parts = data

    def fn() -> int:
        q = FetchQueue()
        push_all(q, parts)
        n = 0
        pop = q.pop
        while pop() is not None:
            n += 1
        return n

    assert run(benchmark, f"consume {size}B", fn) == N


def test_pop_many(benchmark, data):
    size, parts = data

    def fn() -> int:
        q = FetchQueue()
        push_all(q, parts)
        n = 0
        while msgs := q.pop_many(500):
            for m in msgs:
                n += len(m.value())
        return n

    assert run(benchmark, f"consume {size}B", fn) == N * size


def test_pop_arrow(benchmark, data):
    size, parts = data

    def fn() -> int:
        q = FetchQueue()
        push_all(q, parts)
        n = 0
        while (b := q.pop_arrow(10_000)).num_rows:
            n += b.num_rows
        return n

    assert run(benchmark, f"consume {size}B", fn) == N


def test_decode_batches_baseline(benchmark, data):
    size, parts = data

    def fn() -> int:
        n = 0
        for records in parts:
            for batch in decode_batches(records):
                for r in batch:
                    n += len(r.value)
        return n

    assert run(benchmark, f"consume {size}B", fn, baseline=True) == N * size
