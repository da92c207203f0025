"""offsets: the offset requests every client sends the same way: ListOffsets (the Consumer for
its starting positions, watermarks and offsets_for_times; the AdminClient for list_offsets and
watermarks) and OffsetFetch's body and answer (the Consumer's committed offsets; the
AdminClient's list_consumer_group_offsets).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kgroup.client.connection import Connection
from kgroup.errors import KafkaError, UnsupportedVersion, error_for_code
from kgroup.protocol import ApiKey

__all__ = ["MAX_TIMESTAMP", "list_offsets_at", "offset_fetch_body", "offset_fetch_topics"]

#: ListOffsets' timestamp for "the offset with the largest timestamp" (v7+, KIP-734).
MAX_TIMESTAMP = -3

Key = tuple[str, int]


async def list_offsets_at(
    conn: Connection, wanted: Mapping[Key, int], isolation_level: int = 0
) -> dict[Key, tuple[int, int, int] | KafkaError]:
    """One ListOffsets to the broker of ``conn`` (the partitions' leader) for ``{(topic,
    partition): timestamp}`` (-2 earliest, -1 latest, -3 max timestamp, else the first offset
    at or after that time). Each partition's answer is ``(offset, timestamp, leader_epoch)``
    (-1 where unknown; offset -1 when no record is that late) or the KafkaError of its code.
    ``isolation_level`` 1 (read_committed) asks for the last stable offset."""
    v = conn.version(ApiKey.LIST_OFFSETS)
    if v < 7 and MAX_TIMESTAMP in wanted.values():
        raise UnsupportedVersion("the max timestamp needs ListOffsets v7+")
    by_topic: dict[str, list[dict[str, int]]] = {}
    for (t, p), ts in wanted.items():
        by_topic.setdefault(t, []).append({"partition_index": p, "timestamp": ts})
    body: dict[str, object] = {
        "replica_id": -1,
        "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
    }
    if v >= 2:
        body["isolation_level"] = isolation_level
    resp = await conn.request(ApiKey.LIST_OFFSETS, body, version=v)
    out: dict[Key, tuple[int, int, int] | KafkaError] = {}
    for t in resp["topics"]:
        for p in t["partitions"]:
            key = (t["name"], p["partition_index"])
            code = p["error_code"]
            if code:
                cls = error_for_code(code)
                assert cls is not None
                out[key] = cls(f"{key[0]} [{key[1]}]")
            elif v == 0:
                olds = p["old_style_offsets"]
                out[key] = (olds[0] if olds else -1, -1, -1)
            else:
                out[key] = (p["offset"], p["timestamp"], p.get("leader_epoch", -1))
    return out


def offset_fetch_body(
    group: str, partitions: Mapping[str, list[int]] | None, require_stable: bool
) -> Callable[[int], dict[str, Any]]:
    """The OffsetFetch body for ``group`` at each version: ``partitions`` by topic, or None
    for every partition the group committed (v2+); ``require_stable`` from v7 (KIP-447);
    the one-group ``groups`` form from v8."""

    def body(v: int) -> dict[str, Any]:
        topics = (
            None
            if partitions is None
            else [{"name": t, "partition_indexes": list(ps)} for t, ps in partitions.items()]
        )
        if v >= 8:
            b: dict[str, Any] = {"groups": [{"group_id": group, "topics": topics}]}
        else:
            if topics is None and v < 2:
                raise UnsupportedVersion("fetching every offset needs OffsetFetch v2+")
            b = {"group_id": group, "topics": topics}
        if v >= 7:
            b["require_stable"] = require_stable
        return b

    return body


def offset_fetch_topics(resp: Mapping[str, Any]) -> Any:
    """The topics of an OffsetFetch answer, under its one group from v8."""
    return resp["groups"][0]["topics"] if "groups" in resp else resp["topics"]
