"""Record batches against real peers: kafka-python's and aiokafka's record builders and readers,
librdkafka (confluent-kafka) through the tansu broker, and hostile bytes.

Every codec is checked both ways: what the peers build, kgroup reads; what kgroup builds, the
peers read.
"""

from __future__ import annotations

import contextlib
import random
import socket
import struct
import uuid
import zlib

import aiokafka.record.default_records as aio_default
import aiokafka.record.legacy_records as aio_legacy
import aiokafka.record.memory_records as aio_memory
import kafka.record.default_records as kp_default
import kafka.record.legacy_records as kp_legacy
import kafka.record.memory_records as kp_memory
import pytest
from kafka.record import _crc32c as kp_crc32c
from support.wire import read_exactly

from kgroup.errors import DecodeError, InvalidArgument, InvalidType
from kgroup.protocol.records import (
    COMPRESSION_TYPES,
    BatchHeader,
    ControlRecordType,
    Record,
    TimestampType,
    decode_batches,
    encode_batch,
    encode_end_transaction_marker,
    parse_control_record,
    read_batch_headers,
    set_base_offset,
    set_last_offset,
    set_max_timestamp,
    set_partition_leader_epoch,
)

CODEC_IDS = {name: i for i, name in enumerate(COMPRESSION_TYPES)}
LEGACY_CODECS = ["none", "gzip", "snappy", "lz4"]
T0 = 1_700_000_000_000


def sample_records(n: int = 30, *, headers: bool = True, seed: int = 1) -> list[Record]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        key = None if i % 5 == 0 else b"key-%d" % i
        value = None if i % 7 == 3 else (b"value %d " % i) * rng.randint(0, 40)
        hdrs = [("trace", b"%d" % i), ("empty", None), ("ü", b"")] if headers and i % 2 else []
        out.append(Record(i, T0 + rng.randint(-5000, 5000), key, value, hdrs))
    return out


def as_tuples(records) -> list[tuple]:
    """(offset, timestamp, key, value, headers) of any peer's records."""
    return [
        (r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in (r.headers or [])])
        for r in records
    ]


# --- peers build, kgroup reads -----------------------------------------------------------


@pytest.mark.parametrize("peer", ["kafka-python", "aiokafka"])
@pytest.mark.parametrize("codec", COMPRESSION_TYPES)
def test_peer_v2_batches_decode(peer, codec):
    builder_cls = (
        kp_default.DefaultRecordBatchBuilder
        if peer == "kafka-python"
        else aio_default.DefaultRecordBatchBuilder
    )
    b = builder_cls(2, CODEC_IDS[codec], True, 4242, 3, 17, 1 << 20)
    recs = sample_records()
    for r in recs:
        b.append(r.offset, r.timestamp, r.key, r.value, list(r.headers))
    data = bytes(b.build())

    [batch] = decode_batches(data)
    assert batch.magic == 2
    assert batch.compression == codec
    assert batch.is_transactional and not batch.is_control_batch
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (4242, 3, 17)
    assert batch.timestamp_type == TimestampType.CREATE_TIME
    assert (batch.base_offset, batch.last_offset) == (0, len(recs) - 1)
    assert batch.base_timestamp == recs[0].timestamp
    assert batch.max_timestamp == max(r.timestamp for r in recs)
    assert list(batch.records) == recs

    h = BatchHeader.parse(data)
    assert (h.size, h.records_count, h.compression) == (len(data), len(recs), codec)
    assert h.crc == kp_crc32c.crc(data[21:])


# aiokafka writes no lz4 for magic 0 (Kafka 0.8/0.9's broken lz4 framing); kafka-python does.
LEGACY_PEER_CASES = [
    (peer, magic, codec)
    for peer in ("kafka-python", "aiokafka")
    for magic in (0, 1)
    for codec in LEGACY_CODECS
    if not (peer == "aiokafka" and magic == 0 and codec == "lz4")
]


