"""``kgroup log-dirs``: each broker's log directories, the disk use of each topic in them, and
any directory in error, as kafka-log-dirs.sh --describe reports them.

    kgroup log-dirs                         every broker, every topic
    kgroup log-dirs --topic-list orders     only these topics
    kgroup log-dirs --json                  kafka-log-dirs.sh's JSON

The table gives, for each directory, its broker, its path, its filesystem's size and free
space (where the broker says: DescribeLogDirs v4), and its error (``KAFKA_STORAGE_ERROR`` while
writes to it fail); then one line per topic with its partitions there and their total size.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from kgroup.cli.connect import add_connection_options, client_config

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``log-dirs`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "log-dirs",
        help="disk use per topic and log directory errors (kafka-log-dirs.sh)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--topic-list", help="comma-separated topics (default: all)")
    p.add_argument("--broker-list", help="comma-separated broker ids (default: all)")
    p.add_argument("--json", action="store_true", help="kafka-log-dirs.sh's JSON output")
    add_connection_options(p)
    p.set_defaults(func=run)
    return p


def human(n: int | None) -> str:
    """A byte count as people read it: ``0 B``, ``12.3 KB``, ``1.5 GB`` (powers of 1024)."""
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _error_name(error: Any) -> str | None:
    return None if error is None else str(error.name)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Describe the log directories; returns the exit status."""
    from kgroup.client.admin import AdminClient

    out = out or sys.stdout
    topics = set(args.topic_list.split(",")) if args.topic_list else None
    brokers = [int(b) for b in args.broker_list.split(",")] if args.broker_list else None
    with AdminClient(client_config(args)) as admin:
        partitions = None
        if topics is not None:
            md = admin.list_topics()
            partitions = [
                (t, p) for t in sorted(topics) if t in md.topics for p in md.topics[t].partitions
            ]
        futures = admin.describe_log_dirs(brokers, partitions)
        described = {node: f.result() for node, f in sorted(futures.items())}
    if args.json:
        doc = {
            "version": 1,
            "brokers": [
                {
                    "broker": node,
                    "logDirs": [
                        {
                            "logDir": path,
                            "error": _error_name(d.error),
                            "partitions": [
                                {
                                    "partition": f"{tp.topic}-{tp.partition}",
                                    "size": r.size,
                                    "offsetLag": r.offset_lag,
                                    "isFuture": r.is_future,
                                }
                                for tp, r in sorted(
                                    d.replicas.items(),
                                    key=lambda kv: (kv[0].topic, kv[0].partition),
                                )
                                if topics is None or tp.topic in topics
                            ],
                        }
                        for path, d in sorted(dirs.items())
                    ],
                }
                for node, dirs in described.items()
            ],
        }
        print(json.dumps(doc), file=out)
        return 0
    for node, dirs in described.items():
        for path, d in sorted(dirs.items()):
            print(
                f"Broker {node}\t{path}\tsize: {human(d.total_bytes)}\t"
                f"free: {human(d.usable_bytes)}\terror: {_error_name(d.error) or 'none'}",
                file=out,
            )
            per_topic: dict[str, list[int]] = {}
            for tp, r in d.replicas.items():
                if topics is None or tp.topic in topics:
                    per_topic.setdefault(tp.topic, []).append(r.size)
            for topic, sizes in sorted(per_topic.items()):
                print(
                    f"\tTopic: {topic}\tPartitions: {len(sizes)}\tSize: {human(sum(sizes))}"
                    f" ({sum(sizes)} bytes)",
                    file=out,
                )
    return 0
