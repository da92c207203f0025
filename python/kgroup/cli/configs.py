"""``kgroup configs``: users' SCRAM credentials, as kafka-configs.sh manages them.

    kgroup configs --alter --add-config 'SCRAM-SHA-256=[iterations=8192,password=secret]' \\
        --entity-type users --entity-name alice
    kgroup configs --alter --delete-config SCRAM-SHA-256 --entity-type users --entity-name alice
    kgroup configs --describe --entity-type users [--entity-name alice]

The output is kafka-configs.sh's: ``Completed updating config for user alice.`` after
``--alter``; for ``--describe`` one line a user with credentials, ``SCRAM credential configs
for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096``.
Iterations default to 4096, Kafka's minimum; the password is salted by the client and never
sent. Only the ``users`` entity type and its SCRAM configs are served so far.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, TextIO

from kgroup.cli.connect import add_connection_options, client_config
from kgroup.errors import InvalidArgument

__all__ = ["add_parser", "run"]

#: DEFAULT_ITERATIONS are kafka-configs.sh's when none are given.
DEFAULT_ITERATIONS = 4096
_SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")
_CREDENTIAL = re.compile(r"(?:iterations=(-?[0-9]*),)?password=(.*)", re.DOTALL)
# kafka-configs.sh splits --add-config on commas outside brackets.
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``configs`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "configs",
        help="users' SCRAM credentials (kafka-configs.sh)",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--alter", action="store_true", help="change configs")
    what.add_argument("--describe", action="store_true", help="list configs")
    p.add_argument("--entity-type", help="users")
    p.add_argument("--entity-name", help="the user (default with --describe: every user)")
    p.add_argument("--user", help="the same as --entity-type users --entity-name USER")
    p.add_argument(
        "--add-config",
        metavar="K=V,...",
        help="configs to add: 'SCRAM-SHA-256=[iterations=8192,password=secret]'",
    )
    p.add_argument("--delete-config", metavar="K,...", help="configs to remove: SCRAM-SHA-256")
    add_connection_options(p)
    p.set_defaults(func=run)
    return p


def parse_add_config(value: str) -> dict[str, str]:
    """``--add-config``'s pairs as kafka-configs.sh reads them: comma-separated ``key=value``,
    a value in brackets may hold commas (the brackets are dropped)."""
    out: dict[str, str] = {}
    for item in re.split("," + _OUTSIDE_BRACKETS, value):
        pair = re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, item)
        if len(pair) != 2:
            raise InvalidArgument(
                'Invalid entity config: all configs to be added must be in the format "key=val" '
                'or  "key=[val1,val2]" to group values which contain commas.'
            )
        out[pair[0].strip()] = re.sub(r"\[?\]?", "", pair[1]).strip()
    return out


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``configs``; returns the exit status."""
    from kgroup.client.admin import AdminClient

    out = out or sys.stdout
    entity_type, name = args.entity_type, args.entity_name
    if args.user is not None:
        entity_type, name = "users", args.user
    if entity_type not in ("users", "user"):
        raise InvalidArgument(
            f"kgroup configs serves --entity-type users (SCRAM credentials), not {entity_type}"
        )
    with AdminClient(client_config(args)) as admin:
        if args.describe:
            return _describe(admin, name, out)
        if not name:
            raise InvalidArgument("an entity name must be specified with --alter of users")
        return _alter(admin, args, name, out)


def _describe(admin: Any, name: str | None, out: TextIO) -> int:
    from kgroup.errors import ResourceNotFound

    if name:
        futures = admin.describe_user_scram_credentials([name])
        descriptions = {}
        for user, f in futures.items():
            try:
                descriptions[user] = f.result()
            except ResourceNotFound:
                continue  # Java's result.users() leaves out users without credentials
    else:
        descriptions = admin.describe_user_scram_credentials().result()
    for user, d in descriptions.items():
        text = ", ".join(
            f"{info.mechanism.mechanism_name}=iterations={info.iterations}"
            for info in d.scram_credential_infos
        )
        print(f"SCRAM credential configs for user-principal '{user}' are {text}", file=out)
    return 0


def _alter(admin: Any, args: argparse.Namespace, user: str, out: TextIO) -> int:
    from kgroup.client.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    adds = parse_add_config(args.add_config) if args.add_config else {}
    deletes = [d.strip() for d in (args.delete_config or "").split(",") if d.strip()]
    unknown = [k for k in [*adds, *deletes] if k not in _SCRAM]
    if unknown:
        raise InvalidArgument(
            "Only quota and SCRAM credential configs can be added for 'users' using "
            f"--bootstrap-server. Unexpected config names: {', '.join(unknown)} (kgroup has no "
            "client quotas yet)"
        )
    alterations: list[Any] = [
        UserScramCredentialDeletion(user, ScramMechanism[m.replace("-", "_")]) for m in deletes
    ]
    for mechanism, credential in adds.items():
        m = _CREDENTIAL.fullmatch(credential)
        if m is None:
            raise InvalidArgument(f"Invalid credential property {mechanism}={credential}")
        iterations = int(m.group(1)) if m.group(1) not in (None, "", "-1") else DEFAULT_ITERATIONS
        if iterations < DEFAULT_ITERATIONS:
            raise InvalidArgument(
                f"Iterations {iterations} is less than the minimum {DEFAULT_ITERATIONS} required "
                f"for {mechanism}"
            )
        info = ScramCredentialInfo(ScramMechanism[mechanism.replace("-", "_")], iterations)
        alterations.append(UserScramCredentialUpsertion(user, info, m.group(2).encode()))
    if not alterations:
        raise InvalidArgument("--alter needs --add-config or --delete-config")
    for f in admin.alter_user_scram_credentials(alterations).values():
        f.result()
    print(f"Completed updating config for user {user}.", file=out)
    return 0
