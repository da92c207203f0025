"""The story of ``make run`` (spark_udfs.demo): its tables and checks on made-up results, the
broker it runs in the background (stopped however the block ends), the consumer group with a
member that leaves and comes back against a real broker, and the whole story as a user runs
it, whose output must show every invariant holding."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
from support.kgroup_broker import run_broker

import kgroup
from spark_udfs.demo.broker import background_broker
from spark_udfs.demo.group import LEAVER, ROLES, GroupResult, run_group
from spark_udfs.demo.story import main
from spark_udfs.demo.summary import checks, generation_table, partition_table

ROOT = Path(__file__).resolve().parents[2]


def made_up(duplicate: bool = False, lost: bool = False) -> GroupResult:
    """Two partitions of 10 and 5 records; c1 leaves after generation 2 and is back in 4."""
    records = {"c0": [6, 0], "c1": [4, 3], "c2": [0, 2]}
    if duplicate:
        records["c2"][1] += 1
    return GroupResult(
        roles=ROLES,
        generations={
            2: {"c0": (0,), "c1": (1,), "c2": ()},
            3: {"c0": (0,), "c2": (1,)},
            4: {"c0": (0,), "c1": (), "c2": (1,)},
            5: {"c0": (0,), "c1": (1,), "c2": ()},
        },
        member_ids={
            2: {"c0": "a", "c1": "b1", "c2": "c"},
            3: {"c0": "a", "c2": "c"},
            4: {"c0": "a", "c1": "b2", "c2": "c"},
            5: {"c0": "a", "c1": "b2", "c2": "c"},
        },
        records=records,
        distinct=[10, 5],
        lost=[("c2", (1,))] if lost else [],
    )


def test_checks_hold_when_every_count_agrees() -> None:
    group = made_up()
    assert group.left_and_came_back() == (2, 3, 4)
    got = checks([10, 5], [10, 5], group, [10, 5], [10, 5], read_back=15)
    assert [c.ok for c in got] == [True] * 8, [c.format() for c in got]
    assert "c1 was a member in generation 2, absent from generation 3, back in generation 4" in (
        got[5].text
    )


def test_checks_name_each_disagreement() -> None:
    group = made_up()
    got = {
        c.text.split(";")[0]: c
        for c in checks([10, 5], [10, 4], group, [10, None], [10, 6], read_back=14)
    }
    failed = [t for t, c in got.items() if not c.ok]
    assert failed == [
        "the sink wrote each partition the rows Spark's skew report counted",
        "the topic holds exactly those records (log end offset = rows, per partition)",
        "the group committed every partition to its log end: lag 0",
        'spark.read.format("kgroup") reads back 14 records of the 15 rows written',
    ]
    text = [c.text for c in got.values() if not c.ok]
    assert "partition 1: sink 4 != 5" in text[0] and "partition 1: log end 6 != 5" in text[1]
    assert "not partitions 1" in text[2]


def test_a_record_twice_fails_unless_a_partition_was_lost() -> None:
    dup = checks([10, 5], [10, 5], made_up(duplicate=True), [10, 5], [10, 5], 15)
    twice = [c for c in dup if "processed twice" in c.text]
    assert [c.ok for c in twice] == [False]
    assert "no lost partition or failed commit to explain them" in twice[0].text
    allowed = checks([10, 5], [10, 5], made_up(duplicate=True, lost=True), [10, 5], [10, 5], 15)
    twice = [c for c in allowed if "processed twice" in c.text]
    assert [c.ok for c in twice] == [True]
    assert "1 records were processed twice (at-least-once, as Kafka allows: c2 lost 1)" in (
        twice[0].text
    )


def test_a_leaver_that_never_came_back_fails_the_check() -> None:
    group = made_up()
    group.generations = {g: m for g, m in group.generations.items() if g <= 3}
    assert group.left_and_came_back() is None
    got = checks([10, 5], [10, 5], group, [10, 5], [10, 5], 15)
    assert [c.text for c in got if not c.ok] == [
        f"no generation shows {LEAVER} leaving and coming back"
    ]


def test_an_empty_partition_needs_no_commit() -> None:
    group = made_up()
    group.records = {"c0": [6, 0, 0], "c1": [4, 3, 0], "c2": [0, 2, 0]}
    group.distinct = [10, 5, 0]
    got = checks([10, 5, 0], [10, 5, 0], group, [10, 5, None], [10, 5, 0], read_back=15)
    assert [c.text for c in got if not c.ok] == []


def test_tables() -> None:
    group = made_up()
    table = partition_table([10, 5], [10, 5], group, [10, None], [10, 5]).splitlines()
    assert table[0].split() == [
        "partition",
        "spark",
        "rows",
        "sink",
        "wrote",
        "consumed",
        "c0",
        "c1",
        "c2",
        "committed",
        "log",
        "end",
        "lag",
    ]
    assert table[1].split() == ["0", "10", "10", "10", "6", "4", "0", "10", "10", "0"]
    assert table[2].split() == ["1", "5", "5", "5", "0", "3", "2", "-", "5", "5"]
    assert table[3].split() == ["total", "15", "15", "15", "6", "7", "2", "10", "15", "5"]
    gens = [re.split(r"\s{2,}", line.strip()) for line in generation_table(group).splitlines()]
    assert gens == [
        ["generation", "c0", "c1", "c2"],
        ["2", "0", "1", "(none)"],
        ["3", "0", "-", "1"],
        ["4", "0", "(none)", "1"],
        ["5", "0", "1", "(none)"],
    ]


def test_arguments_are_checked_before_anything_starts(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--rows", "0"])
    assert e.value.code == 2
    assert "--rows must be 1 or more" in capsys.readouterr().err


def test_background_broker_serves_then_stops_however_the_block_ends(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="the block failed"):
        with background_broker(tmp_path / "data", config={"num.partitions": 2}) as b:
            pid = b.pid
            assert b.bootstrap.startswith("127.0.0.1:")
            admin = kgroup.AdminClient({"bootstrap.servers": b.bootstrap})
            try:
                assert admin.list_topics(timeout=10).brokers
            finally:
                admin.close()
            raise RuntimeError("the block failed")
    assert not _alive(pid)
    assert "shut down completed" in (tmp_path / "broker.log").read_text()


def test_background_broker_that_cannot_start_says_why(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="did not start") as e:
        with background_broker(tmp_path / "data", config={"num.partitions": "many"}):
            pass
    assert "num.partitions" in str(e.value)


@pytest.mark.network
def test_group_reads_every_record_once_while_c1_leaves_and_comes_back(tmp_path: Path) -> None:
    with run_broker(tmp_path / "data", {"group.initial.rebalance.delay.ms": 0}) as broker:
        bs = broker.bootstrap_servers
        topic, group = f"demo-{uuid.uuid4().hex[:6]}", f"demo-{uuid.uuid4().hex[:6]}"
        admin = kgroup.AdminClient({"bootstrap.servers": bs})
        try:
            admin.create_topics([kgroup.NewTopic(topic, 6, 1)])[topic].result(30)
            with kgroup.Producer({"bootstrap.servers": bs}) as p:
                for i in range(6000):
                    # Keys go where Java's producer puts them; some records have none.
                    p.produce(topic, value=b"%d" % i, key=None if i % 97 == 0 else b"u%d" % i)
                assert p.flush(30) == 0
            marks = admin.watermarks([(topic, q) for q in range(6)])
            ends = [marks[kgroup.TopicPartition(topic, q)][1] for q in range(6)]
            lines: list[str] = []
            result = run_group(bs, topic, ends, group=group, say=lines.append)
            committed = {
                tp.partition: tp.offset
                for tp in admin.list_consumer_group_offsets(group)[group].result(30)
            }
        finally:
            admin.close()
    assert sum(ends) == 6000
    assert result.distinct == ends
    assert result.duplicates == [0] * 6 or result.lost or result.uncommitted
    assert result.misplaced == 0
    assert result.left_and_came_back() is not None, result.generations
    assert committed == dict(enumerate(ends))
    assert any(f"{LEAVER} leaves (close())" in line for line in lines), lines
    assert any(f"{LEAVER} comes back" in line for line in lines), lines
    # Every member read records, c1 in both of its lives (before leaving, after coming back).
    assert all(sum(result.records[r]) > 0 for r in ROLES), result.records


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose: it no longer runs.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def _demo(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "spark_udfs.demo", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """The process's output lines as they come (None at its end), read in a thread."""
    out: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.put(line.rstrip("\n"))
        out.put(None)

    threading.Thread(target=read, daemon=True).start()
    return out


