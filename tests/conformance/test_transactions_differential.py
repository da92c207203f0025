"""Transactions on both brokers, request by request (transaction protocol v1, as librdkafka and
Java clients without KIP-890 part 2 speak it): FindCoordinator for a transactional id,
InitProducerId and its fencing, AddPartitionsToTxn with unknown topics and stale producers,
transactional produces checked against their transaction (KIP-890 part 1), EndTxn and its
retries and misuse, the last stable offset and aborted transactions in Fetch and ListOffsets,
AddOffsetsToTxn and TxnOffsetCommit with OffsetFetch's require_stable, DescribeTransactions,
ListTransactions and DescribeProducers.

Kafka writes a transaction's markers after it answers EndTxn (so does kgroup); reads that
depend on them wait until both brokers agree (``Differential.eventually``)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from support.differential import (
    Answer,
    Differential,
    Peer,
    create_topic,
    new_name,
    wait_until,
)

from kgroup.protocol import ApiKey
from kgroup.protocol.records import Record, encode_batch

pytestmark = pytest.mark.network

NOW = int(time.time() * 1000)
READ_COMMITTED = 1
TIMEOUT_MS = 60_000
#: PROBE is a transactional id that only checks a coordinator serves InitProducerId.
PROBE = "kgroup-differential-probe"


def find_coordinator(d: Differential, txn: str) -> None:
    """FindCoordinator for ``txn``, again until both agree: Kafka answers
    COORDINATOR_NOT_AVAILABLE while it creates ``__transaction_state`` (kgroup creates it in
    the request: docs/kafka-differences.md)."""
    d.eventually(ApiKey.FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": [txn]}, timeout=30)
    # Kafka's coordinator then loads the id's partition of __transaction_state (NOT_COORDINATOR
    # or COORDINATOR_LOAD_IN_PROGRESS until it is its own), and its broker gets a block of
    # producer ids from the controller (COORDINATOR_LOAD_IN_PROGRESS to InitProducerId until
    # then): a probe id asks until both are there.
    for p in d.peers:

        def served(p: Peer = p) -> bool:
            w = p.conn("probe")
            r = w.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [txn]})
            if r.body.transaction_states[0].error_code in (14, 15, 16):
                return False
            r = w.request(
                ApiKey.INIT_PRODUCER_ID,
                4,
                {
                    "transactional_id": PROBE,
                    "transaction_timeout_ms": TIMEOUT_MS,
                    "producer_id": -1,
                    "producer_epoch": -1,
                },
            )
            return r.body.error_code not in (14, 15, 16)

        wait_until(served, timeout=30)


def init(d: Differential, txn: str, version: int = 4, timeout_ms: int = TIMEOUT_MS) -> Answer:
    """InitProducerId for ``txn``; each peer keeps its producer id and epoch."""
    body = {
        "transactional_id": txn,
        "transaction_timeout_ms": timeout_ms,
        "producer_id": -1,
        "producer_epoch": -1,
    }
    answer = d.request(ApiKey.INIT_PRODUCER_ID, version, body)
    d.keep("pid", answer, lambda b: b.producer_id)
    d.keep("epoch", answer, lambda b: b.producer_epoch)
    return answer


def init_until_ready(d: Differential, txn: str, tries: int = 50) -> Answer:
    """InitProducerId again while the previous transaction completes (CONCURRENT_TRANSACTIONS
    on both), as clients retry it."""
    for _ in range(tries):
        a = init(d, txn)
        if a.kgroup is not None and a.kgroup.body.error_code != 51:
            return a
        time.sleep(0.05)
    raise AssertionError("InitProducerId kept answering CONCURRENT_TRANSACTIONS")


def ids(p: Peer, pid_shift: int = 0, epoch_shift: int = 0) -> dict[str, int]:
    return {"producer_id": p["pid"] + pid_shift, "producer_epoch": p["epoch"] + epoch_shift}


def add_partitions(
    d: Differential,
    txn: str,
    topics: dict[str, list[int]],
    version: int = 3,
    **shift: int,
) -> Answer:
    def body(p: Peer) -> dict[str, Any]:
        i = ids(p, **shift)
        return {
            "v3_and_below_transactional_id": txn,
            "v3_and_below_producer_id": i["producer_id"],
            "v3_and_below_producer_epoch": i["producer_epoch"],
            "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
        }

    return d.request(ApiKey.ADD_PARTITIONS_TO_TXN, version, body)


def end(d: Differential, txn: str, commit: bool, version: int = 3, **shift: int) -> Answer:
    return d.request(
        ApiKey.END_TXN,
        version,
        lambda p: {"transactional_id": txn, **ids(p, **shift), "committed": commit},
    )


def txn_batch(p: Peer, sequence: int, n: int = 2, epoch_shift: int = 0) -> bytes:
    return encode_batch(
        [Record(i, NOW + i, f"k{i}".encode(), f"v{sequence + i}".encode()) for i in range(n)],
        transactional=True,
        producer_id=p["pid"],
        producer_epoch=p["epoch"] + epoch_shift,
        base_sequence=sequence,
    )


def produce(
    d: Differential,
    txn: str | None,
    topic: str,
    records: Any,
    version: int = 11,
    partition: int = 0,
) -> Answer:
    def body(p: Peer) -> dict[str, Any]:
        return {
            "transactional_id": txn,
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [
                {
                    "name": topic,
                    "partition_data": [
                        {
                            "index": partition,
                            "records": records(p) if callable(records) else records,
                        }
                    ],
                }
            ],
        }

    return d.request(ApiKey.PRODUCE, version, body)


def fetch_body(topic: str, offset: int, isolation: int, partition: int = 0) -> Any:
    def body(p: Peer) -> dict[str, Any]:
        return {
            "replica_id": -1,
            "max_wait_ms": 0,
            "min_bytes": 1,
            "max_bytes": 1 << 20,
            "isolation_level": isolation,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [
                {
                    "topic_id": p[f"topic_id:{topic}"],
                    "partitions": [
                        {
                            "partition": partition,
                            "current_leader_epoch": -1,
                            "fetch_offset": offset,
                            "last_fetched_epoch": -1,
                            "log_start_offset": -1,
                            "partition_max_bytes": 1 << 20,
                        }
                    ],
                }
            ],
            "forgotten_topics_data": [],
            "rack_id": "",
        }

    return body


def fetch(d: Differential, topic: str, offset: int, isolation: int, settle: bool = False) -> Answer:
    if settle:
        return d.eventually(ApiKey.FETCH, 17, fetch_body(topic, offset, isolation))
    return d.request(ApiKey.FETCH, 17, fetch_body(topic, offset, isolation))


def latest(d: Differential, topic: str, isolation: int, settle: bool = False) -> Answer:
    body = {
        "replica_id": -1,
        "isolation_level": isolation,
        "topics": [
            {
                "name": topic,
                "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}],
            }
        ],
    }
    if settle:
        return d.eventually(ApiKey.LIST_OFFSETS, 9, body)
    return d.request(ApiKey.LIST_OFFSETS, 9, body)


def describe(d: Differential, *txns: str) -> Answer:
    return d.request(
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        {"transactional_ids": list(txns)},
        ignore=["transaction_start_time_ms"],
    )


def test_find_coordinator_and_init(diff: Differential) -> None:
    txn = new_name("txn")
    find_coordinator(diff, txn)
    find_coordinator(diff, "")
    init(diff, txn)
    first = diff.each(lambda p: p["pid"])
    init(diff, txn)  # the same producer id, the next epoch: fences the first instance
    assert diff.each(lambda p: p["pid"]) == first
    init(diff, new_name("txn"), timeout_ms=0)  # INVALID_TRANSACTION_TIMEOUT
    init(diff, new_name("txn"), timeout_ms=2_000_000_000)
    init(diff, "")  # INVALID_REQUEST
    # v3+ names the producer id and epoch it has (KIP-360): a wrong one is refused.
    diff.request(
        ApiKey.INIT_PRODUCER_ID,
        4,
        lambda p: {
            "transactional_id": txn,
            "transaction_timeout_ms": TIMEOUT_MS,
            "producer_id": p["pid"],
            "producer_epoch": p["epoch"] + 5,
        },
    )
    diff.request(
        ApiKey.INIT_PRODUCER_ID,
        4,
        lambda p: {
            "transactional_id": txn,
            "transaction_timeout_ms": TIMEOUT_MS,
            "producer_id": p["pid"],
            "producer_epoch": -1,
        },
    )


def test_add_partitions_errors(diff: Differential) -> None:
    topic = create_topic(diff, 2)
    txn = new_name("txn")
    find_coordinator(diff, txn)
    # An id the coordinator does not know.
    diff.each(lambda p: p.vars.update(pid=1234, epoch=0))
    add_partitions(diff, txn, {topic: [0]})
    init(diff, txn)
    add_partitions(diff, txn, {topic: [0], "nope-" + topic: [0]})  # OPERATION_NOT_ATTEMPTED
    add_partitions(diff, txn, {topic: [0, 5]})
    add_partitions(diff, txn, {topic: [0]}, pid_shift=1)  # INVALID_PRODUCER_ID_MAPPING
    add_partitions(diff, txn, {topic: [0]}, epoch_shift=-1)  # PRODUCER_FENCED (v2+)
    add_partitions(diff, txn, {topic: [0]}, version=1, epoch_shift=-1)  # INVALID_PRODUCER_EPOCH
    add_partitions(diff, txn, {topic: [0]})
    add_partitions(diff, txn, {topic: [0]})  # already in: answered at once
    # EndTxn misuse: a stale epoch, a wrong producer id.
    end(diff, txn, True, epoch_shift=-1)
    end(diff, txn, True, version=1, epoch_shift=-1)
    end(diff, txn, True, pid_shift=1)
    end(diff, txn, False)
    # The abort is being completed or done: a commit of the same transaction is refused,
    # a repeated abort is not.
    diff.eventually(
        ApiKey.END_TXN,
        3,
        lambda p: {"transactional_id": txn, **ids(p), "committed": True},
    )
    diff.eventually(
        ApiKey.END_TXN,
        3,
        lambda p: {"transactional_id": txn, **ids(p), "committed": False},
    )


def test_commit_and_abort_as_read_committed_sees_them(diff: Differential) -> None:
    topic = create_topic(diff, 1)
    txn = new_name("txn")
    find_coordinator(diff, txn)
    init(diff, txn)
    # A transactional batch to a partition not in the transaction (KIP-890 part 1).
    produce(diff, txn, topic, lambda p: txn_batch(p, 0))
    produce(diff, txn, topic, lambda p: txn_batch(p, 0), version=9)
    # Transactional records without a transactional id.
    produce(diff, None, topic, lambda p: txn_batch(p, 0))
    add_partitions(diff, txn, {topic: [0]})
    produce(diff, txn, topic, lambda p: txn_batch(p, 0))
    produce(diff, txn, topic, lambda p: txn_batch(p, 2))
    # Open: read_committed stops at its first offset, read_uncommitted sees it.
    fetch(diff, topic, 0, READ_COMMITTED)
    fetch(diff, topic, 0, 0)
    latest(diff, topic, READ_COMMITTED)
    latest(diff, topic, 0)
    describe(diff, txn)
    diff.request(
        ApiKey.DESCRIBE_PRODUCERS, 0, {"topics": [{"name": topic, "partition_indexes": [0]}]}
    )
    end(diff, txn, True)
    # Committed: the records and the marker, which takes an offset.
    fetch(diff, topic, 0, READ_COMMITTED, settle=True)
    latest(diff, topic, READ_COMMITTED, settle=True)
    describe_settled(diff, txn)
    # A second transaction, aborted: listed with its first offset under read_committed.
    add_partitions_until_ready(diff, txn, {topic: [0]})
    produce(diff, txn, topic, lambda p: txn_batch(p, 4))
    end(diff, txn, False)
    fetch(diff, topic, 5, READ_COMMITTED, settle=True)
    fetch(diff, topic, 0, READ_COMMITTED, settle=True)
    latest(diff, topic, READ_COMMITTED, settle=True)
    # After a marker a producer's last timestamp is the marker's: its coordinator's clock.
    diff.eventually(
        ApiKey.DESCRIBE_PRODUCERS,
        0,
        {"topics": [{"name": topic, "partition_indexes": [0]}]},
        ignore=["last_timestamp"],
    )


def test_fencing_an_open_transaction(diff: Differential) -> None:
    topic = create_topic(diff, 1)
    txn = new_name("txn")
    find_coordinator(diff, txn)
    init(diff, txn)
    add_partitions(diff, txn, {topic: [0]})
    produce(diff, txn, topic, lambda p: txn_batch(p, 0))
    diff.each(lambda p: p.vars.update(old_epoch=p["epoch"]))
    # A new instance: the open transaction is aborted with a bumped epoch first
    # (CONCURRENT_TRANSACTIONS meanwhile), then the new instance gets the next epoch.
    init_until_ready(diff, txn)
    fetch(diff, topic, 0, READ_COMMITTED, settle=True)
    # The old instance is fenced, at the coordinator and at the partition.
    diff.request(
        ApiKey.ADD_PARTITIONS_TO_TXN,
        3,
        lambda p: {
            "v3_and_below_transactional_id": txn,
            "v3_and_below_producer_id": p["pid"],
            "v3_and_below_producer_epoch": p["old_epoch"],
            "v3_and_below_topics": [{"name": topic, "partitions": [0]}],
        },
    )
    produce(diff, txn, topic, lambda p: txn_batch(p, 2, epoch_shift=p["old_epoch"] - p["epoch"]))
    diff.request(
        ApiKey.END_TXN,
        3,
        lambda p: {
            "transactional_id": txn,
            "producer_id": p["pid"],
            "producer_epoch": p["old_epoch"],
            "committed": True,
        },
    )


@pytest.mark.usefixtures("coordinators")
def test_transactional_offsets(diff: Differential) -> None:
    topic = create_topic(diff, 1)
    group = new_name("g")
    txn = new_name("txn")
    find_coordinator(diff, txn)
    diff.request(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})
    init(diff, txn)
    add_partitions(diff, txn, {topic: [0]})
    produce(diff, txn, topic, lambda p: txn_batch(p, 0))
    diff.request(
        ApiKey.ADD_OFFSETS_TO_TXN,
        3,
        lambda p: {"transactional_id": txn, **ids(p), "group_id": group},
    )
    commit = {
        "transactional_id": txn,
        "group_id": group,
        "generation_id": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": 7,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "m",
                    }
                ],
            }
        ],
    }
    diff.request(ApiKey.TXN_OFFSET_COMMIT, 3, lambda p: {**commit, **ids(p)})
    # A stale epoch; a member of a group that does not exist.
    diff.request(ApiKey.TXN_OFFSET_COMMIT, 3, lambda p: {**commit, **ids(p, epoch_shift=-1)})
    diff.request(
        ApiKey.TXN_OFFSET_COMMIT,
        3,
        lambda p: {**commit, **ids(p), "member_id": "who", "generation_id": 3},
    )

    def offset_fetch(stable: bool) -> dict[str, Any]:
        return {
            "groups": [
                {
                    "group_id": group,
                    "member_id": None,
                    "member_epoch": -1,
                    "topics": [{"name": topic, "partition_indexes": [0]}],
                }
            ],
            "require_stable": stable,
        }

    # Pending: invisible, and UNSTABLE_OFFSET_COMMIT with require_stable.
    diff.request(ApiKey.OFFSET_FETCH, 8, offset_fetch(False))
    diff.request(ApiKey.OFFSET_FETCH, 8, offset_fetch(True))
    end(diff, txn, True)
    diff.eventually(ApiKey.OFFSET_FETCH, 8, offset_fetch(True))


def test_list_transactions(diff: Differential) -> None:
    topic = create_topic(diff, 1)
    txn = new_name("txn")
    find_coordinator(diff, txn)
    init(diff, txn)
    add_partitions(diff, txn, {topic: [0]})

    def mine(p: Peer, body: dict[str, Any]) -> dict[str, Any]:
        # Each broker lists every transaction it holds: keep this test's.
        body["transaction_states"] = [
            s for s in body.get("transaction_states", []) if s["transactional_id"] == txn
        ]
        return body

    diff.rewrite = mine
    diff.request(
        ApiKey.LIST_TRANSACTIONS,
        1,
        {
            "state_filters": ["Ongoing", "Nonsense"],
            "producer_id_filters": [],
            "duration_filter": -1,
        },
    )
    diff.request(
        ApiKey.LIST_TRANSACTIONS,
        1,
        lambda p: {
            "state_filters": [],
            "producer_id_filters": [p["pid"]],
            "duration_filter": 3_600_000,
        },
    )
    diff.request(
        ApiKey.LIST_TRANSACTIONS,
        0,
        {"state_filters": ["CompleteAbort"], "producer_id_filters": []},
    )
    describe(diff, txn, new_name("unknown"))


def describe_settled(d: Differential, txn: str) -> Answer:
    return d.eventually(
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        {"transactional_ids": [txn]},
        ignore=["transaction_start_time_ms"],
    )


def add_partitions_until_ready(
    d: Differential, txn: str, topics: dict[str, list[int]], tries: int = 50
) -> Answer:
    for _ in range(tries):
        a = add_partitions(d, txn, topics)
        codes = {
            r.partition_error_code
            for t in (a.kgroup.body.results_by_topic_v3_and_below if a.kgroup else [])
            for r in t.results_by_partition
        }
        if codes != {51}:
            return a
        time.sleep(0.05)
    raise AssertionError("AddPartitionsToTxn kept answering CONCURRENT_TRANSACTIONS")
