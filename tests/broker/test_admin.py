"""confluent-kafka's AdminClient against kgroup's broker: topics created (with configs, checked
only, refused), described, altered, grown and deleted; configs of topics and of the broker;
the cluster; records deleted; offsets listed. Answers are Kafka's."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)

from kgroup.broker import Broker

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def admin(broker: Broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def name() -> str:
    return f"admin-{uuid.uuid4().hex[:10]}"


def error_of(future) -> str:
    with pytest.raises(KafkaException) as e:
        future.result(30)
    return e.value.args[0].name()


def test_create_describe_delete(admin: AdminClient) -> None:
    t = name()
    admin.create_topics([NewTopic(t, 3, 1, config={"retention.ms": "60000"})])[t].result(30)
    md = admin.list_topics(t, timeout=30).topics[t]
    assert sorted(md.partitions) == [0, 1, 2]
    assert all(
        p.leader == 1 and p.replicas == [1] and p.isrs == [1] for p in md.partitions.values()
    )
    desc = admin.describe_topics(TopicCollection([t]))[t].result(30)
    assert desc.name == t and len(desc.partitions) == 3 and not desc.is_internal
    assert error_of(admin.create_topics([NewTopic(t, 1, 1)])[t]) == "TOPIC_ALREADY_EXISTS"
    admin.delete_topics([t])[t].result(30)
    assert t not in admin.list_topics(timeout=30).topics
    assert error_of(admin.delete_topics([t])[t]) == "UNKNOWN_TOPIC_OR_PART"


def test_create_refusals_are_kafkas(admin: AdminClient) -> None:
    bad = [
        (NewTopic(name(), 1, 3), "INVALID_REPLICATION_FACTOR"),
        (NewTopic("bad name", 1, 1), "TOPIC_EXCEPTION"),
        (NewTopic(name(), 1, 1, config={"retention.ms": "soon"}), "INVALID_CONFIG"),
        (NewTopic(name(), 1, 1, config={"no.such.config": "1"}), "INVALID_CONFIG"),
    ]
    for topic, code in bad:
        assert error_of(admin.create_topics([topic])[topic.topic]) == code
    t = name()
    admin.create_topics([NewTopic(t, 2, 1)], validate_only=True)[t].result(30)
    assert t not in admin.list_topics(timeout=30).topics


def test_configs_described_and_altered(admin: AdminClient) -> None:
    t = name()
    admin.create_topics([NewTopic(t, 1, 1, config={"cleanup.policy": "compact"})])[t].result(30)
    res = ConfigResource(ConfigResource.Type.TOPIC, t)
    configs = admin.describe_configs([res])[res].result(30)
    assert configs["cleanup.policy"].value == "compact"
    assert configs["cleanup.policy"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["retention.ms"].value == "604800000"
    assert configs["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    alter = ConfigResource(
        ConfigResource.Type.TOPIC,
        t,
        incremental_configs=[
            ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("cleanup.policy", "delete", incremental_operation=AlterConfigOpType.APPEND),
        ],
    )
    admin.incremental_alter_configs([alter])[alter].result(30)
    configs = admin.describe_configs([res])[res].result(30)
    assert configs["retention.ms"].value == "1000"
    assert configs["cleanup.policy"].value == "compact,delete"
    bad = ConfigResource(
        ConfigResource.Type.TOPIC,
        t,
        incremental_configs=[
            ConfigEntry("retention.ms", "x", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    assert error_of(admin.incremental_alter_configs([bad])[bad]) == "INVALID_CONFIG"
    broker = ConfigResource(ConfigResource.Type.BROKER, "1")
    bconf = admin.describe_configs([broker])[broker].result(30)
    assert bconf["num.partitions"].value == "1"
    assert bconf["auto.create.topics.enable"].value == "true"
    # A broker synonym carries Kafka's default where Kafka has one (log.retention.hours 168),
    # as Kafka 4.4 describes it to Java's Admin (tests/java); the ones before it, none.
    hours = bconf["log.retention.hours"]
    assert (hours.value, hours.source) == ("168", ConfigSource.DEFAULT_CONFIG.value)
    assert (bconf["log.roll.hours"].value, bconf["log.roll.jitter.hours"].value) == ("168", "0")
    assert "log.retention.ms" not in bconf and "log.retention.minutes" not in bconf


def test_partitions_added(admin: AdminClient) -> None:
    t = name()
    admin.create_topics([NewTopic(t, 2, 1)])[t].result(30)
    admin.create_partitions([NewPartitions(t, 5)])[t].result(30)
    assert sorted(admin.list_topics(t, timeout=30).topics[t].partitions) == [0, 1, 2, 3, 4]
    assert error_of(admin.create_partitions([NewPartitions(t, 3)])[t]) == "INVALID_PARTITIONS"


def test_cluster_offsets_and_deleted_records(admin: AdminClient, broker: Broker) -> None:
    from confluent_kafka import Producer

    cluster = admin.describe_cluster().result(30)
    assert [n.id for n in cluster.nodes] == [1] and cluster.controller.id == 1
    assert cluster.cluster_id
    t = name()
    # Records stamped in 1970: no retention by time, or the shared broker's check could delete
    # them under the test.
    admin.create_topics([NewTopic(t, 1, 1, config={"retention.ms": "-1"})])[t].result(30)
    p = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(10):
        p.produce(t, value=str(i).encode(), partition=0, timestamp=1_000 + i)
    assert p.flush(30) == 0
    tp = TopicPartition(t, 0)
    latest = admin.list_offsets({tp: OffsetSpec.latest()})[tp].result(30)
    earliest = admin.list_offsets({tp: OffsetSpec.earliest()})[tp].result(30)
    at = admin.list_offsets({tp: OffsetSpec.for_timestamp(1_004)})[tp].result(30)
    top = admin.list_offsets({tp: OffsetSpec.max_timestamp()})[tp].result(30)
    assert (latest.offset, earliest.offset, at.offset, top.offset) == (10, 0, 4, 9)
    deleted = admin.delete_records([TopicPartition(t, 0, 6)])
    assert deleted[TopicPartition(t, 0, 6)].result(30).low_watermark == 6
    earliest = admin.list_offsets({tp: OffsetSpec.earliest()})[tp].result(30)
    assert earliest.offset == 6
