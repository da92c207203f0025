"""read_committed for share groups (``share.isolation.level``): which log batches a share fetch
acquired that belong to aborted transactions, and the acquired ranges without them (Kafka 4.2's
``SharePartition.fetchAbortedTransactionRecordBatches`` and
``filterRecordBatchesFromAcquiredRecords``)."""

from __future__ import annotations

import heapq

from kgroup.protocol.records import BatchHeader, decode_batches

__all__ = ["aborted_batches", "without"]

_TRANSACTIONAL = 0x10
_CONTROL = 0x20
_ABORT = 0


def _is_abort_marker(data: bytes, start: int, end: int) -> bool:
    for b in decode_batches(data[start:end], verify_crc=False):
        for r in b.records:
            key = r.key or b""
            return len(key) >= 4 and int.from_bytes(key[2:4], "big", signed=True) == _ABORT
    return False


def aborted_batches(
    data: bytes, bounds: list[tuple[int, int, int]], aborted: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """The (base, last) offsets of the batches of ``data`` (``bounds``: base, last, end) that
    belong to the aborted transactions ``aborted`` ((producer id, first offset), from the log):
    a transactional batch of a producer whose aborted transaction began at or before the
    batch's last offset, until that producer's abort marker."""
    queue = [(first, pid) for pid, first in aborted]
    heapq.heapify(queue)
    aborting: set[int] = set()
    out = []
    start = 0
    for base, last, end in bounds:
        h = BatchHeader.parse(data, start, verify_crc=False)
        if h.producer_id >= 0:
            while queue and queue[0][0] <= last:
                aborting.add(heapq.heappop(queue)[1])
            if h.attributes & _CONTROL:
                if _is_abort_marker(data, start, end):
                    aborting.discard(h.producer_id)
            elif h.attributes & _TRANSACTIONAL and h.producer_id in aborting:
                out.append((base, last))
        start = end
    return out


def without(
    acquired: list[tuple[int, int, int]], removed: list[tuple[int, int]]
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int]]]:
    """``acquired`` ranges (first, last, delivery count) less the ``removed`` (base, last)
    ranges (both ascending), and the offsets taken out, as ascending (first, last) ranges."""
    kept: list[tuple[int, int, int]] = []
    taken: list[tuple[int, int]] = []
    for first, last, count in acquired:
        cur = first
        for base, end in removed:
            if end < cur or base > last:
                continue
            if base > cur:
                kept.append((cur, base - 1, count))
            lo, hi = max(base, cur), min(end, last)
            taken.append((lo, hi))
            cur = hi + 1
            if cur > last:
                break
        if cur <= last:
            kept.append((cur, last, count))
    return kept, taken
