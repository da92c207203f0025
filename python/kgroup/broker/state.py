"""BrokerState: what the handlers share: the configuration, the topics, the advertised address,
the flusher that makes acks=all durable, the producer id allocator and the group coordinator's
host."""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from kgroup import errors
from kgroup.broker.authorizer import Authorizer, authorizer_from_config
from kgroup.broker.config import BrokerConfig
from kgroup.broker.coordinators.groups import GroupHost
from kgroup.broker.coordinators.transactions import TxnHost
from kgroup.broker.dynamic_config import DynamicConfigs
from kgroup.broker.limits import Limits
from kgroup.broker.listeners import Listener
from kgroup.broker.output import SendStats
from kgroup.broker.quotas import Quotas
from kgroup.broker.sasl import sasl_listeners
from kgroup.broker.scram import FILE as SCRAM_FILE
from kgroup.broker.scram import ScramCredentials
from kgroup.broker.share.manager import ShareManager
from kgroup.broker.topics import Partition, Topics
from kgroup.log import file_exists, read_text, write_atomically

__all__ = ["BrokerState", "FaultHooks", "Flusher", "NoFaults", "Peer", "ProducerIds"]

log = logging.getLogger("kgroup.broker")


class Peer(Protocol):
    """Peer is a client's connection (``server.Connection``) as the rest of the broker sees it:
    what a handler uses of the connection its request came on, and what the broker does with
    each connection as it stops."""

    @property
    def client_host(self) -> str: ...
    @property
    def client_address(self) -> str: ...
    @property
    def listener(self) -> Listener: ...
    @property
    def principal(self) -> str: ...
    @property
    def in_flight(self) -> int: ...
    def close_for(self, e: Exception) -> None: ...
    def stop_reading(self) -> None: ...
    def close(self) -> None: ...


class FaultHooks(Protocol):
    """FaultHooks is what the server asks of a test's faults (``kgroup.broker.faults.Faults``,
    which the Broker installs as it starts; kept apart here so that this module does not import
    the fault engine, which imports the handlers, which import this module)."""

    @property
    def armed(self) -> bool: ...
    @property
    def paused(self) -> bool: ...
    def intercept(self, conn: Any, api_key: int, frame: bytes | bytearray) -> bool: ...
    def clear(self) -> None: ...


class NoFaults:
    """NoFaults: nothing is ever armed (a BrokerState before its Broker installs the engine)."""

    armed = False
    paused = False

    def intercept(self, conn: Any, api_key: int, frame: bytes | bytearray) -> bool:
        return False

    def clear(self) -> None:
        pass


