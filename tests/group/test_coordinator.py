"""The group coordinator through its binding, as a broker hosts it: real request frames in
(encoded with kgroup.protocol.encode_request, decoded with decode_request), response frames out
(decoded with decode_response), appends carried out and reported, time passed in."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgroup import errors, protocol
from kgroup.assignors import Subscription
from kgroup.assignors.consumer_protocol import encode_subscription
from kgroup.group import (
    CONFIG_KEYS,
    GROUP_API_KEYS,
    Append,
    Coordinator,
    Respond,
    partition_for,
)
from kgroup.protocol.records import decode_batches

JOIN, SYNC, HEARTBEAT, LEAVE = 11, 14, 12, 13
COMMIT, FETCH, DELETE_OFFSETS, DESCRIBE, LIST, DELETE = 8, 9, 47, 15, 16, 42

SUBSCRIPTION = encode_subscription(Subscription(["orders"], user_data=None), version=0)


@dataclass
class Host:
    """A broker's side of the coordinator: frames in, frames out, a log per partition."""

    coordinator: Coordinator
    now: int = 0
    correlation: int = 0
    hold_appends: bool = False
    answers: dict[Any, protocol.Response] = field(default_factory=dict)
    versions: dict[Any, tuple[int, int]] = field(default_factory=dict)
    appends: list[Append] = field(default_factory=list)
    logs: dict[int, bytearray] = field(default_factory=dict)
    #: settle ticks after each request while a timer is due, as the broker's host does (it
    #: arms its event loop's timer at the coordinator's next deadline).
    settle: bool = True

    def send(self, api_key: int, version: int, body: dict[str, Any], client: str = "c") -> int:
        """Encodes a request frame, decodes it as a broker would and hands it in."""
        self.correlation += 1
        token = self.correlation
        frame = protocol.encode_request(api_key, version, token, client, body)
        request = protocol.decode_request(frame[4:])
        self.versions[token] = (api_key, version)
        self.apply(self.coordinator.handle(self.now, token, request, client_host="/127.0.0.1"))
        while self.settle:
            due = self.coordinator.next_deadline
            if due is None or due > self.now:
                break
            self.advance(0)
        return token

    def apply(self, effects: list[Respond | Append]) -> None:
        for e in effects:
            match e:
                case Respond(token, frame):
                    assert token not in self.answers, f"token {token} answered twice"
                    api_key, version = self.versions[token]
                    assert protocol.frame_size(frame[:4]) == len(frame) - 4
                    response = protocol.decode_response(api_key, version, frame[4:])
                    assert response.correlation_id == token
                    self.answers[token] = response
                case Append():
                    self.appends.append(e)
        if not self.hold_appends:
            self.finish_appends()

    def finish_appends(self, error_code: int = 0) -> None:
        while self.appends:
            a = self.appends.pop(0)
            if error_code == 0:
                self.logs.setdefault(a.partition, bytearray()).extend(a.records)
            self.apply(self.coordinator.appended(self.now, a.token, error_code))

    def advance(self, ms: int) -> None:
        self.now += ms
        self.apply(self.coordinator.tick(self.now))

    def body(self, token: int) -> Any:
        return self.answers[token].body

    def join(self, version: int, member_id: str = "", **kw: Any) -> int:
        body = {
            "group_id": kw.get("group_id", "g"),
            "session_timeout_ms": kw.get("session", 10_000),
            "rebalance_timeout_ms": kw.get("rebalance", 30_000),
            "member_id": member_id,
            "group_instance_id": kw.get("instance"),
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": SUBSCRIPTION}],
        }
        if version < 5:
            del body["group_instance_id"]
        if version < 1:
            del body["rebalance_timeout_ms"]
        return self.send(JOIN, version, body)

    def sync(
        self, version: int, generation: int, member_id: str, assignments: dict[str, bytes]
    ) -> int:
        body: dict[str, Any] = {
            "group_id": "g",
            "generation_id": generation,
            "member_id": member_id,
            "assignments": [{"member_id": m, "assignment": a} for m, a in assignments.items()],
        }
        if version >= 5:
            body["protocol_type"] = "consumer"
            body["protocol_name"] = "range"
        return self.send(SYNC, version, body)

    def heartbeat(self, version: int, generation: int, member_id: str) -> int:
        t = self.send(
            HEARTBEAT,
            version,
            {"group_id": "g", "generation_id": generation, "member_id": member_id},
        )
        return int(self.body(t)["error_code"])


