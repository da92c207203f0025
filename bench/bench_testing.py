"""kgroup.testing (issue 23): a test broker's start, its idle memory, and a suite of 200 small
tests with a fresh broker per test beside the same suite on one shared Apache Kafka 4.4.

Every broker gets kgroup.testing's test settings (``TEST_DEFAULTS``: no initial rebalance
delay, 5 partitions for the internal topics), Apache Kafka as well: Kafka's own test harness
(``TestUtils.createBrokerConfig``) sets the same. The ways compared:

- ``kit``: ``kgroup.testing.Broker()`` in this process (a thread and its event loop, memory
  storage), started again and again in a warm process (imports done, one start before the
  clock);
- ``kit, fresh``: the same in a new interpreter that times itself from its first statement, so
  ``import kgroup.testing`` and the first start's imports are counted (the interpreter's own
  start is not; the summary gives the wall time from its launch as well);
- ``kit child, disk`` and ``kit child, memory``: ``Broker(process=True)`` and
  ``Broker(process=True, storage="memory")``, a child process the kit drives over a socket;
- ``kgroup broker``: the ``kgroup broker`` command on disk (bench/servers.py's ``kgroup``);
- ``kafka``: Apache Kafka 4.4, one KRaft node on disk, Kafka's JVM flags (bench/servers.py),
  its storage formatted before the clock starts, as bench_startup.

Figures:

1. start: from creating the broker (launching its process) until it first answers an
   ApiVersions request on its listener (``KGROUP_BENCH_KIT_STARTS``, 50, starts in process;
   ``KGROUP_BENCH_KIT_FRESH_STARTS`` (10) fresh interpreters; ``KGROUP_BENCH_KIT_CHILD_STARTS``
   (10) child processes and ``kgroup broker`` starts; ``KGROUP_BENCH_KIT_KAFKA_STARTS`` (3)
   Kafka starts): median and p90, and the stop that follows (the fixture's teardown);
2. idle memory: VmRSS of the broker's process when it answers and ``KGROUP_BENCH_IDLE_SECONDS``
   (2) later; for the broker in the test process, its cost: a fresh interpreter's VmRSS after
   ``import kgroup.testing`` against after starting a Broker and idling;
3. the suite: ``KGROUP_BENCH_KIT_TESTS`` (200) tests written into a temporary folder, each
   creating a topic (AdminClient), producing 10 records (confluent-kafka Producer) and reading
   them back with a confluent-kafka Consumer in a group of its own (subscribe,
   ``auto.offset.reset=earliest``, ``session.timeout.ms=6000``, ``heartbeat.interval.ms=500``),
   run by ``python -m pytest`` in a subprocess, timed from its launch to its exit. The test file
   is the same for both: its ``bootstrap`` fixture is the ``kgroup_broker`` fixture's (a fresh
   broker per test, function scope, the kit's default storage) or the shared Kafka's, which is
   started once before the suite (its start reported apart; the suite is given with and
   without it). The per-test mean is pytest's own duration of each test (setup, call and
   teardown: the broker's start and stop included), from its JUnit XML report.

Targets (issue 23): 50 ms from start to the first answer in process, 30 MB idle, and the
per-test-broker suite faster than the shared Kafka one.

kgroup's modules are compiled to bytecode before anything is timed, as pip compiles an installed
wheel's (where ``PYTHONDONTWRITEBYTECODE`` is set and kgroup runs from its sources, every new
interpreter would compile them again). Under pytest, kgroup's modules are also rewritten for
pytest's assertions as they are imported (pytest does so for every package of a distribution
with a ``pytest11`` entry point) and the result is cached only where bytecode is written: the
suite's first setup (the first broker of the pytest process) shows what that costs.

Run (``make bench-testing``)::

    .venv/bin/python -m pytest -q bench/bench_testing.py -o python_files='bench_*.py' \\
        -p no:cacheprovider --benchmark-only

``KGROUP_BENCH_KIT_PROFILE=<folder>`` records the kgroup suite under py-spy (if installed) into
``<folder>/kit-suite.svg`` (a second run of the suite, not timed).
"""

from __future__ import annotations

import compileall
import contextlib
import importlib.metadata
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench import servers
from bench.report import load_average, summary

