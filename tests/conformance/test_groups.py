"""Classic consumer groups on both brokers, on the wire: a member's life (KIP-394's member id
first), a rebalance with two members, static members and fencing, and each error path a client
meets (unknown member, illegal generation, rebalance in progress, inconsistent protocols,
invalid session timeout, fenced instance id, an expired session), with the admin apis around
them (DescribeGroups, ListGroups, OffsetCommit/Fetch/Delete, DeleteGroups, FindCoordinator)."""

from __future__ import annotations

import time

import pytest
from support.differential import Differential, Members, Peer, create_topic, new_name

from kgroup.protocol import ApiKey

pytestmark = [pytest.mark.network, pytest.mark.usefixtures("coordinators")]


def list_groups(d: Differential, group: str, states: list[str]) -> None:
    answer = d.request(
        ApiKey.LIST_GROUPS,
        5,
        {"states_filter": states, "types_filter": []},
        conn="admin",
        ignore=["groups"],
    )
    # Other tests' groups share both brokers: compare this group's line only.
    lines = [
        [g.to_dict() for g in r.body.groups if g.group_id == group]
        for r in (answer.kgroup, answer.kafka)
        if r is not None
    ]
    assert lines[0] == lines[1], lines


def test_one_member_from_join_to_delete(diff: Differential) -> None:
    topic = create_topic(diff, 2)
    g = Members(diff)
    g.describe()  # not there yet
    answer = g.new_member("m1")
    assert answer.body.error_code == 79  # MEMBER_ID_REQUIRED
    g.join("m1")
    assert g.joined("m1").body.generation_id == 1
    g.describe()
    g.sync("m1", ["m1"])
    diff.receive("m1")
    g.describe()
    list_groups(diff, g.group, [])
    list_groups(diff, g.group, ["Stable"])
    list_groups(diff, g.group, ["Empty"])
    g.heartbeat("m1")
    g.heartbeat("m1", gen=7)  # ILLEGAL_GENERATION
    g.commit("m1", {(topic, 0): 5, (topic, 1): 7})
    g.commit("m1", {(topic, 0): 6}, gen=0)
    g.commit("m1", {(topic, 9): 1})
    g.fetch_offsets()
    g.fetch_offsets({topic: [0, 1, 2], "nope": [0]})
    # Deleting a group with a member; deleting offsets of a subscribed topic.
    diff.request(ApiKey.DELETE_GROUPS, 2, {"groups_names": [g.group]}, conn="admin")
    offset_delete(diff, g.group, topic, [0, 5])
    g.leave("m1")
    g.heartbeat("m1")  # UNKNOWN_MEMBER_ID
    g.describe()
    list_groups(diff, g.group, ["Empty"])
    offset_delete(diff, g.group, topic, [0])
    g.fetch_offsets()
    diff.request(
        ApiKey.DELETE_GROUPS, 2, {"groups_names": [g.group, new_name("none")]}, conn="admin"
    )
    g.describe()
    g.fetch_offsets()


def offset_delete(d: Differential, group: str, topic: str, partitions: list[int]) -> None:
    d.request(
        ApiKey.OFFSET_DELETE,
        0,
        {
            "group_id": group,
            "topics": [{"name": topic, "partitions": [{"partition_index": i} for i in partitions]}],
        },
        conn="admin",
    )


def test_two_members_rebalance(diff: Differential) -> None:
    topic = create_topic(diff)
    g = Members(diff)
    g.new_member("m1")
    g.join("m1")
    g.joined("m1")
    g.sync("m1", ["m1"])
    diff.receive("m1")
    g.commit("m1", {(topic, 0): 1})
    # m2 arrives: its join waits for m1 to rejoin.
    g.new_member("m2")
    g.join("m2")
    diff.parked("m2")
    g.describe()
    g.heartbeat("m1")  # REBALANCE_IN_PROGRESS
    g.commit("m1", {(topic, 0): 2})  # allowed while preparing, with the current generation
    g.sync("m1", ["m1"])  # an old generation's sync during the rebalance
    diff.receive("m1")
    g.join("m1")
    answers = diff.settle()
    g.joined("m1", answers["m1"])
    g.joined("m2", answers["m2"])
    g.describe()
    g.heartbeat("m1")  # fine while completing the rebalance
    g.commit("m2", {(topic, 0): 3})  # REBALANCE_IN_PROGRESS while completing
    # The follower's sync waits for the leader's.
    g.sync("m2")
    diff.parked("m2")
    g.sync("m1", ["m1", "m2"])
    answers = diff.settle()
    assert set(answers) == {"m1", "m2"}
    g.describe()
    # m2 leaves: m1 learns on its heartbeat, rejoins alone.
    g.leave("m2")
    g.heartbeat("m1")
    g.join("m1")
    g.joined("m1")
    g.sync("m1", ["m1"], protocol_name="roundrobin")  # not the group's protocol
    diff.receive("m1")
    g.sync("m1", ["m1"])
    diff.receive("m1")
    g.describe()


