"""librdkafka itself, through a real broker: a confluent-kafka Producer sends 10,000 random
keys to a 12-partition topic on tansu (127.0.0.1) with each of its keyed partitioners, and
every delivery report's partition must equal kgroup's for the matching hash."""

import functools
import random

import pytest
from confluent_kafka import Producer

import kgroup

pytestmark = pytest.mark.network

N_KEYS = 10_000
PARTITIONS = 12


@pytest.mark.parametrize(
    ("partitioner", "hash"),
    [("murmur2_random", "murmur2"), ("consistent_random", "crc32"), ("fnv1a_random", "fnv1a")],
)
def test_delivery_reports_match(tansu, partitioner: str, hash: str) -> None:
    topic = tansu.create_topic(PARTITIONS)
    rng = random.Random(hash)
    # Non-empty keys: librdkafka's consistent_random sends an *empty* key to a random sticky
    # partition (it treats it like a null key), so only non-empty keys have a fixed place there.
    keys = [rng.randbytes(rng.randint(1, 64)) for _ in range(N_KEYS)]
    conf = {"bootstrap.servers": tansu.bootstrap, "linger.ms": 5}
    if partitioner != "consistent_random":  # consistent_random is the default: leave it unset
        conf["partitioner"] = partitioner
    producer = Producer(conf)
    delivered: dict[int, int] = {}
    errors: list[str] = []

    def report(i: int, err, msg) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            delivered[i] = msg.partition()

    for i, k in enumerate(keys):
        while True:
            try:
                producer.produce(topic, key=k, value=b"v", on_delivery=functools.partial(report, i))
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert not errors, errors[:3]
    assert len(delivered) == N_KEYS
    expected = kgroup.partition_keys(keys, PARTITIONS, hash=hash)
    got = [delivered[i] for i in range(N_KEYS)]
    assert got == expected.tolist()
    assert set(got) == set(range(PARTITIONS))
