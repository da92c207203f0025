"""Inspection and group actions: what a test reads of a running broker, and what it does to its
groups that no client request can (the test kit's, ``kgroup.testing``).

Every function takes the broker's :class:`~kgroup.broker.state.BrokerState` and must run on its
event loop thread (the broker owns its state there; from another thread, hand the call to the
loop with ``asyncio.run_coroutine_threadsafe``). The answers are plain dataclasses of str, int,
bytes, lists and dicts, picklable, so that a broker in another process can send them over a
pipe.

- :func:`records`: the data records of a partition (or every partition of a topic) as its log
  holds them, read through the log's read api and decoded as a consumer decodes them; with
  ``committed_only``, as a ``read_committed`` consumer sees them.
- :func:`groups`, :func:`group`, :func:`committed`: the group coordinator's groups, members,
  assignments and committed offsets, read from its state (not through its apis: nothing is
  answered, no timer fires).
- :func:`transactions`: the transaction coordinator's transactional ids; :func:`producers`: the
  producers a partition's log remembers (DescribeProducers).
- :func:`expire_member`: a member's session ends now, as when its session timer fires.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.protocol.records import ControlRecordType, decode_batches, parse_control_record

if TYPE_CHECKING:
    from kgroup.broker.state import BrokerState
    from kgroup.broker.topics import Partition

__all__ = [
    "Committed",
    "GroupInfo",
    "MemberInfo",
    "ProducerInfo",
    "Record",
    "TxnInfo",
    "committed",
    "expire_member",
    "group",
    "groups",
    "producers",
    "records",
    "transactions",
]

#: READ_BYTES is how much of a log one read takes (whole batches; a larger one comes alone).
READ_BYTES = 1 << 20


@dataclass(frozen=True)
class Record:
    """Record is one data record as its partition's log holds it, with its batch's producer
    fields. ``timestamp_type`` is Kafka's id (0 CreateTime, 1 LogAppendTime, -1 none: a magic 0
    record); ``sequence`` is the record's own (its batch's base sequence plus its offset delta,
    wrapped as Kafka wraps it), -1 for a producer that is not idempotent."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    producer_id: int
    producer_epoch: int
    sequence: int
    transactional: bool


