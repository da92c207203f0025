"""The producer's native accumulator (kgroup._native.client.Accumulator): placement against
kgroup.partitioners, batches that decode back, linger, idempotent sequences, memory limits and
Arrow appends equal to a loop of append()."""

from __future__ import annotations

import random

import pytest

from kgroup._native.client import PARTITIONER_NAMES, Accumulator
from kgroup.errors import InvalidArgument, InvalidType, MessageTooLarge, UnknownTopicOrPartition
from kgroup.partitioners import partition_for_key
from kgroup.protocol.records import decode_batches

N = 7


def drain_all(acc: Accumulator) -> list:
    acc.begin_flush()
    out = []
    while batches := acc.drain(max_bytes=1 << 40):
        out.extend(batches)
    return out


def placed(acc: Accumulator, topic: str = "t") -> dict[tuple[int, bytes | None], int]:
    """(offset in the partition, value) -> partition, from the drained batches."""
    got = {}
    for b in drain_all(acc):
        for r in decode_batches(b.records())[0].records:
            got[r.value] = b.partition
    return got


@pytest.mark.parametrize(
    ("partitioner", "hash"),
    [
        ("murmur2_builtin", "murmur2"),
        ("murmur2_sticky", "murmur2"),
        ("murmur2_roundrobin", "murmur2"),
        ("murmur2_random", "murmur2"),
        ("murmur2", "murmur2"),
        ("consistent_random", "crc32"),
        ("consistent", "crc32"),
        ("fnv1a", "fnv1a"),
        ("fnv1a_random", "fnv1a"),
    ],
)
def test_keyed_placement_equals_partition_for_key(partitioner: str, hash: str) -> None:
    acc = Accumulator(partitioner=partitioner, seed=1)
    acc.set_partitions("t", N)
    rng = random.Random(partitioner)
    keys = [rng.randbytes(rng.randint(1, 40)) for _ in range(300)] + ["ключ", "k"]
    for i, k in enumerate(keys):
        acc.append("t", b"%d" % i, k)
    got = placed(acc)
    for i, k in enumerate(keys):
        assert got[b"%d" % i] == partition_for_key(k, N, hash=hash), k


def test_murmur2_matches_kafka_utils_test_vectors() -> None:
    # Keys from Kafka's UtilsTest.testMurmur2: toPositive(murmur2) % 1000.
    acc = Accumulator(seed=1)
    acc.set_partitions("t", 1000)
    acc.append("t", b"v", b"abc")
    assert placed(acc)[b"v"] == 107


def test_every_name_is_accepted_and_unknown_names_are_named() -> None:
    for name in PARTITIONER_NAMES:
        Accumulator(partitioner=name)
    with pytest.raises(InvalidArgument, match="nope"):
        Accumulator(partitioner="nope")


def test_roundrobin_ignores_keys_and_cycles_from_zero() -> None:
    acc = Accumulator(partitioner="roundrobin", seed=1)
    acc.set_partitions("t", 3)
    for i in range(6):
        acc.append("t", b"%d" % i, b"same key")
    got = placed(acc)
    assert [got[b"%d" % i] for i in range(6)] == [0, 1, 2, 0, 1, 2]


def test_librdkafka_null_keys() -> None:
    # consistent: a null key hashes as no bytes, crc32(b"") = 0.
    acc = Accumulator(partitioner="consistent")
    acc.set_partitions("t", N)
    for i in range(20):
        acc.append("t", b"%d" % i)
    assert set(placed(acc).values()) == {0}
    acc = Accumulator(partitioner="murmur2_random", seed=3)
    acc.set_partitions("t", N)
    for i in range(200):
        acc.append("t", b"%d" % i)
    assert len(set(placed(acc).values())) == N


def test_builtin_null_keys_stick_for_batch_size_bytes() -> None:
    acc = Accumulator(batch_size=1000, seed=5, linger_ms=1e9)
    acc.set_partitions("t", 50)
    for i in range(300):
        acc.append("t", b"x" * 90 + b"%04d" % i)
    got = placed(acc)
    order = [got[b"x" * 90 + b"%04d" % i] for i in range(300)]
    runs = []
    for p in order:
        if runs and runs[-1][0] == p:
            runs[-1][1] += 1
        else:
            runs.append([p, 1])
    # ~100 bytes a record: a batch stops short of batch.size (the next record does not fit) so
    # it never counts as full, and Kafka 3.4+ (KAFKA-14156) switches at 2 * batch.size bytes:
    # every 19 records here, as Java's producer does. The next pick may repeat a partition.
    assert len(runs) >= 10
    assert {n for _, n in runs[:-1]} <= {19, 38, 57}


