"""A raw group client for bench_groups: members that join, sync and heartbeat by hand, and the
heartbeat load generator, which runs in processes of its own.

Real clients heartbeat once per heartbeat.interval.ms, far below what a broker can answer. To
find how many Heartbeat requests a broker answers per second, :func:`heartbeat_load` holds
members in stable groups (one connection per member, as a real client has) and pipelines
Heartbeat requests on every member's connection as fast as the broker answers them, counting
the answers with error_code 0. It speaks through kgroup.protocol's codec; it lives here because
bench does not import from tests/.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import multiprocessing
import os
import queue
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from kgroup import errors, protocol
from kgroup.assignors import Assignment, Subscription
from kgroup.assignors.consumer_protocol import encode_assignment, encode_subscription

API_VERSIONS = 18
FIND_COORDINATOR = 10
JOIN_GROUP = 11
HEARTBEAT = 12
SYNC_GROUP = 14
GROUP_APIS = (FIND_COORDINATOR, JOIN_GROUP, HEARTBEAT, SYNC_GROUP)

MEMBER_ID_REQUIRED = errors.MemberIdRequired.code
REBALANCE_IN_PROGRESS = errors.RebalanceInProgress.code
ILLEGAL_GENERATION = errors.IllegalGeneration.code
UNKNOWN_MEMBER_ID = errors.UnknownMemberId.code
# Answers a member retries after a short pause (the coordinator is still loading or moving).
RETRIABLE = {
    errors.CoordinatorLoadInProgress.code,
    errors.CoordinatorNotAvailable.code,
    errors.NotCoordinator.code,
}

# tansu holds every JoinGroup for half the member's session timeout before answering (measured:
# 3 s at 6,000 ms, 15 s at 30,000 ms, whatever the rebalance timeout), so members ask for
# Kafka's least session timeout (group.min.session.timeout.ms): the pipelined heartbeats keep
# them alive, and a few keep-alives while other processes form their groups.
SESSION_TIMEOUT_MS = 6_000
REBALANCE_TIMEOUT_MS = 30_000
TOPIC = "heartbeat-bench"  # named in the members' subscriptions; never created


class GroupError(RuntimeError):
    """A group request answered with an error the raw client does not expect."""


def error_name(code: int) -> str:
    e = errors.error_for_code(code)
    return e.name if e is not None else str(code)


def _address(bootstrap: str) -> tuple[str, int]:
    host, _, port = bootstrap.rpartition(":")
    return host, int(port)


def negotiate(bootstrap: str) -> dict[int, int]:
    """The highest version of each group api that both kgroup's codec and the broker speak
    (ApiVersions v0, which every broker answers)."""
    with socket.create_connection(_address(bootstrap), 10) as s:
        s.sendall(protocol.encode_request(API_VERSIONS, 0, 1, "bench", {}))
        size = protocol.frame_size(_read(s, 4))
        body = protocol.decode_response(API_VERSIONS, 0, _read(s, size)).body
    if body["error_code"]:
        raise GroupError(f"ApiVersions: {error_name(body['error_code'])}")
    theirs = {k["api_key"]: (k["min_version"], k["max_version"]) for k in body["api_keys"]}
    out = {}
    for key in GROUP_APIS:
        lo, hi = protocol.API_VERSIONS[key]
        their_lo, their_hi = theirs.get(key, (0, -1))
        if min(hi, their_hi) < max(lo, their_lo):
            raise GroupError(f"no common version of {protocol.API_NAMES[key]}")
        out[key] = min(hi, their_hi)
    return out


def _read(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return bytes(buf)


class Connection(asyncio.Protocol):
    """Connection is one member's socket: requests answered in order (``request``), or, once
    ``pump`` is called, a window of Heartbeat requests kept in flight and the answers counted.
    Not thread-safe: one event loop."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiting: collections.deque[tuple[int, int, int, asyncio.Future]] = collections.deque()
        self.next_id = 1
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # Pump mode: the frame around the correlation id, what is in flight, and the counts.
        self.pumping = False  # set once, for good: every answer from then on is counted
        self.refilling = False
        self.version = 0
        self.head = self.tail = b""
        self.expect = 0
        self.in_flight = 0
        self.window = 0
        self.ok = 0
        self.errors: collections.Counter[str] = collections.Counter()
        self.ok_size = 0  # an answer of exactly this length carries error_code at ok_at
        self.ok_at = 0
        self.ok_frame = 0
        self.ok_head = self.ok_tail = b""
        self.drained: asyncio.Future[None] | None = None

    @classmethod
    async def open(cls, bootstrap: str) -> Connection:
        loop = asyncio.get_running_loop()
        host, port = _address(bootstrap)
        _, conn = await loop.create_connection(cls, host, port)
        return conn

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        err = exc or EOFError("connection closed by the broker")
        for *_, fut in self.waiting:
            if not fut.done():
                fut.set_exception(err)
        self.waiting.clear()
        if self.drained is not None and not self.drained.done():
            self.drained.set_exception(err)
        if not self.closed.done():
            self.closed.set_result(None)

    async def request(self, api_key: int, version: int, body: Mapping[str, Any]) -> Any:
        """Send one request and return its decoded body."""
        assert not self.pumping and self.transport is not None
        cid = self.next_id
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiting.append((api_key, version, cid, fut))
        self.transport.write(protocol.encode_request(api_key, version, cid, "bench", body))
        return await fut

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        pos, n = 0, len(buf)
        answered = 0
        if self.pumping:
            # Fast path: the whole frames in the buffer are exactly the answers expected (in
            # order, error_code 0, nothing optional), checked with one comparison; anything
            # else is read frame by frame below.
            k = n // self.ok_frame
            if k:
                cid, head, tail = self.expect, self.ok_head, self.ok_tail
                expected = b"".join(head + (cid + i).to_bytes(4, "big") + tail for i in range(k))
                if buf.startswith(expected):
                    pos = k * self.ok_frame
                    answered = k
                    self.ok += k
                    self.expect = cid + k
        while n - pos >= 4:
            size = int.from_bytes(buf[pos : pos + 4], "big")
            if n - pos - 4 < size:
                break
            frame = bytes(buf[pos + 4 : pos + 4 + size])
            pos += 4 + size
            if self.pumping:
                self._count(frame)
                answered += 1
            else:
                self._answer(frame)
        del buf[:pos]
        if answered:
            self.in_flight -= answered
            # Top the window up once half of it is answered: one write per half window.
            if self.in_flight <= self.window // 2:
                self._refill(self.window - self.in_flight)

    def _answer(self, frame: bytes) -> None:
        api_key, version, cid, fut = self.waiting.popleft()
        response = protocol.decode_response(api_key, version, frame)
        if response.correlation_id != cid:
            fut.set_exception(GroupError(f"correlation id {response.correlation_id} != {cid}"))
        elif not fut.done():
            fut.set_result(response.body)

    def _count(self, frame: bytes) -> None:
        cid = int.from_bytes(frame[:4], "big")
        if cid != self.expect:
            self.errors["out of order"] += 1
        self.expect = cid + 1
        if len(frame) == self.ok_size:
            code = int.from_bytes(frame[self.ok_at : self.ok_at + 2], "big", signed=True)
        else:  # tagged fields or a longer body: let the codec read it
            code = protocol.decode_response(HEARTBEAT, self.version, frame).body["error_code"]
        if code == 0:
            self.ok += 1
        else:
            self.errors[error_name(code)] += 1

    def pump(self, version: int, body: Mapping[str, Any], window: int) -> None:
        """Keep ``window`` Heartbeat requests in flight from now until ``stop``."""
        assert not self.waiting and self.transport is not None
        self.version = version
        frame = protocol.encode_request(HEARTBEAT, version, 0, "bench", body)
        self.head, self.tail = frame[:8], frame[12:]  # the correlation id is frame[8:12]
        # The answer's length when nothing optional is in it: correlation id, the flexible
        # header's empty tagged fields (v4+), throttle_time_ms (v1+), error_code, the body's
        # empty tagged fields (v4+). _count reads any other length with the codec.
        flexible = version >= 4
        self.ok_at = 4 + flexible + (4 if version >= 1 else 0)
        self.ok_size = self.ok_at + 2 + flexible
        # Such an answer with error_code 0 and no throttling, around its correlation id.
        self.ok_frame = 4 + self.ok_size
        self.ok_head = self.ok_size.to_bytes(4, "big")
        self.ok_tail = bytes(self.ok_size - 4)
        self.expect = self.next_id
        self.window = window
        self.pumping = self.refilling = True
        self._refill(window)

    def _refill(self, n: int) -> None:
        if not self.refilling:
            if self.in_flight == 0 and self.drained is not None and not self.drained.done():
                self.drained.set_result(None)
            return
        assert self.transport is not None
        cid, head, tail = self.next_id, self.head, self.tail
        self.transport.write(b"".join(head + (cid + i).to_bytes(4, "big") + tail for i in range(n)))
        self.next_id = cid + n
        self.in_flight += n

    async def stop(self) -> None:
        """Stop sending and wait for the answers still in flight."""
        self.refilling = False
        if self.in_flight:
            self.drained = asyncio.get_running_loop().create_future()
            await self.drained

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


