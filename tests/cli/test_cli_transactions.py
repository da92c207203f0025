"""``kgroup transactions`` on real transactions: the tables of Kafka's TransactionsCommand
(kafka-transactions.sh), checked on what confluent-kafka's transactional Producer left open;
``abort --start-offset`` really ends the transaction in the partition (a read_committed
consumer then reads to the end), and failures are reported as Kafka's tool reports them, with
exit status 1 (TransactionsCommandTest's cases)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from support.apache_kafka import run_tool
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
from kgroup.cli import main
from kgroup.cli.transactions import DESCRIBE_HEADERS, table
from kgroup.client import AdminClient

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def txn_kgroup_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(
        tmp_path_factory.mktemp("txn-cli"), {"transaction.partition.verification.enable": False}
    ) as b:
        yield b


@pytest.fixture(params=TXN_BROKERS)
def bootstrap(request: pytest.FixtureRequest) -> str:
    return bootstrap_of(request, request.param)


def kgroup(capsys: pytest.CaptureFixture[str], bootstrap: str, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(["transactions", *argv, "--bootstrap-server", bootstrap])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def leader_of(bootstrap: str, topic: str, partition: int = 0) -> int:
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        return int(admin.list_topics(topic, timeout=5).topics[topic].partitions[partition].leader)


def rows(text: str) -> list[list[str]]:
    """A table's lines as cells: each value is padded and followed by a tab."""
    lines = text.splitlines()
    assert all(line.endswith("\t") for line in lines)
    return [[c.rstrip() for c in line.split("\t")[:-1]] for line in lines]


def test_table_is_tools_utils_pretty_print_table() -> None:
    # Kafka's ToolsUtils.prettyPrintTable: each column as wide as its widest value or header,
    # every value (the last one too) followed by a tab.
    assert (
        table(["A", "Long"], [["xyz", "1"], ["", "22"]])
        == "A  \tLong\t\nxyz\t1   \t\n   \t22  \t\n"
    )


def test_list_describe_and_describe_producers(
    capsys: pytest.CaptureFixture[str], bootstrap: str
) -> None:
    topic = new_topic(bootstrap)
    tid = f"tx-{uuid.uuid4().hex[:8]}"
    with transactional_producer(bootstrap, tid) as p:
        p.begin_transaction()
        produce(p, topic, 1, [b"a", b"b"])
        produce(p, topic, 0, [b"c"])

        status, out, _ = kgroup(capsys, bootstrap, "list")
        assert status == 0
        head, *body = rows(out)
        assert head == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
        (mine,) = [r for r in body if r[0] == tid]
        coordinator, pid = mine[1], mine[2]
        assert mine[3] == "Ongoing"
        status, out, _ = kgroup(capsys, bootstrap, "list", "--duration-filter", "3600000")
        assert status == 0 and tid not in out

        before = int(time.time() * 1000)
        status, out, _ = kgroup(capsys, bootstrap, "describe", "--transactional-id", tid)
        assert status == 0
        head, row = rows(out)
        assert head == [
            "CoordinatorId",
            "TransactionalId",
            "ProducerId",
            "ProducerEpoch",
            "TransactionState",
            "TransactionTimeoutMs",
            "CurrentTransactionStartTimeMs",
            "TransactionDurationMs",
            "TopicPartitions",
        ]
        assert row[:3] == [coordinator, tid, pid]
        assert row[4:6] == ["Ongoing", str(TXN_TIMEOUT_MS)]
        start, duration = int(row[6]), int(row[7])
        assert start <= before and 0 <= duration < 60_000
        assert row[8] == f"{topic}-0,{topic}-1"
        epoch = row[3]

        status, out, _ = kgroup(
            capsys, bootstrap, "describe-producers", "--topic", topic, "--partition", "1"
        )
        assert status == 0
        head, row = rows(out)
        assert head == [
            "ProducerId",
            "ProducerEpoch",
            "LatestCoordinatorEpoch",
            "LastSequence",
            "LastTimestamp",
            "CurrentTransactionStartOffset",
        ]
        # No marker in the partition yet: -1 for the coordinator epoch, as the tool prints it.
        assert row[:4] == [pid, epoch, "-1", "1"]
        assert abs(int(row[4]) - before) < 60_000
        assert row[5] == "0"
        status, out, _ = kgroup(
            capsys,
            bootstrap,
            "describe-producers",
            "--topic",
            topic,
            "--partition",
            "1",
            "--broker-id",
            str(leader_of(bootstrap, topic, 1)),
        )
        assert (status, rows(out)) == (0, [head, row])