@pytest.mark.parametrize(("peer", "magic", "codec"), LEGACY_PEER_CASES)
def test_peer_legacy_message_sets_decode(peer, magic, codec):
    builder_cls = (
        kp_legacy.LegacyRecordBatchBuilder
        if peer == "kafka-python"
        else aio_legacy.LegacyRecordBatchBuilder
    )
    b = builder_cls(magic, CODEC_IDS[codec], 1 << 20)
    recs = sample_records(12, headers=False)
    for r in recs:
        b.append(r.offset, r.timestamp, r.key, r.value)
    data = bytes(b.build())
    # A magic 1 producer writes relative inner offsets and a broker sets the wrapper's offset to
    # the last absolute one, as here; magic 0 inner offsets are absolute, the wrapper's unused.
    base = 1000 if magic == 1 else 0
    if codec != "none":
        data = struct.pack(">q", base + recs[-1].offset) + data[8:]

    batches = decode_batches(data)
    ts = [r.timestamp if magic == 1 else -1 for r in recs]
    if codec == "none":
        assert len(batches) == len(recs)
        offsets = [r.offset for r in recs]
    else:
        assert len(batches) == 1
        offsets = [base + r.offset for r in recs]
        assert batches[0].compression == codec
        assert (batches[0].base_offset, batches[0].last_offset) == (offsets[0], offsets[-1])
    got = [r for batch in batches for r in batch.records]
    assert [r.offset for r in got] == offsets
    assert [r.timestamp for r in got] == ts
    assert [(r.key, r.value) for r in got] == [(r.key, r.value) for r in recs]
    want_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    assert all(batch.magic == magic and batch.timestamp_type == want_type for batch in batches)


def test_legacy_wrapper_offset_zero_reads_relative_offsets():
    # Some librdkafka versions sent magic 1 wrappers at offset 0; Kafka then takes the inner
    # offsets as they are (AbstractLegacyRecordBatch.DeepRecordsIterator).
    b = kp_legacy.LegacyRecordBatchBuilder(1, CODEC_IDS["gzip"], 1 << 20)
    for i in range(3):
        b.append(i, T0, None, b"v")
    data = bytearray(b.build())
    data[:8] = struct.pack(">q", 0)
    assert [r.offset for r in decode_batches(bytes(data))[0].records] == [0, 1, 2]
    # A wrapper offset below the last inner offset (and not 0) is corrupt.
    data[:8] = struct.pack(">q", 1)
    body = bytes(data[16:])
    data[12:16] = struct.pack(">I", zlib.crc32(body))
    with pytest.raises(DecodeError, match="wrapper offset"):
        decode_batches(bytes(data))


def test_kafka_python_byte_for_byte():
    # Uncompressed, kgroup writes exactly what kafka-python's builder writes.
    recs = sample_records()
    b = kp_default.DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    for r in recs:
        b.append(r.offset, r.timestamp, r.key, r.value, list(r.headers))
    # kafka-python leaves the partition leader epoch at 0 where Java's producer writes -1.
    assert encode_batch(recs, partition_leader_epoch=0) == bytes(b.build())
    lb = kp_legacy.LegacyRecordBatchBuilder(1, 0, 1 << 20)
    for r in recs:
        lb.append(r.offset, r.timestamp, r.key, r.value)
    assert encode_batch([Record(r.offset, r.timestamp, r.key, r.value) for r in recs], magic=1) == (
        bytes(lb.build())
    )


# --- kgroup builds, peers read -----------------------------------------------------------


def kafka_python_read(data: bytes):
    records = kp_memory.MemoryRecords(data)
    out = []
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        out.append((batch, list(batch)))
    return out


def aiokafka_read(data: bytes):
    records = aio_memory.MemoryRecords(data)
    out = []
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        out.append((batch, list(batch)))
    return out


@pytest.mark.parametrize("reader", [kafka_python_read, aiokafka_read])
@pytest.mark.parametrize("codec", COMPRESSION_TYPES)
def test_kgroup_v2_batches_read_by_peers(reader, codec):
    recs = sample_records(seed=2)
    data = encode_batch(
        recs,
        compression=codec,
        base_offset=0,
        transactional=True,
        producer_id=77,
        producer_epoch=4,
        base_sequence=1000,
    )
    [(batch, got)] = reader(data)
    assert batch.compression_type == CODEC_IDS[codec]
    assert batch.is_transactional
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (77, 4, 1000)
    assert as_tuples(got) == as_tuples(recs)


@pytest.mark.parametrize(
    ("reader", "magic", "codec"),
    [
        (reader, magic, codec)
        for reader in (kafka_python_read, aiokafka_read)
        for magic in (0, 1)
        for codec in LEGACY_CODECS
        if not (reader is aiokafka_read and magic == 0 and codec == "lz4")
    ],
)
def test_kgroup_legacy_sets_read_by_peers(reader, magic, codec):
    recs = [Record(r.offset, r.timestamp, r.key, r.value) for r in sample_records(10, seed=3)]
    data = encode_batch(recs, magic=magic, compression=codec)
    got = [r for _, records in reader(data) for r in records]
    assert [(r.offset, r.key, r.value) for r in got] == [(r.offset, r.key, r.value) for r in recs]
    if magic == 1:
        assert [r.timestamp for r in got] == [r.timestamp for r in recs]