class Flusher:
    """Flusher makes appended data durable for acks=all produces, one fsync per log for many
    produces (group commit): a produce waits for the next flush that starts after its append;
    while one flush runs, the produces that arrive meanwhile gather for the next.

    Where flushes are quick (at most ``INLINE_LOGS`` logs, each taking under ``INLINE_SECONDS``
    on average lately: an SSD), the flush runs on the event loop itself, after the callbacks
    ready in the same iteration (whose appends it covers too): a thread hop there and back
    costs more latency (about 0.1 ms measured) than the fsync blocks the loop. Slower or wider
    flushes run in a thread, so that the event loop keeps serving."""

    INLINE_LOGS = 4
    INLINE_SECONDS = 0.0005

    def __init__(
        self,
        executor: concurrent.futures.Executor,
        on_failure: Callable[[Partition, BaseException], None] | None = None,
    ) -> None:
        self._executor = executor
        #: on_failure hears of each log whose flush failed (the log dirs' failure channel).
        self._on_failure = on_failure
        self._dirty: set[Partition] = set()
        self._callbacks: list[Callable[[BaseException | None], None]] = []
        self._running = False
        self._task: asyncio.Task[None] | None = None
        #: per_log is a moving average of the seconds one log's flush takes.
        self.per_log = 0.0
        #: flushes counts the rounds run, callbacks the requests they answered.
        self.flushes = 0
        self.callbacks = 0

    def when_durable(
        self, partitions: Iterable[Partition], callback: Callable[[BaseException | None], None]
    ) -> None:
        """Call ``callback(None)`` once everything appended to these partitions so far is on
        disk, or ``callback(error)`` (a KafkaStorageError) if the flush failed. The callback
        runs on the event loop, straight after the flush."""
        self._callbacks.append(callback)
        self.schedule(partitions)

    async def sync(self, partitions: Iterable[Partition]) -> None:
        """Wait until everything appended to these partitions so far is on disk; raises
        KafkaStorageError if a flush failed."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done(error: BaseException | None) -> None:
            if not fut.done():
                if error is None:
                    fut.set_result(None)
                else:
                    fut.set_exception(error)

        self.when_durable(partitions, done)
        await fut

    def schedule(self, partitions: Iterable[Partition]) -> None:
        """Flush these partitions soon, with no one waiting (flush.messages, flush.ms)."""
        self._dirty.update(partitions)
        if not self._running:
            self._running = True
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._callbacks or self._dirty:
                dirty, self._dirty = self._dirty, set()
                callbacks, self._callbacks = self._callbacks, []
                parts = list(dirty)
                error: BaseException | None = None
                quick = self.per_log < self.INLINE_SECONDS
                if parts and len(parts) <= self.INLINE_LOGS and quick:
                    took, failures = _flush_all(parts)
                else:
                    took, failures = await loop.run_in_executor(self._executor, _flush_all, parts)
                if parts:
                    self.per_log = 0.8 * self.per_log + 0.2 * took / len(parts)
                for part, e in failures:
                    if self._on_failure is not None:
                        self._on_failure(part, e)
                    else:
                        log.error("Flush of %s failed: %s", part.name, e)
                    if error is None:
                        # Every request the round covered fails: none is answered as durable.
                        error = (
                            e
                            if isinstance(e, errors.KafkaError)
                            else errors.KafkaStorageError(str(e))
                        )
                self.flushes += 1
                self.callbacks += len(callbacks)
                for callback in callbacks:
                    try:
                        callback(error)
                    except Exception:
                        log.exception("Error in a flush callback")
        finally:
            self._running = False


def _flush_all(parts: list[Partition]) -> tuple[float, list[tuple[Partition, Exception]]]:
    """Flush these partitions' logs, each whatever the others do; returns the seconds it took
    and the failures."""
    started = time.perf_counter()
    failures: list[tuple[Partition, Exception]] = []
    for p in parts:
        try:
            p.log.flush()
        except Exception as e:
            failures.append((p, e))
    return time.perf_counter() - started, failures


class ProducerIds:
    """ProducerIds hands out producer ids (InitProducerId) that never repeat, even across
    restarts: ids come in blocks of 1000, and a block is recorded on disk before any of its
    ids is given out, as Kafka's controller allocates them."""

    BLOCK = 1000

    def __init__(self, path: Path) -> None:
        self._path = path
        self._next = 0
        self._end = 0
        if file_exists(path):
            self._next = self._end = int(read_text(path).strip() or 0)

    def next(self) -> int:
        if self._next >= self._end:
            end = self._next + self.BLOCK
            write_atomically(self._path, f"{end}\n")
            self._end = end
        pid = self._next
        self._next += 1
        return pid


