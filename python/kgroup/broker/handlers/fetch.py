"""Fetch: v0-17. Read record batches from partitions, waiting up to max_wait_ms for min_bytes.
v1 adds throttle_time_ms; v3 a response size limit (max_bytes; before it, partition limits
were hard); v4 the isolation level, last stable offsets and aborted transactions; v5 log start
offsets; v7 fetch sessions (KIP-227); v9 the current leader epoch (KIP-320); v11 a rack and a
preferred read replica; v12 is flexible, with the last fetched epoch and diverging epochs;
v13 names topics by id; v15 the replica state; v17 a replica directory id.

Batches are sent as they are stored: never decoded or re-encoded, except for v0-3, whose
clients read only the legacy formats (magic 0 and 1): those get them down-converted, as Kafka
down-converts them. With ``kgroup.fetch.sendfile`` (the default) each partition's records (v4
and later) are a FileSlice of its segment file, which the response reads in place or the
connection sends with sendfile (``broker.output``). The first partition
with data gets at least one batch even past the limits (KIP-74).

Transactions: every v4+ answer carries the last stable offset, the first offset of the
partition's earliest open transaction or else the high watermark (on one node the log end
offset). read_committed reads stop there, and get the aborted transactions (producer id,
first offset) that overlap what was read, by which the client drops their records; a
read_uncommitted answer has none (null). A long poll under read_committed counts only bytes
below the last stable offset, and a marker that moves it wakes the poll.

Fetch sessions are declined as Kafka declines them when its session cache is full: a request
for a new session is answered as a full fetch with session id 0, so the client keeps sending
full fetches; an incremental fetch naming a session gets FETCH_SESSION_ID_NOT_FOUND.

With an authorizer, READ on each topic (else TOPIC_AUTHORIZATION_FAILED on its partitions),
before the topic is looked up (Kafka's KafkaApis.handleFetchRequest).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.topics import LEADER_EPOCH, Partition
from kgroup.broker.waiters import waiting_on, wake_or_expire
from kgroup.protocol import ApiKey
from kgroup.protocol.records import decode_batches, encode_batch

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext
    from kgroup.broker.state import BrokerState

API_KEY = ApiKey.FETCH
VERSIONS = (0, 17)

READ_COMMITTED = 1


def check_leader_epoch(current: int) -> None:
    """Kafka's fencing of a request carrying the leader epoch its client knows (KIP-320)."""
    if current == -1 or current == LEADER_EPOCH:
        return
    if current > LEADER_EPOCH:
        raise errors.UnknownLeaderEpoch()
    raise errors.FencedLeaderEpoch()


class _Wanted:
    """_Wanted is one partition a fetch asks for, resolved once."""

    __slots__ = ("error", "fetch_offset", "index", "leader_epoch", "max_bytes", "partition")

    def __init__(self, index: int, fetch_offset: int, leader_epoch: int, max_bytes: int):
        self.index = index
        self.fetch_offset = fetch_offset
        self.leader_epoch = leader_epoch
        self.max_bytes = max_bytes
        self.partition: Partition | None = None
        self.error: errors.KafkaError | None = None


def _resolve(state: BrokerState, version: int, body: Any) -> list[tuple[dict, list[_Wanted]]]:
    out = []
    for t in body.topics:
        if version >= 13:
            topic = state.topics.by_id.get(t.topic_id)
            key: dict[str, Any] = {"topic_id": t.topic_id, "topic": topic.name if topic else ""}
            missing: errors.KafkaError = errors.UnknownTopicId()
        else:
            topic = state.topics.by_name.get(t.topic)
            key = {"topic": t.topic, "topic_id": topic.id if topic else uuid.UUID(int=0)}
            missing = errors.UnknownTopicOrPartition()
        wanted = []
        for p in t.partitions:
            w = _Wanted(
                p.partition,
                p.fetch_offset,
                p.current_leader_epoch if version >= 9 else -1,
                p.partition_max_bytes,
            )
            if topic is None:
                w.error = missing
            elif not 0 <= p.partition < len(topic.partitions):
                # A known topic (by id too) with no such partition, in Kafka's words.
                w.error = errors.UnknownTopicOrPartition()
            else:
                w.partition = topic.partitions[p.partition]
            wanted.append(w)
        out.append((key, wanted))
    return out


def _authorize(ctx: RequestContext, resolved: list[tuple[dict, list[_Wanted]]]) -> None:
    """Fail the partitions of topics the principal may not READ with TOPIC_AUTHORIZATION_FAILED
    (Kafka checks before it looks the topic up; an unknown topic id stays UNKNOWN_TOPIC_ID)."""
    named = [key for key, _ in resolved if key["topic"]]
    allowed = ctx.authorized(AclOperation.READ, ResourceType.TOPIC, named, lambda k: k["topic"])
    for key, wanted in resolved:
        if key["topic"] and key["topic"] not in allowed:
            for w in wanted:
                w.error = errors.TopicAuthorizationFailed()
                w.partition = None


