"""KIP-848's consumer group protocol beside the classic one, on kgroup's broker beside Apache
Kafka 4.4: the same confluent-kafka consumers and settings, one run (issue 21's benchmarks).

The brokers run one after the other (every test of this module on one, then the next), each a
process of its own on 127.0.0.1 (bench/servers.py), each in two variants: with Kafka's default
``group.consumer.assignment.interval.ms`` (``kgroup``, ``kafka``: target assignments batched,
recomputed at most once per 1000 ms, Kafka 4.3+, KIP-1263), and with that interval at 0
(``kgroup-ai0``, ``kafka-ai0``: a new target at every heartbeat that needs one). Each kgroup
variant is compared with Kafka's of the same interval. All get BROKER_CONFIG, Kafka's
defaults but:

- ``group.initial.rebalance.delay.ms=0`` (``KGROUP_BENCH_848_INITIAL_DELAY_MS``): a new classic
  group's first rebalance is not held back 3 s (as bench_groups). With no delay the classic
  group's time to be assigned is a race on either broker (bench/README.md, "The classic
  assignment figure"); a short delay (100 ms) makes both form one generation;
- ``group.consumer.heartbeat.interval.ms=500`` and ``group.consumer.min.heartbeat.interval.ms=500``
  (defaults 5000 and 5000): the consumer protocol's members heartbeat as often as the classic
  members here do (``heartbeat.interval.ms=500``), so that the protocols are compared at one
  heartbeat interval (and a round takes seconds, not tens of seconds);
- ``group.consumer.min.session.timeout.ms=6000`` and ``group.consumer.session.timeout.ms=6000``
  (defaults 45000): a consumer-protocol member is removed after as long as a classic one
  (``session.timeout.ms=6000``).

The consumers are confluent-kafka's (librdkafka 2.16, which speaks both protocols), every one in
this process, each created, subscribed and polled (``poll(0.1)``) by a thread of its
own (a group's first members are all created before the first subscribes): classic with
``partition.assignment.strategy=cooperative-sticky``, ``heartbeat.interval.ms=500``,
``session.timeout.ms=6000``; consumer with
``group.protocol=consumer`` (the broker's default assignor, ``uniform``); both with
``max.poll.interval.ms=6000`` (the consumer protocol's rebalance timeout) and no auto commit,
on a topic of 100 partitions. Their assignments are tracked from their on_assign, on_revoke
and on_lost callbacks (incremental in both protocols); a group is *assigned* once its live
members own every partition exactly once, each its fair share (100/n rounded down or up, where
both cooperative-sticky and uniform settle). For each broker and protocol:

1. assignment: groups of 10, 50 and 100 consumers; the time until the group is assigned,
   counted from the moment the last consumer subscribed (and from the first): all are created
   first and then subscribed one after the other, within milliseconds, so that the figure does
   not depend on how fast each machine creates a hundred consumers beside its broker;
2. join and leave: a stable group of 10 consumes what a producer in this process writes
   continuously (a process of its own, ``KGROUP_BENCH_848_RATE`` records/s, 1000, round-robin
   over the partitions);
   an 11th member joins, then (once all 11 are assigned) member 0 close()s. For each event,
   each other member's *stall* is its largest gap between records from the event
   until 2 s after the group is assigned again, less its normal largest gap (the 3 s before
   the event); the figure is the worst other member's stall, in ms, and beside it the time
   from the event until the group is assigned again;
3. slow consumer: in the same group (10 members) member 1 stops polling (its thread sleeps)
   for max.poll.interval.ms and 8 s more while the others keep reading; librdkafka leaves the
   group for it when max.poll.interval.ms passes. The others' stall, as in 2, from its last
   poll until 2 s after the other nine own every partition, and the time from the end of its
   max.poll.interval.ms until they do.

Targets (issue 21): with the consumer protocol a group of 100 assigned within one heartbeat
interval plus 100 ms of its last consumer's start; the other members' stall 0 ms (reported as
met when within one poll timeout, 100 ms: a gap the harness itself makes on a busy machine);
kgroup at least as fast as Apache Kafka (both configurations) on each figure.

Run: ``make bench-848`` or ``.venv/bin/python -m pytest bench/bench_consumer_protocol.py -o
python_files='bench_*.py' -p no:cacheprovider --benchmark-only`` (bench/README.md). Settings:
``KGROUP_BENCH_SERVERS`` (kgroup and kafka; each -ai0 variant runs with its broker);
``KGROUP_BENCH_848_SIZES`` (10,50,100); ``KGROUP_BENCH_848_ROUNDS`` (2) rounds of each figure;
``KGROUP_BENCH_848_PROTOCOLS`` (classic,consumer); ``KGROUP_BENCH_848_RATE`` (1000);
``KGROUP_BENCH_848_HEARTBEAT_MS`` (500): the heartbeat interval of both protocols (5000 is
Kafka's default for the consumer protocol, 3000 librdkafka's for the classic one);
``KGROUP_BENCH_848_INITIAL_DELAY_MS`` (0): both brokers' ``group.initial.rebalance.delay.ms``;
``KGROUP_BENCH_PROFILE=<folder>``: a py-spy flame graph of kgroup's broker while each group of
the largest size is assigned.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from bench import servers
from bench.report import SERVERS, behind, side_by_side, summary
from bench.servers import Server

PARTITIONS = 100
SIZES = [int(n) for n in os.environ.get("KGROUP_BENCH_848_SIZES", "10,50,100").split(",")]
ROUNDS = int(os.environ.get("KGROUP_BENCH_848_ROUNDS", 2))
PROTOCOLS = os.environ.get("KGROUP_BENCH_848_PROTOCOLS", "classic,consumer").split(",")
RATE = int(os.environ.get("KGROUP_BENCH_848_RATE", 1000))
PROFILE = os.environ.get("KGROUP_BENCH_PROFILE")
HEARTBEAT_INTERVAL_MS = int(os.environ.get("KGROUP_BENCH_848_HEARTBEAT_MS", 500))
INITIAL_DELAY_MS = int(os.environ.get("KGROUP_BENCH_848_INITIAL_DELAY_MS", 0))
MAX_POLL_INTERVAL_MS = 6000
POLL_TIMEOUT = 0.1
BASELINE = 3.0  # seconds of normal consumption before each event
AFTER = 2.0  # seconds after the group is assigned again that still count as the event's
SLOW_EXTRA = 8.0  # how long past max.poll.interval.ms the slow member stays away
SETTLE_TIMEOUT = 60.0
BROKER_CONFIG = {
    "group.initial.rebalance.delay.ms": INITIAL_DELAY_MS,
    "group.consumer.heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
    "group.consumer.min.heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
    "group.consumer.session.timeout.ms": 6000,
    "group.consumer.min.session.timeout.ms": 6000,
}
#: The servers of this module: kgroup and Apache Kafka with the default assignment interval,
#: and both computing every target at once.
SERVER_CONFIGS: dict[str, dict[str, Any]] = {
    "kgroup": BROKER_CONFIG,
    "kgroup-ai0": {**BROKER_CONFIG, "group.consumer.assignment.interval.ms": 0},
    "kafka": BROKER_CONFIG,
    "kafka-ai0": {**BROKER_CONFIG, "group.consumer.assignment.interval.ms": 0},
}
#: PAIRS are the variants compared: each kgroup with the Kafka of the same interval.
PAIRS = [("kgroup", "kafka"), ("kgroup-ai0", "kafka-ai0")]
NAMES = [n for n in SERVER_CONFIGS if n.split("-")[0] in SERVERS]
CONSUMER = {
    "enable.auto.commit": False,
    "max.poll.interval.ms": MAX_POLL_INTERVAL_MS,
}
PROTOCOL_CONSUMER = {
    "classic": {
        "partition.assignment.strategy": "cooperative-sticky",
        "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
        "session.timeout.ms": 6000,
    },
    "consumer": {"group.protocol": "consumer"},
}
GROUP = "consumer protocol"

# Figures by server, then by name: a list of samples (one per round).
_results: dict[str, dict[str, list[float]]] = {}


@pytest.fixture(scope="module", params=NAMES)
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    """This module's brokers, one at a time (bench/conftest.py's fixture, with the -ai0
    variants)."""
    name = request.param
    with servers.start(name.split("-")[0], SERVER_CONFIGS[name]) as s:
        s.name = name
        yield s


def _record(server: Server, what: str, value: float) -> None:
    _results.setdefault(server.name, {}).setdefault(what, []).append(value)


def _topic(server: Server) -> str:
    """The server's topic of ``PARTITIONS`` partitions, created once; a group of one of each
    protocol assigned and closed on it before anything is timed (Apache Kafka creates
    __consumer_offsets on the first group's FindCoordinator)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    if "848" not in server.topics:
        name = f"bench-848-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": server.bootstrap})
        admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(30)
        server.topics["848"] = name
        for protocol in PROTOCOLS:
            with _group(server, name, protocol, 1) as warm:
                warm.wait_settled()
    return server.topics["848"]