def test_abort_by_start_offset(capsys: pytest.CaptureFixture[str], bootstrap: str) -> None:
    topic = new_topic(bootstrap, 1)
    tid = f"tx-{uuid.uuid4().hex[:8]}"
    with transactional_producer(bootstrap, tid) as p:
        p.begin_transaction()
        produce(p, topic, 0, [b"c"])
        p.commit_transaction(10)
        p.begin_transaction()
        produce(p, topic, 0, [b"o0", b"o1"])
        assert read_committed(bootstrap, topic, 0) == ([b"c"], 2)

        # No transaction starts at offset 3: nothing is aborted.
        status, out, err = kgroup(
            capsys, bootstrap, "abort", "--topic", topic, "--partition", "0", "--start-offset", "3"
        )
        assert (status, out) == (1, "")
        assert err == (
            f"Could not find any open transactions starting at offset 3 on partition {topic}-0\n"
        )
        assert read_committed(bootstrap, topic, 0) == ([b"c"], 2)

        status, out, err = kgroup(
            capsys, bootstrap, "abort", "--topic", topic, "--partition", "0", "--start-offset", "2"
        )
        assert (status, out, err) == (0, "", "")
        # Its marker at offset 4; the last stable offset past it.
        assert read_committed(bootstrap, topic, 0) == ([b"c"], 5)
        status, out, _ = kgroup(
            capsys, bootstrap, "describe-producers", "--topic", topic, "--partition", "0"
        )
        assert rows(out)[1][5] == "None"


def test_abort_by_producer_and_epochs(capsys: pytest.CaptureFixture[str], bootstrap: str) -> None:
    topic = new_topic(bootstrap, 1)
    tid = f"tx-{uuid.uuid4().hex[:8]}"
    with transactional_producer(bootstrap, tid) as p:
        p.begin_transaction()
        produce(p, topic, 0, [b"o"])
        status, out, _ = kgroup(
            capsys, bootstrap, "describe-producers", "--topic", topic, "--partition", "0"
        )
        pid, epoch, coordinator_epoch = rows(out)[1][:3]
        assert coordinator_epoch == "-1"
        base = ["abort", "--topic", topic, "--partition", "0", "--producer-id", pid]
        status, _, err = kgroup(capsys, bootstrap, *base)
        assert (status, err) == (1, "Missing required argument --producer-epoch\n")
        status, _, err = kgroup(capsys, bootstrap, *base, "--producer-epoch", epoch)
        assert (status, err) == (1, "Missing required argument --coordinator-epoch\n")
        # -1 (no marker yet) is sent as 0, as Kafka's tool sends it.
        status, out, err = kgroup(
            capsys, bootstrap, *base, "--producer-epoch", epoch, "--coordinator-epoch", "-1"
        )
        assert (status, out, err) == (0, "", "")
        assert read_committed(bootstrap, topic, 0) == ([], 2)


def test_failures(capsys: pytest.CaptureFixture[str], bootstrap: str) -> None:
    unknown = f"never-{uuid.uuid4().hex[:8]}"
    status, out, err = kgroup(capsys, bootstrap, "describe", "--transactional-id", unknown)
    assert (status, out) == (1, "")
    assert err == (
        f"Failed to describe transaction state of transactional-id `{unknown}`: "
        "TRANSACTIONAL_ID_NOT_FOUND: The transactionalId could not be found.\n"
    )
    status, _, err = kgroup(capsys, bootstrap, "abort", "--topic", "t", "--partition", "0")
    assert status == 1
    assert err.startswith("The transaction to abort must be identified either with --start-offset")
    status, _, err = kgroup(capsys, bootstrap, "find-hanging")
    assert status == 1 and "requires either --topic or --broker-id" in err
    status, _, err = kgroup(
        capsys, bootstrap, "find-hanging", "--broker-id", "1", "--partition", "0"
    )
    assert (status, err) == (1, "The --partition argument requires --topic to be provided\n")
    status, _, err = kgroup(capsys, bootstrap, "find-hanging", "--topic", unknown)
    assert (status, err) == (
        1,
        "Failed to describe 1 topics: UNKNOWN_TOPIC_OR_PARTITION: "
        "This server does not host this topic-partition.\n",
    )


def test_find_hanging(capsys: pytest.CaptureFixture[str], bootstrap: str) -> None:
    topic = new_topic(bootstrap, 1)
    tid = f"tx-{uuid.uuid4().hex[:8]}"
    headers = [
        "Topic",
        "Partition",
        "ProducerId",
        "ProducerEpoch",
        "CoordinatorEpoch",
        "StartOffset",
        "LastTimestamp",
        "Duration(min)",
    ]
    with transactional_producer(bootstrap, tid) as p:
        p.begin_transaction()
        produce(p, topic, 0, [b"o"])
        time.sleep(0.01)
        # With a maximum timeout of 0 minutes the open transaction is a candidate, but its
        # coordinator still holds the partition: not hanging.
        leader = str(leader_of(bootstrap, topic))
        for scope in (
            ["--broker-id", leader],
            ["--topic", topic],
            ["--topic", topic, "--partition", "0"],
        ):
            status, out, _ = kgroup(
                capsys, bootstrap, "find-hanging", *scope, "--max-transaction-timeout", "0"
            )
            assert (status, rows(out)) == (0, [headers])
        # Aborted in the partition only, the transaction is no longer open there either.
        status, _, _ = kgroup(
            capsys, bootstrap, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0"
        )
        assert status == 0
        status, out, _ = kgroup(
            capsys, bootstrap, "find-hanging", "--topic", topic, "--max-transaction-timeout", "0"
        )
        assert (status, rows(out)) == (0, [headers])


