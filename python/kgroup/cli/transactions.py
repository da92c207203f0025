"""``kgroup transactions``: list and describe transactions, the producers of a partition, and
find and abort hanging transactions, as kafka-transactions.sh does.

    kgroup transactions list [--duration-filter MS]
    kgroup transactions describe --transactional-id ID
    kgroup transactions describe-producers --topic T --partition P
    kgroup transactions abort --topic T --partition P --start-offset O
    kgroup transactions abort --topic T --partition P --producer-id ID --producer-epoch E
        --coordinator-epoch C
    kgroup transactions find-hanging --broker-id N [--max-transaction-timeout MINUTES]

The output is Kafka's ``TransactionsCommand``'s: a table whose header names Kafka's columns
(``TransactionalId Coordinator ProducerId TransactionState`` for ``list``), each value padded to
its column's width and followed by a tab. ``abort --start-offset`` finds, through
DescribeProducers, the producer whose open transaction starts at that offset of the partition
and aborts it with WriteTxnMarkers (a coordinator epoch it does not know is taken as 0, as
Kafka's tool takes it); ``find-hanging`` lists the open transactions of a broker's partitions
that have run longer than the longest transaction timeout and that their coordinator no longer
knows of (no transactional id for the producer, or one whose transaction does not hold the
partition). A failure is reported on standard error as Kafka's tool reports it (``Failed to
describe transaction state of transactional-id `ID`: ...``), with exit status 1. Where Java's
order is a hash set's, kgroup's is sorted: ``describe``'s TopicPartitions, and ``list``'s rows
by broker id; and Kafka's closing "Enable debug logging for additional detail." is left out.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from kgroup.cli.connect import add_connection_options, client_config
from kgroup.errors import KafkaError, TransactionalIdNotFound

__all__ = ["add_parser", "run", "table"]

LIST_HEADERS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
DESCRIBE_HEADERS = (
    "CoordinatorId",
    "TransactionalId",
    "ProducerId",
    "ProducerEpoch",
    "TransactionState",
    "TransactionTimeoutMs",
    "CurrentTransactionStartTimeMs",
    "TransactionDurationMs",
    "TopicPartitions",
)
PRODUCERS_HEADERS = (
    "ProducerId",
    "ProducerEpoch",
    "LatestCoordinatorEpoch",
    "LastSequence",
    "LastTimestamp",
    "CurrentTransactionStartOffset",
)
HANGING_HEADERS = (
    "Topic",
    "Partition",
    "ProducerId",
    "ProducerEpoch",
    "CoordinatorEpoch",
    "StartOffset",
    "LastTimestamp",
    "Duration(min)",
)

# Kafka's tool describes producers in batches of this many partitions.
_BATCH = 500


class _Failed(Exception):
    """A step failed: its message goes to standard error, the exit status is 1."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``transactions`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "transactions",
        help="list, describe and abort transactions (kafka-transactions.sh)",
        description=__doc__.split("\n\n")[0],
    )
    sub = p.add_subparsers(dest="action", required=True)
    listing = sub.add_parser("list", help="list transactions")
    listing.add_argument(
        "--duration-filter",
        type=int,
        metavar="MS",
        help="only transactions open longer than this (ms); all when negative",
    )
    describe = sub.add_parser("describe", help="describe the state of an active transactional-id")
    describe.add_argument("--transactional-id", required=True)
    producers = sub.add_parser(
        "describe-producers", help="describe the states of active producers for a topic partition"
    )
    producers.add_argument(
        "--broker-id", type=int, help="the broker whose replica to describe (default: the leader)"
    )
    producers.add_argument("--topic", required=True)
    producers.add_argument("--partition", type=int, required=True)
    abort = sub.add_parser("abort", help="abort a hanging transaction")
    abort.add_argument("--topic", required=True)
    abort.add_argument("--partition", type=int, required=True)
    abort.add_argument("--start-offset", type=int, help="start offset of the transaction to abort")
    abort.add_argument("--producer-id", type=int)
    abort.add_argument("--producer-epoch", type=int)
    abort.add_argument("--coordinator-epoch", type=int)
    hanging = sub.add_parser("find-hanging", help="find hanging transactions")
    hanging.add_argument("--broker-id", type=int, help="the broker whose partitions to search")
    hanging.add_argument(
        "--max-transaction-timeout",
        type=int,
        default=15,
        metavar="MINUTES",
        help="the longest transaction timeout (default 15 minutes)",
    )
    hanging.add_argument("--topic", help="only this topic (required with --partition)")
    hanging.add_argument("--partition", type=int)
    for s in (listing, describe, producers, abort, hanging):
        add_connection_options(s)
        s.add_argument(
            "--timeout", type=int, default=5000, metavar="MS", help="each call's time (ms)"
        )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run one ``transactions`` action; returns the exit status."""
    from kgroup.client.admin import AdminClient

    out = out or sys.stdout
    actions = {
        "list": _list,
        "describe": _describe,
        "describe-producers": _describe_producers,
        "abort": _abort,
        "find-hanging": _find_hanging,
    }
    try:
        with AdminClient(client_config(args)) as admin:
            actions[args.action](admin, args, out, args.timeout / 1000.0)
    except _Failed as e:
        print(e, file=sys.stderr)
        return 1
    return 0


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Kafka's ``ToolsUtils.prettyPrintTable``: each value padded to its column's width (the
    longest of the header and the values) and followed by a tab, one line per row."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    return "".join(
        "".join(v.ljust(w) + "\t" for v, w in zip(row, widths, strict=True)) + "\n"
        for row in [headers, *rows]
    )


def _failed(message: str, e: BaseException) -> _Failed:
    """Kafka's ``printErrorAndExit(message, cause)``: the message, then the cause's."""
    cause = f"{e.name}: {e.message}" if isinstance(e, KafkaError) and e.message else str(e)
    return _Failed(f"{message}: {cause}")


def _result(future: Any, message: str) -> Any:
    try:
        return future.result()
    except Exception as e:
        raise _failed(message, e) from e


def _optional(value: int | None) -> str:
    """Java's ``OptionalLong``, printed as the tool prints it: the value, or ``None``."""
    return "None" if value is None else str(value)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _list(admin: Any, args: argparse.Namespace, out: TextIO, timeout: float) -> None:
    duration = args.duration_filter
    listed = _result(
        admin.list_transactions(
            duration_ms=None if duration is None or duration < 0 else duration,
            request_timeout=timeout,
        ),
        "Failed to list transactions",
    )
    rows = [
        [t.transactional_id, str(t.coordinator_id), str(t.producer_id), t.state] for t in listed
    ]
    out.write(table(LIST_HEADERS, rows))


