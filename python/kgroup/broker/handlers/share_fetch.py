"""ShareFetch: v1-2. A share group member (KIP-932) fetches records from the partitions of its
share session and acknowledges records it was given before. v1 is the first stable version
(Kafka 4.1; 4.0's v0 is gone); v2 (4.2) adds ShareAcquireMode (KIP-1206: MaxRecords as a hard
limit) and IsRenewAck (KIP-1222: type 4 renews locks; such a request must carry zero limits
and fetches nothing).

Served behind the internal switch ``group.share.enable`` (off: UNSUPPORTED_VERSION, and
ApiVersions does not list it), as Kafka 4.2's ``KafkaApis.handleShareFetchRequest``:

1. READ on the group (GROUP_AUTHORIZATION_FAILED); the member id must be 1-36 characters
   (INVALID_REQUEST).
2. The share session (``kgroup.broker.share.sessions``): epoch 0 opens one with the request's
   partitions (acknowledgements there are INVALID_REQUEST; a full cache answers
   SHARE_SESSION_LIMIT_REACHED after MaxWaitMs), -1 must find one, n must match it; session
   errors are top-level with no partitions.
3. Piggybacked acknowledgements first (``kgroup.broker.share.acks``): each partition's outcome
   is its AcknowledgeErrorCode.
4. The fetch (none at epoch -1 or for a renew): for each partition of the session, read the
   log from the share partition's next fetch offset, acquire what it returned for the member
   (at most MaxRecords over all partitions, soft unless the record-limit mode; ranges of about
   BatchSize), and answer AcquiredRecords with the log batches that cover them. While fewer
   than MinBytes can be read, or nothing could be acquired, the request waits up to MaxWaitMs,
   woken by a produce, an acknowledgement, a release or a lock expiry on its partitions
   (Kafka's DelayedShareFetch), and then acquires what there is.
5. The answer: every requested partition at epoch 0; at epoch n only those with records, an
   error, or new in the session (incremental), plus every partition that carried
   acknowledgements. AcquisitionLockTimeoutMs is the group's lock duration.
6. Epoch -1: the session is removed and the member's records in its partitions released.

``share.isolation.level=read_committed``: reads stop at the last stable offset, and acquired
records of aborted transactions are archived and left out of AcquiredRecords (their batches
may still be in Records, as in Kafka).

Not yet (kgroup's share groups are being built): persistence (``ShareManager.persist``), the
per-partition fetch lock (one event loop serializes fetches), membership checks against the
group coordinator.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup._native.share import batch_bounds
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.share.acks import (
    AckResult,
    TopicIdPartition,
    acknowledge,
    error_entry,
    merged_partitions,
    resolve,
)
from kgroup.broker.share.manager import now_ms
from kgroup.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH
from kgroup.broker.share.txn import aborted_batches, without
from kgroup.broker.waiters import waiting_on, wake_or_expire
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext
    from kgroup.broker.share.manager import Held
    from kgroup.broker.share.sessions import Session
    from kgroup.broker.topics import Partition

API_KEY = ApiKey.SHARE_FETCH
VERSIONS = (1, 2)
#: PROTOCOL: listed in ApiVersions only while share groups are on (``api_versions``).
PROTOCOL = "share"

RECORD_LIMIT = 1


def top_level_error(e: errors.KafkaError) -> dict[str, Any]:
    return {"error_code": e.code, "responses": [], "node_endpoints": []}


def valid_member(member: str | None) -> bool:
    """Kafka's ``KafkaApis.isMemberIdValid``: non-empty, at most 36 characters."""
    return bool(member) and len(member or "") <= 36


def _entry(index: int) -> dict[str, Any]:
    return {
        "partition_index": index,
        "error_code": 0,
        "error_message": None,
        "acknowledge_error_code": 0,
        "acknowledge_error_message": None,
        "current_leader": {"leader_id": -1, "leader_epoch": -1},
        "records": b"",
        "acquired_records": [],
    }