@pytest.mark.parametrize("commit", [True, False])
def test_transaction_markers(commit):
    data = encode_end_transaction_marker(
        commit, producer_id=9, producer_epoch=2, coordinator_epoch=31, timestamp=T0, base_offset=5
    )
    [batch] = decode_batches(data)
    assert batch.is_control_batch and batch.is_transactional
    assert (batch.base_offset, batch.base_sequence, len(batch)) == (5, -1, 1)
    marker = parse_control_record(batch.records[0])
    want = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    assert marker == (0, want, 31)
    # aiokafka reads the same marker.
    [(aio_batch, [aio_rec])] = aiokafka_read(data)
    assert aio_batch.is_control_batch
    assert aio_default.DefaultRecordBatch is not None
    from aiokafka.record.control_record import ABORT_MARKER, COMMIT_MARKER, ControlRecord

    assert ControlRecord.parse(aio_rec.key) == (COMMIT_MARKER if commit else ABORT_MARKER)
    # kafka-python's reader turns it into its ControlRecord.
    [(kp_batch, [kp_rec])] = kafka_python_read(data)
    assert kp_batch.is_control_batch
    assert kp_rec.type == (1 if commit else 0)


def test_control_records_kafka_rejects():
    with pytest.raises(DecodeError):
        parse_control_record(Record(key=b"\x00\x00\x00"))
    with pytest.raises(DecodeError):
        parse_control_record(Record(key=b"\xff\xff\x00\x01", value=b"\x00" * 6))
    with pytest.raises(DecodeError):
        parse_control_record(Record(key=b"\x00\x00\x00\x01", value=b"\x00\x00"))
    assert parse_control_record(Record(key=b"\x00\x00\x00\x02")) == (
        0,
        ControlRecordType.LEADER_CHANGE,
        None,
    )
    assert parse_control_record(Record(key=b"\x00\x00\x00\x63")).type == 99


# --- the produce path: headers rewritten in place ----------------------------------------


def test_broker_append_rewrites_in_place():
    data = bytearray(encode_batch(sample_records(5), compression="lz4"))
    crc = BatchHeader.parse(data).crc
    set_base_offset(data, 1_000_000)
    set_partition_leader_epoch(data, 7)
    h = BatchHeader.parse(data)
    assert (h.base_offset, h.last_offset, h.partition_leader_epoch, h.crc) == (
        1_000_000,
        1_000_004,
        7,
        crc,
    )
    set_max_timestamp(data, TimestampType.LOG_APPEND_TIME, T0 + 99)
    h = BatchHeader.parse(data)
    assert h.timestamp_type == TimestampType.LOG_APPEND_TIME and h.crc != crc
    [batch] = decode_batches(data)
    assert [r.offset for r in batch.records] == list(range(1_000_000, 1_000_005))
    assert {r.timestamp for r in batch.records} == {T0 + 99}
    # Both peers agree on the stamped batch.
    [(_, kp_recs)] = kafka_python_read(bytes(data))
    assert [r.timestamp for r in kp_recs] == [T0 + 99] * 5
    set_last_offset(data, 20)
    assert BatchHeader.parse(data).base_offset == 16


def test_read_batch_headers_walks_and_skips_a_truncated_tail():
    parts = [
        encode_batch(sample_records(3), compression=c, base_offset=0) for c in ("none", "gzip")
    ]
    data = b"".join(parts)
    heads = read_batch_headers(data + parts[0][:40])
    assert [(h.position, h.size) for h in heads] == [
        (0, len(parts[0])),
        (len(parts[0]), len(parts[1])),
    ]
    # Rewriting a batch in the middle of a buffer by its position.
    buf = bytearray(data)
    set_base_offset(buf, 50, heads[1].position)
    assert decode_batches(buf)[1].base_offset == 50
    assert BatchHeader.parse(buf, heads[1].position).base_offset == 50
    with pytest.raises(DecodeError, match="magic"):
        read_batch_headers(encode_batch([Record(0, T0, None, b"x")], magic=1))
    # verify_records reads the records too: a wrong count passes the header check alone.
    bad = bytearray(parts[1])
    bad[57:61] = struct.pack(">i", 4)
    set_max_timestamp(bad, TimestampType.CREATE_TIME, 1)  # recomputes the CRC
    assert len(read_batch_headers(bytes(bad))) == 1
    with pytest.raises(DecodeError):
        read_batch_headers(bytes(bad), verify_records=True)
    assert len(read_batch_headers(data, verify_records=True)) == 2
    bomb = encode_batch([Record(0, T0, None, bytes(1 << 20))], compression="zstd")
    with pytest.raises(DecodeError, match="max_decompressed_size"):
        read_batch_headers(bomb, verify_records=True, max_decompressed_size=1000)