class BrokerState:
    """BrokerState is the broker's shared state, owned by its event loop."""

    def __init__(self, config: BrokerConfig, listeners: Sequence[Listener]) -> None:
        self.config = config
        self.node_id = config.node_id
        #: listeners are the broker's bound listeners; the first one's advertised address is
        #: ``host`` and ``port``.
        self.listeners = list(listeners)
        self.host = self.listeners[0].advertised_host
        self.port = self.listeners[0].advertised_port
        #: dynamic_configs are the broker configs set at run time
        #: (``kgroup.broker.dynamic_config``): read before the topics open their logs.
        self.dynamic_configs = DynamicConfigs(config)
        self.topics = Topics(config)
        #: connections are the clients' open connections.
        self.connections: set[Peer] = set()
        self.flush_executor = concurrent.futures.ThreadPoolExecutor(1, "kgroup-flush")
        self.background_executor = concurrent.futures.ThreadPoolExecutor(1, "kgroup-cleaner")
        self.flusher = Flusher(
            self.flush_executor, lambda p, e: self.topics.storage_failed(p, "syncing", e)
        )
        self.producer_ids = ProducerIds(config.data_dir / "producer-ids")
        #: scram holds the users' SCRAM credentials (``scram-credentials.json``).
        self.scram = ScramCredentials(config.data_dir / SCRAM_FILE)
        #: sasl holds each SASL listener's settings, by listener name (``kgroup.broker.sasl``).
        self.sasl = sasl_listeners(config, self.listeners, self.scram)
        #: groups hosts the group coordinator (``kgroup.broker.coordinators.groups``).
        self.groups = GroupHost(self)
        #: transactions hosts the transaction coordinator
        #: (``kgroup.broker.coordinators.transactions``).
        self.transactions = TxnHost(self)
        #: shares holds the share groups' share partitions and sessions
        #: (``kgroup.broker.share.manager``).
        self.shares = ShareManager(config, self.groups.configs.parsed)
        #: stopping is set when the broker shuts down: long polls answer at once.
        self.stopping = False
        #: acks_all_fsync: acks=all is answered once fsynced (kgroup.acks.all.fsync).
        self.acks_all_fsync = bool(config.get("kgroup.acks.all.fsync"))
        #: fetch_sendfile: Fetch sends records from the segment files (kgroup.fetch.sendfile).
        #: Memory storage has no file to send from: its records are copied into the response.
        self.fetch_sendfile = (
            bool(config.get("kgroup.fetch.sendfile"))
            and config.get("kgroup.log.storage") != "memory"
        )
        #: send_stats counts the fetched bytes sent by sendfile and those copied.
        self.send_stats = SendStats()
        #: limits are the limits on clients: connection quotas, queued request bytes, idle
        #: connections (``kgroup.broker.limits``).
        self.limits = Limits(config, [lst.name for lst in listeners])
        #: requests counts the request frames received, by api key (Kafka's RequestsPerSec
        #: meter of kafka.network:type=RequestMetrics, as a plain count).
        self.requests: collections.Counter[int] = collections.Counter()
        #: faults are the failures a test armed: the Broker installs ``kgroup.broker.faults``'
        #: engine as it starts; nothing is armed by default.
        self.faults: FaultHooks = NoFaults()
        #: tls holds the TLS listeners' contexts (``kgroup.broker.tls.TlsContexts``), set by
        #: the Broker as it starts when it has TLS listeners; None otherwise.
        self.tls: Any = None
        #: authorizer decides what each principal may do (``authorizer.class.name``); None,
        #: the default, allows everything with no check at all.
        self.authorizer: Authorizer | None = authorizer_from_config(config)
        #: quotas are the client quotas (``kgroup.broker.quotas``): measured only once one
        #: is set.
        self.quotas = Quotas(
            config.data_dir,
            int(config.get("quota.window.size.seconds")),
            int(config.get("quota.window.num")),
            int(config.get("controller.quota.window.size.seconds")),
            int(config.get("controller.quota.window.num")),
        )
        self.limits.quotas.ip_rate_quota = self.quotas.ip_connection_rate

    @property
    def cluster_id(self) -> str:
        return self.topics.cluster_id

    def broker(self, listener: Listener | None = None) -> dict[str, Any]:
        """This broker as Metadata and DescribeCluster list it to a client connected on
        ``listener`` (Kafka answers with the endpoint of the request's own listener): its
        advertised address there."""
        lst = listener or self.listeners[0]
        return {
            "node_id": self.node_id,
            "host": lst.advertised_host,
            "port": lst.advertised_port,
            "rack": None,
        }

    def close(self) -> None:
        self.shares.close()
        self.flush_executor.shutdown(wait=True)
        self.background_executor.shutdown(wait=True)
        self.topics.close()
