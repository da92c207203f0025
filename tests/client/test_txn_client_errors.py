"""kgroup's transactional Producer against a scripted broker (support.fake_broker): the
answers a real coordinator gives only under load or failure, and the requests the client must
(and must not) send. Java's TransactionManagerTest and librdkafka's test 0105 pin the same:

- InitProducerId answered CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS and
  NOT_COORDINATOR is retried (the last after FindCoordinator again); INVALID_TRANSACTION_TIMEOUT
  is fatal;
- an init_transactions that times out goes on in the background; calling it again resumes it
  without a second InitProducerId (librdkafka's 0105 do_test_txn_coord_req_destroy_timeout);
- AddPartitionsToTxn (v3 or lower) names every partition waiting at the time in one request,
  before any Produce to them; Produce carries the transactional id and transactional batches;
- no EndTxn for a transaction that added nothing (TransactionManagerTest
  testCommitWithoutAddingPartitions / librdkafka "No partitions registered");
- TRANSACTION_ABORTABLE from EndTxn(commit) is abortable; PRODUCER_FENCED from AddPartitionsToTxn
  is fatal;
- EndTxn's other errors as Java 4.1's EndTxnHandler takes them: UNKNOWN_PRODUCER_ID abortable,
  with a new epoch after the abort (KIP-360); TRANSACTION_ABORTABLE while aborting and any
  error it does not name, fatal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.fake_broker import FakeBroker

from kgroup import Producer
from kgroup.client.types import (
    OFFSET_INVALID,
    ClientTimeout,
    ConsumerGroupMetadata,
    OperationConflict,
    TopicPartition,
)
from kgroup.errors import (
    ConcurrentTransactions,
    CoordinatorLoadInProgress,
    InvalidTransactionTimeout,
    InvalidTxnState,
    KafkaError,
    NotCoordinator,
    ProducerFenced,
    TransactionAbortable,
    UnknownProducerId,
)
from kgroup.protocol import ApiKey
from kgroup.protocol.records import decode_batches

pytestmark = pytest.mark.network


class TxnBroker(FakeBroker):
    """FakeBroker with a transaction coordinator whose answers the test scripts: each api's
    list of error codes is answered in turn (then NONE)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script: dict[int, list[int]] = {}
        self.delay: dict[int, float] = {}
        self.requests: list[tuple[int, int, Any]] = []
        self.epoch = 0

    def _next(self, api: int, body: Any, v: int) -> int:
        with self._lock:
            self.requests.append((api, v, body))
            codes = self.script.get(api) or []
            code = codes.pop(0) if codes else 0
        time.sleep(self.delay.get(api, 0))
        return code

    def sent(self, api: int) -> list[Any]:
        with self._lock:
            return [b for a, _, b in self.requests if a == api]

    def _init_producer_id(self, body: dict, v: int) -> dict:
        code = self._next(ApiKey.INIT_PRODUCER_ID, body, v)
        if not code:
            self.epoch += 1
        return {
            "throttle_time_ms": 0,
            "error_code": code,
            "producer_id": 7000,
            "producer_epoch": self.epoch,
        }

    def _add_partitions_to_txn(self, body: dict, v: int) -> dict:
        code = self._next(ApiKey.ADD_PARTITIONS_TO_TXN, body, v)
        return {
            "throttle_time_ms": 0,
            "results_by_topic_v3_and_below": [
                {
                    "name": t["name"],
                    "results_by_partition": [
                        {"partition_index": p, "partition_error_code": code}
                        for p in t["partitions"]
                    ],
                }
                for t in body["v3_and_below_topics"]
            ],
        }

    def _end_txn(self, body: dict, v: int) -> dict:
        return {"throttle_time_ms": 0, "error_code": self._next(ApiKey.END_TXN, body, v)}

    def _add_offsets_to_txn(self, body: dict, v: int) -> dict:
        return {"throttle_time_ms": 0, "error_code": self._next(ApiKey.ADD_OFFSETS_TO_TXN, body, v)}

    def _txn_offset_commit(self, body: dict, v: int) -> dict:
        code = self._next(ApiKey.TXN_OFFSET_COMMIT, body, v)
        return {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": t["name"],
                    "partitions": [
                        {"partition_index": p["partition_index"], "error_code": code}
                        for p in t["partitions"]
                    ],
                }
                for t in body["topics"]
            ],
        }

    def _produce(self, body: dict, v: int) -> dict | None:
        with self._lock:
            self.requests.append((ApiKey.PRODUCE, v, body))
        return super()._produce(body, v)


@pytest.fixture
def broker() -> Iterator[TxnBroker]:
    with TxnBroker(partitions=3).serve() as b:
        yield b


