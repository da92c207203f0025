"""``kgroup configs``: client quotas and users' SCRAM credentials, as kafka-configs.sh manages
them.

    kgroup configs --alter --add-config 'producer_byte_rate=1024,consumer_byte_rate=2048' \\
        --entity-type clients --entity-name app-1
    kgroup configs --alter --add-config request_percentage=200 \\
        --entity-type users --entity-name alice --entity-type clients --entity-default
    kgroup configs --describe --entity-type clients [--entity-name app-1 | --entity-default]
    kgroup configs --alter --add-config 'SCRAM-SHA-256=[iterations=8192,password=secret]' \\
        --entity-type users --entity-name alice
    kgroup configs --alter --delete-config SCRAM-SHA-256 --entity-type users --entity-name alice
    kgroup configs --describe --entity-type users [--entity-name alice]

Entities are given as kafka-configs.sh takes them: ``--entity-type`` (users, clients, ips)
each followed by ``--entity-name`` or ``--entity-default``, or ``--user``, ``--client``,
``--ip`` and their ``--*-defaults``. The output is kafka-configs.sh's: ``Completed updating
config for client app-1.`` after ``--alter``; for ``--describe`` ``Quota configs for
client-id 'app-1' are producer_byte_rate=1024.0`` and ``SCRAM credential configs for
user-principal 'alice' are SCRAM-SHA-256=iterations=8192``. SCRAM iterations default to 4096,
Kafka's minimum; the password is salted by the client and never sent.
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
        help="client quotas and users' SCRAM credentials (kafka-configs.sh)",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--alter", action="store_true", help="change configs")
    what.add_argument("--describe", action="store_true", help="list configs")
    names = "entity_names"
    p.add_argument("--entity-type", action="append", default=[], help="users, clients or ips")
    p.add_argument("--entity-name", dest=names, action="append", help="the entity's name")
    p.add_argument(
        "--entity-default", dest=names, action="append_const", const="", help="its default"
    )
    for short, kind in (("user", "users"), ("client", "clients"), ("ip", "ips")):
        p.add_argument(f"--{short}", dest=f"short_{short}", help=f"--entity-type {kind} and name")
        p.add_argument(
            f"--{short}-defaults",
            dest=f"short_{short}",
            action="store_const",
            const="",
            help=f"--entity-type {kind} --entity-default",
        )
    p.add_argument(
        "--add-config",
        metavar="K=V,...",
        help="configs to add: producer_byte_rate=1024 or "
        "'SCRAM-SHA-256=[iterations=8192,password=secret]'",
    )
    p.add_argument("--delete-config", metavar="K,...", help="configs to remove: producer_byte_rate")
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


#: QUOTA_KEYS are the quota configs of each entity type (Kafka's QuotaConfig).
QUOTA_KEYS = {
    "users": ("producer_byte_rate", "consumer_byte_rate", "request_percentage",
              "controller_mutation_rate"),
    "clients": ("producer_byte_rate", "consumer_byte_rate", "request_percentage",
                "controller_mutation_rate"),
    "ips": ("connection_creation_rate",),
}  # fmt: skip
_ENTITY = {"users": "user", "clients": "client-id", "ips": "ip"}
_SHOWN = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}


def entities(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The entity types and names given (``""``: a default), as kafka-configs.sh pairs them."""
    types = [_plural(t) for t in args.entity_type]
    names = list(args.entity_names or [])
    for short, kind in (("user", "users"), ("client", "clients"), ("ip", "ips")):
        value = getattr(args, f"short_{short}", None)
        if value is not None:
            types.append(kind)
            names.append(value)
    if not types:
        raise InvalidArgument("an --entity-type (users, clients or ips) must be specified")
    if args.alter and len(names) != len(types):
        raise InvalidArgument(
            "an entity name must be specified with --alter of users, clients, ips"
        )
    if len(names) > len(types):
        raise InvalidArgument("More entity names specified than entity types")
    return types, names


