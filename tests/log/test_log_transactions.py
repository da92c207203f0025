"""Kafka transactions in kgroup.log through the binding: transactional batches built with
kgroup.protocol.records, markers, the first unstable offset, the aborted-transaction list a
read_committed fetch returns, and reopening after an unclean stop."""

import pathlib

import pytest

from kgroup import errors
from kgroup.log import Log
from kgroup.protocol.records import (
    ControlRecordType,
    decode_batches,
    encode_batch,
    parse_control_record,
)

NOW = 1_700_000_000_000


def txn(pid: int, seq: int, *keys: str, epoch: int = 0) -> bytes:
    return encode_batch(
        [(i, NOW, k.encode(), b"v-" + k.encode()) for i, k in enumerate(keys)],
        transactional=True,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
    )


@pytest.fixture
def folder(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "payments-0"


def test_markers_move_the_lso_and_abort_into_the_index(folder: pathlib.Path) -> None:
    # Kafka's UnifiedLogTest.testFirstUnstableOffsetWithTransactionalData and
    # testCollectAbortedTransactions, end to end.
    log = Log(folder, {"segment.bytes": 400}, now_ms=NOW)
    assert log.first_unstable_offset is None
    assert log.append(txn(1, 0, "a", "b"), NOW).base_offset == 0
    assert log.append(txn(2, 0, "c"), NOW).base_offset == 2
    assert log.first_unstable_offset == 0
    assert log.ongoing_transaction(1) == 0 and log.ongoing_transaction(2) == 2
    marker = log.append_marker(1, 0, False, 3, NOW, leader_epoch=5)
    assert (marker.base_offset, marker.last_offset, marker.records) == (3, 3, 1)
    assert log.first_unstable_offset == 2
    assert log.aborted_transactions(0, log.log_end_offset) == [(1, 0)]
    assert log.aborted_transactions(4, log.log_end_offset) == []
    log.append_marker(2, 0, True, 3, NOW)
    assert log.first_unstable_offset is None
    assert log.ongoing_transaction(2) is None
    # The markers are control batches consumers see and skip.
    data = log.read(3, 1 << 20, max_offset=log.log_end_offset)
    batches = decode_batches(data)
    assert [b.base_offset for b in batches] == [3, 4]
    assert all(b.is_control_batch and b.is_transactional for b in batches)
    assert batches[0].partition_leader_epoch == 5
    kinds = [parse_control_record(b.records[0]) for b in batches]
    assert [(k.type, k.coordinator_epoch) for k in kinds] == [
        (ControlRecordType.ABORT, 3),
        (ControlRecordType.COMMIT, 3),
    ]
    info = {p.producer_id: p for p in log.producers()}
    assert info[1].coordinator_epoch == 3 and info[1].current_txn_start_offset == -1
    assert info[2].last_sequence == 0 and info[2].producer_epoch == 0


def test_transaction_errors_are_kafka_error_classes(folder: pathlib.Path) -> None:
    log = Log(folder, now_ms=NOW)
    log.append(txn(1, 0, "a", epoch=2), NOW)
    plain = encode_batch([(0, NOW, b"k", b"v")], producer_id=1, producer_epoch=2, base_sequence=1)
    with pytest.raises(errors.InvalidTxnState):
        log.append(plain, NOW)
    with pytest.raises(errors.InvalidProducerEpoch):
        log.append_marker(1, 1, True, 0, NOW)
    log.append_marker(1, 2, True, 4, NOW)
    with pytest.raises(errors.TransactionCoordinatorFenced):
        log.append_marker(1, 2, True, 3, NOW)
    # Clients may not write control batches, whatever the origin.
    marker = encode_batch(
        [(0, NOW, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x04")],
        transactional=True,
        control=True,
        producer_id=1,
        producer_epoch=2,
    )
    for origin in ("client", "coordinator"):
        with pytest.raises(errors.InvalidRecord):
            log.append(marker, NOW, origin=origin)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="origin"):
        log.append(plain, NOW, origin="replication")  # type: ignore[arg-type]


def test_coordinator_origin_takes_offset_commits_without_sequence(folder: pathlib.Path) -> None:
    # The group coordinator's transactional offset commits: producer id and epoch, sequence -1
    # (Kafka's AppendOrigin.COORDINATOR), on a compacted topic.
    log = Log(folder, {"cleanup.policy": "compact"}, now_ms=NOW)
    commit = txn(9, -1, "group/topic/0", epoch=3)
    with pytest.raises(errors.InvalidRecord):
        log.append(commit, NOW)
    first = log.append(commit, NOW, origin="coordinator")
    again = log.append(commit, NOW, origin="coordinator")
    assert not again.duplicate and again.base_offset == first.base_offset + 1
    assert log.first_unstable_offset == first.base_offset
    with pytest.raises(errors.InvalidProducerEpoch):
        log.append(txn(9, -1, "g", epoch=2), NOW, origin="coordinator")
    log.append_marker(9, 3, True, 0, NOW)
    assert log.first_unstable_offset is None


def test_an_unclean_stop_keeps_open_and_aborted_transactions(folder: pathlib.Path) -> None:
    # kill -9 with segments cut: the open transaction still holds the LSO after reopening,
    # the aborted ones are collected again from the rebuilt .txnindex.
    config = {"segment.bytes": 300}
    log = Log(folder, config, now_ms=NOW)
    log.append(txn(1, 0, "a", "b"), NOW)
    log.append(txn(2, 0, "c"), NOW)
    log.append_marker(1, 0, False, 1, NOW)
    for i in range(4):
        log.append(encode_batch([(0, NOW, b"k%d" % i, b"x" * 60)]), NOW)
    log.append(txn(3, 0, "d"), NOW)
    log.append_marker(3, 0, False, 1, NOW)
    log.flush()
    assert log.segment_count > 2
    aborted = log.aborted_transactions(0, log.log_end_offset)
    assert aborted == [(1, 0), (3, 8)]
    del log  # no close: as after kill -9
    log = Log(folder, config, now_ms=NOW)
    assert not log.recovery.clean
    assert log.first_unstable_offset == 2
    assert log.ongoing_transaction(2) == 2
    assert log.aborted_transactions(0, log.log_end_offset) == aborted
    log.append_marker(2, 0, True, 1, NOW)
    log.close()
    log = Log(folder, config, now_ms=NOW)
    assert log.recovery.clean
    assert log.first_unstable_offset is None
    assert log.aborted_transactions(0, log.log_end_offset) == aborted
    assert any(p.name.endswith(".txnindex") for p in folder.iterdir())


def test_compaction_keeps_what_transactions_need(folder: pathlib.Path) -> None:
    log = Log(folder, {"cleanup.policy": "compact", "segment.bytes": 250}, now_ms=NOW)
    log.append(encode_batch([(0, NOW, b"k", b"committed")]), NOW)
    log.append(txn(1, 0, "k"), NOW)
    log.append_marker(1, 0, False, 0, NOW)
    log.append(txn(2, 0, "j"), NOW)
    for i in range(6):
        log.append(encode_batch([(0, NOW, b"x%d" % (i % 2), b"filler")]), NOW)
    assert log.first_unstable_offset == 3
    report = log.compact(NOW, force=True)
    assert report.cleaned and report.end_offset <= 3
    values = {
        r.offset: r.value
        for b in decode_batches(log.read(0, 1 << 20, max_offset=log.log_end_offset))
        for r in b.records
    }
    assert values[0] == b"committed" and values[1] == b"v-k"
    assert log.aborted_transactions(0, log.log_end_offset) == [(1, 1)]
