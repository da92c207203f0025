"""kgroup.group: Kafka's classic group coordinator, for a broker to host.

The coordinator (Rust, ``rust/group/``) is a pure state machine: it reads no clock and does no
I/O. The host hands it each group request with the time and a token of its choice, and carries
out the effects it returns:

- :class:`Respond` -- write ``frame`` (a whole response frame, size prefix included, for the
  request's version and correlation id) to the connection of the request given ``token``;
- :class:`Append` -- append ``records`` (one v2 record batch) to partition ``partition`` of
  ``__consumer_offsets``, then report how it went with :meth:`Coordinator.appended`.

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

Requests are the :class:`kgroup.protocol.Request` objects that
:func:`kgroup.protocol.decode_request` returns, of the apis in :data:`GROUP_API_KEYS`
(JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, OffsetDelete,
DescribeGroups, ListGroups, DeleteGroups), at every version Kafka 3.9 speaks. FindCoordinator is
the broker's own: the coordinator of every group is the broker itself. Config keys are Kafka's
(:data:`CONFIG_KEYS`). The same calls with the same times (and the same ``seed``) give the same
effects.
"""

from __future__ import annotations

from typing import TypeAlias

from kgroup._native.group import (
    CONFIG_KEYS,
    GROUP_API_KEYS,
    Append,
    Coordinator,
    Respond,
    partition_for,
)

__all__ = [
    "CONFIG_KEYS",
    "GROUP_API_KEYS",
    "Append",
    "Coordinator",
    "Effect",
    "Respond",
    "partition_for",
]

#: Effect is what the coordinator asks the host to do.
Effect: TypeAlias = Respond | Append