def test_join_errors(diff: Differential) -> None:
    g = Members(diff)
    g.new_member("m1")
    g.join("m1")
    g.joined("m1")
    g.sync("m1", ["m1"])
    diff.receive("m1")
    # Nothing in common with the group's protocols, or another protocol type.
    g.new_member("m2", protocols=["sticky"])
    g.join("m2", protocols=["sticky"])
    diff.receive("m2")
    g.new_member("m3", protocol_type="connect")
    # A session outside group.{min,max}.session.timeout.ms.
    g.new_member("m4", session_ms=1000)
    g.new_member("m5", session_ms=3_600_000)
    # An unknown member id, an empty group id, no protocols at all.
    g.join("m6", member_id="made-up")
    diff.receive("m6")
    Members(diff, group="").new_member("m7")
    g.new_member("m8", protocols=[])
    # SyncGroup and Heartbeat from nobody, and to a group that does not exist.
    g.heartbeat("m9", gen=1)
    g.sync("m9", gen=1)
    diff.receive("m9")
    other = Members(diff)
    other.heartbeat("m1", gen=1)
    other.sync("m1", gen=1)
    diff.receive("m1")
    other.leave("m1")
    g.describe()


def test_static_members_and_fencing(diff: Differential) -> None:
    g = Members(diff)
    # A static member gets its id at once, without MEMBER_ID_REQUIRED.
    g.new_member("s1", instance="i1")
    g.sync("s1", ["s1"])
    diff.receive("s1")
    g.describe()
    # The same instance joins again with a new id: the old one is fenced.
    g.new_member("s1b", instance="i1")
    g.heartbeat("s1")  # FENCED_INSTANCE_ID
    g.commit("s1", {("t", 0): 1})
    g.sync("s1b", ["s1b"])
    diff.receive("s1b")
    g.heartbeat("s1b")
    g.describe()
    # Leaving by instance id, then an unknown instance.
    g.leave("s1b")
    g.leave("s1")
    g.describe()


def test_find_coordinator(diff: Differential) -> None:
    for key_type, keys in ((0, ["g1", "", "grüppe"]), (7, ["x"])):
        diff.request(ApiKey.FIND_COORDINATOR, 6, {"key_type": key_type, "coordinator_keys": keys})
    diff.request(ApiKey.FIND_COORDINATOR, 3, {"key": "g1", "key_type": 0})
    # Transactions: Kafka answers COORDINATOR_NOT_AVAILABLE while its first FindCoordinator
    # creates __transaction_state; kgroup creates it in the request (docs/kafka-differences.md).
    diff.eventually(ApiKey.FIND_COORDINATOR, 6, {"key_type": 1, "coordinator_keys": ["tx"]})


def test_list_groups_by_type(diff: Differential) -> None:
    g = Members(diff)
    g.new_member("m1")
    g.join("m1")
    g.joined("m1")
    for types in (["classic"], ["consumer"], ["Classic"], ["share"], ["nope"]):
        answer = diff.request(
            ApiKey.LIST_GROUPS,
            5,
            {"states_filter": [], "types_filter": types},
            conn="admin",
            ignore=["groups"],
        )
        lines = [
            [x.to_dict() for x in r.body.groups if x.group_id == g.group]
            for r in (answer.kgroup, answer.kafka)
            if r is not None
        ]
        assert lines[0] == lines[1], (types, lines)


@pytest.mark.parametrize("version", [0, 3, 4])
def test_join_group_older_versions(diff: Differential, version: int) -> None:
    """Before v4 a new member gets its id at once (no MEMBER_ID_REQUIRED); v0 has no
    rebalance timeout."""
    g = Members(diff)
    body = g.join_body("m1")

    def old(p: Peer) -> dict:
        b = dict(body(p))
        b.pop("reason")
        b.pop("group_instance_id")
        if version == 0:
            b.pop("rebalance_timeout_ms")
        return b

    answer = diff.request(ApiKey.JOIN_GROUP, version, old, conn="m1")
    g.keep_join("m1", answer)
    if version >= 4:
        assert answer.body.error_code == 79  # MEMBER_ID_REQUIRED
        answer = diff.request(ApiKey.JOIN_GROUP, version, old, conn="m1")
        g.keep_join("m1", answer)
    assert answer.body.generation_id == 1
    g.heartbeat("m1")


def test_session_expiry(diff: Differential) -> None:
    """A member silent for longer than its session (6 s, Kafka's group.min.session.timeout.ms)
    is removed on both: its heartbeat and commit are then UNKNOWN_MEMBER_ID, the group Empty."""
    topic = create_topic(diff)
    g = Members(diff)
    g.new_member("m1")
    g.join("m1")
    g.joined("m1")
    g.sync("m1", ["m1"])
    diff.receive("m1")
    time.sleep(g.session_ms / 1000 + 1.5)
    g.describe()
    g.heartbeat("m1")
    g.commit("m1", {(topic, 0): 1})
    list_groups(diff, g.group, ["Empty"])
