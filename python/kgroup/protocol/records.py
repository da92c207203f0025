"""kgroup.protocol.records: Kafka record batches, built and read in Rust.

Batches of magic 2 are read and written with CRC-32C and the four codecs Kafka uses (gzip,
snappy, lz4, zstd); legacy message sets (magic 0 and 1) are read, compressed wrappers included,
and can be written. A broker can check and restamp a produced batch without decoding its
records: :class:`BatchHeader` reads the header and checks the CRC, and :func:`set_base_offset`,
:func:`set_partition_leader_epoch` and :func:`set_max_timestamp` rewrite it in place.

>>> from kgroup.protocol.records import Record, decode_batches, encode_batch
>>> data = encode_batch([Record(0, 1700000000000, b"k", b"v")], compression="zstd")
>>> [batch] = decode_batches(data)
>>> batch.compression, batch.records[0].value
('zstd', b'v')

Bad bytes raise :class:`kgroup.errors.CorruptRecord` (a ``DecodeError``; its ``kind`` says what
is wrong); decompression never produces more than
``max_decompressed_size`` bytes in one call.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from enum import IntEnum
from typing import NamedTuple

from kgroup._native.protocol import records as _native
from kgroup._native.protocol.records import BatchHeader, Record, RecordBatch

__all__ = [
    "COMPRESSION_TYPES",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "BatchHeader",
    "ControlRecord",
    "ControlRecordType",
    "Record",
    "RecordBatch",
    "TimestampType",
    "decode_batches",
    "encode_batch",
    "encode_end_transaction_marker",
    "parse_control_record",
    "read_batch_headers",
    "set_base_offset",
    "set_last_offset",
    "set_max_timestamp",
    "set_partition_leader_epoch",
]

#: Kafka's ``compression.type`` names, in codec id order.
COMPRESSION_TYPES: tuple[str, ...] = tuple(_native.COMPRESSION_TYPES)
#: The default bound on what one decode call may decompress: 256 MiB.
DEFAULT_MAX_DECOMPRESSED_SIZE: int = _native.DEFAULT_MAX_DECOMPRESSED_SIZE

Buffer = bytes | bytearray | memoryview


class TimestampType(IntEnum):
    """What a batch's timestamps mean, with the ids of Java's ``TimestampType``."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class ControlRecordType(IntEnum):
    """The type of a control record (the key's second int16), with Kafka's ids."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


class ControlRecord(NamedTuple):
    """A control record's key, and for a transaction marker its coordinator epoch.

    ``type`` is a :class:`ControlRecordType`, or a plain int for a type Kafka added later
    (Kafka's clients skip those).
    """

    version: int
    type: ControlRecordType | int
    coordinator_epoch: int | None


RecordTuple = (
    tuple[int, int, bytes | None, bytes | None]
    | tuple[int, int, bytes | None, bytes | None, Iterable[tuple[str, bytes | None]]]
)


def encode_batch(
    records: Iterable[Record | RecordTuple],
    *,
    compression: str = "none",
    compression_level: int | None = None,
    magic: int = 2,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
    max_timestamp: int | None = None,
    transactional: bool = False,
    control: bool = False,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    last_offset_delta: int | None = None,
    delete_horizon: int | None = None,
) -> bytes:
    """Build one batch from ``records`` as Kafka's ``MemoryRecordsBuilder`` does.

    ``records`` holds :class:`Record` objects or plain ``(offset, timestamp, key, value)`` /
    ``(offset, timestamp, key, value, headers)`` tuples (the faster way: no object per record).
    Each record's offset delta is ``record.offset - base_offset``; offsets must increase. The
    base timestamp is the first record's (or ``delete_horizon``, which sets attribute bit 6),
    the last offset delta is the last record's, and the max timestamp is the records' largest
    for CREATE_TIME, or ``max_timestamp`` (the append time, required) for LOG_APPEND_TIME.
    ``max_timestamp`` and ``last_offset_delta`` override the derived values (an empty batch
    keeps the producer's sequence range this way, as Kafka's compaction leaves it).

    ``compression`` is one of :data:`COMPRESSION_TYPES`; ``compression_level`` follows Kafka's
    ranges (gzip 1-9, zstd -131072-22, lz4 only 9). ``magic`` 0 or 1 writes a legacy message
    set: one message per record, or one compressed wrapper message (no zstd, no headers).
    Compression runs without the GIL.
    """
    return _native.encode_batch(
        records,
        compression=compression,
        compression_level=compression_level,
        magic=magic,
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        timestamp_type=int(timestamp_type),
        max_timestamp=max_timestamp,
        transactional=transactional,
        control=control,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        last_offset_delta=last_offset_delta,
        delete_horizon=delete_horizon,
    )


def decode_batches(
    data: Buffer,
    *,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    verify_crc: bool = True,
) -> list[RecordBatch]:
    """Read every complete batch of ``data`` (magic 0, 1 or 2, as a Fetch response holds them).

    A truncated last batch is skipped, as Kafka's clients skip it. ``verify_crc`` checks the
    CRC of each batch (or legacy message), as Kafka's consumer does by default. Decompression
    may produce at most ``max_decompressed_size`` bytes over the whole call. Inputs of 16 KiB
    and more are read without the GIL. Raises :class:`kgroup.errors.DecodeError`.
    """
    return _native.decode_batches(
        data, max_decompressed_size=max_decompressed_size, verify_crc=verify_crc
    )


def read_batch_headers(
    data: Buffer,
    *,
    verify_crc: bool = True,
    verify_records: bool = False,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> list[BatchHeader]:
    """The headers of every complete v2 batch in ``data``, CRCs checked, records untouched.

    Each header's ``position`` and ``size`` locate its batch in ``data``; a truncated last
    batch is left out. A legacy (magic 0/1) entry raises :class:`kgroup.errors.DecodeError`.
    With ``verify_records``, every batch's records are also read and checked (decompressed
    within ``max_decompressed_size``) without making a Python object per record: what a broker
    checks of a produced batch before it appends it as received.
    """
    return _native.read_batch_headers(
        data,
        verify_crc=verify_crc,
        verify_records=verify_records,
        max_decompressed_size=max_decompressed_size,
    )


def set_base_offset(buf: bytearray | memoryview, base_offset: int, position: int = 0) -> None:
    """Rewrite the base offset of the v2 batch at ``position`` in ``buf``, in place.

    The CRC does not cover the base offset, so this is all a broker changes when it assigns
    offsets to an uncompressed or compressed v2 batch.
    """
    _native.set_base_offset(buf, base_offset, position)


def set_last_offset(buf: bytearray | memoryview, last_offset: int, position: int = 0) -> None:
    """Kafka's ``setLastOffset``: base offset = ``last_offset`` - last offset delta, in place."""
    _native.set_last_offset(buf, last_offset, position)


