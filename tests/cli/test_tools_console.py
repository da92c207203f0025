"""``kgroup consume`` and ``kgroup produce`` on kgroup's broker and on Apache Kafka, checked with
confluent-kafka's clients on the other side."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer
from support.kgroup_broker import run_broker

from kgroup.cli import main

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def kgroup_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_broker(
        tmp_path_factory.mktemp("console"), {"group.initial.rebalance.delay.ms": 0}
    ) as b:
        yield b.bootstrap_servers


@pytest.fixture(params=["kgroup", "kafka"])
def bootstrap(request: pytest.FixtureRequest) -> str:
    """kgroup's broker, then Apache Kafka."""
    if request.param == "kafka":
        return request.getfixturevalue("kafka").bootstrap
    return request.getfixturevalue("kgroup_bootstrap")


def _topic(bootstrap: str, partitions: int = 1) -> str:
    # No retention by time: the tests write records stamped in 1970, which a shared broker's
    # retention check (every five minutes) would otherwise delete under them.
    topic = f"con-{uuid.uuid4().hex[:8]}"
    assert (
        main(
            [
                "topics",
                "create",
                "--topic",
                topic,
                "--partitions",
                str(partitions),
                "--config",
                "retention.ms=-1",
                "--bootstrap-server",
                bootstrap,
            ]
        )
        == 0
    )
    return topic


def test_consume_prints_json_lines_and_stops(
    capsys: pytest.CaptureFixture[str], bootstrap: str
) -> None:
    topic = _topic(bootstrap)
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(5):
        p.produce(topic, b"v%d" % i, key=b"k%d" % i, headers=[("h", b"x")], timestamp=1000 + i)
    assert p.flush(30) == 0
    capsys.readouterr()
    argv = [
        "consume",
        "--topic",
        topic,
        "--from-beginning",
        "--json",
        "--bootstrap-server",
        bootstrap,
    ]
    assert main([*argv, "--max-messages", "3"]) == 0
    out, err = capsys.readouterr()
    records = [json.loads(line) for line in out.splitlines()]
    assert records == [
        {
            "topic": topic,
            "partition": 0,
            "offset": i,
            "key": f"k{i}",
            "value": f"v{i}",
            "timestamp": 1000 + i,
            "headers": [["h", "x"]],
        }
        for i in range(3)
    ]
    assert err.endswith("Processed a total of 3 messages\n")
    # a group of its own each time, nothing committed: from the beginning again, until idle
    assert main([*argv, "--timeout-ms", "1500"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line)["offset"] for line in out.splitlines()] == [0, 1, 2, 3, 4]
    assert err.endswith("Processed a total of 5 messages\n")


def test_produce_sends_lines_with_keys(monkeypatch: pytest.MonkeyPatch, bootstrap: str) -> None:
    topic = _topic(bootstrap)
    monkeypatch.setattr("sys.stdin", io.StringIO("a\tone\nb\ttwo\nc\tthree\n"))
    assert (
        main(
            ["produce", "--topic", topic, "--key-separator", "\\t", "--bootstrap-server", bootstrap]
        )
        == 0
    )
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": uuid.uuid4().hex,
            "auto.offset.reset": "earliest",
        }
    )
    c.subscribe([topic])
    got = []
    for _ in range(150):
        m = c.poll(0.2)
        if m is not None and not m.error():
            got.append((m.key(), m.value()))
        if len(got) == 3:
            break
    c.close()
    assert got == [(b"a", b"one"), (b"b", b"two"), (b"c", b"three")]
