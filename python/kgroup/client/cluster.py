"""cluster: what a client knows of the cluster, and its connections to it.

:class:`Cluster` holds the brokers and topics from the latest Metadata answers, one
:class:`~kgroup.client.connection.Connection` per broker (opened on first use, reopened after a
failure with Java's exponential reconnect backoff), and the coordinator of each group. It runs
on the client's event loop; the application reads its snapshots (``topics``, ``brokers``)
without locks because the loop replaces them whole.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kgroup.client.config import ClientConfig
from kgroup.client.connection import Connection
from kgroup.errors import (
    CoordinatorLoadInProgress,
    CoordinatorNotAvailable,
    KafkaError,
    NetworkException,
    NotCoordinator,
    error_for_code,
)
from kgroup.protocol import ApiKey

__all__ = [
    "BrokerInfo",
    "Cluster",
    "PartitionInfo",
    "TopicInfo",
    "offset_fetch_code",
    "partitions_coordinator_code",
    "retrying",
]

T = TypeVar("T")


@dataclass(frozen=True)
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int
    leader_epoch: int = -1
    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] = ()
    error: int = 0


@dataclass(frozen=True)
class TopicInfo:
    name: str
    partitions: dict[int, PartitionInfo] = field(default_factory=dict)
    error: int = 0
    internal: bool = False
    topic_id: Any = None


def backoff(attempt: int, base_ms: int, max_ms: int) -> float:
    """Java's exponential backoff with 20% jitter, in seconds."""
    ms = min(base_ms * (2 ** max(attempt, 0)), max_ms)
    return ms * random.uniform(0.8, 1.2) / 1000.0


async def retrying(
    fn: Callable[[], Awaitable[T]],
    *,
    timeout: float,
    base_ms: int = 100,
    max_ms: int = 1000,
    on_retry: Callable[[KafkaError], Awaitable[None]] | None = None,
) -> T:
    """Call ``fn`` until it returns, retrying retriable Kafka errors with backoff until
    ``timeout`` seconds have passed; then the last error is raised."""
    deadline = time.monotonic() + timeout
    attempt = 0
    while True:
        try:
            return await fn()
        except KafkaError as e:
            if not e.retriable:
                raise
            wait = backoff(attempt, base_ms, max_ms)
            if time.monotonic() + wait > deadline:
                raise
            if on_retry is not None:
                await on_retry(e)
            attempt += 1
            await asyncio.sleep(wait)


async def retrying_each(
    keys: list[str],
    attempt: Callable[[list[str]], Awaitable[tuple[dict[str, Any], dict[str, KafkaError]]]],
    *,
    deadline: float,
    base_ms: int,
    max_ms: int,
) -> dict[str, Any]:
    """``retrying`` for requests about many keys (groups, coordinator keys), as Java's
    AdminApiDriver retries them: ``attempt(pending)`` answers (results, errors to retry); the
    keys to retry go again, alone, with backoff, until none is left, one of their errors is not
    retriable, or ``deadline`` (time.monotonic) would pass; then each one's last error is its
    result."""
    results: dict[str, Any] = {}
    pending, n = keys, 0
    while pending:
        done, retry = await attempt(pending)
        results.update(done)
        if not retry:
            break
        wait = backoff(n, base_ms, max_ms)
        if any(not e.retriable for e in retry.values()) or time.monotonic() + wait > deadline:
            results.update(retry)
            break
        n += 1
        await asyncio.sleep(wait)
        pending = list(retry)
    return results


_COORDINATOR_MOVED = (
    NotCoordinator.code,
    CoordinatorNotAvailable.code,
    CoordinatorLoadInProgress.code,
)


def partitions_coordinator_code(resp: Any) -> int:
    """The coordinator error among an OffsetCommit / OffsetDelete answer's partitions (which
    carry NOT_COORDINATOR and the like per partition): a ``code_of`` for
    :meth:`Cluster.coordinator_request`; 0 when there is none."""
    codes = {p["error_code"] for t in resp["topics"] for p in t["partitions"]}
    return next((c for c in _COORDINATOR_MOVED if c in codes), 0)


def offset_fetch_code(resp: Any) -> int:
    """The group's error code in an OffsetFetch answer: under ``groups`` from v8, at the top
    level before."""
    if "groups" in resp:
        return int(resp["groups"][0]["error_code"])
    return int(resp.get("error_code", 0))


