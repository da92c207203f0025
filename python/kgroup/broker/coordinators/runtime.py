"""CoordinatorRuntime: what every coordinator the broker hosts needs around it, whatever its
kind (Kafka 4.x's ``coordinator-common``: its ``CoordinatorRuntime`` and loader).

A coordinator is a Rust state machine (:class:`StateMachine`: the group coordinator,
:class:`kgroup.group.Coordinator`, and the transaction coordinator next) that reads no clock and
does no I/O. It keeps everything it must not lose as records in an internal compacted topic
(``__consumer_offsets``, ``__transaction_state``), each key (a group id, a transactional id) in
one of its partitions. The runtime, one per coordinator, is everything around it that does not
depend on the coordinator's kind:

- Effects. Each call into the coordinator returns effects, carried out in order:
  :class:`Respond` writes a response frame to the connection of the request given ``token``:
  returned at once when it answers the request being handled (:meth:`CoordinatorRuntime.answer`),
  else through the future that request got, resolved by a later effect (from another request,
  an append's outcome or a timer). :class:`Append` appends records to a partition of the
  internal topic, reported with ``appended(now, token, error_code)``. Effects of any other kind
  (the transaction coordinator's markers) go to the host's ``other`` callback.
- Durability. An append is reported once it would survive a kill -9 of the broker (the written
  pages are the kernel's). That is Kafka's own rule with one replica (a write waits for the
  in-sync replicas, never for an fsync), and it makes the coordinator's writes as fast as the
  log. The log flush settings decide the fsync, as for any topic: once an append reaches
  ``flush.messages`` (``log.flush.interval.messages``; 1 makes every append wait for its fsync,
  which survives a power loss too), the report waits for the broker's flusher (one fsync for
  every append that arrived meanwhile: group commit); ``flush.ms`` bounds how long written
  records stay unsynced.
- Storage failures. An append or flush that fails on storage is told to the log dirs' failure
  channel (``Topics.storage_failed``) and reported as KAFKA_STORAGE_ERROR, which the coordinator
  maps to what each api answers; another Kafka error is the request's (a commit too large for
  one batch), logged as a warning and reported with its own code.
- Timers. One event loop timer at ``next_deadline``, re-armed after every call that may move
  it, calls ``tick(now)``.
- The internal topic. Created when first needed (:meth:`CoordinatorRuntime.internal_topic`), as
  Kafka creates it, with the configs :class:`InternalTopic` gives. Until it exists no partition
  is this broker's, and the coordinator answers NOT_COORDINATOR; partitions that appear (the
  topic created, or grown) are served at once, empty.
- Start. Every partition of the internal topic is replayed in the background, from its log
  start, in reads of ``load_buffer`` bytes (``load(partition, batches, last=False)``, then
  ``last=True``); meanwhile its keys answer COORDINATOR_LOAD_IN_PROGRESS and clients retry. A
  partition that fails to load (a record that does not decode) is given up: its keys answer
  NOT_COORDINATOR rather than come back empty, which would lose what they held (a group's
  committed offsets). That is Kafka 4.0's coordinator runtime (its FAILED state); Kafka 3.9's
  default (Scala) group coordinator logs the error and serves the partition with whatever it
  loaded (``ownedPartitions.add`` in a ``finally``).
- Stop. Every partition is unloaded (``unload``): parked requests are answered NOT_COORDINATOR;
  appends still waiting for their fsync are reported when it ends.

A coordinator's host (``groups.GroupHost``) adds what is its kind's own: which partition a key
maps to, the requests it hands in (:meth:`CoordinatorRuntime.new_token`, the coordinator's
call, then :meth:`CoordinatorRuntime.answer`), and what else the coordinator is told (the
broker's topics, for the group coordinator).

Not thread-safe: the broker's event loop owns it (log reads at start run in a thread, the
coordinator is only called from the loop).
"""

from __future__ import annotations

import asyncio
import collections
import copy
import functools
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, cast