class _Fetch:
    """_Fetch is one ShareFetch's fetch part: its partitions, limits and what it acquired."""

    def __init__(
        self,
        ctx: RequestContext,
        group: str,
        member: str,
        partitions: list[TopicIdPartition],
        body: Any,
        record_limit: bool,
    ) -> None:
        self.ctx = ctx
        self.group = group
        self.member = member
        self.body = body
        self.record_limit = record_limit
        #: wanted: each partition with its log partition, or the error that answers it.
        self.wanted: list[tuple[TopicIdPartition, Partition | None, errors.KafkaError | None]] = []
        for tp in partitions:
            try:
                self.wanted.append((tp, resolve(ctx, tp), None))
            except errors.KafkaError as e:
                self.wanted.append((tp, None, e))
        self.entries: dict[TopicIdPartition, dict[str, Any]] = {}
        self.records_left = body.max_records
        self.bytes_left = body.max_bytes
        #: lock_ms: the lock duration of this fetch's acquisitions (AcquisitionLockTimeoutMs).
        self.lock_ms = ctx.state.shares.lock_duration_ms(group)
        #: read_committed: the group's ``share.isolation.level``.
        level = ctx.state.shares.isolation_level(group)
        self.read_committed = level == "read_committed"
        #: min_bytes: MinBytes, capped by MaxBytes as Kafka caps it.
        self.min_bytes = min(body.min_bytes, body.max_bytes)
        self.had_error = False
        self.acquired = 0

    @property
    def partitions(self) -> list[Partition]:
        return [p for _, p, _ in self.wanted if p is not None]

    def attempt(self, final: bool) -> None:
        """One pass: read each partition that can give records from its next fetch offset;
        unless ``final`` (MaxWaitMs is over), stop there while the bytes read are fewer than
        MinBytes (Kafka's DelayedShareFetch.tryComplete: nothing is acquired then); else
        acquire from what was read."""
        shares = self.ctx.state.shares
        reads = []
        left = self.bytes_left
        total = 0
        for tp, p, error in self.wanted:
            entry = self.entries.setdefault(tp, _entry(tp[1]))
            if error is not None:
                entry["error_code"], entry["error_message"] = error_entry(error)
                self.had_error = True
                continue
            if entry["acquired_records"] or self.records_left <= 0 or left <= 0:
                continue
            assert p is not None
            try:
                h = shares.held(self.group, p)
            except errors.KafkaError as e:
                entry["error_code"], entry["error_message"] = error_entry(e)
                self.had_error = True
                continue
            sp = h.share
            if not sp.can_acquire_records():
                continue
            lg = p.log
            offset = sp.next_fetch_offset()
            limit = lg.log_end_offset
            if self.read_committed:
                unstable = lg.first_unstable_offset
                limit = limit if unstable is None else min(unstable, limit)
            try:
                data = lg.read(offset, left, limit, self.acquired + total == 0)
            except errors.OffsetOutOfRange:
                # Kafka moves the share partition to the log start and answers no records.
                sp.update_log_start_offset(lg.log_start_offset)
                continue
            except errors.KafkaError as e:
                entry["error_code"], entry["error_message"] = error_entry(e)
                self.had_error = True
                continue
            if data:
                reads.append((entry, h, offset, limit, data))
                total += len(data)
                left = max(0, left - len(data))
        if not final and not self.had_error and total < self.min_bytes:
            return
        now = now_ms()
        for entry, h, offset, limit, data in reads:
            if self.records_left <= 0:
                break
            bounds = batch_bounds(data)
            # The group's lock duration as it is now (Kafka reads it at each acquisition).
            h.share.record_lock_duration_ms = self.lock_ms
            got, count = h.share.acquire(
                self.member,
                self.body.batch_size,
                self.records_left,
                offset,
                bounds,
                now,
                self.record_limit,
            )
            if got and self.read_committed:
                got, count = self._drop_aborted(h, data, bounds, offset, limit, got, count)
            shares.arm(h)
            if not got:
                continue
            self.records_left -= count
            first, last = got[0][0], got[-1][1]
            # The log batches that cover the acquired ranges, whole.
            start = 0
            end = len(data)
            for base, batch_last, batch_end in bounds:
                if batch_last < first:
                    start = batch_end
                if base <= last:
                    end = batch_end
            records = data[start:end]
            entry["records"] = records
            entry["acquired_records"] = [
                {"first_offset": f, "last_offset": la, "delivery_count": dc} for f, la, dc in got
            ]
            self.acquired += len(records)
            self.bytes_left = max(0, self.bytes_left - len(records))

    def _drop_aborted(
        self,
        h: Held,
        data: bytes,
        bounds: list[tuple[int, int, int]],
        offset: int,
        limit: int,
        got: list[tuple[int, int, int]],
        count: int,
    ) -> tuple[list[tuple[int, int, int]], int]:
        """read_committed: archive the acquired records of aborted transactions (Kafka
        archives them in the window; here as a Gap acknowledgement by the member, which moves
        them to ARCHIVED the same way, persisted) and leave them out of AcquiredRecords."""
        aborted = h.partition.log.aborted_transactions(offset, limit)
        if not aborted:
            return got, count
        kept, taken = without(got, aborted_batches(data, bounds, aborted))
        if not taken:
            return got, count
        shares = self.ctx.state.shares
        shares.persist(
            h, h.share.acknowledge(self.member, [(f, la, [0]) for f, la in taken], now_ms())
        )
        return kept, count - sum(la - f + 1 for f, la in taken)

    def done(self) -> bool:
        return self.had_error or self.acquired > 0


