"""ShareGroupHeartbeat (76) and ShareGroupDescribe (77) through the broker's group coordinator,
with ShareFetch on the partitions they assign: raw frames against an in-process kgroup broker
with ``group.share.enable``. What Kafka 4.2 answers (KafkaApis.handleShareGroupHeartbeat /
handleShareGroupDescribe, GroupMetadataManager's share group path; reference
kafka-kip932-share-groups.md §2): a new member's first assignment is empty, its partitions come
one heartbeat later, once their share state is initialized (record 15 moved to
InitializedTopics); DeleteGroups on the empty group deletes that share state."""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support.kgroup_broker import Wire, run_broker
from support.share_wire import MEMBER_A, MEMBER_B, create, produce, share_fetch, topics

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclBinding, AclOperation, AclPermissionType, ResourceType
from kgroup.broker import Broker
from kgroup.broker.authorizer import STANDARD_AUTHORIZER
from kgroup.protocol import ApiKey


@contextlib.contextmanager
def share_broker(**config: Any) -> Iterator[Broker]:
    values = {"group.share.enable": "true", **config}
    with run_broker(config=values) as b:
        yield b


def heartbeat(
    w: Wire, member: str, epoch: int, subscribed: list[str] | None, group: str = "g"
) -> Any:
    body = {
        "group_id": group,
        "member_id": member,
        "member_epoch": epoch,
        "rack_id": None,
        "subscribed_topic_names": subscribed,
    }
    return w.request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body).body


def coordinator(w: Wire, group: str = "g") -> None:
    body = {"key_type": 0, "coordinator_keys": [group]}
    [c] = w.request(ApiKey.FIND_COORDINATOR, 4, body).body.coordinators
    assert c.error_code == 0, c


def assigned(r: Any) -> dict[uuid.UUID, list[int]]:
    if r.assignment is None:
        return {}
    return {tp.topic_id: sorted(tp.partitions) for tp in r.assignment.topic_partitions}


def join(w: Wire, member: str, topic: str, group: str = "g") -> tuple[Any, Any]:
    """Join and heartbeat until an assignment comes: (first answer, last answer)."""
    first = heartbeat(w, member, 0, [topic], group)
    assert first.error_code == 0, first
    r = first
    deadline = time.monotonic() + 10
    while not assigned(r):
        assert time.monotonic() < deadline, r
        time.sleep(0.05)
        r = heartbeat(w, member, r.member_epoch, None, group)
        assert r.error_code == 0, r
    return first, r


def test_first_assignment_comes_once_share_state_is_initialized() -> None:
    # Kafka's GroupMetadataManagerTest.testShareGroupHeartbeatInitializeOnPartitionUpdate: the
    # joining member is at epoch 1 with nothing; the initialized partitions bump the group
    # epoch and come at the next heartbeat.
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        coordinator(w)
        first, r = join(w, MEMBER_A, "t")
        assert first.member_epoch == 1 and assigned(first) == {}
        assert first.heartbeat_interval_ms == 5000
        assert r.member_epoch == 2 and assigned(r) == {tid: [0]}
        shares = b.state.shares
        assert shares.initialized == {("g", tid, 0): 1}


def test_assigned_partition_fetches_with_the_initialized_state_epoch() -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        coordinator(w)
        join(w, MEMBER_A, "t")
        # latest (the default) is decided at the first fetch, as Kafka's SharePartition does
        # with a share state whose start offset is -1.
        produce(w, "t", [b"old"])
        r = share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))
        assert r.error_code == 0
        produce(w, "t", [b"x", b"y"])
        r = share_fetch(w, MEMBER_A, 1, [])
        acquired = [
            (a.first_offset, a.last_offset)
            for t in r.responses
            for p in t.partitions
            for a in p.acquired_records
        ]
        assert acquired == [(1, 2)]
        [h] = b.state.shares.partitions.values()
        assert h.share.state_epoch == 1


def test_two_members_share_the_partition_and_describe_shows_them() -> None:
    # SimpleAssignor: every member of a one-partition topic is given it.
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        coordinator(w)
        join(w, MEMBER_A, "t")
        _, r = join(w, MEMBER_B, "t")
        assert assigned(r) == {tid: [0]}
        body = {"group_ids": ["g", "nope"], "include_authorized_operations": False}
        groups = w.request(ApiKey.SHARE_GROUP_DESCRIBE, 1, body).body.groups
        g, nope = groups
        assert (g.error_code, g.group_state, g.assignor_name) == (0, "Stable", "simple")
        assert sorted(m.member_id for m in g.members) == [MEMBER_A, MEMBER_B]
        assert nope.error_code == errors.GroupIdNotFound.code


