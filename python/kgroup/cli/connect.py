"""The options every command that talks to a cluster shares, as Kafka's scripts take them:
``--bootstrap-server HOST:PORT`` (default 127.0.0.1:9092) and ``--command-config FILE`` (a
``.properties`` file of client configs: ``key=value`` lines, ``#`` and ``!`` comments).

Not a subcommand: ``topics``, ``groups``, ``produce`` and ``consume`` use it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kgroup.errors import InvalidArgument

__all__ = ["add_connection_options", "client_config", "read_properties"]


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


def read_properties(path: str | Path) -> dict[str, str]:
    """A Java ``.properties`` file's ``key=value`` (or ``key:value``) lines as a dict; blank
    lines and lines starting with ``#`` or ``!`` are skipped."""
    out: dict[str, str] = {}
    for n, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            raise InvalidArgument(f"{path}:{n}: expected key=value, got {raw!r}")
        out[line[:sep].strip()] = line[sep + 1 :].strip()
    return out


def client_config(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """The client config of ``args``: the command config file's keys, then
    ``bootstrap.servers`` from ``--bootstrap-server``, then ``extra``."""
    config: dict[str, Any] = {}
    if getattr(args, "command_config", None):
        config.update(read_properties(args.command_config))
    config["bootstrap.servers"] = args.bootstrap_server
    config.update(extra)
    return config
