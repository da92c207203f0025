"""Group configs (KIP-848: resource type GROUP in DescribeConfigs and IncrementalAlterConfigs)
through confluent-kafka's AdminClient, on kgroup's broker and on Apache Kafka 4.4 with the same
answers; kept across a restart; and a group's consumer.session.timeout.ms and
consumer.heartbeat.interval.ms taking effect at its members' next heartbeat."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from support.apache_kafka import KafkaCluster
from support.kgroup_broker import Wire, run_broker

from kgroup.protocol import ApiKey

pytestmark = pytest.mark.network

SET, DELETE, APPEND = (
    AlterConfigOpType.SET,
    AlterConfigOpType.DELETE,
    AlterConfigOpType.APPEND,
)
#: STEPS are IncrementalAlterConfigs changes to one group, in order, each answered as Kafka
#: answers it: some refused (bounds, names, types, operations), the others kept.
STEPS: list[tuple[str, list[tuple[str, str | None, AlterConfigOpType]]]] = [
    ("session", [("consumer.session.timeout.ms", "50000", SET)]),
    (
        "heartbeat and interval",
        [
            ("consumer.heartbeat.interval.ms", "6000", SET),
            ("consumer.assignment.interval.ms", "0", SET),
        ],
    ),
    ("session below the broker's minimum", [("consumer.session.timeout.ms", "1000", SET)]),
    ("interval above the broker's maximum", [("consumer.assignment.interval.ms", "20000", SET)]),
    ("session not a number", [("consumer.session.timeout.ms", "soon", SET)]),
    ("session below 1", [("consumer.session.timeout.ms", "0", SET)]),
    ("unknown name", [("consumer.sessions.timeout.ms", "50000", SET)]),
    ("append", [("consumer.session.timeout.ms", "1", APPEND)]),
    ("share isolation", [("share.isolation.level", "read_committed", SET)]),
    ("share isolation, bad", [("share.isolation.level", "READ_COMMITTED", SET)]),
    ("streams standby above 2", [("streams.num.standby.replicas", "3", SET)]),
    ("heartbeat deleted", [("consumer.heartbeat.interval.ms", None, DELETE)]),
]


def admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})


def alter(a: AdminClient, group: str, changes: list[tuple[str, str | None, Any]]) -> Any:
    """None when the change is kept, else the error's name and message."""
    entries = [ConfigEntry(n, v, incremental_operation=op) for n, v, op in changes]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    try:
        a.incremental_alter_configs([resource])[resource].result(15)
    except KafkaException as e:
        return (e.args[0].name(), e.args[0].str())
    return None


def describe(a: AdminClient, group: str) -> dict[str, Any]:
    """The group's configs: value, source and synonyms of each (its documentation is each
    broker's own words)."""
    resource = ConfigResource(ResourceType.GROUP, group)
    got = a.describe_configs([resource])[resource].result(15)
    return {
        name: (
            e.value,
            e.source,
            e.is_read_only,
            [(s.name, s.value, s.source) for s in e.synonyms.values()],
        )
        for name, e in got.items()
    }


def exercise(bootstrap: str) -> dict[str, Any]:
    a = admin(bootstrap)
    group = f"cfg-{uuid.uuid4().hex[:8]}"
    out: dict[str, Any] = {"unset": describe(a, group)}
    for label, changes in STEPS:
        out[label] = alter(a, group, changes)
    # Kafka's broker shows a change some milliseconds after its answer (its metadata log).
    deadline = time.monotonic() + 10
    while True:
        got = describe(a, group)
        if got["consumer.heartbeat.interval.ms"][1] != 8 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    out["described"] = got
    return out


