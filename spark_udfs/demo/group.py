"""group: three kgroup consumers read a topic as one group; one leaves mid-way and comes back.

Each member is a :class:`kgroup.Consumer` in a thread of its own, as a service runs one: it
takes a batch (``consume_arrow``), processes it (counts its records per partition, checks that
each keyed record sits in the partition Java's producer picks for its key), then commits the
batch's offsets synchronously (``enable.auto.commit`` false). The group uses cooperative-sticky:
members keep consuming while it rebalances, and give up only the partitions that move.

:func:`run_group` tells the story in phases. The members process up to a third of the records,
then ``c1`` leaves (``close()``); the other two take over its partitions while they read on to
two thirds; then ``c1`` comes back as a new Consumer and the group hands it partitions again;
then the members read to the end. Between phases the members hold back with
``pause()``/``resume()``, Kafka's way to stop fetching while staying in the group, so that the
leave and the return happen mid-way at any speed and size.

Each member notes, in its rebalance callbacks, its partitions in each generation
(:meth:`kgroup.Consumer.consumer_group_metadata` names the generation a callback belongs to),
and every offset it processed: a record processed twice shows as a duplicate offset.

Kafka's promise with commits after processing: no record is processed twice, except where a
member loses partitions (``on_lost``: its session expired, or the group moved on without it)
or cannot commit what it processed before giving a partition up (the group started another
rebalance). Then the next owner reads again from the last commit: at-least-once. The result
counts those duplicates and says where they came from.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import kgroup
from kgroup.client import TopicPartition
from kgroup.client.types import CommitFailed
from kgroup.errors import RebalanceInProgress

__all__ = ["LEAVER", "ROLES", "GroupResult", "run_group"]

ROLES = ("c0", "c1", "c2")
#: LEAVER is the member that leaves mid-way and comes back.
LEAVER = "c1"

# Client settings that keep the story brisk: members notice a rebalance at their next
# heartbeat, and the broker's group.min.session.timeout.ms is 6000.
SESSION_MS, HEARTBEAT_MS = 6000, 300
# How long the group may take to rebalance, and to read a phase's records.
REBALANCE_S = 60.0
READ_S = 120.0


@dataclass
class GroupResult:
    """GroupResult is what the group did: for each generation a member saw, each member's
    partitions (``generations[g][role]``; a member absent from ``generations[g]`` got no
    assignment in generation g) and member id; the records each member processed per
    partition (``records[role][p]``, duplicates included); the distinct offsets processed per
    partition; the partitions members lost, the offsets they could not commit before giving
    a partition up, the keyed records found outside their key's partition, and the seconds
    the whole run took."""

    roles: tuple[str, ...]
    generations: dict[int, dict[str, tuple[int, ...]]]
    member_ids: dict[int, dict[str, str]]
    records: dict[str, list[int]]
    distinct: list[int]
    lost: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    uncommitted: list[tuple[str, dict[int, int]]] = field(default_factory=list)
    misplaced: int = 0
    seconds: float = 0.0

    @property
    def delivered(self) -> list[int]:
        """delivered is the records processed per partition, by every member together."""
        return [sum(col) for col in zip(*self.records.values(), strict=True)]

    @property
    def duplicates(self) -> list[int]:
        """duplicates is, per partition, the records processed more than once."""
        return [d - u for d, u in zip(self.delivered, self.distinct, strict=True)]

    def left_and_came_back(self, role: str = LEAVER) -> tuple[int, int, int] | None:
        """left_and_came_back is (g1, g2, g3): ``role`` was a member of generation g1, absent
        from the later generation g2 (which had members), and a member again in the later g3,
        with another member id (a new Consumer); None when no generations show it."""
        gens = sorted(self.generations)
        for i, g1 in enumerate(gens):
            if role not in self.generations[g1]:
                continue
            for j in range(i + 1, len(gens)):
                g2 = gens[j]
                if role in self.generations[g2]:
                    continue
                for g3 in gens[j + 1 :]:
                    if (
                        role in self.generations[g3]
                        and self.member_ids[g3][role] != self.member_ids[g1][role]
                    ):
                        return g1, g2, g3
        return None


class _Group:
    """_Group is what the members share and the story reads, behind one condition variable:
    every change notifies it, and the story waits on it with a deadline."""

    def __init__(self, bootstrap: str, topic: str, group: str, ends: list[int]) -> None:
        self.bootstrap, self.topic, self.group = bootstrap, topic, group
        self.partitions = len(ends)
        self.ends = ends
        total = sum(ends)
        # Batches of about a sixtieth of the data (200 to 10,000 records): small enough that
        # the phases stay apart at small sizes, large enough that commits cost little.
        self.batch = min(10_000, max(200, total // 60))
        self.cond = threading.Condition()
        self.live: dict[str, Member] = {}
        self.gate = 0  # members process records while fewer than this were processed
        self.processed = 0
        self.records = {role: [0] * self.partitions for role in ROLES}
        self.offsets: list[list[np.ndarray]] = [[] for _ in range(self.partitions)]
        self.committed = [0] * self.partitions
        self.generations: dict[int, dict[str, tuple[int, ...]]] = {}
        self.member_ids: dict[int, dict[str, str]] = {}
        self.lost: list[tuple[str, tuple[int, ...]]] = []
        self.uncommitted: list[tuple[str, dict[int, int]]] = []
        self.misplaced = 0
        #: generations are noted until the members close (their closing rebalances the group
        #: a few more times, which is no part of the story)
        self.recording = True
        self.errors: list[str] = []
        self.started = time.monotonic()

    def config(self, role: str) -> dict[str, Any]:
        return {
            "bootstrap.servers": self.bootstrap,
            "group.id": self.group,
            "client.id": f"demo-{role}",
            "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }

    def changed(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def fail(self, why: str) -> None:
        with self.cond:
            self.errors.append(why)
            self.cond.notify_all()

    # -- the story's side --------------------------------------------------------------------

    def clock(self) -> str:
        return f"{time.monotonic() - self.started:6.1f} s"

    def open(self, gate: int) -> None:
        with self.cond:
            self.gate = gate
            self.cond.notify_all()

    def start(self, role: str) -> Member:
        m = Member(self, role)
        self.live[role] = m
        m.start()
        return m

    def stop(self, role: str) -> None:
        m = self.live.pop(role)
        m.leave.set()
        m.join(60)
        if m.is_alive():
            raise TimeoutError(f"{role} did not close within 60 s")

    def balanced(self) -> bool:
        """Whether every live member handled the same generation's assignment, and the
        members together own every partition once, each member one at least (as far as there
        are partitions)."""
        members = list(self.live.values())
        owned = sorted(p for m in members for p in m.owned)
        generations = {m.generation for m in members}
        holders = sum(1 for m in members if m.owned)
        return (
            len(generations) == 1
            and -1 not in generations
            and owned == list(range(self.partitions))
            and holders == min(self.partitions, len(members))
        )

    def all_committed(self) -> bool:
        return all(c >= e for c, e in zip(self.committed, self.ends, strict=True))

    def wait(self, what: str, condition: Callable[[], bool], timeout: float) -> None:
        """Wait until ``condition()`` holds (re-checked at every change); raise when a member
        failed, or after ``timeout`` seconds, naming ``what`` and the members' state."""
        with self.cond:
            ok = self.cond.wait_for(lambda: self.errors or condition(), timeout)
            if self.errors:
                raise RuntimeError("a consumer failed: " + "; ".join(self.errors))
            if not ok:
                raise TimeoutError(
                    f"timed out after {timeout:.0f} s waiting for {what}: {self.state()}"
                )

    def state(self) -> str:
        members = ", ".join(
            f"{r} generation {m.generation} owns {list(m.owned)}" for r, m in self.live.items()
        )
        return f"{self.processed:,} records processed; {members}"

    def generation(self) -> int:
        return next(iter(self.live.values())).generation

    def assignment(self) -> str:
        from spark_udfs.report import ranges

        return ", ".join(
            f"{r} [{ranges(list(m.owned)) if m.owned else ''}]"
            for r, m in sorted(self.live.items())
        )

    def result(self) -> GroupResult:
        distinct = [
            int(np.unique(np.concatenate(offs)).size) if offs else 0 for offs in self.offsets
        ]
        return GroupResult(
            roles=ROLES,
            generations=self.generations,
            member_ids=self.member_ids,
            records=self.records,
            distinct=distinct,
            lost=self.lost,
            uncommitted=self.uncommitted,
            misplaced=self.misplaced,
            seconds=time.monotonic() - self.started,
        )