STARTS = int(os.environ.get("KGROUP_BENCH_KIT_STARTS", 50))
FRESH_STARTS = int(os.environ.get("KGROUP_BENCH_KIT_FRESH_STARTS", 10))
CHILD_STARTS = int(os.environ.get("KGROUP_BENCH_KIT_CHILD_STARTS", 10))
KAFKA_STARTS = int(os.environ.get("KGROUP_BENCH_KIT_KAFKA_STARTS", 3))
MEMORY_ROUNDS = int(os.environ.get("KGROUP_BENCH_KIT_MEMORY_ROUNDS", 3))
TESTS = int(os.environ.get("KGROUP_BENCH_KIT_TESTS", 200))
IDLE_SECONDS = float(os.environ.get("KGROUP_BENCH_IDLE_SECONDS", 2))
PROFILE = os.environ.get("KGROUP_BENCH_KIT_PROFILE")

KIT, FRESH, CHILD_DISK, CHILD_MEMORY = "kit", "kit, fresh", "kit child, disk", "kit child, memory"
KGROUP, KAFKA = "kgroup broker", "kafka"

#: Targets of issue 23.
TARGET_START_MS = 50.0
TARGET_IDLE_MB = 30.0

#: _starts: seconds from start to the first answer, by way; _stops: seconds to stop.
_starts: dict[str, list[float]] = {}
_stops: dict[str, list[float]] = {}
#: _memory: MB by way, then by reading ("answering", "idle").
_memory: dict[str, dict[str, list[float]]] = {}
#: _suites: by way, "wall s" (the suite's subprocess), "tests" (sum of pytest's durations), ...
_suites: dict[str, dict[str, float]] = {}


def _test_config() -> dict[str, object]:
    from kgroup.testing import TEST_DEFAULTS

    return dict(TEST_DEFAULTS)


def _port(bootstrap: str) -> int:
    return int(bootstrap.rsplit(":", 1)[1])


def _answer(bootstrap: str) -> None:
    if not servers.answers_api_versions(_port(bootstrap)):
        raise RuntimeError(f"{bootstrap} did not answer ApiVersions")


def _rss_mb(pid: int) -> float:
    return servers.rss_mb(pid)


def _idle(m: dict[str, list[float]], pid: int) -> None:
    """Record process ``pid``'s idle memory in ``m``: VmRSS, and its anonymous part (the heap,
    Python's objects, thread stacks) and file-backed part (code of the interpreter, of the
    extension modules and of the libraries they load, shared with other processes mapping
    them)."""
    with open(f"/proc/{pid}/status") as f:
        got = {
            k: int(v.split()[0]) * 1024 / 1e6
            for k, v in (line.split(":", 1) for line in f)
            if k in ("VmRSS", "RssAnon", "RssFile")
        }
    m.setdefault("idle", []).append(got["VmRSS"])
    m.setdefault("anonymous", []).append(got["RssAnon"])
    m.setdefault("file", []).append(got["RssFile"])


# -- 1 and 2: start and idle memory --------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _bytecode() -> None:
    """kgroup's modules compiled to bytecode once, as pip compiles an installed wheel's: where
    PYTHONDONTWRITEBYTECODE is set and kgroup runs from its sources (an editable install),
    every new interpreter would otherwise compile them again (some 60 ms of each fresh start
    and child process here), which no user's start pays. Interpreters read the files
    whatever that variable says."""
    import kgroup

    compileall.compile_dir(Path(kgroup.__file__).parent, quiet=1)


def test_start_in_process(benchmark) -> None:
    """``Broker()`` in this process, warm: STARTS starts, each until the first answer."""
    from kgroup.testing import Broker

    storage = "memory"
    benchmark.group = "kgroup.testing: start until ApiVersions is answered (in process)"

    def run() -> None:
        with Broker(storage=storage) as b:  # the first start's imports, outside the clock
            _answer(b.bootstrap_servers)
        for _ in range(STARTS):
            started = time.perf_counter()
            b = Broker(storage=storage).start()
            _answer(b.bootstrap_servers)
            _starts.setdefault(KIT, []).append(time.perf_counter() - started)
            stopping = time.perf_counter()
            b.stop()
            _stops.setdefault(KIT, []).append(time.perf_counter() - stopping)

    benchmark.pedantic(run, rounds=1, iterations=1)


