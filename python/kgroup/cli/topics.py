"""``kgroup topics``: create, list, describe, alter and delete topics, as kafka-topics.sh does.

    kgroup topics create --topic orders --partitions 3 --config retention.ms=86400000
    kgroup topics list
    kgroup topics describe --topic orders
    kgroup topics alter --topic orders --partitions 6
    kgroup topics delete --topic orders

The output is kafka-topics.sh's: ``Created topic orders.``; one name a line, sorted; and for
each topic ``Topic: T<TAB>TopicId: ...<TAB>PartitionCount: 3<TAB>ReplicationFactor: 1<TAB>Configs:
...`` (the configs not at their defaults) then one line per partition. ``alter`` and ``delete``
print nothing when they succeed, as Kafka's do.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from kgroup.cli.connect import add_connection_options, client_config
from kgroup.errors import InvalidArgument

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``topics`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "topics",
        help="create, list, describe, alter and delete topics (kafka-topics.sh)",
        description=__doc__.split("\n\n")[0],
    )
    sub = p.add_subparsers(dest="action", required=True)
    create = sub.add_parser("create", help="create a topic")
    create.add_argument("--topic", required=True)
    create.add_argument("--partitions", type=int, default=-1, help="default: the broker's")
    create.add_argument("--replication-factor", type=int, default=-1)
    create.add_argument(
        "--config", action="append", default=[], metavar="KEY=VALUE", help="a topic config"
    )
    create.add_argument("--if-not-exists", action="store_true")
    listing = sub.add_parser("list", help="list the topics' names")
    listing.add_argument("--exclude-internal", action="store_true")
    describe = sub.add_parser("describe", help="describe topics and their partitions")
    describe.add_argument("--topic", help="one topic (default: all)")
    describe.add_argument("--exclude-internal", action="store_true")
    alter = sub.add_parser("alter", help="raise a topic's partition count")
    alter.add_argument("--topic", required=True)
    alter.add_argument("--partitions", type=int, required=True)
    delete = sub.add_parser("delete", help="delete a topic")
    delete.add_argument("--topic", required=True)
    delete.add_argument("--if-exists", action="store_true")
    for s in (create, listing, describe, alter, delete):
        add_connection_options(s)
    p.set_defaults(func=run)
    return p


def _configs(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidArgument(f"--config {item!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run one ``topics`` action; returns the exit status."""
    from kgroup.client.admin import AdminClient

    out = out or sys.stdout
    with AdminClient(client_config(args)) as admin:
        if args.action == "create":
            return _create(admin, args, out)
        if args.action == "list":
            md = admin.list_topics()
            for name in sorted(md.topics):
                if args.exclude_internal and md.topics[name].is_internal:
                    continue
                print(name, file=out)
            return 0
        if args.action == "describe":
            return _describe(admin, args, out)
        if args.action == "alter":
            from kgroup.client.admin import NewPartitions

            _exists(admin, args.topic)
            admin.create_partitions([NewPartitions(args.topic, args.partitions)])[
                args.topic
            ].result()
            return 0
        if args.action == "delete":
            from kgroup.errors import UnknownTopicOrPartition

            try:
                admin.delete_topics([args.topic])[args.topic].result()
            except UnknownTopicOrPartition:
                if not args.if_exists:
                    raise InvalidArgument(
                        f"Topic '{args.topic}' does not exist as expected"
                    ) from None
            return 0
    raise InvalidArgument(f"unknown action {args.action!r}")  # pragma: no cover - argparse


def _exists(admin: Any, topic: str) -> None:
    md = admin.list_topics(topic)
    t = md.topics.get(topic)
    if t is None or t.error is not None:
        raise InvalidArgument(f"Topic '{topic}' does not exist as expected")


def _create(admin: Any, args: argparse.Namespace, out: TextIO) -> int:
    from kgroup.client.admin import NewTopic
    from kgroup.errors import TopicAlreadyExists

    topic = NewTopic(
        args.topic, args.partitions, args.replication_factor, config=_configs(args.config)
    )
    try:
        admin.create_topics([topic])[args.topic].result()
    except TopicAlreadyExists:
        if args.if_not_exists:
            return 0
        raise
    print(f"Created topic {args.topic}.", file=out)
    return 0


def _describe(admin: Any, args: argparse.Namespace, out: TextIO) -> int:
    from kgroup.client.admin import ConfigResource, ResourceType
    from kgroup.client.metadata import topic_id_string

    md = admin.list_topics(args.topic)
    if args.topic is not None:
        t = md.topics.get(args.topic)
        if t is None or t.error is not None:
            raise InvalidArgument(f"Topic '{args.topic}' does not exist as expected")
    names = sorted(n for n, t in md.topics.items() if not (args.exclude_internal and t.is_internal))
    resources = [ConfigResource(ResourceType.TOPIC, n) for n in names]
    configs = admin.describe_configs(resources) if resources else {}
    for name, resource in zip(names, resources, strict=True):
        t = md.topics[name]
        try:
            entries = configs[resource].result()
            shown = ",".join(f"{e.name}={e.value}" for e in entries.values() if not e.is_default)
        except Exception:  # a broker without DescribeConfigs: no configs shown
            shown = ""
        parts = [t.partitions[i] for i in sorted(t.partitions)]
        rf = len(parts[0].replicas) if parts else 0
        head = f"Topic: {name}"
        topic_id = topic_id_string(t.topic_id)
        if topic_id:
            head += f"\tTopicId: {topic_id}"
        head += f"\tPartitionCount: {len(parts)}\tReplicationFactor: {rf}\tConfigs: {shown}"
        print(head, file=out)
        for p in parts:
            leader = str(p.leader) if p.leader >= 0 else "none"
            replicas = ",".join(map(str, p.replicas))
            isr = ",".join(map(str, p.isrs))
            print(
                f"\tTopic: {name}\tPartition: {p.id}\tLeader: {leader}"
                f"\tReplicas: {replicas}\tIsr: {isr}",
                file=out,
            )
    return 0
