"""The group coordinator on the broker, on the wire: FindCoordinator in every form, the
``__consumer_offsets`` topic and its records, and what real clients never do on purpose (an old
generation's commit, a JoinGroup held open while others are served)."""

from __future__ import annotations

import time
import uuid

import pytest
from support.groups import (
    commit,
    fetch_offsets,
    join,
    join_body,
    offsets_records,
    read_group_metadata_value,
    read_offset_commit_value,
    read_offsets_key,
    receive,
    send_only,
    sync,
)
from support.kgroup_broker import Wire, run_broker

from kgroup import errors, protocol
from kgroup.assignors import Assignment
from kgroup.assignors.consumer_protocol import encode_assignment
from kgroup.broker import Broker
from kgroup.group import partition_for
from kgroup.protocol import ApiKey
from kgroup.protocol.records import encode_batch

pytestmark = pytest.mark.network

OFFSETS = "__consumer_offsets"


def _topic(w: Wire, partitions: int = 3) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    r = w.request(
        ApiKey.CREATE_TOPICS,
        5,
        {
            "topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1}],
            "timeout_ms": 10_000,
        },
    )
    assert r.body.topics[0].error_code == 0
    return name


def _find(w: Wire, version: int, key: str, key_type: int = 0) -> protocol.Response:
    body: dict = {}
    if version >= 1:
        body["key_type"] = key_type
    if version >= 4:
        body["coordinator_keys"] = [key]
    else:
        body["key"] = key
    return w.request(ApiKey.FIND_COORDINATOR, version, body)


def test_group_apis_are_advertised_with_kafka_39_versions(broker: Broker) -> None:
    # Kafka 3.9's ApiVersions ranges for the group apis (kafka-protocol-rs f7df8e1), but
    # DescribeGroups' v6 from Kafka 4.0 (KIP-1043), which Java's 4.x Admin needs to tell an
    # unknown group from a dead one.
    expected = {8: (0, 9), 9: (0, 9), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5)}
    expected |= {14: (0, 5), 15: (0, 6), 16: (0, 5), 42: (0, 2), 47: (0, 0)}
    with Wire(broker.bootstrap_servers) as w:
        r = w.request(
            ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"}
        )
    ranges = {k.api_key: (k.min_version, k.max_version) for k in r.body.api_keys}
    assert {k: ranges.get(k) for k in expected} == expected


def test_describe_groups_v6_answers_group_id_not_found_for_an_unknown_group(
    broker: Broker,
) -> None:
    # KIP-1043, Kafka 4.0's GroupMetadataManager.describeGroups: v6 answers GROUP_ID_NOT_FOUND
    # with "Group <id> not found." (state Dead); v5 describes the group as Dead, no error.
    group = f"nope-{uuid.uuid4().hex[:6]}"
    with Wire(broker.bootstrap_servers) as w:
        _find(w, 3, group)
        v6 = w.request(ApiKey.DESCRIBE_GROUPS, 6, {"groups": [group]}).body.groups[0]
        v5 = w.request(ApiKey.DESCRIBE_GROUPS, 5, {"groups": [group]}).body.groups[0]
    assert (v6.error_code, v6.error_message, v6.group_state) == (
        errors.GroupIdNotFound.code,
        f"Group {group} not found.",
        "Dead",
    )
    assert (v5.error_code, v5.group_state, v5.members) == (0, "Dead", [])


@pytest.mark.parametrize("version", range(0, 4))
def test_find_coordinator_names_this_broker_for_a_group(broker: Broker, version: int) -> None:
    host, port = broker.bootstrap_servers.split(":")
    with Wire(broker.bootstrap_servers) as w:
        r = _find(w, version, f"g-{version}")
    b = r.body
    assert (b.error_code, b.node_id, b.host, b.port) == (0, 1, host, int(port))
    if version >= 1:
        assert b.error_message == "NONE"  # Kafka writes Errors.NONE.message()


def test_find_coordinator_v4_answers_each_key_of_a_batch(broker: Broker) -> None:
    host, port = broker.bootstrap_servers.split(":")
    keys = ["a", "b", "", "groupé"]
    with Wire(broker.bootstrap_servers) as w:
        for version in (4, 5, 6):
            r = w.request(
                ApiKey.FIND_COORDINATOR, version, {"key_type": 0, "coordinator_keys": keys}
            )
            got = [(c.key, c.error_code, c.node_id, c.host, c.port) for c in r.body.coordinators]
            assert got == [(k, 0, 1, host, int(port)) for k in keys]


