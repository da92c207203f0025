"""kgroup's transactional Producer and read_committed Consumer against Apache Kafka 4.4
(tests/support/apache_kafka.py, one broker for the session), as Kafka's own clients behave
(TransactionManager, librdkafka's rdkafka_txnmgr.c, confluent-kafka's Producer API):

- a committed transaction is read by kgroup's and confluent-kafka's read_committed consumers
  (poll and consume_arrow); an aborted one by neither, while a read_uncommitted consumer reads
  its records (Kafka's TransactionsTest.testReadCommittedConsumerShouldNotSeeUndecidedData and
  the aborted-transaction filter of CompletedFetch);
- consume-transform-produce: send_offsets_to_transaction commits the group's offsets with the
  output, atomically: committed with a commit, left as they were by an abort
  (TransactionsTest.testSendOffsetsWithGroupMetadata);
- fencing: a second producer with the same transactional.id makes the first fail fatally
  (TransactionsTest.testFencingOnCommit / librdkafka test 0105);
- an abortable error (a record the topic refuses) leaves the producer usable after
  abort_transaction (TransactionsTest.testFailureToFenceEpoch's abortable counterpart,
  librdkafka 0105 do_test_txn_requires_abort_errors);
- the state rules librdkafka checks locally (0103 do_test_misuse_txn).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kgroup import Consumer, Producer
from kgroup.client.types import (
    OFFSET_BEGINNING,
    ClientError,
    OperationConflict,
    TopicPartition,
    TransactionStateError,
)
from kgroup.errors import InvalidTransactionTimeout, KafkaError, ProducerFenced

pytestmark = [pytest.mark.network, pytest.mark.slow]


@pytest.fixture(scope="module")
def bootstrap(kafka: Any) -> str:
    return str(kafka.bootstrap)


def _txn_producer(bootstrap: str, txn_id: str | None = None, **extra: Any) -> Producer:
    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": txn_id or f"txn-{uuid.uuid4().hex[:8]}",
            "linger.ms": 1,
            "transaction.timeout.ms": 10000,
            **extra,
        }
    )


def _read(
    bootstrap: str,
    topic: str,
    partitions: int,
    isolation: str,
    want: int,
    *,
    arrow: bool = False,
    settle: float = 1.0,
) -> list[bytes]:
    """Every value of ``topic`` a kgroup consumer with ``isolation`` reads: until ``want``
    records came, then ``settle`` seconds more to catch any that should not."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "isolation.level": isolation,
            "fetch.max.wait.ms": 100,
        }
    )
    try:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        out: list[bytes] = []
        deadline = time.monotonic() + 20
        quiet_until: float | None = None
        while time.monotonic() < deadline:
            if arrow:
                batch = c.consume_arrow(1000, 0.2)
                out.extend(batch.column("value").to_pylist())
            else:
                for m in c.consume(1000, 0.2):
                    assert m.error() is None, m.error()
                    out.append(m.value())
            if len(out) >= want:
                quiet_until = quiet_until or time.monotonic() + settle
                if time.monotonic() >= quiet_until:
                    break
        return out
    finally:
        c.close()


def _read_confluent(bootstrap: str, topic: str, want: int, settle: float = 1.0) -> list[bytes]:
    from confluent_kafka import Consumer as CKConsumer
    from confluent_kafka import TopicPartition as CKTopicPartition

    c = CKConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        c.assign([CKTopicPartition(topic, 0, OFFSET_BEGINNING)])
        out: list[bytes] = []
        deadline = time.monotonic() + 20
        quiet_until: float | None = None
        while time.monotonic() < deadline:
            for m in c.consume(1000, 0.2):
                if m.error() is None:
                    out.append(m.value())
            if len(out) >= want:
                quiet_until = quiet_until or time.monotonic() + settle
                if time.monotonic() >= quiet_until:
                    break
        return out
    finally:
        c.close()


@pytest.fixture
def producer(bootstrap: str) -> Iterator[Producer]:
    p = _txn_producer(bootstrap)
    p.init_transactions(20)
    yield p
    p.close(5)


# -- commit and abort, read both ways --------------------------------------------------------------