from kgroup import errors
from kgroup.broker.config import BrokerConfig
from kgroup.broker.topics import LEADER_EPOCH, Partition, Topic, Topics, now_ms
from kgroup.protocol.records import read_batch_headers

__all__ = [
    "Append",
    "CoordinatorRuntime",
    "Durability",
    "Effect",
    "Host",
    "InternalTopic",
    "Other",
    "Respond",
    "StateMachine",
]

log = logging.getLogger("kgroup.broker")


class Respond(Protocol):
    """Respond is the effect that answers a request: write ``frame`` (a whole response frame)
    to the connection of the request given ``token``."""

    @property
    def token(self) -> Any: ...
    @property
    def frame(self) -> bytes: ...


class Append(Protocol):
    """Append is the effect that writes ``records`` (one v2 record batch) to partition
    ``partition`` of the internal topic; its outcome goes back to the coordinator with
    ``appended(now, token, error_code)``."""

    @property
    def token(self) -> int: ...
    @property
    def partition(self) -> int: ...
    @property
    def records(self) -> bytes: ...


class Other(Protocol):
    """Other is an effect of a coordinator's own kind (the transaction coordinator's
    WriteMarkers), carried out by its host's ``other`` callback."""


#: Effect is what a coordinator asks its host to do.
Effect: TypeAlias = Respond | Append | Other


class StateMachine(Protocol):
    """StateMachine is what the runtime calls of a coordinator. Each call given ``now_ms``
    returns the effects it produced, to be carried out in order."""

    @property
    def next_deadline(self) -> int | None: ...
    def tick(self, now_ms: int) -> Sequence[Effect]: ...
    def appended(self, now_ms: int, token: int, error_code: int = 0) -> Sequence[Effect]: ...
    def load(self, partition: int, batches: bytes, last: bool = True) -> Mapping[str, int]: ...
    def unload(self, now_ms: int, partition: int) -> Sequence[Effect]: ...


class Durability(Protocol):
    """Durability is what the runtime uses of the broker's flusher (``state.Flusher``)."""

    def when_durable(
        self, partitions: Iterable[Partition], callback: Callable[[BaseException | None], None]
    ) -> None: ...


class Host(Protocol):
    """Host is what a coordinator's host uses of the broker (``state.BrokerState`` is one): its
    configuration, its topics and its flusher."""

    @property
    def config(self) -> BrokerConfig: ...
    @property
    def topics(self) -> Topics: ...
    @property
    def flusher(self) -> Durability: ...


@dataclass(frozen=True)
class InternalTopic:
    """InternalTopic is the compacted topic a coordinator keeps its records in, and the words
    the runtime's log lines use for them."""

    #: name is the topic's: ``__consumer_offsets``.
    name: str
    #: partitions is how many the coordinator spreads its keys over
    #: (``offsets.topic.num.partitions``); the topic is created with that many.
    partitions: int
    #: configs are the topic's config overrides when the runtime creates it (Kafka's
    #: ``groupMetadataTopicConfigs``: compacted, ...).
    configs: Mapping[str, Any]
    #: load_buffer is how many bytes are read at a time when loading
    #: (``offsets.load.buffer.size``).
    load_buffer: int
    #: unit is what the coordinator keeps per key (``group``); ``load`` counts them in its stats
    #: under the plural (``groups``).
    unit: str
    #: contents says what the records are (``offsets and group metadata``).
    contents: str


