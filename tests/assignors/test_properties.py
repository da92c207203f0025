"""Invariants of the four assignors on random groups (hypothesis), with and without a previous
assignment, with members joining and leaving, and with conflicting claims."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kgroup.assignors import (
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
)

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
IDS = ["c0", "c1", "c2", "c9", "c10", "member-1", "member-9", "member-10", "Aa", "BB", "z"]


@st.composite
def groups(draw, equal=None):
    """(partitions_per_topic, {member: topics}) with members subscribed to at least one topic."""
    names = draw(
        st.lists(
            st.sampled_from(["a", "b", "t0", "t1", "zz", "x.y"]),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    topics = {t: draw(st.integers(0, 12)) for t in names}
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=8, unique=True))
    if equal is None:
        equal = draw(st.booleans())
    if equal:
        common = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        members = {m: list(common) for m in ids}
    else:
        members = {m: draw(st.lists(st.sampled_from(names), min_size=1, unique=True)) for m in ids}
    return topics, members


def check_valid(topics, members, plan):
    """Every partition of a subscribed topic assigned exactly once, and only to a subscriber."""
    seen = Counter(tp for ps in plan.values() for tp in ps)
    assert all(n == 1 for n in seen.values()), seen
    for m, ps in plan.items():
        for t, _ in ps:
            assert t in members[m]
    subscribed = {t for ts in members.values() for t in ts}
    expected = {(t, p) for t in subscribed for p in range(topics.get(t, 0))}
    assert set(seen) == expected


def sub(kind, topics, owned=None, generation=-1):
    if kind is StickyAssignor:
        return StickyAssignor.subscription(topics, owned, generation)
    return CooperativeStickyAssignor.subscription(topics, owned, generation)


def plan_of(a, out):
    """The full plan: what each member got, plus what a cooperative round withheld."""
    plan = {m: [tuple(tp) for tp in x.partitions] for m, x in out.items()}
    for tp, m in getattr(a, "last_transferring", {}).items():
        if isinstance(a, CooperativeStickyAssignor):
            plan[m].append(tuple(tp))
    return plan


@SETTINGS
@given(
    g=groups(),
    kind=st.sampled_from(
        [RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor]
    ),
)
def test_fresh_assignment_is_valid(g, kind):
    topics, members = g
    a = kind()
    out = a.assign(topics, {m: Subscription(ts) for m, ts in members.items()})
    check_valid(topics, members, plan_of(a, out))


@SETTINGS
@given(
    g=groups(equal=True),
    kind=st.sampled_from([RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor]),
)
def test_equal_subscriptions_are_balanced(g, kind):
    topics, members = g
    a = kind()
    out = a.assign(topics, {m: Subscription(ts) for m, ts in members.items()})
    sizes = [len(ps) for ps in plan_of(a, out).values()]
    assert max(sizes) - min(sizes) <= 1


@st.composite
def rebalances(draw, equal=None):
    """A group, its first assignment's members, then who leaves and who joins."""
    topics, members = draw(groups(equal=equal))
    leaving = draw(
        st.lists(st.sampled_from(sorted(members)), unique=True, max_size=len(members) - 1)
    )
    joining = draw(
        st.lists(st.sampled_from([i for i in IDS if i not in members]), unique=True, max_size=3)
    )
    return topics, members, leaving, joining


def two_rounds(kind, topics, members, leaving, joining):
    a = kind()
    first = a.assign(topics, {m: sub(kind, ts, None, -1) for m, ts in members.items()})
    owned = {m: [tuple(tp) for tp in x.partitions] for m, x in first.items()}
    after = {m: ts for m, ts in members.items() if m not in leaving}
    some = next(iter(members.values()))
    for j in joining:
        after[j] = list(some)
    subs = {m: sub(kind, ts, owned.get(m, []), 1 if m in owned else -1) for m, ts in after.items()}
    out = a.assign(topics, subs)
    return a, after, owned, out


