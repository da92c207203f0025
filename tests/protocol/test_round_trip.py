"""Property tests for every api, version and direction, with values drawn by hypothesis from
the definitions themselves: decode(encode(x)) == x, and the computed size is the encoded length.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.bodies import TEXT, body_of, flexible

from kgroup import protocol
from kgroup.errors import InvalidArgument, InvalidType

CASES = [
    (d["api_key"], v, d["type"] == "request", d["name"])
    for d in protocol.definitions()
    if d["type"] in ("request", "response")
    for v in range(
        protocol.API_VERSIONS[d["api_key"]][0], protocol.API_VERSIONS[d["api_key"]][1] + 1
    )
]


@pytest.mark.parametrize(
    ("api_key", "version", "request_", "name"), CASES, ids=[f"{c[3]}-v{c[1]}" for c in CASES]
)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_body_round_trips(api_key: int, version: int, request_: bool, name: str, data) -> None:
    body = data.draw(body_of(name, version))
    encoded = protocol.encode_body(api_key, version, body, request=request_)
    assert protocol.body_size(api_key, version, body, request=request_) == len(encoded)
    decoded = protocol.decode_body(api_key, version, encoded, request=request_)
    assert decoded == body
    # Plain values are written by the direct encoder, views from their value tree, and response
    # bodies in whole frames from a value tree built from the plain values: all write the same.
    assert protocol.encode_body(api_key, version, decoded, request=request_) == encoded
    if not request_:
        header = protocol.RequestHeader(api_key, version, 7)
        frame = protocol.encode_response(header, body)
        header_size = 4 + (protocol.response_header_version(api_key, version) == 1)
        assert frame[4 + header_size :] == encoded


def test_every_api_and_version_is_covered() -> None:
    assert len(protocol.API_VERSIONS) == 54
    expected = sum(hi - lo + 1 for lo, hi in protocol.API_VERSIONS.values()) * 2
    assert len(CASES) == expected


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(sorted(protocol.API_VERSIONS)),
    correlation_id=st.integers(-(2**31), 2**31 - 1),
    client_id=st.none() | TEXT,
    data=st.data(),
)
def test_frames_round_trip(key: int, correlation_id: int, client_id, data) -> None:
    lo, hi = protocol.API_VERSIONS[key]
    v = data.draw(st.integers(lo, hi))
    name = protocol.API_NAMES[key]
    req = data.draw(body_of(name + "Request", v))
    frame = protocol.encode_request(key, v, correlation_id, client_id, req)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    decoded = protocol.decode_request(frame[4:])
    assert (decoded.api_key, decoded.api_version) == (key, v)
    assert (decoded.correlation_id, decoded.client_id, decoded.body) == (
        correlation_id,
        client_id,
        req,
    )
    # The header is v2 exactly when the request version is flexible.
    header = protocol.decode_request_header(frame[4:])
    header_version = protocol.request_header_version(key, v)
    assert header_version == (2 if flexible(name + "Request", v) else 1)
    assert header.size == 10 + len((client_id or "").encode()) + (header_version == 2)

    resp = data.draw(body_of(name + "Response", v))
    out = protocol.encode_response(decoded, resp)
    back = protocol.decode_response(key, v, out[4:])
    assert (back.correlation_id, back.api_version, back.body) == (correlation_id, v, resp)


def test_api_versions_response_header_is_always_v0() -> None:
    # KIP-511: even the flexible ApiVersions v3/v4 response has no tagged fields in its header.
    request = protocol.decode_request(
        protocol.encode_request(18, 3, 9, "c", {"client_software_name": "x"})[4:]
    )
    out = protocol.encode_response(request, {"error_code": 0, "api_keys": []})
    # size, correlation id, then straight into the body: error_code, compact array (empty).
    assert out == b"\x00\x00\x00\x0c" + b"\x00\x00\x00\x09" + b"\x00\x00" + b"\x01" + b"\x00" * 5
    assert protocol.response_header_version(18, 3) == 0
    assert protocol.response_header_version(11, 6) == 1
    assert protocol.response_header_version(11, 5) == 0


def test_api_versions_answer_to_an_unknown_version_reads_as_v0() -> None:
    # A v4 client meets a broker that only speaks v0-2: the broker answers with a v0 body and
    # UNSUPPORTED_VERSION (35); the client reads it as v0 (Kafka's ApiVersionsResponse.parse).
    header = protocol.RequestHeader(api_key=18, api_version=4, correlation_id=3, client_id="c")
    body = {"error_code": 35, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 2}]}
    out = protocol.encode_response(header, body, version=0)
    back = protocol.decode_response(18, 4, out[4:])
    assert back.api_version == 0
    assert back.body == body


def test_defaults_fill_missing_fields() -> None:
    out = protocol.encode_body(11, 5, {"group_id": "g", "protocol_type": "consumer"}, request=True)
    body = protocol.decode_body(11, 5, out, request=True)
    assert body == {
        "group_id": "g",
        "session_timeout_ms": 0,
        "rebalance_timeout_ms": -1,  # JoinGroupRequest.json: "default": "-1"
        "member_id": "",
        "group_instance_id": None,  # "default": "null"
        "protocol_type": "consumer",
        "protocols": [],
    }


def test_tagged_fields_are_sent_only_when_not_default() -> None:
    base = {"error_code": 0, "api_keys": [], "throttle_time_ms": 0}
    plain = protocol.encode_body(18, 3, base, request=False)
    with_epoch = protocol.encode_body(18, 3, {**base, "finalized_features_epoch": 5}, request=False)
    assert plain.endswith(b"\x00")  # empty tagged section
    assert with_epoch.endswith(b"\x01\x01\x08" + (5).to_bytes(8, "big"))
    body = protocol.decode_body(18, 3, with_epoch, request=False)
    assert body["finalized_features_epoch"] == 5
    assert body["zk_migration_ready"] is False


def test_unknown_tagged_fields_round_trip() -> None:
    body = {"group_id": "g", "unknown_tagged_fields": {7: b"\x01\x02", 99: b""}}
    out = protocol.encode_body(12, 4, body, request=True)
    back = protocol.decode_body(12, 4, out, request=True)
    assert back["unknown_tagged_fields"] == {7: b"\x01\x02", 99: b""}
    assert protocol.encode_body(12, 4, back, request=True) == out


def test_topic_ids_in_fetch_v13() -> None:
    tid = uuid.UUID("5a5c4b3a-1111-4222-8333-944455556666")
    body = {"topics": [{"topic_id": tid, "partitions": [{"partition": 3, "fetch_offset": 10}]}]}
    out = protocol.encode_body(1, 13, body, request=True)
    assert tid.bytes in out
    back = protocol.decode_body(1, 13, out, request=True)
    assert back["topics"][0]["topic_id"] == tid
    assert "topic" not in back["topics"][0]
    # Names are gone from v13; FetchRequest.json marks `Topic` ignorable, so a name given
    # anyway is dropped rather than refused.
    out2 = protocol.encode_body(
        1, 13, {"topics": [{**body["topics"][0], "topic": "t"}]}, request=True
    )
    assert out2 == out


def test_bad_bodies_are_clear_errors() -> None:
    with pytest.raises(InvalidArgument, match="unknown field 'group_idd'"):
        protocol.encode_body(12, 0, {"group_idd": "g"}, request=True)
    with pytest.raises(InvalidType, match=r"HeartbeatRequest v0: generation_id: expected int"):
        protocol.encode_body(12, 0, {"generation_id": "1"}, request=True)
    with pytest.raises(InvalidArgument, match="generation_id: out of range"):
        protocol.encode_body(12, 0, {"generation_id": 2**31}, request=True)
    with pytest.raises(InvalidArgument, match="member_id: is not nullable in version 0"):
        protocol.encode_body(12, 0, {"member_id": None}, request=True)
    with pytest.raises(InvalidArgument, match="group_instance_id: version 2 has no such field"):
        protocol.encode_body(12, 2, {"group_instance_id": "static-1"}, request=True)
    with pytest.raises(InvalidArgument, match="not supported"):
        protocol.encode_body(12, 5, {}, request=True)
    with pytest.raises(InvalidArgument, match="unknown api key 99"):
        protocol.encode_request(99, 0, 1, None, {})
    with pytest.raises(InvalidType, match=r"topics\[0\]\.partitions\[1\]: expected a dict"):
        protocol.encode_body(
            9, 1, {"topics": [{"name": "t", "partitions": [{}, None]}]}, request=False
        )


def _metadata_partition(p: int) -> dict[str, Any]:
    return {
        "error_code": 0,
        "partition_index": p,
        "leader_id": 1,
        "leader_epoch": 7,
        "replica_nodes": [1, 2, 3],
        "isr_nodes": [1, 2],
        "offline_replicas": [],
    }


def test_dict_key_order_and_key_objects_do_not_matter() -> None:
    # The encoder takes keys in the definition's order, as literal (interned) strings, without
    # hashing; any other order, or keys built at run time, must give the same bytes.
    body = {"topics": [{"name": "t", "partitions": [_metadata_partition(p) for p in range(3)]}]}
    expected = protocol.encode_body(3, 12, body, request=False)
    shuffled = {
        "topics": [
            {
                "partitions": [
                    dict(reversed(list(_metadata_partition(p).items()))) for p in range(3)
                ],
                "name": "t",
            }
        ]
    }
    assert protocol.encode_body(3, 12, shuffled, request=False) == expected
    built = {
        "".join(["top", "ics"]): [
            {"".join(["na", "me"]): "t", "partitions": body["topics"][0]["partitions"]}
        ]
    }
    assert protocol.encode_body(3, 12, built, request=False) == expected


def test_python_code_that_changes_the_body_while_it_is_encoded_is_safe() -> None:
    # A UUID subclass that intercepts reading `int` runs Python code in the middle of encoding; that
    # code empties the dict and the list being walked, and drops the last reference to the
    # next topic. The encoder must not read freed items: it reports the change or finishes with
    # what it still holds.
    ran = []

    def topics() -> list[dict[str, Any]]:
        return [
            {"topic_id": Sly(int=1), "partitions": [{"partition": 0, "fetch_offset": 5}]},
            {"topic_id": uuid.UUID(int=2), "partitions": [{"partition": 1}]},
        ]

    class Sly(uuid.UUID):
        def __getattribute__(self, name: str) -> Any:
            if name == "int" and body["topics"]:
                ran.append(True)
                body["topics"][0].clear()
                body["topics"].clear()
            return super().__getattribute__(name)

    body = {"topics": topics()}
    with pytest.raises((IndexError, InvalidArgument, InvalidType)):
        protocol.encode_body(1, 13, body, request=True)
    assert ran


def test_int_lists_with_other_ints_encode_the_same() -> None:
    # Exact ints take a fast pass; an int subclass half way through a list sends the whole
    # list down the general path, which must write the same bytes as if the fast pass had
    # never started.
    import enum

    class Node(enum.IntEnum):
        TWO = 2

    body = {"topics": [{"name": "t", "partitions": [_metadata_partition(0)]}]}
    expected = protocol.encode_body(3, 12, body, request=False)
    body["topics"][0]["partitions"][0]["replica_nodes"] = [1, Node.TWO, 3]
    assert protocol.encode_body(3, 12, body, request=False) == expected
    body["topics"][0]["partitions"][0]["replica_nodes"] = [1, 2, 2**40]
    with pytest.raises(InvalidArgument, match=r"replica_nodes\[2\]: out of range"):
        protocol.encode_body(3, 12, body, request=False)
