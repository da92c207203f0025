"""The options every command that talks to a cluster shares, as Kafka's scripts take them:
``--bootstrap-server HOST:PORT`` (default 127.0.0.1:9092) and ``--command-config FILE`` (a
``.properties`` file of client configs, read by Java's rules: ``key=value`` or ``key: value``
lines, ``#`` and ``!`` comments, backslash continuations).

Not a subcommand: ``topics``, ``groups``, ``produce`` and ``consume`` use it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kgroup.broker.config import parse_properties

__all__ = ["add_connection_options", "client_config"]


def add_connection_options(p: argparse.ArgumentParser) -> None:
    """Add ``--bootstrap-server`` and ``--command-config`` to ``p``."""
    p.add_argument(
        "--bootstrap-server",
        default="127.0.0.1:9092",
        metavar="HOST:PORT",
        help="the brokers to connect to (default 127.0.0.1:9092)",
    )
    p.add_argument(
        "--command-config",
        metavar="FILE",
        help="a properties file of client configs (key=value lines)",
    )


def client_config(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """The client config of ``args``: the command config file's keys, then
    ``bootstrap.servers`` from ``--bootstrap-server``, then ``extra``."""
    config: dict[str, Any] = {}
    if getattr(args, "command_config", None):
        # Java's .properties rules, shared with the broker's server.properties.
        config.update(parse_properties(Path(args.command_config).read_text()))
    config["bootstrap.servers"] = args.bootstrap_server
    config.update(extra)
    return config