#: What a fresh interpreter runs: it times itself from its first statement (imports counted),
#: reads its own VmRSS before and after ``import kgroup.testing``, after the start and after
#: idling, and prints them as JSON.
_FRESH = textwrap.dedent(
    """
    import time
    started = time.perf_counter()

    def rss(what="VmRSS"):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(what + ":"):
                    return int(line.split()[1]) * 1024 / 1e6

    before = rss()
    import json, socket, sys
    import kgroup.testing
    from kgroup import protocol
    imported = time.perf_counter()
    after_import = rss()
    storage, idle = sys.argv[1], float(sys.argv[2])
    b = kgroup.testing.Broker(storage=storage).start()
    with socket.create_connection(("127.0.0.1", int(b.bootstrap_servers.rsplit(":", 1)[1]))) as s:
        s.sendall(protocol.encode_request(18, 0, 1, "bench-probe", {}))
        head = s.recv(4, socket.MSG_WAITALL)
        body = s.recv(protocol.frame_size(head), socket.MSG_WAITALL)
        assert protocol.decode_response(18, 0, body).body["error_code"] == 0
    answered = time.perf_counter()
    at_answer = rss()
    time.sleep(idle)
    print(json.dumps({
        "start_s": answered - started, "import_s": imported - started,
        "rss_before": before, "rss_import": after_import, "rss_answering": at_answer,
        "rss_idle": rss(), "rss_anonymous": rss("RssAnon"), "rss_file": rss("RssFile"),
        "modules": len(sys.modules),
    }), flush=True)
    b.stop()
    """
)


def _fresh(storage: str, idle: float) -> tuple[float, dict[str, float]]:
    """One fresh interpreter's start: (wall seconds from its launch to its report, its
    report)."""
    launched = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _FRESH, storage, str(idle)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    wall = time.perf_counter() - launched - (idle if line else 0)
    if proc.wait(60) != 0 or not line:
        raise RuntimeError(f"the fresh interpreter failed ({proc.returncode})")
    return wall, json.loads(line)


def test_start_fresh_interpreter(benchmark) -> None:
    """``Broker()`` as the first thing a new interpreter does (FRESH_STARTS of them), then its
    memory (MEMORY_ROUNDS of them idle IDLE_SECONDS)."""
    storage = "memory"
    benchmark.group = "kgroup.testing: start until ApiVersions is answered (in process)"

    def run() -> None:
        _fresh(storage, 0)  # the files it reads into the page cache, outside the clock
        for _ in range(FRESH_STARTS):
            wall, got = _fresh(storage, 0)
            _starts.setdefault(FRESH, []).append(got["start_s"])
            _starts.setdefault(FRESH + " (wall, interpreter's start too)", []).append(wall)
            _starts.setdefault(FRESH + " (import kgroup.testing only)", []).append(got["import_s"])
        for _ in range(MEMORY_ROUNDS):
            _, got = _fresh(storage, IDLE_SECONDS)
            m = _memory.setdefault(KIT, {})
            m.setdefault("interpreter", []).append(got["rss_before"])
            m.setdefault("after import kgroup.testing", []).append(got["rss_import"])
            m.setdefault("answering", []).append(got["rss_answering"])
            m.setdefault("idle", []).append(got["rss_idle"])
            m.setdefault("anonymous", []).append(got["rss_anonymous"])
            m.setdefault("file", []).append(got["rss_file"])

    benchmark.pedantic(run, rounds=1, iterations=1)


@pytest.mark.parametrize("storage", ["disk", "memory"])
def test_start_child(benchmark, storage: str) -> None:
    """``Broker(process=True, storage=...)``: CHILD_STARTS starts, its process's memory."""
    from kgroup.testing import Broker

    way = CHILD_DISK if storage == "disk" else CHILD_MEMORY
    benchmark.group = "kgroup.testing: start until ApiVersions is answered (child process)"

    def run() -> None:
        for i in range(CHILD_STARTS):
            started = time.perf_counter()
            b = Broker(process=True, storage=storage).start()
            _answer(b.bootstrap_servers)
            _starts.setdefault(way, []).append(time.perf_counter() - started)
            if i < MEMORY_ROUNDS:
                pid = b._backend.proc.pid  # type: ignore[union-attr]
                m = _memory.setdefault(way, {})
                m.setdefault("answering", []).append(_rss_mb(pid))
                time.sleep(IDLE_SECONDS)
                _idle(m, pid)
            stopping = time.perf_counter()
            b.stop()
            _stops.setdefault(way, []).append(time.perf_counter() - stopping)

    benchmark.pedantic(run, rounds=1, iterations=1)


