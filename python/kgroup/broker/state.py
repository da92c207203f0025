"""BrokerState: what the handlers share: the configuration, the topics, the advertised address,
the flusher that makes acks=all durable, and the producer id allocator."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.config import BrokerConfig
from kgroup.broker.topics import Partition, Topics

if TYPE_CHECKING:
    from kgroup.broker.server import Connection

__all__ = ["BrokerState", "Flusher", "ProducerIds"]

log = logging.getLogger("kgroup.broker")


class Flusher:
    """Flusher makes appended data durable for acks=all produces, one fsync per log for many
    produces (group commit): a produce waits for the next flush that starts after its append;
    while one flush runs, the produces that arrive meanwhile gather for the next. Flushes run
    in one thread, so that the event loop keeps serving."""

    def __init__(self, executor: concurrent.futures.Executor) -> None:
        self._executor = executor
        self._dirty: set[Partition] = set()
        self._waiters: list[asyncio.Future[None]] = []
        self._running = False
        self._task: asyncio.Task[None] | None = None

    async def sync(self, partitions: Iterable[Partition]) -> None:
        """Wait until everything appended to these partitions so far is on disk; raises
        KafkaStorageError if a flush failed."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._dirty.update(partitions)
        self._waiters.append(fut)
        if not self._running:
            self._running = True
            self._task = loop.create_task(self._run())
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
            while self._waiters or self._dirty:
                dirty, self._dirty = self._dirty, set()
                waiters, self._waiters = self._waiters, []
                logs = [p.log for p in dirty]
                try:
                    await loop.run_in_executor(self._executor, _flush_all, logs)
                except Exception as e:
                    log.error("Flush failed: %s", e)
                    err = (
                        e if isinstance(e, errors.KafkaError) else errors.KafkaStorageError(str(e))
                    )
                    for w in waiters:
                        if not w.done():
                            w.set_exception(err)
                    continue
                for w in waiters:
                    if not w.done():
                        w.set_result(None)
        finally:
            self._running = False


def _flush_all(logs: list[Any]) -> None:
    for lg in logs:
        lg.flush()


class ProducerIds:
    """ProducerIds hands out producer ids (InitProducerId) that never repeat, even across
    restarts: ids come in blocks of 1000, and a block is recorded on disk before any of its
    ids is given out, as Kafka's controller allocates them."""

    BLOCK = 1000

    def __init__(self, path: Path) -> None:
        self._path = path
        self._next = 0
        self._end = 0
        if path.exists():
            self._next = self._end = int(path.read_text().strip() or 0)

    def next(self) -> int:
        if self._next >= self._end:
            end = self._next + self.BLOCK
            tmp = self._path.with_name(self._path.name + ".tmp")
            with open(tmp, "w") as f:
                f.write(f"{end}\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._path)
            self._end = end
        pid = self._next
        self._next += 1
        return pid


class BrokerState:
    """BrokerState is the broker's shared state, owned by its event loop."""

    def __init__(self, config: BrokerConfig, host: str, port: int) -> None:
        self.config = config
        self.node_id = config.node_id
        self.host = host
        self.port = port
        self.topics = Topics(config)
        self.connections: set[Connection] = set()
        self.flush_executor = concurrent.futures.ThreadPoolExecutor(1, "kgroup-flush")
        self.background_executor = concurrent.futures.ThreadPoolExecutor(1, "kgroup-cleaner")
        self.flusher = Flusher(self.flush_executor)
        self.producer_ids = ProducerIds(config.data_dir / "producer-ids")
        #: stopping is set when the broker shuts down: long polls answer at once.
        self.stopping = False

    @property
    def cluster_id(self) -> str:
        return self.topics.cluster_id

    def broker(self) -> dict[str, Any]:
        """This broker as Metadata and DescribeCluster list it."""
        return {"node_id": self.node_id, "host": self.host, "port": self.port, "rack": None}

    def close(self) -> None:
        self.flush_executor.shutdown(wait=True)
        self.background_executor.shutdown(wait=True)
        self.topics.close()