def test_find_hanging_finds_one_and_abort_ends_it(
    capsys: pytest.CaptureFixture[str], bootstrap: str
) -> None:
    # The case kafka-transactions.sh exists for (KIP-664): an open transaction in a partition
    # that its coordinator does not hold, which nothing but an abort marker ends.
    topic = new_topic(bootstrap, 1)
    where = ["--topic", topic, "--partition", "0"]
    with transactional_producer(bootstrap, f"tx-{uuid.uuid4().hex[:8]}") as p:
        p.begin_transaction()
        produce(p, topic, 0, [b"c"])
        p.commit_transaction(10)
    before = int(time.time() * 1000)
    _, pid, epoch = hanging_transaction(bootstrap, topic, 0, [b"h0", b"h1"])
    assert read_committed(bootstrap, topic, 0) == ([b"c"], 2)
    leader = str(leader_of(bootstrap, topic))

    status, out, _ = kgroup(
        capsys, bootstrap, "find-hanging", "--broker-id", leader, "--max-transaction-timeout", "0"
    )
    assert status == 0
    head, *found = rows(out)
    (row,) = [r for r in found if r[0] == topic]
    assert row[:6] == [topic, "0", str(pid), str(epoch), "-1", "2"]
    assert abs(int(row[6]) - before) < 60_000 and row[7] == "0"
    # Within the default 15 minutes it is not yet taken for hanging.
    status, out, _ = kgroup(capsys, bootstrap, "find-hanging", "--topic", topic)
    assert (status, rows(out)) == (0, [head])

    status, out, err = kgroup(capsys, bootstrap, "abort", *where, "--start-offset", "2")
    assert (status, out, err) == (0, "", "")
    assert read_committed(bootstrap, topic, 0) == ([b"c"], 5)
    status, out, _ = kgroup(
        capsys, bootstrap, "find-hanging", "--topic", topic, "--max-transaction-timeout", "0"
    )
    assert (status, rows(out)) == (0, [head])


def test_tables_match_kafka_transactions_sh(
    capsys: pytest.CaptureFixture[str], bootstrap: str
) -> None:
    # The same transactions through Kafka's own TransactionsCommand: the same tables, cell for
    # cell, but the durations (read at different moments).
    topic = new_topic(bootstrap, 2)
    tid = f"tx-{uuid.uuid4().hex[:8]}"
    _, hung_pid, _ = hanging_transaction(bootstrap, topic, 1, [b"h"])
    with transactional_producer(bootstrap, tid) as p:
        p.begin_transaction()
        produce(p, topic, 0, [b"a", b"b"])

        def both(*argv: str) -> tuple[list[list[str]], list[list[str]]]:
            status, out, err = kgroup(capsys, bootstrap, *argv)
            assert (status, err) == (0, "")
            # In a JVM of its own: run in the warm tool shell, TransactionsCommand leaves it
            # losing the standard error of the tools that run there after it.
            theirs = run_tool(
                "org.apache.kafka.tools.TransactionsCommand",
                "--bootstrap-server",
                bootstrap,
                *argv,
                fast=False,
            )
            return rows(out), rows(theirs.stdout)

        for partition in ("0", "1"):
            ours, theirs = both("describe-producers", "--topic", topic, "--partition", partition)
            assert ours == theirs and len(ours) == 2
        ours, theirs = both("describe", "--transactional-id", tid)
        d = DESCRIBE_HEADERS.index("TransactionDurationMs")
        assert ours[0] == theirs[0] and ours[1][4] == "Ongoing"
        assert ours[1][:d] + ours[1][d + 1 :] == theirs[1][:d] + theirs[1][d + 1 :]
        ours, theirs = both("list")
        assert ours[0] == theirs[0]
        assert [r for r in ours if r[0] == tid] == [r for r in theirs if r[0] == tid]
        ours, theirs = both("find-hanging", "--topic", topic, "--max-transaction-timeout", "0")
        assert ours[0] == theirs[0]
        assert [r[:-1] for r in ours[1:]] == [r[:-1] for r in theirs[1:]]  # but Duration(min)
        assert [r[2] for r in ours[1:]] == [str(hung_pid)]
