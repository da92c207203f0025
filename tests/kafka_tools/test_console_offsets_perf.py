"""kafka-console-producer and -consumer, kafka-get-offsets and the two perf tools against
kgroup's broker print what they print against Apache Kafka. Keyed records land on the same
partitions and offsets on both (the default partitioner's murmur2); the perf tools' figures
are times and rates, so only their counts and sizes are compared."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from support.apache_kafka import run_tool
from support.kafka_tools import (
    CONSOLE_CONSUMER,
    CONSOLE_PRODUCER,
    CONSUMER_PERF,
    GET_OFFSETS,
    PRODUCER_PERF,
    TOPICS,
    Transcript,
    compare,
    unique,
)

pytestmark = [pytest.mark.network, pytest.mark.slow]

T0 = 1_609_459_200_000  # 2021-01-01T00:00:00Z
HOUR = 3_600_000


def sorted_lines(stdout: str) -> list[str]:
    # A consumer of several partitions prints them in the order its fetches come back.
    return sorted(stdout.splitlines())


def test_console_and_get_offsets(brokers: dict[str, str]) -> None:
    topic = unique("kt-console")
    stamped = topic + "-ts"

    def scenario(t: Transcript) -> None:
        bs = t.bootstrap
        # The stamped records are from 2021: retention (both brokers' first pass comes at a
        # time of its own in a long run) must not take them during the scenario.
        for name, configs in ((topic, []), (stamped, ["--config", "retention.ms=-1"])):
            run_tool(TOPICS, "--bootstrap-server", bs, "--create", "--topic", name,
                     "--partitions", "3", *configs)  # fmt: skip
        lines = "".join(f"k{i}:v{i}\n" for i in range(12))
        t.tool(CONSOLE_PRODUCER, "--topic", topic, "--reader-property", "parse.key=true",
               "--reader-property", "key.separator=:", input=lines)  # fmt: skip
        show = ["--formatter-property", "print.key=true",
                "--formatter-property", "print.partition=true",
                "--formatter-property", "print.offset=true"]  # fmt: skip
        t.tool(CONSOLE_CONSUMER, "--topic", topic, "--from-beginning", "--max-messages", "12",
               *show, stdout=sorted_lines)  # fmt: skip
        t.tool(CONSOLE_CONSUMER, "--topic", topic, "--partition", "1", "--offset", "1",
               "--max-messages", "2", *show)  # fmt: skip
        t.tool(CONSOLE_CONSUMER, "--topic", topic, "--partition", "0", "--offset", "100",
               "--timeout-ms", "3000", *show)  # fmt: skip

        producer = Producer({"bootstrap.servers": bs})
        for i in range(6):
            producer.produce(stamped, value=f"s{i}", partition=i % 2, timestamp=T0 + i * HOUR)
        assert producer.flush(30) == 0
        t.tool(GET_OFFSETS, "--topic", topic)
        t.tool(GET_OFFSETS, "--topic", topic, "--time", "-2")
        t.tool(GET_OFFSETS, "--topic-partitions", f"{topic}:0,{topic}:2", "--time", "latest")
        t.tool(GET_OFFSETS, "--topic", stamped, "--time", "-3")
        t.tool(GET_OFFSETS, "--topic", stamped, "--time", str(T0 + 2 * HOUR + 1))
        t.tool(GET_OFFSETS, "--topic", stamped, "--time", str(T0 + 10 * HOUR))
        t.tool(GET_OFFSETS, "--topic", topic + "-none")

    compare(scenario, brokers)


def test_perf_tools(brokers: dict[str, str]) -> None:
    topic = unique("kt-perf")

    def last_line_count(stdout: str) -> list[str]:
        # "500 records sent, 1234.5 records/sec (0.12 MB/sec), ..." at the end.
        return [stdout.strip().splitlines()[-1].split(",")[0]]

    def consumed(stdout: str) -> list[str]:
        # The CSV line: data.consumed.in.MB and data.consumed.in.nMsg.
        header, row = stdout.strip().splitlines()[-2:]
        values = dict(zip(header.split(", "), row.split(", "), strict=True))
        return [header, values["data.consumed.in.MB"], values["data.consumed.in.nMsg"]]

    def total(stdout: str) -> list[str]:
        return [str(sum(int(line.rsplit(":", 1)[1]) for line in stdout.splitlines()))]

    def scenario(t: Transcript) -> None:
        run_tool(TOPICS, "--bootstrap-server", t.bootstrap, "--create", "--topic", topic,
                 "--partitions", "2")  # fmt: skip
        t.tool(PRODUCER_PERF, "--topic", topic, "--num-records", "500", "--record-size", "100",
               "--throughput", "-1", "--command-property", "acks=all",
               stdout=last_line_count, fast=False)  # fmt: skip
        t.tool(GET_OFFSETS, "--topic", topic, stdout=total)
        t.tool(CONSUMER_PERF, "--topic", topic, "--num-records", "500", "--timeout", "30000",
               "--group", topic + "-g", stdout=consumed, fast=False)  # fmt: skip

    compare(scenario, brokers)
