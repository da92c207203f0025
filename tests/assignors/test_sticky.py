"""Sticky and cooperative-sticky: Java's golden vectors S2 to S6 (made by running Kafka
trunk's assignors, reference java-golden-vectors.txt), protocol details, and bad input."""

from __future__ import annotations

import pytest
from support.assignments import lists, moving

from kgroup.assignors import (
    CooperativeStickyAssignor,
    RebalanceProtocol,
    StickyAssignor,
    Subscription,
    TopicPartition,
    assignor,
)
from kgroup.errors import InvalidArgument

C = CooperativeStickyAssignor


def test_names_and_protocols():
    assert (StickyAssignor.name, C.name) == ("sticky", "cooperative-sticky")
    assert StickyAssignor().supported_protocols == (RebalanceProtocol.EAGER,)
    assert C().supported_protocols == (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)
    assert type(assignor("cooperative-sticky")) is C
    with pytest.raises(InvalidArgument):
        assignor("uniform")


def test_golden_s2_general_path():
    subs = {
        "C0": Subscription(["t0"]),
        "C1": Subscription(["t0", "t1"]),
        "C2": Subscription(["t0", "t1", "t2"]),
    }
    for a in (StickyAssignor(), C()):
        out = a.assign({"t0": 1, "t1": 2, "t2": 3}, subs)
        assert lists(out) == {
            "C0": ["t0-0"],
            "C1": ["t1-0", "t1-1"],
            "C2": ["t2-0", "t2-1", "t2-2"],
        }
        assert a.last_constrained is False


@pytest.mark.parametrize(
    ("ids", "expected", "transferring"),
    [
        (
            ["c0", "c1", "c2"],
            {"c0": ["t-0", "t-1", "t-2"], "c1": ["t-3", "t-4"], "c2": ["t-6"]},
            {"t-5": "c2"},
        ),
        # Java iterates these ids in HashMap order [member-1, member-9, member-10], so member-9
        # (not member-10, first in sorted order) keeps the larger quota.
        (
            ["member-10", "member-9", "member-1"],
            {"member-10": ["t-0", "t-1"], "member-9": ["t-3", "t-4", "t-5"], "member-1": ["t-6"]},
            {"t-2": "member-1"},
        ),
    ],
)
def test_golden_s3_hash_order(ids, expected, transferring):
    owned = [[("t", 0), ("t", 1), ("t", 2)], [("t", 3), ("t", 4), ("t", 5)], [("t", 6)]]
    subs = {m: C.subscription(["t"], o, 1) for m, o in zip(ids, owned, strict=True)}
    a = C()
    assert lists(a.assign({"t": 7}, subs)) == expected
    assert moving(a) == transferring
    assert a.last_constrained is True


@pytest.mark.parametrize(
    ("gens", "c1", "c2"),
    [
        ((1, 2, 3), ["topic-0", "topic-2"], ["topic-1", "topic-3"]),
        ((1, 3, 2), ["topic-0"], ["topic-2", "topic-3"]),
        ((2, 1, 3), ["topic-0", "topic-2"], ["topic-1", "topic-3"]),
        ((2, 3, 1), ["topic-0"], ["topic-2", "topic-3"]),
        ((3, 1, 2), ["topic-0", "topic-2"], ["topic-1", "topic-3"]),
        ((3, 2, 1), ["topic-0", "topic-2"], ["topic-1", "topic-3"]),
    ],
)
def test_golden_s4_generation_conflicts(gens, c1, c2):
    # AbstractStickyAssignorTest.testSubscriptionNotEqualAndAssignSamePartitionWith3Generation.
    subs = {
        "consumer1": C.subscription(["topic"], [("topic", 0), ("topic", 2)], gens[0]),
        "consumer2": C.subscription(["topic"], [("topic", 1), ("topic", 2), ("topic", 3)], gens[1]),
        "consumer3": C.subscription(["topic"], [("topic", 2), ("topic", 4), ("topic", 5)], gens[2]),
        "consumer4": C.subscription(["topic1"], [("topic1", 0)], 2),
    }
    out = lists(C().assign({"topic": 6, "topic1": 1}, subs))
    assert out == {
        "consumer1": c1,
        "consumer2": c2,
        "consumer3": ["topic-4", "topic-5"],
        "consumer4": ["topic1-0"],
    }