def _describe(admin: Any, args: argparse.Namespace, out: TextIO, timeout: float) -> None:
    tid = args.transactional_id
    d = _result(
        admin.describe_transactions([tid], request_timeout=timeout)[tid],
        f"Failed to describe transaction state of transactional-id `{tid}`",
    )
    start = d.transaction_start_time_ms
    row = [
        str(d.coordinator_id),
        tid,
        str(d.producer_id),
        str(d.producer_epoch),
        d.state,
        str(d.transaction_timeout_ms),
        _optional(start),
        _optional(None if start is None else _now_ms() - start),
        ",".join(f"{tp.topic}-{tp.partition}" for tp in d.topic_partitions),
    ]
    out.write(table(DESCRIBE_HEADERS, [row]))


def _producers(
    admin: Any,
    topic: str,
    partition: int,
    timeout: float,
    message: str,
    broker: int | None = None,
) -> list[Any]:
    from kgroup.client.types import TopicPartition

    tp = TopicPartition(topic, partition)
    futures = admin.describe_producers([tp], request_timeout=timeout, broker_id=broker)
    return list(_result(futures[tp], message))


def _describe_producers(admin: Any, args: argparse.Namespace, out: TextIO, timeout: float) -> None:
    where = f"{args.topic}-{args.partition}"
    broker = args.broker_id
    producers = _producers(
        admin,
        args.topic,
        args.partition,
        timeout,
        f"Failed to describe producers for partition {where} on "
        + ("leader" if broker is None else f"broker {broker}"),
        broker,
    )
    rows = [
        [
            str(p.producer_id),
            str(p.producer_epoch),
            str(-1 if p.coordinator_epoch is None else p.coordinator_epoch),
            str(p.last_sequence),
            str(p.last_timestamp),
            _optional(p.current_transaction_start_offset),
        ]
        for p in producers
    ]
    out.write(table(PRODUCERS_HEADERS, rows))