def handle(ctx: RequestContext) -> Any:
    state, request = ctx.state, ctx.request
    shares = state.shares
    if not shares.enabled:
        return top_level_error(errors.UnsupportedVersion())
    version = request.api_version
    body = request.body
    group = body.group_id or ""
    member = body.member_id or ""
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group):
        return top_level_error(errors.GroupAuthorizationFailed())
    if not valid_member(member):
        return top_level_error(errors.InvalidRequest("Invalid member id in the request."))
    renew = version >= 2 and body.is_renew_ack
    if renew:
        wrong = [
            f"{name} must be set to 0, "
            for name, value in (
                ("maxBytes", body.max_bytes),
                ("minBytes", body.min_bytes),
                ("maxRecords", body.max_records),
                ("maxWaitMs", body.max_wait_ms),
            )
            if value != 0
        ]
        if wrong:
            return top_level_error(errors.InvalidRequest("".join(wrong) + "if isRenewAck is true."))
    acks = merged_partitions(body.topics)
    has_acks = any(acks.values())
    forgotten = [(t.topic_id, i) for t in body.forgotten_topics_data for i in t.partitions]
    epoch = body.share_session_epoch
    try:
        if epoch == INITIAL_EPOCH:
            session = shares.sessions.open(group, member, acks, ctx.connection, has_acks)
        else:
            session = shares.sessions.fetch(group, member, epoch, acks, forgotten)
    except errors.ShareSessionLimitReached as e:
        return _limit_reached(body.max_wait_ms, e)
    except errors.KafkaError as e:
        return top_level_error(e)
    ack_results = (
        acknowledge(
            ctx,
            group,
            member,
            {tp: b for tp, b in acks.items() if b},
            version >= 2,
            bool(renew),
        )
        if has_acks
        else {}
    )
    response: dict[str, Any] = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "acquisition_lock_timeout_ms": shares.lock_duration_ms(group),
        "node_endpoints": [],
    }
    if epoch == FINAL_EPOCH or renew:
        response["responses"] = _responses({}, ack_results)
        if epoch == FINAL_EPOCH:
            shares.close_session(group, member)
        return response
    partitions = list(acks) if epoch == INITIAL_EPOCH else list(session.partitions)
    fetch = _Fetch(
        ctx,
        group,
        member,
        partitions,
        body,
        version >= 2 and body.share_acquire_mode == RECORD_LIMIT,
    )
    fetch.attempt(final=body.max_wait_ms <= 0)
    if fetch.done() or body.max_wait_ms <= 0 or not fetch.partitions:
        response["responses"] = _answer(fetch, session, epoch, ack_results)
        return response
    # Waiting from now, as Fetch does: the future is on the partitions before this returns.
    first = waiting_on(fetch.partitions)
    return _wait(ctx, fetch, session, epoch, ack_results, response, first)


async def _limit_reached(max_wait_ms: int, e: errors.KafkaError) -> dict[str, Any]:
    # Kafka answers a full session cache only after MaxWaitMs (createIdleShareFetchTimerTask).
    await asyncio.sleep(max(0, max_wait_ms) / 1000)
    return top_level_error(e)


def _answer(
    fetch: _Fetch, session: Session, epoch: int, ack_results: dict[TopicIdPartition, AckResult]
) -> list[dict[str, Any]]:
    entries = fetch.entries
    if epoch != INITIAL_EPOCH:
        entries = {
            tp: e
            for tp, e in entries.items()
            if session.must_respond(tp, bool(e["acquired_records"]), e["error_code"])
        }
    return _responses(entries, ack_results)


def _responses(
    entries: dict[TopicIdPartition, dict[str, Any]], ack_results: dict[TopicIdPartition, AckResult]
) -> list[dict[str, Any]]:
    """The response's topics: the fetch's entries with each acknowledged partition's outcome
    put in (or added, with no records), grouped by topic id in order."""
    for tp, (code, message) in ack_results.items():
        e = entries.get(tp)
        if e is None:
            e = entries[tp] = _entry(tp[1])
        e["acknowledge_error_code"] = code
        e["acknowledge_error_message"] = message
    topics: dict[Any, list[dict[str, Any]]] = {}
    for (topic_id, _), e in entries.items():
        topics.setdefault(topic_id, []).append(e)
    return [{"topic_id": t, "partitions": ps} for t, ps in topics.items()]


async def _wait(
    ctx: RequestContext,
    fetch: _Fetch,
    session: Session,
    epoch: int,
    ack_results: dict[TopicIdPartition, AckResult],
    response: dict[str, Any],
    first: asyncio.Future[None],
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + fetch.body.max_wait_ms / 1000
    partitions = fetch.partitions
    fut: asyncio.Future[None] | None = first
    while not ctx.state.stopping:
        left = deadline - loop.time()
        if left <= 0:
            break
        await wake_or_expire(partitions, fut, left)
        fut = None
        fetch.attempt(final=False)
        if fetch.done():
            break
    if not fetch.done():
        # MaxWaitMs is over (or the broker stops): what there is, below MinBytes too.
        fetch.attempt(final=True)
    response["responses"] = _answer(fetch, session, epoch, ack_results)
    return response
