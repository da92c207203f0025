"""consumer: :class:`Consumer`, confluent-kafka's Consumer API with Java's group behaviour.

>>> from kgroup import Consumer   # doctest: +SKIP
>>> c = Consumer({"bootstrap.servers": "127.0.0.1:9092", "group.id": "g",
...               "auto.offset.reset": "earliest"})
>>> c.subscribe(["events"])
>>> msg = c.poll(1.0)

The network side (group membership, fetches, commits) runs in the consumer's background thread
(:mod:`kgroup.client.runtime`); the application's thread only pops messages that Rust decoded
(:class:`~kgroup._native.client.FetchQueue`). ``poll()`` first checks, cheaply, for pending
events (rebalance callbacks, errors), then waits on the queue with the GIL released. Rebalance
callbacks (``on_assign``, ``on_revoke``, ``on_lost``) and ``on_commit`` run in the
application's thread, inside ``poll()`` / ``consume()``, as confluent-kafka runs them. Each
rebalance event carries the generation it belongs to, so :meth:`Consumer.consumer_group_metadata`
inside a callback names that rebalance's generation even when the background thread has moved on.

Thread safety: like confluent-kafka's, a Consumer is used from one application thread.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from kgroup.client.cluster import Cluster
from kgroup.client.config import ClientConfig
from kgroup.client.consumer_membership import ConsumerMembership, check_consumer_protocol_config
from kgroup.client.fetcher import (
    LIST_OFFSETS_EARLIEST,
    LIST_OFFSETS_LATEST,
    Fetcher,
    FetchQueue,
    PartitionState,
)
from kgroup.client.membership import Membership
from kgroup.client.metadata import ClusterMetadata, cluster_metadata
from kgroup.client.runtime import Runtime
from kgroup.client.types import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_INVALID,
    ClientClosed,
    ClientError,
    ClientTimeout,
    ConsumerGroupMetadata,
    TopicPartition,
)
from kgroup.errors import InvalidArgument, KafkaError

__all__ = [
    "Consumer",
]

log = logging.getLogger("kgroup.client.consumer")

Key = tuple[str, int]
Callback = Callable[["Consumer", list[TopicPartition]], Any]


def _key(tp: TopicPartition) -> Key:
    return (tp.topic, tp.partition)


def _set_start(st: PartitionState, offset: int) -> None:
    if offset >= 0:
        st.fetch_offset = st.position = offset
    elif offset == OFFSET_BEGINNING:
        st.reset = LIST_OFFSETS_EARLIEST
    elif offset == OFFSET_END:
        st.reset = LIST_OFFSETS_LATEST


class Consumer:
    """Consumer reads records from Kafka (or kgroup's broker), alone with :meth:`assign` or as
    a member of ``group.id`` with :meth:`subscribe`. confluent-kafka's ``Consumer`` API and
    Kafka's config names (unknown keys raise :class:`~kgroup.errors.InvalidArgument`).

    ``group.protocol``: ``classic`` (the default; :mod:`kgroup.client.membership`) or
    ``consumer``, KIP-848's protocol (:mod:`kgroup.client.consumer_membership`, the broker
    assigns with ``group.remote.assignor``; ``session.timeout.ms``, ``heartbeat.interval.ms``
    and ``partition.assignment.strategy`` are then refused, as confluent-kafka refuses them)."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._config = cfg = ClientConfig("consumer", config, **kwargs)
        check_consumer_protocol_config(cfg)
        self._closed = False
        self._events: collections.deque[tuple[str, Any, Any]] = collections.deque()
        self._queue = FetchQueue()
        self._runtime = Runtime("consumer")
        self._cluster = Cluster(cfg)
        self._group: str | None = cfg["group.id"]
        self._fatal: BaseException | None = None
        self._last_poll = time.monotonic()
        self._on_assign: Callback | None = None
        self._on_revoke: Callback | None = None
        self._on_lost: Callback | None = None
        self._on_commit = cfg["on_commit"]
        self._assignment: dict[Key, None] = {}
        self._stored: dict[Key, tuple[int, str | None, int | None]] = {}
        self._in_callback = False
        self._subscribed = False
        self._auto_store = cfg["enable.auto.offset.store"]
        self._fetcher = Fetcher(
            cfg,
            self._cluster,
            self._queue,
            group=self._group,
            loop=self._runtime.loop,
            spawn=self._runtime.spawn,
            post_error=self._post_message,
        )
        self._membership: Membership | ConsumerMembership | None = None
        #: the group as the application last saw it (consumer_group_metadata())
        self._group_metadata: ConsumerGroupMetadata | None = None
        if self._group is not None:
            self._group_metadata = ConsumerGroupMetadata(
                self._group, -1, "", cfg["group.instance.id"]
            )
            kind = ConsumerMembership if cfg["group.protocol"] == "consumer" else Membership
            self._membership = kind(
                cfg,
                self._cluster,
                post=self._post,
                fatal=self._post_fatal,
                last_poll=lambda: self._last_poll,
                positions=self._positions_of,
                spawn=self._runtime.spawn,
            )
        self._runtime.submit(self._fetcher.run())
        if self._group is not None and cfg["enable.auto.commit"]:
            self._runtime.submit(self._auto_commit())

    # -- events from the loop ----------------------------------------------------------------

    def _post(self, kind: str, arg: Any) -> Any:
        """On the loop: a rebalance event for the application's thread, with the membership's
        generation and member id as they are now, when the rebalance posts it; the future
        resolves when the application has handled it."""
        fut = self._runtime.loop.create_future()
        m = self._membership
        assert m is not None and self._group is not None
        # Lost partitions belong to no generation any more (the poll timeout posts them
        # before it leaves).
        generation = -1 if kind == "lost" else m.generation
        meta = ConsumerGroupMetadata(self._group, generation, m.member_id, m.instance_id)
        self._events.append((kind, (arg, meta), fut))
        self._queue.wake()
        return fut

    def _post_message(self, msg: Any) -> None:
        self._events.append(("message", msg, None))
        self._queue.wake()

    def _post_fatal(self, err: BaseException) -> None:
        self._events.append(("fatal", err, None))
        self._queue.wake()

    def _handle_events(self) -> Any:
        """In the application's thread: run what the loop posted, in order; returns an error
        message to deliver, if one came."""
        if self._fatal is not None:
            raise self._fatal
        m = self._membership
        if m is not None and m._poll_timed_out:
            self._runtime.call_soon(m.polled)
        while self._events:
            kind, arg, fut = self._events.popleft()
            try:
                if kind == "message":
                    return arg
                if kind == "fatal":
                    self._fatal = arg
                    raise arg
                if kind in ("assign", "revoke", "lost"):
                    keys, self._group_metadata = arg
                if kind == "assign":
                    self._assigned(keys)
                elif kind == "revoke":
                    self._revoked(keys, lost=False)
                elif kind == "lost":
                    self._revoked(keys, lost=True)
                elif kind == "commit":
                    if self._on_commit is not None:
                        self._on_commit(*arg)
            finally:
                if fut is not None:
                    self._runtime.call_soon(_resolve, fut)
        return None

    def _callback(self, cb: Callback | None, keys: list[Key]) -> None:
        if cb is None:
            return
        self._in_callback = True
        try:
            cb(self, [TopicPartition(t, p) for t, p in keys])
        finally:
            self._in_callback = False

    def _assigned(self, keys: list[Key]) -> None:
        self._add(keys, [OFFSET_INVALID] * len(keys))
        self._callback(self._on_assign, keys)

    def _revoked(self, keys: list[Key], *, lost: bool) -> None:
        keys = [k for k in keys if k in self._assignment]
        if not lost and self._config["enable.auto.commit"] and keys:
            try:
                self._commit_sync(self._offsets(keys), None)
            except (KafkaError, ClientError, TimeoutError) as e:
                log.info("commit before revoking %s failed: %r", keys, e)
        cb = self._on_lost if lost and self._on_lost is not None else self._on_revoke
        self._callback(cb, keys)
        self._remove(keys)

    # -- the partition table -----------------------------------------------------------------

    def _add(self, keys: list[Key], offsets: list[int]) -> None:
        parts = dict(self._fetcher.parts)
        for key, off in zip(keys, offsets, strict=True):
            self._assignment[key] = None
            st = parts.get(key)
            if st is None:
                st = PartitionState(*key)
                parts[key] = st
                _set_start(st, off)
            elif off != OFFSET_INVALID:
                self._seek(st, off)
        self._fetcher.parts = parts
        self._fetcher.wakeup()

    def _remove(self, keys: Iterable[Key]) -> None:
        parts = dict(self._fetcher.parts)
        for key in keys:
            self._assignment.pop(key, None)
            self._stored.pop(key, None)
            st = parts.pop(key, None)
            if st is not None:
                with self._fetcher.lock:
                    st.epoch += 1
                    self._queue.purge(*key)
                    self._queue.forget(*key)
        self._fetcher.parts = parts

    def _seek(self, st: PartitionState, offset: int) -> None:
        if offset >= 0:
            self._fetcher.seek(st, offset)
        elif offset == OFFSET_BEGINNING:
            self._fetcher.seek(st, None, reset=LIST_OFFSETS_EARLIEST)
        elif offset == OFFSET_END:
            self._fetcher.seek(st, None, reset=LIST_OFFSETS_LATEST)
        else:
            self._fetcher.seek(st, None)

    def _offsets(self, keys: Iterable[Key] | None = None) -> dict[Key, Any]:
        """What a commit without arguments commits: the positions (or the stored offsets when
        enable.auto.offset.store is false) of ``keys`` (default: the assignment)."""
        keys = list(self._assignment) if keys is None else list(keys)
        if not self._auto_store:
            return {k: self._stored[k] for k in keys if k in self._stored}
        return self._positions_of(keys)

    def _positions_of(self, keys: Iterable[Key]) -> dict[Key, int]:
        popped = self._queue.positions()
        out = {}
        for k in keys:
            pos = self._fetcher.position(k, popped)
            if pos is not None and pos >= 0:
                out[k] = pos
        return out

    async def _auto_commit(self) -> None:
        import asyncio

        every = self._config.ms("auto.commit.interval.ms")
        last: dict[Key, Any] = {}
        while True:
            await asyncio.sleep(every)
            m = self._membership
            if m is None or (self._subscribed and m.generation < 0):
                continue
            offsets = self._offsets()
            if not offsets or offsets == last:
                continue
            try:
                await m.commit(offsets)
                last = offsets
            except KafkaError as e:
                log.info("auto commit failed: %r", e)

    # -- lifecycle ---------------------------------------------------------------------------

    def _check(self) -> None:
        if self._closed:
            raise ClientClosed("the consumer is closed")

    def _call(self, coro: Any, timeout: float | None) -> Any:
        try:
            return self._runtime.call(coro, None if timeout is None or timeout < 0 else timeout)
        except TimeoutError as e:
            if isinstance(e, ClientTimeout):
                raise
            raise ClientTimeout(str(e)) from None

    def subscribe(
        self,
        topics: list[str],
        on_assign: Callback | None = None,
        on_revoke: Callback | None = None,
        on_lost: Callback | None = None,
    ) -> None:
        """Join ``group.id`` consuming ``topics`` (a name starting with ``^`` is a regex, fully
        matched: matched here with Python's ``re`` under the classic protocol, sent to the
        broker, RE2 syntax, under ``group.protocol=consumer``). Callbacks are called as
        ``cb(consumer, partitions)`` from inside poll()/consume()."""
        self._check()
        if self._membership is None:
            raise InvalidArgument("subscribe() needs group.id")
        if isinstance(topics, str) or not topics:
            raise InvalidArgument("subscribe() takes a non-empty list of topics")
        self._on_assign, self._on_revoke, self._on_lost = on_assign, on_revoke, on_lost
        self._subscribed = True
        self._call(self._membership.subscribe(list(topics)), None)

    def unsubscribe(self) -> None:
        """Leave the group (a LeaveGroup unless static) and drop the assignment."""
        self._check()
        self._handle_pending()
        if self._membership is None or not self._subscribed:
            return
        keys = list(self._assignment)
        self._revoked(keys, lost=False)
        self._subscribed = False
        self._call(self._membership.unsubscribe(), 30)
        self._remove(list(self._assignment))
        assert self._group is not None
        self._group_metadata = ConsumerGroupMetadata(
            self._group, -1, "", self._config["group.instance.id"]
        )

    def _handle_pending(self) -> None:
        while self._events:
            msg = self._handle_events()
            if msg is not None:
                self._events.appendleft(("message", msg, None))
                break

    def close(self) -> None:
        """Commit (auto commit), leave the group (dynamic members), stop every background task
        and the consumer's thread. Later calls raise :class:`ClientClosed`. Idempotent."""
        if self._closed:
            return
        try:
            if self._fatal is None:
                try:
                    self._handle_pending()
                except (KafkaError, ClientError):
                    pass
                keys = list(self._assignment)
                if self._subscribed and self._membership is not None:
                    self._revoked(keys, lost=False)
                    self._call(self._membership.close(), 30)
                elif self._group is not None and self._config["enable.auto.commit"] and keys:
                    try:
                        self._commit_sync(self._offsets(keys), 10)
                    except (KafkaError, ClientError, TimeoutError) as e:
                        log.info("commit on close failed: %r", e)
        finally:
            self._closed = True
            self._fetcher.close()
            closing = (
                self._fetcher.aclose(),
                self._cluster.close(),
                self._runtime.loop.shutdown_default_executor(),
            )
            for coro in closing:
                try:
                    self._runtime.call(coro, 5)
                except Exception:
                    pass
            self._runtime.close()
            self._queue.wake()

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- consuming ---------------------------------------------------------------------------

    def poll(self, timeout: float | None = None) -> Any:
        """The next message (or an error as a message), waiting up to ``timeout`` seconds
        (None: without limit); None when nothing came."""
        if self._closed:
            raise ClientClosed("the consumer is closed")
        self._last_poll = time.monotonic()
        if self._events or self._fatal is not None:
            msg = self._handle_events()
            if msg is not None:
                return msg
        t = -1.0 if timeout is None or timeout < 0 else timeout
        m = self._queue.pop(t)
        if m is not None:
            return m
        if t == 0:
            return None
        deadline = None if t < 0 else self._last_poll + t
        while True:
            if self._closed:
                raise ClientClosed("the consumer is closed")
            if self._events:
                msg = self._handle_events()
                if msg is not None:
                    return msg
            left = -1.0 if deadline is None else deadline - time.monotonic()
            if deadline is not None and left <= 0:
                return None
            m = self._queue.pop(left)
            if m is not None:
                return m

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:
        """Up to ``num_messages`` messages, waiting up to ``timeout`` seconds (-1: without
        limit) while there are none."""
        if self._closed:
            raise ClientClosed("the consumer is closed")
        if num_messages < 0 or num_messages > 1_000_000:
            raise InvalidArgument("num_messages must be between 0 and 1000000")
        self._last_poll = time.monotonic()
        deadline = None if timeout is None or timeout < 0 else self._last_poll + timeout
        while True:
            if self._events or self._fatal is not None:
                msg = self._handle_events()
                if msg is not None:
                    return [msg]
            left = -1.0 if deadline is None else max(deadline - time.monotonic(), 0.0)
            out = self._queue.pop_many(num_messages, left)
            if out or (deadline is not None and time.monotonic() >= deadline):
                return out
            if self._closed:
                raise ClientClosed("the consumer is closed")

    def consume_arrow(self, max_records: int = 10000, timeout: float = -1) -> Any:
        """Up to ``max_records`` records as one ``pyarrow.RecordBatch`` of Spark's Kafka
        schema, waiting up to ``timeout`` seconds while there are none; positions advance as
        with poll(). Error messages are raised."""
        if self._closed:
            raise ClientClosed("the consumer is closed")
        self._last_poll = time.monotonic()
        deadline = None if timeout is None or timeout < 0 else self._last_poll + timeout
        while True:
            if self._events or self._fatal is not None:
                msg = self._handle_events()
                if msg is not None:
                    raise msg.error()
            left = -1.0 if deadline is None else max(deadline - time.monotonic(), 0.0)
            batch = self._queue.pop_arrow(max_records, left)
            if batch.num_rows or (deadline is not None and time.monotonic() >= deadline):
                return batch

    # -- assignment --------------------------------------------------------------------------

    def assign(self, partitions: list[TopicPartition]) -> None:
        """Consume exactly ``partitions`` (from their offsets; logical offsets allowed). Inside
        a rebalance callback: set the offsets of the partitions being assigned."""
        self._check()
        if self._in_callback:
            self._add([_key(tp) for tp in partitions], [tp.offset for tp in partitions])
            return
        keys = [_key(tp) for tp in partitions]
        self._remove([k for k in self._assignment if k not in set(keys)])
        self._add(keys, [tp.offset for tp in partitions])

    def unassign(self) -> None:
        self._check()
        self._remove(list(self._assignment))

    def incremental_assign(self, partitions: list[TopicPartition]) -> None:
        self._check()
        self._add([_key(tp) for tp in partitions], [tp.offset for tp in partitions])

    def incremental_unassign(self, partitions: list[TopicPartition]) -> None:
        self._check()
        self._remove([_key(tp) for tp in partitions])

    def assignment(self) -> list[TopicPartition]:
        self._check()
        return [TopicPartition(t, p) for t, p in self._assignment]

    def memberid(self) -> str | None:
        self._check()
        m = self._membership
        return m.member_id if m is not None and m.member_id else None

    def consumer_group_metadata(self) -> ConsumerGroupMetadata:
        """consumer_group_metadata is the consumer's place in its group as the application
        has seen it: the generation and member id of the last rebalance event that poll() /
        consume() handled (generation -1 before the first one and after unsubscribe() or a
        loss of the partitions). Inside ``on_assign`` / ``on_revoke`` it is that rebalance's
        own generation, even when the group has moved on in the background since: record it
        there to know which generation an assignment belongs to.

        With ``group.protocol=consumer`` (KIP-848) the generation is the member epoch.

        Java's ``KafkaConsumer.groupMetadata()``, with its four fields; confluent-kafka's
        method of this name returns an opaque object instead. Raises
        :class:`~kgroup.errors.InvalidArgument` without ``group.id``."""
        self._check()
        if self._group_metadata is None:
            raise InvalidArgument("consumer_group_metadata() needs group.id")
        return self._group_metadata

    # -- positions ---------------------------------------------------------------------------

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """The offset of the next record poll() returns for each partition (OFFSET_INVALID
        when not known yet)."""
        self._check()
        popped = self._queue.positions()
        out = []
        for tp in partitions:
            pos = self._fetcher.position(_key(tp), popped)
            out.append(
                TopicPartition(tp.topic, tp.partition, OFFSET_INVALID if pos is None else pos)
            )
        return out

    def seek(self, partition: TopicPartition) -> None:
        """Continue ``partition`` (assigned) from its offset."""
        self._check()
        st = self._fetcher.parts.get(_key(partition))
        if st is None:
            raise InvalidArgument(
                f"seek: {partition.topic} [{partition.partition}] is not assigned"
            )
        self._seek(st, partition.offset)

    def pause(self, partitions: list[TopicPartition]) -> None:
        """Stop fetching ``partitions``; what is buffered is dropped, and resume() continues at
        the position."""
        self._check()
        popped = self._queue.positions()
        for tp in partitions:
            st = self._fetcher.parts.get(_key(tp))
            if st is None or st.paused:
                continue
            pos = self._fetcher.position(st.key, popped)
            st.paused = True
            if pos is not None:
                self._fetcher.seek(st, pos)

    def resume(self, partitions: list[TopicPartition]) -> None:
        self._check()
        for tp in partitions:
            st = self._fetcher.parts.get(_key(tp))
            if st is not None:
                st.paused = False
        self._fetcher.wakeup()

    # -- commits -----------------------------------------------------------------------------

    def store_offsets(
        self, message: Any = None, offsets: list[TopicPartition] | None = None
    ) -> None:
        """Store the offset to commit (the message's offset + 1, or each partition's offset)
        for the next commit() without arguments or auto commit."""
        self._check()
        if message is not None:
            self._stored[(message.topic(), message.partition())] = (
                message.offset() + 1,
                None,
                message.leader_epoch(),
            )
        for tp in offsets or ():
            self._stored[_key(tp)] = (tp.offset, tp.metadata, tp.leader_epoch)

    def _commit_sync(self, offsets: dict[Key, Any], timeout: float | None) -> dict[Key, int]:
        assert self._membership is not None
        return self._call(self._membership.commit(offsets), timeout)

    def commit(
        self,
        message: Any = None,
        offsets: list[TopicPartition] | None = None,
        asynchronous: bool = True,
    ) -> list[TopicPartition] | None:
        """Commit ``message``'s offset + 1, or ``offsets``, or the current positions. With
        ``asynchronous=False`` wait, return the committed partitions and raise on error
        (:class:`~kgroup.errors.RebalanceInProgress` while the group rebalances,
        :class:`~kgroup.client.types.CommitFailed` when it moved on)."""
        self._check()
        if self._membership is None:
            raise InvalidArgument("commit() needs group.id")
        if message is not None:
            todo: dict[Key, Any] = {
                (message.topic(), message.partition()): (
                    message.offset() + 1,
                    None,
                    message.leader_epoch(),
                )
            }
        elif offsets is not None:
            todo = {_key(tp): (tp.offset, tp.metadata, tp.leader_epoch) for tp in offsets}
        else:
            todo = self._offsets()
        if not asynchronous:
            done = self._commit_sync(todo, None)
            result = [TopicPartition(t, p, o) for (t, p), o in done.items()]
            if self._on_commit is not None:
                self._on_commit(None, result)
            return result
        fut = self._runtime.submit(self._membership.commit(todo))
        if self._on_commit is not None:

            def report(f: Any) -> None:
                err = f.exception()
                tps = [
                    TopicPartition(t, p, v[0] if isinstance(v, tuple) else v)
                    for (t, p), v in todo.items()
                ]
                self._events.append(("commit", (err, tps), None))
                self._queue.wake()

            fut.add_done_callback(report)
        else:
            fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        return None

    def committed(
        self, partitions: list[TopicPartition], timeout: float | None = None
    ) -> list[TopicPartition]:
        """The group's committed offsets of ``partitions`` (OFFSET_INVALID: none)."""
        self._check()
        if self._group is None:
            raise InvalidArgument("committed() needs group.id")
        keys = [_key(tp) for tp in partitions]
        t = None if timeout is None or timeout < 0 else timeout
        got = self._call(self._fetcher.fetch_committed_full(keys, t), t)
        out = []
        for k in keys:
            off, meta, epoch = got.get(k, (-1, None, -1))
            out.append(
                TopicPartition(
                    k[0],
                    k[1],
                    off if off >= 0 else OFFSET_INVALID,
                    meta or None,
                    epoch if epoch is not None and epoch >= 0 else None,
                )
            )
        return out

    # -- cluster queries ---------------------------------------------------------------------

    def get_watermark_offsets(
        self, partition: TopicPartition, timeout: float | None = None, cached: bool = False
    ) -> tuple[int, int] | None:
        """(low, high) watermarks of ``partition``: asked of the leader, or, with ``cached``,
        as the last fetch saw them (None when it has not fetched yet)."""
        self._check()
        key = _key(partition)
        if cached:
            st = self._fetcher.parts.get(key)
            if st is None or st.high_watermark < 0:
                return None
            return (st.log_start, st.high_watermark)
        t = None if timeout is None or timeout < 0 else timeout

        async def both() -> tuple[int, int]:
            lo = await self._fetcher.list_offsets({key: LIST_OFFSETS_EARLIEST}, t)
            hi = await self._fetcher.list_offsets({key: LIST_OFFSETS_LATEST}, t)
            return lo[key], hi[key]

        return self._call(both(), t)

    def offsets_for_times(
        self, partitions: list[TopicPartition], timeout: float | None = None
    ) -> list[TopicPartition]:
        """For each partition, the first offset whose timestamp is at or after ``offset``
        (taken as a timestamp in ms); OFFSET_END (-1) when there is none."""
        self._check()
        t = None if timeout is None or timeout < 0 else timeout
        wanted = {_key(tp): tp.offset for tp in partitions}
        got = self._call(self._fetcher.list_offsets_full(wanted, t), t)
        return [
            TopicPartition(tp.topic, tp.partition, got.get(_key(tp), (OFFSET_END, -1))[0])
            for tp in partitions
        ]

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        """The cluster's brokers and topics (or one ``topic``), as confluent-kafka's
        ``ClusterMetadata``."""
        self._check()
        t = None if timeout is None or timeout < 0 else timeout
        names = None if topic is None else [topic]
        self._call(self._cluster.refresh(names), t)
        return cluster_metadata(self._cluster, names)


def _resolve(fut: Any) -> None:
    if not fut.done():
        fut.set_result(None)
