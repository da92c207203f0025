"""kgroup against the hashes of the real clients, on 100,000 seeded random keys of 0 to 300
bytes: kafka-python's murmur2 (pure Python) and librdkafka's C (murmur2, fnv1a, consistent),
exposed one key per call by confluent-kafka 2.16."""

import random

import confluent_kafka
import numpy as np
import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

import kgroup

N_KEYS = 100_000


@pytest.fixture(scope="module")
def random_keys() -> list[bytes]:
    rng = random.Random(20261121)
    return [rng.randbytes(rng.randint(0, 300)) for _ in range(N_KEYS)]


def test_murmur2_equals_kafka_python(random_keys: list[bytes]) -> None:
    ours = [kgroup.murmur2(k) & 0xFFFFFFFF for k in random_keys]
    # kafka-python returns the unsigned 32-bit value; Java's is signed.
    theirs = [kafka_python_murmur2(k) for k in random_keys]
    assert ours == theirs


@pytest.mark.parametrize("n", [1, 7, 12, 1000, 2**31 - 1])
@pytest.mark.parametrize(
    ("hash", "librdkafka"),
    [
        ("murmur2", confluent_kafka.murmur2),
        ("fnv1a", confluent_kafka.fnv1a),
        ("crc32", confluent_kafka.consistent),
    ],
)
def test_partitions_equal_librdkafka(
    random_keys: list[bytes], hash: str, librdkafka, n: int
) -> None:
    expected = np.array([librdkafka(k, n) for k in random_keys], dtype=np.int32)
    got = kgroup.partition_keys(random_keys, n, hash=hash)
    mismatches = np.flatnonzero(got != expected)
    assert mismatches.size == 0, [(random_keys[i], got[i], expected[i]) for i in mismatches[:5]]
    # One key at a time agrees too.
    for k in random_keys[:2000]:
        assert kgroup.partition_for_key(k, n, hash=hash) == librdkafka(k, n)