def host(**config: Any) -> Host:
    return Host(Coordinator({"group.initial.rebalance.delay.ms": 0, **config}, seed=7))


def test_config_is_kafkas_names_and_checked() -> None:
    assert "group.initial.rebalance.delay.ms" in CONFIG_KEYS
    Coordinator({"offsets.retention.minutes": "10", "group.max.size": 3})
    with pytest.raises(errors.InvalidArgument):
        Coordinator({"group.max.sizes": 3})
    with pytest.raises(errors.InvalidArgument):
        Coordinator({"group.max.size": 0})
    with pytest.raises(errors.InvalidArgument):
        Coordinator({"group.min.session.timeout.ms": 10, "group.max.session.timeout.ms": 5})
    with pytest.raises(errors.InvalidArgument):
        Coordinator({"group.max.size": "many"})


def test_partition_for_vectors() -> None:
    # Kafka's Utils.abs(groupId.hashCode) % 50 (reference section 2).
    for group, partition in [
        ("my-group", 12),
        ("test-group", 12),
        ("g1", 42),
        ("console-consumer-12345", 6),
        ("", 0),
        ("groupé", 6),
    ]:
        assert partition_for(group) == partition
        assert Coordinator().partition_for(group) == partition
    assert partition_for("g1", 7) == 3242 % 7


@pytest.mark.parametrize("join_version", range(10))
def test_a_member_joins_syncs_and_heartbeats_at_every_join_version(join_version: int) -> None:
    h = host()
    t = h.join(join_version)
    if join_version >= 4:
        # KIP-394: a new member gets its id first.
        r = h.body(t)
        assert r["error_code"] == errors.MemberIdRequired.code
        t = h.join(join_version, r["member_id"])
    # group.initial.rebalance.delay.ms=0: the join completes at the next tick.
    r = h.body(t)
    assert r["error_code"] == 0
    assert r["generation_id"] == 1
    assert r["leader"] == r["member_id"]
    assert r["member_id"].startswith("c-")
    assert [m["member_id"] for m in r["members"]] == [r["member_id"]]
    assert r["members"][0]["metadata"] == SUBSCRIPTION
    if join_version >= 7:
        assert r["protocol_type"] == "consumer"
    member = r["member_id"]
    s = h.sync(5, 1, member, {member: b"assignment"})
    assert h.body(s)["error_code"] == 0
    assert h.body(s)["assignment"] == b"assignment"
    assert h.coordinator.group_state("g") == "Stable"
    for version in range(5):
        assert h.heartbeat(version, 1, member) == 0
    assert h.heartbeat(4, 2, member) == errors.IllegalGeneration.code


def test_parked_joins_are_answered_when_the_group_completes() -> None:
    h = host(**{"group.initial.rebalance.delay.ms": 100})
    a, b = h.join(3), h.join(3)
    assert a not in h.answers and b not in h.answers
    assert h.coordinator.waiting == 2
    assert h.coordinator.next_deadline == 100
    h.advance(100)
    h.advance(100)  # the second member re-armed the initial delay once
    ra, rb = h.body(a), h.body(b)
    assert ra["leader"] == ra["member_id"] == rb["leader"]
    assert len(ra["members"]) == 2 and list(rb["members"]) == []
    assert h.coordinator.waiting == 0


def test_sessions_expire_on_ticks() -> None:
    h = host()
    t = h.join(3, session=6_000)
    h.advance(0)
    member = h.body(t)["member_id"]
    h.sync(3, 1, member, {})
    h.advance(5_999)
    assert h.heartbeat(1, 1, member) == 0
    deadline = h.coordinator.next_deadline
    assert deadline == h.now + 6_000
    h.advance(6_000)
    assert h.heartbeat(1, 1, member) == errors.UnknownMemberId.code
    assert h.coordinator.group_state("g") == "Empty"


