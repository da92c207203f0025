"""kgroup's AdminClient against kgroup's broker and tansu: topics created (the broker's error
class when one exists), listed, described, given partitions and configs, deleted; a group's
offsets committed, listed, deleted; ListOffsets by position and by time; groups listed,
described and deleted. Checked against what confluent-kafka's clients wrote and see."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from support.kgroup_broker import run_broker

from kgroup.client import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)
from kgroup.client.types import OFFSET_INVALID, TopicPartition
from kgroup.errors import (
    GroupIdNotFound,
    TopicAlreadyExists,
    UnknownTopicOrPartition,
    UnsupportedVersion,
)

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def kgroup_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_broker(tmp_path_factory.mktemp("admin"), {"group.initial.rebalance.delay.ms": 0}) as b:
        yield b.bootstrap_servers


@pytest.fixture(params=["kgroup", "tansu", "kafka"])
def bootstrap(request: pytest.FixtureRequest, kgroup_bootstrap: str) -> str:
    if request.param != "kgroup":
        return request.getfixturevalue(request.param).bootstrap
    return kgroup_bootstrap


@pytest.fixture
def admin(bootstrap: str) -> Iterator[AdminClient]:
    with AdminClient({"bootstrap.servers": bootstrap}) as a:
        yield a


def _name() -> str:
    return f"adm-{uuid.uuid4().hex[:8]}"


def test_topics_created_listed_described_grown_and_deleted(
    admin: AdminClient, request: pytest.FixtureRequest
) -> None:
    topic = _name()
    futures = admin.create_topics([NewTopic(topic, 3, 1)], operation_timeout=10)
    assert list(futures) == [topic]
    assert futures[topic].result(30) is None
    with pytest.raises(TopicAlreadyExists):
        admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)

    md = admin.list_topics(timeout=30)
    assert md.cluster_id and md.brokers
    b = next(iter(md.brokers.values()))
    assert b.host == "127.0.0.1" and b.port > 0
    t = md.topics[topic]
    assert (t.topic, t.error, sorted(t.partitions)) == (topic, None, [0, 1, 2])
    p = t.partitions[1]
    assert (p.id, p.error, p.leader in md.brokers, p.replicas, p.isrs) == (
        1,
        None,
        True,
        [p.leader],
        [p.leader],
    )
    assert list(admin.list_topics(topic).topics) == [topic]

    described = admin.describe_topics([topic, "no-such-topic-" + topic])
    assert sorted(described[topic].result(30).partitions) == [0, 1, 2]
    with pytest.raises(UnknownTopicOrPartition):
        described["no-such-topic-" + topic].result(30)

    grown = admin.create_partitions([NewPartitions(topic, 5)])[topic]
    if request.node.callspec.params["bootstrap"] == "tansu":
        with pytest.raises(UnsupportedVersion):  # tansu serves no CreatePartitions
            grown.result(30)
    else:
        assert grown.result(30) is None
        # Kafka's brokers learn of the new partitions from its controller's log a little after
        # the answer (docs/kafka-differences.md, "Reads right after a write").
        deadline = time.monotonic() + 10
        while True:
            partitions = admin.describe_topics([topic])[topic].result(30).partitions
            if len(partitions) == 5 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert sorted(partitions) == [0, 1, 2, 3, 4]

    assert admin.delete_topics([topic], operation_timeout=10)[topic].result(30) is None
    deadline = time.monotonic() + 10
    while topic in admin.list_topics().topics and time.monotonic() < deadline:
        time.sleep(0.05)
    assert topic not in admin.list_topics().topics


def test_topic_configs_described_and_altered(kgroup_bootstrap: str) -> None:
    with AdminClient({"bootstrap.servers": kgroup_bootstrap}) as admin:
        topic = _name()
        admin.create_topics([NewTopic(topic, 1, 1, config={"retention.ms": "123456"})])[
            topic
        ].result(30)
        r = ConfigResource("topic", topic)
        entries = admin.describe_configs([r])[r].result(30)
        assert entries["retention.ms"].value == "123456"
        assert not entries["retention.ms"].is_default
        assert entries["cleanup.policy"].is_default

        change = ConfigResource(
            ConfigResource.Type.TOPIC,
            topic,
            incremental_configs=[
                ConfigEntry("segment.ms", "999999", incremental_operation=AlterConfigOpType.SET),
                ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
            ],
        )
        assert admin.incremental_alter_configs([change])[change].result(30) is None
        entries = admin.describe_configs([r])[r].result(30)
        assert entries["segment.ms"].value == "999999" and entries["retention.ms"].is_default

        whole = ConfigResource("topic", topic, set_config={"retention.ms": "5000"})
        assert admin.alter_configs([whole])[whole].result(30) is None
        entries = admin.describe_configs([r])[r].result(30)
        # AlterConfigs replaces the whole set: segment.ms is back at its default.
        assert entries["retention.ms"].value == "5000" and entries["segment.ms"].is_default


def test_group_offsets_list_offsets_and_groups(kgroup_bootstrap: str) -> None:
    bootstrap = kgroup_bootstrap
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        topic, group = _name(), _name()
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
        base = int(time.time() * 1000) - 100_000
        p = Producer({"bootstrap.servers": bootstrap})
        for i in range(10):
            p.produce(topic, b"v%d" % i, partition=0, timestamp=base + i * 1000)
        for i in range(4):
            p.produce(topic, b"w%d" % i, partition=1)
        assert p.flush(30) == 0

        tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
        assert admin.watermarks([tp0, (topic, 1)]) == {tp0: (0, 10), tp1: (0, 4)}
        found = admin.list_offsets(
            {
                tp0: OffsetSpec.for_timestamp(base + 4500),
                tp1: "earliest",
                TopicPartition(topic, 7): OffsetSpec.latest(),
            }
        )
        assert found[tp0].result(30).offset == 5
        assert found[tp0].result(30).timestamp == base + 5000
        assert found[tp1].result(30).offset == 0
        with pytest.raises(UnknownTopicOrPartition):
            found[TopicPartition(topic, 7)].result(30)
        assert admin.list_offsets({tp0: base + 999_999})[tp0].result(30).offset == -1
        assert admin.list_offsets({tp1: -1})[tp1].result(30).offset == 4

        committed = admin.alter_consumer_group_offsets(
            group, [TopicPartition(topic, 0, 7), TopicPartition(topic, 1, 3, metadata="m")]
        )
        assert {tp: f.result(30) for tp, f in committed.items()} == {tp0: None, tp1: None}
        [listed] = admin.list_consumer_group_offsets(group).values()
        assert [(tp.partition, tp.offset, tp.metadata) for tp in listed.result(30)] == [
            (0, 7, ""),
            (1, 3, "m"),
        ]
        some = admin.list_consumer_group_offsets(group, [tp1, (topic, 5)])[group].result(30)
        assert [(tp.partition, tp.offset) for tp in some] == [(1, 3), (5, OFFSET_INVALID)]

        listings = {g.group_id: g for g in admin.list_consumer_groups().result(30).valid}
        assert listings[group].state == "Empty" and listings[group].is_simple_consumer_group
        d = admin.describe_consumer_groups([group])[group].result(30)
        assert (d.state, d.members, d.coordinator.host) == ("Empty", [], "127.0.0.1")

        deleted = admin.delete_consumer_group_offsets(group, [tp1])
        assert deleted[tp1].result(30) is None
        after = admin.list_consumer_group_offsets(group)[group].result(30)
        assert [(tp.partition, tp.offset) for tp in after] == [(0, 7)]

        assert admin.delete_consumer_groups([group])[group].result(30) is None
        with pytest.raises(GroupIdNotFound):
            admin.delete_consumer_groups([group])[group].result(30)
        assert admin.describe_consumer_groups([group])[group].result(30).state == "Dead"


def test_a_closed_client_fails_its_futures(kgroup_bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": kgroup_bootstrap})
    admin.close()
    admin.close()
    [f] = admin.delete_topics(["x"]).values()
    with pytest.raises(Exception, match="closed"):
        f.result(5)


def test_offset_fetch_body_at_each_version() -> None:
    # One builder for the Consumer and the AdminClient: the v8 groups form, require_stable
    # from v7, "every partition" (topics null) only from v2.
    from kgroup.client.offsets import offset_fetch_body
    from kgroup.errors import UnsupportedVersion

    some = offset_fetch_body("g", {"t": [0, 2]}, True)
    topics = [{"name": "t", "partition_indexes": [0, 2]}]
    assert some(8) == {"groups": [{"group_id": "g", "topics": topics}], "require_stable": True}
    assert some(7) == {"group_id": "g", "topics": topics, "require_stable": True}
    assert some(1) == {"group_id": "g", "topics": topics}
    every = offset_fetch_body("g", None, False)
    assert every(8) == {"groups": [{"group_id": "g", "topics": None}], "require_stable": False}
    assert every(2) == {"group_id": "g", "topics": None}
    with pytest.raises(UnsupportedVersion):
        every(1)


@pytest.fixture(params=["kgroup", "kafka"])
def log_dirs_broker(request: pytest.FixtureRequest, kgroup_bootstrap: str) -> str:
    # tansu advertises DescribeLogDirs but closes the connection on it
    # (tests/protocol/test_client_fixtures.py's TANSU_UNIMPLEMENTED).
    if request.param != "kgroup":
        return request.getfixturevalue(request.param).bootstrap
    return kgroup_bootstrap


def test_log_dirs_described(log_dirs_broker: str) -> None:
    """DescribeLogDirs on each broker: the folder, each replica's size, the filesystem's size
    and free space; as Apache Kafka answers it."""
    bootstrap = log_dirs_broker
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        _log_dirs_described(admin, bootstrap)


def _log_dirs_described(admin: AdminClient, bootstrap: str) -> None:
    topic = _name()
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(200):
        p.produce(topic, b"v" * 100, partition=i % 2)
    assert p.flush(30) == 0
    described = {node: f.result(30) for node, f in admin.describe_log_dirs().items()}
    assert len(described) == 1
    dirs = next(iter(described.values()))
    assert len(dirs) == 1
    path, d = next(iter(dirs.items()))
    assert d.path == path and path.startswith("/")
    assert d.error is None
    assert d.total_bytes is not None and d.usable_bytes is not None
    assert d.total_bytes >= d.usable_bytes > 0
    mine = {tp: r for tp, r in d.replicas.items() if tp.topic == topic}
    assert set(mine) == {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    for r in mine.values():
        # 100 records of 100 bytes in batches: more than the values, less than twice them.
        assert 100 * 100 < r.size < 2 * 100 * 100 + 4096, r
        assert (r.offset_lag, r.is_future) == (0, False)
    only = admin.describe_log_dirs(None, [(topic, 1)])
    (d,) = next(iter(only.values())).result(30).values()
    assert set(d.replicas) == {TopicPartition(topic, 1)}
