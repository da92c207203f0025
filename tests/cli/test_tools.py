"""``kgroup topics`` and ``kgroup groups`` on kgroup's broker (and tansu for topics): the
output of kafka-topics.sh and kafka-consumer-groups.sh, checked on a real confluent-kafka
group whose lag is known, and offsets that ``reset-offsets`` really moves (refused while the
group has members)."""

from __future__ import annotations

import datetime
import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CkTP
from support.consumers import HEARTBEAT_MS, SESSION_MS, wait_for
from support.kgroup_broker import run_broker

from kgroup.cli import main

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_broker(tmp_path_factory.mktemp("tools"), {"group.initial.rebalance.delay.ms": 0}) as b:
        yield b.bootstrap_servers


@pytest.fixture(params=["kgroup", "kafka"])
def group_bootstrap(request: pytest.FixtureRequest, bootstrap: str) -> str:
    """kgroup's broker, then Apache Kafka: the groups tool reads both alike."""
    return bootstrap if request.param == "kgroup" else request.getfixturevalue("kafka").bootstrap


def kgroup(capsys: pytest.CaptureFixture[str], bootstrap: str, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main([*argv, "--bootstrap-server", bootstrap])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def table(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


@pytest.mark.parametrize("server", ["kgroup", "tansu", "kafka"])
def test_topics_create_describe_alter_delete(
    capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, bootstrap: str, server: str
) -> None:
    if server != "kgroup":
        bootstrap = request.getfixturevalue(server).bootstrap
    topic = f"tool-{uuid.uuid4().hex[:8]}"
    status, out, _ = kgroup(
        capsys,
        bootstrap,
        "topics",
        "create",
        "--topic",
        topic,
        "--partitions",
        "3",
        "--config",
        "retention.ms=100000",
    )
    assert (status, out) == (0, f"Created topic {topic}.\n")
    status, _, err = kgroup(capsys, bootstrap, "topics", "create", "--topic", topic)
    assert status == 2 and "already exists" in err
    status, out, _ = kgroup(capsys, bootstrap, "topics", "list")
    assert topic in out.splitlines()

    status, out, _ = kgroup(capsys, bootstrap, "topics", "describe", "--topic", topic)
    head, *parts = out.splitlines()
    fields = head.split("\t")
    assert fields[0] == f"Topic: {topic}"
    assert fields[1].startswith("TopicId: ") and len(fields[1]) == len("TopicId: ") + 22
    assert fields[2:4] == ["PartitionCount: 3", "ReplicationFactor: 1"]
    if server != "tansu":
        # The cluster-wide min.insync.replicas of a Kafka 4 cluster, as kafka-topics shows it.
        assert fields[4] == "Configs: min.insync.replicas=1,retention.ms=100000"
    assert [p.split("\t") for p in parts] == [
        ["", f"Topic: {topic}", f"Partition: {i}", "Leader: 1", "Replicas: 1", "Isr: 1"]
        for i in range(3)
    ] or server == "tansu"

    if server != "tansu":  # tansu serves no CreatePartitions
        status, out, _ = kgroup(
            capsys, bootstrap, "topics", "alter", "--topic", topic, "--partitions", "5"
        )
        assert (status, out) == (0, "")
        _, out, _ = kgroup(capsys, bootstrap, "topics", "describe", "--topic", topic)
        assert "\tPartitionCount: 5\t" in out and len(out.splitlines()) == 6

    status, out, _ = kgroup(capsys, bootstrap, "topics", "delete", "--topic", topic)
    assert (status, out) == (0, "")
    deadline = time.monotonic() + 10
    while True:
        status, _, err = kgroup(capsys, bootstrap, "topics", "describe", "--topic", topic)
        if status != 0 or time.monotonic() > deadline:
            break
    assert status == 2 and f"Topic '{topic}' does not exist as expected" in err


def _lagging_group(bootstrap: str, topic: str, group: str, base_ms: int) -> Consumer:
    """A confluent-kafka member of ``group`` that read the topic and committed offsets 7 of 10
    (partition 0) and 3 of 4 (partition 1); still in the group."""
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(10):
        p.produce(topic, b"a%d" % i, partition=0, timestamp=base_ms + i * 1000)
    for i in range(4):
        p.produce(topic, b"b%d" % i, partition=1, timestamp=base_ms + i * 1000)
    assert p.flush(30) == 0
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": "lag-member",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": HEARTBEAT_MS,
        }
    )
    c.subscribe([topic])
    seen: dict[int, list[int]] = {0: [], 1: []}
    deadline = time.monotonic() + 30
    while len(seen[0]) < 7 or len(seen[1]) < 3:
        assert time.monotonic() < deadline, seen
        m = c.poll(0.2)
        if m is None or m.error():
            continue
        p_, o = m.partition(), m.offset()
        if (p_ == 0 and o < 7) or (p_ == 1 and o < 3):
            seen[p_].append(o)
            # commit what was processed: the next offset to read
            c.commit(offsets=[CkTP(topic, p_, o + 1)], asynchronous=False)
    return c


