"""kgroup's AdminClient describes and deletes many groups with one request per coordinator, as
Java's Admin batches them (DescribeConsumerGroupsHandler, DeleteConsumerGroupsHandler over its
batched CoordinatorStrategy): one FindCoordinator (v4+) for every group, one
ConsumerGroupDescribe carrying them all, one DescribeGroups for those it leaves to the classic
api (classic groups, unknown ones), one DeleteGroups. Counted by kgroup's broker
(``BrokerState.requests``); the descriptions checked against kgroup's broker and Apache Kafka
4.4 alike."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import pytest
from support.consumer_protocol import FAST, PARTITIONS, Member, group_name, poll_all
from support.consumers import create_topic
from support.kgroup_broker import run_broker

from kgroup import AdminClient
from kgroup.broker import Broker
from kgroup.client.admin import ConsumerGroupType
from kgroup.client.types import TopicPartition
from kgroup.errors import GroupIdNotFound
from kgroup.protocol import ApiKey

pytestmark = pytest.mark.network

COUNTED = (ApiKey.FIND_COORDINATOR, ApiKey.CONSUMER_GROUP_DESCRIBE, ApiKey.DESCRIBE_GROUPS)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("admin-batches"), FAST) as b:
        yield b


class Peer(NamedTuple):
    bootstrap: str
    broker: Broker | None  # kgroup's, whose requests are counted


@pytest.fixture(params=["kgroup", pytest.param("kafka", marks=pytest.mark.slow)])
def peer(request: pytest.FixtureRequest) -> Peer:
    """kgroup's broker, then Apache Kafka 4.4."""
    if request.param == "kafka":
        return Peer(request.getfixturevalue("kafka").bootstrap, None)
    b = request.getfixturevalue("broker")
    return Peer(b.bootstrap_servers, b)


def _counts(peer: Peer, *keys: int) -> dict[int, int]:
    assert peer.broker is not None and peer.broker.state is not None
    return {k: peer.broker.state.requests[k] for k in keys}


def _sent(peer: Peer, before: dict[int, int]) -> dict[int, int]:
    """The requests of each counted api since ``before`` (kgroup's broker only)."""
    if peer.broker is None:
        return {}
    return {k: n - before[k] for k, n in _counts(peer, *before).items()}


def test_groups_are_described_with_one_request_per_api_and_coordinator(peer: Peer) -> None:
    bootstrap = peer.bootstrap
    topic = create_topic(bootstrap, PARTITIONS)
    consumer = [group_name("next"), group_name("next")]
    classic, simple, unknown = group_name("classic"), group_name("simple"), group_name("none")
    # One member per group, each with its own list: a member checks that no other member of
    # its list owns what it is given.
    groups: list[list[Member]] = [[], [], []]
    Member(bootstrap, topic, consumer[0], groups[0])
    Member(bootstrap, topic, consumer[1], groups[1])
    Member(bootstrap, topic, classic, groups[2], protocol="classic")
    members = [m for g in groups for m in g]
    everything = set(range(PARTITIONS))
    try:
        poll_all(
            members,
            lambda: all(m.owned == everything for m in members),
            "every group's assignment",
        )
        with AdminClient({"bootstrap.servers": bootstrap}) as admin:
            for f in admin.alter_consumer_group_offsets(
                simple, [TopicPartition(topic, 0, 5)]
            ).values():
                f.result(10)
        asked = [*consumer, classic, simple, unknown]
        # A new client: no coordinator known yet.
        with AdminClient({"bootstrap.servers": bootstrap}) as admin:
            before = _counts(peer, *COUNTED) if peer.broker else {}
            found = admin.describe_consumer_groups(asked, request_timeout=10)
            d = {g: found[g].result() for g in asked}
            sent = _sent(peer, before)
            if peer.broker is not None:
                assert sent == {
                    ApiKey.FIND_COORDINATOR: 1,
                    ApiKey.CONSUMER_GROUP_DESCRIBE: 1,
                    ApiKey.DESCRIBE_GROUPS: 1,
                }
            # Again: the coordinators are known, and only the unknown group goes on to
            # DescribeGroups.
            before = _counts(peer, *COUNTED) if peer.broker else {}
            again = admin.describe_consumer_groups([consumer[0], unknown], request_timeout=10)
            assert again[unknown].result().state == "Dead"
            assert again[consumer[0]].result().group_id == consumer[0]
            if peer.broker is not None:
                assert _sent(peer, before) == {
                    ApiKey.FIND_COORDINATOR: 0,
                    ApiKey.CONSUMER_GROUP_DESCRIBE: 1,
                    ApiKey.DESCRIBE_GROUPS: 1,
                }
        port = int(bootstrap.split(":")[1])
        assert {g: x.coordinator.port for g, x in d.items()} == dict.fromkeys(asked, port)
        for g in consumer:
            x = d[g]
            assert (x.group_id, x.type, x.state, x.partition_assignor, x.protocol_type) == (
                g,
                ConsumerGroupType.CONSUMER,
                "Stable",
                "uniform",
                "consumer",
            )
            [m] = x.members
            assert m.member_epoch == x.group_epoch == x.target_assignment_epoch
            assert {tp.partition for tp in m.assignment.topic_partitions} == everything
            assert {tp.partition for tp in m.target_assignment.topic_partitions} == everything
        c = d[classic]
        assert (c.type, c.state, c.partition_assignor, c.group_epoch) == (
            ConsumerGroupType.CLASSIC,
            "Stable",
            "range",
            None,
        )
        [m] = c.members
        assert (m.member_epoch, m.target_assignment) == (None, None)
        assert {tp.partition for tp in m.assignment.topic_partitions} == everything
        s = d[simple]
        assert (s.type, s.state, s.is_simple_consumer_group, s.members) == (
            ConsumerGroupType.CLASSIC,
            "Empty",
            True,
            [],
        )
        assert (d[unknown].group_id, d[unknown].state, d[unknown].members) == (unknown, "Dead", [])
    finally:
        for m in members:
            m.close()


def test_groups_are_deleted_with_one_request_per_coordinator(peer: Peer) -> None:
    bootstrap = peer.bootstrap
    topic = create_topic(bootstrap, PARTITIONS)
    empty = [group_name("gone"), group_name("gone")]
    unknown = group_name("none")
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        for g in empty:
            for f in admin.alter_consumer_group_offsets(g, [TopicPartition(topic, 0, 1)]).values():
                f.result(10)
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        before = _counts(peer, ApiKey.FIND_COORDINATOR, ApiKey.DELETE_GROUPS) if peer.broker else {}
        deleted = admin.delete_consumer_groups([*empty, unknown], request_timeout=10)
        for g in empty:
            assert deleted[g].result() is None
        with pytest.raises(GroupIdNotFound):
            deleted[unknown].result()
        if peer.broker is not None:
            assert _sent(peer, before) == {ApiKey.FIND_COORDINATOR: 1, ApiKey.DELETE_GROUPS: 1}
        described = admin.describe_consumer_groups(empty, request_timeout=10)
        assert [described[g].result().state for g in empty] == ["Dead", "Dead"]
