"""Shared benchmark plumbing: every benchmark records how many items one call handles
(`benchmark.extra_info["items"]`) and a group; at the end a table prints items/s and each
case's ratio to the group's baseline (`extra_info["baseline"] = True`), then the side-by-side
summaries that modules registered with bench.report.summary (every broker's figures, kgroup's
ratios, the load average)."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator

import pytest

from bench import report, servers
from bench.report import SERVERS
from bench.servers import Server

# numpy's OpenBLAS starts a worker thread that spins for a while after any BLAS call, taking
# a core from the two this machine has. No benchmark here uses BLAS: keep it to one thread.
# (Set before anything imports numpy.)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    _throughput(terminalreporter, config)
    for title, lines in ((t, fn()) for t, fn in report.SUMMARIES.items()):
        if lines:
            terminalreporter.write_sep("=", title)
            for line in lines:
                terminalreporter.write_line(line)


def _throughput(terminalreporter, config) -> None:
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    groups: dict[str, list] = defaultdict(list)
    for b in session.benchmarks:
        if "items" in b.extra_info:
            groups[b.group or ""].append(b)
    if not groups:
        return
    tr = terminalreporter
    tr.write_sep("=", "throughput (best round) and ratios")
    for group, benches in sorted(groups.items()):
        base = next((b for b in benches if b.extra_info.get("baseline")), None)
        base_rate = base.extra_info["items"] / base.stats.min if base else None
        tr.write_line(f"[{group}]")
        for b in sorted(benches, key=lambda b: b.stats.min / b.extra_info["items"]):
            rate = b.extra_info["items"] / b.stats.min
            ratio = f"{rate / base_rate:8.2f}x" if base_rate else ""
            mark = "  (baseline)" if b is base else ""
            tr.write_line(f"  {b.name:<58} {rate / 1e6:10.2f} M/s {ratio}{mark}")


# The brokers compared side by side (bench_broker, bench_groups): one at a time, each for every
# test of a module before the next starts (a module-scoped parameter: pytest orders the tests by
# it). kgroup's broker and Apache Kafka get the module's BROKER_CONFIG (Kafka's names), if any;
# tansu has no settings to take.


@pytest.fixture(scope="module", params=SERVERS)
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    with servers.start(request.param, getattr(request.module, "BROKER_CONFIG", None)) as s:
        yield s
