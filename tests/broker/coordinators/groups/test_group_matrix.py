"""Real consumer groups on kgroup's broker through what happens to groups in production: members
of confluent-kafka (librdkafka), kafka-python and aiokafka, each in a process of its own
(``support.group_member``), join, leave with close() and die by kill -9 while a 12-partition
topic is being produced to and consumed; each member commits every record synchronously after
processing it. Every record is consumed, and none twice but for Kafka's own caveat (a member
killed between processing a record and its commit leaves that record to the next owner). Also:
a dead member's partitions move when its session expires, a static member (KIP-345) restarting
within its session gets its partitions back without a rebalance, partitions added to a topic
are assigned, and one group mixes confluent-kafka and kafka-python members."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import AdminClient, NewPartitions
from support.consumers import (
    PARTITIONS,
    SESSION_MS,
    MemberProcess,
    SteadyProducer,
    assert_delivered,
    committing,
    consumed,
    create_topic,
    produce,
    run_group,
    wait_balanced,
    wait_for,
)
from support.groups import group_metadata

from kgroup.broker import Broker

pytestmark = pytest.mark.network


@pytest.mark.slow
@pytest.mark.parametrize(
    ("client", "assignor", "size"),
    [
        # The larger group of each library; four members for its other assignors. aiokafka
        # has one: its default (roundrobin).
        ("confluent", "cooperative-sticky", 10),
        ("confluent", "range", 4),
        ("confluent", "roundrobin", 4),
        ("kafka-python", "sticky", 10),
        ("kafka-python", "range", 4),
        ("kafka-python", "roundrobin", 4),
        ("aiokafka", None, 10),
    ],
)
def test_members_joining_closing_and_killed_mid_stream_consume_every_record_once(
    broker: Broker, client: str, assignor: str | None, size: int
) -> None:
    # 10: 4 members, then 3 and 3 more (10 on 12 partitions); 4: 2, then 1 and 1 more. Then
    # one close()s and one is killed.
    waves = {10: (4, [3, 3]), 4: (2, [1, 1])}[size]
    run_group(broker.bootstrap_servers, client, assignor, *waves)


def _produce(
    bootstrap: str, topic: str, prefix: str, n: int, partitions: int = PARTITIONS
) -> list[str]:
    """``n`` records ``prefix0`` ... over the topic's partitions; their values."""
    values = [f"{prefix}{i}" for i in range(n)]
    produce(bootstrap, topic, [v.encode() for v in values], partitions)
    return values


def _first_rebalance(members: list[MemberProcess], since: float) -> float:
    """When the first of ``members`` reported a rebalance event at or after ``since``."""
    return min(e["t"] for m in members for e in m.rebalances(since))


