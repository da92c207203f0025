"""GroupHost: Kafka's classic consumer groups on this broker.

The coordinator is Rust (:class:`kgroup.group.Coordinator`): a pure state machine that reads no
clock and does no I/O. ``GroupHost``, one per broker, is everything around it:

- Requests. The handlers of the ten group apis (``handlers/join_group.py`` ...) hand their
  request in with a token of the host's. Most are answered in the same call, with a whole
  response frame; the others (a JoinGroup or SyncGroup parked until its rebalance completes, a
  commit waiting for its records to be durable) get a future that a later effect resolves, from
  another member's request, an append's outcome or a timer. The server writes either in the
  connection's request order, and a parked request holds nothing but its own connection's later
  responses, as Kafka, which reads nothing more from that connection meanwhile, holds them.
- Appends. The coordinator's records (offsets, group metadata, tombstones, in Kafka's own
  schemas) go to the ``__consumer_offsets`` partition it names and are reported with
  ``appended`` once written: a commit is answered, and visible to OffsetFetch, once it would
  survive a kill -9 of the broker (the written pages are the kernel's). That is Kafka's own
  rule with one replica (a commit waits for the in-sync replicas, never for an fsync), and it
  makes commits as fast as the log. The log flush settings decide the fsync, as for any topic:
  once an append reaches ``flush.messages`` (``log.flush.interval.messages``; 1 makes every
  commit wait for its fsync, which survives a power loss too), the answer waits for the
  broker's flusher (one fsync for every commit that arrived meanwhile: group commit);
  ``flush.ms`` bounds how long written records stay unsynced.
- Timers. One event loop timer at ``next_deadline`` (sessions, join delays, pending members,
  offset expiry), re-armed after every call that may move it.
- Topics. ``set_topics`` after every topic change, so that commits to unknown topics or
  partitions get UNKNOWN_TOPIC_OR_PARTITION; ``topics_deleted`` when a topic is deleted.
  ``__consumer_offsets`` is created when first needed, as Kafka creates it: on the first
  FindCoordinator for a group (or a Metadata request naming it), with
  ``offsets.topic.num.partitions`` partitions, compacted, in ``offsets.topic.segment.bytes``
  segments. Until it exists no partition is this broker's: group requests are answered
  NOT_COORDINATOR and clients go back to FindCoordinator. Kafka creates it asynchronously and
  answers that first FindCoordinator COORDINATOR_NOT_AVAILABLE; here the topic is created
  in the request (about 40 ms for 50 partitions, once per data folder), which spares clients
  their retry.
- Start. Every partition of ``__consumer_offsets`` is replayed in the background, from its log
  start, in reads of ``offsets.load.buffer.size`` bytes; meanwhile its groups answer
  COORDINATOR_LOAD_IN_PROGRESS and clients retry. A partition that fails to load (a record that
  does not decode) is given up: its groups answer NOT_COORDINATOR rather than come back empty,
  which would reset their consumers' positions. That is Kafka 4.0's coordinator runtime (its
  FAILED state); Kafka 3.9's default (Scala) coordinator logs the error and serves the
  partition with whatever it loaded (``ownedPartitions.add`` in a ``finally``).
- Stop. Every partition is unloaded: parked requests are answered NOT_COORDINATOR, commits
  still waiting for their fsync are answered when it ends.

Not thread-safe: the broker's event loop owns it (log reads at start run in a thread, the
coordinator is only called from the loop).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kgroup import errors
from kgroup.broker.topics import LEADER_EPOCH, OFFSETS_TOPIC, Partition, Topic, now_ms
from kgroup.group import CONFIG_KEYS, Append, Coordinator, Effect, Respond
from kgroup.protocol.records import read_batch_headers

if TYPE_CHECKING:
    from kgroup.broker.server import RequestContext
    from kgroup.broker.state import BrokerState

__all__ = ["GroupHost"]

log = logging.getLogger("kgroup.broker")


class GroupHost:
    """GroupHost runs the broker's group coordinator: requests in, frames out, records appended
    durably, timers fired. See the module's docstring."""

    def __init__(self, state: BrokerState) -> None:
        self.state = state
        config = state.config
        #: coordinator is the Rust state machine, configured by the broker's ``group.*`` and
        #: ``offset(s).*`` settings (Kafka's names).
        self.coordinator = Coordinator({k: config.get(k) for k in CONFIG_KEYS})
        self.num_partitions = int(config.get("offsets.topic.num.partitions"))
        self._load_buffer = int(config.get("offsets.load.buffer.size"))
        self._waiting: dict[int, asyncio.Future[bytes]] = {}
        self._next_token = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0
        self._loader: asyncio.Task[None] | None = None
        self._stopped = False
        #: owned are the partitions of ``__consumer_offsets`` whose groups this broker serves
        #: (loaded, or loading).
        self.owned: set[int] = set()
        #: loading are the partitions still being replayed.
        self.loading: set[int] = set()
        state.topics.listeners.append(self._topic_changed)

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Take the partitions of ``__consumer_offsets`` (after the topics are loaded, on the
        event loop): each is loaded in the background; none are this broker's while the topic
        does not exist."""
        self._set_topics()
        topic = self.state.topics.by_name.get(OFFSETS_TOPIC)
        present = min(len(topic.partitions), self.num_partitions) if topic else 0
        now = now_ms()
        for p in range(self.num_partitions):
            if p < present:
                # Its groups answer COORDINATOR_LOAD_IN_PROGRESS until the last chunk.
                self.coordinator.load(p, b"", last=False)
                self.owned.add(p)
                self.loading.add(p)
            else:
                self._apply(self.coordinator.unload(now, p))
        if topic is not None and present:
            self._loader = asyncio.get_running_loop().create_task(self._load_all(topic))
        self._rearm()

    def stop(self) -> None:
        """Give every partition up: parked JoinGroups and SyncGroups are answered
        NOT_COORDINATOR. Commits waiting for their flush are still answered when it ends."""
        self._stopped = True
        if self._loader is not None:
            self._loader.cancel()
        now = now_ms()
        for p in sorted(self.owned):
            self._apply(self.coordinator.unload(now, p))
        self.owned.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _load_all(self, topic: Topic) -> None:
        started = time.monotonic()
        groups = 0
        for p in sorted(self.loading):
            groups += await self._load(topic.partitions[p])
        log.info(
            "Loaded %d group(s) from %d partition(s) of %s in %d ms",
            groups,
            len(topic.partitions),
            OFFSETS_TOPIC,
            (time.monotonic() - started) * 1000,
        )

    async def _load(self, partition: Partition) -> int:
        """Replay one partition of ``__consumer_offsets`` into the coordinator; the number of
        groups it holds."""
        loop = asyncio.get_running_loop()
        p, lg = partition.index, partition.log
        started = time.monotonic()
        offset, end = lg.log_start_offset, lg.log_end_offset
        try:
            while offset < end:
                data = await loop.run_in_executor(None, lg.read, offset, self._load_buffer, end)
                headers = read_batch_headers(data, verify_crc=False)
                if not headers:
                    log.warning(
                        "Reading %s at offset %d (log end %d) gave no batch; loaded up to there",
                        partition.name,
                        offset,
                        end,
                    )
                    break
                last = headers[-1]
                offset = last.base_offset + last.last_offset_delta + 1
                self.coordinator.load(p, data, last=False)
            stats = self.coordinator.load(p, b"", last=True)
        except errors.KGroupError as e:
            log.error(
                "Error loading offsets from %s: %s; its groups are not served (NOT_COORDINATOR)",
                partition.name,
                e,
            )
            self.owned.discard(p)
            self._apply(self.coordinator.unload(now_ms(), p))
            return 0
        finally:
            self.loading.discard(p)
        if stats["groups"]:
            log.info(
                "Finished loading offsets and group metadata from %s (%d group(s)) in %d ms",
                partition.name,
                stats["groups"],
                (time.monotonic() - started) * 1000,
            )
        self._rearm()
        return int(stats["groups"])

    # -- topics --------------------------------------------------------------------------

    def offsets_topic(self) -> Topic:
        """``__consumer_offsets``, created now if it does not exist yet (Kafka's
        ``groupMetadataTopicConfigs``: compacted, producer compression, its own segment
        size)."""
        topics = self.state.topics
        topic = topics.by_name.get(OFFSETS_TOPIC)
        if topic is None:
            config = self.state.config
            topic = topics.create(
                OFFSETS_TOPIC,
                self.num_partitions,
                {
                    "cleanup.policy": ["compact"],
                    "compression.type": "producer",
                    "segment.bytes": int(config.get("offsets.topic.segment.bytes")),
                },
            )
        return topic

    def coordinator_error(self, group_id: str) -> errors.KafkaError | None:
        """Why this broker cannot coordinate ``group_id`` (FindCoordinator), or None: it can.
        Creates ``__consumer_offsets`` when it does not exist."""
        topic = self.offsets_topic()
        if self.coordinator.partition_for(group_id) >= len(topic.partitions):
            # A topic created by hand with fewer partitions: Kafka finds no leader for it.
            return errors.CoordinatorNotAvailable()
        return None

    def _set_topics(self) -> None:
        self.coordinator.set_topics(
            {t.name: len(t.partitions) for t in self.state.topics.by_name.values()}
        )

    def _topic_changed(self, topic: Topic, change: str) -> None:
        self._set_topics()
        if change == "deleted":
            self._apply(self.coordinator.topics_deleted(now_ms(), [topic.name]))
        elif topic.name == OFFSETS_TOPIC and not self._stopped:
            # New (empty) partitions of __consumer_offsets: this broker serves their groups.
            for p in range(min(len(topic.partitions), self.num_partitions)):
                if p not in self.owned:
                    self.coordinator.load(p, b"", last=True)
                    self.owned.add(p)
        self._rearm()

    # -- requests ------------------------------------------------------------------------

    def handle(self, ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
        """Serve one group request: its response frame, or a future of it."""
        self._next_token += 1
        token = self._next_token
        effects = self.coordinator.handle(now_ms(), token, ctx.request, ctx.connection.client_host)
        frame = self._apply(effects, token) if effects else None
        self._rearm()
        if frame is not None:
            return frame
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        return future

    @property
    def waiting(self) -> int:
        """Requests handed to the coordinator and not answered yet."""
        return len(self._waiting)

    # -- effects -------------------------------------------------------------------------

    def _apply(self, effects: Iterable[Effect], mine: int | None = None) -> bytes | None:
        """Carry out effects; returns the frame of token ``mine`` when one answers it."""
        found = None
        queue: collections.deque[Effect] = collections.deque(effects)
        while queue:
            e = queue.popleft()
            if type(e) is Respond:
                if e.token == mine:
                    found = e.frame
                    continue
                future = self._waiting.pop(e.token, None)
                # None or done: the connection closed meanwhile; nobody reads the answer.
                if future is not None and not future.done():
                    future.set_result(e.frame)
            else:
                assert isinstance(e, Append)
                queue.extend(self._append(e))
        return found

    def _append(self, e: Append) -> list[Effect]:
        """Append the records of ``e``; once they are durable the coordinator hears of it.
        Effects of an append that failed at once."""
        now = now_ms()
        topic = self.state.topics.by_name.get(OFFSETS_TOPIC)
        if topic is None or not 0 <= e.partition < len(topic.partitions):
            return self.coordinator.appended(now, e.token, errors.UnknownTopicOrPartition.code)
        partition = topic.partitions[e.partition]
        try:
            partition.log.append(e.records, now, LEADER_EPOCH)
        except Exception as err:
            # A storage error is the disk's; other Kafka errors are the request's (a commit too
            # large for one batch: INVALID_COMMIT_OFFSET_SIZE, as Kafka maps it).
            theirs = (
                isinstance(err, errors.KafkaError) and _code(err) != errors.KafkaStorageError.code
            )
            if theirs:
                log.warning(
                    "Could not append the group coordinator's records to %s: %s",
                    partition.name,
                    err,
                )
            else:
                self.state.topics.storage_failed(partition, "appending to", err)
            return self.coordinator.appended(now, e.token, _code(err))
        self.state.topics.storage_ok(partition)
        partition.wake()
        lg = partition.log
        if lg.unflushed_messages >= lg.flush_messages:
            # flush.messages reached (1: every commit): answered once fsynced, many at once.
            self.state.flusher.when_durable((partition,), functools.partial(self._durable, e.token))
            return []
        return self.coordinator.appended(now, e.token, 0)

    def _durable(self, token: int, error: BaseException | None) -> None:
        code = 0 if error is None else _code(error)
        self._apply(self.coordinator.appended(now_ms(), token, code))
        self._rearm()

    # -- timers --------------------------------------------------------------------------

    def _rearm(self) -> None:
        """Make the timer fire at the coordinator's next deadline (an earlier armed one stays:
        it fires, finds nothing due, and re-arms)."""
        if self._stopped:
            return
        deadline = self.coordinator.next_deadline
        if deadline is None:
            return
        if self._timer is not None:
            if self._timer_at <= deadline:
                return
            self._timer.cancel()
        self._timer_at = deadline
        delay = max(0, deadline - now_ms()) / 1000
        self._timer = asyncio.get_running_loop().call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._apply(self.coordinator.tick(now_ms()))
        self._rearm()


def _code(error: BaseException) -> int:
    """The Kafka error code to report for a failed append or flush."""
    if isinstance(error, errors.KafkaError) and error.code > 0:
        return error.code
    return errors.KafkaStorageError.code
