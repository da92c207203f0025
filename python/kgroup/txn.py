"""kgroup.txn: Kafka's transaction coordinator, for a broker to host.

The coordinator (Rust, ``rust/txn/``) is a pure state machine over ``__transaction_state``, like
:mod:`kgroup.group`'s: it reads no clock, does no I/O and allocates no producer id itself. The
host hands it each transaction request with the time, a token of its choice and a supplier of
fresh producer ids, and carries out the effects it returns:

- :class:`Respond` -- write ``frame`` (a whole response frame, size prefix included, for the
  request's version and correlation id) to the connection of the request given ``token``;
- :class:`Append` -- append ``records`` (one v2 record batch) to partition ``partition`` of
  ``__transaction_state``, then report how it went with :meth:`Coordinator.appended`;
- :class:`WriteMarkers` -- write the COMMIT (``commit``) or ABORT marker of ``producer_id`` at
  ``producer_epoch`` with ``coordinator_epoch`` to every ``(topic, partition)`` of
  ``partitions`` (``__consumer_offsets`` ones go to the group coordinator), then report with
  :meth:`Coordinator.markers_written`; the transaction then completes.

::

    coordinator = Coordinator({"transaction.max.timeout.ms": 900_000})
    for partition, data in logs:                  # __transaction_state, from its start
        coordinator.load(partition, data)
    effects = coordinator.handle_frame(now_ms(), token, frame, next_producer_id)
    for effect in effects:
        match effect:
            case Respond(token, frame):
                connection_of(token).write(frame)
            case Append(token, partition, records):
                error = append_to_log(partition, records)   # 0 on success
                effects += coordinator.appended(now_ms(), token, error)
            case WriteMarkers(txn_id, pid, epoch, commit, coordinator_epoch, partitions):
                write_markers(pid, epoch, commit, coordinator_epoch, partitions)
                effects += coordinator.markers_written(now_ms(), txn_id, pid, epoch)

The host's surface:

- ``Coordinator(config=None)``: ``config`` maps Kafka's names (:data:`CONFIG_KEYS`:
  ``transaction.state.log.num.partitions``, ``transaction.max.timeout.ms``,
  ``transactional.id.expiration.ms``, the two cleanup intervals,
  ``offsets.topic.num.partitions``) to ints.
- ``handle_frame(now_ms, token, frame, next_producer_id=None)``: a request of
  :data:`TXN_API_KEYS` as its raw frame (the bytes after the size prefix): InitProducerId with a
  transactional id (v0-5), AddPartitionsToTxn (v0-5, v4+ batched with ``verify_only``),
  AddOffsetsToTxn (v0-4), EndTxn (v0-4), DescribeTransactions (v0), ListTransactions (v0-1).
  ``next_producer_id()`` returns a fresh producer id, never one handed out before; an exception
  with a Kafka ``code`` answers the request with it, any other answers UNKNOWN_SERVER_ERROR
  (and goes to ``sys.unraisablehook``).
- ``appended(now_ms, token, error_code=0)``: the outcome of an :class:`Append`; storage errors
  are mapped as Kafka's ``TransactionStateManager`` maps them.
- ``markers_written(now_ms, transactional_id, producer_id, producer_epoch)``: the markers of a
  :class:`WriteMarkers` are written.
- ``tick(now_ms)`` and ``next_deadline`` (ms, or None): the timeout aborts and id expiry; after
  a load that found decided transactions, ``next_deadline`` is in the past until a tick hands
  their :class:`WriteMarkers` over.
- ``load(partition, batches, last=True, coordinator_epoch=0)``: replay a partition of
  ``__transaction_state``; counts with ``"transactions"``. ``unload(now_ms, partition)``.
- ``set_topics({topic: partitions} | None)``: AddPartitionsToTxn answers unknown partitions
  UNKNOWN_TOPIC_OR_PARTITION (and the rest OPERATION_NOT_ATTEMPTED).
- ``verify(transactional_id, producer_id, producer_epoch, topic, partition)``: the produce
  path's check (KIP-890 part 1), an error code: 0 when the partition is in the ongoing
  transaction.
- ``partition_for(transactional_id)``, ``transaction_state(transactional_id)``,
  ``transaction_count``, ``pending_appends``, ``waiting``.
- ``transactions()``: every transactional id held but Dead ones, by id, as dicts of plain data
  (``transactional_id``, ``producer_id``, ``producer_epoch``, ``state``, ``pending_state``,
  ``timeout_ms``, ``partitions``, ``start_time_ms``, ``update_time_ms``): what
  ``kgroup.broker.inspect.transactions`` reads.
"""

from __future__ import annotations

from typing import TypeAlias

from kgroup._native.txn import (
    CONFIG_KEYS,
    TXN_API_KEYS,
    Append,
    Coordinator,
    Respond,
    WriteMarkers,
)

__all__ = [
    "CONFIG_KEYS",
    "TXN_API_KEYS",
    "Append",
    "Coordinator",
    "Effect",
    "Respond",
    "WriteMarkers",
]

#: Effect is what the coordinator asks the host to do.
Effect: TypeAlias = Respond | Append | WriteMarkers