@pytest.mark.slow
def test_a_killed_members_partitions_move_when_its_session_expires(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic, group = create_topic(bootstrap), f"expire-{uuid.uuid4().hex[:6]}"
    members = [
        MemberProcess(bootstrap, topic, group, "confluent", name=f"m{i}", assignor="range")
        for i in range(3)
    ]
    try:
        wait_balanced(members)
        values = _produce(bootstrap, topic, "a", 120)
        wait_for(lambda: consumed(members, values), 30, "the first records", lambda: members)
        victim, survivors = members[1], [members[0], members[2]]
        orphaned = set(victim.owned)
        killed_at = victim.kill9()
        wait_balanced(members, timeout=SESSION_MS / 1000 + 60)
        # Nothing happens to the others until the coordinator expires the dead member: its last
        # heartbeat came at most one heartbeat interval (500 ms) before the kill, so that is
        # about session.timeout.ms (6 s) later; half of it leaves room for a loaded machine.
        assert _first_rebalance(survivors, killed_at) - killed_at >= SESSION_MS / 1000 / 2
        assert orphaned <= {p for m in survivors for p in m.owned}
        values += _produce(bootstrap, topic, "b", 120)
        wait_for(lambda: consumed(members, values), 30, "the next records", lambda: members)
    finally:
        for m in members:
            m.stop()
    assert [m.proc.returncode for m in survivors] == [0, 0]
    assert_delivered(members, values)


def _instances(admin: AdminClient, group: str) -> tuple[ConsumerGroupState, dict[str, str]]:
    """A group's state and ``{group.instance.id: member id}``, as DescribeGroups tells."""
    d = admin.describe_consumer_groups([group])[group].result(30)
    return d.state, {m.group_instance_id: m.member_id for m in d.members}


def test_a_static_member_restarting_within_its_session_gets_its_partitions_back_without_a_rebalance(
    broker: Broker,
) -> None:
    # KIP-345. The restarted member is the group's leader, the harder case: the coordinator
    # answers its JoinGroup with the old leader id, so that it does not assign again. A 20 s
    # session leaves a loaded machine room to start the new process well within it.
    bootstrap = broker.bootstrap_servers
    topic, group = create_topic(bootstrap), f"static-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    session_ms = 20_000

    def static(name: str) -> MemberProcess:
        return MemberProcess(
            bootstrap,
            topic,
            group,
            "confluent",
            name=name,
            assignor="range",
            instance_id=name,
            session_ms=session_ms,
        )

    leader = static("s0")
    members = [leader]
    try:
        wait_for(lambda: len(leader.owned) == PARTITIONS, 30, "the first member's assignment")
        members += [static("s1"), static("s2")]
        wait_balanced(members)
        values = _produce(bootstrap, topic, "a", 120)
        wait_for(lambda: consumed(members, values), 30, "the first records", lambda: members)
        others, owned = members[1:], leader.owned
        generation = group_metadata(bootstrap, group)[-1]["generation"]
        state, before = _instances(admin, group)
        assert (state, set(before)) == (ConsumerGroupState.STABLE, {"s0", "s1", "s2"})

        quiet_since = time.monotonic()
        assert leader.close() == 0
        closed_at = time.monotonic()
        # A static member's close() sends no LeaveGroup: it is still a member.
        assert _instances(admin, group) == (ConsumerGroupState.STABLE, before)
        restarted = static("s0")
        members.append(restarted)
        wait_for(lambda: restarted.owned == owned, 30, "the restarted member's partitions")
        assert restarted.rebalances()[-1]["t"] - closed_at < session_ms / 1000
        values += _produce(bootstrap, topic, "b", 120)
        wait_for(lambda: consumed(members, values), 30, "the next records", lambda: members)
        assert restarted.committed

        # No rebalance: the others were neither revoked nor assigned anything, the group is at
        # the same generation, and only the static member's id changed.
        assert [m.rebalances(quiet_since) for m in others] == [[], []]
        last = group_metadata(bootstrap, group)[-1]
        assert last["generation"] == generation
        state, after = _instances(admin, group)
        assert state == ConsumerGroupState.STABLE
        assert {i: after[i] == before[i] for i in after} == {"s0": False, "s1": True, "s2": True}
        assert {m["group_instance_id"]: m["member_id"] for m in last["members"]} == after
    finally:
        for m in members:
            m.stop()
    assert [m.proc.returncode for m in members] == [0] * 4
    assert_delivered(members, values)


@pytest.mark.slow
def test_a_closed_static_member_keeps_its_partitions_until_its_session_expires(
    broker: Broker,
) -> None:
    # KIP-345: close() of a static member sends no LeaveGroup (librdkafka, as Kafka's Java
    # consumer), so its partitions move only when its session expires.
    bootstrap = broker.bootstrap_servers
    topic, group = create_topic(bootstrap), f"static-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    members = [
        MemberProcess(
            bootstrap,
            topic,
            group,
            "confluent",
            name=f"s{i}",
            assignor="range",
            instance_id=f"s{i}",
        )
        for i in range(3)
    ]
    try:
        wait_balanced(members)
        values = _produce(bootstrap, topic, "a", 120)
        wait_for(lambda: consumed(members, values), 30, "the first records", lambda: members)
        leaver, others = members[0], members[1:]
        _, before = _instances(admin, group)
        assert leaver.close() == 0
        closed_at = time.monotonic()
        assert _instances(admin, group) == (ConsumerGroupState.STABLE, before)
        wait_balanced(members, timeout=SESSION_MS / 1000 + 60)
        assert _first_rebalance(others, closed_at) - closed_at >= SESSION_MS / 1000 / 2
        state, after = _instances(admin, group)
        assert (state, set(after)) == (ConsumerGroupState.STABLE, {"s1", "s2"})
        values += _produce(bootstrap, topic, "b", 120)
        wait_for(lambda: consumed(members, values), 30, "the next records", lambda: members)
    finally:
        for m in members:
            m.stop()
    assert [m.proc.returncode for m in members] == [0] * 3
    assert_delivered(members, values)


