"""KIP-415's scheduled rebalance delay as an option of the cooperative assignor: the three-round
example (C1, C2, C3 over P0 to P3) where C2 disappears, and either comes back within the delay
(nothing moves) or does not (its partition is spread once the delay has run out)."""

from __future__ import annotations

import pytest

from kgroup.assignors import CooperativeStickyAssignor, remaining_delay_ms
from kgroup.errors import InvalidArgument

C = CooperativeStickyAssignor


def parts(out):
    return {m: [tp.partition for tp in a.partitions] for m, a in out.items()}


def subs(owned: dict[str, list[int]], generation: int):
    return {
        m: C.subscription(["t"], [("t", p) for p in ps], generation if ps else -1)
        for m, ps in owned.items()
    }


def test_member_comes_back_within_the_delay():
    a = C(scheduled_rebalance_max_delay_ms=5000)
    r1 = a.assign({"t": 4}, subs({"C1": [], "C2": [], "C3": []}, -1), now_ms=0)
    assert parts(r1) == {"C1": [0, 3], "C2": [1], "C3": [2]}
    assert remaining_delay_ms(r1["C1"]) is None
    # Round 2: C2 is gone. P1 stays unassigned; nothing else moves; the delay is announced.
    r2 = a.assign({"t": 4}, subs({"C1": [0, 3], "C3": [2]}, 1), now_ms=1000)
    assert parts(r2) == {"C1": [0, 3], "C3": [2]}
    assert [remaining_delay_ms(x) for x in r2.values()] == [5000, 5000]
    assert {m: ([tp.partition for tp in ps], d) for m, (ps, d) in a.held_back.items()} == {
        "C2": ([1], 6000)
    }
    # Round 3: C2 is back in time and gets P1 again, nothing moved.
    r3 = a.assign({"t": 4}, subs({"C1": [0, 3], "C2": [], "C3": [2]}, 2), now_ms=4000)
    assert parts(r3) == {"C1": [0, 3], "C2": [1], "C3": [2]}
    assert a.last_transferring == {}
    assert a.held_back == {}
    assert all(remaining_delay_ms(x) is None for x in r3.values())


def test_partitions_are_spread_after_the_delay():
    a = C(scheduled_rebalance_max_delay_ms=5000)
    a.assign({"t": 4}, subs({"C1": [], "C2": [], "C3": []}, -1), now_ms=0)
    r2 = a.assign({"t": 4}, subs({"C1": [0, 3], "C3": [2]}, 1), now_ms=1000)
    assert remaining_delay_ms(r2["C3"]) == 5000
    # Round 3, after the delay: P1 goes to the least loaded member, nothing else moves.
    r3 = a.assign({"t": 4}, subs({"C1": [0, 3], "C3": [2]}, 2), now_ms=6000)
    assert parts(r3) == {"C1": [0, 3], "C3": [2, 1]}
    assert remaining_delay_ms(r3["C1"]) is None


def test_without_the_option_partitions_move_at_once():
    a = C()
    assert a.scheduled_rebalance_max_delay_ms == 0
    a.assign({"t": 4}, subs({"C1": [], "C2": [], "C3": []}, -1))
    r2 = a.assign({"t": 4}, subs({"C1": [0, 3], "C3": [2]}, 1))
    assert parts(r2) == {"C1": [0, 3], "C3": [2, 1]}
    with pytest.raises(InvalidArgument):
        C(scheduled_rebalance_max_delay_ms=-1)