def test_committed_is_read_and_aborted_is_not_under_read_committed(
    kafka: Any, bootstrap: str, producer: Producer
) -> None:
    topic = kafka.create_topic(2)
    aborted = [f"aborted-{i}".encode() for i in range(6)]
    committed = [f"committed-{i}".encode() for i in range(6)]
    reports: list[Any] = []

    producer.begin_transaction()
    for v in aborted:
        producer.produce(topic, v, on_delivery=lambda e, m: reports.append(e))
    assert producer.flush(10) == 0  # sent: the records are in the log, the transaction open
    producer.abort_transaction(10)
    producer.begin_transaction()
    for v in committed:
        producer.produce(topic, v, key=v)
    producer.commit_transaction(10)
    assert reports == [None] * len(aborted)

    for arrow in (False, True):
        got = _read(bootstrap, topic, 2, "read_committed", len(committed), arrow=arrow)
        assert sorted(got) == sorted(committed), arrow
    # read_uncommitted: the aborted records are in the log; the markers are not records
    got = _read(bootstrap, topic, 2, "read_uncommitted", len(aborted) + len(committed))
    assert sorted(got) == sorted(aborted + committed)


def test_confluent_kafka_reads_the_committed_transaction_only(
    kafka: Any, bootstrap: str, producer: Producer
) -> None:
    topic = kafka.create_topic(1)
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, b"a%d" % i)
    producer.flush(10)
    producer.abort_transaction(10)
    producer.begin_transaction()
    producer.produce_arrow(topic, _table([b"c0", b"c1", b"c2", b"c3"]), key=None)
    producer.commit_transaction(10)
    assert _read_confluent(bootstrap, topic, 4) == [b"c0", b"c1", b"c2", b"c3"]
    # an open transaction holds read_committed consumers at its first offset (the LSO)
    producer.begin_transaction()
    producer.produce(topic, b"open")
    producer.flush(10)
    assert _read(bootstrap, topic, 1, "read_committed", 4) == [b"c0", b"c1", b"c2", b"c3"]
    assert b"open" in _read(bootstrap, topic, 1, "read_uncommitted", 8)
    producer.commit_transaction(10)
    assert _read(bootstrap, topic, 1, "read_committed", 5)[-1] == b"open"


def test_read_committed_reaches_the_end_at_the_last_stable_offset(
    kafka: Any, bootstrap: str, producer: Producer
) -> None:
    # librdkafka's end_offset under read_committed is the LSO: the partition's end (EOF) is
    # where the open transaction starts, not the high watermark past its records
    topic = kafka.create_topic(1)
    producer.begin_transaction()
    producer.produce(topic, b"c")
    producer.commit_transaction(10)  # offset 0, its marker 1
    producer.begin_transaction()
    producer.produce(topic, b"open")  # offset 2: the LSO
    assert producer.flush(10) == 0
    c = _eof_consumer(bootstrap)
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        values, eof = [], None
        deadline = time.monotonic() + 15
        while eof is None and time.monotonic() < deadline:
            for m in c.consume(10, 0.2):
                if m.error() is None:
                    values.append(m.value())
                else:
                    eof = m.offset()
        assert (values, eof) == ([b"c"], 2)
    finally:
        c.close()
        producer.abort_transaction(10)


def _table(values: list[bytes]) -> Any:
    import pyarrow as pa

    return pa.table({"value": pa.array(values, pa.binary())})


def test_an_empty_transaction_commits_and_aborts(producer: Producer) -> None:
    # nothing added: no EndTxn is sent (Java's and librdkafka's rule), the state is READY again
    producer.begin_transaction()
    producer.commit_transaction(5)
    producer.begin_transaction()
    producer.abort_transaction(5)
    producer.begin_transaction()
    producer.send_offsets_to_transaction([], _no_group(), 5)  # empty: returns at once
    producer.commit_transaction(5)


def _no_group() -> Any:
    from kgroup.client.types import ConsumerGroupMetadata

    return ConsumerGroupMetadata("unused")