class CoordinatorRuntime:
    """CoordinatorRuntime runs one coordinator: its effects carried out, its records appended
    durably and loaded at start, its timers fired. See the module's docstring."""

    def __init__(
        self,
        state: Host,
        coordinator: StateMachine,
        internal: InternalTopic,
        other: Callable[[Any], Sequence[Effect]] | None = None,
    ) -> None:
        self.state = state
        self.coordinator = coordinator
        #: other carries out the effects of a kind the runtime does not know (the transaction
        #: coordinator's markers), returning the coordinator's effects that follow.
        self._other = other
        #: internal describes the coordinator's internal topic.
        self.internal = internal
        self._count = f"{internal.unit}s"
        self._waiting: dict[int, asyncio.Future[bytes]] = {}
        self._next_token = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0
        self._loader: asyncio.Task[None] | None = None
        #: _reloads are the loads of partitions taken back (reload_partition).
        self._reloads: set[asyncio.Task[int]] = set()
        self._stopped = False
        #: owned are the partitions of the internal topic whose keys this broker serves
        #: (loaded, or loading).
        self.owned: set[int] = set()
        #: loading are the partitions still being replayed.
        self.loading: set[int] = set()
        state.topics.listeners.append(self._topic_changed)

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Take the partitions of the internal topic (after the topics are loaded, on the event
        loop): each is loaded in the background; none are this broker's while the topic does
        not exist."""
        n = self.internal.partitions
        topic = self.state.topics.by_name.get(self.internal.name)
        present = min(len(topic.partitions), n) if topic else 0
        now = now_ms()
        for p in range(n):
            if p < present:
                # Its keys answer COORDINATOR_LOAD_IN_PROGRESS until the last chunk.
                self.coordinator.load(p, b"", last=False)
                self.owned.add(p)
                self.loading.add(p)
            else:
                self._apply(self.coordinator.unload(now, p))
        if topic is not None and present:
            self._loader = asyncio.get_running_loop().create_task(self._load_all(topic))
        # The coordinator's first clock arms its periodic timers (offsets expiry, transaction
        # timeouts), which must run even if no request ever comes.
        self._apply(self.coordinator.tick(now))
        self._rearm()

    def stop(self) -> None:
        """Give every partition up: parked requests are answered NOT_COORDINATOR. Appends
        waiting for their flush are still reported when it ends."""
        self._stopped = True
        if self._loader is not None:
            self._loader.cancel()
        for task in self._reloads:
            task.cancel()
        now = now_ms()
        for p in sorted(self.owned):
            self._apply(self.coordinator.unload(now, p))
        self.owned.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def unload_partition(self, partition: int) -> None:
        """Give one partition up, as when its leadership moves to another broker: parked
        requests of its keys are answered NOT_COORDINATOR, its keys' state is dropped and they
        answer NOT_COORDINATOR until :meth:`reload_partition`."""
        if partition in self.owned:
            self.owned.discard(partition)
            self.loading.discard(partition)
            self._apply(self.coordinator.unload(now_ms(), partition))
            self._rearm()

    def reload_partition(self, partition: int) -> asyncio.Task[int] | None:
        """Take one partition back, as when its leadership returns: its keys answer
        COORDINATOR_LOAD_IN_PROGRESS while it is replayed from the log, in the background (the
        task returned; None when the internal topic lacks that partition)."""
        topic = self.state.topics.by_name.get(self.internal.name)
        if self._stopped or topic is None or not 0 <= partition < len(topic.partitions):
            return None
        if partition in self.owned:
            return None
        self.coordinator.load(partition, b"", last=False)
        self.owned.add(partition)
        self.loading.add(partition)
        task = asyncio.get_running_loop().create_task(self._load(topic.partitions[partition]))
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)
        return task

    async def _load_all(self, topic: Topic) -> None:
        started = time.monotonic()
        count = 0
        for p in sorted(self.loading):
            count += await self._load(topic.partitions[p])
        log.info(
            "Loaded %d %s(s) from %d partition(s) of %s in %d ms",
            count,
            self.internal.unit,
            len(topic.partitions),
            self.internal.name,
            (time.monotonic() - started) * 1000,
        )

    async def _load(self, partition: Partition) -> int:
        """Replay one partition of the internal topic into the coordinator; the number of keys
        it holds."""
        loop = asyncio.get_running_loop()
        p, lg = partition.index, partition.log
        started = time.monotonic()
        offset, end = lg.log_start_offset, lg.log_end_offset
        buffer = self.internal.load_buffer
        try:
            while offset < end:
                data = await loop.run_in_executor(None, lg.read, offset, buffer, end)
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
                "Error loading %s from %s: %s; its %ss are not served (NOT_COORDINATOR)",
                self.internal.contents,
                partition.name,
                e,
                self.internal.unit,
            )
            self.owned.discard(p)
            self._apply(self.coordinator.unload(now_ms(), p))
            return 0
        finally:
            self.loading.discard(p)
        count = int(stats[self._count])
        if count:
            log.info(
                "Finished loading %s from %s (%d %s(s)) in %d ms",
                self.internal.contents,
                partition.name,
                count,
                self.internal.unit,
                (time.monotonic() - started) * 1000,
            )
        self._rearm()
        return count

    # -- the internal topic --------------------------------------------------------------

    def internal_topic(self) -> Topic:
        """The internal topic, created now if it does not exist yet."""
        topics = self.state.topics
        topic = topics.by_name.get(self.internal.name)
        if topic is None:
            topic = topics.create(
                self.internal.name, self.internal.partitions, copy.deepcopy(self.internal.configs)
            )
        return topic

    def _topic_changed(self, topic: Topic, change: str) -> None:
        if change != "deleted" and topic.name == self.internal.name and not self._stopped:
            # New (empty) partitions of the internal topic: this broker serves their keys.
            for p in range(min(len(topic.partitions), self.internal.partitions)):
                if p not in self.owned:
                    self.coordinator.load(p, b"", last=True)
                    self.owned.add(p)
        self._rearm()

    # -- requests ------------------------------------------------------------------------

    def new_token(self) -> int:
        """A token for the next request handed to the coordinator: its :class:`Respond` will
        carry it."""
        self._next_token += 1
        return self._next_token

    def answer(self, token: int, effects: Sequence[Effect]) -> bytes | asyncio.Future[bytes]:
        """Carry out the effects of the coordinator's call for request ``token``: its response
        frame when they answer it, else a future that a later effect resolves."""
        frame = self._apply(effects, token) if effects else None
        self._rearm()
        if frame is not None:
            return frame
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        return future

    def apply(self, effects: Iterable[Effect]) -> None:
        """Carry out effects of a call that answers no request of its own (a host's own calls
        into the coordinator), then re-arm the timer."""
        self._apply(effects)
        self._rearm()

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
            # Told apart by their fields, not their classes: a coordinator whose binding has
            # its own Respond and Append needs nothing here.
            frame = getattr(e, "frame", None)
            if frame is not None:
                token = cast(Respond, e).token
                if token == mine:
                    found = frame
                    continue
                future = self._waiting.pop(token, None)
                # None or done: the connection closed meanwhile; nobody reads the answer.
                if future is not None and not future.done():
                    future.set_result(frame)
            elif hasattr(e, "records"):
                queue.extend(self._append(cast(Append, e)))
            elif self._other is not None:
                queue.extend(self._other(e))
            else:
                raise TypeError(f"the {self.internal.unit} coordinator asked for {e!r}")
        return found

    def _append(self, e: Append) -> Sequence[Effect]:
        """Append the records of ``e``; once they are durable the coordinator hears of it.
        Effects of an append that failed at once."""
        now = now_ms()
        topic = self.state.topics.by_name.get(self.internal.name)
        if topic is None or not 0 <= e.partition < len(topic.partitions):
            return self.coordinator.appended(now, e.token, errors.UnknownTopicOrPartition.code)
        partition = topic.partitions[e.partition]
        try:
            # The coordinator's own batches: a transactional offset commit carries a producer
            # and no sequence (Kafka's AppendOrigin.COORDINATOR).
            partition.log.append(e.records, now, LEADER_EPOCH, origin="coordinator")
        except Exception as err:
            # A storage error is the disk's; other Kafka errors are the request's (a commit too
            # large for one batch: INVALID_COMMIT_OFFSET_SIZE, as Kafka maps it).
            theirs = (
                isinstance(err, errors.KafkaError) and _code(err) != errors.KafkaStorageError.code
            )
            if theirs:
                log.warning(
                    "Could not append the %s coordinator's records to %s: %s",
                    self.internal.unit,
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
            # flush.messages reached (1: every append): reported once fsynced, many at once.
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
