"""Raw ShareFetch / ShareAcknowledge requests for the share tests (tests/share/): bodies built
by hand, sent with ``Wire``."""

from __future__ import annotations

import time
import uuid
from typing import Any

from kgroup.protocol import ApiKey
from kgroup.protocol.records import encode_batch

from .kgroup_broker import Wire

GAP, ACCEPT, RELEASE, REJECT = 0, 1, 2, 3
MEMBER_A = "AAAAAAAAAAAAAAAAAAAAAA"
MEMBER_B = "BBBBBBBBBBBBBBBBBBBBBB"


def create(w: Wire, name: str) -> uuid.UUID:
    """Create ``name`` by Metadata (auto-creation) and wait for its id and leader: Kafka
    answers the request that creates it with LEADER_NOT_AVAILABLE and a zero id."""
    deadline = time.monotonic() + 30
    while True:
        t = w.request(ApiKey.METADATA, 12, {"topics": [{"name": name}]}).body.topics[0]
        if t.error_code == 0 and t.topic_id.int and all(p.leader_id >= 0 for p in t.partitions):
            return t.topic_id
        assert time.monotonic() < deadline, t
        time.sleep(0.2)


def produce(w: Wire, name: str, values: list[bytes], batches: int = 1) -> int:
    """Produce ``values`` in ``batches`` batches; the first offset."""
    per = -(-len(values) // batches)
    first = -1
    for i in range(0, len(values), per):
        chunk = values[i : i + per]
        batch = encode_batch([(j, 1000, None, v) for j, v in enumerate(chunk)])
        body = {
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [{"name": name, "partition_data": [{"index": 0, "records": batch}]}],
        }
        p = w.request(ApiKey.PRODUCE, 9, body).body.responses[0].partition_responses[0]
        assert p.error_code == 0
        if first < 0:
            first = p.base_offset
    return first


def set_group_config(w: Wire, group: str, name: str, value: str) -> None:
    body = {
        "resources": [
            {
                "resource_type": 32,
                "resource_name": group,
                "configs": [{"name": name, "config_operation": 0, "value": value}],
            }
        ],
        "validate_only": False,
    }
    r = w.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body)
    assert r.body.responses[0].error_code == 0


def topics(tid: uuid.UUID, acks: dict[int, list[tuple[int, int, list[int]]]]) -> list[dict]:
    return [
        {
            "topic_id": tid,
            "partitions": [
                {
                    "partition_index": index,
                    "acknowledgement_batches": [
                        {"first_offset": f, "last_offset": la, "acknowledge_types": t}
                        for f, la, t in batches
                    ],
                }
                for index, batches in acks.items()
            ],
        }
    ]


def share_fetch_body(
    member: str,
    epoch: int,
    parts: list[dict],
    *,
    group: str = "g",
    max_wait_ms: int = 0,
    max_records: int = 500,
    batch_size: int = 500,
    forgotten: list[dict] | None = None,
) -> dict[str, Any]:
    return {
        "group_id": group,
        "member_id": member,
        "share_session_epoch": epoch,
        "max_wait_ms": max_wait_ms,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "max_records": max_records,
        "batch_size": batch_size,
        "topics": parts,
        "forgotten_topics_data": forgotten or [],
    }


def share_fetch(w: Wire, member: str, epoch: int, parts: list[dict], **kw: Any) -> Any:
    return w.request(ApiKey.SHARE_FETCH, 1, share_fetch_body(member, epoch, parts, **kw)).body


def share_ack(w: Wire, member: str, epoch: int, parts: list[dict], group: str = "g") -> Any:
    body = {
        "group_id": group,
        "member_id": member,
        "share_session_epoch": epoch,
        "topics": parts,
    }
    return w.request(ApiKey.SHARE_ACKNOWLEDGE, 1, body).body
