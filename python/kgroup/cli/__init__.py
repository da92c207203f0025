"""The ``kgroup`` command.

kgroup broker                                             a Kafka broker on 127.0.0.1:9092
kgroup partition --partitions 12 KEY...                   where each key goes
kgroup assign --strategy range --topics t:12 --members 4  which member reads which partition
kgroup topics create --topic t --partitions 3             kafka-topics.sh
kgroup groups describe GROUP                              kafka-consumer-groups.sh
kgroup transactions list                                  kafka-transactions.sh
kgroup configs --describe --entity-type users             kafka-configs.sh: SCRAM users
kgroup log-dirs                                           kafka-log-dirs.sh: disk use, errors
kgroup acls --list                                        kafka-acls.sh
kgroup produce --topic t / kgroup consume --topic t       the console producer and consumer

Each subcommand is one module of this package with the same two functions:

- ``add_parser(subparsers) -> argparse.ArgumentParser`` adds the subcommand and its options,
  and sets ``func=run`` as the parser's default;
- ``run(args, out=None) -> int`` does the work, prints to ``out`` (standard output if None) and
  returns the exit status.

A new subcommand is a new module and one more entry in ``SUBCOMMANDS``. A subcommand's module
is imported only when that subcommand runs (or ``kgroup --help`` lists them all): ``kgroup
broker`` does not load numpy or the client for the other subcommands (14 MB of resident memory
and some 0.15 s of start-up). Errors are handled here
once for all of them: a :class:`~kgroup.errors.KGroupError` or an ``OSError`` is printed as
``kgroup: error: ...`` with exit status 2, not as a traceback; a closed pipe on standard output
ends the command quietly with status 0.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, Protocol, TextIO, cast

from kgroup.errors import KGroupError

__all__ = ["SUBCOMMANDS", "Subcommand", "build_parser", "main", "subcommand"]


class Subcommand(Protocol):
    """What ``main`` needs of a subcommand module."""

    def add_parser(self, subparsers: Any) -> argparse.ArgumentParser: ...

    def run(self, args: argparse.Namespace, out: TextIO | None = None) -> int: ...


#: SUBCOMMANDS maps each subcommand's name to its module in this package, in the order
#: ``kgroup --help`` lists them.
SUBCOMMANDS: dict[str, str] = {
    "broker": "broker",
    "partition": "partition",
    "assign": "assign",
    "topics": "topics",
    "groups": "groups",
    "transactions": "transactions",
    "configs": "configs",
    "log-dirs": "log_dirs",
    "acls": "acls",
    "produce": "produce",
    "consume": "consume",
}


def subcommand(name: str) -> Subcommand:
    """The module of the subcommand ``name`` (imported now if it was not)."""
    return cast(Subcommand, importlib.import_module(f"{__name__}.{SUBCOMMANDS[name]}"))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``kgroup`` parser, with one subparser per subcommand of ``SUBCOMMANDS``, or only
    ``command``'s if given (the others' modules are then not imported)."""
    parser = argparse.ArgumentParser(prog="kgroup", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in [command] if command is not None else SUBCOMMANDS:
        subcommand(name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kgroup`` with ``argv`` (``sys.argv[1:]`` if None); returns the exit status."""
    from_command_line = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    args = build_parser(command).parse_args(argv)
    if from_command_line and command == "broker":
        # The broker's process is its own: it may choose its memory allocator (this returns
        # only where it does not).
        subcommand("broker").on_system_allocator()  # type: ignore[attr-defined]
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader went away (`kgroup partition ... | head`): not an error. This clause comes
        # before OSError's, its base class. Python flushes stdout once more on exit, which would
        # fail the same way, so stdout goes to devnull.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (KGroupError, OSError) as e:
        print(f"kgroup: error: {e}", file=sys.stderr)
        return 2
