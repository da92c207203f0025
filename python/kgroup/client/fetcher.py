"""fetcher: the consumer's network side for records: Fetch requests, starting positions, resets.

A :class:`Fetcher` runs on the consumer's event loop. It keeps at most one Fetch request in
flight per broker, covering that broker's assigned partitions that are not paused, have a
position, and are not still buffered while the queue holds more than
``queued.max.messages.kbytes``. Full fetch requests (session id 0, epoch -1, Fetch v4 to v12,
topics by name) with ``isolation.level``; each partition's records go to the
:class:`FetchQueue`, which decodes them in Rust and hands them to ``poll()``.

Starting positions, as Java's ``Fetcher``/``OffsetFetcher``: the group's committed offset
(OffsetFetch, ``require_stable``), else ``auto.offset.reset`` through ListOffsets; with ``none``
the partition gets an ``OFFSET_OUT_OF_RANGE`` error message instead. ``OFFSET_OUT_OF_RANGE``
from a Fetch resets by the same policy; ``NOT_LEADER_OR_FOLLOWER`` and
``UNKNOWN_TOPIC_OR_PARTITION`` refresh the metadata first.

Thread safety: the application's thread changes the partition table (assign, seek, pause) by
replacing :attr:`Fetcher.parts` whole and bumping a partition's ``epoch`` under
:attr:`Fetcher.lock`; the loop pushes a response's records only while the epoch it fetched
with is still current, under the same lock, so a seek never lets stale records through.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kgroup._native.client import FetchQueue, Message
from kgroup.client.cluster import Cluster, offset_fetch_code, retrying
from kgroup.client.config import ClientConfig
from kgroup.client.connection import Connection
from kgroup.client.offsets import list_offsets_at, offset_fetch_body, offset_fetch_topics
from kgroup.client.types import ClientTimeout, PartitionEOF
from kgroup.errors import (
    KafkaError,
    NetworkException,
    OffsetOutOfRange,
    UnstableOffsetCommit,
    error_for_code,
)
from kgroup.protocol import ApiKey

__all__ = ["FetchQueue", "Fetcher", "Message", "PartitionState"]

log = logging.getLogger("kgroup.client.fetcher")

#: Fetch v12 is the last version naming topics (v13+ use topic ids).
FETCH_VERSION_MAX = 12
LIST_OFFSETS_EARLIEST = -2
LIST_OFFSETS_LATEST = -1
#: PartitionState.reset: start where auto.offset.reset says
RESET_POLICY = 0
#: PartitionState.reset: the policy is none and there was no offset; wait for a seek
RESET_FAILED = 1

_REFRESH_CODES = frozenset({3, 5, 6, 74, 75, 100})  # unknown partition, leader moved, epochs


def reset_timestamp(policy: str) -> int | None:
    """The ListOffsets timestamp of an ``auto.offset.reset`` policy; None for ``none``."""
    if policy in ("earliest", "smallest", "beginning"):
        return LIST_OFFSETS_EARLIEST
    if policy in ("latest", "largest", "end"):
        return LIST_OFFSETS_LATEST
    return None


class PartitionState:
    """One assigned partition: where to fetch next, where the application is, and whether it
    is paused. ``epoch`` changes on every seek, so an answer to an older fetch is dropped."""

    __slots__ = (
        "at_eof",
        "epoch",
        "fetch_offset",
        "high_watermark",
        "key",
        "last_stable",
        "log_start",
        "partition",
        "paused",
        "position",
        "reset",
        "resolving",
        "topic",
    )

    def __init__(self, topic: str, partition: int, offset: int | None = None) -> None:
        self.topic, self.partition, self.key = topic, partition, (topic, partition)
        #: next offset to fetch (None: find the starting position first)
        self.fetch_offset: int | None = offset
        #: the position when nothing has been popped since the last seek
        self.position: int | None = offset
        #: how to find the starting position: None the committed offset, else the reset
        #: policy (RESET_POLICY) or a ListOffsets timestamp (-2 earliest, -1 latest)
        self.reset: int | None = None
        self.resolving = False
        self.paused = False
        self.epoch = 0
        self.high_watermark = -1
        #: the last stable offset (Fetch v4+): read_committed's end of the partition
        self.last_stable = -1
        self.log_start = -1
        #: an end-of-partition event was posted for the current end (enable.partition.eof)
        self.at_eof = False


class Fetcher:
    """Fetcher fetches the assigned partitions into ``queue``. Start with :meth:`run` on the
    loop; :meth:`wakeup` (thread-safe) makes it look at the partition table again."""

    def __init__(
        self,
        config: ClientConfig,
        cluster: Cluster,
        queue: Any,
        *,
        group: str | None,
        loop: asyncio.AbstractEventLoop,
        spawn: Callable[[Any], asyncio.Task[Any]],
        post_error: Callable[[Any], None],
    ) -> None:
        self.config, self.cluster, self.queue, self.group = config, cluster, queue, group
        self.loop, self.spawn = loop, spawn
        self.post_error = post_error
        self.parts: dict[tuple[str, int], PartitionState] = {}
        self.lock = threading.Lock()
        self.read_committed = config["isolation.level"] == "read_committed"
        self.partition_eof: bool = config["enable.partition.eof"]
        self._isolation = 1 if self.read_committed else 0
        self._limit = config["queued.max.messages.kbytes"] * 1024
        self._event = asyncio.Event()
        self._inflight: dict[int, asyncio.Task[None]] = {}
        self._resolver: asyncio.Task[None] | None = None
        self._refresh: asyncio.Task[None] | None = None
        self._closed = False
        #: Fetch connections of their own, as Java keeps the coordinator's apart: a Fetch
        #: waiting fetch.max.wait.ms must not hold a commit or a heartbeat behind it.
        self._conns: dict[int, Connection] = {}

    async def _connection(self, node: int) -> Connection:
        conn = self._conns.get(node)
        if conn is not None and not conn.closed:
            return conn
        b = self.cluster.brokers.get(node)
        if b is None:
            return await self.cluster.connection(node)
        conn = Connection(
            b.host,
            b.port,
            node_id=node,
            client_id=self.cluster.client_id,
            request_timeout_ms=self.config["request.timeout.ms"],
            sasl=self.config.sasl,
        )
        await conn.open(self.config.ms("socket.connection.setup.timeout.ms"))
        self._conns[node] = conn
        return conn

    async def aclose(self) -> None:
        """Close the fetch connections (on the loop)."""
        self.close()
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    # -- called from any thread ------------------------------------------------------------

    def wakeup(self) -> None:
        self.loop.call_soon_threadsafe(self._event.set)

    def position(self, key: tuple[str, int], popped: dict[Any, int] | None = None) -> int | None:
        """The application's position in a partition: after the last popped record, else the
        last seek / starting position."""
        pos = (popped if popped is not None else self.queue.positions()).get(key)
        if pos is not None:
            return int(pos)
        st = self.parts.get(key)
        return None if st is None else st.position

    def seek(self, st: PartitionState, offset: int | None, *, reset: int | None = None) -> None:
        """Move a partition to ``offset`` (None: find the starting position again): drop what
        is buffered and what any fetch in flight brings back."""
        with self.lock:
            st.epoch += 1
            st.fetch_offset = offset
            st.position = offset
            st.reset = reset
            self.queue.purge(st.topic, st.partition)
            self.queue.forget(st.topic, st.partition)
        self.wakeup()

    # -- the loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        while not self._closed:
            self._event.clear()
            wait = self._dispatch()
            if wait is None:
                await self._event.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._event.wait(), wait)

    def close(self) -> None:
        self._closed = True
        self._event.set()

    def _dispatch(self) -> float | None:
        """Start what can start: positions to find, a fetch per idle broker. Returns how long
        to wait before looking again without a wakeup (None: until one)."""
        parts = self.parts
        unresolved = [
            st
            for st in parts.values()
            if st.fetch_offset is None and not st.resolving and st.reset != RESET_FAILED
        ]
        if unresolved and (self._resolver is None or self._resolver.done()):
            self._resolver = self.spawn(self._resolve(unresolved))
        over = self.queue.buffered_bytes > self._limit
        buffered = self.queue.buffered_partitions() if over else ()
        by_node: dict[int, list[tuple[PartitionState, int, int]]] = {}
        missing_leader = False
        held_back = False
        for st in parts.values():
            if st.paused or st.fetch_offset is None:
                continue
            if over and st.key in buffered:
                held_back = True
                continue
            leader = self.cluster.leader(st.topic, st.partition)
            if leader is None:
                missing_leader = True
                continue
            if leader in self._inflight:
                continue
            by_node.setdefault(leader, []).append((st, st.fetch_offset, st.epoch))
        for node, batch in by_node.items():
            task = self.spawn(self._fetch(node, batch))
            self._inflight[node] = task
            task.add_done_callback(functools.partial(self._done, node))
        if missing_leader:
            self.refresh_metadata()
            return 0.1
        return 0.01 if held_back else None

    def _done(self, node: int, _task: Any = None) -> None:
        self._inflight.pop(node, None)
        self._event.set()

    def refresh_metadata(self) -> None:
        """Refresh the metadata of the assigned topics, once at a time."""
        if self._refresh is not None and not self._refresh.done():
            return
        topics = {st.topic for st in self.parts.values()}
        if not topics:
            return

        async def refresh() -> None:
            try:
                await self.cluster.refresh(topics)
            except KafkaError as e:
                log.debug("metadata refresh failed: %s", e)
                await asyncio.sleep(self.config.ms("retry.backoff.ms"))
            self._event.set()

        self._refresh = self.spawn(refresh())

    async def _fetch(self, node: int, batch: list[tuple[PartitionState, int, int]]) -> None:
        try:
            conn = await self._connection(node)
            v = conn.version(ApiKey.FETCH, FETCH_VERSION_MAX)
            topics: dict[str, list[dict[str, Any]]] = {}
            for st, offset, _ in batch:
                topics.setdefault(st.topic, []).append(
                    {
                        "partition": st.partition,
                        "fetch_offset": offset,
                        "partition_max_bytes": self.config["max.partition.fetch.bytes"],
                    }
                )
            body: dict[str, Any] = {
                "replica_id": -1,
                "max_wait_ms": self.config["fetch.max.wait.ms"],
                "min_bytes": self.config["fetch.min.bytes"],
                "max_bytes": self.config["fetch.max.bytes"],
                "isolation_level": self._isolation,
                "session_id": 0,
                "session_epoch": -1,
                "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
                "forgotten_topics_data": [],
            }
            if v >= 11:
                body["rack_id"] = self.config["client.rack"] or ""
            timeout = self.config.ms("request.timeout.ms") + self.config.ms("fetch.max.wait.ms")
            resp = await conn.request(ApiKey.FETCH, body, version=v, timeout=timeout)
        except KafkaError as e:
            log.debug("fetch from broker %s failed: %s", node, e)
            if isinstance(e, NetworkException):
                self.refresh_metadata()
            await asyncio.sleep(self.config.ms("retry.backoff.ms"))
            return
        if resp.get("error_code", 0):
            log.debug("fetch from broker %s: error %s", node, resp["error_code"])
            await asyncio.sleep(self.config.ms("retry.backoff.ms"))
            return
        sent = {st.key: (st, offset, epoch) for st, offset, epoch in batch}
        refresh = False
        for t in resp["responses"]:
            topic = t["topic"]
            for p in t["partitions"]:
                entry = sent.get((topic, p["partition_index"]))
                if entry is None:
                    continue
                st, offset, epoch = entry
                code = p["error_code"]
                if code == 0:
                    st.high_watermark = p["high_watermark"]
                    st.last_stable = p.get("last_stable_offset", -1)
                    st.log_start = p.get("log_start_offset", -1)
                    records = p["records"]
                    if not records:
                        if self.partition_eof:
                            self._maybe_eof(st, offset, epoch)
                        continue
                    aborted = None
                    if self.read_committed:
                        aborted = [
                            (a["producer_id"], a["first_offset"])
                            for a in (p.get("aborted_transactions") or ())
                        ]
                    with self.lock:
                        if st.epoch != epoch or st.fetch_offset != offset:
                            continue
                        nxt, _ = self.queue.push(
                            topic,
                            st.partition,
                            records,
                            offset,
                            read_committed=self.read_committed,
                            aborted=aborted,
                        )
                        if nxt != offset:
                            st.at_eof = False
                        st.fetch_offset = nxt
                    if self.partition_eof:
                        self._maybe_eof(st, nxt, epoch)
                elif code == OffsetOutOfRange.code:
                    with self.lock:
                        if st.epoch == epoch and st.fetch_offset == offset:
                            st.epoch += 1
                            st.fetch_offset = None
                            st.reset = RESET_POLICY
                elif code in _REFRESH_CODES:
                    refresh = True
                else:
                    cls = error_for_code(code)
                    log.warning("fetch %s[%s]: %s", topic, st.partition, cls and cls.name)
        if refresh:
            self.refresh_metadata()

    def _maybe_eof(self, st: PartitionState, offset: int, epoch: int) -> None:
        """enable.partition.eof: once per end reached, after the partition's buffered records
        (librdkafka's _PARTITION_EOF event follows the partition's last message)."""
        # read_committed ends at the last stable offset (librdkafka's end_offset), where the
        # first open transaction starts; -1 (Fetch before v4) falls back to the high watermark
        end = st.high_watermark
        if self.read_committed and st.last_stable >= 0:
            end = st.last_stable
        if st.at_eof or offset < end or st.epoch != epoch:
            return
        if st.key in self.queue.buffered_partitions():
            return  # a later answer posts it, once the application has the records
        st.at_eof = True
        self.post_error(
            Message(
                st.topic,
                st.partition,
                offset,
                error=PartitionEOF(f"{st.topic} [{st.partition}] reached end at offset {offset}"),
            )
        )

    async def _resolve(self, todo: list[PartitionState]) -> None:
        """Find starting positions: committed offsets, else the reset policy."""
        for st in todo:
            st.resolving = True
        epochs = {st.key: st.epoch for st in todo}
        try:
            committed: dict[tuple[str, int], int] = {}
            need_committed = [st for st in todo if st.reset is None]
            if self.group is not None and need_committed:
                committed = await self.fetch_committed([st.key for st in need_committed])
            to_reset: list[PartitionState] = []
            with self.lock:
                for st in todo:
                    if st.epoch != epochs[st.key] or st.fetch_offset is not None:
                        continue
                    off = committed.get(st.key, -1)
                    if st.reset is None and off >= 0:
                        st.fetch_offset = st.position = off
                    else:
                        to_reset.append(st)
            if to_reset:
                await self._reset(to_reset, epochs)
        except KafkaError as e:
            log.debug("finding positions failed: %s", e)
            await asyncio.sleep(self.config.ms("retry.backoff.ms"))
        finally:
            for st in todo:
                st.resolving = False
            self._event.set()

    async def _reset(self, todo: list[PartitionState], epochs: dict[tuple[str, int], int]) -> None:
        policy = reset_timestamp(self.config["auto.offset.reset"])
        wanted = {}
        for st in todo:
            ts = st.reset if st.reset in (LIST_OFFSETS_EARLIEST, LIST_OFFSETS_LATEST) else policy
            if ts is not None:
                wanted[st.key] = ts
                continue
            with self.lock:
                if st.epoch != epochs[st.key]:
                    continue
                st.reset = RESET_FAILED  # nothing to fetch until the application seeks
            self.post_error(
                Message(
                    st.topic,
                    st.partition,
                    st.position if st.position is not None else -1001,
                    error=OffsetOutOfRange(
                        f"{st.topic} [{st.partition}]: no committed offset and "
                        "auto.offset.reset is none"
                    ),
                )
            )
        if not wanted:
            return
        found = await self.list_offsets(wanted)
        with self.lock:
            for st in todo:
                off = found.get(st.key)
                if off is None or st.epoch != epochs[st.key] or st.fetch_offset is not None:
                    continue
                st.fetch_offset = st.position = off
                st.reset = None

    async def fetch_committed(
        self, keys: list[tuple[str, int]], timeout: float | None = None
    ) -> dict[tuple[str, int], int]:
        """The group's committed offsets of ``keys`` (-1: none), with their metadata dropped."""
        return {k: v[0] for k, v in (await self.fetch_committed_full(keys, timeout)).items()}

    async def fetch_committed_full(
        self, keys: list[tuple[str, int]], timeout: float | None = None
    ) -> dict[tuple[str, int], tuple[int, str | None, int]]:
        """OffsetFetch: ``{key: (offset, metadata, leader_epoch)}``."""
        assert self.group is not None
        by_topic: dict[str, list[int]] = {}
        for t, p in keys:
            by_topic.setdefault(t, []).append(p)

        body = offset_fetch_body(self.group, by_topic, require_stable=True)

        async def once() -> dict[tuple[str, int], tuple[int, str | None, int]]:
            resp = await self.cluster.coordinator_request(
                self.group,  # type: ignore[arg-type]
                ApiKey.OFFSET_FETCH,
                body,
                timeout=timeout,
                code_of=offset_fetch_code,
            )
            code = offset_fetch_code(resp)
            topics = offset_fetch_topics(resp)
            if code:
                cls = error_for_code(code)
                assert cls is not None
                raise cls(f"OffsetFetch: {cls.name}")
            out = {}
            for t in topics:
                for p in t["partitions"]:
                    if p["error_code"] == UnstableOffsetCommit.code:
                        raise UnstableOffsetCommit("OffsetFetch: a transaction is pending")
                    if p["error_code"]:
                        cls = error_for_code(p["error_code"])
                        assert cls is not None
                        raise cls(f"OffsetFetch {t['name']} [{p['partition_index']}]")
                    out[(t["name"], p["partition_index"])] = (
                        p["committed_offset"],
                        p.get("metadata"),
                        p.get("committed_leader_epoch", -1),
                    )
            return out

        return await retrying(
            once,
            timeout=self.config.ms("default.api.timeout.ms") if timeout is None else timeout,
            base_ms=self.config["retry.backoff.ms"],
            max_ms=self.config["retry.backoff.max.ms"],
        )

    async def list_offsets(
        self, wanted: dict[tuple[str, int], int], timeout: float | None = None
    ) -> dict[tuple[str, int], int]:
        """ListOffsets to each partition's leader: ``{key: offset}`` for ``{key: timestamp}``
        (-2 earliest, -1 latest, else the first offset at or after that time; -1 when none)."""
        return {k: v[0] for k, v in (await self.list_offsets_full(wanted, timeout)).items()}

    async def list_offsets_full(
        self, wanted: dict[tuple[str, int], int], timeout: float | None = None
    ) -> dict[tuple[str, int], tuple[int, int]]:
        """ListOffsets: ``{key: (offset, timestamp)}``."""
        deadline = time.monotonic() + (
            self.config.ms("default.api.timeout.ms") if timeout is None else timeout
        )
        out: dict[tuple[str, int], tuple[int, int]] = {}
        todo = dict(wanted)
        attempt = 0
        while todo:
            if any(self.cluster.leader(t, p) is None for t, p in todo):
                with contextlib.suppress(KafkaError):
                    await self.cluster.refresh({t for t, _ in todo})
            by_node: dict[int, dict[tuple[str, int], int]] = {}
            for key, ts in todo.items():
                leader = self.cluster.leader(*key)
                if leader is not None:
                    by_node.setdefault(leader, {})[key] = ts
            results = await asyncio.gather(
                *(self._list_offsets_at(n, ks) for n, ks in by_node.items()),
                return_exceptions=True,
            )
            for r in results:
                if isinstance(r, dict):
                    for key, val in r.items():
                        out[key] = val
                        todo.pop(key, None)
                elif isinstance(r, KafkaError) and not r.retriable:
                    raise r
            if not todo:
                break
            if time.monotonic() > deadline:
                raise ClientTimeout(f"ListOffsets: no answer for {sorted(todo)}")
            attempt += 1
            await asyncio.sleep(min(0.05 * attempt, 1.0))
            with contextlib.suppress(KafkaError):
                await self.cluster.refresh({t for t, _ in todo})
        return out

    async def _list_offsets_at(
        self, node: int, wanted: dict[tuple[str, int], int]
    ) -> dict[tuple[str, int], tuple[int, int]]:
        """One broker's answers: retriable errors are left out (asked again), others raised."""
        conn = await self.cluster.connection(node)
        out = {}
        for key, r in (await list_offsets_at(conn, wanted, self._isolation)).items():
            if isinstance(r, KafkaError):
                if not r.retriable:
                    raise r
                continue
            out[key] = (r[0], r[1])
        return out
