"""Random classic group sequences on both brokers, drawn by hypothesis: up to three members
joining, syncing (the leader assigning to the members its join named), heartbeating,
committing and leaving in any order, each step's answers compared once both brokers have
settled (a parked JoinGroup or SyncGroup stays parked on both). Few examples, derandomized:
a fixed set of sequences that CI runs the same every time."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.differential import Answer, Differential, Members, Peer, create_topic

from kgroup.broker import Broker
from kgroup.protocol import ApiKey

pytestmark = [pytest.mark.network, pytest.mark.usefixtures("coordinators")]

MEMBERS = ("m1", "m2", "m3")
#: Sessions and rebalances longer than any sequence: no answer depends on a timer.
TIMEOUT_MS = 30_000

step = st.one_of(
    st.tuples(st.just("join"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("sync"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("heartbeat"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("commit"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("leave"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("describe"), st.none()),
)


def keep(g: Members, conn: str, answer: Answer | None) -> None:
    """What a member learns from its answer: its id and generation, and, as the leader, the
    members to assign to."""
    if answer is None or answer.kgroup is None or answer.kgroup.api_key != ApiKey.JOIN_GROUP:
        return
    g.joined(conn, answer)
    for p, r in zip(g.d.peers, (answer.kgroup, answer.kafka), strict=True):
        assert r is not None
        p.vars[f"{conn}.members"] = [m.member_id for m in r.body.members]


def describe(g: Members) -> None:
    """DescribeGroups, where a group that nothing was written for yet (a JoinGroup answered
    MEMBER_ID_REQUIRED, a commit refused) is Empty on kgroup and Dead on Kafka
    (docs/kafka-differences.md)."""
    answer = g.d.request(
        ApiKey.DESCRIBE_GROUPS,
        5,
        {"groups": [g.group], "include_authorized_operations": True},
        conn="admin",
        ignore=["group_state"],
    )
    states = [r.body.groups[0].group_state for r in (answer.kgroup, answer.kafka) if r]
    members = answer.body.groups[0].members
    assert states[0] == states[1] or (states == ["Empty", "Dead"] and not members), states


def leader_sync(g: Members, m: str) -> None:
    def body(p: Peer) -> dict[str, Any]:
        return {
            "group_id": g.group,
            "generation_id": p.get(f"{m}.gen", -1),
            "member_id": p.get(f"{m}.id", ""),
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocol_name": "range",
            # Each member's assignment names it as the normaliser does: the same bytes on
            # both brokers for the same member.
            "assignments": [
                {"member_id": mid, "assignment": p.norm.id("member", mid).encode()}
                for mid in p.get(f"{m}.members", [])
            ],
        }

    g.d.send(ApiKey.SYNC_GROUP, 5, body, conn=m)


@settings(
    max_examples=6,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(step, min_size=3, max_size=9))
def test_random_group_sequences(
    kgroup_broker: Broker, kafka_bootstrap: str, steps: list[tuple[str, str | None]]
) -> None:
    with Differential(kgroup_broker.bootstrap_servers, kafka_bootstrap) as d:
        g = Members(d, session_ms=TIMEOUT_MS, rebalance_ms=TIMEOUT_MS)
        topic = create_topic(d)
        for action, m in steps:
            busy = m is not None and any(m in p.pending for p in d.peers)
            if action == "describe":
                describe(g)
            elif action == "leave":
                assert m is not None
                g.leave(m)
            elif busy:
                continue  # a member waits for its JoinGroup or SyncGroup
            elif action == "join":
                assert m is not None
                g.join(m)
            elif action == "sync":
                assert m is not None
                leader_sync(g, m)
            elif action == "heartbeat":
                assert m is not None
                g.heartbeat(m)
            elif action == "commit":
                assert m is not None
                g.commit(m, {(topic, 0): len(d.steps)})
            for conn, answer in d.settle().items():
                keep(g, conn, answer)
        describe(g)