def test_group_configs_as_kafka_answers(kafka: KafkaCluster, tmp_path: Path) -> None:
    ref = exercise(kafka.bootstrap)
    with run_broker(tmp_path) as b:
        got = exercise(b.bootstrap_servers)
    assert got == ref
    # What the comparison covers, on kgroup's side.
    assert got["session"] is None
    assert got["session below the broker's minimum"] == (
        "INVALID_CONFIG",
        "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.",
    )
    assert got["unknown name"] == (
        "INVALID_CONFIG",
        "Unknown group config name: consumer.sessions.timeout.ms",
    )
    described = got["described"]
    assert described["consumer.session.timeout.ms"] == (
        "50000",
        8,  # GROUP_CONFIG
        False,
        [
            ("consumer.session.timeout.ms", "50000", 8),
            ("group.consumer.session.timeout.ms", "45000", 5),
        ],
    )
    assert described["consumer.heartbeat.interval.ms"][:2] == ("5000", 5)
    assert described["consumer.assignment.interval.ms"][:2] == ("0", 8)
    assert got["unset"]["consumer.assignment.interval.ms"][:2] == ("1000", 5)


def join(w: Wire, group: str, member: str) -> Any:
    """A member's first ConsumerGroupHeartbeat (v1), retried while the coordinator loads."""
    body = {
        "group_id": group,
        "member_id": member,
        "member_epoch": 0,
        "rebalance_timeout_ms": 30_000,
        "subscribed_topic_names": [],
        "topic_partitions": [],
    }
    deadline = time.monotonic() + 10
    while True:
        r = w.request(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, body).body
        if r.error_code not in (14, 15, 16) or time.monotonic() > deadline:
            return r
        time.sleep(0.1)


def beat(w: Wire, group: str, member: str, epoch: int) -> Any:
    body = {"group_id": group, "member_id": member, "member_epoch": epoch}
    return w.request(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, body).body


def find_coordinator(w: Wire, group: str) -> None:
    w.request(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})


# Kept in the broker's metadata folder: described, and told to the group's members, after a
# restart as before.
def test_a_group_config_survives_a_restart(tmp_path: Path) -> None:
    group = "kept"
    with run_broker(tmp_path) as b:
        a = admin(b.bootstrap_servers)
        assert alter(a, group, [("consumer.heartbeat.interval.ms", "7000", SET)]) is None
        before = describe(a, group)
    with run_broker(tmp_path) as b:
        a = admin(b.bootstrap_servers)
        assert describe(a, group) == before
        assert before["consumer.heartbeat.interval.ms"][:2] == ("7000", 8)
        with Wire(b.bootstrap_servers) as w:
            find_coordinator(w, group)
            r = join(w, group, str(uuid.uuid4()))
            assert (r.error_code, r.heartbeat_interval_ms) == (0, 7000)
            # Another group has the broker's interval.
            r = join(w, "other", str(uuid.uuid4()))
            assert (r.error_code, r.heartbeat_interval_ms) == (0, 5000)


# A group's session timeout replaces the broker's from the member's next heartbeat: a member
# that then stops heartbeating is fenced at the group's 1.5 s, where a member of another group
# keeps the broker's 45 s.
def test_a_group_session_timeout_fences_at_the_groups_timeout(tmp_path: Path) -> None:
    config = {
        "group.consumer.min.session.timeout.ms": 1000,
        "group.consumer.min.heartbeat.interval.ms": 100,
        "group.consumer.min.assignment.interval.ms": 0,
    }
    short, long = "short-sessions", "broker-sessions"
    with run_broker(tmp_path, config) as b, Wire(b.bootstrap_servers) as w:
        a = admin(b.bootstrap_servers)
        find_coordinator(w, short)
        m1, m2 = str(uuid.uuid4()), str(uuid.uuid4())
        r1, r2 = join(w, short, m1), join(w, long, m2)
        assert (r1.error_code, r2.error_code) == (0, 0)
        changes = [
            ("consumer.session.timeout.ms", "1500", SET),
            ("consumer.heartbeat.interval.ms", "500", SET),
        ]
        assert alter(a, short, changes) is None
        r = beat(w, short, m1, r1.member_epoch)
        assert (r.error_code, r.heartbeat_interval_ms) == (0, 500)
        time.sleep(0.8)
        assert beat(w, short, m1, r1.member_epoch).error_code == 0, "within its session"
        time.sleep(2.5)
        assert beat(w, short, m1, r1.member_epoch).error_code == 25  # UNKNOWN_MEMBER_ID
        r = beat(w, long, m2, r2.member_epoch)
        assert (r.error_code, r.heartbeat_interval_ms) == (0, 5000)
