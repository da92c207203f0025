"""ShareManager: the broker's share partitions and share sessions (Kafka 4.2's
``SharePartitionManager``), what the ShareFetch and ShareAcknowledge handlers act on.

One ``SharePartition`` (``kgroup._native.share``) per (share group, topic-partition), made at
the group's first fetch of the partition: its start offset comes from the group's
``share.auto.offset.reset`` (``latest``: the high watermark; ``earliest``: the log start offset;
``by_duration:D``: the first offset with a timestamp at or after now minus D, else
OFFSET_NOT_AVAILABLE and no partition yet), its lock duration from the group's
``share.record.lock.duration.ms`` else ``group.share.record.lock.duration.ms``, its delivery
limit and in-flight window from ``group.share.delivery.count.limit`` and
``group.share.partition.max.record.locks`` (the group's ``share.*`` values first when set).

Every change a share partition asks to persist (acknowledgement, release, lock expiry) goes
through :meth:`ShareManager.persist`, the one place where the append of a ShareUpdate record to
``__share_group_state`` will go (the share state store, later work). Until then the state is
in memory only: it is merged into a ``PersistedState`` per partition there, as the share
coordinator would, and lost at restart.

Acquisition locks: each share partition has one timer at its earliest lock deadline; when it
fires, the expired records become available again (or archived at the delivery limit) and the
fetches waiting on the partition wake. Releases (acknowledgements of type Release, session
close, a closed connection) wake them too.

Not thread-safe: the broker's event loop owns it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup._native.share import SharePartition, ShareUpdate
from kgroup.broker.group_configs import duration_ms
from kgroup.broker.share.sessions import Session, SessionCache

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from kgroup.broker.config import BrokerConfig
    from kgroup.broker.topics import Partition

__all__ = ["Held", "ShareManager"]

#: A share partition's key: (group id, topic id, partition index).
Key = tuple[str, uuid.UUID, int]


def now_ms() -> int:
    return int(time.time() * 1000)


class Held:
    """Held is one share partition with what the broker keeps beside it: the log partition it
    reads, its persisted state (in memory for now) and its lock timer."""

    __slots__ = ("key", "partition", "persisted", "share", "timer", "timer_at")

    def __init__(self, key: Key, partition: Partition, share: SharePartition) -> None:
        self.key = key
        self.partition = partition
        self.share = share
        self.persisted = share.snapshot()
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at: int | None = None


class ShareManager:
    """ShareManager holds the broker's share partitions and its share session cache."""

    def __init__(
        self, config: BrokerConfig, group_configs: Callable[[str], dict[str, Any]]
    ) -> None:
        """``group_configs`` gives a group's configs as set (``GroupConfigs.parsed``)."""
        self.config = config
        self._group_configs = group_configs
        #: enabled: ``group.share.enable``; off, the share apis answer UNSUPPORTED_VERSION and
        #: ApiVersions does not list them.
        self.enabled = bool(config.get("group.share.enable"))
        self.sessions = SessionCache(int(config.get("group.share.max.share.sessions")))
        self.partitions: dict[Key, Held] = {}
        #: initialized: the share partitions the group coordinator asked to initialize
        #: (``InitializeShareState``), with their state epoch: Kafka's share coordinator
        #: state with start offset -1, "not decided yet", until the first fetch decides it.
        self.initialized: dict[Key, int] = {}
        #: persisted_updates counts the updates that went through ``persist``.
        self.persisted_updates = 0

    # --- configs -------------------------------------------------------------------------

    def _group_config(self, group: str) -> dict[str, Any]:
        return self._group_configs(group)

    def lock_duration_ms(self, group: str) -> int:
        """The group's ``share.record.lock.duration.ms``, else the broker's (Kafka's
        ``ShareFetchUtils.recordLockDurationMsOrDefault``): AcquisitionLockTimeoutMs."""
        value = self._group_config(group).get("share.record.lock.duration.ms")
        if value is None:
            value = self.config.get("group.share.record.lock.duration.ms")
        return int(value)

    def isolation_level(self, group: str) -> str:
        """The group's ``share.isolation.level`` (default ``read_uncommitted``)."""
        return str(self._group_config(group).get("share.isolation.level", "read_uncommitted"))

    def _setting(self, group: str, group_key: str, broker_key: str) -> int:
        value = self._group_config(group).get(group_key)
        return int(self.config.get(broker_key) if value is None else value)

    def _start_offset(self, group: str, p: Partition) -> int:
        reset = self._group_config(group).get("share.auto.offset.reset", "latest")
        lg = p.log
        if reset == "earliest":
            return lg.log_start_offset
        if reset.startswith("by_duration:"):
            found = lg.offset_for_timestamp(now_ms() - duration_ms(reset[len("by_duration:") :]))
            if found is None:
                raise errors.OffsetNotAvailable()
            return max(found.offset, lg.log_start_offset)
        return lg.log_end_offset

    # --- share partitions ----------------------------------------------------------------

    def held(self, group: str, p: Partition) -> Held:
        """The group's share partition of ``p``, made at its first use (start offset from
        ``share.auto.offset.reset``; OFFSET_NOT_AVAILABLE leaves it unmade)."""
        key = (group, p.topic.id, p.index)
        h = self.partitions.get(key)
        if h is None:
            sp = SharePartition(
                self._start_offset(group, p),
                state_epoch=self.initialized.get(key, 0),
                max_delivery_count=self._setting(
                    group, "share.delivery.count.limit", "group.share.delivery.count.limit"
                ),
                max_in_flight_records=self._setting(
                    group,
                    "share.partition.max.record.locks",
                    "group.share.partition.max.record.locks",
                ),
                record_lock_duration_ms=self.lock_duration_ms(group),
            )
            h = self.partitions[key] = Held(key, p, sp)
        else:
            self._catch_up(h)
        return h

    def initialize(
        self, group: str, topic_id: uuid.UUID, partitions: Iterable[int], epoch: int
    ) -> None:
        """The group coordinator's InitializeShareState: the share state of ``partitions``
        exists from now on, at state epoch ``epoch`` and with its start offset undecided, as
        Kafka's share coordinator writes it (start offset -1). Idempotent: a partition asked
        for again keeps its state. As Kafka's ``SharePartition.maybeInitialize``, the start
        offset is decided from ``share.auto.offset.reset`` when the partition is first
        fetched."""
        for index in partitions:
            self.initialized.setdefault((group, topic_id, index), epoch)

    def delete(self, group: str, topic_id: uuid.UUID, partitions: Iterable[int]) -> None:
        """The group coordinator's DeleteShareState (the group was deleted): the share state
        of ``partitions`` goes, with their in-flight records."""
        for index in partitions:
            key = (group, topic_id, index)
            self.initialized.pop(key, None)
            h = self.partitions.pop(key, None)
            if h is not None and h.timer is not None:
                h.timer.cancel()
                h.timer = None

    def topic_deleted(self, topic_id: uuid.UUID) -> None:
        """The topic ``topic_id`` was deleted: every group's share state of its partitions
        goes."""
        for group, tid, index in [k for k in (*self.initialized, *self.partitions)]:
            if tid == topic_id:
                self.delete(group, tid, [index])

    def existing(self, group: str, p: Partition) -> Held | None:
        h = self.partitions.get((group, p.topic.id, p.index))
        if h is not None:
            self._catch_up(h)
        return h

    def _catch_up(self, h: Held) -> None:
        """Before any call: expire the locks whose time passed (the timer may not have run
        yet) and follow the log start offset."""
        sp = h.share
        deadline = sp.next_deadline
        if deadline is not None and deadline <= now_ms():
            self._expire(h)
        start = h.partition.log.log_start_offset
        if start > sp.start_offset:
            sp.update_log_start_offset(start)

    def persist(self, h: Held, update: ShareUpdate | None) -> None:
        """The one place every ShareUpdate goes through: where the append of a ShareUpdate
        record to ``__share_group_state`` will be (answering waits for it then). For now it is
        merged into the partition's in-memory persisted state."""
        if update is None:
            return
        h.persisted.apply(update)
        self.persisted_updates += 1

    def arm(self, h: Held) -> None:
        """(Re)arm the partition's lock timer at its earliest deadline."""
        deadline = h.share.next_deadline
        if deadline is None or (h.timer is not None and h.timer_at == deadline):
            return
        if h.timer is not None:
            h.timer.cancel()
        loop = asyncio.get_running_loop()
        delay = max(0.0, (deadline - now_ms()) / 1000)
        h.timer_at = deadline
        h.timer = loop.call_later(delay, self._on_timer, h)

    def _on_timer(self, h: Held) -> None:
        h.timer = None
        h.timer_at = None
        if self.partitions.get(h.key) is not h:
            return
        self._expire(h)
        self.arm(h)

    def _expire(self, h: Held) -> None:
        update = h.share.expire(now_ms())
        if update is not None:
            self.persist(h, update)
            h.partition.wake()

    def released(self, h: Held, update: ShareUpdate | None) -> None:
        """Persist a change that may have made records available, and wake the fetches."""
        if update is None:
            return
        self.persist(h, update)
        h.partition.wake()

    # --- sessions -------------------------------------------------------------------------

    def release_session(self, session: Session) -> None:
        """The session closed (epoch -1, or its connection): release its member's records in
        its partitions (Kafka's ``SharePartitionManager.releaseSession``)."""
        for topic_id, index in session.partitions:
            h = self.partitions.get((session.group, topic_id, index))
            if h is not None:
                self._catch_up(h)
                self.released(h, h.share.release_member(session.member))

    def close_session(self, group: str, member: str) -> None:
        session = self.sessions.remove(group, member)
        if session is not None:
            self.release_session(session)

    def connection_closed(self, connection: object) -> None:
        """A client's connection closed: its sessions go, and their records are released."""
        for session in self.sessions.disconnected(connection):
            self.release_session(session)

    def close(self) -> None:
        for h in self.partitions.values():
            if h.timer is not None:
                h.timer.cancel()
                h.timer = None
