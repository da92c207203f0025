"""kgroup.testing: a real Kafka broker for every Python test, with faults on demand.

kgroup's broker speaks Kafka's protocol to every client (confluent-kafka, kafka-python,
aiokafka, Java's, kgroup's own) with real consumer groups and transactions; this kit starts one
per test in a few milliseconds, in the test process (a thread with its own event loop, storage
in memory) or in a child process (storage on disk, so that a test can kill it and start it
again on its data), and lets the test inject the failures a Kafka cluster has and look inside::

    from kgroup.testing import Broker

    with Broker() as broker:
        broker.create_topic("orders", partitions=3)
        producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})
        broker.fail("produce", "NOT_LEADER_OR_FOLLOWER", times=2)   # the next two produces
        ...
        assert [r.value for r in broker.records("orders")] == [...]

    async with Broker() as broker:  # the same, from asyncio code
        ...

With pytest the ``kgroup_broker`` fixture (this package's plugin, registered on install) gives
each test such a broker, and undoes every fault at its end. See the README's "Testing an
application that uses Kafka".

Every fault is observed by clients as they observe Kafka's own failures: error codes answered
in the places Kafka answers them, connections closed, answers late or missing, partitions
without a leader, a group coordinator that moves, a member's session that expires, a disk that
fails, a process that dies. Inspection reads the broker's own state (records, groups, offsets,
transactions), not a client's view of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno as errno_codes
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from multiprocessing.connection import Client, Connection
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from kgroup import errors, protocol
from kgroup.testing._control import Control, api_key, error_code

if TYPE_CHECKING:
    from kgroup.broker import Broker as _Broker
    from kgroup.broker.inspect import (
        Committed,
        GroupInfo,
        ProducerInfo,
        Record,
        TxnInfo,
    )

__all__ = ["TEST_DEFAULTS", "Broker", "BrokerNotRunning", "Fault"]

#: TEST_DEFAULTS are the broker settings a test broker starts with, on top of Kafka's defaults,
#: as Kafka's own test harness sets them: no initial rebalance delay (a group's first member
#: is assigned at once, not after 3 s), 5 partitions, not 50, for the internal topics (fewer
#: logs to make on the first FindCoordinator), and KIP-848 consumers told to heartbeat every
#: 500 ms, not 5 s (Kafka's PlaintextConsumerPollTest), so that they learn of a new assignment or
#: a fence quickly. ``Broker(config=...)`` overrides them:
#: ``config={"group.initial.rebalance.delay.ms": 3000}`` gives Kafka's default back.
TEST_DEFAULTS: dict[str, Any] = {
    "group.initial.rebalance.delay.ms": 0,
    "offsets.topic.num.partitions": 5,
    "transaction.state.log.num.partitions": 5,
    "group.consumer.heartbeat.interval.ms": 500,
    "group.consumer.min.heartbeat.interval.ms": 500,
}


class BrokerNotRunning(RuntimeError):
    """The broker was asked to act while stopped or killed."""


class Fault:
    """Fault is one armed fault: ``remove()`` ends it before its time; as a context manager it
    ends when the block does. Every fault also ends with the test (``Broker.clear_faults``)."""

    def __init__(self, broker: Broker, fault_id: int, what: str) -> None:
        self.broker = broker
        self.id = fault_id
        self.what = what

    def remove(self) -> None:
        if self.broker.running:
            self.broker._call("remove_fault", self.id)

    def __enter__(self) -> Fault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"Fault({self.id}, {self.what})"


class Broker:
    """Broker is a kgroup broker for one test (or a session of tests).

    ``process=False`` (the default) runs it in this process, in a thread with its own event
    loop; ``process=True`` in a child process, which ``kill()`` can kill as a crash would and
    ``restart()`` starts again on its data, on the same port. ``storage`` is ``"memory"`` (the
    default in this process: segments kept in memory with the log's very semantics) or
    ``"disk"`` (the default for a child process: a temporary folder, or ``data_dir``).
    ``config`` holds ``server.properties`` keys on top of :data:`TEST_DEFAULTS`. ``port=0``
    picks a free port on ``host``.

    Use it as a context manager (``with`` or ``async with``), or call ``start()`` and
    ``stop()``. Every method is thread-safe and quick (a call into the broker's loop), so it may
    be called from asyncio code as well.
    """

    def __init__(
        self,
        *,
        process: bool = False,
        storage: str | None = None,
        data_dir: str | Path | None = None,
        config: Mapping[str, Any] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout: float = 30.0,
        log_level: str | None = None,
    ) -> None:
        storage = storage or ("disk" if process or data_dir is not None else "memory")
        if storage not in ("memory", "disk"):
            raise ValueError(f"storage must be 'memory' or 'disk', not {storage!r}")
        if storage == "memory" and data_dir is not None:
            raise ValueError("data_dir is for storage='disk'")
        self.process = process
        self.storage = storage
        self.host = host
        self.port = port
        self.timeout = timeout
        self.log_level = log_level
        self.config: dict[str, Any] = {**TEST_DEFAULTS, **dict(config or {})}
        self._data_dir = Path(data_dir) if data_dir is not None else None
        self._own_dir: Path | None = None
        self._memory_root: Path | None = None
        self._backend: _InProcess | _ChildProcess | None = None
        self._lock = threading.Lock()

    # -- life cycle ----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._backend is not None and self._backend.running

    @property
    def bootstrap_servers(self) -> str:
        """Where clients connect: ``127.0.0.1:<port>``."""
        if self._backend is None:
            raise BrokerNotRunning("the broker is not started")
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        """The process the broker runs in: its child's, or this one's."""
        if self._backend is None:
            raise BrokerNotRunning("the broker is not started")
        if isinstance(self._backend, _ChildProcess):
            assert self._backend.proc is not None
            return self._backend.proc.pid
        return os.getpid()

    @property
    def data_dir(self) -> Path | None:
        """The folder of a broker on disk (None in memory)."""
        return self._data_dir or self._own_dir

    def start(self) -> Broker:
        """Start the broker (a no-op if it runs)."""
        with self._lock:
            if self.running:
                return self
            if self.storage == "disk" and self._data_dir is None and self._own_dir is None:
                self._own_dir = Path(tempfile.mkdtemp(prefix="kgroup-test-broker-"))
            config = dict(self.config)
            data_dir = self.data_dir
            if self.storage == "memory":
                from kgroup import log as klog

                if self._memory_root is None:
                    self._memory_root = klog.memory_root()
                config["kgroup.log.storage"] = "memory"
                # The kit owns the root: a restart finds the data, stop() frees it.
                config["kgroup.log.storage.keep"] = True
                data_dir = self._memory_root
            backend: _InProcess | _ChildProcess
            if self.process:
                backend = _ChildProcess(self, data_dir, config)
            else:
                backend = _InProcess(self, data_dir, config)
            backend.start()
            self._backend = backend
            return self

    def stop(self) -> None:
        """Stop the broker cleanly and free what it held (its temporary folder, its memory)."""
        with self._lock:
            backend, self._backend = self._backend, None
            if backend is not None:
                with contextlib.suppress(Exception):
                    backend.call("clear_faults")
                backend.stop()
            if self._own_dir is not None:
                shutil.rmtree(self._own_dir, ignore_errors=True)
                self._own_dir = None
            if self._memory_root is not None:
                from kgroup import log as klog

                klog.drop_memory_root(self._memory_root)
                self._memory_root = None

    def restart(self) -> None:
        """Stop the broker cleanly (if it runs) and start it again on its data and port:
        clients reconnect by themselves. A child process's memory dies with it: a broker in
        memory restarts in this process only."""
        with self._lock:
            backend = self._backend
            if backend is None:
                raise BrokerNotRunning("the broker was never started")
            if isinstance(backend, _ChildProcess) and self.storage == "memory":
                raise RuntimeError(
                    "a broker in memory in a child process loses its data when it stops: "
                    "storage='disk' (or process=False) to restart it"
                )
            if backend.running:
                backend.stop()
            backend.start()

    def kill(self) -> None:
        """Kill the broker as a crash would (SIGKILL of its process): nothing flushed, no
        connection closed cleanly. ``restart()`` starts it again on its data."""
        backend = self._backend
        if not isinstance(backend, _ChildProcess):
            raise RuntimeError(
                "a broker in the test process cannot be killed: use Broker(process=True)"
            )
        if self.storage == "memory":
            raise RuntimeError("a broker in memory loses its data when killed: storage='disk'")
        backend.kill()

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Broker:
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        backend = self._backend
        if backend is None or not backend.running:
            raise BrokerNotRunning(f"the broker is not running ({name})")
        return backend.call(name, *args, **kwargs)

    # -- topics --------------------------------------------------------------------------------

    def create_topic(
        self, name: str, partitions: int = 1, config: Mapping[str, Any] | None = None
    ) -> None:
        """Create a topic, checked as CreateTopics checks it (``config``: topic configs such as
        ``{"cleanup.policy": "compact"}``); raises the KafkaError Kafka would answer."""
        self._call("create_topic", name, partitions, dict(config or {}))

    def delete_topic(self, name: str) -> None:
        self._call("delete_topic", name)

    def topics(self) -> dict[str, int]:
        """The topics (internal ones left out) and their partition counts."""
        return dict(self._call("topics"))

    def end_offsets(self, topic: str) -> dict[int, int]:
        """Each partition's high watermark."""
        return dict(self._call("end_offsets", topic))

    # -- faults --------------------------------------------------------------------------------

    def fail(
        self,
        api: int | str | protocol.ApiKey,
        error: int | str | type[errors.KafkaError],
        *,
        times: int | None = 1,
        topic: str | None = None,
        partition: int | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        handled: bool = False,
    ) -> Fault:
        """Answer the next ``times`` requests of ``api`` (None: every one until removed) with
        ``error``, where Kafka answers it: for each partition of the request (``topic`` and
        ``partition`` narrow it down, the other partitions are served), for the group
        (``group``), the transactional id (``transactional_id``), or the whole request.
        ``handled=False`` refuses the request, as Kafka refusing it; ``handled=True`` serves it
        and then answers the error, as a timeout after the write: an idempotent producer's
        retry of a REQUEST_TIMED_OUT produce is then answered as a duplicate."""
        key, code = api_key(api), error_code(error)
        fault_id = self._call(
            "fail",
            key,
            code,
            times=times,
            topic=topic,
            partition=partition,
            group=group,
            transactional_id=transactional_id,
            handled=handled,
        )
        name = protocol.ApiKey(key).name
        return Fault(self, fault_id, f"{name} answered {errors.error_for_code(code)}")

    def delay(
        self,
        seconds: float,
        api: int | str | protocol.ApiKey | None = None,
        *,
        times: int | None = None,
    ) -> Fault:
        """Answer ``api``'s requests (every api's, if None) ``seconds`` late, the next
        ``times`` of them (every one until removed, if None)."""
        key = None if api is None else api_key(api)
        fault_id = self._call("delay", seconds, key, times=times)
        return Fault(self, fault_id, f"{seconds} s of latency")

    def disconnect(self, after: int = 0, api: int | str | protocol.ApiKey | None = None) -> int:
        """``after=0``: close every client connection now (returns how many). ``after=N``: the
        connection that carries the N-th next request (of ``api``, if given) closes when that
        request arrives, unanswered (returns the fault's id)."""
        return int(self._call("disconnect", after, None if api is None else api_key(api)))

    def pause(self) -> None:
        """Stop reading and answering, as a long garbage-collection pause would: connections
        stay open and requests wait. ``resume()`` goes on."""
        self._call("pause")

    def resume(self) -> None:
        self._call("resume")

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The broker paused for the ``with`` block."""
        self.pause()
        try:
            yield
        finally:
            if self.running:
                self.resume()

    def leaderless(
        self, topic: str, partition: int | None = None, *, seconds: float | None = None
    ) -> Fault:
        """The partition (every partition of the topic, if None) has no leader, for
        ``seconds`` (until removed, if None): Metadata answers LEADER_NOT_AVAILABLE and no
        leader for it, produce and fetch NOT_LEADER_OR_FOLLOWER."""
        fault_id = self._call("leaderless", topic, partition, seconds)
        where = topic if partition is None else f"{topic}-{partition}"
        return Fault(self, fault_id, f"{where} without a leader")

    def move_coordinator(self, group: str | None = None, *, seconds: float = 1.0) -> Fault:
        """The group coordinator of ``group`` (of every group, if None) moves away and comes
        back ``seconds`` later, as when a Kafka broker fails over: its state is unloaded, group
        requests are answered NOT_COORDINATOR, then COORDINATOR_LOAD_IN_PROGRESS while it loads
        again from ``__consumer_offsets``."""
        fault_id = self._call("move_coordinator", group, seconds)
        return Fault(self, fault_id, f"coordinator of {group or 'every group'} moved")

    def expire_member(self, group: str, member_id: str | None = None) -> None:
        """The member's session (every member's, if None) expires now, as if its heartbeats had
        stopped for the session timeout."""
        self._call("expire_member", group, member_id)

    def fail_disk(
        self,
        topic: str,
        partition: int | None = 0,
        *,
        times: int | None = 1,
        op: str = "write",
        errno: int = errno_codes.EIO,
    ) -> None:
        """The partition's storage (every partition of the topic, if None) fails its next
        ``times`` operations ``op`` (``write``, ``sync``, ``create``...) with the OS error
        ``errno``: produce is answered KAFKA_STORAGE_ERROR, as Kafka answers when its disk
        fails. A failed ``sync`` takes the log offline until the broker restarts (as Kafka
        takes its log directory offline). The faults are process-wide: in this process, they
        apply to every broker's matching files."""
        self._call("fail_disk", topic, partition, times, op, errno)

    def faults(self) -> list[dict[str, Any]]:
        """The faults armed now, described."""
        return list(self._call("faults"))

    def clear_faults(self) -> None:
        """Undo every fault: errors, latency, pauses, leaders and coordinators back, disk
        faults cleared; a log a fault took offline comes back with a restart."""
        offline = self._call("clear_faults")
        if offline:
            self.restart()

    # -- inspection ----------------------------------------------------------------------------

    def records(
        self, topic: str, partition: int | None = None, *, committed_only: bool = False
    ) -> list[Record]:
        """The topic's records (one partition's, if given) in each partition's offset order,
        as stored: keys, values, headers, offsets, timestamps, producer ids. ``committed_only``
        leaves out what a read_committed consumer would not see."""
        return list(self._call("records", topic, partition, committed_only))

    def group(self, group_id: str) -> GroupInfo | None:
        """A group's state, generation or epoch, members and their assignments; None if the
        broker has no such group."""
        group: GroupInfo | None = self._call("group", group_id)
        return group

    def groups(self) -> list[str]:
        return list(self._call("groups"))

    def committed(self, group_id: str) -> dict[tuple[str, int], Committed]:
        """A group's committed offsets, by (topic, partition)."""
        return dict(self._call("committed", group_id))

    def transactions(self) -> list[TxnInfo]:
        """The transactional ids the broker knows, with their state and partitions."""
        return list(self._call("transactions"))

    def producers(self, topic: str, partition: int = 0) -> list[ProducerInfo]:
        """The producers of a partition (DescribeProducers' view)."""
        return list(self._call("producers", topic, partition))


class _InProcess:
    """The broker in a thread of this process (kgroup.broker.Broker's own thread mode)."""

    def __init__(self, owner: Broker, data_dir: Path | None, config: dict[str, Any]) -> None:
        self.owner = owner
        self.data_dir = data_dir
        self.config = config
        self.broker: _Broker | None = None
        self.control: Control | None = None

    @property
    def running(self) -> bool:
        return self.broker is not None

    def start(self) -> None:
        from kgroup.broker import Broker as _Broker

        broker = _Broker(
            self.data_dir, host=self.owner.host, port=self.owner.port, config=self.config
        )
        broker.__enter__()
        assert broker.state is not None
        self.owner.port = broker.state.port
        self.broker = broker
        self.control = Control(broker)

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        broker, control = self.broker, self.control
        if broker is None or control is None or broker._loop is None:
            raise BrokerNotRunning(f"the broker is not running ({name})")
        future = asyncio.run_coroutine_threadsafe(control.call(name, args, kwargs), broker._loop)
        return future.result(self.owner.timeout)

    def stop(self) -> None:
        broker, self.broker, self.control = self.broker, None, None
        if broker is not None:
            broker.__exit__(None, None, None)

    def kill(self) -> None:  # pragma: no cover - Broker.kill refuses first
        raise RuntimeError("a broker in the test process cannot be killed")


class _ChildProcess:
    """The broker in a child process, driven over a Unix socket (``_child``)."""

    def __init__(self, owner: Broker, data_dir: Path | None, config: dict[str, Any]) -> None:
        self.owner = owner
        self.data_dir = data_dir
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None
        self.conn: Connection | None = None
        #: control_dir: the child's folder of its control socket (the child removes it when
        #: it stops; after a kill, the kit does).
        self.control_dir: Path | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        options = {
            "data_dir": None if self.data_dir is None else str(self.data_dir),
            "host": self.owner.host,
            "port": self.owner.port,
            "config": self.config,
            "log_level": self.owner.log_level,
            "event_loop": "asyncio",
        }
        authkey = secrets.token_bytes(16)
        env = dict(os.environ, KGROUP_TESTING_AUTHKEY=authkey.hex(), PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _CHILD_BOOT_TLS if _serves_tls(self.config) else _CHILD_BOOT,
                json.dumps(options),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None
        line = _read_line(proc, self.owner.timeout)
        if not line:
            code = proc.wait(self.owner.timeout)
            raise RuntimeError(f"the broker's process exited with status {code} before serving")
        ready = json.loads(line)
        proc.stdout.close()
        self.owner.port = int(ready["port"])
        self.control_dir = Path(ready["control"]).parent
        self.conn = Client(ready["control"], family="AF_UNIX", authkey=authkey)
        self.proc = proc

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            conn = self.conn
            if conn is None or not self.running:
                raise BrokerNotRunning(f"the broker is not running ({name})")
            conn.send((name, args, kwargs))
            if not conn.poll(self.owner.timeout):
                raise TimeoutError(f"the broker did not answer {name} in {self.owner.timeout} s")
            status, value = conn.recv()
        if status == "error":
            raise value
        return value

    def stop(self) -> None:
        proc, conn = self.proc, self.conn
        self.proc = self.conn = None
        if conn is not None:
            with contextlib.suppress(OSError, EOFError):
                conn.send(("shutdown", (), {}))
                conn.poll(self.owner.timeout)
            conn.close()
        if proc is not None:
            try:
                proc.wait(self.owner.timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def kill(self) -> None:
        proc, conn = self.proc, self.conn
        if proc is None:
            raise BrokerNotRunning("the broker is not running")
        proc.kill()
        proc.wait()
        if conn is not None:
            conn.close()
        self.conn = None
        if self.control_dir is not None:
            shutil.rmtree(self.control_dir, ignore_errors=True)
            self.control_dir = None
        # proc stays: restart() starts a new one on the same data and port.
        self.proc = proc


#: _CHILD_BOOT starts a child broker lean: without OpenSSL, whose libraries asyncio loads only when
#: ``ssl`` imports and hmac (the control socket's handshake) only when ``_hashlib`` does (it falls
#: back to Python's own digests). A broker with a TLS listener starts with _CHILD_BOOT_TLS. It runs
#: on asyncio's own loop (uvloop needs ssl). An idle child holds about 6 MB less
#: (bench/bench_testing.py).
_CHILD_BOOT = (
    "import sys; sys.modules['ssl'] = None; sys.modules['_hashlib'] = None; "
    "from kgroup.testing._child import main; sys.exit(main(sys.argv[1:]))"
)


#: _CHILD_BOOT_TLS starts a child broker that has a TLS listener (SSL, SASL_SSL): with ssl.
_CHILD_BOOT_TLS = (
    "import sys; sys.modules['_hashlib'] = None; "
    "from kgroup.testing._child import main; sys.exit(main(sys.argv[1:]))"
)


def _serves_tls(config: Mapping[str, Any]) -> bool:
    """Whether ``config``'s listeners include a TLS one (so that the child needs ssl)."""
    from kgroup.broker.listeners import parse_endpoints, protocol_map

    raw = config.get("listeners")
    if not raw:
        return False
    try:
        protocols = protocol_map(config.get("listener.security.protocol.map"))
        endpoints = parse_endpoints(raw, protocols, "listeners")
    except errors.KGroupError:
        return False  # the child reports the bad config
    return any(proto in ("SSL", "SASL_SSL") for _, proto, _, _ in endpoints)


def _read_line(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """The child's first line of output (its address), or b"" if it exits first."""
    assert proc.stdout is not None
    result: list[bytes] = []
    stdout = proc.stdout
    reader = threading.Thread(target=lambda: result.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        proc.kill()
        raise TimeoutError(f"the broker's process did not start in {timeout} s")
    return result[0] if result else b""
