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

Storage: every file operation of the log engine goes through one layer that serves a path
under a *memory root* from an in-process memory filesystem (same names, renames, listings,
truncation and recovery; fsync does nothing, injected faults apply alike) and every other path
from the disk. ``memory_root(path=None)`` registers one (a fresh ``/kgroup-memory/<pid>-<n>``
by default) and returns its path; ``drop_memory_root(path)`` frees it; ``is_memory(path)`` and
``memory_used(path)`` (bytes held) tell about it. Memory roots are per process. The broker's
own small files go through the same layer with ``read_file``, ``read_text``,
``write_atomically`` (``<path>.tmp``, fsync, rename, fsync of the folder), ``file_exists``,
``is_dir``, ``make_dirs``, ``list_dir`` (sorted names), ``remove_file`` and ``remove_tree``,
which raise ``OSError`` as the ``os`` functions do (``FileNotFoundError``...); unlike the log's
writes they are not subject to ``inject_fault``.
"""

import os

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
    drop_memory_root,
    file_exists,
    inject_fault,
    is_dir,
    is_memory,
    list_dir,
    make_dirs,
    memory_root,
    memory_used,
    read_file,
    remove_file,
    remove_tree,
    write_file_atomically,
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
    "drop_memory_root",
    "file_exists",
    "inject_fault",
    "is_dir",
    "is_memory",
    "list_dir",
    "make_dirs",
    "memory_root",
    "memory_used",
    "read_file",
    "read_text",
    "remove_file",
    "remove_tree",
    "write_atomically",
]


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text (UTF-8), from memory or disk."""
    return read_file(path).decode()


def write_atomically(path: str | os.PathLike[str], data: str | bytes, sync: bool = True) -> None:
    """Replace the file with ``data`` (text is written as UTF-8) through ``<path>.tmp``
    renamed into place: a reader, or a restart after a crash, finds the old contents or the new
    ones. With ``sync`` the file is fsynced before the rename and its folder after."""
    write_file_atomically(path, data.encode() if isinstance(data, str) else data, sync)
