"""kgroup.group: Kafka's classic group coordinator, for a broker to host.

The coordinator (Rust, ``rust/group/``) is a pure state machine: it reads no clock and does no
I/O. The host hands it each group request with the time and a token of its choice, and carries
out the effects it returns:

- :class:`Respond` -- write ``frame`` (a whole response frame, size prefix included, for the
  request's version and correlation id) to the connection of the request given ``token``;
- :class:`Append` -- append ``records`` (one v2 record batch) to partition ``partition`` of
  ``__consumer_offsets``, then report how it went with :meth:`Coordinator.appended`;
- :class:`InitializeShareState` -- a share group (KIP-932) needs the share state of
  ``partitions`` of topic ``topic_id``: create it, then report with
  :meth:`Coordinator.share_state_initialized` (or ``share_state_initialize_failed``);
- :class:`DeleteShareState` -- a share group was deleted: drop that share state.

Parked JoinGroup and SyncGroup requests, and commits waiting for their append, are answered
later through the same effects, from ``handle``, ``appended`` or ``tick``. The host calls
:meth:`Coordinator.tick` when :attr:`Coordinator.next_deadline` comes::

    coordinator = Coordinator({"group.initial.rebalance.delay.ms": 0})
    for partition, data in logs:                  # __consumer_offsets, from its start
        coordinator.load(partition, data)
    effects = coordinator.handle(now_ms(), token, request, client_host="/127.0.0.1")
    for effect in effects:
        match effect:
            case Respond(token, frame):
                connection_of(token).write(frame)
            case Append(token, partition, records):
                error = append_to_log(partition, records)   # 0 on success
                effects += coordinator.appended(now_ms(), token, error)

The rest of the host's surface:

- ``Coordinator(config=None, *, seed=None)``: ``config`` maps Kafka's names (:data:`CONFIG_KEYS`)
  to ints (or int strings); ``seed`` makes member ids' UUIDs reproducible.
- ``handle_frame(now_ms, token, frame, client_host="")``: a request as its raw frame (the bytes
  after the size prefix), decoded once in Rust into the api's typed message; what a broker uses.
  ``token`` is any object, given back in the request's :class:`Respond`; ``client_host`` is the
  peer as Kafka prints it (``/127.0.0.1``), shown by DescribeGroups.
- ``handle(now_ms, token, request, client_host="")``: the same for a decoded
  :class:`kgroup.protocol.Request` (its frame is encoded again first).
- ``appended(now_ms, token, error_code=0)``: the outcome of an :class:`Append` (a Kafka error
  code, 0 for none); storage errors are mapped to what each api answers, as Kafka maps them.
- ``end_transaction(now_ms, partition, producer_id, commit)``: the host has appended a
  transaction's COMMIT (``commit=True``) or ABORT marker to ``__consumer_offsets`` partition
  ``partition``; the offsets the producer's TxnOffsetCommits wrote to that partition's groups
  become committed (each unless a later commit is) or are dropped. TxnOffsetCommit writes its
  records as one transactional batch of the producer (the :class:`Append`'s ``records`` carry
  the producer id and epoch).
- ``tick(now_ms)`` and ``next_deadline`` (ms, or None): timers (sessions, the initial and
  regular join delays, the sync timeout, pending member ids, the offset retention check). After
  a load, ``next_deadline`` is in the past until the next call starts the loaded members'
  sessions.
- ``load(partition, batches, last=True)``: replay a partition of ``__consumer_offsets`` (record
  batches as the log holds them); in chunks with ``last=False`` until the final one, while the
  partition's groups answer COORDINATOR_LOAD_IN_PROGRESS. Returns counts.
- ``unload(now_ms, partition)``: give a partition up; its parked requests are answered
  NOT_COORDINATOR (call it for every partition on shutdown).
- ``set_topics({topic: partitions} | None)``: commits to unknown topics or partitions are then
  answered UNKNOWN_TOPIC_OR_PARTITION; ``topics_deleted(now_ms, topics)`` removes their offsets.
- ``set_topic_metadata([(topic, id, partitions), ...])``: the same with each topic's 16-byte id,
  through which consumer groups (KIP-848) resolve the topic names they subscribe to.
- ``partition_for(group_id)``, ``group_state(group_id)``, ``group_count``, ``pending_appends``,
  ``waiting`` (requests not answered yet).
- Inspection (read only: no timer fires): ``group_ids()``; ``inspect_group(group_id)``, a group
  as plain data (its type, state, protocol, generation or epochs, and members with their
  subscriptions and assignments decoded, topics by name), None when not held;
  ``committed_offsets(group_id)``, its stable offsets as ``(topic, partition, offset,
  leader_epoch, metadata)``. What ``kgroup.broker.inspect`` reads.
- ``expire_member(now_ms, group_id, member_id=None)``: the member's session (every member's)
  ends now, through its session timer's own code: a classic group removes it and rebalances
  (a member with a request parked keeps its session, as Kafka's ``onExpireHeartbeat``), a
  consumer group fences it. Effects as any call's; raises GroupIdNotFound, UnknownMemberId,
  NotCoordinator or CoordinatorLoadInProgress, changing nothing.

:func:`assign_consumer_group` runs one of the consumer groups' server-side assignors
(``uniform``, ``range``) alone, on a group given as plain data: ``members`` in the order the
assignor walks them, each ``(member_id, instance_id, rack_id, subscribed_topic_ids, target)``
with topic ids in Kafka's base64 text form and ``target`` the previous target assignment
(``{topic_id: [partitions]}``), and ``partition_counts`` (``{topic_id: partitions}``). It answers
one ``{topic_id: [partitions ascending]}`` per member, in order; ``subscription_type``
(``"Homogeneous"`` or ``"Heterogeneous"``) is computed from the subscriptions unless given. An
assignor's failure (a subscribed topic missing from ``partition_counts``) raises
:class:`kgroup.errors.UnknownServerError`, what the coordinator would answer, with the
assignor's message.

Requests are the :class:`kgroup.protocol.Request` objects that
:func:`kgroup.protocol.decode_request` returns, of the apis in :data:`GROUP_API_KEYS`
(JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, OffsetDelete,
DescribeGroups, ListGroups, DeleteGroups, TxnOffsetCommit), at every version Kafka 3.9 speaks,
and KIP-848's ConsumerGroupHeartbeat and ConsumerGroupDescribe (v0-1, as Kafka 4.x).
FindCoordinator is the broker's own: the coordinator of every group is the broker itself. Config
keys are Kafka's (:data:`CONFIG_KEYS`). The same calls with the same times (and the same
``seed``) give the same effects.
"""

from __future__ import annotations

from typing import TypeAlias

from kgroup._native.group import (
    CONFIG_KEYS,
    GROUP_API_KEYS,
    GROUP_CONFIG_KEYS,
    Append,
    Coordinator,
    DeleteShareState,
    InitializeShareState,
    Respond,
    assign_consumer_group,
    partition_for,
)

__all__ = [
    "CONFIG_KEYS",
    "GROUP_API_KEYS",
    "GROUP_CONFIG_KEYS",
    "Append",
    "Coordinator",
    "DeleteShareState",
    "Effect",
    "InitializeShareState",
    "Respond",
    "assign_consumer_group",
    "partition_for",
]

#: Effect is what the coordinator asks the host to do.
Effect: TypeAlias = Respond | Append | InitializeShareState | DeleteShareState
