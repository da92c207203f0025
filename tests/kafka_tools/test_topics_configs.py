"""kafka-topics and kafka-configs against kgroup's broker print what they print against Apache
Kafka: topics created, listed, described, grown and deleted, configs described (dynamic and
all), altered, deleted and refused.

One difference is normalised: kafka-topics --describe prints ``Elr: N/A LastKnownElr: N/A``
against kgroup, whose broker does not serve DescribeTopicPartitions (api 75, KIP-966) and so
is described through Metadata, where Kafka prints empty lists.

Group configs (``--entity-type groups``, KIP-848's consumer.session.timeout.ms and the like)
are compared too: altered, described by name, and listed without one (ListConfigResources,
api 74, KIP-1142)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.apache_kafka import run_tool
from support.kafka_tools import CONFIGS, TOPICS, Transcript, compare, only, unique

from kgroup.broker.handlers import HANDLERS

pytestmark = [pytest.mark.network, pytest.mark.slow]


def without_elr(stdout: str) -> list[str]:
    # See the module's docstring: ELR lists are only known through DescribeTopicPartitions.
    return [
        line.replace("\tElr: N/A\tLastKnownElr: N/A", "\tElr: \tLastKnownElr: ")
        for line in stdout.splitlines()
    ]


def test_kafka_topics(brokers: dict[str, str]) -> None:
    topic = unique("kt-topics")

    def scenario(t: Transcript) -> None:
        t.tool(
            TOPICS,
            "--create",
            "--topic",
            topic,
            "--partitions",
            "3",
            "--replication-factor",
            "1",
            "--config",
            "retention.ms=100000",
        )
        t.tool(TOPICS, "--create", "--topic", topic, "--partitions", "3")
        t.tool(TOPICS, "--create", "--topic", topic + "-bad", "--config", "retention.ms=x")
        t.tool(TOPICS, "--create", "--topic", topic + "-rf", "--replication-factor", "3")
        t.tool(TOPICS, "--list", stdout=only(topic))
        t.tool(TOPICS, "--describe", "--topic", topic, stdout=without_elr)
        t.tool(TOPICS, "--alter", "--topic", topic, "--partitions", "4")
        t.tool(TOPICS, "--alter", "--topic", topic, "--partitions", "2")
        t.tool(TOPICS, "--describe", "--topic", topic, stdout=without_elr)
        t.tool(TOPICS, "--describe", "--topic", topic + "-none")
        t.tool(TOPICS, "--delete", "--topic", topic)
        t.tool(TOPICS, "--list", stdout=only(topic))

    compare(scenario, brokers)


def test_kafka_configs(brokers: dict[str, str]) -> None:
    topic = unique("kt-configs")
    entity = ["--entity-type", "topics", "--entity-name", topic]

    def scenario(t: Transcript) -> None:
        run_tool(
            TOPICS,
            "--bootstrap-server",
            t.bootstrap,
            "--create",
            "--topic",
            topic,
            "--partitions",
            "2",
            "--config",
            "cleanup.policy=compact",
        )
        t.tool(CONFIGS, "--describe", *entity)
        t.tool(
            CONFIGS,
            "--alter",
            *entity,
            "--add-config",
            "retention.ms=12345,max.message.bytes=20000",
        )
        t.tool(CONFIGS, "--describe", *entity)
        t.tool(CONFIGS, "--alter", *entity, "--delete-config", "retention.ms")
        t.tool(CONFIGS, "--describe", *entity, "--all")
        t.tool(CONFIGS, "--alter", *entity, "--add-config", "retention.ms=abc")
        t.tool(CONFIGS, "--alter", *entity, "--add-config", "no.such.config=1")
        t.tool(CONFIGS, "--describe", "--entity-type", "brokers", "--entity-name", "1")
        t.tool(CONFIGS, "--describe", "--entity-type", "brokers", "--entity-default")

    compare(scenario, brokers)


def blocks_of(name: str) -> Callable[[str], list[str]]:
    """A stdout filter keeping the "Dynamic configs for ... <name>" blocks (each heading and
    its indented lines), sorted: the broker is shared, other tests' groups are listed too."""

    def keep(stdout: str) -> list[str]:
        blocks: list[list[str]] = []
        for line in stdout.splitlines():
            if not line.startswith(" "):
                blocks.append([line])
            elif blocks:
                blocks[-1].append(line)
        return [line for b in sorted(blocks) if name in b[0] for line in b]

    return keep