def test_expire_member_answers_parked_requests_and_inspect_shows_the_group() -> None:
    # Kafka's onExpireHeartbeat through the binding: ending the follower's session completes
    # the rebalance the leader's parked JoinGroup waits on; inspect_group reads the group.
    h = host(**{"group.initial.rebalance.delay.ms": 100})
    a, b = h.join(3), h.join(3)
    h.advance(100)
    h.advance(100)
    leader, follower = h.body(a)["member_id"], h.body(b)["member_id"]
    assert h.body(a)["leader"] == leader
    generation = h.body(a)["generation_id"]
    h.sync(3, generation, leader, {leader: b"", follower: b""})
    h.sync(3, generation, follower, {})
    view = h.coordinator.inspect_group("g")
    assert view is not None
    assert (view["type"], view["state"], view["generation"]) == ("classic", "Stable", generation)
    assert [m["member_id"] for m in view["members"]] == [leader, follower]
    assert view["members"][0]["subscription"] == ["orders"]
    assert h.coordinator.group_ids() == ["g"]
    t = h.join(3, leader)
    assert t not in h.answers
    h.apply(h.coordinator.expire_member(h.now, "g", follower))
    assert h.body(t)["error_code"] == 0
    assert h.body(t)["generation_id"] == generation + 1
    assert [m["member_id"] for m in h.coordinator.inspect_group("g")["members"]] == [leader]
    with pytest.raises(errors.UnknownMemberId):
        h.coordinator.expire_member(h.now, "g", follower)
    with pytest.raises(errors.GroupIdNotFound):
        h.coordinator.expire_member(h.now, "other")
    assert h.coordinator.inspect_group("other") is None
    assert h.coordinator.committed_offsets("other") is None


def commit(h: Host, version: int, offsets: dict[tuple[str, int], int], **kw: Any) -> int:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, p), o in offsets.items():
        topics.setdefault(topic, []).append(
            {"partition_index": p, "committed_offset": o, "committed_metadata": kw.get("meta")}
        )
    body: dict[str, Any] = {
        "group_id": kw.get("group_id", "g"),
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
    }
    if version >= 1:
        body["generation_id_or_member_epoch"] = kw.get("generation", -1)
        body["member_id"] = kw.get("member_id", "")
    return h.send(COMMIT, version, body)


def fetch(h: Host, version: int, topics: list[tuple[str, list[int]]] | None, stable: bool) -> Any:
    entries = None if topics is None else [{"name": t, "partition_indexes": ps} for t, ps in topics]
    if version >= 8:
        body: dict[str, Any] = {"groups": [{"group_id": "g", "topics": entries}]}
    else:
        body = {"group_id": "g", "topics": entries}
    if version >= 7:
        body["require_stable"] = stable
    return h.body(h.send(FETCH, version, body))


def fetched(body: Any, version: int) -> dict[tuple[str, int], tuple[int, int]]:
    topics = body["groups"][0]["topics"] if version >= 8 else body["topics"]
    return {
        (t["name"], p["partition_index"]): (p["committed_offset"], p["error_code"])
        for t in topics
        for p in t["partitions"]
    }


@pytest.mark.parametrize("version", range(10))
def test_commit_and_fetch_at_every_version(version: int) -> None:
    h = host()
    t = commit(h, version, {("orders", 0): 5, ("orders", 1): 6})
    errs = [p["error_code"] for topic in h.body(t)["topics"] for p in topic["partitions"]]
    assert errs == [0, 0]
    fetch_version = max(version, 1)
    got = fetched(fetch(h, fetch_version, [("orders", [0, 1, 2])], False), fetch_version)
    assert got == {("orders", 0): (5, 0), ("orders", 1): (6, 0), ("orders", 2): (-1, 0)}
    if version >= 2:
        every = fetched(fetch(h, version, None, False), version)
        assert set(every) == {("orders", 0), ("orders", 1)}


