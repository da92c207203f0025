"""``kgroup consume``: print a topic's records, as kafka-console-consumer.sh.

    kgroup consume --topic orders --from-beginning --max-messages 10
    kgroup consume --topic orders --group billing --timeout-ms 5000 --json

Without ``--group`` the consumer joins a new group of its own (``console-consumer-NNNNN``, as
Kafka's console consumer does) and commits nothing. ``--from-beginning`` starts where the group
has no committed offset at the partitions' beginnings instead of their ends. It stops after
``--max-messages`` records, or when no record came for ``--timeout-ms``, and then says on
standard error how many it printed. Each record is its value on a line (``KEY<TAB>VALUE``
with ``--print-key``), or with ``--json`` a JSON object: topic, partition, offset, key, value,
timestamp, headers (keys and values as UTF-8 text, undecodable bytes escaped).
Uses :class:`kgroup.Consumer`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sys
import time
from typing import Any, TextIO

from kgroup.cli.connect import add_connection_options, client_config

__all__ = ["add_parser", "format_message", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``consume`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "consume",
        help="print a topic's records (kafka-console-consumer.sh)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--topic", required=True)
    p.add_argument("--group", help="the consumer group (default: a new one, no commits)")
    p.add_argument("--from-beginning", action="store_true")
    p.add_argument("--max-messages", type=int, metavar="N")
    p.add_argument("--timeout-ms", type=int, metavar="N", help="stop after N ms without records")
    p.add_argument("--json", action="store_true", help="one JSON object per record")
    p.add_argument("--print-key", action="store_true", help="KEY<TAB>VALUE lines")
    p.add_argument("--consumer-property", action="append", default=[], metavar="KEY=VALUE")
    add_connection_options(p)
    p.set_defaults(func=run)
    return p


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", "backslashreplace")


def format_message(msg: Any, as_json: bool, print_key: bool) -> str:
    """One record as the line ``consume`` prints."""
    if as_json:
        _, ts = msg.timestamp()
        headers = [[k, _text(v)] for k, v in (msg.headers() or [])]
        return json.dumps(
            {
                "topic": msg.topic(),
                "partition": msg.partition(),
                "offset": msg.offset(),
                "key": _text(msg.key()),
                "value": _text(msg.value()),
                "timestamp": ts,
                "headers": headers,
            }
        )
    value = _text(msg.value())
    value = "null" if value is None else value
    if print_key:
        key = _text(msg.key())
        return f"{'null' if key is None else key}\t{value}"
    return value


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Consume and print until a limit is reached or the user interrupts; returns 0."""
    out = out or sys.stdout
    extra: dict[str, Any] = {
        "auto.offset.reset": "earliest" if args.from_beginning else "latest",
    }
    if args.group:
        extra["group.id"] = args.group
    else:
        extra["group.id"] = f"console-consumer-{random.randrange(100000)}"
        extra["enable.auto.commit"] = False
    for item in args.consumer_property:
        k, _, v = item.partition("=")
        extra[k.strip()] = v
    consumer: Any = importlib.import_module("kgroup").Consumer(client_config(args, **extra))
    count = 0
    try:
        consumer.subscribe([args.topic])
        last = time.monotonic()
        while args.max_messages is None or count < args.max_messages:
            msg = consumer.poll(0.2)
            if msg is None or msg.error() is not None:
                if msg is not None and getattr(msg.error(), "code", None) not in (-191,):
                    print(f"kgroup: error: {msg.error()}", file=sys.stderr)
                if args.timeout_ms is not None and (time.monotonic() - last) * 1000 >= (
                    args.timeout_ms
                ):
                    break
                continue
            last = time.monotonic()
            print(format_message(msg, args.json, args.print_key), file=out, flush=True)
            count += 1
    except KeyboardInterrupt:
        pass
    finally:
        consumer.close()
        print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0
