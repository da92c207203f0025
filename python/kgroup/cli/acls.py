"""``kgroup acls``: add, remove and list ACLs, as kafka-acls.sh does.

    kgroup acls --add --allow-principal User:alice --operation Read --topic orders
    kgroup acls --add --allow-principal User:bob --consumer --topic orders --group billing
    kgroup acls --add --deny-principal User:eve --deny-host 10.0.0.7 --operation All --cluster
    kgroup acls --list                                every ACL
    kgroup acls --list --topic orders                 those of one topic (literal name)
    kgroup acls --remove --force --topic orders       every ACL of a topic

Resources: ``--topic``, ``--group``, ``--transactional-id`` (each may be given more than once,
``*`` for all), ``--cluster``, ``--delegation-token``, ``--user-principal``; with
``--resource-pattern-type`` LITERAL (the default when adding or removing), PREFIXED, and for
``--list`` and ``--remove`` also ANY (the default for ``--list``) and MATCH. Operations are
Kafka's names (``Read``, ``Write``, ``Describe``, ``DescribeConfigs``, ``IdempotentWrite``,
``All``, ...; ``--operation`` may be repeated; All by default). ``--producer`` stands for WRITE,
DESCRIBE and CREATE on the topics (and WRITE and DESCRIBE on the transactional ids, or
IDEMPOTENT_WRITE on the cluster with ``--idempotent``); ``--consumer`` for READ and DESCRIBE on
the topics and READ on the groups. An allow or deny principal without hosts applies from any
host (``*``). ``--remove`` asks before it removes unless ``--force`` is given. The output is
kafka-acls.sh's.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from kgroup.cli.connect import add_connection_options, client_config

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``acls`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "acls",
        help="add, remove and list ACLs (kafka-acls.sh)",
        description=__doc__.split("\n\n")[0],
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--add", action="store_true", help="add ACLs")
    what.add_argument("--remove", action="store_true", help="remove ACLs")
    what.add_argument("--list", action="store_true", help="list ACLs")
    p.add_argument("--allow-principal", action="append", default=[], metavar="PRINCIPAL")
    p.add_argument("--deny-principal", action="append", default=[], metavar="PRINCIPAL")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST")
    p.add_argument("--deny-host", action="append", default=[], metavar="HOST")
    p.add_argument("--principal", action="append", default=[], help="--list: only these")
    p.add_argument("--operation", action="append", default=[], metavar="OPERATION")
    p.add_argument("--topic", action="append", default=[])
    p.add_argument("--group", action="append", default=[])
    p.add_argument("--transactional-id", action="append", default=[])
    p.add_argument("--delegation-token", action="append", default=[])
    p.add_argument("--user-principal", action="append", default=[])
    p.add_argument("--cluster", action="store_true", help="the cluster resource")
    p.add_argument(
        "--resource-pattern-type",
        type=str.upper,
        choices=["ANY", "MATCH", "LITERAL", "PREFIXED"],
        help="how resource names match (default LITERAL; ANY for --list)",
    )
    p.add_argument("--producer", action="store_true", help="a producer's ACLs")
    p.add_argument("--consumer", action="store_true", help="a consumer's ACLs")
    p.add_argument("--idempotent", action="store_true", help="with --producer: IDEMPOTENT_WRITE")
    p.add_argument("--force", action="store_true", help="--remove without asking")
    add_connection_options(p)
    p.set_defaults(func=run)
    return p


def _operation(name: str) -> Any:
    from kgroup.acl import AclOperation

    key = "".join(c for c in name if c.isalnum()).upper()
    for op in AclOperation:
        if op.name.replace("_", "") == key and op not in (AclOperation.UNKNOWN, AclOperation.ANY):
            return op
    raise SystemExit(f"kgroup acls: unknown operation {name!r}")


def _resources(args: argparse.Namespace) -> list[tuple[Any, str]]:
    from kgroup.acl import CLUSTER_NAME, ResourceType

    out = [(ResourceType.TOPIC, t) for t in args.topic]
    out += [(ResourceType.GROUP, g) for g in args.group]
    out += [(ResourceType.TRANSACTIONAL_ID, t) for t in args.transactional_id]
    out += [(ResourceType.DELEGATION_TOKEN, t) for t in args.delegation_token]
    out += [(ResourceType.USER, u) for u in args.user_principal]
    if args.cluster:
        out.append((ResourceType.CLUSTER, CLUSTER_NAME))
    return out


def _entries(args: argparse.Namespace, operations: list[Any]) -> list[tuple[str, str, Any, Any]]:
    """(principal, host, operation, permission) for each principal, host and operation given."""
    from kgroup.acl import AclPermissionType

    out = []
    for principals, hosts, permission in (
        (args.allow_principal, args.allow_host or ["*"], AclPermissionType.ALLOW),
        (args.deny_principal, args.deny_host or ["*"], AclPermissionType.DENY),
    ):
        for principal in principals:
            for host in hosts:
                for op in operations:
                    out.append((principal, host, op, permission))
    return out


def _bindings(args: argparse.Namespace) -> list[Any]:
    """The bindings ``--add`` creates."""
    from kgroup.acl import AclBinding, AclOperation, ResourcePatternType, ResourceType

    pattern = ResourcePatternType[args.resource_pattern_type or "LITERAL"]
    if pattern not in (ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED):
        raise SystemExit("kgroup acls: --add takes a LITERAL or PREFIXED resource pattern type")
    if not (args.allow_principal or args.deny_principal):
        raise SystemExit("kgroup acls: --add needs --allow-principal or --deny-principal")
    wanted: list[tuple[Any, str, list[Any]]] = []
    if args.producer or args.consumer:
        if args.producer:
            for t in args.topic:
                wanted.append(
                    (
                        ResourceType.TOPIC,
                        t,
                        [AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE],
                    )
                )
            for t in args.transactional_id:
                wanted.append(
                    (
                        ResourceType.TRANSACTIONAL_ID,
                        t,
                        [AclOperation.WRITE, AclOperation.DESCRIBE],
                    )
                )
            if args.idempotent:
                from kgroup.acl import CLUSTER_NAME

                wanted.append((ResourceType.CLUSTER, CLUSTER_NAME, [AclOperation.IDEMPOTENT_WRITE]))
        if args.consumer:
            for t in args.topic:
                wanted.append((ResourceType.TOPIC, t, [AclOperation.READ, AclOperation.DESCRIBE]))
            for g in args.group:
                wanted.append((ResourceType.GROUP, g, [AclOperation.READ]))
    else:
        operations = [_operation(o) for o in args.operation] or [AclOperation.ALL]
        wanted = [(t, n, operations) for t, n in _resources(args)]
    if not wanted:
        raise SystemExit("kgroup acls: name a resource (--topic, --group, --cluster, ...)")
    out = []
    for restype, name, operations in wanted:
        for principal, host, op, permission in _entries(args, operations):
            out.append(AclBinding(restype, name, pattern, principal, host, op, permission))
    return list(dict.fromkeys(out))


def _filters(args: argparse.Namespace, listing: bool) -> list[Any]:
    """The filters ``--remove`` or ``--list`` selects with."""
    from kgroup.acl import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    default = "ANY" if listing else "LITERAL"
    pattern = ResourcePatternType[args.resource_pattern_type or default]
    resources: list[tuple[Any, str | None]] = list(_resources(args))
    if not resources:
        resources = [(ResourceType.ANY, None)]
    if listing:
        principals: list[str | None] = list(args.principal) or [None]
        return [
            AclBindingFilter(t, n, pattern, p, None, AclOperation.ANY, AclPermissionType.ANY)
            for t, n in resources
            for p in principals
        ]
    operations = [_operation(o) for o in args.operation]
    entries = _entries(args, operations or [AclOperation.ANY])
    if not (args.allow_principal or args.deny_principal):
        return [
            AclBindingFilter(t, n, pattern, None, None, op, AclPermissionType.ANY)
            for t, n in resources
            for op in (operations or [AclOperation.ANY])
        ]
    return [
        AclBindingFilter(t, n, pattern, principal, host, op, permission)
        for t, n in resources
        for principal, host, op, permission in entries
    ]


def _pattern(b: Any) -> str:
    restype = "CLUSTER" if b.restype == 4 else b.restype.name
    return (
        f"ResourcePattern(resourceType={restype}, name={b.name}, "
        f"patternType={b.resource_pattern_type.name})"
    )


def _entry(b: Any) -> str:
    return (
        f"(principal={b.principal}, host={b.host}, operation={b.operation.name}, "
        f"permissionType={b.permission_type.name})"
    )


def _by_pattern(bindings: list[Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for b in bindings:
        out.setdefault(_pattern(b), []).append(_entry(b))
    return out


def _filter_pattern(f: Any) -> str:
    restype = "CLUSTER" if f.restype == 4 else f.restype.name
    name = "<any>" if f.name is None else f.name
    return (
        f"ResourcePattern(resourceType={restype}, name={name}, "
        f"patternType={f.resource_pattern_type.name})"
    )


def _print_current(bindings: list[Any], out: TextIO) -> None:
    """``--list``'s lines, as AclCommand.printResourceAcls writes them."""
    for pattern, entries in _by_pattern(bindings).items():
        out.write(f"Current ACLs for resource `{pattern}`:\n")
        out.write("\n".join(f"\t{e}" for e in entries) + "\n\n")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Add, remove or list ACLs; returns the exit status."""
    from kgroup.client.admin import AdminClient

    out = out or sys.stdout
    with AdminClient(client_config(args)) as admin:
        if args.add:
            bindings = _bindings(args)
            for pattern, entries in _by_pattern(bindings).items():
                # AclCommand.addAcls' lines, its stray spaces included.
                out.write(f"Adding ACLs for resource `{pattern}`: \n ")
                out.write("\n".join(f"\t{e}" for e in entries) + "\n\n")
            for created in admin.create_acls(bindings).values():
                created.result()
            return 0
        if args.remove:
            filters = _filters(args, listing=False)
            if not args.force:
                shown = dict.fromkeys(_filter_pattern(f) for f in filters)
                for pattern in shown:
                    out.write(
                        f"Are you sure you want to delete all ACLs for resource filter "
                        f"`{pattern}`? (y/n)\n"
                        if not (args.allow_principal or args.deny_principal)
                        else f"Are you sure you want to remove ACLs from resource filter "
                        f"`{pattern}`? (y/n)\n"
                    )
                    out.flush()
                    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
                        return 1
            for f in admin.delete_acls(filters).values():
                f.result()
            return 0
        listed: list[Any] = []
        for flt in _filters(args, listing=True):
            listed += admin.describe_acls(flt).result()
        listed = list(dict.fromkeys(listed))
        if not args.principal:
            _print_current(listed, out)
            return 0
        for principal in args.principal:
            out.write(f"ACLs for principal `{principal}`\n")
            _print_current([b for b in listed if b.principal == principal], out)
    return 0