def test_find_coordinator_transactions_and_unknown_key_types(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        # The transaction coordinator is this broker too (the first lookup creates
        # __transaction_state).
        port = broker.bootstrap_servers.rsplit(":", 1)[1]
        r = _find(w, 3, "txn-1", key_type=1)
        assert (r.body.error_code, r.body.node_id, r.body.port) == (0, 1, int(port))
        r = w.request(ApiKey.FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": ["x", "y"]})
        assert [(c.error_code, c.node_id) for c in r.body.coordinators] == [(0, 1), (0, 1)]
        # Share groups (type 2) are disabled in 3.9: INVALID_REQUEST for the key.
        r = w.request(ApiKey.FIND_COORDINATOR, 6, {"key_type": 2, "coordinator_keys": ["s"]})
        assert r.body.coordinators[0].error_code == errors.InvalidRequest.code
        # An unknown type fails the whole request (CoordinatorType.forId throws).
        r = w.request(ApiKey.FIND_COORDINATOR, 4, {"key_type": 7, "coordinator_keys": ["a", "b"]})
        assert [(c.key, c.error_code, c.node_id) for c in r.body.coordinators] == [
            ("a", 42, -1),
            ("b", 42, -1),
        ]
        r = _find(w, 2, "a", key_type=7)
        assert r.body.error_code == errors.InvalidRequest.code
        assert w.request(ApiKey.METADATA, 1, {"topics": []}).body.brokers  # still connected


def test_offsets_topic_is_internal_compacted_and_protected(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        _find(w, 3, "creates-it")
        r = w.request(ApiKey.METADATA, 9, {"topics": [{"name": OFFSETS}]})
        [t] = r.body.topics
        assert (t.error_code, t.is_internal, len(t.partitions)) == (0, True, 50)
        r = w.request(
            ApiKey.DESCRIBE_CONFIGS,
            4,
            {
                "resources": [
                    {"resource_type": 2, "resource_name": OFFSETS, "configuration_keys": None}
                ]
            },
        )
        configs = {c.name: c.value for c in r.body.results[0].configs}
        assert configs["cleanup.policy"] == "compact"
        assert configs["segment.bytes"] == "104857600"
        # Only the coordinator writes there; nobody deletes it.
        batch = encode_batch([(0, 0, b"k", b"v")])
        r = w.request(
            ApiKey.PRODUCE,
            9,
            {
                "acks": -1,
                "timeout_ms": 5000,
                "topic_data": [
                    {"name": OFFSETS, "partition_data": [{"index": 0, "records": batch}]}
                ],
            },
        )
        assert r.body.responses[0].partition_responses[0].error_code == (
            errors.InvalidTopicException.code
        )
        r = w.request(ApiKey.DELETE_TOPICS, 4, {"topic_names": [OFFSETS], "timeout_ms": 5000})
        assert r.body.responses[0].error_code == errors.TopicDeletionDisabled.code


def test_group_requests_before_the_offsets_topic_exists_get_not_coordinator(tmp_path) -> None:
    # As Kafka: no __consumer_offsets, no partition led here, no group coordinated here; the
    # client's FindCoordinator creates the topic.
    with (
        run_broker(tmp_path, {"group.initial.rebalance.delay.ms": 0}) as b,
        Wire(b.bootstrap_servers) as w,
    ):
        topic = _topic(w)
        r = w.request(ApiKey.JOIN_GROUP, 5, join_body("early"))
        assert r.body.error_code == errors.NotCoordinator.code
        assert commit(w, "early", {(topic, 0): 1}) == {(topic, 0): errors.NotCoordinator.code}
        assert _find(w, 3, "early").body.error_code == 0
        assert join(w, "early").body.error_code == 0


def test_commit_with_a_stale_generation_is_illegal_generation(broker: Broker) -> None:
    group = f"stale-{uuid.uuid4().hex[:6]}"
    with Wire(broker.bootstrap_servers) as w:
        topic = _topic(w)
        _find(w, 3, group)
        r = join(w, group, topics=[topic])
        member, gen1 = r.body.member_id, r.body.generation_id
        assert r.body.leader == member
        assert sync(w, group, gen1, member, {member: b""}).body.error_code == 0
        assert commit(w, group, {(topic, 0): 5}, gen1, member) == {(topic, 0): 0}
        # The leader rejoins: a new generation (Kafka rebalances on a leader's rejoin).
        r = join(w, group, member, topics=[topic])
        gen2 = r.body.generation_id
        assert gen2 == gen1 + 1
        assert sync(w, group, gen2, member, {member: b""}).body.error_code == 0
        assert commit(w, group, {(topic, 0): 9}, gen1, member) == {
            (topic, 0): errors.IllegalGeneration.code
        }
        assert commit(w, group, {(topic, 0): 9}, gen2, "someone-else") == {
            (topic, 0): errors.UnknownMemberId.code
        }
        assert fetch_offsets(w, group)[1][(topic, 0)][0] == 5  # the refused commits left no trace
        assert commit(w, group, {(topic, 0): 9}, gen2, member) == {(topic, 0): 0}
        assert fetch_offsets(w, group)[1][(topic, 0)][0] == 9


def test_commits_to_unknown_topics_and_partitions_are_refused(broker: Broker) -> None:
    group = f"unknown-{uuid.uuid4().hex[:6]}"
    with Wire(broker.bootstrap_servers) as w:
        topic = _topic(w, 2)
        _find(w, 3, group)
        got = commit(w, group, {(topic, 1): 3, (topic, 2): 3, ("no-such-topic", 0): 3})
        assert got == {
            (topic, 1): 0,
            (topic, 2): errors.UnknownTopicOrPartition.code,
            ("no-such-topic", 0): errors.UnknownTopicOrPartition.code,
        }
        # Partitions added later take commits (set_topic_metadata follows CreatePartitions).
        r = w.request(
            ApiKey.CREATE_PARTITIONS,
            2,
            {"topics": [{"name": topic, "count": 3, "assignments": None}], "timeout_ms": 5000},
        )
        assert r.body.results[0].error_code == 0
        assert commit(w, group, {(topic, 2): 4}) == {(topic, 2): 0}
        assert fetch_offsets(w, group) == (0, {(topic, 1): (3, ""), (topic, 2): (4, "")})


def test_a_commit_too_large_for_one_batch_is_invalid_commit_offset_size(broker: Broker) -> None:
    # 300 offsets with 4000-byte metadata: one batch above max.message.bytes (1048588), which
    # the log refuses; Kafka 3.9 maps the append's error to this answer
    # (GroupMetadataManager.maybeConvertOffsetCommitError; 4.0's coordinator answers
    # UNKNOWN_SERVER_ERROR instead).
    group = f"big-{uuid.uuid4().hex[:6]}"
    with Wire(broker.bootstrap_servers) as w:
        topic = _topic(w, 300)
        _find(w, 3, group)
        got = commit(w, group, {(topic, p): 5 for p in range(300)}, metadata="x" * 4000)
        assert set(got.values()) == {errors.InvalidCommitOffsetSize.code}
        assert fetch_offsets(w, group) == (0, {})
        assert commit(w, group, {(topic, 0): 6}, metadata="y") == {(topic, 0): 0}
        assert fetch_offsets(w, group) == (0, {(topic, 0): (6, "y")})


def test_deleting_a_topic_deletes_its_committed_offsets(broker: Broker) -> None:
    group = f"deleted-{uuid.uuid4().hex[:6]}"
    with Wire(broker.bootstrap_servers) as w:
        keep, gone = _topic(w), _topic(w)
        _find(w, 3, group)
        assert set(commit(w, group, {(keep, 0): 1, (gone, 0): 2}).values()) == {0}
        r = w.request(ApiKey.DELETE_TOPICS, 4, {"topic_names": [gone], "timeout_ms": 5000})
        assert r.body.responses[0].error_code == 0
        assert fetch_offsets(w, group) == (0, {(keep, 0): (1, "")})


def test_a_parked_join_blocks_no_other_connection(broker: Broker) -> None:
    group = f"parked-{uuid.uuid4().hex[:6]}"
    with Wire(broker.bootstrap_servers) as a, Wire(broker.bootstrap_servers) as b:
        with Wire(broker.bootstrap_servers) as other:
            topic = _topic(a)
            _find(a, 3, group)
            r = join(a, group, topics=[topic])
            leader, gen = r.body.member_id, r.body.generation_id
            assert sync(a, group, gen, leader, {leader: b""}).body.error_code == 0
            # B joins: the group rebalances and B's JoinGroup waits for A to rejoin.
            r = b.request(ApiKey.JOIN_GROUP, 5, join_body(group, topics=[topic]))
            assert r.body.error_code == errors.MemberIdRequired.code
            send_only(b, ApiKey.JOIN_GROUP, 5, join_body(group, r.body.member_id, [topic]), 900)
            with pytest.raises(TimeoutError):
                receive(b, ApiKey.JOIN_GROUP, 5, timeout=0.3)
            # Meanwhile every other connection is served at once.
            started = time.monotonic()
            for _ in range(20):
                assert other.request(ApiKey.METADATA, 1, {"topics": []}).body.brokers
                assert fetch_offsets(other, group)[0] == 0
            assert time.monotonic() - started < 2
            hb = a.request(
                ApiKey.HEARTBEAT,
                3,
                {
                    "group_id": group,
                    "generation_id": gen,
                    "member_id": leader,
                    "group_instance_id": None,
                },
            )
            assert hb.body.error_code == errors.RebalanceInProgress.code
            # A rejoins: both JoinGroups are answered with the new generation.
            r = join(a, group, leader, topics=[topic])
            assert (r.body.error_code, r.body.generation_id) == (0, gen + 1)
            rb = receive(b, ApiKey.JOIN_GROUP, 5, timeout=5)
            assert rb.correlation_id == 900
            assert (rb.body.error_code, rb.body.generation_id, rb.body.leader) == (
                0,
                gen + 1,
                leader,
            )


def test_coordinator_records_are_kafkas_key_value_schemas(broker: Broker) -> None:
    group = f"records-{uuid.uuid4().hex[:6]}"
    with Wire(broker.bootstrap_servers) as w:
        topic = _topic(w)
        _find(w, 3, group)
        r = join(w, group, topics=[topic])
        member, gen = r.body.member_id, r.body.generation_id
        assignment = encode_assignment(Assignment([(topic, 0), (topic, 1), (topic, 2)]), 0)
        assert sync(w, group, gen, member, {member: assignment}).body.error_code == 0
        assert commit(w, group, {(topic, 2): 42}, gen, member, metadata="meta") == {(topic, 2): 0}
    records = offsets_records(broker.bootstrap_servers, partition_for(group))
    offsets = [
        (read_offsets_key(k), read_offset_commit_value(v))
        for k, v in records
        if v is not None and read_offsets_key(k).get("group") == group and k[:2] == b"\x00\x01"
    ]
    [(key, value)] = offsets
    assert key == {"version": 1, "group": group, "topic": topic, "partition": 2}
    assert (value["version"], value["offset"], value["metadata"]) == (3, 42, "meta")
    assert abs(value["commit_timestamp"] - time.time() * 1000) < 60_000
    metadata = [
        read_group_metadata_value(v)
        for k, v in records
        if v is not None and read_offsets_key(k) == {"version": 2, "group": group}
    ]
    last = metadata[-1]
    assert (last["version"], last["protocol_type"], last["generation"]) == (3, "consumer", gen)
    assert (last["protocol"], last["leader"]) == ("range", member)
    [m] = last["members"]
    assert (m["member_id"], m["client_id"], m["client_host"]) == (member, "wire", "/127.0.0.1")
    assert (m["session_timeout"], m["rebalance_timeout"], m["assignment"]) == (
        6000,
        10_000,
        assignment,
    )


def test_broker_configs_reach_the_coordinator(tmp_path) -> None:
    config = {
        "group.initial.rebalance.delay.ms": 0,
        "group.min.session.timeout.ms": 7000,
        "group.max.size": 1,
    }
    with (
        run_broker(tmp_path, config) as b,
        Wire(b.bootstrap_servers) as w,
        Wire(b.bootstrap_servers) as w2,
    ):
        _find(w, 3, "cfg")
        # 6000 ms is below this broker's group.min.session.timeout.ms.
        r = w.request(ApiKey.JOIN_GROUP, 5, join_body("cfg"))
        assert r.body.error_code == errors.InvalidSessionTimeout.code
        body = join_body("cfg") | {"session_timeout_ms": 7000}
        r = w.request(ApiKey.JOIN_GROUP, 5, body)
        r = w.request(ApiKey.JOIN_GROUP, 5, body | {"member_id": r.body.member_id})
        assert r.body.error_code == 0
        # group.max.size=1: a second member is turned away.
        r = w2.request(ApiKey.JOIN_GROUP, 5, body)
        r = w2.request(ApiKey.JOIN_GROUP, 5, body | {"member_id": r.body.member_id})
        assert r.body.error_code == errors.GroupMaxSizeReached.code