def _producer(broker: TxnBroker, **extra: Any) -> Producer:
    return Producer(
        {
            "bootstrap.servers": f"127.0.0.1:{broker.port}",
            "transactional.id": "tx-fake",
            "transaction.timeout.ms": 5000,
            "retry.backoff.ms": 20,
            "linger.ms": 1,
            **extra,
        }
    )


def test_init_retries_coordinator_errors(broker: TxnBroker) -> None:
    broker.script[ApiKey.INIT_PRODUCER_ID] = [
        ConcurrentTransactions.code,
        CoordinatorLoadInProgress.code,
        NotCoordinator.code,
    ]
    finds_before = sum(1 for f in broker.frames if f.api_key == ApiKey.FIND_COORDINATOR)
    with _producer(broker) as p:
        p.init_transactions(10)
    sent = broker.sent(ApiKey.INIT_PRODUCER_ID)
    assert len(sent) == 4
    assert sent[0]["transactional_id"] == "tx-fake"
    assert sent[0]["transaction_timeout_ms"] == 5000
    finds = [f for f in broker.frames if f.api_key == ApiKey.FIND_COORDINATOR]
    assert len(finds) - finds_before == 2  # the first, and again after NOT_COORDINATOR


def test_invalid_transaction_timeout_is_fatal(broker: TxnBroker) -> None:
    broker.script[ApiKey.INIT_PRODUCER_ID] = [InvalidTransactionTimeout.code]
    with _producer(broker) as p:
        with pytest.raises(InvalidTransactionTimeout) as e:
            p.init_transactions(10)
        assert e.value.fatal
        with pytest.raises(InvalidTransactionTimeout):
            p.begin_transaction()


def test_a_timed_out_init_resumes_without_asking_again(broker: TxnBroker) -> None:
    broker.delay[ApiKey.INIT_PRODUCER_ID] = 1.0
    with _producer(broker) as p:
        with pytest.raises(ClientTimeout) as e:
            p.init_transactions(0.2)
        assert e.value.retriable
        p.init_transactions(5)
        p.begin_transaction()
    assert len(broker.sent(ApiKey.INIT_PRODUCER_ID)) == 1


def test_partitions_are_added_before_their_records_are_sent(broker: TxnBroker) -> None:
    with _producer(broker, **{"linger.ms": 50}) as p:
        p.init_transactions(10)
        p.begin_transaction()
        for part in range(3):
            p.produce("t", b"v", partition=part)
        p.commit_transaction(10)
    kinds = [(a, v) for a, v, _ in broker.requests]
    adds = broker.sent(ApiKey.ADD_PARTITIONS_TO_TXN)
    assert len(adds) == 1 and all(v <= 3 for a, v in kinds if a == ApiKey.ADD_PARTITIONS_TO_TXN)
    assert adds[0]["v3_and_below_transactional_id"] == "tx-fake"
    assert adds[0]["v3_and_below_producer_epoch"] == 1
    assert [(t["name"], sorted(t["partitions"])) for t in adds[0]["v3_and_below_topics"]] == [
        ("t", [0, 1, 2])
    ]
    apis = [a for a, _ in kinds]
    assert apis.index(ApiKey.ADD_PARTITIONS_TO_TXN) < apis.index(ApiKey.PRODUCE)
    for body in broker.sent(ApiKey.PRODUCE):
        assert body["transactional_id"] == "tx-fake"
        for t in body["topic_data"]:
            for part in t["partition_data"]:
                (batch,) = decode_batches(part["records"])
                assert batch.is_transactional and batch.producer_epoch == 1
    (end,) = broker.sent(ApiKey.END_TXN)
    assert end["committed"] is True


def test_a_transaction_that_added_nothing_sends_no_end_txn(broker: TxnBroker) -> None:
    with _producer(broker) as p:
        p.init_transactions(10)
        p.begin_transaction()
        p.commit_transaction(5)
        p.begin_transaction()
        p.abort_transaction(5)
    assert broker.sent(ApiKey.END_TXN) == []


def test_transaction_abortable_on_commit_then_abort(broker: TxnBroker) -> None:
    broker.script[ApiKey.END_TXN] = [TransactionAbortable.code]
    with _producer(broker) as p:
        p.init_transactions(10)
        p.begin_transaction()
        p.produce("t", b"v", partition=0)
        with pytest.raises(TransactionAbortable) as e:
            p.commit_transaction(10)
        assert e.value.txn_requires_abort and not e.value.fatal
        p.abort_transaction(10)
        p.begin_transaction()
        p.produce("t", b"w", partition=0)
        p.commit_transaction(10)
    assert [b["committed"] for b in broker.sent(ApiKey.END_TXN)] == [True, False, True]


