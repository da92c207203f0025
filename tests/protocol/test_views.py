"""Decoded bodies are read-only views: mappings and sequences over the Rust value tree."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping, Sequence

import pytest

from kgroup import protocol
from kgroup.protocol import ArrayView, StructView

METADATA = {
    "throttle_time_ms": 5,
    "brokers": [{"node_id": 1, "host": "b1", "port": 9092, "rack": None}],
    "cluster_id": "c",
    "controller_id": 1,
    "topics": [
        {
            "error_code": 0,
            "name": f"t{i}",
            "topic_id": uuid.UUID(int=i + 1),
            "is_internal": False,
            "partitions": [
                {
                    "error_code": 0,
                    "partition_index": p,
                    "leader_id": 1,
                    "leader_epoch": 3,
                    "replica_nodes": [1, 2],
                    "isr_nodes": [1],
                    "offline_replicas": [],
                }
                for p in range(3)
            ],
            "topic_authorized_operations": -2147483648,
        }
        for i in range(4)
    ],
}


@pytest.fixture
def view() -> StructView:
    data = protocol.encode_body(3, 12, METADATA, request=False)
    return protocol.decode_body(3, 12, data, request=False)


def test_struct_view_is_a_read_only_mapping(view: StructView) -> None:
    assert isinstance(view, Mapping)
    assert view.message == "MetadataResponse" and view.version == 12
    assert list(view) == list(METADATA) == view.keys()
    assert len(view) == 5
    assert view["cluster_id"] == view.cluster_id == view.get("cluster_id") == "c"
    assert "brokers" in view and "nope" not in view and 3 not in view
    assert view.get("nope", 7) == 7
    with pytest.raises(KeyError):
        view["nope"]
    with pytest.raises(AttributeError, match='MetadataResponse v12 has no field "nope"'):
        _ = view.nope
    with pytest.raises(TypeError):
        view["cluster_id"] = "other"  # type: ignore[index]
    assert dict(view.items())["controller_id"] == 1
    assert view.values()[0] == 5


def test_array_view_is_a_read_only_sequence(view: StructView) -> None:
    topics = view["topics"]
    assert isinstance(topics, ArrayView) and isinstance(topics, Sequence)
    assert len(topics) == 4
    assert topics[-1]["name"] == "t3"
    assert [t.name for t in topics[1:3]] == ["t1", "t2"]
    assert [t["name"] for t in topics] == ["t0", "t1", "t2", "t3"]
    with pytest.raises(IndexError):
        topics[4]
    # Arrays of scalars are plain lists; UUIDs are uuid.UUID.
    p = topics[2]["partitions"][1]
    assert p["replica_nodes"] == [1, 2] and type(p["replica_nodes"]) is list
    assert topics[2]["topic_id"] == uuid.UUID(int=3)


def test_views_equal_plain_values(view: StructView) -> None:
    assert view == METADATA
    assert view.to_dict() == METADATA and type(view.to_dict()) is dict
    assert view["topics"] == METADATA["topics"]
    assert view["topics"].to_list() == METADATA["topics"]
    assert view != {**METADATA, "cluster_id": "other"}
    other = protocol.decode_body(
        3, 12, protocol.encode_body(3, 12, view, request=False), request=False
    )
    assert other == view
    assert repr(view).startswith("MetadataResponse({'throttle_time_ms': 5")


def test_views_outlive_their_frame() -> None:
    data = bytearray(protocol.encode_body(3, 12, METADATA, request=False))
    view = protocol.decode_body(3, 12, data, request=False)
    data[:] = b"\x00" * len(data)  # a copied buffer: the view does not see the change
    part = view["topics"][0]["partitions"][0]
    del view
    assert part["replica_nodes"] == [1, 2]


def test_views_encode_at_other_versions_and_inside_dicts(view: StructView) -> None:
    # A view re-encodes at an older version (fields it lacks there must be at their default).
    old = protocol.encode_body(3, 1, {**view.to_dict(), "cluster_id": None}, request=False)
    v1 = protocol.decode_body(3, 1, old, request=False)
    assert v1["topics"][0]["name"] == "t0" and "topic_id" not in v1["topics"][0]
    # Views nested in plain dicts are read like any mapping or sequence.
    body = {"throttle_time_ms": 0, "brokers": view["brokers"], "topics": list(view["topics"])}
    again = protocol.decode_body(
        3, 12, protocol.encode_body(3, 12, body, request=False), request=False
    )
    assert again["topics"] == view["topics"]


def test_decoding_releases_the_gil() -> None:
    # A Metadata response of 200,000 partitions takes a while to decode; another Python thread
    # keeps running meanwhile only if the decoder released the GIL.
    topics = [{**METADATA["topics"][0], "partitions": METADATA["topics"][0]["partitions"] * 2000}]
    data = protocol.encode_body(3, 12, {**METADATA, "topics": topics * 33}, request=False)
    ticks: list[float] = []
    done = threading.Event()

    def tick() -> None:
        while not done.is_set():
            ticks.append(time.perf_counter())

    worker = threading.Thread(target=tick)
    worker.start()
    try:
        time.sleep(0.01)
        start = time.perf_counter()
        protocol.decode_body(3, 12, data, request=False)
        end = time.perf_counter()
    finally:
        done.set()
        worker.join()
    inside = [t for t in ticks if start < t < end]
    # With the GIL held for the whole call, the ticker could not run at all inside it.
    assert len(inside) > 100, (len(inside), end - start)
