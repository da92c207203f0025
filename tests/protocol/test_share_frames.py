"""Share groups' (KIP-932) frames from real peers are the declarations' truth.

The committed frames (``share_frames/<client>/<Api>-v<N>-<i>.{request,response}.bin``) are what
Kafka's Java clients (a KafkaShareConsumer and the Admin's share group calls) and librdkafka's
share consumer sent Apache Kafka 4.4, and what it answered, recorded by
``support/share_capture.py``. Each decodes and encodes back to the very same bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.share_capture import FRAMES, SHARE_APIS
from support.wire import reencode

from kgroup import protocol

REQUESTS = sorted(FRAMES.glob("*/*.request.bin"))


def key_of(path: Path) -> tuple[int, int]:
    """The api key and version a frame's name states."""
    api, version, _ = path.name.split(".")[0].split("-")
    keys = {name: key for key, name in protocol.API_NAMES.items()}
    return keys[api], int(version.removeprefix("v"))


def response_of(path: Path) -> Path:
    return path.with_name(path.name.replace(".request.bin", ".response.bin"))


@pytest.mark.parametrize("path", REQUESTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_share_request_and_response_decode_and_re_encode(path: Path) -> None:
    api_key, version = key_of(path)
    frame = path.read_bytes()
    request = protocol.decode_request(frame)
    assert (request.api_key, request.api_version) == (api_key, version)
    again = reencode(request)
    assert again[4:] == frame
    answer = response_of(path).read_bytes()
    response = protocol.decode_response(api_key, version, answer)
    assert response.correlation_id == request.correlation_id
    header = protocol.RequestHeader(api_key, version, request.correlation_id)
    out = protocol.encode_response(header, response.body, tagged_fields=response.tagged_fields)
    assert out[4:] == answer


def test_share_frames_cover_every_share_api_and_each_clients_versions() -> None:
    by_client: dict[str, set[tuple[int, int]]] = {}
    for path in REQUESTS:
        by_client.setdefault(path.parent.name, set()).add(key_of(path))
        assert response_of(path).exists(), path
    assert {key for found in by_client.values() for key, _ in found} == SHARE_APIS
    # Kafka 4.4's Java clients speak the newest versions (reference §0.2): ShareFetch and
    # ShareAcknowledge v2, DescribeShareGroupOffsets v1.
    assert by_client["java"] == {(76, 1), (77, 1), (78, 2), (79, 2), (90, 1), (91, 0), (92, 0)}
    # librdkafka 2.15's share consumer speaks v1 of each of its three apis only.
    assert by_client["librdkafka"] == {(76, 1), (78, 1), (79, 1)}


def test_a_real_share_fetch_answer_holds_acquired_records() -> None:
    """The frames are a real conversation: some ShareFetch answer carries records, and the
    offsets the member acquired with their delivery counts (reference §1.5)."""
    acquired = []
    for path in FRAMES.glob("*/ShareFetch-*.response.bin"):
        _, version = key_of(path)
        body = protocol.decode_response(78, version, path.read_bytes()).body
        assert body.error_code == 0
        assert body.acquisition_lock_timeout_ms == 30000
        for topic in body.responses:
            for p in topic.partitions:
                assert p.records is not None
                acquired += [
                    (a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records
                ]
    assert acquired and all(first <= last and count >= 1 for first, last, count in acquired)


def test_describe_share_group_offsets_v0_is_v1_without_the_lag() -> None:
    """No client of the capture sends DescribeShareGroupOffsets v0 (Kafka 4.1's): its request is
    v1's, and its answer v1's without each partition's lag (KIP-1226), an ignorable field, so
    Kafka's v1 answer written at v0 drops 8 bytes a partition and reads back without it."""
    (path,) = FRAMES.glob("java/DescribeShareGroupOffsets-v1-*.request.bin")
    request = protocol.decode_request(path.read_bytes())
    body_v1 = protocol.encode_body(90, 1, request.body, request=True)
    assert protocol.encode_body(90, 0, request.body, request=True) == body_v1
    answer = protocol.decode_response(90, 1, response_of(path).read_bytes()).body
    v1 = protocol.encode_body(90, 1, answer, request=False)
    v0 = protocol.encode_body(90, 0, answer, request=False)
    partitions = [p for g in answer.groups for t in g.topics for p in t.partitions]
    assert partitions and all("lag" in p for p in partitions)
    assert len(v1) - len(v0) == 8 * len(partitions)
    again = protocol.decode_body(90, 0, v0, request=False)
    read = [p for g in again.groups for t in g.topics for p in t.partitions]
    assert len(read) == len(partitions) and not any("lag" in p for p in read)
    assert protocol.encode_body(90, 0, again, request=False) == v0