@contextlib.contextmanager
def _group(server: Server, topic: str, protocol: str, n: int) -> Iterator[Members]:
    g = Members(server, topic, protocol)
    try:
        g.start(n)
        yield g
    finally:
        g.close()


class Members:
    """Members is confluent-kafka consumers of one new group, of one protocol, each created
    and subscribed by ``start`` or ``join`` and then polled by a thread of its own, which
    notes when each record arrived (``received``).

    Their assignments are tracked from the rebalance callbacks; ``settled_at`` is the first
    moment (time.monotonic) at which the live members own every partition exactly once, each
    its fair share, or None while they do not. Everything shared is guarded by ``cond``."""

    def __init__(self, server: Server, topic: str, protocol: str) -> None:
        self.server, self.topic, self.protocol = server, topic, protocol
        self.conf = {
            "bootstrap.servers": server.bootstrap,
            "group.id": f"bench-848-{uuid.uuid4().hex[:12]}",
            **CONSUMER,
            **PROTOCOL_CONSUMER[protocol],
        }
        self.cond = threading.Condition()
        self.owned: list[set[int]] = []
        self.live: set[int] = set()
        self.received: list[list[float]] = []
        self.settled_at: float | None = None
        self.stop = threading.Event()
        self.leaving: list[threading.Event] = []
        self.sleeping: dict[int, float] = {}  # member -> seconds it will not poll
        self.last_poll: list[float] = []
        self.threads: list[threading.Thread] = []
        self.first = self.last = 0.0

    def start(self, n: int) -> None:
        """``n`` members: all created first, then all subscribed, so that the group starts
        within milliseconds on every broker. (Creating a consumer takes milliseconds of CPU,
        and more beside a busy broker: subscribing each as it is created would stretch the
        start over as long as creating a hundred takes on that machine, and a figure counted
        from the last start would favour the broker that leaves the clients less CPU.)"""
        created = [self._create() for _ in range(n)]
        self.first = time.monotonic()
        for i, c in created:
            self._subscribe(i, c)
        self.last = time.monotonic()

    def join(self) -> int:
        """A new member, created, subscribed and polled; its index."""
        i, c = self._create()
        self._subscribe(i, c)
        return i

    def _create(self) -> tuple[int, Any]:
        """A new member's consumer, not yet subscribed, and its index."""
        from confluent_kafka import Consumer

        with self.cond:
            i = len(self.owned)
            self.owned.append(set())
            self.received.append([])
            self.leaving.append(threading.Event())
            self.last_poll.append(time.monotonic())
            self.live.add(i)
            self.settled_at = None
        return i, Consumer({**self.conf, "client.id": f"bench-{i}"})

    def _subscribe(self, i: int, c: Any) -> None:
        c.subscribe(
            [self.topic],
            on_assign=lambda _c, ps: self._assigned(i, ps),
            on_revoke=lambda _c, ps: self._revoked(i, ps),
            on_lost=lambda _c, ps: self._revoked(i, ps),
        )
        t = threading.Thread(target=self._run, args=(i, c), daemon=True)
        t.start()
        self.threads.append(t)

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
                    f"{self.server.name} {self.protocol}: {len(self.live)} members not "
                    f"assigned after {SETTLE_TIMEOUT} s; partitions owned per member: {counts}"
                )
            assert self.settled_at is not None
            return self.settled_at

    def _run(self, i: int, c: Any) -> None:
        received = self.received[i]
        while not self.stop.is_set() and not self.leaving[i].is_set():
            pause = self.sleeping.pop(i, 0.0)
            if pause:
                self.stop.wait(pause)
                continue
            self.last_poll[i] = time.monotonic()
            m = c.poll(POLL_TIMEOUT)
            if m is not None and m.error() is None:
                received.append(time.monotonic())
        c.close()

    def leave(self, i: int) -> float:
        """Member ``i`` close()s, in its own thread; when it was told to."""
        with self.cond:
            self.live.discard(i)
            self.settled_at = None
            self._check()
        at = time.monotonic()
        self.leaving[i].set()
        return at

    def sleep(self, i: int, seconds: float) -> float:
        """Member ``i`` stops polling for ``seconds`` once its poll returns; its last poll
        (time.monotonic). It counts as gone from the group from then on: its partitions are
        the others' to take over."""
        self.sleeping[i] = seconds
        while i in self.sleeping:
            time.sleep(0.005)
        with self.cond:
            self.live.discard(i)
            self.settled_at = None
            self._check()
        return self.last_poll[i]

    def stall_ms(self, members: list[int], event: float, end: float) -> float:
        """The worst of ``members``' stalls in ms: its largest gap between records
        from ``event`` to ``end``, less its largest in the ``BASELINE`` seconds before."""
        worst = 0.0
        for i in members:
            normal = _largest_gap(self.received[i], event - BASELINE, event)
            worst = max(worst, _largest_gap(self.received[i], event, end) - normal)
        return worst * 1e3

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)


