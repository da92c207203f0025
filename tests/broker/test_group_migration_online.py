"""Online migration between classic and consumer groups (KIP-848's `bidirectional` policy) with
real clients, on kgroup's broker and on Apache Kafka 4.4: classic confluent-kafka members
(range) form a group; confluent-kafka and kgroup members with
``group.protocol=consumer`` join it, which upgrades it to a consumer group whose classic members
carry on through JoinGroup, SyncGroup and Heartbeat; when the consumer-protocol members leave, the
group is classic again. Every record is consumed exactly once (synchronous commits) and no
partition is ever given to a member while another owns it.

The classic members use the range assignor. With librdkafka's cooperative-sticky, some runs
were refused the upgrade: an assignment carried user data, which Kafka 4.4 (as kgroup) answers
with GROUP_ID_NOT_FOUND, "an unsupported custom assignor is in use"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.consumer_protocol import FAST, Member, poll_all, quiet, values
from support.consumers import create_topic, produce
from support.kgroup_broker import run_broker

from kgroup.broker import Broker

PARTITIONS = 6


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("migration"), FAST) as b:
        yield b


def group_type(bootstrap: str, group: str) -> str:
    """The group's type as confluent-kafka's admin client describes it."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    described = admin.describe_consumer_groups([group])[group].result(15)
    return str(described.type.name).lower()


def owned_all(members: list[Member]) -> bool:
    owned = [p for m in members for p in m.owned]
    return sorted(owned) == list(range(PARTITIONS))


@pytest.mark.parametrize("server", ["kgroup", "kafka"])
def test_a_group_upgrades_and_downgrades_online_with_nothing_lost(
    request: pytest.FixtureRequest, server: str
) -> None:
    # The same scenario on Apache Kafka 4.4 (its default 5 s consumer heartbeats) is the oracle.
    if server == "kafka":
        bootstrap = request.getfixturevalue("kafka").bootstrap
    else:
        bootstrap = request.getfixturevalue("broker").bootstrap_servers
    timeout = 90 if server == "kafka" else 30
    topic = create_topic(bootstrap, PARTITIONS)
    group = f"migrate-{topic}"
    sent: list[bytes] = []
    members: list[Member] = []

    def consumed() -> list[bytes]:
        return sorted(v for m in everyone for v in m.seen)

    def batch(name: str, n: int = 120) -> None:
        vs = values(name, n)
        produce(bootstrap, topic, vs, PARTITIONS)
        sent.extend(vs)
        poll_all(members, lambda: len(consumed()) >= len(sent), f"batch {name}", timeout)
        quiet(members)
        assert consumed() == sorted(sent), f"every record exactly once after {name}"

    everyone: list[Member] = []
    try:
        # A classic group of two.
        for _ in range(2):
            everyone.append(Member(bootstrap, topic, group, members, "confluent", "classic"))
        poll_all(members, lambda: owned_all(members), "the classic group assigned", timeout)
        assert group_type(bootstrap, group) == "classic"
        batch("classic")

        # Consumer-protocol members join: the group is upgraded online.
        everyone.append(Member(bootstrap, topic, group, members, "confluent"))
        poll_all(
            members,
            lambda: owned_all(members) and all(m.owned for m in members),
            "a confluent consumer-protocol member in the group",
            timeout,
        )
        assert group_type(bootstrap, group) == "consumer"
        everyone.append(Member(bootstrap, topic, group, members, "kgroup"))
        poll_all(
            members,
            lambda: owned_all(members) and all(m.owned for m in members),
            "four members of two protocols sharing the partitions",
            timeout,
        )
        batch("mixed")

        # The consumer-protocol members leave: the classic ones are a classic group again.
        for m in [m for m in members if m.protocol == "consumer"]:
            m.close()
        poll_all(
            members, lambda: owned_all(members), "the classic members taking everything", timeout
        )
        assert group_type(bootstrap, group) == "classic"
        batch("downgraded")
    finally:
        for m in list(members):
            m.close()
