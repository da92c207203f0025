"""KIP-848's consumer protocol (``group.protocol=consumer``) with a real client, confluent-kafka
(librdkafka 2.16, which speaks ConsumerGroupHeartbeat v1), against kgroup's broker: one member
takes every partition of a topic, a second one splits them 2/2 (the ``uniform`` assignor) without
a partition ever owned by both, the partitions come back when a member leaves, and offsets
committed by consumer-protocol members are read by the next ones. And with
``group.coordinator.rebalance.protocols=classic`` the apis are not advertised and such a client
fails cleanly.

The broker's consumer-protocol timings are lowered (their minimums too), so that members
heartbeat every 100 ms and a rebalance takes a few of them; each test uses its own topic and
group.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from support.consumer_protocol import (
    FAST,
    PARTITIONS,
    Member,
    group_name,
    poll_all,
    quiet,
    split_then_take_back,
    values,
)
from support.consumers import create_topic, produce
from support.kgroup_broker import run_broker
from support.wire import read_frame

from kgroup import protocol
from kgroup.broker import Broker

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("consumer-protocol"), FAST) as b:
        yield b


@pytest.fixture(scope="module")
def classic_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    config = {**FAST, "group.coordinator.rebalance.protocols": "classic"}
    with run_broker(tmp_path_factory.mktemp("classic-only"), config) as b:
        yield b


def test_one_member_takes_every_partition_and_consumes_every_record(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = create_topic(bootstrap, PARTITIONS)
    sent = values("one", 200)
    produce(bootstrap, topic, sent, PARTITIONS)
    members: list[Member] = []
    a = Member(bootstrap, topic, group_name(), members, "confluent")
    try:
        poll_all(members, lambda: len(a.seen) >= len(sent), "every record")
        assert a.owned == set(range(PARTITIONS))
        assert sorted(a.seen) == sorted(sent)
    finally:
        a.close()


def test_two_members_split_then_one_takes_everything_back(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    split_then_take_back(
        bootstrap, "confluent", while_split=lambda group: describe_as_split(bootstrap, group)
    )


def describe_as_split(bootstrap: str, group: str) -> None:
    """The admin client's view of the group (ConsumerGroupDescribe): a stable consumer-protocol
    group of the uniform assignor whose two members own two partitions each."""
    from confluent_kafka import ConsumerGroupState, ConsumerGroupType
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    described = admin.describe_consumer_groups([group])[group].result(15)
    assert described.type == ConsumerGroupType.CONSUMER
    assert described.state == ConsumerGroupState.STABLE
    assert described.partition_assignor == "uniform"
    owned = [
        sorted(tp.partition for tp in m.assignment.topic_partitions) for m in described.members
    ]
    assert sorted(owned) in ([[0, 1], [2, 3]], [[0, 2], [1, 3]], [[0, 3], [1, 2]])
    assert {m.host for m in described.members} == {"/127.0.0.1"}


def test_committed_offsets_reach_the_next_members(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = create_topic(bootstrap, PARTITIONS)
    group = group_name()
    first = values("before", 100)
    produce(bootstrap, topic, first, PARTITIONS)
    members: list[Member] = []
    a = Member(bootstrap, topic, group, members, "confluent")
    b = Member(bootstrap, topic, group, members, "confluent")
    try:
        poll_all(members, lambda: len(a.seen) + len(b.seen) >= len(first), "every record")
    finally:
        a.close()
        b.close()
    # The consumers restart: the new members start from the committed offsets, so they read
    # only what was produced since.
    later = values("after", 60)
    produce(bootstrap, topic, later, PARTITIONS)
    c = Member(bootstrap, topic, group, members, "confluent")
    d = Member(bootstrap, topic, group, members, "confluent")
    try:
        poll_all(members, lambda: len(c.seen) + len(d.seen) >= len(later), "the new records")
        quiet(members)
        assert sorted(c.seen + d.seen) == sorted(later)
    finally:
        c.close()
        d.close()


def api_versions(bootstrap: str, version: int = 3) -> dict[str, Any]:
    """One ApiVersions request on a raw connection: the response body."""
    host, port = bootstrap.rsplit(":", 1)
    body = {"client_software_name": "kgroup-test", "client_software_version": "1"}
    frame = protocol.encode_request(18, version, 7, "kgroup-test", body)
    with socket.create_connection((host, int(port)), 10) as s:
        s.sendall(frame)
        answer = read_frame(s)
    return protocol.decode_response(18, version, answer).body


@pytest.mark.parametrize("version", [3, 4])
def test_api_versions_advertise_kip848_and_group_version(broker: Broker, version: int) -> None:
    body = api_versions(broker.bootstrap_servers, version)
    ranges = {k["api_key"]: (k["min_version"], k["max_version"]) for k in body["api_keys"]}
    assert ranges[68] == (0, 1) and ranges[69] == (0, 1)
    # Kafka 4.x: group.version supported 0-1 (left out of v3's list: KAFKA-17011), finalized 1.
    supported = {
        f["name"]: (f["min_version"], f["max_version"]) for f in body["supported_features"]
    }
    assert supported == ({"group.version": (0, 1)} if version >= 4 else {})
    finalized = {
        f["name"]: (f["min_version_level"], f["max_version_level"])
        for f in body["finalized_features"]
    }
    assert finalized == {"group.version": (1, 1)}
    assert body["finalized_features_epoch"] >= 0


def test_classic_only_broker_neither_advertises_nor_serves_kip848(classic_broker: Broker) -> None:
    from confluent_kafka import Consumer

    bootstrap = classic_broker.bootstrap_servers
    body = api_versions(bootstrap)
    keys = {k["api_key"] for k in body["api_keys"]}
    assert 68 not in keys and 69 not in keys
    assert body["supported_features"] == [] and body["finalized_features"] == []
    assert body["finalized_features_epoch"] == -1

    # Asked anyway, the coordinator answers UNSUPPORTED_VERSION (Kafka's
    # isConsumerGroupProtocolEnabled).
    heartbeat = {
        "group_id": "g",
        "member_id": uuid.uuid4().hex,
        "member_epoch": 0,
        "instance_id": None,
        "rack_id": None,
        "rebalance_timeout_ms": 30000,
        "subscribed_topic_names": ["t"],
        "subscribed_topic_regex": None,
        "server_assignor": None,
        "topic_partitions": [],
    }
    answer = _ask(bootstrap, 68, 1, heartbeat)
    assert answer["error_code"] == 35  # UNSUPPORTED_VERSION

    # A group.protocol=consumer client fails cleanly, as against Kafka 3.x: librdkafka finds
    # ConsumerGroupHeartbeat not advertised, marks the coordinator dead ("Required feature not
    # supported by broker") and retries, with no assignment and no error raised; it closes at
    # once.
    topic = create_topic(bootstrap, PARTITIONS)
    produce(bootstrap, topic, values("unread", 8), PARTITIONS)
    logs = _Log()
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "broker.address.family": "v4",
            "group.id": group_name(),
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "debug": "cgrp",
        },
        logger=logs.logger,
    )
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not logs.saw(_NOT_SUPPORTED):
            m = c.poll(0.1)
            assert m is None or m.error() is not None, "a record without a group"
        assert logs.saw(_NOT_SUPPORTED), logs.lines[-20:]
        assert c.assignment() == []
    finally:
        started = time.monotonic()
        c.close()
        assert time.monotonic() - started < 5


_NOT_SUPPORTED = "ConsumerGroupHeartbeatRequest not supported by broker"


class _Log:
    """A logger that keeps what librdkafka logs (its ``debug`` output)."""

    def __init__(self) -> None:
        import logging

        self.lines: list[str] = []
        self.logger = logging.getLogger(f"librdkafka-{uuid.uuid4().hex[:8]}")
        self.logger.setLevel(logging.DEBUG)
        self.logger.propagate = False
        handler = logging.Handler()
        handler.emit = lambda record: self.lines.append(record.getMessage())  # type: ignore[method-assign]
        self.logger.addHandler(handler)

    def saw(self, text: str) -> bool:
        return any(text in line for line in self.lines)


def _ask(bootstrap: str, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
    """One group request on a raw connection, after a FindCoordinator: the response body."""
    host, port = bootstrap.rsplit(":", 1)
    frame = protocol.encode_request(api_key, version, 9, "kgroup-test", body)
    with socket.create_connection((host, int(port)), 10) as s:
        # A FindCoordinator first: it creates __consumer_offsets, without which every group
        # request is NOT_COORDINATOR.
        find = protocol.encode_request(10, 3, 8, "kgroup-test", {"key": "g", "key_type": 0})
        s.sendall(find)
        read_frame(s)
        s.sendall(frame)
        answer = read_frame(s)
    return protocol.decode_response(api_key, version, answer).body


def test_a_consumer_group_survives_kill_9(tmp_path: Any) -> None:
    """The broker killed without warning while a consumer-protocol group of two members is
    stable: restarted on its data, it has the group back from ``__consumer_offsets`` as it
    was (epochs, members, assignments, committed offsets) before any member heartbeats, and
    the members carry on at their epochs, consuming the rest without repeating a record."""
    from confluent_kafka.admin import AdminClient
    from support.kgroup_broker import BrokerProcess

    proc = BrokerProcess(tmp_path / "data", {**FAST, "group.consumer.session.timeout.ms": 20_000})
    proc.start()
    members: list[Member] = []
    try:
        bootstrap = proc.bootstrap
        topic = create_topic(bootstrap, PARTITIONS)
        group = group_name()
        first = values("before", 200)
        produce(bootstrap, topic, first, PARTITIONS)
        a = Member(bootstrap, topic, group, members, "confluent")
        b = Member(bootstrap, topic, group, members, "confluent")
        poll_all(
            members,
            lambda: len(a.owned) == 2 and len(b.owned) == 2 and len(a.seen + b.seen) >= 200,
            "a stable 2/2 group that consumed everything",
        )

        def view() -> tuple[Any, ...]:
            admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
            d = admin.describe_consumer_groups([group])[group].result(15)
            return (
                d.state,
                sorted(
                    (m.member_id, sorted(tp.partition for tp in m.assignment.topic_partitions))
                    for m in d.members
                ),
            )

        before = view()
        proc.kill9()
        proc.start()
        assert view() == before, "the group as it was, before any member came back"
        second = values("after", 100)
        produce(bootstrap, topic, second, PARTITIONS)
        poll_all(members, lambda: len(a.seen + b.seen) >= 300, "the records after the restart")
        quiet(members)
        assert sorted(a.seen + b.seen) == sorted(first + second), "every record exactly once"
        assert view()[1] == before[1], "same members, same partitions"
    finally:
        for m in list(members):
            m.close()
        proc.stop()


def test_a_regex_subscription_is_resolved_by_the_broker(broker: Broker) -> None:
    """librdkafka sends a ``^`` subscription as SubscribedTopicRegex under the consumer
    protocol: the broker resolves it (a full match, RE2 semantics), assigns the matching
    topics' partitions, and a topic created later that matches reaches the member too."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = broker.bootstrap_servers
    prefix = f"rx{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})

    def create(name: str, partitions: int) -> None:
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)

    create(f"{prefix}-a", 2)
    create(f"{prefix}-b", 1)
    create(f"other-{prefix}", 3)
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "broker.address.family": "v4",
            "group.id": group_name(),
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
        }
    )
    try:
        c.subscribe([f"^{prefix}-.*"])

        def assigned() -> set[tuple[str, int]]:
            c.poll(0.05)
            return {(tp.topic, tp.partition) for tp in c.assignment()}

        want = {(f"{prefix}-a", 0), (f"{prefix}-a", 1), (f"{prefix}-b", 0)}
        deadline = time.monotonic() + 20
        while assigned() != want:
            assert time.monotonic() < deadline, f"assignment {assigned()} != {want}"
        create(f"{prefix}-c", 2)
        want |= {(f"{prefix}-c", 0), (f"{prefix}-c", 1)}
        deadline = time.monotonic() + 20
        while assigned() != want:
            assert time.monotonic() < deadline, f"assignment {assigned()} != {want}"
    finally:
        c.close()


