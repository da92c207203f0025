"""The read_committed helpers of share fetches (kgroup.broker.share.txn), against Kafka 4.2's
SharePartitionTest cases for fetchAbortedTransactionRecordBatches and
filterRecordBatchesFromAcquiredRecords."""

from __future__ import annotations

from kgroup._native.share import batch_bounds
from kgroup.broker.share.txn import aborted_batches, without
from kgroup.protocol.records import encode_batch


def txn(base: int, pid: int, n: int = 1) -> bytes:
    return encode_batch(
        [(base + i, 1000, None, b"v") for i in range(n)],
        base_offset=base,
        transactional=True,
        producer_id=pid,
        producer_epoch=0,
    )


def marker(base: int, pid: int, commit: bool) -> bytes:
    key = (0).to_bytes(2, "big") + (1 if commit else 0).to_bytes(2, "big")
    value = (0).to_bytes(2, "big") + (0).to_bytes(4, "big")
    return encode_batch(
        [(base, 1000, key, value)],
        base_offset=base,
        transactional=True,
        control=True,
        producer_id=pid,
        producer_epoch=0,
    )


def test_aborted_batches_until_the_abort_marker() -> None:
    data = txn(0, 7, 2) + txn(2, 8) + marker(3, 7, False) + txn(4, 7) + marker(5, 8, True)
    bounds = batch_bounds(data)
    # Producer 7's transaction from offset 0 was aborted (its marker at 3); producer 8's was
    # not; producer 7's batch after its marker belongs to a later transaction.
    assert aborted_batches(data, bounds, [(7, 0)]) == [(0, 1)]
    assert aborted_batches(data, bounds, [(7, 0), (7, 4)]) == [(0, 1), (4, 4)]
    assert aborted_batches(data, bounds, []) == []


def test_without_splits_acquired_ranges() -> None:
    assert without([(0, 9, 1)], [(2, 3), (7, 8)]) == (
        [(0, 1, 1), (4, 6, 1), (9, 9, 1)],
        [(2, 3), (7, 8)],
    )
    assert without([(0, 1, 2), (5, 6, 2)], [(1, 5)]) == ([(0, 0, 2), (6, 6, 2)], [(1, 1), (5, 5)])
    assert without([(0, 3, 1)], [(10, 12)]) == ([(0, 3, 1)], [])
    assert without([(4, 6, 1)], [(0, 9)]) == ([], [(4, 6)])
