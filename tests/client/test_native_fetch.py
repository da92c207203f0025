"""kgroup._native.client: FetchQueue decoding one partition's Fetch records the way Kafka's
consumer does (CompletedFetch: skip before the fetch offset, skip control batches, drop aborted
transactions under read_committed, stop at a truncated last batch), and the messages and Arrow
batches it hands out."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgroup._native.client import (
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_NOT_AVAILABLE,
    FetchQueue,
    Message,
)
from kgroup.errors import CorruptRecord, KafkaError, KGroupError, UnknownTopicOrPartition
from kgroup.protocol.records import (
    COMPRESSION_TYPES,
    encode_batch,
    encode_end_transaction_marker,
)

T0 = 1_700_000_000_000


def rows(base: int, n: int, *, headers: bool = True) -> list[tuple]:
    """n records from offset `base`: null key every 3rd, null value every 5th, headers on odd."""
    out = []
    for i in range(n):
        o = base + i
        key = None if i % 3 == 0 else b"key-%d" % o
        value = None if i % 5 == 0 else b"value-%d-" % o + bytes(i)
        hdrs = [("h1", b"a%d" % o), ("h2", None)] if headers and i % 2 else []
        out.append((o, T0 + o, key, value, hdrs))
    return out


def drain(q: FetchQueue) -> list[Message]:
    out = []
    while (m := q.pop()) is not None:
        out.append(m)
    return out


def as_tuple(m: Message) -> tuple:
    return (m.offset(), m.timestamp()[1], m.key(), m.value(), m.headers() or [])


def expected(rs: list[tuple]) -> list[tuple]:
    return [(o, ts, k, v, [(hk, hv) for hk, hv in h]) for o, ts, k, v, h in rs]


@pytest.mark.parametrize("compression", COMPRESSION_TYPES)
def test_all_codecs_headers_and_nulls(compression: str) -> None:
    rs = rows(100, 40)
    data = encode_batch(rs[:25], compression=compression, base_offset=100) + encode_batch(
        rs[25:], compression=compression, base_offset=125, partition_leader_epoch=7
    )
    q = FetchQueue()
    assert q.push("orders", 3, data, 100) == (140, 40)
    assert len(q) == 40
    msgs = drain(q)
    assert [as_tuple(m) for m in msgs] == expected(rs)
    assert {(m.topic(), m.partition()) for m in msgs} == {("orders", 3)}
    assert all(m.timestamp()[0] == TIMESTAMP_CREATE_TIME for m in msgs)
    assert [m.leader_epoch() for m in msgs] == [None] * 25 + [7] * 15
    assert all(m.error() is None and m.latency() is None for m in msgs)
    assert msgs[0].headers() is None  # no headers: None, as confluent-kafka
    assert [len(m) for m in msgs] == [len(r[3] or b"") for r in rs]
    assert len(q) == 0 and q.buffered_bytes == 0


def test_log_append_time_reports_max_timestamp() -> None:
    data = encode_batch(rows(0, 5), timestamp_type=1, max_timestamp=T0 + 999)
    q = FetchQueue()
    q.push("t", 0, data, 0)
    assert [m.timestamp() for m in drain(q)] == [(TIMESTAMP_LOG_APPEND_TIME, T0 + 999)] * 5


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_magic(magic: int) -> None:
    rs = rows(0, 6, headers=False)
    data = encode_batch(rs, magic=magic, compression="gzip")
    q = FetchQueue()
    assert q.push("t", 0, data, 2) == (6, 4)
    msgs = drain(q)
    assert [m.offset() for m in msgs] == [2, 3, 4, 5]
    assert [m.value() for m in msgs] == [r[3] for r in rs[2:]]
    if magic == 0:
        assert {m.timestamp() for m in msgs} == {(TIMESTAMP_NOT_AVAILABLE, -1)}
    else:
        assert [m.timestamp() for m in msgs] == [(1, T0 + o) for o in range(2, 6)]


def test_fetch_offset_inside_a_batch() -> None:
    data = encode_batch(rows(10, 10), base_offset=10) + encode_batch(rows(20, 5), base_offset=20)
    q = FetchQueue()
    assert q.push("t", 0, data, 17) == (25, 8)
    assert [m.offset() for m in drain(q)] == [17, 18, 19, 20, 21, 22, 23, 24]
    # A fetch offset past every record: nothing kept, the next offset still moves on.
    assert q.push("t", 0, data, 30) == (30, 0)


def test_truncated_trailing_batch() -> None:
    first = encode_batch(rows(0, 4))
    second = encode_batch(rows(4, 4), base_offset=4)
    q = FetchQueue()
    for cut in (1, 11, 20, len(second) - 1):
        assert q.push("t", 0, first + second[:cut], 0) == (4, 4)
        q.clear()
    # Only a partial batch: no progress, nothing added.
    assert q.push("t", 0, second[:30], 4) == (4, 0)
    assert q.push("t", 0, b"", 4) == (4, 0)


def test_crc_corruption_raises_corrupt_record() -> None:
    data = bytearray(encode_batch(rows(0, 4)))
    data[-1] ^= 0xFF
    q = FetchQueue()
    with pytest.raises(CorruptRecord) as e:
        q.push("t", 0, data, 0)
    assert e.value.kind == "crc"
    assert len(q) == 0


def txn(pid: int, base: int, n: int) -> bytes:
    return encode_batch(
        rows(base, n), base_offset=base, transactional=True, producer_id=pid, producer_epoch=0
    )


def marker(commit: bool, pid: int, offset: int) -> bytes:
    return encode_end_transaction_marker(
        commit,
        producer_id=pid,
        producer_epoch=0,
        coordinator_epoch=1,
        timestamp=T0,
        base_offset=offset,
    )


def test_control_batches_and_aborted_transactions() -> None:
    # Producer 1 commits 0-2, producer 2 aborts 3-4 (interleaved with 1's second transaction
    # 5-6, aborted too), a plain batch 9-10, then producer 2 again at 11-12, committed.
    data = b"".join(
        [
            txn(1, 0, 3),
            txn(2, 3, 2),
            marker(True, 1, 5),
            txn(1, 6, 2),
            marker(False, 2, 8),
            marker(False, 1, 9),
            encode_batch(rows(10, 2), base_offset=10),
            txn(2, 12, 2),
            marker(True, 2, 14),
        ]
    )
    aborted = [(2, 3), (1, 6)]
    q = FetchQueue()
    assert q.push("t", 0, data, 0, read_committed=True, aborted=aborted) == (15, 7)
    assert [m.offset() for m in drain(q)] == [0, 1, 2, 10, 11, 12, 13]
    # read_uncommitted: every data record, control batches still skipped.
    assert q.push("t", 0, data, 0, aborted=aborted) == (15, 11)
    assert [m.offset() for m in drain(q)] == [0, 1, 2, 3, 4, 6, 7, 10, 11, 12, 13]
    # A fetch that ends in a control batch: its offset still counts.
    assert q.push("t", 0, marker(True, 1, 20), 20, read_committed=True) == (21, 0)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    q = FetchQueue()
    try:
        next_offset, n = q.push("t", 0, data, 0, read_committed=True, aborted=[(1, 0)])
    except KGroupError:
        return
    assert n == len(q) and next_offset >= 0
    drain(q)


VALID = encode_batch(rows(0, 6), compression="none") + encode_batch(
    rows(6, 3), base_offset=6, compression="lz4"
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), max_size=8))
def test_mutated_batches_never_crash(edits: list[tuple[int, int]]) -> None:
    data = bytearray(VALID)
    for pos, byte in edits:
        data[pos] = byte
    q = FetchQueue()
    try:
        q.push("t", 0, bytes(data), 0)
    except KGroupError:
        return
    for m in drain(q):
        m.key(), m.value(), m.headers()
    q.push("t", 0, bytes(data), 0)
    q.pop_arrow(100)


def test_pop_waits_and_wake_ends_the_wait() -> None:
    q = FetchQueue()
    start = time.monotonic()
    assert q.pop(0.05) is None
    assert time.monotonic() - start >= 0.045

    threading.Timer(0.05, q.push, ("t", 0, encode_batch(rows(0, 2)), 0)).start()
    m = q.pop(5.0)
    assert m is not None and m.offset() == 0

    q.clear()
    threading.Timer(0.05, q.wake).start()
    start = time.monotonic()
    assert q.pop(None) is None  # None: no limit, but the wake ends it
    assert time.monotonic() - start < 4.0
    threading.Timer(0.05, q.wake).start()
    assert q.pop_many(10, -1) == []
    threading.Timer(0.05, q.wake).start()
    assert q.pop_arrow(10, 5.0).num_rows == 0

    # A wake with no one waiting ends the next wait at once, then is used up.
    q.wake()
    start = time.monotonic()
    assert q.pop(5.0) is None
    assert q.pop(0.02) is None
    assert time.monotonic() - start < 1.0


def test_pop_many_takes_what_is_there_across_partitions() -> None:
    q = FetchQueue()
    q.push("a", 0, encode_batch(rows(0, 3)), 0)
    q.push("b", 1, encode_batch(rows(0, 4)), 0)
    got = q.pop_many(5, 1.0)
    assert [(m.topic(), m.offset()) for m in got] == [
        ("a", 0),
        ("a", 1),
        ("a", 2),
        ("b", 0),
        ("b", 1),
    ]
    assert [m.offset() for m in q.pop_many(100)] == [2, 3]
    assert q.pop_many(100) == []


def test_purge_positions_forget() -> None:
    q = FetchQueue()
    q.push("a", 0, encode_batch(rows(0, 3)), 0)
    q.push("b", 0, encode_batch(rows(5, 4), base_offset=5), 5)
    q.push("a", 1, encode_batch(rows(0, 2)), 0)
    assert q.buffered_partitions() == {("a", 0), ("b", 0), ("a", 1)}
    assert q.buffered_bytes > 0
    assert q.positions() == {}
    q.pop()
    assert q.positions() == {("a", 0): 1}
    assert q.purge("a", 0) == 2
    assert q.purge("a", 0) == 0
    assert q.positions() == {("a", 0): 1}
    assert [m.offset() for m in q.pop_many(2)] == [5, 6]
    assert q.positions() == {("a", 0): 1, ("b", 0): 7}
    q.forget("a", 0)
    assert q.positions() == {("b", 0): 7}
    assert len(q) == 4 and q.buffered_partitions() == {("b", 0), ("a", 1)}
    q.clear()
    assert len(q) == 0 and q.buffered_bytes == 0 and q.buffered_partitions() == set()
    assert q.positions() == {("b", 0): 7}


def test_buffered_bytes_counts_keys_values_and_headers() -> None:
    q = FetchQueue()
    q.push("t", 0, encode_batch([(0, T0, b"kk", b"vvvv", [])]), 0)
    assert q.buffered_bytes == 6
    q.pop()
    assert q.buffered_bytes == 0


SCHEMA = pa.schema(
    [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("timestamp", pa.timestamp("ms"), nullable=False),
        pa.field("timestampType", pa.int32(), nullable=False),
        pa.field(
            "headers",
            pa.list_(
                pa.field(
                    "item",
                    pa.struct(
                        [
                            pa.field("key", pa.string(), nullable=False),
                            pa.field("value", pa.binary()),
                        ]
                    ),
                    nullable=False,
                )
            ),
        ),
    ]
)


def fill(q: FetchQueue) -> None:
    q.push("orders", 0, encode_batch(rows(0, 30), compression="zstd"), 0)
    q.push("audit", 5, encode_batch(rows(0, 12), timestamp_type=1, max_timestamp=T0 + 5), 0)


def test_pop_arrow_matches_pop() -> None:
    q = FetchQueue()
    fill(q)
    msgs = drain(q)
    fill(q)
    parts = [q.pop_arrow(25), q.pop_arrow(100), q.pop_arrow(100)]
    assert [p.num_rows for p in parts] == [25, 17, 0]
    for p in parts:
        assert p.schema == SCHEMA
        p.validate(full=True)
    table = pa.Table.from_batches(parts)
    want = [
        {
            "key": m.key(),
            "value": m.value(),
            "topic": m.topic(),
            "partition": m.partition(),
            "offset": m.offset(),
            "timestamp": m.timestamp()[1],
            "timestampType": m.timestamp()[0] - 1,
            "headers": [{"key": k, "value": v} for k, v in m.headers()] if m.headers() else None,
        }
        for m in msgs
    ]
    got = table.cast(SCHEMA.set(5, pa.field("timestamp", pa.int64(), nullable=False))).to_pylist()
    assert got == want
    assert q.positions() == {("orders", 0): 30, ("audit", 5): 12}
    assert len(q) == 0 and q.buffered_bytes == 0


def test_pop_arrow_timeout_gives_an_empty_batch() -> None:
    q = FetchQueue()
    b = q.pop_arrow(10, 0.01)
    assert b.num_rows == 0 and b.schema == SCHEMA
    assert q.pop_arrow(0).num_rows == 0


def test_message_made_by_the_client() -> None:
    err = UnknownTopicOrPartition()
    m = Message("t", 2, 10, error=err)
    assert m.error() is err and isinstance(m.error(), KafkaError)
    assert (m.topic(), m.partition(), m.offset()) == ("t", 2, 10)
    assert m.key() is None and m.value() is None and m.headers() is None
    assert m.timestamp() == (0, -1) and m.leader_epoch() is None and len(m) == 0
    d = Message("t", 0, 1, b"k", b"vvv", timestamp=(1, 5), headers=[("a", b"1")], latency=0.25)
    assert (d.key(), d.value(), len(d), d.timestamp(), d.latency()) == (
        b"k",
        b"vvv",
        3,
        (1, 5),
        0.25,
    )
    assert d.headers() == [("a", b"1")]
    d.set_key(b"k2")
    d.set_value(None)
    d.set_headers([("b", None)])
    assert (d.key(), d.value(), d.headers(), len(d)) == (b"k2", None, [("b", None)], 0)
    assert "topic='t'" in repr(d)
    assert Message().topic() is None


def test_consumed_message_setters() -> None:
    q = FetchQueue()
    q.push("t", 0, encode_batch([(0, T0, b"k", b"v", [("h", b"x")])]), 0)
    m = q.pop()
    assert m is not None
    assert m.value() is m.value()  # made once
    m.set_value(b"decoded")
    m.set_headers(None)
    assert (m.key(), m.value(), m.headers(), len(m)) == (b"k", b"decoded", None, 7)