def test_names_are_assigned_before_a_new_regex(broker: Broker) -> None:
    """A regex new to the group is resolved after the heartbeat that brings it, as Kafka
    resolves it off the heartbeat path: a member subscribing with names and a regex is first
    given the names' partitions, then the regex's at a later heartbeat. librdkafka's own
    0045_resubscribe_with_regex counts on this order under the consumer protocol."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = broker.bootstrap_servers
    prefix = f"rn{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    for name, partitions in ((f"{prefix}-a", 2), (f"{prefix}-b", 1), (f"lit-{prefix}", 2)):
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "broker.address.family": "v4",
            "group.id": group_name(),
            "group.protocol": "consumer",
        }
    )
    assigns: list[set[tuple[str, int]]] = []

    def on_assign(_: Any, partitions: list[Any]) -> None:
        if partitions:
            assigns.append({(tp.topic, tp.partition) for tp in partitions})

    try:
        c.subscribe([f"^{prefix}-.*", f"lit-{prefix}"], on_assign=on_assign)
        deadline = time.monotonic() + 20
        while sum(len(a) for a in assigns) < 5:
            assert time.monotonic() < deadline, f"assignments {assigns}"
            c.poll(0.05)
        assert assigns[0] == {(f"lit-{prefix}", 0), (f"lit-{prefix}", 1)}, assigns
        assert set().union(*assigns[1:]) == {
            (f"{prefix}-a", 0),
            (f"{prefix}-a", 1),
            (f"{prefix}-b", 0),
        }
    finally:
        c.close()
