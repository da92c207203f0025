"""Every hash and partition vector of shared/reference/kafka-client-algorithms.md, sections
1.2 to 1.4; each row names where it comes from."""

import pytest

import kgroup

# (key, signed int32, source)
MURMUR2 = [
    (b"21", -973932308, "Kafka UtilsTest.testMurmur2"),
    (b"foobar", -790332482, "Kafka UtilsTest.testMurmur2"),
    (b"a-little-bit-long-string", -985981536, "Kafka UtilsTest.testMurmur2"),
    (b"a-little-bit-longer-string", -1486304829, "Kafka UtilsTest.testMurmur2"),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971, "Kafka UtilsTest.testMurmur2"),
    (bytes([ord("a"), ord("b"), ord("c")]), 479470107, "Kafka UtilsTest.testMurmur2"),
    (b"kafka", -798503068, "librdkafka rdmurmur2.c unittest_murmur2"),
    (b"giberish123456789", -1890243828, "librdkafka rdmurmur2.c unittest_murmur2"),
    (b"1234", -1614185708, "librdkafka rdmurmur2.c unittest_murmur2"),
    (b"234", -406844982, "librdkafka rdmurmur2.c unittest_murmur2"),
    (b"34", -2026295078, "librdkafka rdmurmur2.c unittest_murmur2"),
    (b"4", 1514888353, "librdkafka rdmurmur2.c unittest_murmur2"),
    (b"PreAmbleWillBeRemoved,ThePrePartThatIs", 2017611548, "librdkafka unittest_murmur2"),
    (b"reAmbleWillBeRemoved,ThePrePartThatIs", 1247982455, "librdkafka unittest_murmur2"),
    (b"eAmbleWillBeRemoved,ThePrePartThatIs", -521871202, "librdkafka unittest_murmur2"),
    (b"AmbleWillBeRemoved,ThePrePartThatIs", 1656271935, "librdkafka unittest_murmur2"),
    (b"", 275646681, "librdkafka unittest_murmur2 (empty and NULL)"),
    (b"amqp", 767747138, "older librdkafka rdmurmur2.c"),
    (b"100:48069", 1009543857, "kafkajs#357, Java output quoted"),
]


@pytest.mark.parametrize(
    ("key", "expected", "source"), MURMUR2, ids=[m[0][:20].decode() or "empty" for m in MURMUR2]
)
def test_murmur2_vectors(key: bytes, expected: int, source: str) -> None:
    assert kgroup.murmur2(key) == expected, source


def test_older_librdkafka_positive_vectors() -> None:
    # The older rdmurmur2.c listed kafka and giberish123456789 after & 0x7fffffff.
    assert kgroup.to_positive(kgroup.murmur2(b"kafka")) == 1348980580
    assert kgroup.to_positive(kgroup.murmur2(b"giberish123456789")) == 257239820


# (key, partitions, Java's partition, source)
PARTITIONS = [
    (b"", 1000, 681, "kafka-python test_murmur2_java_compatibility"),
    (b"a", 1000, 524, "kafka-python test_murmur2_java_compatibility"),
    (b"ab", 1000, 434, "kafka-python test_murmur2_java_compatibility"),
    (b"abc", 1000, 107, "kafka-python test_murmur2_java_compatibility"),
    (b"123456789", 1000, 566, "kafka-python test_murmur2_java_compatibility"),
    (b"\x00 ", 1000, 742, "kafka-python test_murmur2_java_compatibility"),
    (b"fd7af248-ce5c-46a5-93d7-1c0c9005b99d", 32, 26, "node-rdkafka#817, kafka-console-producer"),
    (
        b'Struct{documentKey={"_id": "638d1b94ce8def06be68b439"}}',
        50,
        40,
        "confluent-kafka-python#1481",
    ),
    (b"TT0124", 15, 10, "kafkajs#1154"),
    (b"100:48069", 12, 9, "kafkajs#357"),
    (
        b"UFJPRDAuQVNTRVQuMzEwMQ.002.AC000HN.01_RMSVel",
        30,
        13,
        "confluent-kafka-dotnet#1729, Java side",
    ),
    (b"key", 3, 1, "Kafka DefaultPartitionerTest key 'key', derived for 3 partitions"),
]


@pytest.mark.parametrize(("key", "n", "expected", "source"), PARTITIONS)
def test_java_partition_vectors(key: bytes, n: int, expected: int, source: str) -> None:
    assert kgroup.partition_for_key(key, n) == expected, source
    assert kgroup.partition_keys([key], n).tolist() == [expected], source


def test_crc32_issue_vectors() -> None:
    # librdkafka's default (consistent_random) puts these elsewhere than Java does.
    key = b'Struct{documentKey={"_id": "638d1b94ce8def06be68b439"}}'
    assert kgroup.partition_for_key(key, 50, hash="crc32") == 36  # confluent-kafka-python#1481
    assert kgroup.partition_for_key(b"TT0124", 15, hash="crc32") == 9  # kafkajs#1154
    assert kgroup.crc32(b"") == 0  # librdkafka: NULL/empty key -> partition 0 under consistent
    assert kgroup.crc32(b"123456789") == 0xCBF43926  # the CRC-32/ISO-HDLC check value


# librdkafka src/rdfnv1a.c unittest_fnv1a ("acquired via Go hash/fnv")
FNV1A = [
    (b"kafka", 0x0D33C4E1),
    (b"giberish123456789", 0x77A58295),
    (b"1234", 0x023BDD03),
    (b"234", 0x2DEA3CD2),
    (b"34", 0x740FA83E),
    (b"4", 0x310CA263),
    (b"PreAmbleWillBeRemoved,ThePrePartThatIs", 0x65CBD69C),
    (b"reAmbleWillBeRemoved,ThePrePartThatIs", 0x6E49C79A),
    (b"eAmbleWillBeRemoved,ThePrePartThatIs", 0x69EED356),
    (b"AmbleWillBeRemoved,ThePrePartThatIs", 0x6ABCC023),
    (b"", 0x7EE3623B),
]


@pytest.mark.parametrize(("key", "expected"), FNV1A)
def test_fnv1a_vectors(key: bytes, expected: int) -> None:
    assert kgroup.fnv1a(key) == expected
    assert kgroup.partition_for_key(key, 1000, hash="fnv1a") == expected % 1000


def test_to_positive_is_not_abs() -> None:
    # Kafka's Utils.toPositive clears the sign bit: -1 -> MAX_VALUE, MIN_VALUE -> 0.
    assert kgroup.to_positive(-1) == 2**31 - 1
    assert kgroup.to_positive(-(2**31)) == 0
    assert kgroup.to_positive(-798503068) == 1348980580
