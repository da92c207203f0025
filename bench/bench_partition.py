"""partition_keys beside what a Python user has today, on 1,000,000 random hex keys of 16 and
of 100 bytes (the shapes of shared/reference/spark-and-python-baselines.md):

- kgroup from a pyarrow array and from a list of bytes;
- `confluent_kafka.murmur2(key, n)` in a loop (librdkafka's C, one call per key): the baseline;
- kafka-python's pure-Python murmur2 in a loop (on a 20,000-key slice: it is slow);
- `mmh3.hash` in a loop (murmur3, not Kafka's hash: the cost of one C call per key);
- the raw Rust loop over the same contiguous buffers (`toPositive(murmur2) % n`, one core):
  the one-core limit the Arrow path is measured against.

Run: `make bench`.
"""

from __future__ import annotations

import confluent_kafka
import mmh3
import numpy as np
import pyarrow as pa
import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

import kgroup
from kgroup._native import partitioners as _native

N = 1_000_000
PARTITIONS = 12
SLOW_N = 20_000


def make_keys(length: int) -> tuple[pa.Array, list[bytes], np.ndarray, bytes]:
    rng = np.random.default_rng(length)
    digits = rng.integers(0, 16, size=(N, length), dtype=np.uint8)
    data = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)[digits].tobytes()
    offsets = np.arange(0, (N + 1) * length, length, dtype=np.int32)
    arr = pa.Array.from_buffers(pa.binary(), N, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return arr, arr.to_pylist(), offsets, data


@pytest.fixture(scope="module", params=[16, 100], ids=lambda n: f"{n}B")
def keys(request):
    return request.param, make_keys(request.param)


def run(benchmark, group: str, items: int, fn, *, baseline: bool = False, rounds: int = 5):
    benchmark.group = group
    benchmark.extra_info["items"] = items
    if baseline:
        benchmark.extra_info["baseline"] = True
    return benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=1)


def test_kgroup_arrow(benchmark, keys) -> None:
    length, (arr, _, _, _) = keys
    out = run(
        benchmark, f"partition {length}B keys", N, lambda: kgroup.partition_keys(arr, PARTITIONS)
    )
    assert out[:100].tolist() == [
        confluent_kafka.murmur2(k, PARTITIONS) for k in arr[:100].to_pylist()
    ]


def test_kgroup_list_of_bytes(benchmark, keys) -> None:
    length, (_, lst, _, _) = keys
    run(benchmark, f"partition {length}B keys", N, lambda: kgroup.partition_keys(lst, PARTITIONS))


def test_rust_raw_loop_one_core(benchmark, keys) -> None:
    length, (_, _, offsets, data) = keys
    out = np.empty(N, dtype=np.int32)
    run(
        benchmark,
        f"partition {length}B keys",
        N,
        lambda: _native._bench_raw_murmur2(offsets, data, PARTITIONS, out),
    )


def test_confluent_kafka_murmur2_loop(benchmark, keys) -> None:
    length, (_, lst, _, _) = keys
    f = confluent_kafka.murmur2
    run(
        benchmark,
        f"partition {length}B keys",
        N,
        lambda: [f(k, PARTITIONS) for k in lst],
        baseline=True,
        rounds=3,
    )


def test_mmh3_hash_loop(benchmark, keys) -> None:
    length, (_, lst, _, _) = keys
    h = mmh3.hash
    run(
        benchmark,
        f"partition {length}B keys",
        N,
        lambda: [h(k) % PARTITIONS for k in lst],
        rounds=3,
    )


def test_kafka_python_murmur2_loop(benchmark, keys) -> None:
    length, (_, lst, _, _) = keys
    part = lst[:SLOW_N]
    run(
        benchmark,
        f"partition {length}B keys",
        SLOW_N,
        lambda: [(kafka_python_murmur2(k) & 0x7FFFFFFF) % PARTITIONS for k in part],
        rounds=2,
    )
