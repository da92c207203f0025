"""kgroup.log: the broker's storage of one topic-partition, in Kafka's file layout.

A :class:`Log` owns one folder (the broker names it ``<data dir>/<topic>-<partition>``) of
segments ``<base offset, 20 digits>.log`` holding record batches as produced (offsets
assigned, leader epoch stamped, CRC checked), their ``.index`` and ``.timeindex``, producer
snapshots ``<offset>.snapshot`` and three checkpoint files. Per-record work is Rust.

::

    log = Log("/tmp/data/orders-0", {"segment.bytes": 1 << 20}, now_ms=now)
    r = log.append(records, now_ms=now, leader_epoch=0)   # a Produce request's record set
    log.flush()                                           # acks=all: one fsync for many
    data = log.read(r.base_offset, 1 << 20, max_offset=log.log_end_offset)

- ``Log(path, config, now_ms)`` opens or creates the log and recovers it after an unclean
  stop; ``log.recovery`` says what was found (bytes truncated, indexes rebuilt...).
- ``append`` validates as Kafka's LogValidator does for clients and raises the
  ``kgroup.errors.KafkaError`` subclass of Kafka's code (``CorruptMessage``, ``InvalidRecord``,
  ``MessageTooLarge``, ``InvalidTimestamp``, ``OutOfOrderSequenceNumber``,
  ``InvalidProducerEpoch``...); a retry of one of an idempotent producer's last five batches
  returns the original offsets with ``duplicate=True``. A failing disk raises
  ``KafkaStorageError``.
- ``read`` / ``read_slice`` answer a fetch with whole batches of one segment
  (``OffsetOutOfRange`` outside [log start, log end]); ``read_slice`` gives a file descriptor,
  position and length for ``os.sendfile``.
- ``flush`` fsyncs without blocking appends and reads: run it in an executor and answer every
  acks=all produce whose offset is below what it returns.
- ``maintenance(now_ms)`` applies retention and producer expiry, ``compact(now_ms)`` cleans a
  compacted topic, ``delete_records`` serves DeleteRecords, ``offset_for_timestamp`` and
  ``max_timestamp`` serve ListOffsets.

A ``Log`` is safe to use from several threads; the slow calls release the GIL.
"""

from kgroup._native.log import (
    AppendResult,
    CompactionReport,
    FileSlice,
    Log,
    MaintenanceReport,
    RecoveryReport,
    TimestampOffset,
)

__all__ = [
    "AppendResult",
    "CompactionReport",
    "FileSlice",
    "Log",
    "MaintenanceReport",
    "RecoveryReport",
    "TimestampOffset",
]