class Member(threading.Thread):
    """Member is one consumer of the group, in a thread: consume a batch, process it, commit
    it, until told to leave; then ``close()``, which leaves the group. What it saw goes to the
    shared :class:`_Group`."""

    def __init__(self, group: _Group, role: str) -> None:
        super().__init__(name=f"kgroup-demo-{role}", daemon=True)
        self.group, self.role = group, role
        #: the member's partitions and generation as of its last rebalance callback
        self.owned: tuple[int, ...] = ()
        self.generation = -1
        #: offsets processed and not committed yet, by partition
        self.pending: dict[int, int] = {}
        self.leave = threading.Event()
        self.closing = False

    def run(self) -> None:
        g = self.group
        try:
            c = kgroup.Consumer(g.config(self.role))
        except Exception as e:
            g.fail(f"{self.role}: {e!r}")
            return
        try:
            c.subscribe(
                [g.topic], on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost
            )
            paused = False
            while not self.leave.is_set():
                if g.processed >= g.gate:
                    # Hold back without leaving: fetch nothing, keep polling (rebalances go on).
                    c.pause(c.assignment())
                    paused = True
                elif paused:
                    c.resume(c.assignment())
                    paused = False
                batch = c.consume_arrow(g.batch, 0.1)
                if batch.num_rows:
                    self._process(batch)
                if self.pending:
                    self._commit(c, dict(self.pending))
        except Exception as e:
            g.fail(f"{self.role}: {e!r}")
        finally:
            self.closing = True
            try:
                c.close()  # on_revoke commits what is pending; then LeaveGroup
            except Exception as e:
                g.fail(f"{self.role}: close: {e!r}")
            g.changed()

    def _process(self, batch: Any) -> None:
        g = self.group
        parts = batch.column("partition").to_numpy(zero_copy_only=False)
        offsets = batch.column("offset").to_numpy(zero_copy_only=False)
        # Each keyed record must sit where Java's producer puts its key (-1: a null key).
        expected = kgroup.partition_keys(batch.column("key"), g.partitions)
        misplaced = int(np.count_nonzero((expected >= 0) & (expected != parts)))
        with g.cond:
            for p in np.unique(parts).tolist():
                offs = offsets[parts == p]
                g.offsets[p].append(offs)
                g.records[self.role][p] += len(offs)
                self.pending[p] = int(offs.max()) + 1
            g.processed += batch.num_rows
            g.misplaced += misplaced
            g.cond.notify_all()

    def _commit(self, c: kgroup.Consumer, todo: dict[int, int]) -> bool:
        """Commit ``todo`` (partition: next offset) synchronously; False when Kafka refuses it
        for now: REBALANCE_IN_PROGRESS while the group rebalances, ILLEGAL_GENERATION when the
        commit carried the generation the group just left. The member still owns the
        partitions (it gives them up only inside poll), so the offsets stay pending and go
        with the next commit."""
        g = self.group
        tps = [TopicPartition(g.topic, p, o) for p, o in sorted(todo.items())]
        try:
            c.commit(offsets=tps, asynchronous=False)
        except (RebalanceInProgress, CommitFailed):
            return False
        with g.cond:
            for p, o in todo.items():
                if self.pending.get(p) == o:
                    del self.pending[p]
                g.committed[p] = max(g.committed[p], o)
            g.cond.notify_all()
        return True

    def _note(self, c: kgroup.Consumer, owned: set[int]) -> None:
        g = self.group
        meta = c.consumer_group_metadata()
        with g.cond:
            self.owned, self.generation = tuple(sorted(owned)), meta.generation_id
            if not g.recording:
                return
            g.generations.setdefault(meta.generation_id, {})[self.role] = self.owned
            g.member_ids.setdefault(meta.generation_id, {})[self.role] = meta.member_id
            g.cond.notify_all()

    def _assigned(self, c: kgroup.Consumer, partitions: list[TopicPartition]) -> None:
        self._note(c, {tp.partition for tp in c.assignment()})

    def _revoked(self, c: kgroup.Consumer, partitions: list[TopicPartition]) -> None:
        # Commit what was processed of the partitions before giving them up. If Kafka refuses
        # (another rebalance began), their next owner reads those records again.
        gone = {tp.partition for tp in partitions}
        todo = {p: o for p, o in self.pending.items() if p in gone}
        if todo and not self._commit(c, todo):
            with self.group.cond:
                self.group.uncommitted.append((self.role, todo))
        for p in gone:
            self.pending.pop(p, None)
        if self.closing:  # close(): the member leaves; its last generation stays as it was
            with self.group.cond:
                self.owned = ()
            return
        self._note(c, {tp.partition for tp in c.assignment()} - gone)

    def _lost(self, c: kgroup.Consumer, partitions: list[TopicPartition]) -> None:
        # Lost partitions are no longer ours to commit: their next owner starts from the
        # last commit.
        gone = {tp.partition for tp in partitions}
        for p in gone:
            self.pending.pop(p, None)
        with self.group.cond:
            self.group.lost.append((self.role, tuple(sorted(gone))))
            self.owned = tuple(sorted(set(self.owned) - gone))
            self.generation = -1
            self.group.cond.notify_all()