def test_deleting_the_empty_group_drops_its_share_state() -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        coordinator(w)
        join(w, MEMBER_A, "t")
        share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))
        assert b.state.shares.partitions
        assert heartbeat(w, MEMBER_A, -1, None).member_epoch == -1
        [res] = w.request(ApiKey.DELETE_GROUPS, 2, {"groups_names": ["g"]}).body.results
        assert res.error_code == 0
        assert b.state.shares.initialized == {} and b.state.shares.partitions == {}


def test_a_deleted_topic_takes_its_share_state_and_leaves_the_assignment() -> None:
    # share/mod.rs contract item 5: the broker deletes a deleted topic's share state; the
    # group forgets the topic at its next heartbeat (GroupMetadataManager's metadata refresh).
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        coordinator(w)
        _, r = join(w, MEMBER_A, "t")
        share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))
        body = {"topics": [{"name": "t"}], "timeout_ms": 5000}
        [res] = w.request(ApiKey.DELETE_TOPICS, 6, body).body.responses
        assert res.error_code == 0
        assert b.state.shares.initialized == {} and b.state.shares.partitions == {}
        r = heartbeat(w, MEMBER_A, r.member_epoch, None)
        assert r.error_code == 0 and assigned(r) == {}


def test_member_ids_of_1_to_36_characters_only() -> None:
    # KafkaApis.handleShareGroupHeartbeat's isMemberIdValid, before the coordinator's checks.
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        create(w, "t")
        coordinator(w)
        for member in ("", "x" * 37):
            r = heartbeat(w, member, 0, ["t"])
            assert (r.error_code, r.error_message) == (
                errors.InvalidRequest.code,
                "Invalid member id in the request.",
            )
        assert heartbeat(w, "x" * 36, 0, ["t"]).error_code == 0


def test_off_they_answer_unsupported_version() -> None:
    # Kafka 4.2 KafkaApis with share groups off (isShareGroupProtocolEnabled false).
    with run_broker(config={"group.share.enable": "false"}) as b, Wire(b.bootstrap_servers) as w:
        create(w, "t")
        r = heartbeat(w, MEMBER_A, 0, ["t"])
        assert r.error_code == errors.UnsupportedVersion.code
        body = {"group_ids": ["g"], "include_authorized_operations": False}
        [g] = w.request(ApiKey.SHARE_GROUP_DESCRIBE, 1, body).body.groups
        assert g.error_code == errors.UnsupportedVersion.code


def test_authorization_as_kafka_apis() -> None:
    # Kafka 4.2's KafkaApis.handleShareGroupHeartbeat: READ on the group, then DESCRIBE on
    # every subscribed topic; handleShareGroupDescribe: DESCRIBE on each group (READ implies
    # it).
    allow = AclPermissionType.ALLOW

    def acl(restype: ResourceType, name: str, op: AclOperation) -> dict[str, Any]:
        return AclBinding(restype, name, 3, "User:ANONYMOUS", "*", op, allow).to_dict()

    seeded = [
        acl(ResourceType.CLUSTER, CLUSTER_NAME, AclOperation.CREATE),
        acl(ResourceType.TOPIC, "open", AclOperation.DESCRIBE),
        acl(ResourceType.GROUP, "g2", AclOperation.READ),
    ]
    config = {
        "group.share.enable": "true",
        "authorizer.class.name": STANDARD_AUTHORIZER,
        "allow.everyone.if.no.acl.found": "false",
    }
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "acls.json").write_text(json.dumps({"acls": seeded}))
        with run_broker(d, config) as b, Wire(b.bootstrap_servers) as w:
            body = {
                "topics": [{"name": "open", "num_partitions": 1, "replication_factor": 1}],
                "timeout_ms": 5000,
            }
            [t] = w.request(ApiKey.CREATE_TOPICS, 7, body).body.topics
            assert t.error_code == 0, t
            coordinator(w, "g2")
            r = heartbeat(w, MEMBER_A, 0, ["open"], group="g1")
            assert r.error_code == errors.GroupAuthorizationFailed.code
            r = heartbeat(w, MEMBER_A, 0, ["open", "closed"], group="g2")
            assert r.error_code == errors.TopicAuthorizationFailed.code
            r = heartbeat(w, MEMBER_A, 0, ["open"], group="g2")
            assert (r.error_code, r.member_epoch) == (0, 1)
            body = {"group_ids": ["g1", "g2"], "include_authorized_operations": False}
            groups = w.request(ApiKey.SHARE_GROUP_DESCRIBE, 1, body).body.groups
            codes = {g.group_id: g.error_code for g in groups}
            assert codes == {"g1": errors.GroupAuthorizationFailed.code, "g2": 0}