def test_groups_describe_and_reset_a_real_group(
    capsys: pytest.CaptureFixture[str], group_bootstrap: str
) -> None:
    bootstrap = group_bootstrap
    topic, group = f"lag-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    assert (
        main(
            [
                "topics",
                "create",
                "--topic",
                topic,
                "--partitions",
                "2",
                "--bootstrap-server",
                bootstrap,
            ]
        )
        == 0
    )
    base = int(time.time() * 1000) - 60_000
    member = _lagging_group(bootstrap, topic, group, base)
    try:
        status, out, err = kgroup(capsys, bootstrap, "groups", "describe", group)
        assert status == 0 and err == ""
        rows = table(out)
        assert rows[0] == [
            "GROUP",
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
        ]
        member_id = member.memberid()
        assert rows[1:] == [
            [group, topic, "0", "7", "10", "3", member_id, "/127.0.0.1", "lag-member"],
            [group, topic, "1", "3", "4", "1", member_id, "/127.0.0.1", "lag-member"],
        ]
        # columns line up: each header starts where its values do
        lines = out.strip("\n").splitlines()
        for name in ("CURRENT-OFFSET", "LAG", "CONSUMER-ID", "CLIENT-ID"):
            at = lines[0].index(name)
            assert all(line[at - 1] == " " and line[at] != " " for line in lines[1:])

        _, out, _ = kgroup(capsys, bootstrap, "groups", "describe", group, "--state")
        assert table(out) == [
            ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
            [group, bootstrap, "(1)", "range", "Stable", "1"],
        ]
        _, out, _ = kgroup(capsys, bootstrap, "groups", "describe", group, "--members")
        assert table(out) == [
            ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"],
            [group, member_id, "/127.0.0.1", "lag-member", "2"],
        ]
        _, out, _ = kgroup(capsys, bootstrap, "groups", "list")
        assert group in out.splitlines()

        status, out, _ = kgroup(
            capsys,
            bootstrap,
            "groups",
            "reset-offsets",
            group,
            "--topic",
            topic,
            "--to-earliest",
            "--execute",
        )
        assert status == 0
        assert (
            f"Error: Assignments can only be reset if the group '{group}' is inactive, but the "
            "current state is Stable." in out
        )
    finally:
        member.close()

    wait_for(
        lambda: "Empty" in kgroup(capsys, bootstrap, "groups", "describe", group, "--state")[1],
        30,
        "the group to empty",
    )
    status, out, err = kgroup(capsys, bootstrap, "groups", "describe", group)
    assert err == f"\nConsumer group '{group}' has no active members.\n"
    assert table(out)[1:] == [
        [group, topic, "0", "7", "10", "3", "-", "-", "-"],
        [group, topic, "1", "3", "4", "1", "-", "-", "-"],
    ]

    def offsets() -> list[list[str]]:
        return [
            row[2:4] for row in table(kgroup(capsys, bootstrap, "groups", "describe", group)[1])[1:]
        ]

    # a dry run by default: printed, not committed
    status, out, _ = kgroup(
        capsys, bootstrap, "groups", "reset-offsets", group, "--topic", topic, "--to-earliest"
    )
    assert table(out) == [
        ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"],
        [group, topic, "0", "0"],
        [group, topic, "1", "0"],
    ]
    assert offsets() == [["0", "7"], ["1", "3"]]

    kgroup(
        capsys,
        bootstrap,
        "groups",
        "reset-offsets",
        group,
        "--topic",
        topic,
        "--to-earliest",
        "--execute",
    )
    assert offsets() == [["0", "0"], ["1", "0"]]

    status, out, err = kgroup(
        capsys,
        bootstrap,
        "groups",
        "reset-offsets",
        group,
        "--topic",
        f"{topic}:0,1",
        "--to-offset",
        "6",
        "--execute",
    )
    assert table(out)[1:] == [[group, topic, "0", "6"], [group, topic, "1", "4"]]
    assert f"New offset (6) is higher than latest offset for topic partition {topic}-1" in err
    assert offsets() == [["0", "6"], ["1", "4"]]

    kgroup(
        capsys,
        bootstrap,
        "groups",
        "reset-offsets",
        group,
        "--topic",
        f"{topic}:0",
        "--shift-by",
        "-2",
        "--execute",
    )
    assert offsets() == [["0", "4"], ["1", "4"]]
    kgroup(
        capsys,
        bootstrap,
        "groups",
        "reset-offsets",
        group,
        "--topic",
        f"{topic}:1",
        "--shift-by",
        "-9",
        "--execute",
    )  # clamped to the log start
    assert offsets() == [["0", "4"], ["1", "0"]]

    # partition 0's records are 1 s apart from base, partition 1's too (4 of them)
    at = datetime.datetime.fromtimestamp((base + 5500) / 1000, datetime.UTC)
    iso = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}"
    status, out, _ = kgroup(
        capsys,
        bootstrap,
        "groups",
        "reset-offsets",
        group,
        "--topic",
        topic,
        "--to-datetime",
        iso,
        "--execute",
    )
    # partition 0: the first record at or after base+5.5 s is offset 6; partition 1 has none
    # that late, so its end (4)
    assert offsets() == [["0", "6"], ["1", "4"]]

    kgroup(
        capsys,
        bootstrap,
        "groups",
        "reset-offsets",
        group,
        "--all-topics",
        "--to-latest",
        "--execute",
    )
    assert offsets() == [["0", "10"], ["1", "4"]]

    status, out, _ = kgroup(capsys, bootstrap, "groups", "delete", group)
    assert out == f"Deletion of requested consumer groups ('{group}') was successful.\n"
    status, out, _ = kgroup(capsys, bootstrap, "groups", "describe", group)
    assert out == f"\nError: Consumer group '{group}' does not exist.\n"


def test_command_config_is_read_as_a_java_properties_file(
    capsys: pytest.CaptureFixture[str], bootstrap: str, tmp_path
) -> None:
    # Java's rules: "key: value" and "key value" separators, comments, continuations.
    good = tmp_path / "client.properties"
    good.write_text("# a comment\nclient.id: tools-\\\n    test\nrequest.timeout.ms 5000\n")
    status, _, _ = kgroup(capsys, bootstrap, "topics", "list", "--command-config", str(good))
    assert status == 0
    bad = tmp_path / "typo.properties"
    bad.write_text("request.timeout.mss=5000\n")
    status, _, err = kgroup(capsys, bootstrap, "topics", "list", "--command-config", str(bad))
    assert status == 2 and "request.timeout.mss" in err