@contextlib.contextmanager
def _server(name: str) -> Iterator[servers.Server]:
    config = _test_config()
    with tempfile.TemporaryDirectory(prefix=f"bench-kit-{name}-") as tmp:
        if name == "kgroup":
            with servers.kgroup(os.path.join(tmp, "data"), config) as s:
                yield s
        else:
            with servers.apache_kafka(config) as s:
                yield s


@pytest.mark.parametrize("name", ["kgroup", "kafka"])
def test_start_server(benchmark, name: str) -> None:
    """The ``kgroup broker`` command and Apache Kafka, as bench_startup starts them."""
    way = KGROUP if name == "kgroup" else KAFKA
    count = CHILD_STARTS if name == "kgroup" else KAFKA_STARTS
    benchmark.group = "kgroup.testing: start until ApiVersions is answered (servers)"

    def run() -> None:
        for i in range(count):
            with _server(name) as s:
                _starts.setdefault(way, []).append(s.startup_s)
                if i < MEMORY_ROUNDS:
                    m = _memory.setdefault(way, {})
                    m.setdefault("answering", []).append(s.rss_mb())
                    time.sleep(IDLE_SECONDS)
                    _idle(m, s.proc.pid)
                stopping = time.perf_counter()
            _stops.setdefault(way, []).append(time.perf_counter() - stopping)

    benchmark.pedantic(run, rounds=1, iterations=1)


# -- 3: the suite --------------------------------------------------------------------------------

_CONFTEST = '''
import json
import os

import pytest


def pytest_runtest_logreport(report):
    """Each phase's duration (setup: the broker's start; teardown: its stop), for the bench."""
    with open(os.environ["BENCH_KIT_PHASES"], "a") as f:
        f.write(json.dumps([report.when, report.duration]) + "\\n")


@pytest.fixture
def bootstrap(request):
    """The shared broker's address, or a fresh kgroup broker's for this test."""
    shared = os.environ.get("BENCH_KIT_BOOTSTRAP")
    if shared:
        return shared
    return request.getfixturevalue("kgroup_broker").bootstrap_servers
'''

_TESTS = """
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

CONSUMER = {
    "auto.offset.reset": "earliest",
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 500,
}


@pytest.mark.parametrize("n", range(COUNT))
def test_produce_consume(bootstrap, n):
    topic = f"orders-{n}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)

    producer = Producer({"bootstrap.servers": bootstrap})
    sent = [f"order {n}.{i}".encode() for i in range(10)]
    for i, value in enumerate(sent):
        producer.produce(topic, key=str(i).encode(), value=value)
    assert producer.flush(30) == 0

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": topic, **CONSUMER})
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < len(sent) and time.monotonic() < deadline:
        m = consumer.poll(0.1)
        if m is not None:
            assert m.error() is None, m.error()
            got.append(m.value())
    consumer.close()
    assert got == sent
"""


def _write_suite(folder: Path) -> None:
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (folder / "conftest.py").write_text(_CONFTEST)
    (folder / "test_produce_consume.py").write_text(_TESTS.replace("COUNT", str(TESTS)))


def _plugin_args() -> list[str]:
    """The kit's plugin loads from its ``pytest11`` entry point once kgroup is installed with
    it; a build installed before it had one gets it by name."""
    if importlib.metadata.entry_points(group="pytest11", name="kgroup"):
        return []
    return ["-p", "kgroup.testing.pytest_plugin"]


