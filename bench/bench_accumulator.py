"""The producer's per-record work: Accumulator.append() calls/s for keyed 100 B and 1 KB
records (drain and encode included), and append_arrow() rows/s.

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


def test_append_arrow_100b(benchmark) -> None:
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"key": pa.array(KEYS, pa.binary()), "value": [b"x" * 100] * N})

    def run() -> None:
        acc = Accumulator(buffer_memory=1 << 31)
        acc.set_partitions("t", 12)
        acc.append_arrow("t", table)
        acc.begin_flush()
        while batches := acc.drain(max_bytes=1 << 40):
            for b in batches:
                acc.complete(b, 0, 0)

    benchmark.extra_info["records"] = N
    benchmark.pedantic(run, rounds=5, iterations=1)