def set_partition_leader_epoch(buf: bytearray | memoryview, epoch: int, position: int = 0) -> None:
    """Rewrite the partition leader epoch of the v2 batch at ``position``, in place."""
    _native.set_partition_leader_epoch(buf, epoch, position)


def set_max_timestamp(
    buf: bytearray | memoryview,
    timestamp_type: TimestampType | int,
    max_timestamp: int,
    position: int = 0,
) -> None:
    """Kafka's ``setMaxTimestamp``: set the timestamp type and max timestamp, recompute the CRC.

    A broker stamping LOG_APPEND_TIME calls it with the append time; every record then reads
    back with that timestamp.
    """
    _native.set_max_timestamp(buf, int(timestamp_type), max_timestamp, position)


def encode_end_transaction_marker(
    commit: bool,
    *,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timestamp: int | None = None,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """A control batch holding one COMMIT (or ABORT) marker, as a transaction coordinator
    writes it: transactional, control, no sequence; ``timestamp`` defaults to now (ms)."""
    if timestamp is None:
        timestamp = time.time_ns() // 1_000_000
    return _native.encode_end_transaction_marker(
        commit,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        coordinator_epoch=coordinator_epoch,
        timestamp=timestamp,
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
    )


def parse_control_record(record: Record) -> ControlRecord:
    """Read a control record (a record of a control batch) as Kafka does.

    Raises :class:`kgroup.errors.DecodeError` for a key shorter than 4 bytes or with a
    negative version, and for a COMMIT or ABORT whose value is not a transaction marker.
    """
    version, type_id, epoch = _native.parse_control_record(record.key, record.value)
    kind: ControlRecordType | int
    try:
        kind = ControlRecordType(type_id)
    except ValueError:
        kind = type_id
    return ControlRecord(version, kind, epoch)