def test_kafka_configs_groups(brokers: dict[str, str]) -> None:
    group = unique("kt-group-configs")
    entity = ["--entity-type", "groups", "--entity-name", group]

    def scenario(t: Transcript) -> None:
        t.tool(CONFIGS, "--describe", *entity)
        t.tool(
            CONFIGS,
            "--alter",
            *entity,
            "--add-config",
            "consumer.session.timeout.ms=50000,consumer.heartbeat.interval.ms=6000",
        )
        t.tool(CONFIGS, "--describe", *entity)
        t.tool(CONFIGS, "--describe", "--entity-type", "groups", stdout=blocks_of(group))
        t.tool(CONFIGS, "--alter", *entity, "--add-config", "consumer.session.timeout.ms=1")
        t.tool(CONFIGS, "--alter", *entity, "--delete-config", "consumer.heartbeat.interval.ms")
        t.tool(CONFIGS, "--describe", *entity)
        t.tool(CONFIGS, "--alter", *entity, "--delete-config", "consumer.session.timeout.ms")
        t.tool(CONFIGS, "--describe", "--entity-type", "groups", stdout=blocks_of(group))

    compare(scenario, brokers)


LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"


def test_kafka_log_dirs(brokers: dict[str, str]) -> None:
    """kafka-log-dirs --describe: each broker's one folder (its path differs), its error (none)
    and the topic's partitions with their sizes."""
    import json

    topic = unique("kt-logdirs")

    def described(stdout: str) -> list[str]:
        lines = stdout.splitlines()
        doc = json.loads(lines[-1])
        for b in doc["brokers"]:
            for d in b["logDirs"]:
                d["logDir"] = "DIR"
        return [*lines[:-1], json.dumps(doc, sort_keys=True)]

    def scenario(t: Transcript) -> None:
        run_tool(TOPICS, "--bootstrap-server", t.bootstrap, "--create", "--topic", topic,
                 "--partitions", "2")  # fmt: skip
        t.tool(LOG_DIRS, "--describe", "--topic-list", topic, stdout=described)

    compare(scenario, brokers)


#: DESCRIBES_QUOTAS: kafka-configs --describe --entity-type users also asks for the users'
#: quotas (DescribeClientQuotas, api 48), which kgroup serves only once client quotas exist.
DESCRIBES_QUOTAS = 48 in HANDLERS


def test_kafka_configs_scram_users(brokers: dict[str, str]) -> None:
    """kafka-configs's SCRAM commands (AlterUserScramCredentials): a user's credentials
    added, refused (both mechanisms in one request: Kafka's controller takes a user once per
    request; too few iterations, refused by the tool), deleted, deleted again."""
    user = unique("kt-user")
    entity = ["--entity-type", "users", "--entity-name", user]

    def scenario(t: Transcript) -> None:
        t.tool(
            CONFIGS,
            "--alter",
            *entity,
            "--add-config",
            "SCRAM-SHA-256=[iterations=8192,password=pw]",
        )
        t.tool(CONFIGS, "--alter", *entity, "--add-config", "SCRAM-SHA-512=[password=pw]")
        t.tool(
            CONFIGS,
            "--alter",
            *entity,
            "--add-config",
            "SCRAM-SHA-256=[password=a],SCRAM-SHA-512=[password=b]",
        )
        t.tool(
            CONFIGS, "--alter", *entity, "--add-config", "SCRAM-SHA-256=[iterations=100,password=a]"
        )
        t.tool(CONFIGS, "--alter", *entity, "--delete-config", "SCRAM-SHA-512")
        t.tool(CONFIGS, "--alter", *entity, "--delete-config", "SCRAM-SHA-512")
        if DESCRIBES_QUOTAS:
            t.tool(CONFIGS, "--describe", *entity)
            t.tool(CONFIGS, "--describe", "--entity-type", "users", "--entity-name", user + "-x")

    compare(scenario, brokers)


def test_kgroup_configs_prints_what_kafka_configs_prints(brokers: dict[str, str]) -> None:
    """kgroup configs --describe on either broker prints what kafka-configs prints on Kafka."""
    import io

    from kgroup.cli import build_parser

    user = unique("kt-kgroup-user")
    for bootstrap in brokers.values():
        run_tool(
            CONFIGS,
            "--bootstrap-server",
            bootstrap,
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            user,
            "--add-config",
            "SCRAM-SHA-512=[iterations=5000,password=pw]",
        )
    theirs = run_tool(
        CONFIGS,
        "--bootstrap-server",
        brokers["kafka"],
        "--describe",
        "--entity-type",
        "users",
        "--entity-name",
        user,
    ).stdout
    for bootstrap in brokers.values():
        argv = ["configs", "--bootstrap-server", bootstrap, "--describe", "--user", user]
        args = build_parser("configs").parse_args(argv)
        out = io.StringIO()
        assert args.func(args, out) == 0
        assert out.getvalue() == theirs
