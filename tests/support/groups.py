"""Group requests by hand, for tests that must do what real clients never do on purpose (commit
with an old generation, hold a JoinGroup open), and Kafka's ``__consumer_offsets`` record
schemas read back independently of kgroup's own codec (from Kafka 3.9's
``group-coordinator/src/main/resources/common/message/{OffsetCommit,GroupMetadata}{Key,
Value}.json``)."""

from __future__ import annotations

import struct
import time
from collections.abc import Sequence
from typing import Any

from kgroup import errors, protocol
from kgroup.assignors import Subscription
from kgroup.assignors.consumer_protocol import encode_subscription
from kgroup.group import partition_for
from kgroup.protocol import ApiKey

from .kgroup_broker import Wire
from .wire import read_frame

SESSION_MS = 6000


def join_body(
    group: str, member_id: str = "", topics: Sequence[str] = ("t",), rebalance_ms: int = 10_000
) -> dict[str, Any]:
    """A consumer's JoinGroup (v5 fields) with one ``range`` protocol."""
    return {
        "group_id": group,
        "session_timeout_ms": SESSION_MS,
        "rebalance_timeout_ms": rebalance_ms,
        "member_id": member_id,
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [
            {"name": "range", "metadata": encode_subscription(Subscription(list(topics)), 0)}
        ],
    }


def join(w: Wire, group: str, member_id: str = "", **kw: Any) -> protocol.Response:
    """JoinGroup v5; a new member first gets MEMBER_ID_REQUIRED and its id (KIP-394), then
    joins with it. The answer of the join that counts."""
    r = w.request(ApiKey.JOIN_GROUP, 5, join_body(group, member_id, **kw))
    if r.body.error_code == errors.MemberIdRequired.code:
        r = w.request(ApiKey.JOIN_GROUP, 5, join_body(group, r.body.member_id, **kw))
    return r


def sync(
    w: Wire, group: str, generation: int, member_id: str, assignments: dict[str, bytes]
) -> protocol.Response:
    """SyncGroup v3."""
    return w.request(
        ApiKey.SYNC_GROUP,
        3,
        {
            "group_id": group,
            "generation_id": generation,
            "member_id": member_id,
            "group_instance_id": None,
            "assignments": [{"member_id": m, "assignment": a} for m, a in assignments.items()],
        },
    )


def commit(
    w: Wire,
    group: str,
    offsets: dict[tuple[str, int], int],
    generation: int = -1,
    member_id: str = "",
    metadata: str | None = None,
) -> dict[tuple[str, int], int]:
    """OffsetCommit v7; the error code of each partition."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(
            {
                "partition_index": partition,
                "committed_offset": offset,
                "committed_leader_epoch": -1,
                "committed_metadata": metadata,
            }
        )
    r = w.request(
        ApiKey.OFFSET_COMMIT,
        7,
        {
            "group_id": group,
            "generation_id_or_member_epoch": generation,
            "member_id": member_id,
            "group_instance_id": None,
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
        },
    )
    return {(t.name, p.partition_index): p.error_code for t in r.body.topics for p in t.partitions}


def fetch_offsets(w: Wire, group: str) -> tuple[int, dict[tuple[str, int], tuple[int, str]]]:
    """OffsetFetch v7 of every partition (null topics): the top-level error code and
    ``{(topic, partition): (offset, metadata)}``."""
    r = w.request(
        ApiKey.OFFSET_FETCH, 7, {"group_id": group, "topics": None, "require_stable": True}
    )
    return r.body.error_code, {
        (t.name, p.partition_index): (p.committed_offset, p.metadata)
        for t in r.body.topics
        for p in t.partitions
    }


def send_only(w: Wire, api_key: int, version: int, body: dict[str, Any], cid: int) -> None:
    """Send a request without waiting for its answer (one that the broker parks)."""
    w.send(protocol.encode_request(api_key, version, cid, "wire", body))


def receive(w: Wire, api_key: int, version: int, timeout: float) -> protocol.Response:
    """The next answer on ``w``, within ``timeout`` seconds (TimeoutError otherwise)."""
    w.sock.settimeout(timeout)
    try:
        return protocol.decode_response(api_key, version, read_frame(w.sock))
    finally:
        w.sock.settimeout(10.0)


# -- __consumer_offsets records, read with Kafka's schemas -----------------------------------


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> Any:
        (v,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def string(self) -> str | None:
        n = self.take(">h")
        if n < 0:
            return None
        s = self.data[self.pos : self.pos + n].decode()
        self.pos += n
        return s

    def bytes_(self) -> bytes:
        n = self.take(">i")
        b = self.data[self.pos : self.pos + max(n, 0)]
        self.pos += max(n, 0)
        return b


def read_offsets_key(key: bytes) -> dict[str, Any]:
    """An OffsetCommitKey (versions 0-1) or GroupMetadataKey (version 2)."""
    r = _Reader(key)
    version = r.take(">h")
    if version in (0, 1):
        return {
            "version": version,
            "group": r.string(),
            "topic": r.string(),
            "partition": r.take(">i"),
        }
    if version == 2:
        return {"version": version, "group": r.string()}
    return {"version": version}


def read_offset_commit_value(value: bytes) -> dict[str, Any]:
    """An OffsetCommitValue, versions 0-3 (non-flexible)."""
    r = _Reader(value)
    version = r.take(">h")
    out: dict[str, Any] = {"version": version, "offset": r.take(">q")}
    if version >= 3:
        out["leader_epoch"] = r.take(">i")
    out["metadata"] = r.string()
    out["commit_timestamp"] = r.take(">q")
    if version == 1:
        out["expire_timestamp"] = r.take(">q")
    return out


def read_group_metadata_value(value: bytes) -> dict[str, Any]:
    """A GroupMetadataValue, versions 0-3 (non-flexible)."""
    r = _Reader(value)
    version = r.take(">h")
    out: dict[str, Any] = {
        "version": version,
        "protocol_type": r.string(),
        "generation": r.take(">i"),
        "protocol": r.string(),
        "leader": r.string(),
    }
    if version >= 2:
        out["current_state_timestamp"] = r.take(">q")
    members = []
    for _ in range(r.take(">i")):
        m: dict[str, Any] = {"member_id": r.string()}
        if version >= 3:
            m["group_instance_id"] = r.string()
        m["client_id"] = r.string()
        m["client_host"] = r.string()
        if version >= 1:
            m["rebalance_timeout"] = r.take(">i")
        m["session_timeout"] = r.take(">i")
        m["subscription"] = r.bytes_()
        m["assignment"] = r.bytes_()
        members.append(m)
    out["members"] = members
    return out


def offsets_records(bootstrap: str, partition: int) -> list[tuple[bytes, bytes | None]]:
    """Every record of one partition of ``__consumer_offsets`` (key, value), up to its end, read
    by a real client (confluent-kafka)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "reader",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    c.assign([TopicPartition("__consumer_offsets", partition, 0)])
    out = []
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error() is not None:
                if m.error().code() == m.error()._PARTITION_EOF:
                    break
                raise AssertionError(m.error())
            out.append((m.key(), m.value()))
    finally:
        c.close()
    return out


def group_metadata(bootstrap: str, group: str) -> list[dict[str, Any]]:
    """The GroupMetadataValue records of ``group`` (one per generation, and one per static
    member replaced without a rebalance), oldest first, read with Kafka's schema."""
    return [
        read_group_metadata_value(v)
        for k, v in offsets_records(bootstrap, partition_for(group))
        if v is not None and read_offsets_key(k) == {"version": 2, "group": group}
    ]