def _lookup_error(key: str, code: int) -> KafkaError:
    cls = error_for_code(code)
    assert cls is not None
    return cls(f"FindCoordinator({key!r}): {cls.name}")


class Cluster:
    """Cluster is a client's view of the cluster. Use on the client's event loop only."""

    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        self.client_id: str = config["client.id"]
        self.brokers: dict[int, BrokerInfo] = {}
        self.topics: dict[str, TopicInfo] = {}
        self.cluster_id: str | None = None
        self.controller_id: int = -1
        self.metadata_time = 0.0
        self._conns: dict[int, Connection] = {}
        self._connecting: dict[int, asyncio.Future[Connection]] = {}
        self._failures: dict[int, tuple[int, float]] = {}
        self._coordinators: dict[tuple[int, str], int] = {}
        self._bootstrap = [BrokerInfo(-1 - i, h, p) for i, (h, p) in enumerate(config.bootstrap)]
        self._closed = False

    # -- connections -------------------------------------------------------------------------

    def _address(self, node_id: int) -> BrokerInfo:
        if node_id in self.brokers:
            return self.brokers[node_id]
        for b in self._bootstrap:
            if b.node_id == node_id:
                return b
        raise NetworkException(f"broker {node_id} is not in the cluster's metadata")

    async def connection(self, node_id: int) -> Connection:
        """The open connection to broker ``node_id`` (negative ids: bootstrap servers)."""
        conn = self._conns.get(node_id)
        if conn is not None and not conn.closed:
            return conn
        if self._closed:
            raise NetworkException("the client is closed")
        pending = self._connecting.get(node_id)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future[Connection] = asyncio.get_running_loop().create_future()
        self._connecting[node_id] = fut
        try:
            failures, last = self._failures.get(node_id, (0, 0.0))
            if failures:
                wait = (
                    last
                    + backoff(
                        failures - 1,
                        self.config["reconnect.backoff.ms"],
                        self.config["reconnect.backoff.max.ms"],
                    )
                    - time.monotonic()
                )
                if wait > 0:
                    await asyncio.sleep(wait)
            b = self._address(node_id)
            conn = Connection(
                b.host,
                b.port,
                node_id=node_id,
                client_id=self.client_id,
                request_timeout_ms=self.config["request.timeout.ms"],
                sasl=self.config.sasl,
            )
            try:
                await conn.open(self.config.ms("socket.connection.setup.timeout.ms"))
            except KafkaError:
                self._failures[node_id] = (failures + 1, time.monotonic())
                raise
            self._failures.pop(node_id, None)
            self._conns[node_id] = conn
            fut.set_result(conn)
            return conn
        except BaseException as e:
            fut.set_exception(e)
            fut.exception()
            raise
        finally:
            self._connecting.pop(node_id, None)

    async def any_connection(self) -> Connection:
        """A connection to any broker: an open one if there is one, else the known brokers and
        then the bootstrap servers in turn."""
        for conn in self._conns.values():
            if not conn.closed:
                return conn
        last: Exception | None = None
        candidates = list(self.brokers) or []
        random.shuffle(candidates)
        for node_id in candidates + [b.node_id for b in self._bootstrap]:
            try:
                return await self.connection(node_id)
            except KafkaError as e:
                last = e
        raise NetworkException(
            f"no broker of {self.config['bootstrap.servers']} is reachable: {last}"
        )

    async def send(self, node_id: int, api_key: int, body: Any, **kwargs: Any) -> Any:
        conn = await self.connection(node_id)
        return await conn.request(api_key, body, **kwargs)

    # -- metadata ----------------------------------------------------------------------------

    async def refresh(
        self, topics: Iterable[str] | None = None, *, auto_create: bool = False
    ) -> Any:
        """Ask for metadata of ``topics`` (None: every topic) and update the cache with it.
        Returns the Metadata response body."""
        conn = await self.any_connection()
        v = conn.version(ApiKey.METADATA)
        names = None if topics is None else sorted(set(topics))
        body: dict[str, Any] = {"topics": None if names is None else [{"name": n} for n in names]}
        if v >= 4:
            body["allow_auto_topic_creation"] = auto_create
        if names is None and v == 0:
            body["topics"] = []
        resp = await conn.request(ApiKey.METADATA, body, version=v)
        self._update(resp, names)
        return resp

    def _update(self, resp: Any, names: list[str] | None) -> None:
        brokers = {
            b["node_id"]: BrokerInfo(b["node_id"], b["host"], b["port"], b.get("rack"))
            for b in resp["brokers"]
        }
        if brokers:
            self.brokers = brokers
        self.cluster_id = resp.get("cluster_id")
        self.controller_id = resp.get("controller_id", -1)
        topics = dict(self.topics) if names is not None else {}
        for t in resp["topics"]:
            name = t["name"]
            if name is None:
                continue
            parts = {
                p["partition_index"]: PartitionInfo(
                    p["partition_index"],
                    p["leader_id"],
                    p.get("leader_epoch", -1),
                    tuple(p["replica_nodes"]),
                    tuple(p["isr_nodes"]),
                    p["error_code"],
                )
                for p in t["partitions"]
            }
            if t["error_code"] and not parts:
                topics.pop(name, None)
                if names is not None:
                    topics[name] = TopicInfo(
                        name, {}, t["error_code"], t.get("is_internal", False), t.get("topic_id")
                    )
                continue
            topics[name] = TopicInfo(
                name, parts, t["error_code"], t.get("is_internal", False), t.get("topic_id")
            )
        self.topics = topics
        self.metadata_time = time.monotonic()

    def partition_count(self, topic: str) -> int | None:
        info = self.topics.get(topic)
        if info is None or not info.partitions:
            return None
        return len(info.partitions)

    def leader(self, topic: str, partition: int) -> int | None:
        info = self.topics.get(topic)
        if info is None:
            return None
        p = info.partitions.get(partition)
        if p is None or p.leader < 0:
            return None
        return p.leader

    # -- coordinators ------------------------------------------------------------------------

    async def coordinator(
        self, key: str, key_type: int = 0, *, timeout: float | None = None
    ) -> Connection:
        """The connection to the coordinator of group ``key`` (key_type 0; 1 for transactions),
        found with FindCoordinator and cached until :meth:`coordinator_dead`."""
        node = self._coordinators.get((key_type, key))
        if node is not None:
            try:
                return await self.connection(node)
            except KafkaError:
                self._coordinators.pop((key_type, key), None)

        async def find() -> Connection:
            conn = await self.any_connection()
            v = conn.version(ApiKey.FIND_COORDINATOR)
            if v >= 4:
                resp = await conn.request(
                    ApiKey.FIND_COORDINATOR,
                    {"key_type": key_type, "coordinator_keys": [key]},
                    version=v,
                )
                c = resp["coordinators"][0]
                code, node_id, host, port = c["error_code"], c["node_id"], c["host"], c["port"]
            else:
                body: dict[str, Any] = {"key": key}
                if v >= 1:
                    body["key_type"] = key_type
                resp = await conn.request(ApiKey.FIND_COORDINATOR, body, version=v)
                code, node_id, host, port = (
                    resp["error_code"],
                    resp["node_id"],
                    resp["host"],
                    resp["port"],
                )
            if code:
                raise _lookup_error(key, code)
            self._found(key, key_type, node_id, host, port)
            return await self.connection(node_id)

        return await retrying(
            find,
            timeout=self.config.ms("default.api.timeout.ms") if timeout is None else timeout,
            base_ms=self.config["retry.backoff.ms"],
            max_ms=self.config["retry.backoff.max.ms"],
        )

    def _found(self, key: str, key_type: int, node_id: int, host: str, port: int) -> None:
        """Remember ``node_id`` as the coordinator of ``key``, and its address."""
        if node_id not in self.brokers or (
            self.brokers[node_id].host,
            self.brokers[node_id].port,
        ) != (host, port):
            self.brokers = {**self.brokers, node_id: BrokerInfo(node_id, host, port)}
        self._coordinators[(key_type, key)] = node_id

    async def coordinators(
        self, keys: Iterable[str], key_type: int = 0, *, timeout: float | None = None
    ) -> dict[str, int | KafkaError]:
        """The coordinator's node id of each of ``keys``, found as Java's batched
        CoordinatorStrategy finds them: the cached ones as they are, the others with one
        FindCoordinator carrying them all (v4+, KIP-699), or one request per key to a broker
        older than that. A key whose lookup fails maps to its error; retriable ones
        (COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, a lost connection) are
        retried, for the keys that had them only, until ``timeout`` seconds have passed."""
        timeout = self.config.ms("default.api.timeout.ms") if timeout is None else timeout
        found: dict[str, int | KafkaError] = {}
        missing: list[str] = []
        for k in dict.fromkeys(keys):
            node = self._coordinators.get((key_type, k))
            if node is None:
                missing.append(k)
            else:
                found[k] = node
        deadline = time.monotonic() + timeout

        async def attempt(missing: list[str]) -> tuple[dict[str, Any], dict[str, KafkaError]]:
            try:
                conn = await self.any_connection()
                v = conn.version(ApiKey.FIND_COORDINATOR)
                if v < 4:
                    left = max(deadline - time.monotonic(), 0.0)
                    return await self._coordinators_one_by_one(missing, key_type, left), {}
                resp = await conn.request(
                    ApiKey.FIND_COORDINATOR,
                    {"key_type": key_type, "coordinator_keys": missing},
                    version=v,
                )
            except KafkaError as e:
                return {}, dict.fromkeys(missing, e)
            done: dict[str, Any] = {}
            retry: dict[str, KafkaError] = {}
            asked = set(missing)
            for c in resp["coordinators"]:
                k, code = c["key"], c["error_code"]
                if k not in asked:
                    continue
                if code:
                    err = _lookup_error(k, code)
                    if err.retriable:
                        retry[k] = err
                    else:
                        done[k] = err
                else:
                    self._found(k, key_type, c["node_id"], c["host"], c["port"])
                    done[k] = c["node_id"]
            for k in missing:
                if k not in done and k not in retry:  # left out of the answer
                    retry[k] = CoordinatorNotAvailable(f"FindCoordinator({k!r})")
            return done, retry

        if missing:
            found.update(
                await retrying_each(
                    missing,
                    attempt,
                    deadline=deadline,
                    base_ms=self.config["retry.backoff.ms"],
                    max_ms=self.config["retry.backoff.max.ms"],
                )
            )
        return found

    async def _coordinators_one_by_one(
        self, keys: list[str], key_type: int, timeout: float
    ) -> dict[str, int | KafkaError]:
        async def one(k: str) -> int | KafkaError:
            try:
                return (await self.coordinator(k, key_type, timeout=timeout)).node_id
            except KafkaError as e:
                return e

        return dict(zip(keys, await asyncio.gather(*(one(k) for k in keys)), strict=True))

    def coordinator_dead(self, key: str, key_type: int = 0) -> None:
        """Forget the coordinator of ``key`` (after NOT_COORDINATOR or a lost connection)."""
        self._coordinators.pop((key_type, key), None)

    async def coordinator_request(
        self,
        group: str,
        api_key: int,
        body: Any | Callable[[int], Any],
        *,
        timeout: float | None = None,
        request_timeout: float | None = None,
        code_of: Callable[[Any], int] | None = None,
    ) -> Any:
        """Send a request to ``group``'s coordinator; on NOT_COORDINATOR,
        COORDINATOR_NOT_AVAILABLE or a lost connection, find the coordinator again and retry
        (COORDINATOR_LOAD_IN_PROGRESS too). ``body`` may be a function of the version.
        ``code_of`` finds the group's error code in answers that carry it below the top level
        (``groups[0]``, per partition; default: the top-level ``error_code``). Other error
        codes are left in the answer for the caller."""

        async def once() -> Any:
            conn = await self.coordinator(group, timeout=timeout)
            v = conn.version(api_key)
            b = body(v) if callable(body) else body
            try:
                resp = await conn.request(api_key, b, version=v, timeout=request_timeout)
            except NetworkException:
                self.coordinator_dead(group)
                raise
            if code_of is not None:
                code = code_of(resp)
            else:
                code = resp.get("error_code", 0) if hasattr(resp, "get") else 0
            if code in (NotCoordinator.code, CoordinatorNotAvailable.code):
                self.coordinator_dead(group)
                cls = error_for_code(code)
                assert cls is not None
                raise cls()
            if code == CoordinatorLoadInProgress.code:
                raise CoordinatorLoadInProgress()
            return resp

        return await retrying(
            once,
            timeout=self.config.ms("default.api.timeout.ms") if timeout is None else timeout,
            base_ms=self.config["retry.backoff.ms"],
            max_ms=self.config["retry.backoff.max.ms"],
        )

    async def close(self) -> None:
        self._closed = True
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