def test_sticky_2_4_switches_on_new_batch() -> None:
    acc = Accumulator(partitioner="murmur2_sticky", batch_size=500, seed=2, linger_ms=1e9)
    acc.set_partitions("t", 10)
    for i in range(100):
        acc.append("t", b"y" * 90 + b"%03d" % i)
    batches = drain_all(acc)
    # Every batch of a sticky run is filled before the partition moves on.
    assert len({b.partition for b in batches}) > 1
    assert all(b.record_count >= 1 for b in batches)


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_batches_decode_back(compression: str) -> None:
    acc = Accumulator(compression=compression, seed=1)
    acc.set_partitions("t", 1)
    rows = []
    for i in range(50):
        key = None if i % 7 == 0 else b"k%d" % i
        value = None if i % 11 == 0 else b"v" * i
        headers = [("h", b"%d" % i), ("n", None)] if i % 3 == 0 else None
        acc.append("t", value, key, timestamp=1_700_000_000_000 + i * 3, headers=headers)
        rows.append((key, value, 1_700_000_000_000 + i * 3, headers or []))
    (b,) = drain_all(acc)
    assert b.topic == "t" and b.partition == 0 and b.record_count == 50
    assert b.size == len(b.records())
    (batch,) = decode_batches(b.records())
    assert batch.compression == compression
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert batch.max_timestamp == rows[-1][2]
    for r, (key, value, ts, headers) in zip(batch.records, rows, strict=True):
        assert (r.key, r.value, r.timestamp) == (key, value, ts)
        assert list(r.headers) == headers


def test_str_values_and_dict_headers() -> None:
    acc = Accumulator()
    acc.set_partitions("t", 1)
    acc.append("t", "é", "k", headers={"a": "b"})
    (b,) = drain_all(acc)
    (r,) = decode_batches(b.records())[0].records
    assert (r.key, r.value, list(r.headers)) == (b"k", "é".encode(), [("a", b"b")])
    with pytest.raises(InvalidType):
        acc.append("t", 12)


def test_linger_and_ready() -> None:
    acc = Accumulator(linger_ms=50, batch_size=1000)
    acc.set_partitions("t", 2)
    acc.append("t", b"v", partition=0)
    now = acc.now_ms()
    ready, wait = acc.ready(now)
    assert ready == [] and 0 < wait <= 50
    assert acc.ready(now + 60)[0] == [("t", 0)]
    # A full batch is ready at once; the status says so.
    assert acc.append("t", b"x" * 2000, partition=1) == 1
    assert acc.ready(now)[0] == [("t", 1)]
    acc.begin_flush()
    assert acc.ready(now)[0] == [("t", 0), ("t", 1)]


def test_unknown_topic_is_held_then_placed() -> None:
    acc = Accumulator(seed=1)
    seen = []
    assert acc.append("t", b"a", b"key", on_delivery=lambda e, m: seen.append((e, m))) == 2
    assert acc.append("t", b"b", partition=9, on_delivery=lambda e, m: seen.append((e, m))) == 2
    assert len(acc) == 2
    acc.set_partitions("t", 4)
    (b,) = drain_all(acc)
    assert b.partition == partition_for_key(b"key", 4)
    acc.complete(b, 0, 100)
    reports = acc.pop_reports()
    for cb, err, msg in reports:
        cb(err, msg)
    assert [(type(e), m.partition()) for e, m in seen] == [
        (UnknownTopicOrPartition, 9),
        (type(None), b.partition),
    ]
    assert seen[1][1].offset() == 100 and seen[1][1].value() == b"a"
    assert len(acc) == 0 and acc.buffered_bytes == 0


def test_explicit_partition_out_of_range_raises() -> None:
    acc = Accumulator()
    acc.set_partitions("t", 2)
    with pytest.raises(UnknownTopicOrPartition):
        acc.append("t", b"v", partition=2)


def test_idempotent_sequences_per_partition_and_reenqueue() -> None:
    acc = Accumulator(batch_size=200, linger_ms=0)
    acc.set_partitions("t", 2)
    acc.set_producer_id(42, 3)
    for i in range(10):
        acc.append("t", b"x" * 50, partition=i % 2)
    first = acc.drain()
    assert [(b.partition, b.base_sequence) for b in first] == [(0, 0), (1, 0)]
    counts = {b.partition: b.record_count for b in first}
    retry = first[0]
    data = retry.records()
    acc.reenqueue(retry)
    acc.complete(first[1], 0, 0)
    again = acc.drain(max_bytes=1 << 30)
    assert again[0].partition == 0 and again[0].records() == data
    assert again[0].base_sequence == 0 and again[0].attempts == 2
    assert again[1].base_sequence == counts[1]
    (h,) = decode_batches(again[1].records())
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (42, 3, counts[1])
    with pytest.raises(RuntimeError):
        acc.complete(retry, 0, 0)