def test_set_topic_metadata_checks_commits_and_topic_ids() -> None:
    h = host()
    h.coordinator.set_topic_metadata([("orders", uuid.uuid4().bytes, 1)])
    t = commit(h, 8, {("orders", 0): 5, ("orders", 1): 6, ("other", 0): 1})
    errs = {
        (topic["name"], p["partition_index"]): p["error_code"]
        for topic in h.body(t)["topics"]
        for p in topic["partitions"]
    }
    unknown = errors.UnknownTopicOrPartition.code
    assert errs == {("orders", 0): 0, ("orders", 1): unknown, ("other", 0): unknown}
    with pytest.raises(ValueError, match="16 bytes"):
        h.coordinator.set_topic_metadata([("orders", b"short", 1)])


def test_commits_wait_for_their_append() -> None:
    h = host()
    h.hold_appends = True
    t = commit(h, 8, {("orders", 0): 5})
    assert t not in h.answers
    [append] = h.appends
    assert append.partition == h.coordinator.partition_for("g")
    [batch] = decode_batches(append.records)
    assert batch.records[0].key[:2] == b"\x00\x01"  # OffsetCommitKey v1
    assert batch.records[0].value[:2] == b"\x00\x03"  # OffsetCommitValue v3
    got = fetched(fetch(h, 7, [("orders", [0])], True), 7)
    assert got == {("orders", 0): (-1, errors.UnstableOffsetCommit.code)}
    h.finish_appends()
    assert h.body(t)["topics"][0]["partitions"][0]["error_code"] == 0
    assert fetched(fetch(h, 9, [("orders", [0])], True), 9) == {("orders", 0): (5, 0)}
    # A failed append fails the commit, mapped as Kafka maps it.
    t = commit(h, 8, {("orders", 0): 6})
    h.finish_appends(errors.NotLeaderOrFollower.code)
    assert h.body(t)["topics"][0]["partitions"][0]["error_code"] == errors.NotCoordinator.code
    assert fetched(fetch(h, 7, [("orders", [0])], True), 7) == {("orders", 0): (5, 0)}


def test_appended_with_an_unknown_token_is_an_error() -> None:
    with pytest.raises(errors.InvalidArgument):
        Coordinator().appended(0, 12345, 0)


def test_a_restarted_broker_replays_its_log() -> None:
    h = host()
    t = h.join(5, instance="i-1")
    h.advance(0)
    member = h.body(t)["member_id"]
    h.sync(5, 1, member, {member: b"mine"})
    commit(h, 8, {("orders", 0): 42}, generation=1, member_id=member)
    again = host()
    for partition, log in h.logs.items():
        stats = again.coordinator.load(partition, bytes(log))
        assert stats["groups"] == 1
    assert again.coordinator.group_state("g") == "Stable"
    assert fetched(fetch(again, 5, [("orders", [0])], False), 5) == {("orders", 0): (42, 0)}
    # The restarted static member gets its assignment back without a rebalance.
    t = again.join(5, instance="i-1")
    r = again.body(t)
    assert r["error_code"] == 0 and r["generation_id"] == 1
    s = again.sync(3, 1, r["member_id"], {})
    assert again.body(s)["assignment"] == b"mine"


def test_admin_requests() -> None:
    h = host()
    commit(h, 2, {("orders", 0): 1, ("orders", 1): 1})
    d = h.body(
        h.send(DESCRIBE, 5, {"groups": ["g", "nope"], "include_authorized_operations": True})
    )
    states = [(g["group_id"], g["group_state"], g["authorized_operations"]) for g in d["groups"]]
    assert states == [("g", "Empty", 3400), ("nope", "Dead", 3400)]
    listed = h.body(h.send(LIST, 5, {"states_filter": ["empty"], "types_filter": []}))
    assert [(g["group_id"], g["group_state"], g["group_type"]) for g in listed["groups"]] == [
        ("g", "Empty", "classic")
    ]
    r = h.body(
        h.send(
            DELETE_OFFSETS,
            0,
            {
                "group_id": "g",
                "topics": [{"name": "orders", "partitions": [{"partition_index": 0}]}],
            },
        )
    )
    assert r["error_code"] == 0
    r = h.body(h.send(DELETE, 2, {"groups_names": ["g", "nope"]}))
    assert [(x["group_id"], x["error_code"]) for x in r["results"]] == [
        ("g", 0),
        ("nope", errors.GroupIdNotFound.code),
    ]
    assert h.coordinator.group_count == 0