@dataclass
class Member:
    conn: Connection
    group_id: str
    member_id: str = ""
    generation: int = -1

    def heartbeat_body(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "generation_id": self.generation,
            "member_id": self.member_id,
        }


@dataclass
class _Formation:
    """What a group's members know of each other while they form it: the size the leader saw
    in each generation and the generation each member synced into and heartbeated in."""

    size: int
    sizes: dict[int, int] = field(default_factory=dict)
    synced: dict[int, int] = field(default_factory=dict)
    beat: dict[int, int] = field(default_factory=dict)

    def complete(self, generation: int) -> bool:
        return self.sizes.get(generation) == self.size and all(
            self.synced.get(i) == generation for i in range(self.size)
        )


async def _join(m: Member, index: int, f: _Formation, v: Mapping[int, int]) -> None:
    """Join, sync and heartbeat until every member of the group is in one generation of the
    whole group and has heartbeated in it; rejoin whenever the coordinator says so."""
    subscription = encode_subscription(Subscription([TOPIC]))
    assignment = encode_assignment(Assignment([]))
    while True:
        body: dict[str, Any] = {
            "group_id": m.group_id,
            "session_timeout_ms": SESSION_TIMEOUT_MS,
            "member_id": m.member_id,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": subscription}],
        }
        if v[JOIN_GROUP] >= 1:
            body["rebalance_timeout_ms"] = REBALANCE_TIMEOUT_MS
        join = await m.conn.request(JOIN_GROUP, v[JOIN_GROUP], body)
        err = join["error_code"]
        if err == MEMBER_ID_REQUIRED:
            m.member_id = join["member_id"]
            continue
        if err == UNKNOWN_MEMBER_ID:
            m.member_id = ""
            continue
        if err in RETRIABLE or err == REBALANCE_IN_PROGRESS:
            await asyncio.sleep(0.05)
            continue
        if err:
            raise GroupError(f"JoinGroup: {error_name(err)}")
        m.member_id, m.generation = join["member_id"], join["generation_id"]
        assignments = []
        if join["leader"] == m.member_id:
            f.sizes[m.generation] = len(join["members"])
            assignments = [
                {"member_id": x["member_id"], "assignment": assignment} for x in join["members"]
            ]
        sync_body: dict[str, Any] = {
            "group_id": m.group_id,
            "generation_id": m.generation,
            "member_id": m.member_id,
            "assignments": assignments,
        }
        if v[SYNC_GROUP] >= 5:
            sync_body |= {"protocol_type": "consumer", "protocol_name": "range"}
        sync = await m.conn.request(SYNC_GROUP, v[SYNC_GROUP], sync_body)
        err = sync["error_code"]
        if err == UNKNOWN_MEMBER_ID:
            m.member_id = ""
        if err in (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID):
            continue
        if err:
            raise GroupError(f"SyncGroup: {error_name(err)}")
        f.synced[index] = m.generation
        while True:
            hb = await m.conn.request(HEARTBEAT, v[HEARTBEAT], m.heartbeat_body())
            err = hb["error_code"]
            if err == UNKNOWN_MEMBER_ID:
                m.member_id = ""
            if err in (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID):
                break
            if err:
                raise GroupError(f"Heartbeat: {error_name(err)}")
            if f.complete(m.generation):
                f.beat[index] = m.generation
                if all(f.beat.get(i) == m.generation for i in range(f.size)):
                    return
            await asyncio.sleep(0.05)