def _run_suite(folder: Path, env: dict[str, str], tag: str) -> dict[str, float]:
    """Run the suite in ``folder`` by ``python -m pytest`` in a subprocess: its wall time, the
    sum, mean and p90 of pytest's durations of the tests (JUnit XML), and the mean of each
    test's setup, call and teardown (the suite's conftest writes them: the broker's start is in
    the setup, its stop in the teardown)."""
    report = folder / f"{tag}.xml"
    phases_file = folder / f"{tag}.phases"
    env = {**env, "BENCH_KIT_PHASES": str(phases_file)}
    argv = [sys.executable, "-m", "pytest", "-q", str(folder), f"--junitxml={report}"]
    argv += _plugin_args() if "BENCH_KIT_BOOTSTRAP" not in env else []
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0 or not report.exists():
        raise RuntimeError(f"the {tag} suite failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    cases = ET.parse(report).getroot().iter("testcase")
    times = [float(c.get("time", "nan")) for c in cases]
    phases = {"setup": 0.0, "call": 0.0, "teardown": 0.0}
    first_setup = None
    for line in phases_file.read_text().splitlines():
        when, duration = json.loads(line)
        phases[when] += duration
        if when == "setup" and first_setup is None:
            first_setup = duration
    return {
        "wall s": wall,
        "tests": len(times),
        "tests s": sum(times),
        "per test ms": 1000 * statistics.mean(times),
        "per test p90 ms": 1000 * _p90(times),
        **{f"{k} ms": 1000 * v / len(times) for k, v in phases.items()},
        "first setup ms": 1000 * (first_setup or 0.0),
    }


def _suite_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env.update(extra)
    return env


def test_suite_broker_per_test(benchmark, tmp_path: Path) -> None:
    """TESTS tests, a fresh kgroup broker each (the kgroup_broker fixture)."""
    benchmark.group = f"kgroup.testing: {TESTS} produce-and-consume tests"
    _write_suite(tmp_path)

    env = _suite_env()

    def run() -> None:
        _suites["kit"] = _run_suite(tmp_path, env, "kit")

    benchmark.pedantic(run, rounds=1, iterations=1)
    if PROFILE and shutil.which("py-spy"):
        out = Path(PROFILE) / "kit-suite.svg"
        out.parent.mkdir(parents=True, exist_ok=True)
        argv = ["py-spy", "record", "-o", str(out), "--subprocesses", "--"]
        argv += [sys.executable, "-m", "pytest", "-q", str(tmp_path), *_plugin_args()]
        subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True)


def test_suite_shared_kafka(benchmark, tmp_path: Path) -> None:
    """The same TESTS tests on one Apache Kafka, started once before them."""
    benchmark.group = f"kgroup.testing: {TESTS} produce-and-consume tests"
    _write_suite(tmp_path)

    def run() -> None:
        started = time.perf_counter()
        with servers.apache_kafka(_test_config()) as s:
            ready = time.perf_counter() - started
            got = _run_suite(tmp_path, _suite_env(BENCH_KIT_BOOTSTRAP=s.bootstrap), "kafka")
            got["start s"] = ready
            got["start until ApiVersions s"] = s.startup_s
            _suites["kafka"] = got

    benchmark.pedantic(run, rounds=1, iterations=1)


# -- the summary ---------------------------------------------------------------------------------