def test_leave_before_v3_lifts_the_member_error() -> None:
    h = host()
    t = h.join(3)
    h.advance(0)
    member = h.body(t)["member_id"]
    assert h.body(h.send(LEAVE, 1, {"group_id": "g", "member_id": "x"}))["error_code"] == 25
    assert h.body(h.send(LEAVE, 1, {"group_id": "g", "member_id": member}))["error_code"] == 0


def test_only_group_apis_are_served() -> None:
    assert sorted(GROUP_API_KEYS) == [8, 9, 11, 12, 13, 14, 15, 16, 28, 42, 47, 68, 69, 76, 77]
    frame = protocol.encode_request(18, 0, 1, "c", {})
    request = protocol.decode_request(frame[4:])
    with pytest.raises(errors.InvalidArgument):
        Coordinator().handle(0, 1, request)
    with pytest.raises(TypeError):
        Coordinator().handle(0, 1, {"not": "a request"})  # type: ignore[arg-type]


def test_a_request_built_by_hand_is_served_too() -> None:
    c = Coordinator(seed=1)
    body = {"group_id": "g", "generation_id": 1, "member_id": "m"}
    request = protocol.Request(12, 4, 9, "c", body)
    [effect] = c.handle(0, "t", request)
    assert isinstance(effect, Respond) and effect.token == "t"
    r = protocol.decode_response(12, 4, effect.frame[4:])
    assert (r.correlation_id, r.body["error_code"]) == (9, errors.UnknownMemberId.code)


def test_unload_answers_parked_requests() -> None:
    h = host(**{"group.initial.rebalance.delay.ms": 1_000})
    t = h.join(3)
    h.apply(h.coordinator.unload(h.now, h.coordinator.partition_for("g")))
    assert h.body(t)["error_code"] == errors.NotCoordinator.code


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["join", "sync", "heartbeat", "leave", "commit", "tick"]),
            st.integers(0, 3),
            st.integers(0, 2_000),
        ),
        max_size=60,
    )
)
def test_every_request_is_answered_once(ops: list[tuple[str, int, int]]) -> None:
    """Random members over the binding: no token answered twice, every one answered in the end."""
    h = host(**{"group.initial.rebalance.delay.ms": 50, "group.min.session.timeout.ms": 100})
    members: dict[int, tuple[str, int]] = {}
    sent: list[int] = []
    joins: dict[int, int] = {}
    for op, who, n in ops:
        member, generation = members.get(who, ("", -1))
        if op == "join":
            t = h.join(3, member, session=500 + n, rebalance=100 + n)
            joins[t] = who
        elif op == "sync":
            t = h.sync(3, generation, member, {member: b"a"} if member else {})
        elif op == "heartbeat":
            t = h.send(
                HEARTBEAT,
                3,
                {
                    "group_id": "g",
                    "generation_id": generation,
                    "member_id": member,
                    "group_instance_id": None,
                },
            )
        elif op == "leave":
            t = h.send(LEAVE, 1, {"group_id": "g", "member_id": member})
        elif op == "commit":
            t = commit(h, 8, {("orders", who): n}, generation=generation, member_id=member)
        else:
            h.advance(n)
            continue
        sent.append(t)
        for jt, w in list(joins.items()):
            if jt in h.answers:
                r = h.body(jt)
                if r["error_code"] == 0:
                    members[w] = (r["member_id"], r["generation_id"])
                del joins[jt]
        deadline = h.coordinator.next_deadline
        assert deadline is None or deadline > h.now
    for _ in range(3):
        h.advance(6 * 60 * 1000)
    assert all(t in h.answers for t in sent)
    assert h.coordinator.waiting == 0