@SETTINGS
@given(r=rebalances(), kind=st.sampled_from([StickyAssignor, CooperativeStickyAssignor]))
def test_rebalance_after_members_join_and_leave_is_valid(r, kind):
    topics, members, leaving, joining = r
    a, after, owned, out = two_rounds(kind, topics, members, leaving, joining)
    check_valid(topics, after, plan_of(a, out))
    if isinstance(a, CooperativeStickyAssignor):
        # KIP-429: nothing is assigned this round that another member still owns.
        for m, x in out.items():
            new = {tuple(tp) for tp in x.partitions} - set(owned.get(m, []))
            for other, theirs in owned.items():
                if other != m and other in after:
                    assert not new & set(theirs), (m, other)


@SETTINGS
@given(r=rebalances(equal=True), kind=st.sampled_from([StickyAssignor, CooperativeStickyAssignor]))
def test_survivors_keep_what_balance_allows(r, kind):
    topics, members, leaving, joining = r
    a, after, owned, out = two_rounds(kind, topics, members, leaving, joining)
    plan = plan_of(a, out)
    sizes = [len(ps) for ps in plan.values()]
    assert max(sizes) - min(sizes) <= 1
    total = sum(sizes)
    min_quota = total // len(after)
    for m in after:
        if m in owned:
            kept = set(plan[m]) & set(owned[m])
            assert len(kept) >= min(len(owned[m]), min_quota)


@SETTINGS
@given(r=rebalances(), kind=st.sampled_from([StickyAssignor, CooperativeStickyAssignor]))
def test_nothing_moves_when_nothing_changed(r, kind):
    topics, members, _, _ = r
    a, _after, owned, out = two_rounds(kind, topics, members, [], [])
    # Same partitions (the constrained path lists kept partitions by partition number first).
    assert {m: sorted(tuple(tp) for tp in x.partitions) for m, x in out.items()} == {
        m: sorted(ps) for m, ps in owned.items()
    }
    assert a.last_transferring == {}


@SETTINGS
@given(r=rebalances(equal=True))
def test_cooperative_converges_in_two_rounds(r):
    topics, members, leaving, joining = r
    a, after, _owned, out = two_rounds(CooperativeStickyAssignor, topics, members, leaving, joining)
    # Members revoke what they lost and rejoin; the follow-up round moves nothing more.
    subs = {m: sub(CooperativeStickyAssignor, ts, out[m].partitions, 2) for m, ts in after.items()}
    final = a.assign(topics, subs)
    assert a.last_transferring == {}
    check_valid(topics, after, {m: [tuple(tp) for tp in x.partitions] for m, x in final.items()})


@SETTINGS
@given(g=groups(equal=True), data=st.data())
def test_conflicting_claims_resolve_by_generation(g, data):
    topics, members = g
    a = CooperativeStickyAssignor()
    first = a.assign(topics, {m: Subscription(ts) for m, ts in members.items()})
    owned = {m: [tuple(tp) for tp in x.partitions] for m, x in first.items()}
    holders = [m for m, ps in owned.items() if ps]
    assume(holders and len(members) >= 2)
    x = data.draw(st.sampled_from(holders))
    y = data.draw(st.sampled_from([m for m in members if m != x]))
    p = data.draw(st.sampled_from(owned[x]))
    gx, gy = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    claims = dict(owned)
    claims[y] = [*owned[y], p]
    gens = {m: gx if m == x else gy if m == y else max(gx, gy) for m in members}
    subs = {m: sub(CooperativeStickyAssignor, members[m], claims[m], gens[m]) for m in members}
    out = {m: {tuple(tp) for tp in v.partitions} for m, v in a.assign(topics, subs).items()}
    if gx > gy:
        assert p in out[x]  # the newer generation's claim stands
    elif gx == gy:
        assert all(p not in ps for ps in out.values())  # both claims void: withheld this round
    else:
        assert p not in out[x]  # the older claim lost