def _largest_gap(times: list[float], t0: float, t1: float) -> float:
    """The largest gap in [t0, t1] between the sorted arrival ``times``, the window's ends
    counting as arrivals only for the gap up to the first arrival after t0 (from the last one
    before) and from the last arrival to t1."""
    lo = bisect.bisect_right(times, t0)
    hi = bisect.bisect_right(times, t1)
    points = ([times[lo - 1]] if lo else [t0]) + times[lo:hi] + [t1]
    return max(b - a for a, b in itertools.pairwise(points))


_PRODUCER = """
import sys, time
from confluent_kafka import Producer

bootstrap, topic, rate, partitions = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
n, start = 0, time.monotonic()
while sys.stdin.readable():
    due = int((time.monotonic() - start) * rate)
    while n < due:
        p.produce(topic, b"x" * 100, partition=n % partitions)
        n += 1
    p.poll(0)
    time.sleep(0.005)
"""


@contextlib.contextmanager
def _producing(server: Server, topic: str) -> Iterator[None]:
    """A producer writing ``RATE`` records a second, round-robin over the topic's partitions,
    in a process of its own (not competing for this one's GIL) while the block runs."""
    argv = [sys.executable, "-c", _PRODUCER, server.bootstrap, topic, str(RATE), str(PARTITIONS)]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE)
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def _profiled(server: Server, what: str) -> Iterator[None]:
    """With KGROUP_BENCH_PROFILE set, py-spy records kgroup's broker meanwhile."""
    if not PROFILE or not server.name.startswith("kgroup"):
        yield
        return
    os.makedirs(PROFILE, exist_ok=True)
    out = os.path.join(PROFILE, f"{server.name}-{what}.svg")
    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    proc = subprocess.Popen(
        [spy, "record", "-p", str(server.proc.pid), "-o", out, "--nonblocking", "-r", "200"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        proc.send_signal(2)  # SIGINT: py-spy writes what it has
        proc.wait(60)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("members", SIZES)
def test_assignment(benchmark, server: Server, members: int, protocol: str) -> None:
    benchmark.group = f"{GROUP}: {members} consumers, first subscribed until all assigned"
    topic = _topic(server)
    groups: list[Members] = []

    def run() -> None:
        g = Members(server, topic, protocol)
        groups.append(g)
        try:
            with _profiled(server, f"assign-{protocol}-{members}-{len(groups)}"):
                g.start(members)
                settled = g.wait_settled()
        finally:
            g.close()
        _record(server, f"{protocol}: assigned {members}, from last s", settled - g.last)
        _record(server, f"{protocol}: assigned {members}, from first s", settled - g.first)
        _record(server, f"{protocol}: subscribed {members}, first to last s", g.last - g.first)

    benchmark.pedantic(run, rounds=ROUNDS, iterations=1)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_join_leave_slow(benchmark, server: Server, protocol: str) -> None:
    """One stable group of 10 under continuous production: an 11th joins, member 0 leaves,
    member 1 stops polling past max.poll.interval.ms; the others' stalls."""
    benchmark.group = f"{GROUP}: stalls of a group of 10 (join, leave, slow member)"
    topic = _topic(server)

    def run() -> None:
        with _producing(server, topic), _group(server, topic, protocol, 10) as g:
            g.wait_settled()
            time.sleep(BASELINE + 1)

            others = sorted(g.live)
            event = time.monotonic()
            g.join()
            settled = g.wait_settled()
            time.sleep(AFTER)
            _record(
                server,
                f"{protocol}: join, others' stall ms",
                g.stall_ms(others, event, settled + AFTER),
            )
            _record(server, f"{protocol}: join, assigned again s", settled - event)
            time.sleep(BASELINE - AFTER)

            event = g.leave(0)
            others = sorted(g.live)
            settled = g.wait_settled()
            time.sleep(AFTER)
            _record(
                server,
                f"{protocol}: leave, others' stall ms",
                g.stall_ms(others, event, settled + AFTER),
            )
            _record(server, f"{protocol}: leave, assigned again s", settled - event)
            time.sleep(BASELINE - AFTER)

            event = g.sleep(1, MAX_POLL_INTERVAL_MS / 1e3 + SLOW_EXTRA)
            others = sorted(g.live)
            settled = g.wait_settled()
            time.sleep(AFTER)
            _record(
                server,
                f"{protocol}: slow member, others' stall ms",
                g.stall_ms(others, event, settled + AFTER),
            )
            _record(
                server,
                f"{protocol}: slow member, taken over after max.poll s",
                settled - event - MAX_POLL_INTERVAL_MS / 1e3,
            )

    benchmark.pedantic(run, rounds=ROUNDS, iterations=1)


def _median(v: list[float] | None) -> float:
    return statistics.median(v) if v else float("nan")


def _compared(what: str) -> bool:
    return "subscribed" not in what


def _lower_is_better(what: str) -> bool:
    return True  # every figure here is a time


def _behind(medians: dict[str, dict[str, float]], mine: str, other: str) -> list[str] | None:
    """The figures on which the kgroup variant ``mine`` is behind ``other``, stalls within the
    noise floor (one poll timeout) counting as 0."""

    def floor(what: str, v: float) -> float:
        return 0.0 if "stall" in what and v <= POLL_TIMEOUT * 1e3 else v

    clamped = {n: {w: floor(w, v) for w, v in got.items()} for n, got in medians.items()}
    pair = {"kgroup": clamped.get(mine, {}), other: clamped.get(other, {})}
    return behind(pair, other, _lower_is_better, _compared)


def _targets(medians: dict[str, dict[str, float]]) -> list[tuple[str, bool | None]]:
    # The timing targets are for targets computed at once (the -ai0 variant when measured).
    name = "kgroup-ai0" if "kgroup-ai0" in _results else "kgroup"
    k = _results.get(name, {})
    out: list[tuple[str, bool | None]] = []
    limit = HEARTBEAT_INTERVAL_MS / 1e3 + 0.1
    big = max(SIZES)
    times = k.get(f"consumer: assigned {big}, from last s")
    out.append(
        (
            f"{name}: {big} assigned within {limit:g} s of the last (worst "
            + (f"{max(times):.2f} s)" if times else "-)"),
            max(times) <= limit if times else None,
        )
    )
    for event in ("join", "leave", "slow member"):
        v = k.get(f"consumer: {event}, others' stall ms")
        out.append(
            (
                f"{name}: {event}, others' stall 0 ms (<= {POLL_TIMEOUT * 1e3:g}, worst "
                + (f"{max(v):.0f} ms)" if v else "-)"),
                max(v) <= POLL_TIMEOUT * 1e3 if v else None,
            )
        )
    for mine, other in PAIRS:
        late = _behind(medians, mine, other)
        out.append(
            (
                f"{mine} at least as fast as {other} on every figure"
                + (f" (behind on: {', '.join(late)})" if late else ""),
                None if late is None else not late,
            )
        )
    return out


@summary("consumer protocol (KIP-848) vs classic: kgroup vs Apache Kafka 4.4, confluent-kafka")
def _summary() -> list[str]:
    if not _results:
        return []
    medians = {n: {w: _median(v) for w, v in got.items()} for n, got in _results.items()}
    lines = [
        f"heartbeat interval {HEARTBEAT_INTERVAL_MS} ms (both protocols), {PARTITIONS} "
        f"partitions, max.poll.interval.ms={MAX_POLL_INTERVAL_MS}, {RATE} records/s, "
        f"group.initial.rebalance.delay.ms={INITIAL_DELAY_MS}; "
        f"-ai0: group.consumer.assignment.interval.ms=0; median of {ROUNDS} rounds "
        "(every figure a time: lower is better)",
        *side_by_side(medians, _lower_is_better, _compared, names=NAMES),
    ]
    for n, got in _results.items():
        for what, v in got.items():
            if len(v) > 1 and _compared(what):
                lines.append(f"  {n}: {what}: " + ", ".join(f"{x:.3f}" for x in v))
    verdict = {True: "met", False: "MISSED", None: "not measured"}
    for what, ok in _targets(medians):
        lines.append(f"  target: {what:<78} {verdict[ok]}")
    return lines
