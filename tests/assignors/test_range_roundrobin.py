"""Range and round-robin: Java's outputs (golden vectors made by running Kafka trunk's
assignors, reference java-golden-vectors.txt, and the Javadoc examples), list order included,
and equality with kafka-python's assignors on thousands of random groups."""

from __future__ import annotations

import random

import pytest
from support.assignments import lists

from bench.kafka_python_peer import cluster, members, partitions
from kgroup.assignors import RangeAssignor, RebalanceProtocol, RoundRobinAssignor, Subscription
from kgroup.errors import InvalidArgument, InvalidType


def test_names_and_protocols():
    assert (RangeAssignor.name, RoundRobinAssignor.name) == ("range", "roundrobin")
    assert RangeAssignor().supported_protocols == (RebalanceProtocol.EAGER,)
    assert RoundRobinAssignor().supported_protocols == (RebalanceProtocol.EAGER,)


def test_golden_s1_range():
    subs = {"c1": Subscription(["a", "b", "c"]), "c0": Subscription(["a", "b", "c"])}
    out = RangeAssignor().assign({"a": 3, "b": 2, "c": 1}, subs)
    assert lists(out) == {"c0": ["a-0", "a-1", "b-0", "c-0"], "c1": ["a-2", "b-1"]}
    assert list(out) == ["c1", "c0"]  # the result follows the order of `subscriptions`
    assert out["c0"].user_data is None  # Java's assignors send null user data


def test_golden_s2_range_and_roundrobin():
    subs = {
        "C0": Subscription(["t0"]),
        "C1": Subscription(["t0", "t1"]),
        "C2": Subscription(["t0", "t1", "t2"]),
    }
    expected = {"C0": ["t0-0"], "C1": ["t1-0"], "C2": ["t1-1", "t2-0", "t2-1", "t2-2"]}
    ppt = {"t0": 1, "t1": 2, "t2": 3}
    assert lists(RoundRobinAssignor().assign(ppt, subs)) == expected
    assert lists(RangeAssignor().assign(ppt, subs)) == expected


def test_javadoc_examples():
    subs = {"C0": Subscription(["t0", "t1"]), "C1": Subscription(["t0", "t1"])}
    ppt = {"t0": 3, "t1": 3}
    assert lists(RangeAssignor().assign(ppt, subs)) == {
        "C0": ["t0-0", "t0-1", "t1-0", "t1-1"],
        "C1": ["t0-2", "t1-2"],
    }
    assert lists(RoundRobinAssignor().assign(ppt, subs)) == {
        "C0": ["t0-0", "t0-2", "t1-1"],
        "C1": ["t0-1", "t1-0", "t1-2"],
    }
    # RoundRobinAssignor Javadoc on static members: I0..I2 keep their partitions whatever
    # member ids the coordinator hands out.
    ppt = {"t0": 3, "t1": 3}
    subs = {
        mid: Subscription(["t0", "t1"], group_instance_id=iid)
        for mid, iid in [("C9", "I0"), ("C5", "I1"), ("C1", "I2")]
    }
    assert lists(RoundRobinAssignor().assign(ppt, subs)) == {
        "C9": ["t0-0", "t1-0"],
        "C5": ["t0-1", "t1-1"],
        "C1": ["t0-2", "t1-2"],
    }


def test_golden_s6_rack_aware_range():
    subs = {f"c{i}": Subscription(["t"], rack_id=f"r{i}") for i in range(3)}
    racks = {("t", p): {f"r{(p + 1) % 3}"} for p in range(6)}
    out = RangeAssignor().assign({"t": 6}, subs, partition_racks=racks)
    assert lists(out) == {"c0": ["t-2", "t-5"], "c1": ["t-0", "t-3"], "c2": ["t-1", "t-4"]}
    # Without partition racks the same group gets plain ranges.
    assert lists(RangeAssignor().assign({"t": 6}, subs))["c0"] == ["t-0", "t-1"]


