"""offsets: the ListOffsets request every client sends the same way (the Consumer for its
starting positions, watermarks and offsets_for_times; the AdminClient for list_offsets and
watermarks).
"""

from __future__ import annotations

from collections.abc import Mapping

from kgroup.client.connection import Connection
from kgroup.errors import KafkaError, UnsupportedVersion, error_for_code
from kgroup.protocol import ApiKey

__all__ = ["MAX_TIMESTAMP", "list_offsets_at"]

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