async def form_group(conns: list[Connection], v: Mapping[int, int]) -> list[Member]:
    """A new group with one member per connection, stable (every member synced into one
    generation and heartbeating); its members."""
    group_id = f"heartbeats-{uuid.uuid4().hex[:12]}"
    find = await conns[0].request(
        FIND_COORDINATOR, v[FIND_COORDINATOR], _find_body(group_id, v[FIND_COORDINATOR])
    )
    err = find["coordinators"][0]["error_code"] if v[FIND_COORDINATOR] >= 4 else find["error_code"]
    if err:
        raise GroupError(f"FindCoordinator: {error_name(err)}")
    members = [Member(c, group_id) for c in conns]
    f = _Formation(len(members))
    await asyncio.gather(*(_join(m, i, f, v) for i, m in enumerate(members)))
    return members


def _find_body(group_id: str, version: int) -> dict[str, Any]:
    if version >= 4:
        return {"key_type": 0, "coordinator_keys": [group_id]}
    return {"key": group_id, "key_type": 0} if version >= 1 else {"key": group_id}


# The generator processes -------------------------------------------------------------------


@dataclass
class LoadSettings:
    bootstrap: str
    versions: dict[int, int]
    connections: int  # per process, one member each
    group_size: int
    window: int  # Heartbeat requests in flight per connection