@dataclass(frozen=True)
class MemberInfo:
    """MemberInfo is one member of a group. ``subscription`` are the topics it subscribes to by
    name, sorted; ``assignment`` what it holds, by topic, partitions ascending: for a classic
    member, its consumer protocol metadata and last synced assignment decoded (both empty for
    another protocol type); for a consumer group member, as ConsumerGroupDescribe reports
    them (the partitions it still has to revoke included), with ``target_assignment`` where
    the group is taking it and ``subscribed_regex`` its pattern, if any. ``member_epoch`` is a
    consumer group member's, -1 for a classic one."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    subscription: list[str]
    assignment: dict[str, list[int]]
    member_epoch: int
    target_assignment: dict[str, list[int]] = field(default_factory=dict)
    subscribed_regex: str | None = None


@dataclass(frozen=True)
class GroupInfo:
    """GroupInfo is one group as the coordinator holds it. ``type`` is ``classic`` or
    ``consumer`` (KIP-848); ``state`` Kafka's name (``Empty``, ``PreparingRebalance``,
    ``CompletingRebalance``, ``Stable``; a consumer group's ``Empty``, ``Assigning``,
    ``Reconciling``, ``Stable``); ``protocol_type`` and ``protocol`` the classic group's
    (``consumer`` and the assignor's name; None before its first member or generation), a
    consumer group's ``consumer`` and server-side assignor; ``generation`` the classic
    generation id or the consumer group's epoch; ``assignment_epoch`` the consumer group's
    target assignment epoch (-1 for a classic group). Members in the order they joined
    (classic) or by member id (consumer)."""

    group_id: str
    type: str
    state: str
    protocol_type: str | None
    protocol: str | None
    generation: int
    assignment_epoch: int
    members: list[MemberInfo]


@dataclass(frozen=True)
class Committed:
    """Committed is a group's committed offset of one partition, as OffsetFetch returns it."""

    offset: int
    metadata: str
    leader_epoch: int


@dataclass(frozen=True)
class TxnInfo:
    """TxnInfo is one transactional id as the transaction coordinator holds it (as
    DescribeTransactions describes it): ``state`` is Kafka's name (``Empty``, ``Ongoing``,
    ``PrepareCommit``, ``PrepareAbort``, ``CompleteCommit``, ``CompleteAbort``,
    ``PrepareEpochFence``), ``partitions`` the transaction's, sorted, ``start_time_ms`` -1
    while it has none."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    state: str
    timeout_ms: int
    partitions: list[tuple[str, int]]
    start_time_ms: int


@dataclass(frozen=True)
class ProducerInfo:
    """ProducerInfo is one producer a partition's log remembers, as DescribeProducers tells
    it: ``current_txn_start_offset`` is the first offset of its open transaction, -1 without
    one."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int


# -- records --------------------------------------------------------------------------------


def records(
    state: BrokerState, topic: str, partition: int | None = None, *, committed_only: bool = False
) -> list[Record]:
    """Every data record of partition ``partition`` of ``topic`` (of each of its partitions in
    turn, when None) in offset order, from the log start; control batches left out.

    With ``committed_only`` the records a ``read_committed`` consumer gets: up to the last
    stable offset (the first offset of the earliest open transaction), without those of
    aborted transactions (the log's aborted-transaction index, applied as Kafka's consumer
    applies it). Raises UnknownTopicOrPartition."""
    t = state.topics.by_name.get(topic)
    if t is None:
        raise errors.UnknownTopicOrPartition(f"no topic {topic!r}")
    if partition is None:
        parts = list(t.partitions)
    elif 0 <= partition < len(t.partitions):
        parts = [t.partitions[partition]]
    else:
        raise errors.UnknownTopicOrPartition(f"{topic!r} has no partition {partition}")
    out: list[Record] = []
    for p in parts:
        out.extend(_partition_records(p, committed_only))
    return out


def _partition_records(p: Partition, committed_only: bool) -> list[Record]:
    lg = p.log
    start = lg.log_start_offset
    end = lg.log_end_offset
    if committed_only:
        unstable = lg.first_unstable_offset
        if unstable is not None:
            end = min(end, unstable)
    # (producer id, first offset) of the aborted transactions, by first offset: a producer's
    # batches are aborted from its first offset on until its ABORT marker.
    pending = collections.deque(
        sorted(lg.aborted_transactions(start, end), key=lambda a: a[1]) if committed_only else []
    )
    aborting: set[int] = set()
    name, index = p.topic.name, p.index
    out: list[Record] = []
    offset = start
    while offset < end:
        data = lg.read(offset, READ_BYTES, end, True)
        before = offset
        for b in decode_batches(data):
            if b.next_offset <= offset:
                continue
            offset = b.next_offset
            if committed_only:
                while pending and pending[0][1] <= b.last_offset:
                    aborting.add(pending.popleft()[0])
            if b.is_control_batch:
                if b.records:
                    control = parse_control_record(b.records[0])
                    if control.type == ControlRecordType.ABORT:
                        aborting.discard(b.producer_id)
                continue
            transactional = b.is_transactional
            if committed_only and transactional and b.producer_id in aborting:
                continue
            base, seq = b.base_offset, b.base_sequence
            ts_type = int(b.timestamp_type)
            for r in b.records:
                if r.offset < start:
                    continue
                out.append(
                    Record(
                        topic=name,
                        partition=index,
                        offset=r.offset,
                        timestamp=r.timestamp,
                        timestamp_type=ts_type,
                        key=r.key,
                        value=r.value,
                        headers=list(r.headers),
                        producer_id=b.producer_id,
                        producer_epoch=b.producer_epoch,
                        sequence=-1 if seq < 0 else (seq + r.offset - base) % (1 << 31),
                        transactional=transactional,
                    )
                )
        if offset == before:
            # Nothing past ``offset`` below ``end``: the rest is beyond the bound.
            break
    return out


def producers(state: BrokerState, topic: str, partition: int) -> list[ProducerInfo]:
    """The producers the log of ``topic``-``partition`` remembers, by producer id
    (DescribeProducers). Raises UnknownTopicOrPartition."""
    t = state.topics.by_name.get(topic)
    if t is None or not 0 <= partition < len(t.partitions):
        raise errors.UnknownTopicOrPartition(f"no partition {topic!r}-{partition}")
    return [
        ProducerInfo(
            producer_id=p.producer_id,
            producer_epoch=p.producer_epoch,
            last_sequence=p.last_sequence,
            last_timestamp=p.last_timestamp,
            coordinator_epoch=p.coordinator_epoch,
            current_txn_start_offset=p.current_txn_start_offset,
        )
        for p in sorted(t.partitions[partition].log.producers(), key=lambda p: p.producer_id)
    ]


# -- groups ---------------------------------------------------------------------------------


def groups(state: BrokerState) -> list[str]:
    """The ids of every group the group coordinator holds (classic and consumer), sorted."""
    return state.groups.coordinator.group_ids()


def group(state: BrokerState, group_id: str) -> GroupInfo | None:
    """The group ``group_id`` as it stands, None when the coordinator does not hold it."""
    d = state.groups.coordinator.inspect_group(group_id)
    if d is None:
        return None
    return GroupInfo(
        group_id=d["group_id"],
        type=d["type"],
        state=d["state"],
        protocol_type=d["protocol_type"],
        protocol=d["protocol"],
        generation=d["generation"],
        assignment_epoch=d["assignment_epoch"],
        members=[_member(m) for m in d["members"]],
    )


def _member(m: dict[str, Any]) -> MemberInfo:
    return MemberInfo(
        member_id=m["member_id"],
        group_instance_id=m["group_instance_id"],
        client_id=m["client_id"],
        client_host=m["client_host"],
        subscription=m["subscription"],
        assignment=m["assignment"],
        member_epoch=m["member_epoch"],
        target_assignment=m["target"],
        subscribed_regex=m["subscribed_regex"],
    )


def committed(state: BrokerState, group_id: str) -> dict[tuple[str, int], Committed]:
    """The committed offsets of ``group_id`` by (topic, partition), as OffsetFetch returns
    them: stable ones only (a commit still being appended, or one in an open transaction, is
    not there yet). Empty for a group the coordinator does not hold."""
    offsets = state.groups.coordinator.committed_offsets(group_id) or []
    return {
        (topic, p): Committed(offset=offset, metadata=metadata, leader_epoch=epoch)
        for topic, p, offset, epoch, metadata in offsets
    }


def expire_member(state: BrokerState, group_id: str, member_id: str | None = None) -> None:
    """End the session of ``member_id`` of ``group_id`` (of every member, when None) now, as
    its session timer would: a classic group removes it and rebalances, and its client, at its
    next heartbeat, hears UNKNOWN_MEMBER_ID and joins again; a consumer group fences it (its
    epoch bumped) with the same outcome. A classic member with a JoinGroup or SyncGroup parked
    keeps its session, as Kafka keeps it. Raises GroupIdNotFound, UnknownMemberId,
    NotCoordinator or CoordinatorLoadInProgress."""
    state.groups.expire_member(group_id, member_id)


# -- transactions ---------------------------------------------------------------------------


def transactions(state: BrokerState) -> list[TxnInfo]:
    """Every transactional id the transaction coordinator holds, by id (as
    DescribeTransactions describes them; ids being removed left out)."""
    return [
        TxnInfo(
            transactional_id=t["transactional_id"],
            producer_id=t["producer_id"],
            producer_epoch=t["producer_epoch"],
            state=t["state"],
            timeout_ms=t["timeout_ms"],
            partitions=t["partitions"],
            start_time_ms=t["start_time_ms"],
        )
        for t in state.transactions.coordinator.transactions()
    ]