def _abort(admin: Any, args: argparse.Namespace, out: TextIO, timeout: float) -> None:
    where = f"{args.topic}-{args.partition}"
    if args.start_offset is None and args.producer_id is None:
        raise _Failed(
            "The transaction to abort must be identified either with --start-offset (for "
            "brokers on 3.0 or above) or with --producer-id, --producer-epoch, and "
            "--coordinator-epoch (for older brokers)"
        )
    if args.start_offset is None:
        if args.producer_epoch is None:
            raise _Failed("Missing required argument --producer-epoch")
        if args.coordinator_epoch is None:
            raise _Failed("Missing required argument --coordinator-epoch")
        producer_id, producer_epoch = args.producer_id, args.producer_epoch
        # A transaction that hung before its producer's first marker has coordinator epoch -1
        # in DescribeProducers; 0 is no greater than any epoch the partition may hold.
        coordinator_epoch = max(args.coordinator_epoch, 0)
    else:
        producers = _producers(
            admin,
            args.topic,
            args.partition,
            timeout,
            f"Failed to validate producer state for partition {where}",
        )
        found = next(
            (p for p in producers if p.current_transaction_start_offset == args.start_offset),
            None,
        )
        if found is None:
            raise _Failed(
                f"Could not find any open transactions starting at offset {args.start_offset} "
                f"on partition {where}"
            )
        producer_id, producer_epoch = found.producer_id, found.producer_epoch
        coordinator_epoch = found.coordinator_epoch or 0
    _result(
        admin.abort_transaction(
            (args.topic, args.partition),
            producer_id,
            producer_epoch,
            coordinator_epoch,
            request_timeout=timeout,
        ),
        f"Failed to abort transaction (topic partition {where}, producer id {producer_id}, "
        f"producer epoch {producer_epoch}, coordinator epoch {coordinator_epoch})",
    )


def _find_hanging(admin: Any, args: argparse.Namespace, out: TextIO, timeout: float) -> None:
    from kgroup.client.types import TopicPartition

    broker, topic, partition = args.broker_id, args.topic, args.partition
    if topic is None and broker is None:
        raise _Failed(
            "The `find-hanging` command requires either --topic or --broker-id to limit the "
            "scope of the search"
        )
    if partition is not None and topic is None:
        raise _Failed("The --partition argument requires --topic to be provided")
    max_timeout_ms = args.max_transaction_timeout * 60_000

    # The partitions to search: the one named, or those of the topic (or of every topic,
    # internal ones too) with a replica on the broker.
    if partition is not None:
        tps = [TopicPartition(topic, partition)]
    else:
        try:
            md = admin.list_topics(topic, timeout=timeout)
        except Exception as e:
            raise _failed("Failed to list topics", e) from e
        named = md.topics.get(topic) if topic is not None else None
        if named is not None and named.error is not None:
            raise _failed("Failed to describe 1 topics", named.error)
        tps = [
            TopicPartition(name, p.id)
            for name, t in sorted(md.topics.items())
            if t.error is None
            for p in sorted(t.partitions.values(), key=lambda p: p.id)
            if broker is None or broker in p.replicas
        ]

    # Open transactions whose producer wrote nothing for longer than the longest timeout.
    candidates: list[tuple[TopicPartition, Any]] = []
    for i in range(0, len(tps), _BATCH):
        batch = tps[i : i + _BATCH]
        futures = admin.describe_producers(batch, request_timeout=timeout, broker_id=broker)
        now = _now_ms()
        for tp in batch:
            producers = _result(
                futures[tp],
                f"Failed to describe producers for {len(batch)} partitions on broker {broker}",
            )
            candidates += [
                (tp, p)
                for p in producers
                if p.current_transaction_start_offset is not None
                and now - p.last_timestamp > max_timeout_ms
            ]

    hanging: list[tuple[TopicPartition, Any]] = []
    if candidates:
        pids = sorted({p.producer_id for _, p in candidates})
        listed = _result(
            admin.list_transactions(producer_ids=pids, request_timeout=timeout),
            f"Failed to list transactions for {len(pids)} producers",
        )
        tids = {t.producer_id: t.transactional_id for t in listed if t.producer_id in pids}
        descriptions: dict[str, Any] = {}
        futures = admin.describe_transactions(sorted(set(tids.values())), request_timeout=timeout)
        for tid, f in futures.items():
            try:
                descriptions[tid] = f.result()
            except TransactionalIdNotFound:
                pass
            except Exception as e:
                raise _failed(f"Failed to describe {len(futures)} transactions", e) from e
        for tp, p in candidates:
            d = descriptions.get(tids.get(p.producer_id, ""))
            # The coordinator still holds the partition while it is in the transaction, or
            # until its marker is written: only a partition it does not hold is hanging.
            if d is None or tp not in d.topic_partitions:
                hanging.append((tp, p))

    now = _now_ms()
    rows = [
        [
            tp.topic,
            str(tp.partition),
            str(p.producer_id),
            str(p.producer_epoch),
            str(-1 if p.coordinator_epoch is None else p.coordinator_epoch),
            str(p.current_transaction_start_offset),
            str(p.last_timestamp),
            str((now - p.last_timestamp) // 60_000),
        ]
        for tp, p in hanging
    ]
    out.write(table(HANGING_HEADERS, rows))
