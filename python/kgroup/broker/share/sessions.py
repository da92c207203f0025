"""Share sessions (KIP-932): what a broker remembers of each share consumer between its
ShareFetch and ShareAcknowledge requests, as Kafka 4.2's ``ShareSessionCache``,
``ShareSession``, ``ShareSessionContext`` and ``SharePartitionManager.newContext`` /
``acknowledgeSessionUpdate`` keep it.

- A session is keyed by (group id, member id): one per member on this broker. It holds the
  member's partitions, in the order they were added, and the epoch its next request must carry.
- Epochs (``ShareRequestMetadata``): 0 opens a session, -1 closes it, any other is the current
  epoch; after each request the epoch moves on by one, from ``2**31 - 1`` back to 1.
- ShareFetch at epoch 0 replaces any session of the key (the member's records are *not*
  released by that) with one holding exactly the request's partitions, epoch 1, unless the
  cache already holds ``group.share.max.share.sessions`` sessions: SHARE_SESSION_LIMIT_REACHED.
  Its response is full: every partition of the request.
- ShareFetch at epoch n > 0: no session, SHARE_SESSION_NOT_FOUND; another epoch,
  INVALID_SHARE_SESSION_EPOCH. The request's partitions are added, its forgotten ones removed,
  the epoch moves on; the fetch covers every partition of the session, and the response is
  incremental (``Session.must_respond``).
- ShareFetch at epoch -1: the session must exist (SHARE_SESSION_NOT_FOUND); the request only
  acknowledges, then the session is removed and the member's records in its partitions released.
- ShareAcknowledge never opens a session: epoch 0 is INVALID_SHARE_SESSION_EPOCH; then as
  ShareFetch (not found, wrong epoch), and -1 closes the session after the acknowledgements.
- A session lives until its epoch -1 or until the connection that opened it closes (Kafka has
  no idle eviction of share sessions); a closed connection removes the sessions it last
  opened, and their members' records are released. A session reopened from another connection
  is not removed when the old connection closes (Kafka marks the old connection's entry stale).

Pure bookkeeping: no I/O, no records; the caller (``kgroup.broker.share.manager``) releases.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from kgroup import errors

__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "Session",
    "SessionCache",
    "next_epoch",
]

#: INITIAL_EPOCH opens a share session, FINAL_EPOCH closes one (``ShareRequestMetadata``).
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_INT32_MAX = 2**31 - 1

#: A share partition of a session: (topic id, partition index).
TopicIdPartition = tuple[uuid.UUID, int]


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch``: -1 stays -1, ``2**31 - 1`` wraps to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _INT32_MAX else epoch + 1


class Session:
    """Session is one member's share session: its partitions (insertion-ordered, each with
    whether the next incremental response must list it), its expected epoch and the connection
    that opened it."""

    __slots__ = ("connection", "epoch", "group", "member", "partitions")

    def __init__(
        self,
        group: str,
        member: str,
        partitions: Iterable[TopicIdPartition],
        connection: object,
    ) -> None:
        self.group = group
        self.member = member
        #: partitions maps each partition to "must be in the next incremental response"
        #: (Kafka's ``CachedSharePartition.requiresUpdateInResponse``): false for those the
        #: session opened with (their full response lists them), true for those added later.
        self.partitions: dict[TopicIdPartition, bool] = dict.fromkeys(partitions, False)
        self.epoch = next_epoch(INITIAL_EPOCH)
        self.connection = connection

    @property
    def key(self) -> tuple[str, str]:
        return (self.group, self.member)

    def update(
        self, added: Iterable[TopicIdPartition], forgotten: Iterable[TopicIdPartition]
    ) -> None:
        """Add the request's partitions (new ones must be in the next response) and remove the
        forgotten ones (Kafka's ``ShareSession.update``)."""
        for tp in added:
            if tp not in self.partitions:
                self.partitions[tp] = True
        for tp in forgotten:
            self.partitions.pop(tp, None)

    def must_respond(self, tp: TopicIdPartition, has_records: bool, error_code: int) -> bool:
        """Whether an incremental response lists ``tp`` (Kafka's
        ``CachedSharePartition.maybeUpdateResponseData``): when it has records, when it is new
        in the session (once), and when it has an error (and once more after the error went,
        so that the client sees it clear). A partition with records moves to the end of the
        session's order, as Kafka moves it."""
        must = has_records
        if self.partitions.get(tp, False):
            must = True
            self.partitions[tp] = False
        if error_code != 0:
            self.partitions[tp] = True
            must = True
        if has_records and tp in self.partitions:
            self.partitions[tp] = self.partitions.pop(tp)
        return must


class SessionCache:
    """SessionCache holds a broker's share sessions, at most ``max_sessions``
    (``group.share.max.share.sessions``). Not thread-safe: the broker's event loop owns it."""

    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self._sessions: dict[tuple[str, str], Session] = {}
        #: _by_connection: the session keys each connection opened last.
        self._by_connection: dict[object, set[tuple[str, str]]] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, group: str, member: str) -> Session | None:
        return self._sessions.get((group, member))

    def sessions(self) -> list[Session]:
        return list(self._sessions.values())

    def open(
        self,
        group: str,
        member: str,
        partitions: Iterable[TopicIdPartition],
        connection: object,
        acknowledgements: bool = False,
    ) -> Session:
        """A ShareFetch at epoch 0: a new session with exactly ``partitions``, replacing the
        member's old one. INVALID_REQUEST when the request carries acknowledgements,
        SHARE_SESSION_LIMIT_REACHED when the cache is full."""
        if acknowledgements:
            raise errors.InvalidRequest(
                "Acknowledge data present in the initial share fetch request."
            )
        self.remove(group, member)
        if len(self._sessions) >= self.max_sessions:
            raise errors.ShareSessionLimitReached()
        session = Session(group, member, partitions, connection)
        self._sessions[session.key] = session
        self._by_connection.setdefault(connection, set()).add(session.key)
        return session

    def _existing(self, group: str, member: str) -> Session:
        session = self._sessions.get((group, member))
        if session is None:
            raise errors.ShareSessionNotFound()
        return session

    def fetch(
        self,
        group: str,
        member: str,
        epoch: int,
        added: Iterable[TopicIdPartition] = (),
        forgotten: Iterable[TopicIdPartition] = (),
    ) -> Session:
        """A ShareFetch at epoch ``epoch`` other than 0: the session, updated and moved to its
        next epoch (-1: only checked to exist; the caller closes it with ``remove`` once the
        acknowledgements are applied). SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH."""
        session = self._existing(group, member)
        if epoch == FINAL_EPOCH:
            return session
        if session.epoch != epoch:
            raise errors.InvalidShareSessionEpoch()
        session.update(added, forgotten)
        session.epoch = next_epoch(session.epoch)
        return session

    def acknowledge(self, group: str, member: str, epoch: int) -> Session:
        """A ShareAcknowledge at ``epoch``: 0 is INVALID_SHARE_SESSION_EPOCH (it cannot open a
        session); then as ``fetch`` without partitions."""
        if epoch == INITIAL_EPOCH:
            raise errors.InvalidShareSessionEpoch()
        return self.fetch(group, member, epoch)

    def remove(self, group: str, member: str) -> Session | None:
        """Remove the member's session, if any (epoch -1, or replaced by epoch 0)."""
        session = self._sessions.pop((group, member), None)
        if session is not None:
            keys = self._by_connection.get(session.connection)
            if keys is not None:
                keys.discard(session.key)
                if not keys:
                    del self._by_connection[session.connection]
        return session

    def disconnected(self, connection: object) -> list[Session]:
        """The connection closed: remove the sessions it opened (not those reopened since from
        another connection) and return them, for the caller to release their records."""
        keys = self._by_connection.pop(connection, None)
        if not keys:
            return []
        out = []
        for key in keys:
            session = self._sessions.get(key)
            if session is not None and session.connection is connection:
                del self._sessions[key]
                out.append(session)
        return out