def test_in_place_rewrites_need_a_writable_buffer():
    data = encode_batch(sample_records(2))
    with pytest.raises(InvalidType):
        set_base_offset(data, 5)
    with pytest.raises(DecodeError):
        set_base_offset(bytearray(data[:50]), 5)
    with pytest.raises(InvalidArgument):
        set_base_offset(bytearray(data), 5, len(data) + 1)
    with pytest.raises(InvalidArgument):
        set_max_timestamp(bytearray(data), TimestampType.NO_TIMESTAMP_TYPE, 5)


# --- the Python API ----------------------------------------------------------------------


def test_records_and_batches_are_values():
    r = Record(1, T0, "k", bytearray(b"v"), [("h", "x"), (b"b", None)])
    assert (r.key, r.value, r.headers) == (b"k", b"v", (("h", b"x"), ("b", None)))
    assert r == Record(1, T0, b"k", b"v", (("h", b"x"), ("b", None)))
    assert hash(r) == hash(Record(1, T0, b"k", b"v", (("h", b"x"), ("b", None))))
    assert r != Record(2, T0, b"k", b"v")
    assert "offset=1" in repr(r)
    with pytest.raises(InvalidType):
        Record(0, 0, 5)
    with pytest.raises(InvalidType):
        Record(0, 0, None, None, [("k",)])
    data = encode_batch(sample_records(4), compression="snappy")
    [batch] = decode_batches(data)
    assert batch == decode_batches(bytearray(data))[0] == decode_batches(memoryview(data))[0]
    assert len(batch) == 4 and list(batch) == list(batch.records)
    assert decode_batches(batch.encode())[0] == batch
    assert batch.encode() == data  # snappy output is deterministic
    legacy = encode_batch(
        [Record(i, T0 + i, None, b"v%d" % i) for i in range(3)], magic=1, compression="gzip"
    )
    [lb] = decode_batches(legacy)
    assert decode_batches(lb.encode()) == [lb]


def test_encode_batch_options():
    recs = sample_records(3)
    [b] = decode_batches(
        encode_batch(
            recs,
            timestamp_type=TimestampType.LOG_APPEND_TIME,
            max_timestamp=T0 + 1,
            partition_leader_epoch=4,
        )
    )
    assert b.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in b.records] == [T0 + 1] * 3
    assert b.partition_leader_epoch == 4
    # An empty batch keeps a producer's sequence range (as Kafka's compaction leaves it).
    [e] = decode_batches(
        encode_batch([], last_offset_delta=9, base_offset=10, producer_id=1, producer_epoch=0)
    )
    assert (e.base_offset, e.last_offset, len(e), e.base_timestamp) == (10, 19, 0, -1)
    [d] = decode_batches(encode_batch(recs, delete_horizon=T0 + 7))
    assert d.has_delete_horizon and d.base_timestamp == T0 + 7
    assert [r.timestamp for r in d.records] == [r.timestamp for r in recs]
    for bad in (
        dict(compression="brotli"),
        dict(compression="lz4", compression_level=3),
        dict(compression="gzip", compression_level=10),
        dict(timestamp_type=TimestampType.LOG_APPEND_TIME),
        dict(timestamp_type=TimestampType.NO_TIMESTAMP_TYPE),
        dict(magic=1, transactional=True),
        dict(magic=0, compression="zstd"),
        dict(magic=3),
    ):
        with pytest.raises(InvalidArgument):
            encode_batch(recs, **bad)
    with pytest.raises(InvalidArgument):
        encode_batch([Record(5, T0), Record(5, T0)])
    with pytest.raises(InvalidArgument):
        encode_batch([Record(0, T0)], base_offset=1)
    with pytest.raises(InvalidType):
        encode_batch([b"not a record"])
    with pytest.raises(InvalidType):
        encode_batch([(0, T0, b"k")])
    # Plain tuples build the same bytes as Records.
    tuples = [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in recs]
    assert encode_batch(tuples, compression="gzip") == encode_batch(recs, compression="gzip")
    assert encode_batch([t[:4] for t in tuples]) == encode_batch(
        [Record(r.offset, r.timestamp, r.key, r.value) for r in recs]
    )
    with pytest.raises(InvalidType):
        decode_batches("text")
    for level, codec in ((1, "gzip"), (9, "gzip"), (-5, "zstd"), (19, "zstd"), (9, "lz4")):
        data = encode_batch(recs, compression=codec, compression_level=level)
        assert list(decode_batches(data)[0].records) == recs


