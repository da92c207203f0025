"""The ecosystem adapters with the real clients against a real broker (tansu, 127.0.0.1)."""

import itertools
import random
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from kafka import KafkaProducer

import kgroup
from kgroup.adapters import confluent_kafka as ck_adapter
from kgroup.adapters.kafka_python import JavaPartitioner

pytestmark = pytest.mark.network


@pytest.mark.parametrize("hash", ["murmur2", "crc32"])
def test_kafka_python_producer_places_keys_like_java(tansu, hash: str) -> None:
    topic = tansu.create_topic(12)
    rng = random.Random(7)
    keys = [rng.randbytes(rng.randint(0, 40)) for _ in range(500)]
    producer = KafkaProducer(bootstrap_servers=tansu.bootstrap, partitioner=JavaPartitioner(hash))
    try:
        futures = [producer.send(topic, key=k, value=b"v") for k in keys]
        producer.flush(30)
        got = [f.get(30).partition for f in futures]
    finally:
        producer.close(5)
    assert got == kgroup.partition_keys(keys, 12, hash=hash).tolist()


def test_kafka_python_null_keys_stick_until_the_batch_closes(tansu) -> None:
    topic = tansu.create_topic(6)
    part = JavaPartitioner(seed=3)
    # Small batches: kafka-python calls on_new_batch when a record would open a new batch.
    producer = KafkaProducer(
        bootstrap_servers=tansu.bootstrap, partitioner=part, batch_size=1024, linger_ms=1000
    )
    try:
        futures = [producer.send(topic, value=b"x" * 100) for _ in range(200)]
        producer.flush(30)
        got = [f.get(30).partition for f in futures]
    finally:
        producer.close(5)
    runs = 1 + sum(a != b for a, b in itertools.pairwise(got))
    # ~9 records of 100 bytes fill a 1 KiB batch: long runs on one partition, then a new one.
    assert runs < len(got) / 4, got
    assert len(set(got)) > 1


def test_confluent_partition_argument_matches_java(tansu) -> None:
    topic = tansu.create_topic(7)
    producer = Producer({"bootstrap.servers": tansu.bootstrap})
    partition_for = ck_adapter.JavaPartitioner(producer)
    rng = random.Random(9)
    keys = [rng.randbytes(rng.randint(0, 30)) for _ in range(300)] + ["text-key", "h\u00e9"]
    delivered: list[tuple[object, int]] = []
    for k in keys:
        producer.produce(
            topic,
            key=k,
            value=b"v",
            partition=partition_for(topic, k),
            on_delivery=lambda err, msg, k=k: delivered.append((k, -2 if err else msg.partition())),
        )
    assert producer.flush(30) == 0
    assert dict(delivered) == {k: kgroup.partition_for_key(k, 7) for k in keys}
    assert partition_for(topic, None) == ck_adapter.UNASSIGNED
    assert partition_for.partition_count(topic) == 7


def test_confluent_unknown_topic_is_a_clear_error(tansu) -> None:
    admin = AdminClient({"bootstrap.servers": tansu.bootstrap, "allow.auto.create.topics": False})
    partition_for = ck_adapter.JavaPartitioner(admin, timeout_s=5)
    with pytest.raises(kgroup.KGroupError, match="partition count"):
        partition_for(f"missing-{uuid.uuid4().hex}", b"k")


def test_adapters_reject_unknown_hash() -> None:
    with pytest.raises(ValueError, match="murmur2"):
        JavaPartitioner("sha1")
    with pytest.raises(ValueError, match="murmur2"):
        ck_adapter.JavaPartitioner(None, "sha1")


def test_kafka_python_legacy_callable_interface() -> None:
    part = JavaPartitioner()
    assert part(b"abc", list(range(1000)), list(range(1000))) == 107
    assert part(None, [0, 1, 2], [2]) == 2
