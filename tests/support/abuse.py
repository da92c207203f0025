"""Abusive clients of a broker, and a real producer and consumer timed beside them: what
tests/broker/test_abuse.py and bench/bench_abuse.py run (issue 24's abuse acceptance).

Every abuser is plain sockets from this process (no event loop): connections opened and held,
connections that send the first bytes of a frame and stall, frames that claim more than the
broker reads, random bytes after a valid ApiVersions, and a flood of pipelined ApiVersions. The
abusers connect from their own loopback addresses (127.0.0.2 and up: each has its own
ephemeral ports, so that 10,000 connections closed in one run leave ports for the next).
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

from kgroup import protocol
from kgroup.protocol.records import encode_batch

API_VERSIONS = int(protocol.ApiKey.API_VERSIONS)
_IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)


def raise_fd_limit(want: int) -> int:
    """Raise this process's open-file soft limit towards ``want`` (at most the hard limit);
    the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


def rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` (VmRSS), in MB (10^6 bytes)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6
    raise ValueError(f"no VmRSS for {pid}")


def api_versions_request(correlation_id: int = 1, version: int = 3) -> bytes:
    body = {"client_software_name": "abuse", "client_software_version": "1"} if version >= 3 else {}
    return protocol.encode_request(API_VERSIONS, version, correlation_id, "abuse", body)


def _connect(host: str, port: int, source: str, timeout: float) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # The port is picked at connect (Linux's IP_BIND_ADDRESS_NO_PORT): bind's own search of a
    # free port slows to milliseconds once thousands of the address's ports are in TIME_WAIT.
    with contextlib.suppress(OSError):
        s.setsockopt(socket.IPPROTO_IP, _IP_BIND_ADDRESS_NO_PORT, 1)
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect((host, port))
    return s


@dataclass
class Crowd:
    """Crowd is a set of abusive connections, closed together (``close``)."""

    sockets: list[socket.socket] = field(default_factory=list)

    def close(self) -> None:
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.close()
        self.sockets.clear()

    def alive(self) -> int:
        """How many the broker has not closed (a read would not see the end of the stream)."""
        n = 0
        for s in self.sockets:
            try:
                s.setblocking(False)
                data = s.recv(1, socket.MSG_PEEK)
                if data:
                    n += 1
            except BlockingIOError:
                n += 1
            except OSError:
                pass
        return n


def open_held(host: str, port: int, n: int, source: str = "127.0.0.2", first: bytes = b"") -> Crowd:
    """``n`` connections that send ``first`` (nothing by default) and then stay silent."""
    crowd = Crowd()
    try:
        for _ in range(n):
            s = _connect(host, port, source, 10.0)
            if first:
                s.sendall(first)
            crowd.sockets.append(s)
    except BaseException:
        crowd.close()
        raise
    return crowd


def settle(host: str, port: int, source: str = "127.0.0.10") -> None:
    """Return once the broker has taken every connection opened before: a new one's ApiVersions
    is answered only after those ahead of it in the listen backlog were accepted."""
    with _connect(host, port, source, 60.0) as s:
        s.sendall(api_versions_request())
        size = struct.unpack(">i", _read(s, 4))[0]
        _read(s, size)


def answered_in(host: str, port: int, n: int, source: str = "127.0.0.1") -> float:
    """Open ``n`` connections from ``source`` at once, each asking for its ApiVersions; the
    seconds until the last is answered (each must be, none closed)."""
    started = time.monotonic()
    crowd = open_held(host, port, n, source=source, first=api_versions_request())
    try:
        for s in crowd.sockets:
            s.settimeout(15)
            assert len(s.recv(4)) == 4
        return time.monotonic() - started
    finally:
        crowd.close()


def open_stalled(host: str, port: int, n: int, source: str = "127.0.0.3") -> Crowd:
    """``n`` connections that each send the first 6 bytes of a frame (its size, 64 KiB, and two
    bytes of it) and stall: the shape of issue 24's measurement."""
    return open_held(host, port, n, source, struct.pack(">i", 65_536) + b"\x00\x12")


def open_claiming(
    host: str, port: int, n: int, claim: int, send: int, source: str = "127.0.0.4"
) -> Crowd:
    """``n`` connections whose frame claims ``claim`` bytes and that send ``send`` of them."""
    return open_held(host, port, n, source, struct.pack(">i", claim) + os.urandom(send))


def random_after_handshake(host: str, port: int, n: int, source: str = "127.0.0.5") -> int:
    """``n`` clients that send a valid ApiVersions, read its answer, then send 4 KiB of random
    bytes; how many of them the broker closed (within 5 s each)."""
    closed = 0
    for _ in range(n):
        with _connect(host, port, source, 5.0) as s:
            s.sendall(api_versions_request())
            size = struct.unpack(">i", _read(s, 4))[0]
            _read(s, size)
            # Random bytes: a size past socket.request.max.bytes, or a frame that does not
            # decode, or (rarely) a frame it waits for: the broker closes or waits.
            with contextlib.suppress(OSError):
                s.sendall(os.urandom(4096))
            try:
                while s.recv(65536):
                    pass
                closed += 1
            except (TimeoutError, OSError):
                pass
    return closed


def _read(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return bytes(buf)


class Flood:
    """Flood pipelines ApiVersions requests on ``connections`` connections, ``depth`` in
    flight on each, reading the answers, in a thread, until ``stop``; ``answered`` counts the
    answers. ``read=False`` never reads them (a client that sends and does not listen)."""

    def __init__(
        self,
        host: str,
        port: int,
        connections: int = 4,
        depth: int = 64,
        read: bool = True,
        source: str = "127.0.0.6",
    ) -> None:
        self.host, self.port, self.depth, self.read = host, port, depth, read
        self.socks = [_connect(host, port, source, 10.0) for _ in range(connections)]
        for s in self.socks:
            s.setblocking(False)
        self.answered = 0
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._burst = api_versions_request() * depth
        self.started = 0.0
        self.elapsed = 0.0

    def __enter__(self) -> Flood:
        self.started = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._stop.is_set():
            self._stop.set()
            self._thread.join(10)
            self.elapsed = time.perf_counter() - self.started
        for s in self.socks:
            with contextlib.suppress(OSError):
                s.close()

    def _run(self) -> None:
        # Per connection: the answers owed, what is left of the burst being sent, what was
        # read of the answers. poll, not select: the descriptors may be past 1,024.
        by_fd = {s.fileno(): s for s in self.socks}
        pending = {s: bytearray() for s in self.socks}
        owed = dict.fromkeys(self.socks, 0)
        outgoing = {s: b"" for s in self.socks}
        poller = select.poll()
        while not self._stop.is_set():
            for s in self.socks:
                mask = select.POLLIN if self.read else 0
                if outgoing[s] or owed[s] < self.depth // 2:
                    mask |= select.POLLOUT
                poller.register(s, mask)
            events = poller.poll(50)
            for fd, event in events:
                s = by_fd[fd]
                if event & select.POLLOUT:
                    if not outgoing[s]:
                        outgoing[s] = self._burst
                        owed[s] += self.depth
                    try:
                        n = s.send(outgoing[s])
                    except BlockingIOError:
                        n = 0
                    except OSError:
                        return
                    outgoing[s] = outgoing[s][n:]
                    self.sent += n
                if event & (select.POLLIN | select.POLLHUP | select.POLLERR):
                    try:
                        data = s.recv(1 << 20)
                    except BlockingIOError:
                        continue
                    except OSError:
                        return
                    if not data:
                        return
                    buf = pending[s]
                    buf += data
                    i = 0
                    while len(buf) - i >= 4:
                        size = struct.unpack_from(">i", buf, i)[0]
                        if len(buf) - i - 4 < size:
                            break
                        i += 4 + size
                        owed[s] -= 1
                        self.answered += 1
                    del buf[:i]


class FloodProcess:
    """FloodProcess runs a :class:`Flood` in a child process, so that its Python loop does not
    share this process's interpreter lock with the client being timed. ``answered`` and
    ``elapsed`` are its figures once stopped."""

    def __init__(
        self,
        host: str,
        port: int,
        connections: int = 4,
        depth: int = 64,
        cpus: set[int] | None = None,
    ) -> None:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "support.abuse",
                host,
                str(port),
                str(connections),
                str(depth),
                ",".join(map(str, sorted(cpus or ()))),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != b"flooding":
            raise RuntimeError("the flood did not start")
        self.answered = 0
        self.elapsed = 0.0

    def __enter__(self) -> FloodProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.proc.poll() is None:
            out, _ = self.proc.communicate(b"", timeout=30)
            answered, elapsed = out.split()
            self.answered, self.elapsed = int(answered), float(elapsed)


def _flood_main(argv: list[str]) -> None:
    host, port, connections, depth = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    # A flooder runs on a machine of its own in the world. Here it runs on the CPUs it is
    # given, only when they would be idle (SCHED_IDLE): as an ordinary process, even at nice
    # 19, it held a core for the scheduler's slice (3 ms) before the client being timed could
    # run there, which timed this machine, not the broker.
    if len(argv) > 4 and argv[4]:
        os.sched_setaffinity(0, {int(c) for c in argv[4].split(",")})
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    with Flood(host, port, connections, depth) as flood:
        print("flooding", flush=True)
        sys.stdin.read()  # until the parent closes it
    print(flood.answered, flood.elapsed, flush=True)


def quantile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[int(q * 100) - 1]


class Probe:
    """Probe is a real client beside the abusers: confluent-kafka's producer (acks=all, one
    message at a time, each flushed) and consumer (assigned the partition, reading what the
    producer writes), and a Fetch v12 request on a connection of its own. ``run(n)`` times
    ``n`` messages: the produce latency (produce to delivery), the end-to-end latency (produce
    to the consumer's poll returning it) and the fetch latency (a Fetch of the partition's first
    record, request to response), in seconds."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka import Consumer, Producer, TopicPartition
        from confluent_kafka.admin import AdminClient, NewTopic

        self.topic = f"probe-{uuid.uuid4().hex[:8]}"
        self.wire_topic = f"{self.topic}-wire"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        topics = [NewTopic(self.topic, 1, 1), NewTopic(self.wire_topic, 1, 1)]
        for f in admin.create_topics(topics).values():
            f.result(30)
        self.producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"probe-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 100,
                "fetch.error.backoff.ms": 10,
            }
        )
        self.consumer.assign([TopicPartition(self.topic, 0, 0)])
        host, port = bootstrap.rsplit(":", 1)
        self.fetcher = socket.create_connection((host, int(port)), timeout=30)
        self.fetcher.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._fetch = protocol.encode_request(
            int(protocol.ApiKey.FETCH),
            12,
            7,
            "probe-fetch",
            {
                "max_wait_ms": 0,
                "min_bytes": 1,
                "max_bytes": 1 << 20,
                "topics": [
                    {
                        "topic": self.topic,
                        "partitions": [
                            {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 4096}
                        ],
                    }
                ],
            },
        )
        self.producer_wire = socket.create_connection((host, int(port)), timeout=30)
        self.producer_wire.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.run(20)  # connections up, metadata known
        self.run_wire(20)

    def produce_once(self) -> float:
        """One Produce v9, acks=all, of one record on a connection of its own, request to
        response: the broker's produce latency without a client's threads."""
        batch = encode_batch([(0, int(time.time() * 1000), None, b"wire")])
        request = protocol.encode_request(
            int(protocol.ApiKey.PRODUCE),
            9,
            8,
            "probe-produce",
            {
                "acks": -1,
                "timeout_ms": 30_000,
                "topic_data": [
                    {"name": self.wire_topic, "partition_data": [{"index": 0, "records": batch}]}
                ],
            },
        )
        started = time.perf_counter()
        self.producer_wire.sendall(request)
        size = struct.unpack(">i", _read(self.producer_wire, 4))[0]
        _read(self.producer_wire, size)
        return time.perf_counter() - started

    def run_wire(self, n: int) -> list[float]:
        """``n`` wire produce latencies (``produce_once``), in seconds."""
        return [self.produce_once() for _ in range(n)]

    def fetch_once(self) -> float:
        started = time.perf_counter()
        self.fetcher.sendall(self._fetch)
        size = struct.unpack(">i", _read(self.fetcher, 4))[0]
        _read(self.fetcher, size)
        return time.perf_counter() - started

    def run(self, n: int) -> tuple[list[float], list[float], list[float]]:
        produce: list[float] = []
        e2e: list[float] = []
        fetch: list[float] = []
        for _ in range(n):
            started = time.perf_counter()
            self.producer.produce(self.topic, struct.pack(">d", started))
            self.producer.flush(30)
            produce.append(time.perf_counter() - started)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                m = self.consumer.poll(1.0)
                if m is not None and m.error() is None:
                    e2e.append(time.perf_counter() - struct.unpack(">d", m.value())[0])
                    break
            fetch.append(self.fetch_once())
        return produce, e2e, fetch

    def close(self) -> None:
        self.producer_wire.close()
        self.consumer.close()
        self.fetcher.close()


@contextlib.contextmanager
def probe(bootstrap: str) -> Iterator[Probe]:
    p = Probe(bootstrap)
    try:
        yield p
    finally:
        p.close()


if __name__ == "__main__":
    _flood_main(sys.argv[1:])
