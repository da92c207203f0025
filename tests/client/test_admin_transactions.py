"""kgroup's AdminClient on real transactions (KIP-664): ``list_transactions``,
``describe_transactions``, ``describe_producers`` and ``abort_transaction`` read and end what
confluent-kafka's transactional Producer left, as Java's Admin does on Apache Kafka 4.4 (the
behaviour Kafka's ``TransactionsCommandTest`` and ``AdminClientIntegrationTest`` pin
through Java's client), with a read_committed consumer as the judge of an abort."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from support.kgroup_broker import run_broker
from support.transactions import (
    TXN_BROKERS,
    TXN_TIMEOUT_MS,
    bootstrap_of,
    hanging_transaction,
    new_topic,
    produce,
    read_committed,
    transactional_producer,
)

from kgroup.broker import Broker
from kgroup.client import (
    AdminClient,
    ProducerState,
    TopicPartition,
    TransactionDescription,
    TransactionListing,
)
from kgroup.errors import (
    InvalidProducerEpoch,
    NetworkException,
    TransactionalIdNotFound,
    UnknownTopicOrPartition,
)

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def txn_kgroup_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(
        tmp_path_factory.mktemp("txn-admin"), {"transaction.partition.verification.enable": False}
    ) as b:
        yield b


@pytest.fixture(params=TXN_BROKERS)
def bootstrap(request: pytest.FixtureRequest) -> str:
    return bootstrap_of(request, request.param)


@pytest.fixture
def admin(bootstrap: str) -> Iterator[AdminClient]:
    with AdminClient({"bootstrap.servers": bootstrap}) as a:
        yield a


def wait_state(admin: AdminClient, tid: str, state: str, timeout: float = 10) -> Any:
    """The description of ``tid`` once in ``state`` (the coordinator's markers are written
    after EndTxn answers: PrepareCommit comes first)."""
    deadline = time.monotonic() + timeout
    while True:
        d = admin.describe_transactions([tid], request_timeout=5)[tid].result()
        if d.state == state or time.monotonic() > deadline:
            return d
        time.sleep(0.1)


def last_stable_offset(admin: AdminClient, tp: TopicPartition) -> int:
    return int(admin.list_offsets({tp: "latest"}, isolation_level=1)[tp].result(10).offset)


def test_open_transaction_is_listed_described_and_aborted(
    admin: AdminClient, bootstrap: str
) -> None:
    topic = new_topic(bootstrap)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    tid = f"tx-{uuid.uuid4().hex[:8]}"
    with transactional_producer(bootstrap, tid) as p:
        # A committed transaction first (offsets 0, 1, its marker 2), then one left open that
        # starts at offset 3 of partition 0 and writes to partition 1 too.
        p.begin_transaction()
        produce(p, topic, 0, [b"c0", b"c1"])
        p.commit_transaction(10)
        p.begin_transaction()
        produce(p, topic, 0, [b"o0", b"o1"])
        produce(p, topic, 1, [b"o2"])

        listed = admin.list_transactions(request_timeout=5).result()
        mine = [t for t in listed if t.transactional_id == tid]
        assert len(mine) == 1 and mine[0].state == "Ongoing"
        pid = mine[0].producer_id
        assert mine[0] == TransactionListing(tid, pid, "Ongoing", mine[0].coordinator_id)
        # The filters are the coordinator's (TransactionStateManager.listTransactionStates).
        assert [t.transactional_id for t in admin.list_transactions([], [pid]).result()] == [tid]
        assert tid in {t.transactional_id for t in admin.list_transactions(["Ongoing"]).result()}
        assert tid not in {
            t.transactional_id for t in admin.list_transactions(["CompleteCommit"]).result()
        }
        assert admin.list_transactions(producer_ids=[pid], duration_ms=3_600_000).result() == []

        d = admin.describe_transactions([tid], request_timeout=5)[tid].result()
        assert isinstance(d, TransactionDescription)
        assert (d.state, d.producer_id, d.transaction_timeout_ms) == (
            "Ongoing",
            pid,
            TXN_TIMEOUT_MS,
        )
        assert d.topic_partitions == (tp0, tp1)
        assert d.coordinator_id == mine[0].coordinator_id
        assert d.transaction_start_time_ms is not None
        assert abs(d.transaction_start_time_ms - time.time() * 1000) < 60_000

        producers = admin.describe_producers([tp0, tp1], request_timeout=5)
        (state0,) = producers[tp0].result()
        (state1,) = producers[tp1].result()
        assert isinstance(state0, ProducerState)
        assert (state0.producer_id, state0.producer_epoch) == (pid, d.producer_epoch)
        assert state0.current_transaction_start_offset == 3
        assert state0.last_sequence == 3  # four records from this producer, sequences 0-3
        assert state0.coordinator_epoch is not None  # the first transaction's marker wrote one
        assert state1.current_transaction_start_offset == 0
        assert state1.coordinator_epoch is None  # no marker in partition 1 yet
        # Asked of a named broker (Java's DescribeProducersOptions.brokerId): its replica's.
        leader = admin.list_topics(topic, timeout=5).topics[topic].partitions[0].leader
        at_broker = admin.describe_producers([tp0], request_timeout=5, broker_id=leader)
        assert at_broker[tp0].result() == [state0]

        # The open transaction holds partition 0's last stable offset at its first offset: a
        # read_committed consumer reaches its end there.
        assert last_stable_offset(admin, tp0) == 3
        assert read_committed(bootstrap, topic, 0) == ([b"c0", b"c1"], 3)

        # An ABORT marker written straight to the leader ends it there (KIP-664's
        # abortTransaction): the LSO moves past its marker at offset 5.
        fut = admin.abort_transaction(
            tp0, pid, state0.producer_epoch, state0.coordinator_epoch or 0, request_timeout=5
        )
        assert fut.result() is None
        assert last_stable_offset(admin, tp0) == 6
        assert read_committed(bootstrap, topic, 0) == ([b"c0", b"c1"], 6)
        (after,) = admin.describe_producers([tp0])[tp0].result()
        assert after.current_transaction_start_offset is None
        # Partition 1 is still held: the coordinator never heard of the abort.
        assert last_stable_offset(admin, tp1) == 0
        assert admin.describe_transactions([tid])[tid].result().state == "Ongoing"


def test_abort_with_an_older_epoch_is_refused(admin: AdminClient, bootstrap: str) -> None:
    # Kafka's ProducerStateManager refuses a marker of an epoch older than the producer's:
    # a new producer with the same transactional id bumps the epoch.
    topic = new_topic(bootstrap, 1)
    tp = TopicPartition(topic, 0)
    tid = f"tx-{uuid.uuid4().hex[:8]}"
    with transactional_producer(bootstrap, tid) as first:
        first.begin_transaction()
        produce(first, topic, 0, [b"x"])
        first.commit_transaction(10)
    with transactional_producer(bootstrap, tid) as p:
        p.begin_transaction()
        produce(p, topic, 0, [b"y"])
        (state,) = admin.describe_producers([tp], request_timeout=5)[tp].result()
        assert state.producer_epoch >= 1 and state.current_transaction_start_offset == 2
        fut = admin.abort_transaction(
            tp, state.producer_id, state.producer_epoch - 1, 0, request_timeout=5
        )
        with pytest.raises(InvalidProducerEpoch):
            fut.result()
        assert last_stable_offset(admin, tp) == 2


def test_committed_transaction_is_complete_commit(admin: AdminClient, bootstrap: str) -> None:
    topic = new_topic(bootstrap, 1)
    tid = f"tx-{uuid.uuid4().hex[:8]}"
    with transactional_producer(bootstrap, tid) as p:
        p.begin_transaction()
        produce(p, topic, 0, [b"a", b"b"])
        p.commit_transaction(10)
        d = wait_state(admin, tid, "CompleteCommit")
        assert d.state == "CompleteCommit"
        # Its partitions are gone once every marker is written.
        assert d.topic_partitions == ()
        listed = admin.list_transactions(["CompleteCommit"], request_timeout=5).result()
        assert tid in {t.transactional_id for t in listed}
        assert read_committed(bootstrap, topic, 0) == ([b"a", b"b"], 3)
        # Not open: no producer of the partition has a transaction start offset.
        tp = TopicPartition(topic, 0)
        (state,) = admin.describe_producers([tp])[tp].result()
        assert state.current_transaction_start_offset is None


def test_unknown_transactional_id(admin: AdminClient, bootstrap: str) -> None:
    # Kafka's TransactionCoordinator.handleDescribeTransactions: TRANSACTIONAL_ID_NOT_FOUND
    # for an id it does not know; the other ids of the same batch are described.
    tid = f"tx-{uuid.uuid4().hex[:8]}"
    unknown = f"never-{uuid.uuid4().hex[:8]}"
    with transactional_producer(bootstrap, tid):
        futures = admin.describe_transactions([tid, unknown], request_timeout=5)
        assert set(futures) == {tid, unknown}
        assert futures[tid].result().state == "Empty"
        with pytest.raises(TransactionalIdNotFound):
            futures[unknown].result()


def test_describe_producers_of_an_unknown_partition(admin: AdminClient) -> None:
    # Java's DescribeProducersHandler retries UNKNOWN_TOPIC_OR_PARTITION until its timeout.
    tp = TopicPartition(f"none-{uuid.uuid4().hex[:8]}", 0)
    with pytest.raises(UnknownTopicOrPartition):
        admin.describe_producers([tp], request_timeout=1)[tp].result()
    # A broker that is not in the cluster: its connection's error, once the time is up.
    with pytest.raises(NetworkException, match="not in the cluster"):
        admin.describe_producers([tp], request_timeout=1, broker_id=999)[tp].result()


def test_hanging_transaction_is_aborted_in_its_partition(
    admin: AdminClient, bootstrap: str
) -> None:
    # What kafka-transactions.sh find-hanging reads (KIP-664): the partition holds an open
    # transaction whose coordinator lists the producer's transactional id without the
    # partition; abort_transaction's marker ends it, and the partition's LSO moves on.
    topic = new_topic(bootstrap, 1)
    tp = TopicPartition(topic, 0)
    tid, pid, epoch = hanging_transaction(bootstrap, topic, 0, [b"h0", b"h1", b"h2"])
    (state,) = admin.describe_producers([tp], request_timeout=5)[tp].result()
    assert (state.producer_id, state.producer_epoch) == (pid, epoch)
    assert (state.current_transaction_start_offset, state.coordinator_epoch) == (0, None)
    assert state.last_sequence == 2
    (listing,) = admin.list_transactions(producer_ids=[pid], request_timeout=5).result()
    assert (listing.transactional_id, listing.state) == (tid, "Empty")
    d = admin.describe_transactions([tid], request_timeout=5)[tid].result()
    assert (d.state, d.topic_partitions, d.transaction_start_time_ms) == ("Empty", (), None)
    assert last_stable_offset(admin, tp) == 0

    admin.abort_transaction(tp, pid, epoch, 0, request_timeout=5).result()
    assert last_stable_offset(admin, tp) == 4
    assert read_committed(bootstrap, topic, 0) == ([], 4)
    (state,) = admin.describe_producers([tp], request_timeout=5)[tp].result()
    assert (state.current_transaction_start_offset, state.coordinator_epoch) == (None, 0)