# -- consume-transform-produce ---------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_consume_transform_produce_commits_offsets_with_the_output(
    kafka: Any, bootstrap: str, producer: Producer, protocol: str
) -> None:
    # with group.protocol=consumer (KIP-848) the generation is the member epoch
    src, dst = kafka.create_topic(1), kafka.create_topic(1)
    feed = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1})
    for i in range(10):
        feed.produce(src, b"%d" % i)
    assert feed.flush(10) == 0
    feed.close()
    group = f"ctp-{uuid.uuid4().hex[:8]}"
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": protocol,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "fetch.max.wait.ms": 100,
        }
    )
    try:
        consumer.subscribe([src])
        seen: list[Any] = []
        deadline = time.monotonic() + 30
        while len(seen) < 10 and time.monotonic() < deadline:
            seen.extend(m for m in consumer.consume(10, 0.5) if m.error() is None)
        assert len(seen) == 10
        first, rest = seen[:4], seen[4:]

        def transform(msgs: list[Any], commit: bool) -> None:
            producer.begin_transaction()
            for m in msgs:
                producer.produce(dst, b"out-" + m.value())
            last = msgs[-1]
            positions = [TopicPartition(src, last.partition(), last.offset() + 1)]
            producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 10)
            if commit:
                producer.commit_transaction(10)
            else:
                producer.abort_transaction(10)

        transform(first, commit=True)
        assert _committed(consumer, src) == 4
        transform(rest, commit=False)  # the offsets go with the abort
        assert _committed(consumer, src) == 4
        transform(rest, commit=True)
        assert _committed(consumer, src) == 10
        # a generation the group has moved past: the coordinator refuses the offsets
        # (ILLEGAL_GENERATION, Java's CommitFailedException): abortable, not fatal
        stale = dataclasses.replace(
            consumer.consumer_group_metadata(),
            generation_id=consumer.consumer_group_metadata().generation_id + 5,
        )
        producer.begin_transaction()
        producer.produce(dst, b"never")
        with pytest.raises(KafkaError) as e:
            producer.send_offsets_to_transaction([TopicPartition(src, 0, 1)], stale, 10)
        assert e.value.txn_requires_abort and not e.value.fatal, e.value
        assert e.value.name == "ILLEGAL_GENERATION"
        producer.abort_transaction(10)
        assert _committed(consumer, src) == 10
    finally:
        consumer.close()
    out = _read(bootstrap, dst, 1, "read_committed", 10)
    assert out == [b"out-%d" % i for i in range(10)]


def _committed(consumer: Consumer, topic: str) -> int:
    (tp,) = consumer.committed([TopicPartition(topic, 0)], timeout=10)
    return int(tp.offset)


# -- errors ----------------------------------------------------------------------------------------


def test_a_second_producer_with_the_transactional_id_fences_the_first(
    kafka: Any, bootstrap: str
) -> None:
    topic = kafka.create_topic(1)
    txn_id = f"fence-{uuid.uuid4().hex[:8]}"
    first = _txn_producer(bootstrap, txn_id)
    second = _txn_producer(bootstrap, txn_id)
    try:
        first.init_transactions(20)
        first.begin_transaction()
        first.produce(topic, b"zombie")
        assert first.flush(10) == 0
        second.init_transactions(20)  # bumps the epoch, aborts first's transaction
        with pytest.raises(ProducerFenced) as e:
            first.commit_transaction(10)
        assert e.value.fatal and not e.value.txn_requires_abort and not e.value.retriable
        # fatal: every transactional call raises it from now on
        for call in (first.abort_transaction, first.begin_transaction):
            with pytest.raises(ProducerFenced):
                call()
        second.begin_transaction()
        second.produce(topic, b"alive")
        second.commit_transaction(10)
    finally:
        first.close(2)
        second.close(2)
    assert _read(bootstrap, topic, 1, "read_committed", 1) == [b"alive"]


