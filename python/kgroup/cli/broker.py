"""``kgroup broker``: run a Kafka-compatible broker on this machine, its data on disk.

    kgroup broker                                   # 127.0.0.1:9092, data in ./kgroup-data
    kgroup broker --listen 127.0.0.1:0 --data-dir /tmp/k --advertised-listener localhost:19092
    kgroup broker --config server.properties --log-level DEBUG
    kgroup broker --config sasl.properties --add-scram 'SCRAM-SHA-256=[name=alice,password=pw]'

``--config`` reads a Kafka ``server.properties`` (num.partitions, log.retention.ms, ...); the
options given here win over it. One line per notable event goes to standard error, in Kafka's
log format. Ctrl-C or SIGTERM finishes the requests in flight, flushes every log and stops.
The process runs on the C library's allocator (``PYTHONMALLOC=malloc``, set by starting itself
again) unless ``PYTHONMALLOC`` is set: see ``on_system_allocator``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any, TextIO

__all__ = ["add_parser", "on_system_allocator", "run"]

LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``broker`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "broker",
        help="run a Kafka-compatible broker (single node, data on disk)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument(
        "--listen",
        default="127.0.0.1:9092",
        metavar="HOST:PORT",
        help="where to listen (default 127.0.0.1:9092; port 0 picks a free one)",
    )
    p.add_argument(
        "--data-dir",
        help="the data folder, or several comma-separated (default ./kgroup-data, or log.dirs)",
    )
    p.add_argument(
        "--advertised-listener",
        metavar="HOST:PORT",
        help="the address clients are told to connect to (default: the listener's)",
    )
    p.add_argument("--config", help="a server.properties file")
    p.add_argument(
        "--add-scram",
        action="append",
        default=[],
        metavar="MECH=[name=U,password=P]",
        help="a SCRAM user, as kafka-storage format's: 'SCRAM-SHA-256=[name=alice,"
        "password=alice-secret]' (kept if the user already has one of that mechanism)",
    )
    p.add_argument(
        "--log-level",
        default="INFO",
        type=lambda v: {"WARN": "WARNING", "TRACE": "DEBUG"}.get(v.upper(), v.upper()),
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="the least important events logged (default INFO; log4j's WARN and TRACE too)",
    )
    p.add_argument(
        "--event-loop",
        default="auto",
        choices=("auto", "uvloop", "asyncio"),
        help="the event loop (default auto: uvloop where installed, else asyncio's)",
    )
    p.set_defaults(func=run)
    return p


def on_system_allocator() -> None:
    """Run this process again, the same command, on the C library's allocator
    (``PYTHONMALLOC=malloc``) unless ``PYTHONMALLOC`` says which to use.

    Python's own allocator keeps a 1 MiB arena while any object in it lives: after 10,000
    connections came and went, the broker kept about 25 MB of arenas held by a few objects
    each (bench_abuse: 61 MB after, 36 MB idle). On the C library's allocator, which the broker
    trims after bursts of closes, it returns to within about 6 MB of idle. bench_broker, two
    runs each: consuming 100-byte records about 6% slower, its other throughputs and latencies
    within their noise. Only for ``kgroup broker``'s own
    process (``kgroup.cli.main`` from the command line), on POSIX."""
    if "PYTHONMALLOC" in os.environ or os.name != "posix":
        return
    argv = list(getattr(sys, "orig_argv", ()))
    if not sys.executable or not argv:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, dict(os.environ, PYTHONMALLOC="malloc"))


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the broker until it is interrupted; returns the exit status."""
    from kgroup.broker import Broker, _listener

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger("kgroup")
    root.addHandler(handler)
    root.setLevel(args.log_level)
    host, port = _listener(args.listen)
    broker = Broker(
        args.data_dir,
        host=host,
        port=port,
        advertised_listener=args.advertised_listener,
        config_file=args.config,
        event_loop=args.event_loop,
        add_scram=args.add_scram,
    )
    try:
        broker.run()
    except KeyboardInterrupt:  # pragma: no cover - a second Ctrl-C during shutdown
        return 130
    return 0
