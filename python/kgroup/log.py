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
  ``max_timestamp`` serve ListOffsets. Segments they take out of the log are renamed
  ``.deleted`` and removed by ``purge(now_ms)`` once the topic's ``file.delete.delay.ms``
  passed (``next_purge_ms`` says when); ``delete(rename_to)`` closes every file of a deleted
  topic's log at once.
- A failed fsync, or a failed append whose partial batch could not be cut, takes the log
  offline (``failure`` says why): it answers ``KafkaStorageError`` until it is opened again,
  and is never marked cleanly closed, so that recovery checks it.
- ``inject_fault(op, path_contains, errno, times=None)`` makes this process's next storage
  operations fail (``write``, which writes half its bytes first, ``sync``, ``create``,
  ``rename``, ``remove``, ``truncate``), for tests of what follows a failing disk;
  ``clear_faults()`` disarms them.

Transactions (Kafka's transaction protocol v1): a producer's first transactional batch opens
its transaction, and a non-transactional batch while it is open raises ``InvalidTxnState``.
``append_marker(producer_id, producer_epoch, commit, coordinator_epoch, now_ms)`` writes the
coordinator's COMMIT or ABORT marker (one control batch, one offset; ``InvalidProducerEpoch`` or
``TransactionCoordinatorFenced`` for stale epochs) and completes it; aborted transactions are
kept in each segment's ``.txnindex``. ``first_unstable_offset`` bounds read_committed fetches
(the LSO is the smaller of it and the high watermark), ``aborted_transactions(start, end)``
lists the (producer id, first offset) pairs a read_committed fetch returns,
``ongoing_transaction(pid)`` and ``producers()`` serve DescribeProducers. A coordinator's own
batches to its internal topic go through ``append(..., origin="coordinator")`` (no sequence
checks). Compaction never cleans past the first unstable offset and keeps markers and aborted
data.

A ``Log`` is safe to use from several threads; the slow calls release the GIL.
"""

from kgroup._native.log import (
    AppendResult,
    CompactionReport,
    FileSlice,
    Log,
    MaintenanceReport,
    ProducerInfo,
    RecoveryReport,
    TimestampOffset,
    clear_faults,
    inject_fault,
)

__all__ = [
    "AppendResult",
    "CompactionReport",
    "FileSlice",
    "Log",
    "MaintenanceReport",
    "ProducerInfo",
    "RecoveryReport",
    "TimestampOffset",
    "clear_faults",
    "inject_fault",
]