def test_an_abortable_error_leaves_the_producer_usable_after_abort(
    kafka: Any, bootstrap: str, producer: Producer
) -> None:
    topic = kafka.create_topic(1, config={"max.message.bytes": "2000"})
    errors: list[Any] = []
    producer.begin_transaction()
    producer.produce(topic, b"small-1")
    producer.produce(topic, b"x" * 8000, on_delivery=lambda e, m: errors.append(e))
    with pytest.raises(KafkaError) as e:
        producer.commit_transaction(10)
    assert e.value.txn_requires_abort and not e.value.fatal
    assert errors and errors[0] is not None  # MESSAGE_TOO_LARGE or RECORD_LIST_TOO_LARGE
    # only abort_transaction is allowed now
    with pytest.raises(KafkaError) as again:
        producer.produce(topic, b"more")
    assert again.value.txn_requires_abort
    with pytest.raises(KafkaError):
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 1)], _no_group())
    producer.abort_transaction(10)
    # a failed batch lost its sequence: the epoch was bumped, the next transaction commits
    producer.begin_transaction()
    producer.produce(topic, b"small-2")
    producer.commit_transaction(10)
    assert _read(bootstrap, topic, 1, "read_committed", 1) == [b"small-2"]


def test_calls_out_of_order_raise_state_errors(bootstrap: str) -> None:
    p = _txn_producer(bootstrap)
    try:
        with pytest.raises(OperationConflict):  # librdkafka's _CONFLICT before init
            p.begin_transaction()
        with pytest.raises(TransactionStateError) as e:
            p.produce("t", b"v")
        assert e.value.name == "_STATE" and e.value.code == -172
        p.init_transactions(20)
        with pytest.raises(TransactionStateError):
            p.init_transactions(5)  # a second init
        with pytest.raises(TransactionStateError):
            p.commit_transaction(5)  # no transaction
        with pytest.raises(TransactionStateError):
            p.abort_transaction(5)
        p.begin_transaction()
        with pytest.raises(TransactionStateError):
            p.begin_transaction()
        p.abort_transaction(5)
    finally:
        p.close(2)
    plain = Producer({"bootstrap.servers": bootstrap})
    try:
        with pytest.raises(ClientError, match=r"transactional\.id"):
            plain.init_transactions(1)
    finally:
        plain.close(1)


def test_a_transaction_timeout_above_the_brokers_maximum_is_fatal(bootstrap: str) -> None:
    # transaction.max.timeout.ms is 900000 by default: INVALID_TRANSACTION_TIMEOUT, which
    # librdkafka (0103) and Java treat as fatal
    p = _txn_producer(bootstrap, **{"transaction.timeout.ms": 900001})
    try:
        with pytest.raises(InvalidTransactionTimeout) as e:
            p.init_transactions(20)
        assert e.value.fatal
    finally:
        p.close(2)


def _eof_consumer(bootstrap: str) -> Consumer:
    """A read_committed consumer that reports each partition's end (its LSO)."""
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "fetch.max.wait.ms": 100,
        }
    )


def _eof_offset(bootstrap: str, topic: str, within: float) -> int | None:
    """Where a read_committed consumer finds the end of partition 0 (its LSO), within
    ``within`` seconds; None if it does not."""
    c = _eof_consumer(bootstrap)
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            for m in c.consume(10, 0.2):
                assert m.error() is not None, "read_committed read an unended transaction"
                return int(m.offset())
        return None
    finally:
        c.close()


def test_close_aborts_an_open_transaction(kafka: Any, bootstrap: str) -> None:
    # Java's Sender on close: "Aborting incomplete transaction due to shutdown". The LSO moves
    # past the aborted records and their marker at once, not when the coordinator times the
    # transaction out (transaction.timeout.ms, 10 s here, plus its check interval).
    topic = kafka.create_topic(1)
    p = _txn_producer(bootstrap)
    p.init_transactions(20)
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, b"never-%d" % i)
    assert p.flush(10) == 0  # in the log, the transaction open
    p.close(10)
    assert _eof_offset(bootstrap, topic, 5) == 4  # 3 records, the abort marker
    # A closed producer whose transaction was already committed sends nothing more.
    p = _txn_producer(bootstrap)
    p.init_transactions(20)
    p.begin_transaction()
    p.produce(topic, b"kept")
    p.commit_transaction(10)
    p.close(10)
    assert _read(bootstrap, topic, 1, "read_committed", 1) == [b"kept"]
