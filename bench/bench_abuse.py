"""kgroup's broker under abuse (issue 24's acceptance): a real producer and consumer timed beside
abusive clients, and the broker's own memory before, during and after.

The broker runs as ``kgroup broker`` in a child process (bench/servers.py: uvloop, data on
disk), with ``socket.request.max.bytes`` 8 MiB, ``queued.max.request.bytes`` 64 MiB and
``max.connections`` 12,000. The probe (tests/support/abuse.py's ``Probe``) is confluent-kafka's
producer, acks=all, one message at a time, each flushed (the produce latency), and a consumer
assigned the partition (the end-to-end latency: produce to the consumer's poll returning it),
beside two requests on connections of their own: a Produce v9 of one record, acks=all (the wire
produce latency: the broker's, without a client's threads), and a Fetch v12 of the partition's
first record (the fetch latency). ``KGROUP_BENCH_ABUSE_SAMPLES`` (500) of each per phase, p50
and p99. The abusers run in this process but the flood, which runs in a child process of its
own (a Python loop sharing the probe's interpreter lock would time the lock, not the broker).
The phases, one after the other (the broker's descriptors are limited to 20,000 here, so the
two crowds of 10,000 take turns):

- idle: nothing else;
- held: ``KGROUP_BENCH_ABUSE_CONNECTIONS`` (10,000) connections opened and held, silent (each
  crowd is timed once the broker has accepted all of it: ``settle``);
- stalled: as many that each send the first 6 bytes of a frame and stall (issue 24's
  measurement: 2,000 of them took main at e5667d6 from 41 MB to about 1 GB);
- mixed: half as many of each, 50 frames claiming 8 MiB that send 192 KiB and stall, 200 frames
  claiming 1 GiB (past socket.request.max.bytes: closed), 50 clients sending random bytes after
  a valid ApiVersions, and a flood of pipelined ApiVersions (4 connections, 64 in flight each)
  on the broker's cores;
- flooded: the same crowds, and the flood on every core: it keeps the broker busy all the time;
- after: everyone gone, 5 s later.

The probe, the broker and the abusers of the acceptance run on machines of their own; here they
share two cores. So, on a machine of two cores or more, this process (the probe and the passive
crowds) keeps to the last core once the broker has started and the broker to the others; the
flood runs only in time its cores would be idle (SCHED_IDLE). Even so, a flood on the probe's
core (the flooded phase) makes librdkafka's threads wait for it, 2-5 ms at the p99, where the
wire probe beside them, on the same core and the same broker, sees no change: that phase's
client latencies time this machine, its wire latencies the broker.

Targets: produce and fetch p99 within 2x of the idle broker's in every phase; the broker's RSS
below the bound its configuration sets: its idle RSS + max.connections x 12 KiB (a connection's
cost is about 5.7 KiB) + queued.max.request.bytes; back near its idle RSS after (``kgroup
broker`` runs on the C library's allocator for that; ``PYTHONMALLOC=pymalloc make bench-abuse``
shows Python's). Run::

    make bench-abuse
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

from support.abuse import (
    FloodProcess,
    Probe,
    open_claiming,
    open_held,
    open_stalled,
    raise_fd_limit,
    random_after_handshake,
    rss_mb,
    settle,
)

from bench.report import load_average, summary
from bench.servers import kgroup

N = int(os.environ.get("KGROUP_BENCH_ABUSE_CONNECTIONS", 10_000))
SAMPLES = int(os.environ.get("KGROUP_BENCH_ABUSE_SAMPLES", 500))
MAX_CONNECTIONS = 12_000
QUEUED_BYTES = 64 << 20
CONFIG = {
    "socket.request.max.bytes": 8 << 20,
    "queued.max.request.bytes": QUEUED_BYTES,
    "max.connections": MAX_CONNECTIONS,
}
PER_CONNECTION = 12 * 1024

_rows: list[tuple[str, dict[str, float]]] = []
_notes: list[str] = []


def _q(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] * 1e3


def _phase(name: str, probe: Probe, pid: int, **extra: float) -> dict[str, float]:
    produce, e2e, fetch = probe.run(SAMPLES)
    wire = probe.run_wire(SAMPLES)
    row = {
        "produce p50 ms": _q(produce, 50),
        "produce p99 ms": _q(produce, 99),
        "wire produce p50 ms": _q(wire, 50),
        "wire produce p99 ms": _q(wire, 99),
        "fetch p50 ms": _q(fetch, 50),
        "fetch p99 ms": _q(fetch, 99),
        "e2e p50 ms": _q(e2e, 50),
        "e2e p99 ms": _q(e2e, 99),
        "RSS MB": rss_mb(pid),
        **extra,
    }
    _rows.append((name, row))
    return row


def test_abuse(benchmark) -> None:
    benchmark.group = "abuse"
    raise_fd_limit(N + 5000)

    def run() -> None:
        _rows.clear()
        _notes.clear()
        with (
            tempfile.TemporaryDirectory(prefix="bench-abuse-") as tmp,
            kgroup(os.path.join(tmp, "data"), CONFIG) as server,
        ):
            host, port = server.bootstrap.rsplit(":", 1)
            p = int(port)
            pid = server.proc.pid
            cpus = sorted(os.sched_getaffinity(0))
            if len(cpus) > 1:
                os.sched_setaffinity(0, {cpus[-1]})
                for task in os.listdir(f"/proc/{pid}/task"):
                    os.sched_setaffinity(int(task), set(cpus[:-1]))
            probe = Probe(server.bootstrap)
            try:
                time.sleep(1)
                probe.run(SAMPLES // 2)  # warm: the first samples time the clients' start
                idle = _phase("idle", probe, pid)
                bound = idle["RSS MB"] + (MAX_CONNECTIONS * PER_CONNECTION + QUEUED_BYTES) / 1e6
                _notes.append(
                    f"bound: idle {idle['RSS MB']:.1f} MB + {MAX_CONNECTIONS:,} x 12 KiB + "
                    f"64 MiB = {bound:.1f} MB"
                )

                started = time.perf_counter()
                held = open_held(host, p, N)
                settle(host, p)
                opened = time.perf_counter() - started
                _phase("held", probe, pid, **{"open s": opened, "alive": held.alive()})
                held.close()
                time.sleep(1)

                started = time.perf_counter()
                stalled = open_stalled(host, p, N)
                settle(host, p)
                opened = time.perf_counter() - started
                _phase("stalled", probe, pid, **{"open s": opened, "alive": stalled.alive()})
                stalled.close()
                time.sleep(1)

                crowds = [
                    open_held(host, p, N // 2, source="127.0.0.8"),
                    open_stalled(host, p, N // 2, source="127.0.0.9"),
                    open_claiming(host, p, 50, (8 << 20) - 100, 192 * 1024),
                    open_claiming(host, p, 200, 1 << 30, 10, source="127.0.0.7"),
                ]
                settle(host, p)
                # The flood on the broker's cores (their idle time), then on every core: there it
                # keeps the broker busy all the time, and shares the probe's core.
                broker_cpus = set(cpus[:-1]) or set(cpus)
                with FloodProcess(host, p, connections=4, depth=64, cpus=broker_cpus) as flood:
                    closed = random_after_handshake(host, p, 50)
                    row = _phase("mixed", probe, pid, **{"random closed": closed})
                    flood.stop()
                row["flood answers/s"] = flood.answered / max(flood.elapsed, 1e-9)
                row["huge alive"] = crowds[3].alive()
                with FloodProcess(host, p, connections=4, depth=64, cpus=set(cpus)) as flood:
                    row = _phase("flooded", probe, pid)
                    flood.stop()
                row["flood answers/s"] = flood.answered / max(flood.elapsed, 1e-9)
                for crowd in crowds:
                    crowd.close()
                time.sleep(5)
                _phase("after", probe, pid)
                peak = max(r["RSS MB"] for _, r in _rows)
                _notes.append(
                    f"peak RSS {peak:.1f} MB {'<' if peak < bound else '>='} bound {bound:.1f} MB"
                )
                after = _rows[-1][1]["RSS MB"]
                given = (peak - after) / max(peak - idle["RSS MB"], 1e-9)
                allocator = os.environ.get("PYTHONMALLOC", "malloc, kgroup broker's")
                _notes.append(
                    f"after: {after - idle['RSS MB']:+.1f} MB over idle, {given:.0%} of the rise "
                    f"given back (allocator: {allocator})"
                )
            finally:
                probe.close()
                os.sched_setaffinity(0, cpus)

    benchmark.pedantic(run, rounds=1, iterations=1)


@summary("abuse: kgroup broker (uvloop, disk) beside abusive clients, confluent-kafka probe")
def _summary() -> list[str]:
    if not _rows:
        return []
    idle = dict(_rows)["idle"]
    whats = list(dict.fromkeys(w for _, r in _rows for w in r))
    lines = [f"  {'':<18}" + "".join(f"{name:>12}" for name, _ in _rows)]
    for w in whats:
        lines.append(
            f"  {w:<18}" + "".join(f"{r[w]:>12.2f}" if w in r else f"{'':>12}" for _, r in _rows)
        )
    after = dict(_rows).get("after")
    for w in (
        "produce p50 ms",
        "produce p99 ms",
        "wire produce p99 ms",
        "fetch p50 ms",
        "fetch p99 ms",
        "e2e p99 ms",
    ):
        ratios = ", ".join(f"{name} {r[w] / idle[w]:.2f}x" for name, r in _rows if name != "idle")
        lines.append(f"  {w} vs idle: {ratios} (target: within 2x)")
        if after is not None:
            # The broker idle again at the end: a control for the machine's own noise.
            ratios = ", ".join(
                f"{name} {r[w] / after[w]:.2f}x" for name, r in _rows if name != "after"
            )
            lines.append(f"  {w} vs after (control): {ratios}")
    lines += [f"  {n}" for n in _notes]
    lines.append(f"  {N:,} connections per crowd, {SAMPLES} samples per phase; {load_average()}")
    lines.append(f"  python {sys.version.split()[0]}")
    return lines