def test_rack_aware_range_keeps_co_partitioning():
    # Two topics with the same subscribers and partition count: partition p of both goes to
    # the same member, on the rack holding p (KAFKA-14891).
    subs = {f"c{i}": Subscription(["a", "b"], rack_id=f"r{i}") for i in range(2)}
    racks = {(t, p): {f"r{(p + 1) % 2}"} for t in "ab" for p in range(4)}
    out = lists(RangeAssignor().assign({"a": 4, "b": 4}, subs, partition_racks=racks))
    assert out == {"c0": ["a-1", "a-3", "b-1", "b-3"], "c1": ["a-0", "a-2", "b-0", "b-2"]}


def test_range_lists_follow_java_topic_hash_order():
    # Java builds each list topic by topic in the HashMap order of the topic names (16 buckets
    # here): "zz" (hash 3904, bucket 0) comes before "b" (hash 98, bucket 2), unlike sorted order.
    subs = {"m": Subscription(["b", "zz"])}
    assert lists(RangeAssignor().assign({"b": 1, "zz": 1}, subs))["m"] == ["zz-0", "b-0"]


def test_topics_without_metadata_and_members_without_topics():
    subs = {"a": Subscription(["t", "gone"]), "b": Subscription([]), "c": Subscription(["t"])}
    for assignor in (RangeAssignor(), RoundRobinAssignor()):
        out = lists(assignor.assign({"t": 2, "gone": 0, "unused": 5}, subs))
        assert out["b"] == []
        assert sorted(out["a"] + out["c"]) == ["t-0", "t-1"]
    assert RangeAssignor().assign({}, {}) == {}
    assert RoundRobinAssignor().assign({"t": 3}, {}) == {}


def test_bad_input():
    with pytest.raises(InvalidArgument):
        RangeAssignor().assign({"t": -1}, {"a": Subscription(["t"])})
    with pytest.raises(InvalidArgument):
        RangeAssignor().assign({"t": 2**25}, {"a": Subscription(["t"])})
    with pytest.raises(InvalidType):
        RangeAssignor().assign({"t": 1}, {"a": ["t"]})
    with pytest.raises(InvalidType):
        RoundRobinAssignor().assign({"t": "1"}, {"a": Subscription(["t"])})


def random_group(rng: random.Random, equal: bool = False):
    n_topics = rng.randint(1, 8)
    topics = {f"t{rng.randint(0, 30)}x{i}": rng.randint(0, 12) for i in range(n_topics)}
    names = [*topics, "missing"]
    n_members = rng.randint(1, 9)
    static = rng.random() < 0.3
    subs = {}
    common = rng.sample(names, rng.randint(1, len(names)))
    for i in range(n_members):
        picked = list(common) if equal else rng.sample(names, rng.randint(0, len(names)))
        mid = f"m{rng.randint(0, 99)}-{i}"
        # kafka-python's range groups static and dynamic members with itertools.groupby over
        # an unsorted list, which drops members when the two kinds interleave; the comparison
        # uses all-static or all-dynamic groups.
        iid = f"i{rng.randint(0, 999)}-{i}" if static else None
        subs[mid] = Subscription(picked, group_instance_id=iid)
    return topics, subs


@pytest.mark.parametrize("seed_block", range(4))
def test_equal_to_kafka_python_on_random_groups(seed_block):
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    rng = random.Random(seed_block)
    for i in range(500):
        # kafka-python's round-robin raises KeyError as soon as it must skip a member not
        # subscribed to a topic (it rebinds `member_id` to a tuple), so it is compared on equal
        # subscriptions, the one case it handles; range is compared on any subscriptions.
        topics, subs = random_group(rng, equal=i % 2 == 0)
        c = cluster({t: n for t, n in topics.items() if n > 0})
        ms = members(subs)
        if i % 2 == 0:
            ours_rr = RoundRobinAssignor().assign(topics, subs)
            theirs_rr = RoundRobinPartitionAssignor.assign(c, ms)
            for mid, a in ours_rr.items():
                # Same partitions in the same order: both walk partitions in sorted order.
                assert list(a.partitions) == partitions(theirs_rr[mid]), (topics, subs, mid)
        ours_range = RangeAssignor().assign(topics, subs)
        theirs_range = RangePartitionAssignor.assign(c, ms)
        for mid, a in ours_range.items():
            # kafka-python sorts each list by topic; Java (and kgroup) list topics in HashMap
            # order, so the comparison is on the sorted lists.
            assert sorted(a.partitions) == sorted(partitions(theirs_range[mid])), (topics, subs)