def run_group(
    bootstrap: str,
    topic: str,
    ends: list[int],
    *,
    group: str = "kgroup-demo",
    say: Callable[[str], None] = print,
) -> GroupResult:
    """run_group has three consumers read ``topic`` (``ends[p]`` records in partition p, from
    offset 0) as ``group``, with :data:`LEAVER` leaving after a third of the records and
    coming back after two thirds; it returns once every record is committed and every member
    closed. ``say`` gets one line per step, as it happens. Raises TimeoutError naming the step
    and the members' state when the group is stuck, RuntimeError when a member fails."""
    g = _Group(bootstrap, topic, group, ends)
    total = sum(ends)
    read_s = READ_S + total / 5_000
    try:
        for role in ROLES:
            g.start(role)
        say(f"{g.clock()}  {', '.join(ROLES)} subscribe to {topic} as group {group!r}")
        g.wait("every member to get partitions", g.balanced, REBALANCE_S)
        say(f"{g.clock()}  generation {g.generation()}: {g.assignment()}")

        g.open(total // 3)
        g.wait("a third of the records", lambda: g.processed >= total // 3, read_s)
        say(f"{g.clock()}  {g.processed:,} records processed: {LEAVER} leaves (close())")
        g.stop(LEAVER)
        g.open(2 * total // 3)
        g.wait(f"the others to take {LEAVER}'s partitions", g.balanced, REBALANCE_S)
        say(f"{g.clock()}  generation {g.generation()}: {g.assignment()}")

        g.wait("two thirds of the records", lambda: g.processed >= 2 * total // 3, read_s)
        say(f"{g.clock()}  {g.processed:,} records processed: {LEAVER} comes back (a new Consumer)")
        g.start(LEAVER)
        g.wait(f"{LEAVER} to get partitions again", g.balanced, REBALANCE_S)
        say(f"{g.clock()}  generation {g.generation()}: {g.assignment()}")

        g.open(2**62)  # no gate: read to the end
        g.wait("every record to be committed", g.all_committed, read_s)
        say(f"{g.clock()}  every record processed and committed: the consumers close")
    finally:
        g.recording = False
        for role in list(g.live):
            g.live[role].leave.set()
        for role in list(g.live):
            g.stop(role)
    if g.errors:
        raise RuntimeError("a consumer failed: " + "; ".join(g.errors))
    return g.result()