def _p90(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def _table(
    rows: list[tuple[str, list[float | None]]], heads: list[str], ratio_of: Callable[[str], float]
) -> list[str]:
    """Rows of figures, then kgroup's ratio against Apache Kafka and the ``kgroup broker``
    command: the other's first figure over the row's (above 1x the row is ahead; every figure
    here is lower-is-better)."""
    width = max([len(r) for r, _ in rows] + [10])
    out = [f"  {'':<{width}}" + "".join(f"{h:>12}" for h in heads)]
    out[0] += f"{'vs kafka':>12}{'vs kgroup broker':>18}"
    for name, values in rows:
        line = f"  {name:<{width}}"
        line += "".join(f"{'-':>12}" if v is None else f"{v:12.1f}" for v in values)
        first = values[0]
        for other, w in ((KAFKA, 12), (KGROUP, 18)):
            o = ratio_of(other)
            # The indented rows detail the row above them: no ratio of their own.
            detail = name.startswith(" ")
            line += (
                f"{'-':>{w}}"
                if detail or not first or not o or name == other
                else f"{o / first:{w - 1}.2f}x"
            )
        out.append(line)
    return out


@summary("kgroup.testing: a test broker's start and idle memory beside Apache Kafka 4.4")
def _summary_start() -> list[str]:
    if not _starts and not _memory:
        return []
    lines = [
        "start: from creating the broker (launching its process) until the first ApiVersions "
        f"answer, ms, lower is better; target {TARGET_START_MS:g} ms in process"
    ]
    rows = []
    for way, got in _starts.items():
        ms = [1000 * v for v in got]
        stops = _stops.get(way)
        rows.append(
            (
                way,
                [
                    statistics.median(ms),
                    _p90(ms),
                    float(len(ms)),
                    1000 * statistics.median(stops) if stops else None,
                ],
            )
        )
    medians = {w: 1000 * statistics.median(v) for w, v in _starts.items()}
    lines += _table(rows, ["median", "p90", "starts", "stop median"], lambda w: medians.get(w, 0))
    lines.append(f"  ({load_average()})")
    if _memory:
        lines.append(
            f"idle memory: VmRSS, MB, lower is better; target {TARGET_IDLE_MB:g} MB; median of "
            f"{MEMORY_ROUNDS} starts, when answering and {IDLE_SECONDS:g} s later"
        )
        rows = []
        idle = {w: statistics.median(m["idle"]) for w, m in _memory.items() if "idle" in m}
        for way, m in _memory.items():
            med = {k: statistics.median(v) for k, v in m.items()}
            if way == KIT:
                cost = med["idle"] - med["after import kgroup.testing"]
                rows.append(("kit in process: the broker's cost", [cost, None, None, None]))
                rows.append(
                    (f"  {KIT}: interpreter at its start", [med["interpreter"], None, None, None])
                )
                imported = med["after import kgroup.testing"]
                rows.append((f"  {KIT}: after import kgroup.testing", [imported, None, None, None]))
                whole: list[float | None] = [
                    med["idle"],
                    med["answering"],
                    med["anonymous"],
                    med["file"],
                ]
                rows.append((f"  {KIT}: whole interpreter", whole))
            else:
                rows.append((way, [med["idle"], med["answering"], med["anonymous"], med["file"]]))
        heads = ["idle", "answering", "anonymous", "file"]
        lines += _table(rows, heads, lambda w: idle.get(w, 0))
        lines.append(
            "  (anonymous: the heap, Python's objects, stacks; file: code pages of the "
            "interpreter, extensions and libraries, shared with other processes mapping them)"
        )
        lines.append(f"  ({load_average()})")
    return lines


@summary(f"kgroup.testing: {TESTS} produce-and-consume tests, a broker per test vs one Kafka")
def _summary_suite() -> list[str]:
    if not _suites:
        return []
    lines = [
        f"{TESTS} tests (create a topic, produce 10, consume 10 in a group, confluent-kafka), "
        "python -m pytest in a subprocess; s and ms, lower is better"
    ]
    kit, kafka = _suites.get("kit"), _suites.get("kafka")
    heads = ["suite s", "tests s", "per test ms", "p90 ms"]
    rows: list[tuple[str, list[float | None]]] = []
    if kit:
        rows.append(
            (
                "kit: a fresh broker per test",
                [kit["wall s"], kit["tests s"], kit["per test ms"], kit["per test p90 ms"]],
            )
        )
    if kafka:
        rows.append(
            (
                "kafka: shared, its start apart",
                [kafka["wall s"], kafka["tests s"], kafka["per test ms"], kafka["per test p90 ms"]],
            )
        )
        rows.append(
            (
                "kafka: shared, its start counted",
                [kafka["wall s"] + kafka["start s"], None, None, None],
            )
        )
    width = max(len(r) for r, _ in rows)
    lines.append(f"  {'':<{width}}" + "".join(f"{h:>12}" for h in heads) + f"{'kit ahead':>12}")
    for name, values in rows:
        line = f"  {name:<{width}}"
        line += "".join(f"{'-':>12}" if v is None else f"{v:12.2f}" for v in values)
        first = values[0]
        if kit and first is not None and not name.startswith("kit"):
            line += f"{first / kit['wall s']:11.2f}x"
        lines.append(line)
    for name, got in (("kit", kit), ("kafka", kafka)):
        if got:
            lines.append(
                f"  {name}, mean per test: setup {got['setup ms']:.1f} ms, call "
                f"{got['call ms']:.1f} ms, teardown {got['teardown ms']:.1f} ms; the first "
                f"test's setup {got['first setup ms']:.1f} ms"
            )
    if kafka:
        lines.append(
            f"  Apache Kafka's start before its suite: {kafka['start s']:.2f} s (format, start, "
            f"ready for topics; {kafka['start until ApiVersions s']:.2f} s of it until "
            "ApiVersions; formatted in the tool shell's warm JVM, KGROUP_TOOL_SHELL=0: a JVM "
            "of its own)"
        )
    lines.append(
        "  (kit ahead: the Kafka suite's time over the kit's, above 1x the kit is faster; "
        f"target: above 1x without Kafka's start; {load_average()})"
    )
    return lines
