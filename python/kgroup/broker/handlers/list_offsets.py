"""ListOffsets: v0-9. An offset per partition: the latest (-1), the earliest (-2), the one of
the largest timestamp (-3, v7+, KIP-734), the earliest local one (-4, v8+: with no tiered
storage, the earliest), the latest tiered one (-5, v9+: none here, -1), or the first offset
whose timestamp is at least a given one. v0 answers a list of offsets (old_style_offsets);
v1 one offset with its timestamp; v2 adds the isolation level; v4 leader epochs; v6 is
flexible.

Under read_committed (v2+) the latest offset is the last stable offset: the first offset of
the partition's earliest open transaction, else the high watermark (on one node the log end
offset); a timestamp whose offset is at or past it is not found yet (offset -1), as undecided
records cannot be found by time in Kafka.

With an authorizer, DESCRIBE on each topic (else TOPIC_AUTHORIZATION_FAILED on its
partitions), before the topic is looked up (Kafka's KafkaApis.handleListOffsetRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.handlers.fetch import check_leader_epoch
from kgroup.broker.topics import LEADER_EPOCH
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.LIST_OFFSETS
VERSIONS = (0, 9)

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5


READ_COMMITTED = 1


def lookup(partition: Any, timestamp: int, read_committed: bool = False) -> tuple[int, int]:
    """(timestamp, offset) for a ListOffsets target; (-1, -1) when there is none."""
    lg = partition.log
    end = lg.log_end_offset
    if read_committed:
        unstable = lg.first_unstable_offset
        if unstable is not None:
            end = min(end, unstable)
    if timestamp == LATEST:
        return -1, end
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return -1, lg.log_start_offset
    if timestamp == LATEST_TIERED:
        return -1, -1
    if timestamp == MAX_TIMESTAMP:
        found = lg.max_timestamp()
    else:
        found = lg.offset_for_timestamp(timestamp)
    if found is None or found.offset >= end:
        return -1, -1
    return found.timestamp, found.offset


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    version = request.api_version
    committed = version >= 2 and request.body.isolation_level == READ_COMMITTED
    topics = []
    allowed = (
        None
        if state.authorizer is None
        else ctx.authorized(
            AclOperation.DESCRIBE, ResourceType.TOPIC, request.body.topics, lambda t: t.name
        )
    )
    for t in request.body.topics:
        if allowed is not None and t.name not in allowed:
            # Kafka's handleListOffsetRequest: checked first, every partition refused.
            failed = errors.TopicAuthorizationFailed.code
            topics.append(
                {
                    "name": t.name,
                    "partitions": [
                        {"partition_index": p.partition_index, "error_code": failed}
                        | ({"old_style_offsets": []} if version == 0 else {})
                        for p in t.partitions
                    ],
                }
            )
            continue
        topic = state.topics.by_name.get(t.name)
        seen: set[int] = set()
        partitions = []
        for p in t.partitions:
            out: dict[str, Any] = {"partition_index": p.partition_index, "error_code": 0}
            try:
                if p.partition_index in seen:
                    raise errors.InvalidRequest()
                seen.add(p.partition_index)
                if topic is None or not 0 <= p.partition_index < len(topic.partitions):
                    raise errors.UnknownTopicOrPartition()
                if version >= 4:
                    check_leader_epoch(p.current_leader_epoch)
                ts, offset = lookup(topic.partitions[p.partition_index], p.timestamp, committed)
            except errors.KafkaError as e:
                out["error_code"] = e.code
                if version == 0:
                    out["old_style_offsets"] = []
                partitions.append(out)
                continue
            if version == 0:
                out["old_style_offsets"] = [offset] if offset >= 0 else []
            else:
                out["timestamp"] = ts
                out["offset"] = offset
                if version >= 4:
                    out["leader_epoch"] = LEADER_EPOCH if offset >= 0 else -1
            partitions.append(out)
        topics.append({"name": t.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