def test_golden_s5_third_member_joins_two_rounds():
    a = C()
    subs = {
        "c0": C.subscription(["t"], [("t", 0), ("t", 2), ("t", 4)], 1),
        "c1": C.subscription(["t"], [("t", 1), ("t", 3), ("t", 5)], 1),
        "c2": C.subscription(["t"], [], -1),
    }
    first = a.assign({"t": 6}, subs)
    assert lists(first) == {"c0": ["t-0", "t-2"], "c1": ["t-1", "t-3"], "c2": []}
    assert moving(a) == {"t-4": "c2", "t-5": "c2"}
    # Round two: c0 and c1 revoked t-4 and t-5; now c2 gets them.
    subs = {m: C.subscription(["t"], first[m].partitions, 2) for m in subs}
    second = a.assign({"t": 6}, subs)
    assert lists(second) == {"c0": ["t-0", "t-2"], "c1": ["t-1", "t-3"], "c2": ["t-4", "t-5"]}
    assert a.last_transferring == {}
    assert a.max_generation == 2


def test_golden_s6_rack_aware():
    subs = {f"c{i}": C.subscription(["t"], rack_id=f"r{i}") for i in range(3)}
    racks = {("t", p): {f"r{(p + 1) % 3}"} for p in range(6)}
    out = C().assign({"t": 6}, subs, partition_racks=racks)
    assert lists(out) == {"c0": ["t-2", "t-5"], "c1": ["t-0", "t-3"], "c2": ["t-1", "t-4"]}


def test_eager_sticky_reads_previous_assignment_from_user_data():
    s = StickyAssignor
    subs = {
        "c0": s.subscription(["t"], [("t", 0), ("t", 2), ("t", 4)], 1),
        "c1": s.subscription(["t"], [("t", 1), ("t", 3), ("t", 5)], 1),
        "c2": s.subscription(["t"]),
    }
    assert subs["c2"].user_data is None
    out = lists(StickyAssignor().assign({"t": 6}, subs))
    assert out == {"c0": ["t-0", "t-2"], "c1": ["t-1", "t-3"], "c2": ["t-4", "t-5"]}
    # owned_partitions are ignored by the eager assignor, as in Java.
    subs = {m: Subscription(["t"], owned_partitions=[("t", 5)], generation_id=3) for m in "ab"}
    assert lists(StickyAssignor().assign({"t": 2}, subs)) == {"a": ["t-0"], "b": ["t-1"]}


def test_java_bugs_are_not_copied():
    # A member with an empty subscription listed first: Java calls the subscriptions "equal"
    # and gives it partitions of a topic it does not subscribe to. kgroup does not.
    subs = {"a": C.subscription([]), "b": C.subscription(["t"]), "c": C.subscription(["t"])}
    out = lists(C().assign({"t": 4}, subs))
    assert out["a"] == []
    assert sorted(out["b"] + out["c"]) == ["t-0", "t-1", "t-2", "t-3"]
    # Owned partitions that do not exist are ignored (Java keeps them and may throw).
    subs = {"a": C.subscription(["t"], [("t", 7), ("t", 0)], 1), "b": C.subscription(["t"])}
    out = lists(C().assign({"t": 2}, subs))
    assert out == {"a": ["t-0"], "b": ["t-1"]}


def test_user_data_is_java_null_and_dict_follows_input_order():
    out = C().assign({"t": 2}, {"z": C.subscription(["t"]), "a": C.subscription(["t"])})
    assert list(out) == ["z", "a"]
    assert all(a.user_data is None for a in out.values())
    assert all(isinstance(tp, TopicPartition) for a in out.values() for tp in a.partitions)