# --- hostile bytes -----------------------------------------------------------------------


def test_bad_crc_is_a_decode_error_unless_unchecked():
    data = bytearray(encode_batch(sample_records(3)))
    data[30] ^= 0x01  # the base timestamp, covered by the CRC
    with pytest.raises(DecodeError, match="crc"):
        decode_batches(data)
    with pytest.raises(DecodeError, match="crc"):
        BatchHeader.parse(data)
    assert len(decode_batches(data, verify_crc=False)[0]) == 3
    legacy = bytearray(encode_batch([Record(0, T0, None, b"x")], magic=1))
    legacy[-1] ^= 0x01
    with pytest.raises(DecodeError, match="crc"):
        decode_batches(legacy)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_decompression_bombs_stop_at_the_limit(codec):
    bomb = encode_batch([Record(0, T0, None, bytes(8 << 20))], compression=codec)
    assert len(bomb) < 1 << 20
    with pytest.raises(DecodeError, match="max_decompressed_size"):
        decode_batches(bomb, max_decompressed_size=1 << 20)
    assert len(decode_batches(bomb, max_decompressed_size=9 << 20)[0].records[0].value) == 8 << 20
    # No limit at all (found by fuzzing: the budget must not overflow).
    assert len(decode_batches(bomb, max_decompressed_size=2**64 - 1)[0].records[0].value) == 8 << 20


def test_length_past_the_end_is_a_truncated_tail():
    # As in Kafka's ByteBufferLogInputStream, a batch longer than the buffer is the cut-off end
    # of a fetch: skipped when walking a buffer, an error when asked for that batch.
    data = encode_batch(sample_records(3))
    long = data[:8] + struct.pack(">i", 2**31 - 1) + data[12:]
    assert decode_batches(long) == []
    assert read_batch_headers(long) == []
    with pytest.raises(DecodeError, match="truncated"):
        BatchHeader.parse(long)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d[:8] + struct.pack(">i", 13) + d[12:],  # length below the minimum
        lambda d: d[:8] + struct.pack(">i", 40) + d[12:],  # shorter than a v2 header
        lambda d: d[:57] + struct.pack(">i", -1) + d[61:],  # negative count
        lambda d: d[:57] + struct.pack(">i", 2**31 - 1) + d[61:],  # huge count
        lambda d: d[:61] + b"\xff" * 10 + d[71:],  # an invalid varint
        lambda d: d[:21] + b"\x00\x07" + d[23:],  # codec 7
        lambda d: d[:16] + b"\x05" + d[17:],  # magic 5
    ],
)
def test_structural_corruption(edit):
    data = encode_batch(sample_records(3))
    with pytest.raises(DecodeError):
        decode_batches(edit(data), verify_crc=False)


def test_random_corruption_only_ever_raises_decode_error():
    rng = random.Random(5)
    seeds = [
        encode_batch(sample_records(8, seed=s), compression=c)
        for s, c in enumerate(COMPRESSION_TYPES)
    ]
    seeds += [
        encode_batch([Record(i, T0, None, b"v%d" % i) for i in range(5)], magic=m, compression=c)
        for m in (0, 1)
        for c in LEGACY_CODECS
    ]
    outcomes = {"ok": 0, "error": 0}
    for i in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            op = rng.randrange(4)
            if op == 0:
                data[at] ^= 1 << rng.randrange(8)
            elif op == 1:
                data[at] = rng.randrange(256)
            elif op == 2:
                del data[at:]
            else:
                data.insert(at, rng.randrange(256))
            if not data:
                break
        try:
            decode_batches(bytes(data), verify_crc=i % 2 == 0, max_decompressed_size=1 << 20)
            outcomes["ok"] += 1
        except DecodeError:
            outcomes["error"] += 1
    # Both outcomes happen: truncation leaves valid prefixes, flips break CRCs and structure.
    assert outcomes["ok"] > 100 and outcomes["error"] > 100, outcomes


# --- end to end through a real broker ----------------------------------------------------