def test_buffer_memory_and_too_large() -> None:
    acc = Accumulator(buffer_memory=10_000, max_request_size=5_000)
    acc.set_partitions("t", 1)
    with pytest.raises(MessageTooLarge) as e:
        acc.append("t", b"x" * 6_000)
    assert e.value.code == 10
    for _ in range(2):
        acc.append("t", b"x" * 4_000)
    with pytest.raises(BufferError, match="Local: Queue full"):
        acc.append("t", b"x" * 4_000)
    acc.fail_all(7)
    assert len(acc) == 0 and acc.buffered_bytes == 0
    acc.append("t", b"x" * 4_000)


def test_delivery_report_message() -> None:
    acc = Accumulator()
    acc.set_partitions("t", 1)
    acc.append("t", "v", b"k", timestamp=5, headers=[("h", "x")], on_delivery=print)
    acc.append("t", b"no callback")
    (b,) = drain_all(acc)
    acc.complete(b, 0, 10, log_append_time=99)
    ((cb, err, msg),) = acc.pop_reports()
    assert cb is print and err is None and msg.error() is None
    assert (msg.topic(), msg.partition(), msg.offset()) == ("t", 0, 10)
    assert (msg.key(), msg.value(), msg.headers(), len(msg)) == (b"k", b"v", [("h", b"x")], 1)
    assert msg.timestamp() == (2, 99) and msg.latency() >= 0
    assert acc.unreported == 1


pa = pytest.importorskip("pyarrow")


def test_append_arrow_equals_a_loop_of_append() -> None:
    rng = random.Random(9)
    n = 2000
    keys = [None if i % 13 == 0 else rng.randbytes(rng.randint(0, 20)) for i in range(n)]
    values = [None if i % 17 == 0 else rng.randbytes(rng.randint(0, 200)) for i in range(n)]
    table = pa.table(
        {
            "key": pa.array(keys, pa.binary()),
            "value": pa.array(values, pa.large_binary()),
            "ts": pa.array([1_000 + i for i in range(n)], pa.int64()),
        }
    )
    a = Accumulator(seed=4, linger_ms=1e9)
    b = Accumulator(seed=4, linger_ms=1e9)
    for acc in (a, b):
        acc.set_partitions("t", 5)
    assert a.append_arrow("t", table.to_batches(max_chunksize=300)[0], timestamp="ts") == 300
    assert a.append_arrow("t", table.slice(300), timestamp="ts") == n - 300
    for i in range(n):
        b.append("t", values[i], keys[i], timestamp=1_000 + i)
    got_a = sorted((x.partition, x.records()) for x in drain_all(a))
    got_b = sorted((x.partition, x.records()) for x in drain_all(b))
    assert got_a == got_b


def test_append_arrow_strings_and_partition_column() -> None:
    table = pa.table({"k": ["a", "b"], "value": ["x", "y"], "p": pa.array([1, 0], pa.int32())})
    acc = Accumulator()
    acc.set_partitions("t", 2)
    assert acc.append_arrow("t", table, key="k", partition="p") == 2
    got = {x.partition: decode_batches(x.records())[0].records[0].key for x in drain_all(acc)}
    assert got == {1: b"a", 0: b"b"}


def test_append_arrow_bad_columns() -> None:
    acc = Accumulator()
    acc.set_partitions("t", 2)
    table = pa.table({"key": [b"a"], "value": [1]})
    with pytest.raises(InvalidType, match='"value"'):
        acc.append_arrow("t", table)
    with pytest.raises(InvalidArgument, match='"nope"'):
        acc.append_arrow("t", table, value="nope")
    with pytest.raises(InvalidType, match=r"column .value. must be binary"):
        acc.append_arrow("t", table, key="value", value="key")


HEADER = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
LARGE_HEADER = pa.struct([pa.field("key", pa.large_string()), pa.field("value", pa.large_binary())])


def random_headers(rng: random.Random, n: int) -> list[list[tuple[str, bytes | None]] | None]:
    """Spark's sink shapes: a null list, an empty one, or a few headers with null values."""
    out: list[list[tuple[str, bytes | None]] | None] = []
    for i in range(n):
        if i % 11 == 0:
            out.append(None)
            continue
        hs = []
        for _ in range(rng.randint(0, 4)):
            value = None if rng.random() < 0.2 else rng.randbytes(rng.randint(0, 30))
            hs.append((rng.choice(["trace", "ключ", "", "h"]) + str(rng.randint(0, 9)), value))
        out.append(hs)
    return out


def header_array(headers: list, large: bool = False) -> pa.Array:
    entry = LARGE_HEADER if large else HEADER
    rows = [None if h is None else [{"key": k, "value": v} for k, v in h] for h in headers]
    return pa.array(rows, pa.large_list(entry) if large else pa.list_(entry))


