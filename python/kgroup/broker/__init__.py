"""kgroup.broker: a Kafka-compatible single-node broker with a durable log on disk.

Real clients (confluent-kafka, kafka-python, aiokafka, Java's) use it unchanged: it speaks
Kafka's wire protocol, answers every version Kafka 3.9 serves for the apis it has, and stores
record batches as they were produced, in segments with offset and time indexes, recovered
after a crash, and coordinates Kafka's classic consumer groups, their offsets and metadata
kept in ``__consumer_offsets`` as Kafka keeps them. Start it from the command line
(``kgroup broker``) or embed it::

    from kgroup.broker import Broker

    with Broker(data_dir="/tmp/data", port=0) as broker:   # a background thread
        print(broker.bootstrap_servers)                       # 127.0.0.1:<a free port>

    async with Broker(data_dir="/tmp/data", port=0) as broker:   # tasks of the running loop
        ...

The network side is Python asyncio (``server``), one handler module per api (``handlers``);
appends, reads, recovery, retention and compaction are the Rust log engine's (``kgroup.log``);
the group coordinator is a Rust state machine (``kgroup.group``) hosted by ``coordinators``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import signal
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from kgroup import errors
from kgroup.broker.config import LONG_MAX, BrokerConfig, ConfigError
from kgroup.broker.faults import Faults
from kgroup.broker.limits import Acceptor, Limits, QuotaSlot
from kgroup.broker.listeners import Listener, bound, host_port, parse_listeners
from kgroup.broker.logdirs import close_memory_storage, open_memory_storage
from kgroup.broker.scram import parse_add_scram
from kgroup.broker.server import Connection
from kgroup.broker.state import BrokerState
from kgroup.broker.topics import Partition, now_ms

__all__ = ["Broker", "BrokerConfig", "BrokerState"]

log = logging.getLogger("kgroup.broker")
T = TypeVar("T")

FLUSH_CHECK = "log.flush.scheduler.interval.ms"
RETENTION_CHECK = "log.retention.check.interval.ms"
#: INITIAL_TASK_DELAY_S is the delay of the first retention pass after start (Kafka's
#: LogManager.InitialTaskDelayMs).
INITIAL_TASK_DELAY_S = 30.0
#: PURGE_INTERVAL_S is how often the files of deleted segments and topics whose delay
#: (file.delete.delay.ms, log.segment.delete.delay.ms) passed are looked for.
PURGE_INTERVAL_S = 0.25
FAILURE_SUMMARY = "kgroup.log.dir.failure.summary.ms"


def new_event_loop(kind: str = "auto") -> asyncio.AbstractEventLoop:
    """A new event loop for the broker: uvloop's where it is installed (``auto``; it serves
    Fetch 13% faster than asyncio's own loop here, produce alike: see bench/bench_broker.py),
    else asyncio's. ``kind`` ``uvloop`` or ``asyncio`` picks one."""
    if kind not in ("auto", "uvloop", "asyncio"):
        raise ValueError(f"unknown event loop {kind!r}: auto, uvloop or asyncio")
    if kind != "asyncio":
        try:
            import uvloop
        except ImportError:
            if kind == "uvloop":
                raise
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def _raise_fd_limit() -> None:
    """Raise the open-file soft limit to the hard limit, as Java does for Kafka's broker
    (HotSpot's MaxFDLimit): each connection holds a descriptor, and max.connections is meant
    to be the bound, not a soft limit of 1,024."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass


def _update_reading(limits: Limits) -> None:
    """The queued request bytes crossed their limit: every connection reads, or stops."""
    for conn in list(limits.lru):
        conn.update_reading()
    for acceptor in limits.acceptors:
        acceptor.memory_changed()


#: _listener reads ``HOST:PORT`` (the CLI's ``--listen``).
_listener = host_port


class Broker:
    """Broker is one kgroup broker: a TCP listener, its topics on disk and the tasks that
    keep them (retention, compaction).

    ``data_dir`` overrides ``log.dirs`` (a folder, or a list of folders: partitions spread over
    them); ``host`` and ``port`` are where it listens (``port=0``
    picks a free port); ``advertised_listener`` (``HOST:PORT``) is the address clients are told
    to use, by default the listener's; ``config`` holds ``server.properties`` keys, on top of
    ``config_file`` when given. ``add_scram`` gives SCRAM users as kafka-storage format's
    ``--add-scram`` does (``SCRAM-SHA-256=[name=alice,password=alice-secret]``): each is stored
    at start unless the user already has a credential of that mechanism.

    Use it as a context manager: ``with Broker(...)`` runs it in a thread of its own, ``async
    with Broker(...)`` as tasks of the running event loop. Either way ``bootstrap_servers`` is
    then its address. Leaving the block finishes the requests in flight, flushes every log and
    closes it cleanly, so that the next start needs no recovery.

    With ``kgroup.log.storage=memory`` every file of the broker lives in this process's memory
    (``kgroup.log.memory_root``): ``log.dirs`` are registered as memory roots at start (a fresh
    one when no folder is given: ``config.data_dirs`` names it once started) and freed at stop,
    unless ``kgroup.log.storage.keep`` is set: then a broker started later in this process on
    the same ``log.dirs`` (with the same two configs) finds everything the first one kept.
    """

    def __init__(
        self,
        data_dir: str | Path | Sequence[str | Path] | None = None,
        *,
        host: str | None = None,
        port: int | None = None,
        advertised_listener: str | None = None,
        config: Mapping[str, Any] | None = None,
        config_file: str | Path | None = None,
        event_loop: str = "auto",
        add_scram: Sequence[str] = (),
    ) -> None:
        values = dict(config or {})
        try:
            #: _add_scram are SCRAM credentials given at start (kafka-storage format's
            #: ``--add-scram``), each kept unless the user already has one of that mechanism.
            self._add_scram = [parse_add_scram(a) for a in add_scram]
        except ValueError as e:
            raise ConfigError(str(e)) from None
        if isinstance(data_dir, (str, Path)):
            values["log.dirs"] = str(data_dir)
        elif data_dir is not None:
            values["log.dirs"] = ",".join(str(d) for d in data_dir)
        self.config = (
            BrokerConfig.from_file(config_file, values) if config_file else BrokerConfig(values)
        )
        #: listeners are where the broker listens (``listeners``, or one PLAINTEXT listener on
        #: ``host``/``port``); their ports are the bound ones once started.
        self.listeners = parse_listeners(self.config, host, port, advertised_listener)
        self.host = self.listeners[0].host
        self.port = self.listeners[0].port
        #: event_loop is the loop a background-thread broker (``with Broker(...)``) runs on:
        #: ``auto`` (uvloop where installed), ``uvloop`` or ``asyncio``.
        self.event_loop = event_loop
        self.state: BrokerState | None = None
        self._servers: list[Acceptor] = []
        self._tasks: list[asyncio.Task[Any]] = []
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        #: _memory_roots are the memory roots this broker registered (memory storage).
        self._memory_roots: list[Path] = []

    # -- address -------------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        """The address clients connect to: ``host:port`` (the first listener's)."""
        if self.state is None:
            raise RuntimeError("the broker is not running")
        return self.state.listeners[0].bootstrap

    def address(self, listener: str) -> str:
        """The ``host:port`` clients connect to on the listener named ``listener``."""
        if self.state is None:
            raise RuntimeError("the broker is not running")
        for lst in self.state.listeners:
            if lst.name == listener.upper():
                return lst.bootstrap
        raise KeyError(f"no listener named {listener}")

    # -- async life cycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Open the data folder (recovering logs after an unclean stop), then listen."""
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        _raise_fd_limit()
        # Bind first (port 0 picks one), load the topics, then accept: no client ever reaches
        # a broker that is still recovering its logs.
        socks: list[socket.socket] = []
        listeners: list[Listener] = []
        try:
            for lst in self.listeners:
                family = socket.AF_INET6 if ":" in lst.host else socket.AF_INET
                sock = socket.socket(family, socket.SOCK_STREAM)
                socks.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((lst.host, lst.port))
                listeners.append(bound(lst, sock.getsockname()[1]))
            self._memory_roots = open_memory_storage(self.config)
            state = BrokerState(self.config, listeners)
            state.faults = Faults(state)
        except BaseException:
            for sock in socks:
                sock.close()
            close_memory_storage(self.config, self._memory_roots)
            raise
        self._servers = []
        try:
            # A TLS listener's key store is read before the logs: one that cannot be read
            # stops the start, as Kafka's does. The dynamic configs (a key store updated
            # since the broker started) are in by now. ssl (OpenSSL) is loaded only by a
            # broker that serves TLS.
            if any(lst.uses_ssl for lst in listeners):
                from kgroup.broker import tls

                state.tls = tls.TlsContexts(self.config, listeners)
            await loop.run_in_executor(None, state.topics.load)
            fresh = [(m, u, c) for m, u, c in self._add_scram if state.scram.get(u, m) is None]
            for mechanism, user, cred in fresh:
                state.scram.put(user, mechanism, cred)
            if fresh:
                state.scram.save()
            state.groups.start()
            state.transactions.start()
            limits = state.limits
            # Soon, not now: the limit may be crossed inside a connection's get_buffer, where
            # uvloop must not be told to stop reading.
            limits.request_bytes.on_change = functools.partial(
                loop.call_soon, _update_reading, limits
            )
            for lst, sock in zip(listeners, socks, strict=True):
                acceptor = Acceptor(
                    loop,
                    sock,
                    lst.name,
                    limits.quotas,
                    self._protocol_factory(state, lst, state.tls if lst.uses_ssl else None),
                    request_bytes=limits.request_bytes,
                )
                self._servers.append(acceptor)
                limits.acceptors.append(acceptor)
                acceptor.start()
        except BaseException:
            for server in self._servers:
                server.close()
            self._servers = []
            for sock in socks:
                sock.close()
            state.transactions.stop()
            state.groups.stop()
            state.close()
            close_memory_storage(self.config, self._memory_roots)
            raise
        self.listeners = listeners
        self.port = listeners[0].port
        self.state = state
        self._stopped = asyncio.Event()
        self._tasks = [
            loop.create_task(self._every(RETENTION_CHECK, self._maintain)),
            loop.create_task(self._every("log.cleaner.backoff.ms", self._compact)),
            loop.create_task(self._every(FLUSH_CHECK, self._flush_old)),
            loop.create_task(self._every(None, self._purge)),
            loop.create_task(self._every(FAILURE_SUMMARY, self._summarize_failures)),
            loop.create_task(self._expire_idle()),
        ]
        log.info(
            "[KafkaServer id=%d] started (kgroup %s) on %s, data in %s, %d topic(s), in %.1f s",
            state.node_id,
            _version(),
            ", ".join(
                f"{lst.name}://{lst.host}:{lst.port}"
                + (
                    f" (advertised {lst.bootstrap})"
                    if lst.bootstrap != f"{lst.host}:{lst.port}"
                    else ""
                )
                for lst in listeners
            ),
            ", ".join(str(d) for d in self.config.data_dirs)
            + (" (memory)" if self._memory_roots else ""),
            len(state.topics.by_name),
            time.monotonic() - started,
        )

    @staticmethod
    def _protocol_factory(
        state: BrokerState, listener: Listener, contexts: Any
    ) -> Callable[[QuotaSlot], asyncio.BaseProtocol]:
        """What serves each connection of ``listener`` (given its place in the connection
        quotas): a Connection, behind a TLS layer on a TLS listener (``contexts`` the
        TlsContexts, whose listener's current SSLContext each new connection takes)."""
        if contexts is None:
            return functools.partial(Connection, state, listener)
        from kgroup.broker.tls import TlsProtocol

        name = listener.name
        return lambda slot: TlsProtocol(contexts.context(name), Connection(state, listener, slot))

    async def stop(self, grace: float = 10.0) -> None:
        """Stop listening, finish the requests in flight (within ``grace`` seconds), flush
        and close every log."""
        if not self._servers:
            return
        for server in self._servers:
            server.close()
        state = self.state
        for t in self._tasks:
            t.cancel()
        if state is not None:
            # No new requests; long polls answer now with what they have.
            state.stopping = True
            # A paused broker resumes (what it holds is answered), a moved coordinator's
            # partitions load again: the stop below then runs as usual.
            state.faults.clear()
            for c in list(state.connections):
                c.stop_reading()
            for part in state.topics.partitions():
                part.wake()
            # Parked JoinGroups and SyncGroups answer NOT_COORDINATOR now, not after the grace.
            state.transactions.stop()
            state.groups.stop()
            deadline = time.monotonic() + grace
            while any(c.in_flight for c in state.connections) and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            for c in list(state.connections):
                c.close()
            await asyncio.get_running_loop().run_in_executor(None, state.close)
            close_memory_storage(self.config, self._memory_roots)
            self._memory_roots = []
            stats = state.send_stats
            if stats.sendfile_calls or stats.copied_bytes:
                log.info(
                    "Fetch sent %d bytes of records with sendfile in %d calls (%d took part) "
                    "and copied %d",
                    stats.sendfile_bytes,
                    stats.sendfile_calls,
                    stats.partial,
                    stats.copied_bytes,
                )
            log.info("[KafkaServer id=%d] shut down completed", state.node_id)
        for server in self._servers:
            await server.wait_closed()
        self._servers = []
        if self._stopped is not None:
            self._stopped.set()

    async def __aenter__(self) -> Broker:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def run(self) -> None:
        """Serve in this thread until SIGINT or SIGTERM, on the loop ``event_loop`` names."""
        with asyncio.Runner(loop_factory=lambda: new_event_loop(self.event_loop)) as runner:
            runner.run(self.serve_forever())

    async def serve_forever(self) -> None:
        """Run until SIGINT or SIGTERM, then stop cleanly (``kgroup broker``)."""
        loop = asyncio.get_running_loop()
        await self.start()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
            log.info("Shutting down on signal")
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            await self.stop()

    # -- background work -------------------------------------------------------------------

    async def _every(self, key: str | None, work: Any) -> None:
        if key is None:
            period = PURGE_INTERVAL_S
        elif key == FLUSH_CHECK:
            # Kafka's default (Long.MAX_VALUE) checks never, so flush.ms would do nothing;
            # here a topic's flush.ms is honoured within a second.
            configured = self.config.get(key)
            period = min(int(configured) if configured is not None else LONG_MAX, 1000) / 1000
        else:
            period = int(self.config.get(key)) / 1000
        first = period
        if key == RETENTION_CHECK:
            # Kafka's LogManager runs its first retention pass 30 s after start
            # (InitialTaskDelayMs), not a whole interval (5 min) later.
            first = min(period, INITIAL_TASK_DELAY_S)
        await asyncio.sleep(first)
        while True:
            try:
                await work()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("Error in background task %s", work.__name__)
            await asyncio.sleep(period)

    async def _expire_idle(self) -> None:
        """Close the connections idle for connections.max.idle.ms (Kafka's Selector checks at
        each poll; here as each next one may expire)."""
        limits = self.state.limits if self.state is not None else None
        while limits is not None:
            wait = limits.expire_idle(time.monotonic())
            await asyncio.sleep(max(wait, 0.01))

    async def _maintain(self) -> None:
        """Retention by time and size, rolling by time, producer expiry: each log in turn."""
        state = self.state
        assert state is not None
        for p in list(state.topics.partitions()):
            report = await self._on_log(p, p.log.maintenance, "applying retention to")
            if report is None:
                continue
            if report.rolled:
                log.info("Rolled a new segment of %s (segment.ms)", p.name)
            if report.segments_deleted:
                log.info(
                    "Deleted %d segment(s) (%d bytes) of %s by retention; log start offset %d",
                    report.segments_deleted,
                    report.bytes_deleted,
                    p.name,
                    report.log_start_offset,
                )

    async def _on_log(self, p: Partition, work: Callable[[int], T], what: str) -> T | None:
        """``work(now)`` on a log in the background executor; None if the log is offline or
        the work failed on storage (reported to the log dirs' failure channel)."""
        state = self.state
        assert state is not None
        if p.offline:
            return None
        try:
            return await asyncio.get_running_loop().run_in_executor(
                state.background_executor, work, now_ms()
            )
        except errors.KafkaStorageError as e:
            state.topics.storage_failed(p, what, e)
            return None

    async def _flush_old(self) -> None:
        """flush.ms: fsync the logs whose last flush is older than their topic's flush.ms."""
        state = self.state
        assert state is not None
        now = now_ms()
        old = [
            p
            for p in state.topics.partitions()
            if p.log.flush_ms < LONG_MAX
            and p.log.unflushed_messages > 0
            and now - p.log.last_flush_ms >= p.log.flush_ms
        ]
        if old:
            state.flusher.schedule(old)

    async def _compact(self) -> None:
        """Clean the compacted logs that need it."""
        state = self.state
        assert state is not None
        if not self.config.get("log.cleaner.enable"):
            return
        for p in list(state.topics.partitions()):
            if "compact" not in state.topics.log_config(p.topic.configs)["cleanup.policy"]:
                continue
            report = await self._on_log(p, p.log.compact, "compacting")
            if report is not None and report.cleaned:
                log.info(
                    "Cleaned %s up to offset %d: %d record(s) and %d tombstone(s) removed, "
                    "%d bytes to %d",
                    p.name,
                    report.end_offset,
                    report.records_removed,
                    report.tombstones_removed,
                    report.bytes_before,
                    report.bytes_after,
                )

    async def _purge(self) -> None:
        """Remove the files of deleted segments and topics whose delay passed."""
        state = self.state
        assert state is not None
        loop = asyncio.get_running_loop()
        now = now_ms()
        for p in list(state.topics.partitions()):
            due = p.log.next_purge_ms
            if due is not None and due <= now:
                await self._on_log(p, p.log.purge, "removing deleted segments of")
        if any(t <= now for t, _ in state.topics.doomed):
            await loop.run_in_executor(state.background_executor, state.topics.purge_doomed, now)

    async def _summarize_failures(self) -> None:
        assert self.state is not None
        self.state.topics.log_dirs.summarize()

    # -- running in a thread -----------------------------------------------------------------

    def __enter__(self) -> Broker:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = new_event_loop(self.event_loop)
            self._loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as e:
                failure.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                assert self._stopped is not None
                loop.run_until_complete(self._stopped.wait())
            finally:
                with contextlib.suppress(Exception):
                    loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="kgroup-broker", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.stop(), loop).result()
        thread.join()
        self._thread = None


def _version() -> str:
    from kgroup import __version__

    return __version__