def test_fenced_on_add_partitions_is_fatal(broker: TxnBroker) -> None:
    broker.script[ApiKey.ADD_PARTITIONS_TO_TXN] = [ProducerFenced.code]
    reports: list[Any] = []
    done = threading.Event()
    with _producer(broker) as p:
        p.init_transactions(10)
        p.begin_transaction()
        p.produce("t", b"v", partition=1, on_delivery=lambda e, m: (reports.append(e), done.set()))
        with pytest.raises(KafkaError) as e:
            p.commit_transaction(10)
        assert isinstance(e.value, ProducerFenced) and e.value.fatal
        with pytest.raises(ProducerFenced):
            p.produce("t", b"w")
    assert reports and reports[0] is not None
    assert broker.sent(ApiKey.PRODUCE) == []


def test_send_offsets_sends_the_group_metadata_and_conflicts_while_running(
    broker: TxnBroker,
) -> None:
    broker.delay[ApiKey.ADD_OFFSETS_TO_TXN] = 1.0
    group = ConsumerGroupMetadata("g", 7, "member-1", "static-1")
    positions = [TopicPartition("in", 0, 42), TopicPartition("in", 1, OFFSET_INVALID)]
    with _producer(broker) as p:
        p.init_transactions(10)
        p.begin_transaction()
        with pytest.raises(ClientTimeout):
            p.send_offsets_to_transaction(positions, group, 0.2)
        # librdkafka's _CONFLICT: another call while that one goes on in the background
        with pytest.raises(OperationConflict):
            p.commit_transaction(5)
        p.send_offsets_to_transaction(positions, group, 5)  # resumed, not sent again
        p.commit_transaction(5)
    (add,) = broker.sent(ApiKey.ADD_OFFSETS_TO_TXN)
    assert add["group_id"] == "g" and add["transactional_id"] == "tx-fake"
    ((_, v, commit),) = [r for r in broker.requests if r[0] == ApiKey.TXN_OFFSET_COMMIT]
    assert v >= 3
    assert (commit["generation_id"], commit["member_id"], commit["group_instance_id"]) == (
        7,
        "member-1",
        "static-1",
    )
    # the logical offset is left out (confluent-kafka: "invalid offsets are ignored")
    assert [
        (t["name"], p["partition_index"], p["committed_offset"])
        for t in commit["topics"]
        for p in t["partitions"]
    ] == [("in", 0, 42)]
    (end,) = broker.sent(ApiKey.END_TXN)  # offsets alone are something to commit
    assert end["committed"] is True


def test_unknown_producer_id_on_end_txn_is_abortable_and_bumps_the_epoch(
    broker: TxnBroker,
) -> None:
    # Java's EndTxnHandler: UNKNOWN_PRODUCER_ID is abortable where the epoch can be bumped
    # (KIP-360): the abort after it ends with InitProducerId, a new epoch, and the producer
    # goes on. So for a commit and for an abort.
    broker.script[ApiKey.END_TXN] = [UnknownProducerId.code, 0, UnknownProducerId.code]
    with _producer(broker) as p:
        p.init_transactions(10)
        p.begin_transaction()
        p.produce("t", b"v", partition=0)
        with pytest.raises(UnknownProducerId) as e:
            p.commit_transaction(10)
        assert e.value.txn_requires_abort and not e.value.fatal
        p.abort_transaction(10)
        p.begin_transaction()
        p.produce("t", b"w", partition=0)
        assert p.flush(10) == 0  # added to the transaction: the abort sends EndTxn
        with pytest.raises(UnknownProducerId) as e:
            p.abort_transaction(10)
        assert e.value.txn_requires_abort and not e.value.fatal
        p.abort_transaction(10)
        p.begin_transaction()
        p.produce("t", b"x", partition=0)
        p.commit_transaction(10)
    assert [b["committed"] for b in broker.sent(ApiKey.END_TXN)] == [
        True,
        False,
        False,
        False,
        True,
    ]
    # The first InitProducerId, then one after each abort that followed the error.
    assert len(broker.sent(ApiKey.INIT_PRODUCER_ID)) == 3


@pytest.mark.parametrize(
    ("commit", "code"),
    [(True, -1), (False, -1), (False, TransactionAbortable.code), (True, InvalidTxnState.code)],
)
def test_other_end_txn_errors_are_fatal(broker: TxnBroker, commit: bool, code: int) -> None:
    # Java: "Unhandled error in EndTxnResponse", and TRANSACTION_ABORTABLE while aborting
    # ("Failed to abort transaction": aborting again would loop), are fatal.
    broker.script[ApiKey.END_TXN] = [code]
    with _producer(broker) as p:
        p.init_transactions(10)
        p.begin_transaction()
        p.produce("t", b"v", partition=0)
        assert p.flush(10) == 0
        end = p.commit_transaction if commit else p.abort_transaction
        with pytest.raises(KafkaError) as e:
            end(10)
        assert e.value.fatal
        with pytest.raises(KafkaError):
            p.begin_transaction()