async def _generate(s: LoadSettings, control: Any, out: Any) -> None:
    loop = asyncio.get_running_loop()
    t = time.monotonic()
    conns = [await Connection.open(s.bootstrap) for _ in range(s.connections)]
    groups = [conns[i : i + s.group_size] for i in range(0, len(conns), s.group_size)]
    members = [
        m for g in await asyncio.gather(*(form_group(g, s.versions) for g in groups)) for m in g
    ]
    out.put(("ready", os.getpid(), time.monotonic() - t))

    # Keep every session alive until the go (other processes may still be forming groups).
    going = False

    async def keep_alive(m: Member) -> None:
        while not going:
            hb = await m.conn.request(HEARTBEAT, s.versions[HEARTBEAT], m.heartbeat_body())
            if hb["error_code"]:
                raise GroupError(f"Heartbeat while waiting: {error_name(hb['error_code'])}")
            await asyncio.sleep(0.5)

    keepers = [asyncio.create_task(keep_alive(m)) for m in members]
    t0, t1 = await loop.run_in_executor(None, control.get)
    going = True
    await asyncio.gather(*keepers)

    for m in members:
        m.conn.pump(s.versions[HEARTBEAT], m.heartbeat_body(), s.window)
    marks: list[tuple[float, int, float]] = []

    def mark() -> None:
        marks.append((time.monotonic(), sum(c.ok for c in conns), time.process_time()))

    loop.call_at(t0, mark)  # the loop's clock is time.monotonic, as is the parent's
    loop.call_at(t1, mark)
    await asyncio.sleep(max(0.0, t1 - loop.time()) + 0.05)
    await asyncio.wait_for(asyncio.gather(*(c.stop() for c in conns)), 30)
    errs: collections.Counter[str] = collections.Counter()
    for c in conns:
        errs.update(c.errors)
        c.close()
    (a, ok0, cpu0), (b, ok1, cpu1) = marks
    out.put(
        (
            "done",
            os.getpid(),
            {"ok": ok1 - ok0, "seconds": b - a, "cpu": cpu1 - cpu0, "errors": dict(errs)},
        )
    )


def _generator_main(s: LoadSettings, control: Any, out: Any) -> None:
    try:
        import uvloop

        run = uvloop.run
    except ImportError:  # pragma: no cover
        run = asyncio.run
    try:
        run(_generate(s, control, out))
    except BaseException as e:  # the parent reports it
        out.put(("error", os.getpid(), f"{type(e).__name__}: {e}"))
        raise


def cpu_seconds(pid: int) -> float:
    """The user + system CPU time of process ``pid`` (all its threads) so far, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    # After the command name: state is field 3 of stat(5), utime 14 and stime 15.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def heartbeat_load(
    bootstrap: str,
    broker_pid: int,
    *,
    processes: int,
    connections: int,
    group_size: int,
    window: int,
    warmup: float,
    duration: float,
    during: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext,
) -> dict[str, Any]:
    """Heartbeats answered per second by the broker at ``bootstrap`` under ``processes``
    generator processes of ``connections`` members each (groups of ``group_size``), and the
    CPU that the broker (process ``broker_pid``) and the generators used meanwhile; ``during``
    wraps the measured ``duration`` (a profiler, say)."""
    versions = negotiate(bootstrap)
    settings = LoadSettings(bootstrap, versions, connections, group_size, window)
    ctx = multiprocessing.get_context("spawn")  # no fork of a process full of client threads
    out = ctx.Queue()
    controls = [ctx.Queue() for _ in range(processes)]
    procs = [ctx.Process(target=_generator_main, args=(settings, c, out)) for c in controls]
    for p in procs:
        p.start()
    try:
        setup = [_expect(out, "ready", 120) for _ in procs]
        t0 = time.monotonic() + warmup
        t1 = t0 + duration
        for c in controls:
            c.put((t0, t1))
        time.sleep(max(0.0, t0 - time.monotonic()))
        cpu0, w0 = cpu_seconds(broker_pid), time.monotonic()
        with during():
            time.sleep(max(0.0, t1 - time.monotonic()))
            cpu1, w1 = cpu_seconds(broker_pid), time.monotonic()
        done = [_expect(out, "done", 60) for _ in procs]
    finally:
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join()
    errs: collections.Counter[str] = collections.Counter()
    for d in done:
        errs.update(d["errors"])
    rate = sum(d["ok"] / d["seconds"] for d in done)
    broker_cores = (cpu1 - cpu0) / (w1 - w0)
    return {
        "heartbeats/s": rate,
        "broker cores": broker_cores,
        "heartbeats/s per broker core": rate / broker_cores if broker_cores else float("nan"),
        "generator cores": [d["cpu"] / d["seconds"] for d in done],
        "errors": dict(errs),
        "members": processes * connections,
        "setup s": max(setup),
        "versions": {protocol.API_NAMES[k]: v for k, v in versions.items()},
    }


def _expect(out: Any, what: str, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            kind, pid, value = out.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError(f"no generator said {what!r} within {timeout} s") from None
        if kind == "error":
            raise GroupError(f"generator {pid}: {value}")
        if kind != what:
            raise GroupError(f"generator {pid} said {kind!r}, expected {what!r}")
        return value
