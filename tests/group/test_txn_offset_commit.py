"""TxnOffsetCommit through the group coordinator's binding, as a broker hosts it: request frames
encoded with kgroup.protocol.encode_request and handed to ``handle_frame``, response frames
decoded with decode_response, appends written to a log per partition, and the transaction's
marker appended by the host and reported with ``end_transaction`` (Kafka's
OffsetMetadataManager.commitTransactionalOffset and replayEndTransactionMarker, KIP-447)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kgroup import errors, protocol
from kgroup.group import Append, Coordinator, Respond
from kgroup.protocol.records import decode_batches, encode_end_transaction_marker

TXN_COMMIT, COMMIT, FETCH = 28, 8, 9
PID, EPOCH = 4000, 3


@dataclass
class Host:
    """A broker's side: frames in, frames out, appends kept per partition unless held."""

    coordinator: Coordinator
    now: int = 1_000
    correlation: int = 0
    hold: bool = False
    versions: dict[int, tuple[int, int]] = field(default_factory=dict)
    answers: dict[int, Any] = field(default_factory=dict)
    appends: list[Append] = field(default_factory=list)
    logs: dict[int, bytearray] = field(default_factory=dict)

    def send(self, api_key: int, version: int, body: dict[str, Any]) -> int:
        self.correlation += 1
        token = self.correlation
        frame = protocol.encode_request(api_key, version, token, "txn-client", body)
        self.versions[token] = (api_key, version)
        self.apply(self.coordinator.handle_frame(self.now, token, frame[4:], "/127.0.0.1"))
        return token

    def apply(self, effects: list[Respond | Append]) -> None:
        for e in effects:
            match e:
                case Respond(token, frame):
                    api_key, version = self.versions[token]
                    response = protocol.decode_response(api_key, version, frame[4:])
                    assert response.correlation_id == token
                    self.answers[token] = response.body
                case Append():
                    self.appends.append(e)
        if not self.hold:
            self.finish(0)

    def finish(self, error_code: int) -> None:
        while self.appends:
            a = self.appends.pop(0)
            if error_code == 0:
                self.logs.setdefault(a.partition, bytearray()).extend(a.records)
            self.apply(self.coordinator.appended(self.now, a.token, error_code))

    def marker(self, group: str, producer_id: int, commit: bool) -> None:
        """Appends the transaction's marker to the group's partition and reports it."""
        p = self.coordinator.partition_for(group)
        self.logs.setdefault(p, bytearray()).extend(
            encode_end_transaction_marker(
                commit,
                producer_id=producer_id,
                producer_epoch=EPOCH,
                coordinator_epoch=0,
                timestamp=self.now,
            )
        )
        self.apply(self.coordinator.end_transaction(self.now, p, producer_id, commit))


def txn_commit(
    h: Host,
    version: int,
    offsets: dict[tuple[str, int], int],
    *,
    group: str = "g",
    producer_id: int = PID,
    **kw: Any,
) -> int:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, p), o in offsets.items():
        part: dict[str, Any] = {"partition_index": p, "committed_offset": o}
        part["committed_metadata"] = kw.get("meta")
        if version >= 2:
            part["committed_leader_epoch"] = -1
        topics.setdefault(topic, []).append(part)
    body: dict[str, Any] = {
        "transactional_id": "tx-1",
        "group_id": group,
        "producer_id": producer_id,
        "producer_epoch": EPOCH,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
    }
    if version >= 3:
        body["generation_id"] = kw.get("generation", -1)
        body["member_id"] = kw.get("member_id", "")
        body["group_instance_id"] = None
    return h.send(TXN_COMMIT, version, body)


def errors_of(h: Host, token: int) -> dict[tuple[str, int], int]:
    return {
        (t["name"], p["partition_index"]): p["error_code"]
        for t in h.answers[token]["topics"]
        for p in t["partitions"]
    }


def fetch(h: Host, topics: list[tuple[str, list[int]]] | None, stable: bool) -> dict:
    entries = None if topics is None else [{"name": t, "partition_indexes": ps} for t, ps in topics]
    body = {"groups": [{"group_id": "g", "topics": entries}], "require_stable": stable}
    r = h.answers[h.send(FETCH, 8, body)]
    return {
        (t["name"], p["partition_index"]): (p["committed_offset"], p["error_code"])
        for t in r["groups"][0]["topics"]
        for p in t["partitions"]
    }


def host() -> Host:
    return Host(Coordinator({"group.initial.rebalance.delay.ms": 0}, seed=1))


UNSTABLE = errors.UnstableOffsetCommit.code