def _broker_pid(lines: queue.Queue[str | None], seen: list[str], timeout: float = 60) -> int:
    while True:
        line = lines.get(timeout=timeout)
        assert line is not None, f"the demo ended before its broker started: {seen}"
        seen.append(line)
        m = re.match(r"pid (\d+), listening on 127\.0\.0\.1:\d+", line)
        if m:
            return int(m.group(1))


@pytest.mark.network
def test_ctrl_c_stops_the_demo_and_its_broker() -> None:
    proc = _demo("--rows", "1000", "--partitions", "2", "--master", "local[1]")
    try:
        pid = _broker_pid(_lines(proc), [])
        assert _alive(pid)
        proc.send_signal(signal.SIGINT)  # the broker, in a session of its own, gets none
        assert proc.wait(60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert not _alive(pid)
    assert proc.stderr is not None and "interrupted" in proc.stderr.read()


@pytest.mark.slow
@pytest.mark.network
def test_the_story_as_a_user_runs_it() -> None:
    # Small and on local[2] to spare the machine; the story's invariants, read from its output.
    proc = _demo("--rows", "20000", "--partitions", "6", "--master", "local[2]")
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, err[-3000:]
    pid = int(re.search(r"^pid (\d+), listening on", out, re.M).group(1))  # type: ignore[union-attr]
    assert not _alive(pid)

    # The skew report of the pipeline is there, and the partitions' table adds up.
    assert "Kafka partitions: 20,000 rows over 6 partitions (murmur2)" in out
    rows = {}
    for line in out.split("== 5.")[1].splitlines():
        cells = line.split()
        if cells and cells[0].isdigit() and len(cells) == 10:
            rows[int(cells[0])] = [int(c.replace(",", "")) for c in cells[1:]]
    assert sorted(rows) == list(range(6))
    for spark_rows, sink, consumed, c0, c1, c2, committed, end, lag in rows.values():
        assert spark_rows == sink == consumed == committed == end
        assert c0 + c1 + c2 == consumed  # no record twice
        assert lag == 0
    assert sum(r[0] for r in rows.values()) == 20000

    # Each generation as the members saw it: c1 leaves, then comes back.
    table = out.split("\ngeneration  ")[1].splitlines()[1:]
    generations = []
    for line in table:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip())
        generations.append((int(cells[0]), dict(zip(ROLES, cells[1:], strict=True))))
    present = [members[LEAVER] != "-" for _, members in generations]
    first = present.index(True)
    absent = present.index(False, first)
    assert True in present[absent:], generations

    assert 'spark.read.format("kgroup") reads back 20,000 records of the 20,000 rows' in out
    checks_text = out.split("\nChecks\n")[1].split("\n\n")[0].splitlines()
    assert len(checks_text) == 8 and all(c.startswith("  ok") for c in checks_text), checks_text
    assert "every check holds" in out
