"""``kgroup produce``: send standard input's lines to a topic, as kafka-console-producer.sh.

    kgroup produce --topic orders < lines.txt
    printf 'k1\tv1\n' | kgroup produce --topic orders --key-separator '\t'
    kgroup produce --topic orders --property parse.key=true --property key.separator=:

Each line is one record's value; with ``--key-separator SEP`` (or the console producer's
``--property parse.key=true`` and ``key.separator``, default a tab) a line is ``KEY<SEP>VALUE``,
and a line without the separator is an error, as Kafka's ``LineMessageReader`` says.
``--producer-property KEY=VALUE`` sets a producer config. Uses :class:`kgroup.Producer`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, TextIO

from kgroup.cli.connect import add_connection_options, client_config
from kgroup.errors import InvalidArgument

__all__ = ["add_parser", "run"]


def _unescape(sep: str) -> str:
    """``'\\t'`` typed on a command line as the tab it means."""
    return sep.encode().decode("unicode_escape")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``produce`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "produce",
        help="send standard input's lines to a topic (kafka-console-producer.sh)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--topic", required=True)
    p.add_argument(
        "--key-separator",
        metavar="SEP",
        help="lines are KEY<SEP>VALUE (escapes such as \\t understood)",
    )
    p.add_argument(
        "--property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="the console producer's parse.key, key.separator",
    )
    p.add_argument("--producer-property", action="append", default=[], metavar="KEY=VALUE")
    add_connection_options(p)
    p.set_defaults(func=run)
    return p


def _pairs(items: list[str], option: str) -> dict[str, str]:
    out = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep:
            raise InvalidArgument(f"{option} {item!r} is not KEY=VALUE")
        out[k.strip()] = v
    return out


def run(args: argparse.Namespace, out: TextIO | None = None, stdin: TextIO | None = None) -> int:
    """Produce every line of ``stdin`` (standard input if None); returns the exit status."""
    props = _pairs(args.property, "--property")
    separator: str | None = None
    if args.key_separator is not None:
        separator = _unescape(args.key_separator)
    elif props.get("parse.key", "false").lower() == "true":
        separator = _unescape(props.get("key.separator", "\t"))
    config = client_config(args, **_pairs(args.producer_property, "--producer-property"))
    producer: Any = importlib.import_module("kgroup").Producer(config)
    errors: list[Any] = []

    def delivered(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err)

    try:
        lines = stdin or sys.stdin
        for n, raw in enumerate(lines, 1):
            line = raw.rstrip("\n").rstrip("\r")
            key: str | None = None
            value = line
            if separator is not None:
                key, sep, value = line.partition(separator)
                if not sep:
                    producer.flush()
                    raise InvalidArgument(f"No key separator found on line number {n}: '{line}'")
            while True:
                try:
                    producer.produce(
                        args.topic,
                        value.encode(),
                        key=None if key is None else key.encode(),
                        on_delivery=delivered,
                    )
                    break
                except BufferError:  # buffer.memory is full: let deliveries make room
                    producer.poll(0.1)
            producer.poll(0)
        remaining = producer.flush()
    finally:
        producer.close(0)
    if errors or remaining:
        print(
            f"kgroup: error: {len(errors) + (remaining or 0)} records not delivered: "
            f"{errors[0] if errors else 'timed out'}",
            file=sys.stderr,
        )
        return 1
    return 0
