"""The fault engine (``kgroup.broker.faults``): error answers shaped as Kafka's for each api and
version, on the raw wire; and real clients (confluent-kafka) riding out the faults as they
ride out Kafka's: retries without duplicates, a coordinator that moves, a paused broker, a
partition without a leader, dropped connections, slow answers."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.kgroup_broker import Wire, run_broker
from support.wire import read_frame

from kgroup import errors, protocol
from kgroup.broker import Broker
from kgroup.broker.faults import LAYOUTS, Faults, response_fields
from kgroup.protocol import ApiKey
from kgroup.protocol.records import decode_batches, encode_batch

K = ApiKey
NOT_COORDINATOR = errors.NotCoordinator.code
NOT_LEADER = errors.NotLeaderOrFollower.code
TIMED_OUT = errors.RequestTimedOut.code


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    config = {"group.initial.rebalance.delay.ms": 0, "offsets.topic.num.partitions": 3}
    with run_broker(tmp_path_factory.mktemp("faults"), config) as b:
        yield b


@pytest.fixture(autouse=True)
def _no_faults_left(broker: Broker) -> Iterator[None]:
    yield
    on_loop(broker, lambda f: f.clear())


def on_loop(broker: Broker, call: Callable[[Faults], Any]) -> Any:
    """``call(faults)`` on the broker's event loop (its thread), as every Faults method runs;
    its result."""
    assert broker.state is not None and broker._loop is not None
    faults = broker.state.faults

    async def run() -> Any:
        return call(faults)

    return asyncio.run_coroutine_threadsafe(run(), broker._loop).result(10)


def topic(w: Wire, partitions: int = 1) -> str:
    name = f"faults-{uuid.uuid4().hex[:8]}"
    body = {
        "topics": [
            {
                "name": name,
                "num_partitions": partitions,
                "replication_factor": 1,
                "assignments": [],
                "configs": [],
            }
        ],
        "timeout_ms": 5000,
    }
    assert w.request(K.CREATE_TOPICS, 5, body).body.topics[0].error_code == 0
    return name


def produce_body(name: str, partitions: list[int], acks: int = 1) -> dict[str, Any]:
    return {
        "acks": acks,
        "timeout_ms": 5000,
        "topic_data": [
            {
                "name": name,
                "partition_data": [
                    {"index": p, "records": encode_batch([(0, 1000, b"k", b"v%d" % p)])}
                    for p in partitions
                ],
            }
        ],
    }


def fetch_body(name: str, partitions: list[int], topic_id: uuid.UUID | None = None) -> dict:
    entry: dict[str, Any] = {"topic_id": topic_id} if topic_id else {"topic": name}
    entry["partitions"] = [
        {"partition": p, "fetch_offset": 0, "partition_max_bytes": 1 << 20} for p in partitions
    ]
    return {"max_wait_ms": 0, "min_bytes": 1, "topics": [entry]}


def end_offsets(w: Wire, name: str, partitions: list[int]) -> list[int]:
    lo = {
        "replica_id": -1,
        "topics": [
            {
                "name": name,
                "partitions": [{"partition_index": p, "timestamp": -1} for p in partitions],
            }
        ],
    }
    return [p.offset for p in w.request(K.LIST_OFFSETS, 7, lo).body.topics[0].partitions]


# -- the layouts ----------------------------------------------------------------------------


def _request_fields(api_key: int, path: list[str]) -> list[dict[str, Any]]:
    message = next(
        m for m in protocol.definitions() if m["api_key"] == api_key and m["type"] == "request"
    )
    fields = message["fields"]
    for name in path:
        fields = next(f for f in fields if f["name"] == name)["fields"]
    return fields


def _in(versions: str, v: int) -> bool:
    if versions == "none":
        return False
    if versions.endswith("+"):
        return v >= int(versions[:-1])
    low, _, high = versions.partition("-")
    return int(low) <= v <= int(high or low)


def _has(fields: list[dict[str, Any]], name: str, v: int) -> bool:
    return any(f["name"] == name and _in(f["versions"], v) for f in fields)


@pytest.mark.parametrize("api_key", sorted(LAYOUTS), ids=lambda k: protocol.API_NAMES[k])
def test_every_layout_names_fields_of_its_versions(api_key: int) -> None:
    # The table is checked against the message definitions: each field it names exists in
    # every version its layout serves, and the layouts cover the api's versions once.
    covered: list[int] = []
    for layout in LAYOUTS[api_key]:
        for v in range(layout.versions[0], layout.versions[1] + 1):
            covered.append(v)
            for field in layout.top.values():
                assert _has(_request_fields(api_key, []), field, v), (field, v)
            if layout.error is not None:
                assert _has(response_fields(api_key, []), layout.error, v)
            req: list[str] = []
            resp: list[str] = []
            for level in layout.levels:
                if level.request:
                    assert _has(_request_fields(api_key, req), level.request, v), (level, v)
                    req.append(level.request)
                    for key in level.key:
                        if key != "topic_id" or v >= 13 or api_key != K.FETCH:
                            assert any(f["name"] == key for f in _request_fields(api_key, req)), (
                                key,
                                v,
                            )
                assert _has(response_fields(api_key, resp), level.response, v), (level, v)
                resp.append(level.response)
                inner = response_fields(api_key, resp)
                assert any(f["name"] == level.response_key for f in inner), (level, v)
                if level.error is not None:
                    assert _has(inner, level.error, v), (level, v)
                for name in level.entry:
                    assert any(f["name"] == name for f in inner), (name, level)
    low, high = protocol.API_VERSIONS[api_key]
    assert sorted(covered) == list(range(low, high + 1))


def test_an_api_without_a_layout_or_a_filter_it_lacks_is_refused(broker: Broker) -> None:
    with pytest.raises(ValueError, match="DescribeCluster"):
        on_loop(broker, lambda f: f.fail(K.DESCRIBE_CLUSTER, 1))
    with pytest.raises(ValueError, match="topic"):
        on_loop(broker, lambda f: f.fail(K.HEARTBEAT, 1, topic="t"))
    with pytest.raises(ValueError, match="needs a topic"):
        on_loop(broker, lambda f: f.fail(K.PRODUCE, 1, partition=0))


# -- error answers on the wire ----------------------------------------------------------------


@pytest.mark.parametrize("version", [3, 9, 11])
def test_produce_refused_partitions_are_not_appended(broker: Broker, version: int) -> None:
    # ProduceResponse.PartitionResponse(error): base offset, append time and log start -1.
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w, 2)
        on_loop(broker, lambda f: f.fail(K.PRODUCE, NOT_LEADER, topic=name, partition=1))
        r = w.request(K.PRODUCE, version, produce_body(name, [0, 1])).body.to_dict()
        parts = r["responses"][0]["partition_responses"]
        assert [p["index"] for p in parts] == [0, 1]
        assert (parts[0]["error_code"], parts[0]["base_offset"]) == (0, 0)
        refused = {k: v for k, v in parts[1].items() if k not in ("record_errors",)}
        assert refused == {
            "index": 1,
            "error_code": NOT_LEADER,
            "base_offset": -1,
            "log_append_time_ms": -1,
            **({"log_start_offset": -1} if version >= 5 else {}),
            **({"error_message": None} if version >= 8 else {}),
            # A tagged field, left at its default: no leader known (KIP-951).
            **({"current_leader": {"leader_id": -1, "leader_epoch": -1}} if version >= 10 else {}),
        }
        assert end_offsets(w, name, [0, 1]) == [1, 0]
        # times=1: the next one is served.
        r = w.request(K.PRODUCE, version, produce_body(name, [1])).body
        assert r.responses[0].partition_responses[0].error_code == 0
        assert end_offsets(w, name, [0, 1]) == [1, 1]


def test_produce_handled_appends_and_answers_the_error(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w)
        on_loop(broker, lambda f: f.fail(K.PRODUCE, TIMED_OUT, handled=True, times=2))
        for _ in range(2):
            p = w.request(K.PRODUCE, 9, produce_body(name, [0])).body.responses[0]
            assert (p.partition_responses[0].error_code, p.partition_responses[0].base_offset) == (
                TIMED_OUT,
                -1,
            )
        assert end_offsets(w, name, [0]) == [2]
        assert on_loop(broker, lambda f: f.active()) == []


@pytest.mark.parametrize("version", [4, 11, 13])
def test_fetch_error_partitions_are_kafkas_partition_response(broker: Broker, version: int) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w, 2)
        w.request(K.PRODUCE, 9, produce_body(name, [0, 1]))
        assert broker.state is not None
        tid = broker.state.topics.by_name[name].id
        on_loop(broker, lambda f: f.fail(K.FETCH, NOT_LEADER, topic=name, partition=0))
        body = fetch_body(name, [0, 1], tid if version >= 13 else None)
        r = w.request(K.FETCH, version, body).body.to_dict()
        t = r["responses"][0]
        assert t.get("topic_id", name) == (tid if version >= 13 else name)
        p0, p1 = t["partitions"]
        assert (p0["partition_index"], p0["error_code"], p0["high_watermark"]) == (
            0,
            NOT_LEADER,
            -1,
        )
        assert p0["last_stable_offset"] == -1
        assert p0.get("log_start_offset", -1) == -1
        assert not p0["records"]
        assert (p1["partition_index"], p1["error_code"], p1["high_watermark"]) == (1, 0, 1)
        assert len(decode_batches(p1["records"])) == 1


def test_a_fetch_with_a_partition_in_error_does_not_wait(broker: Broker) -> None:
    # Kafka's fetch answers at once when a partition is in error.
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w, 2)
        for partitions in ([0], [0, 1]):
            on_loop(broker, lambda f: f.fail(K.FETCH, NOT_LEADER, topic=name, partition=0))
            body = fetch_body(name, partitions)
            body["max_wait_ms"] = 5000
            started = time.monotonic()
            r = w.request(K.FETCH, 12, body).body
            assert time.monotonic() - started < 2
            codes = [p.error_code for p in r.responses[0].partitions]
            assert codes == [NOT_LEADER, 0][: len(partitions)]


def test_list_offsets_leader_epoch_and_delete_records_partitions(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w, 2)
        w.request(K.PRODUCE, 9, produce_body(name, [0, 1]))
        on_loop(broker, lambda f: f.fail(K.LIST_OFFSETS, NOT_LEADER, topic=name, partition=1))
        assert end_offsets(w, name, [0, 1]) == [1, -1]
        lo = {
            "replica_id": -1,
            "topics": [{"name": name, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
        }
        on_loop(broker, lambda f: f.fail(K.LIST_OFFSETS, NOT_LEADER))
        p = w.request(K.LIST_OFFSETS, 0, lo).body.topics[0].partitions[0]
        assert (p.error_code, p.old_style_offsets) == (NOT_LEADER, [])
        on_loop(broker, lambda f: f.fail(K.OFFSET_FOR_LEADER_EPOCH, NOT_LEADER, topic=name))
        ofle = {
            "topics": [
                {
                    "topic": name,
                    "partitions": [
                        {"partition": 0, "leader_epoch": 0},
                        {"partition": 1, "leader_epoch": 0},
                    ],
                }
            ]
        }
        r = w.request(K.OFFSET_FOR_LEADER_EPOCH, 4, ofle).body.to_dict()
        assert r["topics"][0]["partitions"] == [
            {"error_code": NOT_LEADER, "partition": p, "leader_epoch": -1, "end_offset": -1}
            for p in (0, 1)
        ]
        on_loop(broker, lambda f: f.fail(K.DELETE_RECORDS, NOT_LEADER, topic=name, partition=0))
        dr = {
            "topics": [
                {
                    "name": name,
                    "partitions": [
                        {"partition_index": 0, "offset": 1},
                        {"partition_index": 1, "offset": 1},
                    ],
                }
            ],
            "timeout_ms": 5000,
        }
        r = w.request(K.DELETE_RECORDS, 2, dr).body.to_dict()
        assert r["topics"][0]["partitions"] == [
            {"partition_index": 0, "low_watermark": -1, "error_code": NOT_LEADER},
            {"partition_index": 1, "low_watermark": 1, "error_code": 0},
        ]


def test_metadata_topic_errors_and_leaderless_partitions(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w, 2)
        on_loop(
            broker, lambda f: f.fail(K.METADATA, errors.UnknownTopicOrPartition.code, topic=name)
        )
        r = w.request(K.METADATA, 12, {"topics": [{"name": name}]}).body.to_dict()
        t = r["topics"][0]
        assert (t["name"], t["error_code"], t["partitions"], t["is_internal"]) == (
            name,
            errors.UnknownTopicOrPartition.code,
            [],
            False,
        )
        assert r["brokers"]
        fid = on_loop(broker, lambda f: f.leaderless(name, 1))
        assert broker.state is not None
        node = broker.state.node_id
        # v0: an empty list asks for every topic.
        for version, body in (
            (0, {"topics": []}),
            (12, {"topics": None}),
            (5, {"topics": [{"name": name}]}),
        ):
            r = w.request(K.METADATA, version, body).body.to_dict()
            t = next(t for t in r["topics"] if t["name"] == name)
            p0, p1 = t["partitions"]
            assert (p0["error_code"], p0["leader_id"]) == (0, node)
            assert (p1["error_code"], p1["leader_id"]) == (errors.LeaderNotAvailable.code, -1)
            assert p1["replica_nodes"] == [node]
        p = w.request(K.PRODUCE, 9, produce_body(name, [0, 1])).body.responses[0]
        assert [x.error_code for x in p.partition_responses] == [0, NOT_LEADER]
        on_loop(broker, lambda f: f.remove(fid))
        r = w.request(K.METADATA, 12, {"topics": [{"name": name}]}).body
        assert [p.leader_id for p in r.topics[0].partitions] == [node, node]


def test_leaderless_ends_by_itself(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w, 2)
        on_loop(broker, lambda f: f.leaderless(name, seconds=0.3))
        assert on_loop(broker, lambda f: f.active())[0]["kind"] == "leaderless"
        # Every partition of the topic.
        r = w.request(K.METADATA, 12, {"topics": [{"name": name}]}).body
        assert [(p.error_code, p.leader_id) for p in r.topics[0].partitions] == [
            (errors.LeaderNotAvailable.code, -1)
        ] * 2
        p = w.request(K.PRODUCE, 9, produce_body(name, [0, 1])).body.responses[0]
        assert [x.error_code for x in p.partition_responses] == [NOT_LEADER] * 2
        time.sleep(0.5)
        assert on_loop(broker, lambda f: f.active()) == []
        p = w.request(K.PRODUCE, 9, produce_body(name, [0])).body.responses[0]
        assert p.partition_responses[0].error_code == 0


def test_group_apis_answer_a_top_level_error_as_kafkas_get_error_response(broker: Broker) -> None:
    # JoinGroupRequest.getErrorResponse: generation -1, protocol name "" (null from v7), no
    # leader, no member id; SyncGroup: an empty assignment; the others only the error.
    join = {
        "group_id": "g-join",
        "session_timeout_ms": 10000,
        "rebalance_timeout_ms": 10000,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}],
    }
    cases: list[tuple[int, int, dict[str, Any], dict[str, Any]]] = [
        (
            K.JOIN_GROUP,
            5,
            join,
            {
                "generation_id": -1,
                "protocol_name": "",
                "leader": "",
                "member_id": "",
                "members": [],
            },
        ),
        (
            K.JOIN_GROUP,
            9,
            join,
            {
                "generation_id": -1,
                "protocol_name": None,
                "protocol_type": None,
                "leader": "",
                "member_id": "",
                "members": [],
                "skip_assignment": False,
            },
        ),
        (
            K.SYNC_GROUP,
            5,
            {"group_id": "g-join", "generation_id": 1, "member_id": "m", "assignments": []},
            {"protocol_type": None, "protocol_name": None, "assignment": b""},
        ),
        (K.HEARTBEAT, 0, {"group_id": "g-join", "generation_id": 1, "member_id": "m"}, {}),
        (K.HEARTBEAT, 4, {"group_id": "g-join", "generation_id": 1, "member_id": "m"}, {}),
        (K.LEAVE_GROUP, 0, {"group_id": "g-join", "member_id": "m"}, {}),
        (
            K.LEAVE_GROUP,
            5,
            {"group_id": "g-join", "members": [{"member_id": "m"}]},
            {"members": []},
        ),
        (K.LIST_GROUPS, 5, {}, {"groups": []}),
        (
            K.CONSUMER_GROUP_HEARTBEAT,
            1,
            {
                "group_id": "g-join",
                "member_id": "",
                "member_epoch": 0,
                "subscribed_topic_names": ["t"],
            },
            {
                "error_message": None,
                "member_id": None,
                "member_epoch": 0,
                "heartbeat_interval_ms": 0,
                "assignment": None,
            },
        ),
    ]
    with Wire(broker.bootstrap_servers) as w:
        for api, version, body, rest in cases:
            group = None if api == K.LIST_GROUPS else "g-join"
            on_loop(
                broker, lambda f, api=api, group=group: f.fail(api, NOT_COORDINATOR, group=group)
            )
            got = w.request(api, version, body).body.to_dict()
            got.pop("throttle_time_ms", None)
            assert got == {"error_code": NOT_COORDINATOR, **rest}, (
                protocol.API_NAMES[api],
                version,
            )
        # Another group's requests are not the fault's.
        w.request(K.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g-other"]})
        on_loop(broker, lambda f: f.fail(K.HEARTBEAT, NOT_COORDINATOR, group="g-join"))
        other = {"group_id": "g-other", "generation_id": 1, "member_id": "m"}
        assert w.request(K.HEARTBEAT, 4, other).body.error_code != NOT_COORDINATOR
        assert len(on_loop(broker, lambda f: f.active())) == 1


def test_offset_commit_and_fetch_errors_per_version(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w, 2)
        commit = {
            "group_id": "g-off",
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "topics": [
                {
                    "name": name,
                    "partitions": [
                        {"partition_index": p, "committed_offset": 5, "committed_metadata": "m"}
                        for p in (0, 1)
                    ],
                }
            ],
        }
        w.request(K.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g-off"]})
        on_loop(
            broker,
            lambda f: f.fail(
                K.OFFSET_COMMIT, NOT_COORDINATOR, group="g-off", topic=name, partition=1
            ),
        )
        r = w.request(K.OFFSET_COMMIT, 8, commit).body.to_dict()
        assert r["topics"] == [
            {
                "name": name,
                "partitions": [
                    {"partition_index": 0, "error_code": 0},
                    {"partition_index": 1, "error_code": NOT_COORDINATOR},
                ],
            }
        ]
        asked = {"group_id": "g-off", "topics": [{"name": name, "partition_indexes": [0, 1]}]}
        # v1: no top-level error: every partition asked for gets it (getErrorResponse).
        on_loop(broker, lambda f: f.fail(K.OFFSET_FETCH, NOT_COORDINATOR, group="g-off"))
        r = w.request(K.OFFSET_FETCH, 1, asked).body.to_dict()
        assert r["topics"][0]["partitions"] == [
            {
                "partition_index": p,
                "committed_offset": -1,
                "metadata": "",
                "error_code": NOT_COORDINATOR,
            }
            for p in (0, 1)
        ]
        # v2-7: the top-level error, no topics.
        on_loop(broker, lambda f: f.fail(K.OFFSET_FETCH, NOT_COORDINATOR, group="g-off"))
        r = w.request(K.OFFSET_FETCH, 5, asked).body.to_dict()
        assert (r["error_code"], r["topics"]) == (NOT_COORDINATOR, [])
        # ... and a partition's error with a topic filter; the other partition is read.
        # (partition 1's commit was refused above).
        on_loop(broker, lambda f: f.fail(K.OFFSET_FETCH, NOT_COORDINATOR, topic=name, partition=0))
        r = w.request(K.OFFSET_FETCH, 5, asked).body.to_dict()
        assert r["error_code"] == 0
        assert [(p["error_code"], p["committed_offset"]) for p in r["topics"][0]["partitions"]] == [
            (NOT_COORDINATOR, -1),
            (0, -1),
        ]
        r = w.request(K.OFFSET_FETCH, 5, asked).body.to_dict()
        assert [p["committed_offset"] for p in r["topics"][0]["partitions"]] == [5, -1]
        # v8+: a group's error, the other group answered.
        groups = {
            "groups": [
                {"group_id": "g-off", "topics": None},
                {"group_id": "g-none", "topics": [{"name": name, "partition_indexes": [0]}]},
            ],
            "require_stable": False,
        }
        on_loop(broker, lambda f: f.fail(K.OFFSET_FETCH, NOT_COORDINATOR, group="g-off"))
        r = w.request(K.OFFSET_FETCH, 9, groups).body.to_dict()
        assert r["groups"][0] == {"group_id": "g-off", "topics": [], "error_code": NOT_COORDINATOR}
        assert r["groups"][1]["group_id"] == "g-none" and r["groups"][1]["error_code"] == 0
        # A null topic list (all topics): the committed partitions of the topic found in the
        # answer get the error.
        on_loop(broker, lambda f: f.fail(K.OFFSET_FETCH, NOT_COORDINATOR, topic=name, partition=0))
        r = w.request(K.OFFSET_FETCH, 9, groups).body.to_dict()
        parts = r["groups"][0]["topics"][0]["partitions"]
        assert [(p["partition_index"], p["error_code"], p["committed_offset"]) for p in parts] == [
            (0, NOT_COORDINATOR, -1)
        ]


def test_find_coordinator_errors_per_key_from_v4(broker: Broker) -> None:
    message = errors.CoordinatorNotAvailable.message
    with Wire(broker.bootstrap_servers) as w:
        on_loop(
            broker,
            lambda f: f.fail(K.FIND_COORDINATOR, errors.CoordinatorNotAvailable.code, group="g-a"),
        )
        r = w.request(K.FIND_COORDINATOR, 3, {"key": "g-a", "key_type": 0}).body.to_dict()
        r.pop("throttle_time_ms")
        assert r == {
            "error_code": errors.CoordinatorNotAvailable.code,
            "error_message": message,
            "node_id": -1,
            "host": "",
            "port": -1,
        }
        on_loop(
            broker,
            lambda f: f.fail(K.FIND_COORDINATOR, errors.CoordinatorNotAvailable.code, group="g-a"),
        )
        # A transactional id of the same name is not the group's.
        r = w.request(K.FIND_COORDINATOR, 3, {"key": "g-a", "key_type": 1}).body
        assert r.error_code == 0
        r = w.request(
            K.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g-b", "g-a"]}
        ).body.to_dict()
        assert r["coordinators"][0]["error_code"] == 0
        assert r["coordinators"][1] == {
            "key": "g-a",
            "node_id": -1,
            "host": "",
            "port": -1,
            "error_code": errors.CoordinatorNotAvailable.code,
            "error_message": message,
        }


def test_describe_and_delete_groups_errors_per_group(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        w.request(K.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g-d"]})
        on_loop(broker, lambda f: f.fail(K.DESCRIBE_GROUPS, NOT_COORDINATOR, group="g-d"))
        r = w.request(K.DESCRIBE_GROUPS, 5, {"groups": ["g-x", "g-d"]}).body.to_dict()
        assert [g["group_id"] for g in r["groups"]] == ["g-x", "g-d"]
        assert r["groups"][0]["error_code"] == 0
        assert r["groups"][1] == {
            "error_code": NOT_COORDINATOR,
            "group_id": "g-d",
            "group_state": "",
            "protocol_type": "",
            "protocol_data": "",
            "members": [],
            "authorized_operations": -(2**31),
        }
        on_loop(broker, lambda f: f.fail(K.CONSUMER_GROUP_DESCRIBE, NOT_COORDINATOR))
        r = w.request(K.CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": ["g-d"]}).body.to_dict()
        assert r["groups"][0]["error_code"] == NOT_COORDINATOR
        assert (r["groups"][0]["group_id"], r["groups"][0]["members"]) == ("g-d", [])
        on_loop(broker, lambda f: f.fail(K.DELETE_GROUPS, NOT_COORDINATOR, group="g-d"))
        r = w.request(K.DELETE_GROUPS, 2, {"groups_names": ["g-d", "g-x"]}).body.to_dict()
        assert r["results"][0] == {"group_id": "g-d", "error_code": NOT_COORDINATOR}
        assert r["results"][1]["group_id"] == "g-x"


def test_transaction_apis(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w, 2)
        w.request(K.FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": ["tx"]})
        init = {"transactional_id": "tx", "transaction_timeout_ms": 60000}
        on_loop(
            broker, lambda f: f.fail(K.INIT_PRODUCER_ID, NOT_COORDINATOR, transactional_id="tx")
        )
        r = w.request(K.INIT_PRODUCER_ID, 4, init).body.to_dict()
        assert r == {
            "throttle_time_ms": 0,
            "error_code": NOT_COORDINATOR,
            "producer_id": -1,
            "producer_epoch": -1,
        }
        # An idempotent producer's InitProducerId (no transactional id) is not the fault's.
        on_loop(
            broker, lambda f: f.fail(K.INIT_PRODUCER_ID, NOT_COORDINATOR, transactional_id="tx")
        )
        idem = w.request(
            K.INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": 1}
        )
        assert idem.body.error_code == 0
        r = w.request(K.INIT_PRODUCER_ID, 4, init).body
        assert r.error_code == NOT_COORDINATOR
        r = w.request(K.INIT_PRODUCER_ID, 4, init).body
        assert r.error_code == 0
        pid, epoch = r.producer_id, r.producer_epoch
        add_v3 = {
            "v3_and_below_transactional_id": "tx",
            "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch,
            "v3_and_below_topics": [{"name": name, "partitions": [0, 1]}],
        }
        on_loop(
            broker,
            lambda f: f.fail(K.ADD_PARTITIONS_TO_TXN, NOT_COORDINATOR, topic=name, partition=1),
        )
        r = w.request(K.ADD_PARTITIONS_TO_TXN, 3, add_v3).body.to_dict()
        assert r["results_by_topic_v3_and_below"] == [
            {
                "name": name,
                "results_by_partition": [
                    {"partition_index": 0, "partition_error_code": 0},
                    {"partition_index": 1, "partition_error_code": NOT_COORDINATOR},
                ],
            }
        ]
        add_v4 = {
            "transactions": [
                {
                    "transactional_id": "tx",
                    "producer_id": pid,
                    "producer_epoch": epoch,
                    "verify_only": False,
                    "topics": [{"name": name, "partitions": [1]}],
                }
            ]
        }
        on_loop(
            broker,
            lambda f: f.fail(K.ADD_PARTITIONS_TO_TXN, NOT_COORDINATOR, transactional_id="tx"),
        )
        r = w.request(K.ADD_PARTITIONS_TO_TXN, 4, add_v4).body.to_dict()
        assert r["error_code"] == 0
        assert r["results_by_transaction"] == [
            {
                "transactional_id": "tx",
                "topic_results": [
                    {
                        "name": name,
                        "results_by_partition": [
                            {"partition_index": 1, "partition_error_code": NOT_COORDINATOR}
                        ],
                    }
                ],
            }
        ]
        on_loop(broker, lambda f: f.fail(K.ADD_PARTITIONS_TO_TXN, NOT_COORDINATOR))
        r = w.request(K.ADD_PARTITIONS_TO_TXN, 4, add_v4).body.to_dict()
        assert (r["error_code"], r["results_by_transaction"]) == (NOT_COORDINATOR, [])
        offsets = {
            "transactional_id": "tx",
            "producer_id": pid,
            "producer_epoch": epoch,
            "group_id": "g-tx",
        }
        on_loop(broker, lambda f: f.fail(K.ADD_OFFSETS_TO_TXN, NOT_COORDINATOR, group="g-tx"))
        assert w.request(K.ADD_OFFSETS_TO_TXN, 3, offsets).body.error_code == NOT_COORDINATOR
        assert w.request(K.ADD_OFFSETS_TO_TXN, 3, offsets).body.error_code == 0
        w.request(K.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g-tx"]})
        commit = {
            "transactional_id": "tx",
            "group_id": "g-tx",
            "producer_id": pid,
            "producer_epoch": epoch,
            "topics": [
                {
                    "name": name,
                    "partitions": [
                        {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}
                    ],
                }
            ],
        }
        on_loop(broker, lambda f: f.fail(K.TXN_OFFSET_COMMIT, NOT_COORDINATOR, group="g-tx"))
        r = w.request(K.TXN_OFFSET_COMMIT, 3, commit).body.to_dict()
        assert r["topics"][0]["partitions"] == [
            {"partition_index": 0, "error_code": NOT_COORDINATOR}
        ]
        end = {
            "transactional_id": "tx",
            "producer_id": pid,
            "producer_epoch": epoch,
            "committed": False,
        }
        on_loop(broker, lambda f: f.fail(K.END_TXN, NOT_COORDINATOR))
        assert w.request(K.END_TXN, 3, end).body.to_dict() == {
            "throttle_time_ms": 0,
            "error_code": NOT_COORDINATOR,
        }
        assert w.request(K.END_TXN, 3, end).body.error_code == 0


def test_admin_apis(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        keep = topic(w)
        name = f"faults-{uuid.uuid4().hex[:8]}"
        body = {
            "topics": [
                {
                    "name": n,
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "assignments": [],
                    "configs": [],
                }
                for n in (name, f"{name}-b")
            ],
            "timeout_ms": 5000,
        }
        on_loop(broker, lambda f: f.fail(K.CREATE_TOPICS, errors.NotController.code, topic=name))
        r = w.request(K.CREATE_TOPICS, 7, body).body.to_dict()
        refused = r["topics"][0]
        assert (refused["name"], refused["error_code"], refused["num_partitions"]) == (
            name,
            errors.NotController.code,
            -1,
        )
        assert (refused["replication_factor"], refused["configs"]) == (-1, None)
        assert r["topics"][1]["error_code"] == 0
        assert broker.state is not None
        assert name not in broker.state.topics.by_name
        on_loop(broker, lambda f: f.fail(K.DELETE_TOPICS, errors.NotController.code, topic=keep))
        r = w.request(K.DELETE_TOPICS, 5, {"topic_names": [keep, f"{name}-b"], "timeout_ms": 5000})
        assert [(t.name, t.error_code) for t in r.body.responses] == [
            (keep, errors.NotController.code),
            (f"{name}-b", 0),
        ]
        tid = broker.state.topics.by_name[keep].id
        on_loop(broker, lambda f: f.fail(K.DELETE_TOPICS, errors.NotController.code, topic=keep))
        r = w.request(
            K.DELETE_TOPICS, 6, {"topics": [{"name": None, "topic_id": tid}], "timeout_ms": 5000}
        )
        t = r.body.responses[0]
        assert (t.name, t.topic_id, t.error_code) == (keep, tid, errors.NotController.code)
        assert keep in broker.state.topics.by_name
        on_loop(
            broker, lambda f: f.fail(K.DESCRIBE_CONFIGS, errors.UnknownServerError.code, topic=keep)
        )
        dc = {
            "resources": [
                {
                    "resource_type": 4,
                    "resource_name": "1",
                    "configuration_keys": ["log.retention.ms"],
                },
                {"resource_type": 2, "resource_name": keep, "configuration_keys": None},
            ]
        }
        r = w.request(K.DESCRIBE_CONFIGS, 4, dc).body.to_dict()
        assert r["results"][0]["error_code"] == 0
        assert r["results"][1] == {
            "error_code": errors.UnknownServerError.code,
            "error_message": errors.UnknownServerError.message,
            "resource_type": 2,
            "resource_name": keep,
            "configs": [],
        }
        # ApiVersions: UNSUPPORTED_VERSION lists ApiVersions' own versions (KIP-511).
        on_loop(broker, lambda f: f.fail(K.API_VERSIONS, errors.UnsupportedVersion.code))
        r = w.request(
            K.API_VERSIONS, 3, {"client_software_name": "w", "client_software_version": "1"}
        )
        assert r.body.error_code == errors.UnsupportedVersion.code
        assert [k.api_key for k in r.body.api_keys] == [K.API_VERSIONS]


# -- timing faults on the wire ----------------------------------------------------------------

API_VERSIONS_V3 = {"client_software_name": "wire", "client_software_version": "1"}


def test_delay_keeps_a_connections_order_and_ends_after_times(broker: Broker) -> None:
    on_loop(broker, lambda f: f.delay(0.3, K.API_VERSIONS, times=1))
    with Wire(broker.bootstrap_servers) as w:
        # Pipelined: the delayed answer holds back the one after it, as Kafka's clients need.
        w.send(protocol.encode_request(K.API_VERSIONS, 3, 1, "w", API_VERSIONS_V3))
        w.send(protocol.encode_request(K.METADATA, 12, 2, "w", {"topics": []}))
        started = time.monotonic()
        first = protocol.decode_response(K.API_VERSIONS, 3, read_frame(w.sock))
        took = time.monotonic() - started
        second = protocol.decode_response(K.METADATA, 12, read_frame(w.sock))
        assert (first.correlation_id, second.correlation_id) == (1, 2)
        assert 0.25 <= took < 2
        started = time.monotonic()
        w.request(K.API_VERSIONS, 3, API_VERSIONS_V3)
        assert time.monotonic() - started < 0.2
    assert on_loop(broker, lambda f: f.active()) == []


def test_disconnect_after_n_requests_closes_that_connection_unanswered(broker: Broker) -> None:
    fid = on_loop(broker, lambda f: f.disconnect(after=2, api_key=K.API_VERSIONS))
    assert on_loop(broker, lambda f: f.active()) == [
        {"id": fid, "kind": "disconnect", "api_key": K.API_VERSIONS, "after": 2}
    ]
    with Wire(broker.bootstrap_servers) as w:
        w.request(K.METADATA, 12, {"topics": []})  # not of that api: not counted
        w.request(K.API_VERSIONS, 3, API_VERSIONS_V3)
        w.send(protocol.encode_request(K.API_VERSIONS, 3, 9, "w", API_VERSIONS_V3))
        assert w.closed_by_peer(5)
    with Wire(broker.bootstrap_servers) as a, Wire(broker.bootstrap_servers) as b:
        a.request(K.API_VERSIONS, 3, API_VERSIONS_V3)
        b.request(K.API_VERSIONS, 3, API_VERSIONS_V3)
        assert on_loop(broker, lambda f: f.disconnect()) >= 2
        assert a.closed_by_peer(5) and b.closed_by_peer(5)
    assert on_loop(broker, lambda f: f.active()) == []


def test_a_paused_broker_reads_and_answers_nothing_until_resumed(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as old:
        old.request(K.API_VERSIONS, 3, API_VERSIONS_V3)
        on_loop(broker, lambda f: f.pause())
        old.send(protocol.encode_request(K.API_VERSIONS, 3, 7, "w", API_VERSIONS_V3))
        with Wire(broker.bootstrap_servers, timeout=0.5) as new:
            # Accepted (by the kernel, or the loop) but not served.
            new.send(protocol.encode_request(K.API_VERSIONS, 3, 1, "w", API_VERSIONS_V3))
            for w in (old, new):
                w.sock.settimeout(0.5)
                with pytest.raises(TimeoutError):
                    w.sock.recv(1)
            assert on_loop(broker, lambda f: f.active())[0]["kind"] == "pause"
            on_loop(broker, lambda f: f.resume())
            for w, cid in ((old, 7), (new, 1)):
                w.sock.settimeout(5)
                r = protocol.decode_response(K.API_VERSIONS, 3, read_frame(w.sock))
                assert (r.correlation_id, r.body.error_code) == (cid, 0)


def test_a_paused_broker_stops(tmp_path) -> None:
    with run_broker(tmp_path / "data") as b:
        with Wire(b.bootstrap_servers) as w:
            on_loop(b, lambda f: f.pause())
            w.send(protocol.encode_request(K.API_VERSIONS, 3, 1, "w", API_VERSIONS_V3))
            on_loop(b, lambda f: f.move_coordinator(seconds=30))
            started = time.monotonic()
    assert time.monotonic() - started < 5


# -- the group coordinator moving ---------------------------------------------------------------


def test_move_coordinator_unloads_then_loads_from_the_log(broker: Broker) -> None:
    assert broker.state is not None
    groups = broker.state.groups
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w)
        w.request(K.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g-move"]})
        commit = {
            "group_id": "g-move",
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "topics": [
                {
                    "name": name,
                    "partitions": [
                        {"partition_index": 0, "committed_offset": 42, "committed_metadata": ""}
                    ],
                }
            ],
        }
        assert w.request(K.OFFSET_COMMIT, 8, commit).body.topics[0].partitions[0].error_code == 0
        fid = on_loop(broker, lambda f: f.move_coordinator("g-move", seconds=30))
        partition = groups.coordinator.partition_for("g-move")
        assert on_loop(broker, lambda f: f.active())[0]["partitions"] == [partition]
        fetch = {"group_id": "g-move", "topics": [{"name": name, "partition_indexes": [0]}]}
        assert w.request(K.OFFSET_FETCH, 7, fetch).body.error_code == NOT_COORDINATOR
        hb = {"group_id": "g-move", "generation_id": 1, "member_id": "m"}
        assert w.request(K.HEARTBEAT, 4, hb).body.error_code == NOT_COORDINATOR
        # FindCoordinator still names this broker.
        r = w.request(K.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g-move"]})
        assert r.body.coordinators[0].error_code == 0
        # Another partition's groups are served.
        other = next(
            g
            for g in (f"g-{i}" for i in range(100))
            if groups.coordinator.partition_for(g) != partition
        )
        assert (
            w.request(K.HEARTBEAT, 4, {**hb, "group_id": other}).body.error_code != NOT_COORDINATOR
        )

        # Removed: the partition loads (COORDINATOR_LOAD_IN_PROGRESS meanwhile; a Heartbeat
        # is answered blindly, as Kafka's classic coordinator does), then the commit made
        # before the move is read back from __consumer_offsets.
        frames = [
            protocol.encode_request(K.OFFSET_FETCH, 7, 1, "w", fetch)[4:],
            protocol.encode_request(K.HEARTBEAT, 4, 2, "w", hb)[4:],
        ]

        def come_back(f: Faults) -> list[int]:
            f.remove(fid)
            codes = []
            for api, version, frame in zip(
                (K.OFFSET_FETCH, K.HEARTBEAT), (7, 4), frames, strict=True
            ):
                answer = groups.handle_frame(frame, "/127.0.0.1")
                assert isinstance(answer, bytes)
                codes.append(protocol.decode_response(api, version, answer[4:]).body.error_code)
            return codes

        assert on_loop(broker, come_back) == [errors.CoordinatorLoadInProgress.code, 0]
        deadline = time.monotonic() + 5
        while True:
            r = w.request(K.OFFSET_FETCH, 7, fetch).body
            if r.error_code == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert r.error_code == 0
        assert r.topics[0].partitions[0].committed_offset == 42
    assert on_loop(broker, lambda f: f.active()) == []


def test_move_coordinator_ends_by_itself(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        w.request(K.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g-self"]})
        on_loop(broker, lambda f: f.move_coordinator(seconds=0.3))
        hb = {"group_id": "g-self", "generation_id": 1, "member_id": "m"}
        assert w.request(K.HEARTBEAT, 4, hb).body.error_code == NOT_COORDINATOR
        time.sleep(0.6)
        assert on_loop(broker, lambda f: f.active()) == []
        assert w.request(K.HEARTBEAT, 4, hb).body.error_code == errors.UnknownMemberId.code


# -- real clients ---------------------------------------------------------------------------


def records(w: Wire, name: str, partition: int = 0) -> list[bytes]:
    """Every record value of a partition, in offset order."""
    body = fetch_body(name, [partition])
    f = w.request(K.FETCH, 12, body).body.responses[0].partitions[0]
    assert f.error_code == 0
    return [r.value for b in decode_batches(f.records) for r in b.records]


def idempotent_producer(broker: Broker, **extra: Any) -> Any:
    from confluent_kafka import Producer

    return Producer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 2,
            "retry.backoff.ms": 50,
            "reconnect.backoff.ms": 50,
            "reconnect.backoff.max.ms": 200,
            "topic.metadata.refresh.interval.ms": 500,
            **extra,
        }
    )


def send(producer: Any, name: str, values: list[bytes]) -> list[str]:
    """Produce ``values`` to partition 0; the delivery errors (filled in as they come)."""
    failures: list[str] = []

    def done(err: Any, msg: Any) -> None:
        if err is not None:
            failures.append(str(err))

    for v in values:
        producer.produce(name, value=v, partition=0, on_delivery=done)
        producer.poll(0)
    return failures


def test_an_idempotent_producer_retries_a_timed_out_produce_without_duplicates(
    broker: Broker,
) -> None:
    # Kafka answers REQUEST_TIMED_OUT when acks=all times out after the leader appended; the
    # producer's retry is a duplicate, which the log answers with the first write's offsets.
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w)
        on_loop(broker, lambda f: f.fail(K.PRODUCE, TIMED_OUT, topic=name, times=3, handled=True))
        p = idempotent_producer(broker)
        values = [b"v%d" % i for i in range(20)]
        failures = send(p, name, values)
        assert p.flush(20) == 0
        assert not failures, failures
        assert on_loop(broker, lambda f: f.active()) == []
        assert records(w, name) == values


def test_a_consumer_group_keeps_consuming_after_its_coordinator_moves(broker: Broker) -> None:
    from confluent_kafka import Consumer

    with Wire(broker.bootstrap_servers) as w:
        name = topic(w)
        p = idempotent_producer(broker)
        send(p, name, [b"a%d" % i for i in range(10)])
        assert p.flush(10) == 0
        c = Consumer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "group.id": f"g-{name}",
                "auto.offset.reset": "earliest",
                # Commits made by hand: an auto-commit refused while the coordinator is away
                # may be retried by librdkafka after a later one.
                "enable.auto.commit": False,
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 200,
                "reconnect.backoff.ms": 50,
            }
        )
        seen: list[bytes] = []
        try:
            c.subscribe([name])
            deadline = time.monotonic() + 20
            while len(seen) < 10 and time.monotonic() < deadline:
                seen += [m.value() for m in c.consume(10, 0.2) if m.error() is None]
            assert len(seen) == 10
            c.commit(asynchronous=False)
            on_loop(broker, lambda f: f.move_coordinator(f"g-{name}", seconds=1.0))
            send(p, name, [b"b%d" % i for i in range(10)])
            assert p.flush(10) == 0
            # Consuming goes on while the coordinator is away and after it is back.
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and (
                len(set(seen)) < 20 or on_loop(broker, lambda f: f.active())
            ):
                seen += [m.value() for m in c.consume(10, 0.2) if m.error() is None]
            send(p, name, [b"c%d" % i for i in range(10)])
            assert p.flush(10) == 0
            while len(set(seen)) < 30 and time.monotonic() < deadline:
                seen += [m.value() for m in c.consume(10, 0.2) if m.error() is None]
            assert set(seen) == {b"%s%d" % (x, i) for x in (b"a", b"b", b"c") for i in range(10)}
            # The member still has its assignment and commits to the coordinator come back.
            assert [tp.partition for tp in c.assignment()] == [0]
            c.commit(asynchronous=False)
            fetch = {"group_id": f"g-{name}", "topics": [{"name": name, "partition_indexes": [0]}]}
            r = w.request(K.OFFSET_FETCH, 7, fetch).body
            assert (r.error_code, r.topics[0].partitions[0].committed_offset) == (0, 30)
        finally:
            c.close()


def test_a_paused_broker_makes_a_producer_wait_then_deliver_everything(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w)
        p = idempotent_producer(broker, **{"socket.timeout.ms": 30000})
        send(p, name, [b"x"])
        assert p.flush(10) == 0
        on_loop(broker, lambda f: f.pause())
        values = [b"v%d" % i for i in range(10)]
        failures = send(p, name, values)
        assert p.flush(1.0) > 0  # nothing answered while paused
        on_loop(broker, lambda f: f.resume())
        assert p.flush(20) == 0
        assert not failures, failures
        assert records(w, name) == [b"x", *values]


def test_a_leaderless_partition_makes_a_producer_wait_for_its_leader(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w)
        p = idempotent_producer(broker)
        send(p, name, [b"x"])
        assert p.flush(10) == 0
        on_loop(broker, lambda f: f.leaderless(name, 0, seconds=1.5))
        values = [b"v%d" % i for i in range(5)]
        failures = send(p, name, values)
        assert p.flush(0.8) > 0
        assert p.flush(20) == 0
        assert not failures, failures
        assert records(w, name) == [b"x", *values]


def test_clients_reconnect_after_their_connections_are_closed(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w)
        p = idempotent_producer(broker)
        send(p, name, [b"x"])
        assert p.flush(10) == 0
        on_loop(broker, lambda f: f.disconnect(after=1, api_key=K.PRODUCE))
        first = [b"a%d" % i for i in range(5)]
        failures = send(p, name, first)
        assert p.flush(20) == 0
        assert on_loop(broker, lambda f: f.active()) == []
        assert on_loop(broker, lambda f: f.disconnect()) >= 1
        second = [b"b%d" % i for i in range(5)]
        failures += send(p, name, second)
        assert p.flush(20) == 0
        assert not failures, failures
    with Wire(broker.bootstrap_servers) as w:  # the first was closed too
        assert records(w, name) == [b"x", *first, *second]


def test_delay_adds_latency_to_a_producer(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = topic(w)
        p = idempotent_producer(broker, **{"linger.ms": 0})
        send(p, name, [b"x"])
        assert p.flush(10) == 0
        started = time.monotonic()
        send(p, name, [b"y"])
        assert p.flush(10) == 0
        quick = time.monotonic() - started
        on_loop(broker, lambda f: f.delay(0.4, K.PRODUCE))
        started = time.monotonic()
        send(p, name, [b"z"])
        assert p.flush(10) == 0
        slow = time.monotonic() - started
        # (asyncio's timers may fire a little early by the monotonic clock).
        assert slow >= 0.38 and quick < 0.3
        assert records(w, name) == [b"x", b"y", b"z"]


# -- beside Apache Kafka ----------------------------------------------------------------------


def test_partition_errors_are_shaped_as_apache_kafkas(broker: Broker, kafka: Any) -> None:
    # Kafka answers a partition its topic lacks with UNKNOWN_TOPIC_OR_PARTITION through the
    # same per-partition error values the fault engine writes (base offset -1, high watermark
    # -1, ...): the fault's answer for an existing partition must read the same.
    code = errors.UnknownTopicOrPartition.code
    name = f"faults-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(1, name=name)
    with Wire(broker.bootstrap_servers) as ours, Wire(kafka.bootstrap) as theirs:
        ours.request(
            K.CREATE_TOPICS,
            5,
            {
                "topics": [
                    {
                        "name": name,
                        "num_partitions": 1,
                        "replication_factor": 1,
                        "assignments": [],
                        "configs": [],
                    }
                ],
                "timeout_ms": 5000,
            },
        )
        theirs_id = (
            theirs.request(K.METADATA, 12, {"topics": [{"name": name}]}).body.topics[0].topic_id
        )
        assert broker.state is not None
        ours_id = broker.state.topics.by_name[name].id
        cases: list[
            tuple[int, int, Callable[[int, uuid.UUID], dict[str, Any]], Callable[[Any], Any]]
        ] = [
            (
                K.PRODUCE,
                9,
                lambda p, _: produce_body(name, [p]),
                lambda b: b.responses[0].partition_responses[0],
            ),
            (
                K.PRODUCE,
                11,
                lambda p, _: produce_body(name, [p]),
                lambda b: b.responses[0].partition_responses[0],
            ),
            (
                K.FETCH,
                12,
                lambda p, _: fetch_body(name, [p]),
                lambda b: b.responses[0].partitions[0],
            ),
            (
                K.FETCH,
                16,
                lambda p, tid: fetch_body(name, [p], tid),
                lambda b: b.responses[0].partitions[0],
            ),
            (
                K.LIST_OFFSETS,
                7,
                lambda p, _: {
                    "replica_id": -1,
                    "topics": [
                        {"name": name, "partitions": [{"partition_index": p, "timestamp": -1}]}
                    ],
                },
                lambda b: b.topics[0].partitions[0],
            ),
            (
                K.OFFSET_FOR_LEADER_EPOCH,
                4,
                lambda p, _: {
                    "topics": [{"topic": name, "partitions": [{"partition": p, "leader_epoch": 0}]}]
                },
                lambda b: b.topics[0].partitions[0],
            ),
            (
                K.DELETE_RECORDS,
                2,
                lambda p, _: {
                    "topics": [{"name": name, "partitions": [{"partition_index": p, "offset": 0}]}],
                    "timeout_ms": 5000,
                },
                lambda b: b.topics[0].partitions[0],
            ),
        ]
        for api, version, body, entry in cases:
            want = entry(theirs.request(api, version, body(7, theirs_id)).body).to_dict()
            on_loop(broker, lambda f, api=api: f.fail(api, code, topic=name, partition=0))
            got = entry(ours.request(api, version, body(0, ours_id)).body).to_dict()
            for key in ("index", "partition_index", "partition"):
                if key in want:
                    want[key] = 0
            assert got == want, (protocol.API_NAMES[api], version)


def test_find_coordinator_errors_are_shaped_as_apache_kafkas(broker: Broker, kafka: Any) -> None:
    # Kafka answers an unknown key type with its getErrorResponse (INVALID_REQUEST): per key
    # from v4 (Node.noNode() and the error's message), at the top before.
    code = errors.InvalidRequest.code
    with Wire(broker.bootstrap_servers) as ours, Wire(kafka.bootstrap) as theirs:
        for version, body in (
            (3, {"key": "g-kafka", "key_type": 0}),
            (4, {"key_type": 0, "coordinator_keys": ["g-kafka", "g-other"]}),
        ):
            want = theirs.request(K.FIND_COORDINATOR, version, {**body, "key_type": 9}).body
            on_loop(broker, lambda f: f.fail(K.FIND_COORDINATOR, code))
            got = ours.request(K.FIND_COORDINATOR, version, body).body
            assert got.to_dict() == want.to_dict(), version


def test_kafka_python_retries_a_refused_produce_once_appended(broker: Broker) -> None:
    # A refused partition is not appended: a producer without idempotence retrying it writes
    # each record once.
    from kafka import KafkaProducer

    with Wire(broker.bootstrap_servers) as w:
        name = topic(w)
        on_loop(broker, lambda f: f.fail(K.PRODUCE, NOT_LEADER, topic=name, times=2))
        p = KafkaProducer(
            bootstrap_servers=broker.bootstrap_servers,
            acks=1,
            retries=5,
            retry_backoff_ms=50,
            # One batch at a time: a retried batch is not overtaken (no reordering to allow for).
            max_in_flight_requests_per_connection=1,
        )
        try:
            futures = [p.send(name, b"v%d" % i, partition=0) for i in range(5)]
            p.flush(20)
            assert [f.get(10).offset for f in futures] == list(range(5))
        finally:
            p.close(5)
        assert on_loop(broker, lambda f: f.active()) == []
        assert records(w, name) == [b"v%d" % i for i in range(5)]