@pytest.mark.parametrize("version", range(5))
def test_offsets_wait_for_the_commit_marker_at_every_version(version: int) -> None:
    h = host()
    h.hold = True
    t = txn_commit(h, version, {("orders", 0): 5, ("orders", 1): 6})
    assert t not in h.answers, "answered once the batch is in the log"
    [append] = h.appends
    assert append.partition == h.coordinator.partition_for("g")
    [batch] = decode_batches(append.records)
    assert batch.is_transactional and not batch.is_control_batch
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (PID, EPOCH, -1)
    assert len(batch.records) == 2
    h.hold = False
    h.finish(0)
    assert errors_of(h, t) == {("orders", 0): 0, ("orders", 1): 0}
    # Invisible until the marker; with require_stable the partitions are unstable.
    assert fetch(h, [("orders", [0, 1])], False) == {("orders", 0): (-1, 0), ("orders", 1): (-1, 0)}
    assert fetch(h, [("orders", [0, 1])], True) == {
        ("orders", 0): (-1, UNSTABLE),
        ("orders", 1): (-1, UNSTABLE),
    }
    h.marker("g", PID, commit=True)
    assert fetch(h, [("orders", [0, 1])], True) == {("orders", 0): (5, 0), ("orders", 1): (6, 0)}


def test_an_abort_marker_drops_the_offsets_and_keeps_the_committed_ones() -> None:
    h = host()
    plain = {
        "group_id": "g",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [
            {"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 1}]}
        ],
    }
    h.send(COMMIT, 8, plain)
    txn_commit(h, 3, {("orders", 0): 9})
    assert fetch(h, None, True) == {("orders", 0): (-1, UNSTABLE)}
    assert fetch(h, None, False) == {("orders", 0): (1, 0)}
    h.marker("g", PID, commit=False)
    assert fetch(h, None, True) == {("orders", 0): (1, 0)}


def test_group_checks_and_the_error_on_every_partition() -> None:
    h = host()
    # An unknown group with a generation: ILLEGAL_GENERATION on every partition.
    t = txn_commit(h, 3, {("a", 0): 1, ("b", 1): 1}, generation=4, member_id="m")
    illegal = errors.IllegalGeneration.code
    assert errors_of(h, t) == {("a", 0): illegal, ("b", 1): illegal}
    # Unknown topics per partition, metadata too large per partition, the rest committed.
    h.coordinator.set_topics({"a": 1})
    t = txn_commit(h, 3, {("a", 0): 1, ("a", 1): 1, ("zz", 0): 1})
    unknown = errors.UnknownTopicOrPartition.code
    assert errors_of(h, t) == {("a", 0): 0, ("a", 1): unknown, ("zz", 0): unknown}
    t = txn_commit(h, 3, {("a", 0): 1}, meta="x" * 5000)
    assert errors_of(h, t) == {("a", 0): errors.OffsetMetadataTooLarge.code}


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (0, errors.CoordinatorNotAvailable.code),
        (1, errors.CoordinatorNotAvailable.code),
        (2, errors.CoordinatorLoadInProgress.code),
        (4, errors.CoordinatorLoadInProgress.code),
    ],
)
def test_a_loading_partition_before_v2_is_coordinator_not_available(
    version: int, expected: int
) -> None:
    h = host()
    h.coordinator.load(h.coordinator.partition_for("g"), b"", last=False)
    t = txn_commit(h, version, {("a", 0): 1, ("b", 2): 1})
    assert errors_of(h, t) == {("a", 0): expected, ("b", 2): expected}


def test_a_failed_append_answers_the_mapped_error_and_drops_the_offsets() -> None:
    h = host()
    h.hold = True
    t = txn_commit(h, 3, {("a", 0): 1})
    h.finish(errors.NotEnoughReplicas.code)
    assert errors_of(h, t) == {("a", 0): errors.CoordinatorNotAvailable.code}
    assert fetch(h, [("a", [0])], True) == {("a", 0): (-1, 0)}


def test_an_open_transaction_survives_a_restart_and_its_marker_ends_it() -> None:
    h = host()
    txn_commit(h, 3, {("orders", 0): 7})
    again = host()
    for partition, log in h.logs.items():
        again.coordinator.load(partition, bytes(log))
    assert fetch(again, [("orders", [0])], True) == {("orders", 0): (-1, UNSTABLE)}
    again.marker("g", PID, commit=True)
    assert fetch(again, [("orders", [0])], True) == {("orders", 0): (7, 0)}
    # The log with its marker loads committed.
    third = host()
    for partition, log in h.logs.items():
        third.coordinator.load(partition, bytes(log) + bytes(again.logs.get(partition, b"")))
    assert fetch(third, [("orders", [0])], True) == {("orders", 0): (7, 0)}