@pytest.mark.parametrize("large", [False, True])
def test_append_arrow_headers_equal_a_loop_of_append(large: bool) -> None:
    rng = random.Random(large)
    n = 1500
    keys = [rng.randbytes(rng.randint(1, 12)) for _ in range(n)]
    values = [b"%d:" % i + rng.randbytes(rng.randint(0, 100)) for i in range(n)]
    headers = random_headers(rng, n)
    table = pa.table(
        {
            "key": pa.array(keys, pa.binary()),
            "value": pa.array(values, pa.binary()),
            "h": header_array(headers, large),
            "ts": pa.array([5_000 + i for i in range(n)], pa.int64()),
        }
    )
    a = Accumulator(seed=2, linger_ms=1e9)
    b = Accumulator(seed=2, linger_ms=1e9)
    for acc in (a, b):
        acc.set_partitions("t", 3)
    # A slice starts at an offset inside each column, the header lists included.
    assert a.append_arrow("t", table.slice(0, 700), headers="h", timestamp="ts") == 700
    assert a.append_arrow("t", table.slice(700), headers="h", timestamp="ts") == n - 700
    for i in range(n):
        b.append("t", values[i], keys[i], timestamp=5_000 + i, headers=headers[i])
    got_a = sorted((x.partition, x.records()) for x in drain_all(a))
    got_b = sorted((x.partition, x.records()) for x in drain_all(b))
    assert got_a == got_b
    # And the records' own headers, decoded: Kafka v2 record headers, null values kept.
    decoded = {
        r.value: r.headers
        for _, data in got_a
        for batch in decode_batches(data)
        for r in batch.records
    }
    for v, h in zip(values, headers, strict=True):
        assert decoded[v] == tuple(h or ())


def test_append_arrow_headers_of_spark_types_and_null_values() -> None:
    # The sink's Arrow: Spark's array<struct<key:string,value:binary>>, a value column of the
    # null type, string values.
    table = pa.table(
        {
            "value": [b"a", b"b"],
            "headers": pa.array(
                [[{"key": "x", "value": None}], None],
                pa.list_(pa.struct([("key", pa.string()), ("value", pa.null())])),
            ),
            "h2": pa.array(
                [[{"key": "s", "value": "text"}], []],
                pa.list_(pa.struct([("key", pa.string_view()), ("value", pa.string())])),
            ),
        }
    )
    acc = Accumulator()
    acc.set_partitions("t", 1)
    assert acc.append_arrow("t", table, key=None, headers="headers") == 2
    assert acc.append_arrow("t", table, key=None, headers="h2") == 2
    records = [r for x in drain_all(acc) for r in decode_batches(x.records())[0].records]
    assert [r.headers for r in records] == [(("x", None),), (), (("s", b"text"),), ()]


def test_append_arrow_bad_header_columns() -> None:
    acc = Accumulator()
    acc.set_partitions("t", 1)

    def with_headers(h: pa.Array) -> pa.Table:
        return pa.table({"value": pa.array([b"v"] * len(h)), "h": h})

    bad_types = [
        (
            pa.array([1]),
            r'column "h": must be list<struct<key: string, value: binary>>, got Arrow integer',
        ),
        (pa.array([[1]]), r"got a list of Arrow integer"),
        (
            pa.array([[{"k": "a", "value": b"x"}]]),
            r"got a list of struct with fields \[.k., .value.\]",
        ),
        (
            pa.array([[{"key": b"a", "value": b"x"}]]),
            r"header key must be string or large_string, got Arrow binary",
        ),
        (
            pa.array([[{"key": "a", "value": 1}]]),
            r"header value must be binary or string, got Arrow integer",
        ),
    ]
    for h, message in bad_types:
        with pytest.raises(InvalidType, match=message):
            acc.append_arrow("t", with_headers(h), key=None, headers="h")
    with pytest.raises(InvalidArgument, match='no column "nope"'):
        acc.append_arrow("t", with_headers(header_array([[("a", b"x")]])), key=None, headers="nope")
    # A null key or a null header fails the whole batch: no row of it is appended.
    null_key = pa.array(
        [[{"key": "a", "value": b"x"}], [{"key": None, "value": b"x"}]], pa.list_(HEADER)
    )
    with pytest.raises(InvalidArgument, match="row 1: the key of header 0 is null"):
        acc.append_arrow("t", with_headers(null_key), key=None, headers="h")
    null_entry = pa.array([[{"key": "a", "value": b"x"}, None]], pa.list_(HEADER))
    with pytest.raises(InvalidArgument, match="row 0: header 1 is null"):
        acc.append_arrow("t", with_headers(null_entry), key=None, headers="h")
    assert len(acc) == 0
