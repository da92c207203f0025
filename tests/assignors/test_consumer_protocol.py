"""ConsumerProtocol payloads: Java's bytes (vectors made by running Kafka trunk's
ConsumerProtocol, reference java-golden-vectors.txt), round trips for every version, Java's
lenient parsing, and interoperation with kafka-python's own codec."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from kgroup.assignors import Assignment, Subscription, TopicPartition
from kgroup.assignors.consumer_protocol import (
    decode_assignment,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
    decode_subscription_version,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)
from kgroup.errors import DecodeError, InvalidArgument, InvalidType

VEC_A = (
    "0003000000020006746f706963300006746f706963310000000400000005000000010006746f7069633000000002"
    "00000000000000010000000500067261636b2d61"
)
VEC_B = "000000000001000174ffffffff"
VEC_C = "000300000001000174ffffffff00000000ffffffffffff"
VEC_D = (
    "0003000000020006746f706963310000000200000000000000010006746f706963300000000100000002ffffffff"
)
VEC_E = "0000000100017400000002000000000000000100000003"


def test_java_subscription_bytes():
    a = Subscription(
        ["topic1", "topic0"],
        user_data=bytes.fromhex("00000005"),
        owned_partitions=[("topic0", 1), ("topic0", 0)],
        generation_id=5,
        rack_id="rack-a",
    )
    assert encode_subscription(a).hex() == VEC_A
    assert encode_subscription(Subscription(["t"], user_data=None), version=0).hex() == VEC_B
    assert encode_subscription(Subscription(["t"], user_data=None)).hex() == VEC_C
    back = decode_subscription(bytes.fromhex(VEC_A))
    assert back.topics == ("topic0", "topic1")
    assert back.owned_partitions == (TopicPartition("topic0", 0), TopicPartition("topic0", 1))
    assert (back.generation_id, back.rack_id, back.user_data) == (5, "rack-a", b"\0\0\0\5")


def test_java_assignment_and_user_data_bytes():
    d = Assignment([("topic1", 0), ("topic0", 2), ("topic1", 1)], user_data=None)
    assert encode_assignment(d).hex() == VEC_D
    assert encode_assignment(d, version=0).hex() == "0000" + VEC_D[4:]
    assert decode_assignment(bytes.fromhex(VEC_D)).partitions == (
        ("topic1", 0),
        ("topic1", 1),
        ("topic0", 2),
    )
    assert encode_sticky_user_data([("t", 0), ("t", 1)], generation=3).hex() == VEC_E
    assert decode_sticky_user_data(bytes.fromhex(VEC_E)) == (
        (TopicPartition("t", 0), TopicPartition("t", 1)),
        3,
    )
    assert encode_cooperative_user_data(5).hex() == "00000005"
    assert decode_cooperative_user_data(bytes.fromhex("ffffffff")) == -1


def test_sticky_user_data_topics_in_java_hash_order():
    # Java's writer groups through a HashMap of 16 buckets: "ab" (hash 3105, bucket 1) comes
    # before "b" (hash 98, bucket 2) whatever the list order.
    data = encode_sticky_user_data([("ab", 0), ("b", 1), ("ab", 2)], generation=1)
    parts, gen = decode_sticky_user_data(data)
    assert gen == 1
    assert [tp.topic for tp in parts] == ["ab", "ab", "b"]
    v0 = encode_sticky_user_data([("t", 4)])
    assert decode_sticky_user_data(v0) == ((TopicPartition("t", 4),), None)


def test_lenient_versions_and_trailing_bytes_like_java():
    future = bytes.fromhex("0007" + VEC_C[4:]) + b"more fields"
    sub, version = decode_subscription_version(future)
    assert (sub.topics, version) == (("t",), 7)
    assert decode_assignment(bytes.fromhex(VEC_D) + b"\x00\x01").partitions[0] == ("topic1", 0)
    # A negative generation is "absent" and an empty rack is no rack, as Java's parser reads them.
    odd = bytes.fromhex("000300000001000174ffffffff00000000fffffffe0000")
    s = decode_subscription(odd)
    assert (s.generation_id, s.rack_id) == (-1, None)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00",
        bytes.fromhex("ffff00000000ffffffff"),  # negative version
        bytes.fromhex("0000ffffffff"),  # null topics array
        bytes.fromhex("000000000002000174"),  # count larger than the data
        bytes.fromhex("00000000000100"),  # truncated string
        bytes.fromhex("0001000000010001740000000000000001ffff"),  # null owned topic
    ],
)
def test_malformed_subscriptions_raise_decode_error(data):
    with pytest.raises(DecodeError):
        decode_subscription(data)


def test_bad_arguments():
    with pytest.raises(InvalidType):
        Subscription("t")
    with pytest.raises(InvalidType):
        Subscription(["t"], owned_partitions=[("t", "0")])
    with pytest.raises(InvalidArgument):
        Subscription(["t"], owned_partitions=[("t", 2**31)])
    with pytest.raises(InvalidArgument):
        encode_subscription(Subscription(["t" * 40000]))
    with pytest.raises(InvalidArgument):
        encode_assignment(Assignment([]), version=-1)
    with pytest.raises(DecodeError):
        decode_assignment(b"\x00\x03\x7f\xff\xff\xff")


names = st.text(alphabet="abcxyz-._\u00e9\u4e2d\U0001f600", min_size=0, max_size=6)
partition_lists = st.lists(st.tuples(names, st.integers(0, 2**31 - 1)), max_size=12)
user_data = st.one_of(st.none(), st.binary(max_size=16))


@given(
    topics=st.lists(names, max_size=6),
    ud=user_data,
    owned=partition_lists,
    generation=st.integers(-1, 2**31 - 1),
    rack=st.one_of(st.none(), names.filter(bool)),
    version=st.integers(0, 3),
)
def test_subscription_round_trip_every_version(topics, ud, owned, generation, rack, version):
    # Encoding is canonical (Java sorts topics and owned partitions), so round trips compare
    # with the sorted form; fields a version lacks come back as their defaults.
    owned = sorted(set(owned), key=lambda tp: (tp[0].encode("utf-16-be"), tp[1]))
    topics = sorted(topics, key=lambda t: t.encode("utf-16-be"))
    sub = Subscription(
        topics, user_data=ud, owned_partitions=owned, generation_id=generation, rack_id=rack
    )
    back = decode_subscription(encode_subscription(sub, version))
    expected = Subscription(
        topics,
        user_data=ud,
        owned_partitions=owned if version >= 1 else (),
        generation_id=generation if version >= 2 else -1,
        rack_id=rack if version >= 3 else None,
    )
    assert back == expected


@given(parts=partition_lists, ud=user_data, version=st.integers(0, 3))
def test_assignment_round_trip_every_version(parts, ud, version):
    # Grouping by first appearance reorders partitions only when a topic comes back later.
    order: dict[str, list[int]] = {}
    for t, p in parts:
        order.setdefault(t, []).append(p)
    grouped = [(t, p) for t, ps in order.items() for p in ps]
    a = Assignment(grouped, user_data=ud)
    assert decode_assignment(encode_assignment(a, version)) == a


@given(parts=partition_lists, generation=st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)))
def test_sticky_user_data_round_trip(parts, generation):
    got, gen = decode_sticky_user_data(encode_sticky_user_data(parts, generation))
    assert gen == generation
    assert sorted(got) == sorted(TopicPartition(*tp) for tp in parts)


def test_kafka_python_reads_and_writes_the_same_bytes():
    sub = Subscription(["b", "a"], user_data=b"xy", owned_partitions=[("a", 2), ("a", 1)])
    for version in range(4):
        theirs = ConsumerProtocolSubscription.decode(encode_subscription(sub, version))
        assert list(theirs.topics) == ["a", "b"]
        assert theirs.user_data == b"xy"
        assert bytes(theirs.encode()) == encode_subscription(sub, version)
    ka = ConsumerProtocolAssignment(
        version=0, assigned_partitions=[("t", [3, 1]), ("u", [0])], user_data=b""
    )
    ours = decode_assignment(bytes(ka.encode()))
    assert ours.partitions == (("t", 3), ("t", 1), ("u", 0))
    assert encode_assignment(ours, version=0) == bytes(ka.encode())
