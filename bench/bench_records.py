"""Record batches: kgroup beside kafka-python's record classes (pure Python, the baseline) and
aiokafka's (Cython), on about 1 MB of records: 10,000 records of a 10-byte key, a 90-byte
value and one header, in 100 batches of 100 (a Fetch of 1 MB over 100 partitions holds about
this), uncompressed and with lz4 and zstd.

- decode: bytes to record objects, reading every value (all three build key, value and
  headers only when read);
- encode: (offset, timestamp, key, value, headers) rows to the concatenated batches; kgroup
  both from the tuples and through Record objects.

Run: `make bench`.
"""

from __future__ import annotations

import random

import aiokafka.record.default_records as aio_default
import aiokafka.record.memory_records as aio_memory
import kafka.record.default_records as kp_default
import kafka.record.memory_records as kp_memory
import pytest

from kgroup.protocol.records import Record, decode_batches, encode_batch

BATCHES = 100
PER_BATCH = 100
N = BATCHES * PER_BATCH
CODECS = {"none": 0, "lz4": 3, "zstd": 4}
T0 = 1_700_000_000_000


def make_rows() -> list[list[tuple]]:
    rng = random.Random(1)
    rows = []
    for b in range(BATCHES):
        batch = []
        for i in range(PER_BATCH):
            value = bytes(rng.choice(b"abcdefghij") for _ in range(90))
            batch.append((i, T0 + i, b"key-%06d" % (b * PER_BATCH + i), value, [("h", b"1")]))
        rows.append(batch)
    return rows


ROWS = make_rows()


def kgroup_encode(codec: str) -> bytes:
    return b"".join(encode_batch(batch, compression=codec) for batch in ROWS)


def kgroup_encode_records(codec: str) -> bytes:
    return b"".join(encode_batch([Record(*r) for r in batch], compression=codec) for batch in ROWS)


def builder_encode(module, codec: str) -> bytes:
    out = []
    for batch in ROWS:
        b = module.DefaultRecordBatchBuilder(2, CODECS[codec], 0, -1, -1, -1, 1 << 30)
        for offset, ts, key, value, headers in batch:
            b.append(offset, ts, key, value, headers)
        out.append(bytes(b.build()))
    return b"".join(out)


def peer_decode(module, data: bytes) -> int:
    records = module.MemoryRecords(data)
    n = 0
    while (batch := records.next_batch()) is not None:
        for r in batch:
            n += len(r.value)
    return n


@pytest.fixture(scope="module", params=list(CODECS))
def codec(request) -> str:
    return request.param


def run(benchmark, group: str, fn, *, baseline: bool = False):
    benchmark.group = group
    benchmark.extra_info["items"] = N
    if baseline:
        benchmark.extra_info["baseline"] = True
    return benchmark.pedantic(fn, rounds=5, iterations=1, warmup_rounds=1)


def kgroup_decode(data: bytes) -> int:
    n = 0
    for batch in decode_batches(data):
        for r in batch:
            n += len(r.value)
    return n


def test_decode_kgroup(benchmark, codec):
    data = kgroup_encode(codec)
    assert run(benchmark, f"records decode {codec}", lambda: kgroup_decode(data)) == N * 90


def test_decode_kafka_python(benchmark, codec):
    data = kgroup_encode(codec)
    n = run(
        benchmark,
        f"records decode {codec}",
        lambda: peer_decode(kp_memory, data),
        baseline=True,
    )
    assert n == N * 90


def test_decode_aiokafka(benchmark, codec):
    data = kgroup_encode(codec)
    assert run(benchmark, f"records decode {codec}", lambda: peer_decode(aio_memory, data)) == (
        N * 90
    )


def test_encode_kgroup(benchmark, codec):
    data = run(benchmark, f"records encode {codec}", lambda: kgroup_encode(codec))
    assert sum(len(b) for b in decode_batches(data)) == N


def test_encode_kgroup_records(benchmark, codec):
    data = run(benchmark, f"records encode {codec}", lambda: kgroup_encode_records(codec))
    assert sum(len(b) for b in decode_batches(data)) == N


def test_encode_kafka_python(benchmark, codec):
    data = run(
        benchmark,
        f"records encode {codec}",
        lambda: builder_encode(kp_default, codec),
        baseline=True,
    )
    assert sum(len(b) for b in decode_batches(data)) == N


def test_encode_aiokafka(benchmark, codec):
    data = run(benchmark, f"records encode {codec}", lambda: builder_encode(aio_default, codec))
    assert sum(len(b) for b in decode_batches(data)) == N
