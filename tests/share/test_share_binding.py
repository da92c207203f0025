"""The binding of the share partition (kgroup._native.share): the calls the broker's share
handlers make, each crossing once per partition. The state machine itself is tested in Rust
(rust/share/tests.rs); these pin what the binding adds: tuples in and out, errors as
kgroup.errors classes, batch headers read off a log read."""

from __future__ import annotations

import pytest

from kgroup import errors
from kgroup._native import share
from kgroup.protocol.records import encode_batch

AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4


def test_acquire_acknowledge_and_expire() -> None:
    sp = share.SharePartition(0, record_lock_duration_ms=1000)
    assert sp.next_fetch_offset() == 0
    # One 10-record log batch with MaxRecords 3: taken whole (Kafka's soft limit).
    got, count = sp.acquire("m", 3, 3, 0, [(0, 9)], now_ms=0)
    assert (got, count) == ([(0, 9, 1)], 10)
    assert sp.record(4) == (1, 1, "m", 1000)
    u = sp.acknowledge("m", [(0, 2, [1])], now_ms=5)
    assert u is not None and u.start_offset == 3
    assert u.state_batches == [(0, 2, ACKNOWLEDGED, 1)]
    assert sp.next_deadline == 1000
    u = sp.expire(1000)
    assert u is not None and u.state_batches == [(3, 9, AVAILABLE, 1)]
    assert sp.next_fetch_offset() == 3
    got, _ = sp.acquire("m", 500, 500, 3, [(0, 9)], now_ms=1000)
    assert got == [(3, 9, 2)]


def test_acknowledge_errors_are_kafka_errors_and_change_nothing() -> None:
    sp = share.SharePartition(0)
    sp.acquire("m", 500, 500, 0, [(0, 4)], now_ms=0)
    # Kafka's SharePartition.acknowledge: another member's record is INVALID_RECORD_STATE.
    with pytest.raises(errors.InvalidRecordState):
        sp.acknowledge("other", [(0, 0, [1])], now_ms=0)
    # A range past the window's records is INVALID_REQUEST; the first batch is undone.
    with pytest.raises(errors.InvalidRequest):
        sp.acknowledge("m", [(0, 0, [1]), (6, 6, [1])], now_ms=0)
    assert sp.record(0) == (1, 1, "m", 30000)


def test_validate_acknowledgement_batches() -> None:
    share.validate_acknowledgement_batches([(0, 2, [1]), (3, 4, [1, 2])])
    # KafkaApis.validateAcknowledgementBatches: reversed range, type 5, renew before v2.
    for bad in ([(3, 2, [1])], [(0, 0, [5])], [(0, 1, [1, 2, 1])], [(0, 0, [])]):
        with pytest.raises(errors.InvalidRequest):
            share.validate_acknowledgement_batches(bad)
    with pytest.raises(errors.InvalidRequest):
        share.validate_acknowledgement_batches([(0, 0, [4])], supports_renew=True)
    share.validate_acknowledgement_batches([(0, 0, [4])], supports_renew=True, is_renew_ack=True)


def test_release_member_counts_the_delivery() -> None:
    # Kafka 4.2 (KAFKA-19972): a session release counts as a delivery; 4.1 undid it.
    for undo, count in ((False, 1), (True, 0)):
        sp = share.SharePartition(0, undo_delivery_on_release=undo)
        sp.acquire("m", 500, 500, 0, [(0, 0)], now_ms=0)
        u = sp.release_member("m")
        assert u is not None and u.state_batches == [(0, 0, AVAILABLE, count)]
        assert sp.release_member("m") is None


def test_persisted_state_recovers_a_partition() -> None:
    sp = share.SharePartition(0)
    sp.acquire("m", 500, 500, 0, [(0, 4)], now_ms=0)
    state = share.PersistedState(0, 0)
    u = sp.acknowledge("m", [(1, 1, [3])], now_ms=0)
    assert u is not None
    state.apply(u)
    u = sp.release_member("m")
    assert u is not None
    state.apply(u)
    assert state == sp.snapshot()
    again = share.SharePartition(state=state)
    assert again.start_offset == 0 and again.next_fetch_offset() == 0
    assert again.record(1) == (ARCHIVED, 1, None, None)
    with pytest.raises(errors.InvalidRequest):
        share.SharePartition(state=share.PersistedState(0, share.UNINITIALIZED_START_OFFSET))


def test_batch_bounds_reads_headers() -> None:
    a = encode_batch([(5, 1, None, b"a"), (6, 1, None, b"b")], base_offset=5)
    b = encode_batch([(7, 1, None, b"c")], base_offset=7)
    data = a + b
    assert share.batch_bounds(data) == [(5, 6, len(a)), (7, 7, len(data))]
    # A truncated last batch (a size-limited read) is left out.
    assert share.batch_bounds(data[:-1]) == [(5, 6, len(a))]