def _plural(kind: str) -> str:
    kind = {"user": "users", "client": "clients", "ip": "ips"}.get(kind, kind)
    if kind not in QUOTA_KEYS:
        raise InvalidArgument(
            f"Invalid entity type {kind}, the entity type must be one of users, clients, ips "
            "(kgroup configs: topics and brokers are kgroup topics' and the broker's)"
        )
    return kind


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``configs``; returns the exit status."""
    from kgroup.client.admin import AdminClient

    out = out or sys.stdout
    types, names = entities(args)
    with AdminClient(client_config(args)) as admin:
        if args.describe:
            _describe_quotas(admin, types, names, out)
            if "clients" not in types and "ips" not in types and "" not in names:
                _describe(admin, names[0] if names else None, out)
            return 0
        adds = parse_add_config(args.add_config) if args.add_config else {}
        deletes = [d.strip() for d in (args.delete_config or "").split(",") if d.strip()]
        if not adds and not deletes:
            raise InvalidArgument("--alter needs --add-config or --delete-config")
        scram = [k for k in [*adds, *deletes] if k in _SCRAM]
        if scram and (types != ["users"] or names == [""]):
            raise InvalidArgument(
                "SCRAM credentials are a user's: --entity-type users --entity-name USER "
                "(the use of --entity-default is not allowed with User SCRAM Credentials)"
            )
        if scram and len(scram) != len(adds) + len(deletes):
            raise InvalidArgument(
                "Cannot alter both quota and SCRAM credential configs simultaneously for "
                "'users' using --bootstrap-server."
            )
        if scram:
            _alter(admin, adds, deletes, names[0])
        else:
            _alter_quotas(admin, types, names, adds, deletes)
        kind, name = types[0], names[0]
        if name:
            print(f"Completed updating config for {kind[:-1]} {name}.", file=out)
        else:
            print(f"Completed updating default config for {kind} in the cluster.", file=out)
    return 0


def _components(types: list[str], names: list[str]) -> list[Any]:
    from kgroup.client.admin import ClientQuotaFilterComponent

    out = []
    for i, kind in enumerate(types):
        entity = _ENTITY[kind]
        if i >= len(names):
            out.append(ClientQuotaFilterComponent(entity))
        elif names[i] == "":
            out.append(ClientQuotaFilterComponent(entity, default=True))
        else:
            out.append(ClientQuotaFilterComponent(entity, names[i]))
    return out


def _describe_quotas(admin: Any, types: list[str], names: list[str], out: TextIO) -> None:
    found = admin.describe_client_quotas(_components(types, names), strict=True).result()
    for entity in sorted(found, key=lambda e: e.entries):
        parts = entity.as_dict()
        shown = ", ".join(
            f"the default {_SHOWN[t]}" if not parts[t] else f"{_SHOWN[t]} '{parts[t]}'"
            for t in ("user", "client-id", "ip")
            if t in parts
        )
        values = ", ".join(f"{k}={java_double(v)}" for k, v in java_map_order(found[entity]))
        print(f"Quota configs for {shown} are {values}", file=out)


def _alter_quotas(
    admin: Any, types: list[str], names: list[str], adds: dict[str, str], deletes: list[str]
) -> None:
    from kgroup.client.admin import ClientQuotaAlteration, ClientQuotaEntity

    for kind in types:
        unknown = [k for k in [*adds, *deletes] if k not in QUOTA_KEYS[kind]]
        if unknown:
            what = "connection quota" if kind == "ips" else "quota"
            raise InvalidArgument(
                f"Only {what} configs can be added for '{kind}' using --bootstrap-server. "
                f"Unexpected config names: {', '.join(unknown)}"
            )
    entity = ClientQuotaEntity({_ENTITY[t]: (n or None) for t, n in zip(types, names, strict=True)})
    current = admin.describe_client_quotas(_components(types, names), strict=True).result()
    invalid = [k for k in deletes if k not in current.get(entity, {})]
    if invalid:
        raise InvalidArgument(f"Invalid config(s): {','.join(invalid)}")
    ops: dict[str, float | None] = {}
    for key, value in adds.items():
        try:
            ops[key] = float(value)
        except ValueError:
            raise InvalidArgument(
                f"Cannot parse quota configuration value for {key}: {value}"
            ) from None
    ops.update({key: None for key in deletes})
    for f in admin.alter_client_quotas([ClientQuotaAlteration(entity, ops)]).values():
        f.result()


def java_double(value: float) -> str:
    """``value`` as Java's Double.toString writes it: ``1024.0``, ``1.0E12``."""
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        text = repr(float(value))
        return text if "e" not in text else java_double_sci(value)
    return java_double_sci(value)


def java_double_sci(value: float) -> str:
    import decimal

    sign, digits, exp = decimal.Decimal(repr(float(value))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) + int(exp) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


def java_map_order(values: dict[str, float]) -> list[tuple[str, float]]:
    """The iteration order of a Java ``HashMap(n)`` of these string keys, filled in this order
    (Java's admin client puts the quota values it receives into one, which kafka-configs.sh
    prints): by bucket of the spread String.hashCode, then insertion."""
    n = len(values)
    cap = 1
    while cap < n:
        cap *= 2
    while n > int(cap * 0.75):
        cap *= 2

    def bucket(key: str) -> int:
        h = 0
        for ch in key:
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    return sorted(values.items(), key=lambda kv: bucket(kv[0]))


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


def _alter(admin: Any, adds: dict[str, str], deletes: list[str], user: str) -> None:
    from kgroup.client.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
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
    for f in admin.alter_user_scram_credentials(alterations).values():
        f.result()
