"""The transaction coordinator through its binding, as a broker hosts it: real request frames
in (encoded with kgroup.protocol.encode_request), response frames out (decoded with
decode_response), appends and markers carried out and reported, time passed in."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.apache_kafka import run_tool

from kgroup import errors, protocol
from kgroup.protocol.records import set_base_offset
from kgroup.txn import CONFIG_KEYS, TXN_API_KEYS, Append, Coordinator, Respond, WriteMarkers

INIT, ADD_PARTITIONS, ADD_OFFSETS, END, DESCRIBE, LIST = 22, 24, 25, 26, 65, 66


@dataclass
class Host:
    """A broker's side of the coordinator: frames in, frames out, a log per partition."""

    coordinator: Coordinator
    now: int = 1_000_000
    correlation: int = 0
    pids: itertools.count[int] = field(default_factory=lambda: itertools.count(5000))
    answers: dict[int, protocol.Response] = field(default_factory=dict)
    versions: dict[int, tuple[int, int]] = field(default_factory=dict)
    logs: dict[int, bytearray] = field(default_factory=dict)
    markers: list[WriteMarkers] = field(default_factory=list)
    write_markers: bool = True

    def send(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        self.correlation += 1
        token = self.correlation
        frame = protocol.encode_request(api_key, version, token, "client", body)
        self.versions[token] = (api_key, version)
        self.apply(
            self.coordinator.handle_frame(self.now, token, frame[4:], lambda: next(self.pids))
        )
        return self.answers[token].body

    def apply(self, effects: list[Respond | Append | WriteMarkers]) -> None:
        queue = list(effects)
        while queue:
            match queue.pop(0):
                case Respond(token, frame):
                    api_key, version = self.versions[token]
                    response = protocol.decode_response(api_key, version, frame[4:])
                    assert response.correlation_id == token
                    assert token not in self.answers
                    self.answers[token] = response
                case Append(token, partition, records):
                    self.logs.setdefault(partition, bytearray()).extend(records)
                    queue += self.coordinator.appended(self.now, token, 0)
                case WriteMarkers() as m:
                    self.markers.append(m)
                    if self.write_markers:
                        queue += self.coordinator.markers_written(
                            self.now, m.transactional_id, m.producer_id, m.producer_epoch
                        )

    def init(self, txn: str, version: int = 4) -> tuple[int, int]:
        r = self.send(INIT, version, {"transactional_id": txn, "transaction_timeout_ms": 60_000})
        assert r.error_code == 0
        return r.producer_id, r.producer_epoch

    def add(
        self, txn: str, pid: int, epoch: int, topic: str, partitions: list[int], version: int = 3
    ) -> Any:
        return self.send(
            ADD_PARTITIONS,
            version,
            {
                "v3_and_below_transactional_id": txn,
                "v3_and_below_producer_id": pid,
                "v3_and_below_producer_epoch": epoch,
                "v3_and_below_topics": [{"name": topic, "partitions": partitions}],
            },
        )

    def end(self, txn: str, pid: int, epoch: int, commit: bool, version: int = 3) -> int:
        body = {
            "transactional_id": txn,
            "producer_id": pid,
            "producer_epoch": epoch,
            "committed": commit,
        }
        return int(self.send(END, version, body).error_code)


def test_a_transaction_commits_through_frames() -> None:
    h = Host(Coordinator({"transaction.state.log.num.partitions": 5}))
    assert set(TXN_API_KEYS) == {22, 24, 25, 26, 65, 66}
    assert "transaction.max.timeout.ms" in CONFIG_KEYS
    pid, epoch = h.init("app-1")
    assert (pid, epoch) == (5000, 0)
    r = h.add("app-1", pid, epoch, "orders", [0, 1])
    assert [
        (t.name, [(p.partition_index, p.partition_error_code) for p in t.results_by_partition])
        for t in r.results_by_topic_v3_and_below
    ] == [("orders", [(0, 0), (1, 0)])]
    r = h.send(
        ADD_OFFSETS,
        3,
        {
            "transactional_id": "app-1",
            "producer_id": pid,
            "producer_epoch": epoch,
            "group_id": "my-group",
        },
    )
    assert r.error_code == 0
    # The produce path's check (KIP-890 part 1).
    assert h.coordinator.verify("app-1", pid, epoch, "orders", 1) == 0
    assert (
        h.coordinator.verify("app-1", pid, epoch, "orders", 2) == errors.TransactionAbortable.code
    )
    assert h.end("app-1", pid, epoch, commit=True) == 0
    [m] = h.markers
    assert (m.transactional_id, m.producer_id, m.producer_epoch, m.commit, m.coordinator_epoch) == (
        "app-1",
        pid,
        epoch,
        True,
        0,
    )
    # "my-group" is __consumer_offsets partition 12 of 50.
    assert m.partitions == [("__consumer_offsets", 12), ("orders", 0), ("orders", 1)]
    assert h.coordinator.transaction_state("app-1") == "CompleteCommit"
    assert h.coordinator.partition_for("app-1") in h.logs
    d = h.send(DESCRIBE, 0, {"transactional_ids": ["app-1", "nope"]})
    assert [
        (s.transactional_id, s.error_code, s.transaction_state) for s in d.transaction_states
    ] == [("app-1", 0, "CompleteCommit"), ("nope", errors.TransactionalIdNotFound.code, "")]
    lst = h.send(
        LIST,
        1,
        {
            "state_filters": ["CompleteCommit", "Nope"],
            "producer_id_filters": [],
            "duration_filter": -1,
        },
    )
    assert [s.transactional_id for s in lst.transaction_states] == ["app-1"]
    assert list(lst.unknown_state_filters) == ["Nope"]


def test_transactions_are_read_as_describe_transactions_answers() -> None:
    # transactions() is DescribeTransactions' view of every id, as plain data.
    h = Host(Coordinator({"transaction.state.log.num.partitions": 5}))
    assert h.coordinator.transactions() == []
    pid, epoch = h.init("app-1")
    h.add("app-1", pid, epoch, "orders", [1, 0])
    [t] = h.coordinator.transactions()
    d = h.send(DESCRIBE, 0, {"transactional_ids": ["app-1"]})
    [s] = d.transaction_states
    assert t["transactional_id"] == "app-1"
    assert (t["producer_id"], t["producer_epoch"]) == (s.producer_id, s.producer_epoch)
    assert (t["state"], t["pending_state"]) == (s.transaction_state, None) == ("Ongoing", None)
    assert t["timeout_ms"] == s.transaction_timeout_ms
    assert t["start_time_ms"] == s.transaction_start_time_ms
    assert t["partitions"] == [("orders", 0), ("orders", 1)]


def test_a_new_instance_fences_the_old_one() -> None:
    # Kafka's TransactionCoordinatorTest
    # .shouldAbortTransactionOnHandleInitPidWhenExistingTransactionInOngoingState
    h = Host(Coordinator())
    h.write_markers = False
    pid, epoch = h.init("app")
    h.add("app", pid, epoch, "t", [0])
    r = h.send(INIT, 4, {"transactional_id": "app", "transaction_timeout_ms": 60_000})
    assert r.error_code == errors.ConcurrentTransactions.code
    [m] = h.markers
    assert (m.commit, m.producer_epoch) == (False, epoch + 1)
    # The old producer: PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH before EndTxn v2.
    assert h.end("app", pid, epoch, commit=True, version=2) == errors.ProducerFenced.code
    assert h.end("app", pid, epoch, commit=True, version=1) == errors.InvalidProducerEpoch.code
    h.apply(h.coordinator.markers_written(h.now, "app", m.producer_id, m.producer_epoch))
    assert h.init("app") == (pid, epoch + 2)


def test_state_survives_a_restart_and_decided_transactions_finish() -> None:
    # Kafka's TransactionStateManagerTest.shouldWriteTxnMarkersForTransactionInPreparedCommitState
    h = Host(Coordinator({"transaction.state.log.num.partitions": 1}))
    h.write_markers = False
    pid, epoch = h.init("app")
    h.add("app", pid, epoch, "t", [3])
    assert h.end("app", pid, epoch, commit=True) == 0
    fresh = Coordinator({"transaction.state.log.num.partitions": 1})
    stats = fresh.load(0, bytes(h.logs[0]), coordinator_epoch=4)
    assert stats["transactions"] == 1
    assert fresh.transaction_state("app") == "PrepareCommit"
    assert fresh.next_deadline is not None and fresh.next_deadline < h.now
    [m] = [e for e in fresh.tick(h.now) if isinstance(e, WriteMarkers)]
    assert (m.commit, m.coordinator_epoch, m.partitions) == (True, 4, [("t", 3)])
    [append] = fresh.markers_written(h.now, "app", pid, epoch)
    assert isinstance(append, Append)
    assert fresh.appended(h.now, append.token) == []
    assert fresh.transaction_state("app") == "CompleteCommit"


def test_producer_id_errors_answer_the_request() -> None:
    h = Host(Coordinator())

    def no_ids() -> int:
        raise errors.CoordinatorLoadInProgress("no producer id block yet")

    frame = protocol.encode_request(
        INIT, 4, 1, "c", {"transactional_id": "x", "transaction_timeout_ms": 1000}
    )
    [respond] = h.coordinator.handle_frame(h.now, "tok", frame[4:], no_ids)
    assert isinstance(respond, Respond) and respond.token == "tok"
    r = protocol.decode_response(INIT, 4, respond.frame[4:])
    assert r.body.error_code == errors.CoordinatorLoadInProgress.code


def test_broker_verification_and_unknown_partitions_through_frames() -> None:
    # KafkaApis.handleAddPartitionsToTxnRequest: v4+ batches with verify_only (KIP-890 part 1);
    # an unknown partition fails and the others are not attempted.
    h = Host(Coordinator())
    h.coordinator.set_topics({"orders": 2})
    pid, epoch = h.init("app")
    r = h.add("app", pid, epoch, "orders", [1, 7])
    assert [
        (p.partition_index, p.partition_error_code)
        for p in r.results_by_topic_v3_and_below[0].results_by_partition
    ] == [
        (1, errors.OperationNotAttempted.code),
        (7, errors.UnknownTopicOrPartition.code),
    ]
    assert (
        h.add("app", pid, epoch, "orders", [1])
        .results_by_topic_v3_and_below[0]
        .results_by_partition[0]
        .partition_error_code
        == 0
    )
    batch = {
        "transactions": [
            {
                "transactional_id": "app",
                "producer_id": pid,
                "producer_epoch": epoch,
                "verify_only": True,
                "topics": [{"name": "orders", "partitions": [0, 1]}],
            }
        ]
    }
    r = h.send(ADD_PARTITIONS, 5, batch)
    [txn] = r.results_by_transaction
    assert txn.transactional_id == "app"
    assert [
        (p.partition_index, p.partition_error_code)
        for p in txn.topic_results[0].results_by_partition
    ] == [
        (0, errors.TransactionAbortable.code),
        (1, 0),
    ]
    assert h.coordinator.verify("app", pid, epoch, "orders", 0) == errors.TransactionAbortable.code


@pytest.mark.slow
def test_kafkas_dump_log_segments_reads_the_records(tmp_path: Path) -> None:
    # Kafka's own `kafka-dump-log --transaction-log-decoder` decodes what the coordinator writes
    # to __transaction_state: the records are Kafka's TransactionLogKey/Value.
    h = Host(Coordinator({"transaction.state.log.num.partitions": 1}))
    pid, epoch = h.init("app")
    h.add("app", pid, epoch, "orders", [0, 1])
    assert h.end("app", pid, epoch, commit=True) == 0
    segment = tmp_path / "__transaction_state-0" / "00000000000000000000.log"
    segment.parent.mkdir()
    # Each append is one record in a batch at base offset 0; a log gives them consecutive
    # offsets.
    data, position, offset = h.logs[0], 0, 0
    while position < len(data):
        set_base_offset(data, offset, position)
        position += 12 + int.from_bytes(data[position + 8 : position + 12], "big")
        offset += 1
    segment.write_bytes(data)
    out = run_tool(
        "org.apache.kafka.tools.DumpLogSegments",
        "--files",
        str(segment),
        "--transaction-log-decoder",
        "--print-data-log",
    ).stdout
    payloads = [
        json.loads(line.split(" payload: ")[1]) for line in out.splitlines() if " payload: " in line
    ]
    keys = {
        line.split(" key: ")[1].split(" payload: ")[0]
        for line in out.splitlines()
        if " key: " in line
    }
    assert keys == {'{"type":"0","data":{"transactionalId":"app"}}'}
    assert [(p["version"], p["data"]["transactionStatus"]) for p in payloads] == [
        ("0", "Empty"),
        ("0", "Ongoing"),
        ("0", "PrepareCommit"),
        ("0", "CompleteCommit"),
    ]
    ongoing = payloads[1]["data"]
    assert (ongoing["producerId"], ongoing["producerEpoch"], ongoing["transactionTimeoutMs"]) == (
        pid,
        epoch,
        60_000,
    )
    assert ongoing["transactionPartitions"] == [{"topic": "orders", "partitionIds": [0, 1]}]
    assert ongoing["transactionStartTimestampMs"] == h.now
    assert payloads[0]["data"]["transactionPartitions"] is None
    assert payloads[3]["data"]["transactionPartitions"] == []
