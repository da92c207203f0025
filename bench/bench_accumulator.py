"""The producer's per-record work: Accumulator.append() calls/s for keyed 100 B and 1 KB
records (drain and encode included), and append_arrow() rows/s with and without headers.

Run: .venv/bin/python -m pytest bench/bench_accumulator.py -o python_files='bench_*.py' \
    -p no:cacheprovider --benchmark-only
"""

from __future__ import annotations

import pytest

from kgroup._native.client import Accumulator

N = 100_000
KEYS = [b"key-%d" % i for i in range(N)]


def _produce(size: int, compression: str = "none") -> None:
    acc = Accumulator(buffer_memory=1 << 31, compression=compression)
    acc.set_partitions("t", 12)
    value = b"x" * size
    append = acc.append
    for k in KEYS:
        append("t", value, k)
    acc.begin_flush()
    while batches := acc.drain(max_bytes=1 << 40):
        for b in batches:
            acc.complete(b, 0, 0)


@pytest.mark.parametrize("size", [100, 1024])
def test_append_keyed(benchmark, size: int) -> None:
    benchmark.extra_info["records"] = N
    benchmark.pedantic(_produce, args=(size,), rounds=5, iterations=1)


def test_append_keyed_100b_lz4(benchmark) -> None:
    benchmark.extra_info["records"] = N
    benchmark.pedantic(_produce, args=(100, "lz4"), rounds=5, iterations=1)


@pytest.mark.parametrize("headers", [0, 2], ids=["no-headers", "2-headers"])
def test_append_arrow_100b(benchmark, headers: int) -> None:
    """append_arrow rows/s, with Spark's headers column (two headers of 8 and 16 bytes a row)
    or without: what the kgroup sink's tasks do per batch."""
    pa = pytest.importorskip("pyarrow")
    cols = {"key": pa.array(KEYS, pa.binary()), "value": [b"x" * 100] * N}
    if headers:
        entry = pa.struct([("key", pa.string()), ("value", pa.binary())])
        row = [{"key": "trace-id", "value": b"t" * 16}, {"key": "source", "value": b"s" * 8}]
        cols["headers"] = pa.array([row[:headers]] * N, pa.list_(entry))
    table = pa.table(cols)

    def run() -> None:
        acc = Accumulator(buffer_memory=1 << 31)
        acc.set_partitions("t", 12)
        acc.append_arrow("t", table, headers="headers" if headers else None)
        acc.begin_flush()
        while batches := acc.drain(max_bytes=1 << 40):
            for b in batches:
                acc.complete(b, 0, 0)

    benchmark.group = "append_arrow 100 B"
    benchmark.extra_info.update(records=N, items=N, baseline=not headers)
    benchmark.pedantic(run, rounds=5, iterations=1)