def _call(sock: socket.socket, api_key: int, version: int, body: bytes) -> bytes:
    """One non-flexible request (header v1) and its response body."""
    corr = random.randrange(1 << 30)
    client = b"kgroup-test"
    frame = struct.pack(">hhih", api_key, version, corr, len(client)) + client + body
    sock.sendall(struct.pack(">i", len(frame)) + frame)
    (size,) = struct.unpack(">i", read_exactly(sock, 4))
    resp = read_exactly(sock, size)
    assert struct.unpack(">i", resp[:4])[0] == corr
    return resp[4:]


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def fetch_records(port: int, topic: str, offset: int = 0) -> tuple[int, bytes]:
    """Fetch v4 of partition 0 by hand: (high watermark, raw records)."""
    body = struct.pack(">iiiib", -1, 500, 1, 8 << 20, 0)
    body += struct.pack(">i", 1) + _string(topic) + struct.pack(">iiqi", 1, 0, offset, 8 << 20)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        r = _call(s, 1, 4, body)
    pos = 4 + 4  # throttle_time_ms, topic count
    (n,) = struct.unpack_from(">h", r, pos)
    pos += 2 + n + 4  # topic name, partition count
    _, error, hw, _, n_aborted = struct.unpack_from(">ihqqi", r, pos)
    assert error == 0, f"fetch error {error}"
    pos += 4 + 2 + 8 + 8 + 4 + max(n_aborted, 0) * 16
    (size,) = struct.unpack_from(">i", r, pos)
    return hw, r[pos + 4 : pos + 4 + max(size, 0)]


def produce_records(port: int, topic: str, records: bytes) -> int:
    """Produce v3 of one batch to partition 0 by hand, acks=-1: the base offset."""
    body = struct.pack(">hhi", -1, -1, 10_000) + struct.pack(">i", 1) + _string(topic)
    body += struct.pack(">iii", 1, 0, len(records)) + records
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        r = _call(s, 0, 3, body)
    (n,) = struct.unpack_from(">h", r, 4)
    _, error, base_offset = struct.unpack_from(">ihq", r, 4 + 2 + n + 4)
    assert error == 0, f"produce error {error}"
    return base_offset


@pytest.mark.network
@pytest.mark.parametrize("codec", COMPRESSION_TYPES)
def test_librdkafka_batches_through_tansu(tansu, codec):
    from confluent_kafka import Producer

    topic = tansu.create_topic(name=f"records-{codec}-{uuid.uuid4().hex[:8]}")
    sent = [
        (b"k%d" % i, (b"payload %d " % i) * (i % 50), [("n", b"%d" % i), ("none", None)])
        for i in range(200)
    ]
    p = Producer({"bootstrap.servers": tansu.bootstrap, "compression.type": codec, "linger.ms": 20})
    for key, value, headers in sent:
        p.produce(topic, key=key, value=value, headers=headers, partition=0)
    assert p.flush(15) == 0
    del p

    hw, raw = fetch_records(tansu.port, topic)
    assert hw == len(sent)
    batches = decode_batches(raw)
    assert {b.compression for b in batches} == {codec}
    got = [r for b in batches for r in b.records]
    assert [r.offset for r in got] == list(range(len(sent)))
    assert [(r.key, r.value, [tuple(h) for h in r.headers]) for r in got] == [
        (k, v, [(hk, hv if hv is not None else None) for hk, hv in h]) for k, v, h in sent
    ]
    for h in read_batch_headers(raw):
        assert h.compression == codec


@pytest.mark.network
@pytest.mark.parametrize("codec", COMPRESSION_TYPES)
def test_kgroup_batches_consumed_by_librdkafka(tansu, codec):
    from confluent_kafka import Consumer

    topic = tansu.create_topic(name=f"records-in-{codec}-{uuid.uuid4().hex[:8]}")
    recs = sample_records(40, seed=9)
    assert produce_records(tansu.port, topic, encode_batch(recs, compression=codec)) == 0
    c = Consumer(
        {
            "bootstrap.servers": tansu.bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "check.crcs": True,
        }
    )
    from confluent_kafka import TopicPartition

    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    with contextlib.closing(c):
        for _ in range(100):
            msgs = c.consume(100, timeout=0.2)
            for m in msgs:
                assert m.error() is None, m.error()
                got.append(m)
            if len(got) >= len(recs):
                break
    assert [(m.offset(), m.key(), m.value(), m.timestamp()[1]) for m in got] == [
        (r.offset, r.key, r.value, r.timestamp) for r in recs
    ]
    assert [list(m.headers() or []) for m in got] == [list(r.headers) for r in recs]
