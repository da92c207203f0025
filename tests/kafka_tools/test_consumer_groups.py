"""kafka-consumer-groups against kgroup's broker prints what it prints against Apache Kafka:
groups listed (with --state and --type), described (--offsets, --members --verbose, --state)
while a member is live and once it has left, offsets reset in every mode (dry run, execute,
export and --from-file), refused while the group is active, offsets deleted and groups deleted.

The records carry the same timestamps on both brokers (one hour apart from two days ago, within
the 7-day retention: older ones are deleted by both brokers' first retention pass), so that
--to-datetime and --by-duration land on the same offsets."""

from __future__ import annotations

import datetime
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from support.apache_kafka import run_tool, tool_command
from support.kafka_tools import (
    CONSOLE_CONSUMER,
    GROUPS,
    TOPICS,
    Transcript,
    compare,
    only,
    unique,
)

pytestmark = [pytest.mark.network, pytest.mark.slow]

HOUR = 3_600_000
#: T0 is two days ago on the hour; record i of partition p has timestamp T0 + i hours.
T0 = (int(time.time() * 1000) // HOUR - 48) * HOUR
#: AT is T0 + 2.5 hours as --to-datetime takes it: records 3 on are at or after it.
AT = datetime.datetime.fromtimestamp((T0 + 5 * HOUR // 2) / 1000, datetime.UTC).strftime(
    "%Y-%m-%dT%H:%M:%S.000+00:00"
)


def produce(bootstrap: str, topic: str, counts: dict[int, int]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for p, n in counts.items():
        for i in range(n):
            producer.produce(
                topic, value=f"v{p}-{i}", key=f"k{i}", partition=p, timestamp=T0 + i * HOUR
            )
    assert producer.flush(30) == 0


class LiveMember:
    """A kafka-console-consumer in ``group`` until stopped; :meth:`wait` waits until it has
    committed ``want`` (partition: offset)."""

    def __init__(self, bootstrap: str, topic: str, group: str, log: Path) -> None:
        self.bootstrap, self.topic, self.group, self.log = bootstrap, topic, group, log
        with open(log, "w") as err:
            self.proc = subprocess.Popen(
                tool_command(
                    CONSOLE_CONSUMER,
                    "--bootstrap-server", bootstrap,
                    "--topic", topic,
                    "--group", group,
                    "--from-beginning",
                    "--command-property", "client.id=live",
                    "--command-property", "auto.commit.interval.ms=100",
                ),
                stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
            )  # fmt: skip

    def wait(self, want: dict[int, int], timeout: float = 90) -> None:
        # Asked with kafka-consumer-groups itself: confluent-kafka's and kgroup's AdminClient
        # get no answer to OffsetFetch from Apache Kafka 4.4 while the group has a member.
        deadline = time.monotonic() + timeout
        while True:
            out = run_tool(
                GROUPS, "--bootstrap-server", self.bootstrap, "--describe", "--group",
                self.group, "--offsets", check=False,
            ).stdout  # fmt: skip
            rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
            got = {int(r[2]): r[3] for r in rows if len(r) >= 9 and r[2].isdigit() and r[6] != "-"}
            if got == {p: str(o) for p, o in want.items()}:
                return
            assert self.proc.poll() is None and time.monotonic() < deadline, (
                f"{self.group}: {out}\n{self.log.read_text()}"
            )
            time.sleep(0.5)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def test_kafka_consumer_groups(brokers: dict[str, str], tmp_path: Path) -> None:
    topic = unique("kt-groups")
    group, live = topic + "-g", topic + "-live"
    counts = {0: 6, 1: 4}

    def scenario(t: Transcript) -> None:
        bs = t.bootstrap
        run_tool(
            TOPICS, "--bootstrap-server", bs, "--create", "--topic", topic, "--partitions", "2"
        )
        produce(bs, topic, counts)
        tp = ["--group", group, "--topic", topic]

        # A live member: describe it, and what is refused while it is there.
        member = LiveMember(bs, topic, live, tmp_path / f"{t.name}-live.log")
        try:
            member.wait(counts)
            t.tool(GROUPS, "--list", "--state", "stable", stdout=only(topic, header=True))
            t.tool(GROUPS, "--describe", "--group", live, "--members", "--verbose")
            t.tool(GROUPS, "--describe", "--group", live, "--state")
            t.tool(GROUPS, "--describe", "--group", live, "--offsets")
            t.tool(
                GROUPS,
                "--reset-offsets",
                "--group",
                live,
                "--topic",
                topic,
                "--to-earliest",
                "--execute",
            )
            t.tool(GROUPS, "--delete", "--group", live)
            t.tool(GROUPS, "--delete-offsets", "--group", live, "--topic", topic)
        finally:
            member.stop()

        # An empty group with offsets: every reset mode, dry run, then executed.
        t.tool(GROUPS, "--reset-offsets", *tp, "--to-offset", "2", "--execute")
        t.tool(GROUPS, "--list", stdout=only(topic))
        t.tool(GROUPS, "--list", "--state", "--type", stdout=only(topic, header=True))
        t.tool(GROUPS, "--describe", "--group", group)
        t.tool(GROUPS, "--describe", "--group", group, "--state")
        t.tool(GROUPS, "--describe", "--group", group, "--members")
        for mode in (
            ["--to-earliest"],
            ["--to-latest"],
            ["--to-offset", "5"],
            ["--shift-by", "-1"],
            ["--shift-by", "10"],
            ["--to-datetime", AT],
            ["--by-duration", "P1D"],
            ["--to-current"],
        ):
            t.tool(GROUPS, "--reset-offsets", *tp, *mode, "--dry-run")
        t.tool(
            GROUPS,
            "--reset-offsets",
            "--group",
            group,
            "--topic",
            f"{topic}:0",
            "--to-datetime",
            AT,
            "--execute",
        )
        t.tool(GROUPS, "--reset-offsets", *tp, "--shift-by", "1", "--execute")
        export = t.tool(
            GROUPS,
            "--reset-offsets",
            "--group",
            group,
            "--all-topics",
            "--to-latest",
            "--export",
            "--dry-run",
        )
        plan = tmp_path / f"{t.name}-plan.csv"
        t.aliases[str(plan)] = "PLAN.csv"
        plan.write_text(export.stdout.replace(",6\n", ",3\n"))
        t.tool(GROUPS, "--reset-offsets", "--group", group, "--from-file", str(plan), "--execute")
        t.tool(GROUPS, "--describe", "--group", group, "--offsets")
        t.tool(GROUPS, "--delete-offsets", "--group", group, "--topic", f"{topic}:1")
        t.tool(GROUPS, "--describe", "--group", group, "--offsets")
        t.tool(GROUPS, "--delete", "--group", group)
        t.tool(GROUPS, "--delete", "--group", group)
        t.tool(GROUPS, "--describe", "--group", group + "-none")
        t.tool(GROUPS, "--list", stdout=only(topic))

    compare(scenario, brokers)