def _read(
    resolved: list[tuple[dict, list[_Wanted]]],
    version: int,
    max_bytes: int,
    read_committed: bool,
    sendfile: bool,
) -> tuple[list[dict], int, bool]:
    """One pass over the partitions: the response's topics, the bytes read, and whether a
    partition answered with an error (which ends the wait at once, as in Kafka). Records are
    FileSlices with ``sendfile``, else bytes."""
    # Before v3 each partition's limit was hard; from v3 the first batch comes anyway (KIP-74).
    min_one = version >= 3
    left = max_bytes
    total = 0
    had_error = False
    topics = []
    for key, wanted in resolved:
        partitions = []
        for w in wanted:
            out: dict[str, Any] = {
                "partition_index": w.index,
                "error_code": 0,
                "high_watermark": -1,
                "last_stable_offset": -1,
                "log_start_offset": -1,
                "aborted_transactions": None,
                "preferred_read_replica": -1,
                "records": b"",
            }
            partitions.append(out)
            try:
                if w.error is not None:
                    # Kafka answers what it could not resolve with an empty list here, where
                    # a read leaves it null.
                    out["aborted_transactions"] = []
                    raise w.error
                p = w.partition
                assert p is not None
                check_leader_epoch(w.leader_epoch)
                lg = p.log
                hw = lg.log_end_offset
                unstable = lg.first_unstable_offset
                lso = hw if unstable is None else min(unstable, hw)
                # v0-3 get legacy message sets, made from bytes (_down_convert)
                read = lg.read_slice if sendfile and version >= 4 else lg.read
                limit = lso if read_committed else hw
                data = read(w.fetch_offset, min(w.max_bytes, left), limit, min_one)
            except errors.KafkaError as e:
                out["error_code"] = e.code
                had_error = True
                continue
            out["high_watermark"] = hw
            out["last_stable_offset"] = lso
            out["log_start_offset"] = lg.log_start_offset
            if read_committed and version >= 4:
                # Up to the read's limit rather than the end of the bytes read (Kafka's bound):
                # a few more entries at most, which clients skip, and no read of the slice.
                aborted = lg.aborted_transactions(w.fetch_offset, limit) if data else []
                out["aborted_transactions"] = [
                    {"producer_id": pid, "first_offset": first} for pid, first in aborted
                ]
            if version < 4 and isinstance(data, bytes) and data:
                data = _down_convert(data, 0 if version < 2 else 1)
            out["records"] = data
            if data:
                min_one = False
                total += len(data)
                left = max(0, left - len(data))
        topics.append({**key, "partitions": partitions})
    return topics, total, had_error


def _down_convert(data: bytes, magic: int) -> bytes:
    """Batches as the legacy message sets Fetch v0-3 carry (magic 0 for v0-1, magic 1 for
    v2-3), as Kafka's broker down-converts them: each batch's records, offsets and codec kept,
    headers and producer state dropped (the old formats have none), control batches left out,
    magic 0 without timestamps. A truncated last batch (a fetch's size limit) is left out too:
    old clients read the whole set."""
    out = bytearray()
    for b in decode_batches(data, verify_crc=False):
        if b.is_control_batch or not b.records:
            continue
        out += encode_batch(
            [(r.offset, r.timestamp, r.key, r.value) for r in b.records],
            magic=magic,
            compression=b.compression,
            base_offset=b.records[0].offset,
            timestamp_type=max(0, int(b.timestamp_type)),
        )
    return bytes(out)


def handle(ctx: RequestContext) -> Any:
    state, request = ctx.state, ctx.request
    version = request.api_version
    body = request.body
    response: dict[str, Any] = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0}
    if version >= 7:
        if body.session_id != 0:
            response["error_code"] = errors.FetchSessionIdNotFound.code
            response["responses"] = []
            return response
        if body.session_epoch > 0:
            response["error_code"] = errors.InvalidFetchSessionEpoch.code
            response["responses"] = []
            return response
    max_bytes = body.max_bytes if version >= 3 else 2**31 - 1
    read_committed = version >= 4 and body.isolation_level == READ_COMMITTED
    resolved = _resolve(state, version, body)
    if state.authorizer is not None:
        _authorize(ctx, resolved)
    topics, total, had_error = _read(
        resolved, version, max_bytes, read_committed, state.fetch_sendfile
    )
    if had_error or total >= body.min_bytes or body.max_wait_ms <= 0 or not resolved:
        response["responses"] = topics
        return response
    # The fetch waits from now: its future is on the partitions' waiters before this returns.
    # The coroutine's first step runs later in the loop, after requests already read (a
    # produce pipelined behind it, or on another connection in the same turn); waiting from
    # there missed their appends, and the fetch slept to its max_wait_ms with records there.
    partitions = [w.partition for _, ws in resolved for w in ws if w.partition is not None]
    first = waiting_on(partitions)
    return _wait(state, resolved, response, version, body, max_bytes, read_committed, first)


async def _wait(
    state: BrokerState,
    resolved: list[tuple[dict, list[_Wanted]]],
    response: dict,
    version: int,
    body: Any,
    max_bytes: int,
    read_committed: bool,
    first: asyncio.Future[None],
) -> dict:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + body.max_wait_ms / 1000
    partitions = [w.partition for _, ws in resolved for w in ws if w.partition is not None]
    fut: asyncio.Future[None] | None = first
    while not state.stopping:
        left = deadline - loop.time()
        if left <= 0:
            break
        await wake_or_expire(partitions, fut, left)
        fut = None
        topics, total, had_error = _read(
            resolved, version, max_bytes, read_committed, state.fetch_sendfile
        )
        if had_error or total >= body.min_bytes:
            response["responses"] = topics
            return response
    topics, _, _ = _read(resolved, version, max_bytes, read_committed, state.fetch_sendfile)
    response["responses"] = topics
    return response