def test_partitions_added_to_a_subscribed_topic_are_assigned_in_a_rebalance(
    broker: Broker,
) -> None:
    # The members see the new partitions in their next metadata refresh (1 s here; librdkafka's
    # topic.metadata.refresh.interval.ms) and rejoin; the leader assigns all 16.
    bootstrap = broker.bootstrap_servers
    topic, group = create_topic(bootstrap), f"grow-{uuid.uuid4().hex[:6]}"
    members = [
        MemberProcess(
            bootstrap,
            topic,
            group,
            "confluent",
            name=f"m{i}",
            assignor="range",
            metadata_refresh_ms=1000,
        )
        for i in range(3)
    ]
    try:
        wait_balanced(members)
        values = _produce(bootstrap, topic, "a", 120)
        wait_for(lambda: consumed(members, values), 30, "the first records", lambda: members)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_partitions([NewPartitions(topic, 16)])[topic].result(30)
        wait_balanced(members, partitions=16)
        # Range over 16 partitions and 3 members: 6, 5, 5.
        assert sorted(len(m.owned) for m in members) == [5, 5, 6]
        values += _produce(bootstrap, topic, "b", 160, partitions=16)
        wait_for(lambda: consumed(members, values), 30, "records of all 16", lambda: members)
    finally:
        for m in members:
            m.stop()
    assert [m.proc.returncode for m in members] == [0] * 3
    assert_delivered(members, values)


@pytest.mark.parametrize(
    ("assignor", "leader", "other"),
    [("range", "confluent", "kafka-python"), ("roundrobin", "kafka-python", "confluent")],
)
def test_a_group_mixing_confluent_kafka_and_kafka_python_members_consumes_every_record_once(
    broker: Broker, assignor: str, leader: str, other: str
) -> None:
    # Both libraries speak the consumer protocol (subscriptions and assignments in the same
    # schema) and name the assignor alike; the first member to join leads, and assigns for the
    # other library's members too.
    bootstrap = broker.bootstrap_servers
    topic, group = create_topic(bootstrap), f"mixed-{uuid.uuid4().hex[:6]}"

    def member(client: str, name: str) -> MemberProcess:
        return MemberProcess(bootstrap, topic, group, client, name=name, assignor=assignor)

    members = [member(leader, "m0")]
    producer = SteadyProducer(bootstrap, topic)
    try:
        producer.start()
        wait_for(lambda: len(members[0].owned) == PARTITIONS, 30, "the first member's assignment")
        members += [member(other, "m1"), member(leader, "m2"), member(other, "m3")]
        wait_balanced(members)
        assert [len(m.owned) for m in members] == [3, 3, 3, 3]
        for m in members:
            committing(m)
        values = producer.finish()
        wait_for(lambda: consumed(members, values), 60, "every record", lambda: members)
        prefix = {"confluent": "rdkafka-", "kafka-python": "kafka-python-"}[leader]
        assert group_metadata(bootstrap, group)[-1]["leader"].startswith(prefix)
    finally:
        producer.halt.set()
        for m in members:
            m.stop()
    assert [m.proc.returncode for m in members] == [0] * 4
    assert_delivered(members, values)
