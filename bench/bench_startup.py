"""Start-up and idle memory: kgroup's broker beside Apache Kafka and tansu.

Each broker is started ``KGROUP_BENCH_STARTUP_ROUNDS`` (3) times on a new, empty data folder
(bench/servers.py: kgroup's on disk, Apache Kafka one KRaft node on disk with Kafka's JVM flags
and a heap of ``KGROUP_BENCH_KAFKA_HEAP`` (1g, -Xmx and -Xms), tansu in memory), one at a time:

- start-up: from starting the broker's process until it first answers an ApiVersions request
  on its listener (polled every 10 ms). Apache Kafka's storage is formatted first (``kafka-
  storage format``, a JVM of its own, as an operator does once), outside the clock; kgroup's
  and tansu's need nothing before they start;
- idle memory: the broker's resident memory (VmRSS from /proc/<pid>/status) once it answers,
  and again ``KGROUP_BENCH_IDLE_SECONDS`` (2) later, nothing asked of it meanwhile.

Memory under load is bench_broker.py's (its peak while producing and consuming). The summary
at the end prints the medians side by side, kgroup's ratio to each (above 1: kgroup is
ahead), and the load average.

Run: ``.venv/bin/python -m pytest bench/bench_startup.py -o python_files='bench_*.py'
-p no:cacheprovider --benchmark-only`` (bench/README.md).
"""

from __future__ import annotations

import os
import statistics
import time

import pytest

from bench import servers
from bench.report import SERVERS, side_by_side, summary

ROUNDS = int(os.environ.get("KGROUP_BENCH_STARTUP_ROUNDS", 3))
IDLE_SECONDS = float(os.environ.get("KGROUP_BENCH_IDLE_SECONDS", 2))

_samples: dict[str, dict[str, list[float]]] = {}


@pytest.mark.parametrize("name", SERVERS)
def test_startup(benchmark, name: str) -> None:
    benchmark.group = f"startup: {ROUNDS} starts until ApiVersions is answered"
    got = _samples.setdefault(name, {})

    def run() -> None:
        for _ in range(ROUNDS):
            with servers.start(name) as s:
                got.setdefault("start-up until ApiVersions s", []).append(s.startup_s)
                got.setdefault("RSS when answering MB", []).append(s.rss_mb())
                time.sleep(IDLE_SECONDS)
                got.setdefault(f"RSS idle {IDLE_SECONDS:g} s later MB", []).append(s.rss_mb())

    benchmark.pedantic(run, rounds=1, iterations=1)


@summary("startup: kgroup vs Apache Kafka vs tansu, until the first ApiVersions answer")
def _summary() -> list[str]:
    if not _samples:
        return []
    medians = {n: {w: statistics.median(v) for w, v in got.items()} for n, got in _samples.items()}
    lines = [f"median of {ROUNDS} starts on an empty data folder; lower is better"]
    lines += side_by_side(medians, lambda what: True)
    for n, got in _samples.items():
        starts = ", ".join(f"{x:.2f}" for x in got.get("start-up until ApiVersions s", []))
        lines.append(f"  {n}: every start-up, s: {starts}")
    return lines
