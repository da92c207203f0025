"""The repartitioning pipeline: right rows in the right folders, clear errors, atomic output."""

from __future__ import annotations

import csv
import glob
import json
import os
import random
import subprocess
import sys
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import kgroup
from kgroup.errors import InvalidArgument, InvalidType
from spark_udfs import repartition
from spark_udfs.repartition import detect_format, main, run_pipeline, skew_report
from spark_udfs.report import HeavyKey, SkewReport

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_rows(count: int = 3000, seed: int = 9) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        # A heavy head: key-0 is about a fifth of the rows.
        r = rng.random()
        key = "key-0" if r < 0.2 else f"key-{rng.randrange(1, 400)}"
        rows.append({"id": i, "key": key, "city": rng.choice(["Oslo", "Zürich", "東京"])})
    return rows


def write_input(folder, rows, fmt: str) -> str:
    os.makedirs(folder, exist_ok=True)
    if fmt == "parquet":
        path = os.path.join(folder, "events.parquet")
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif fmt == "csv":
        path = os.path.join(folder, "events.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    else:
        path = os.path.join(folder, "events.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def read_folder(folder: str, fmt: str) -> list[dict]:
    files = [
        f for f in glob.glob(os.path.join(folder, "*")) if not os.path.basename(f).startswith("_")
    ]
    files = [f for f in files if not os.path.basename(f).startswith(".")]
    rows: list[dict] = []
    for f in files:
        if fmt == "parquet":
            rows += pq.read_table(f).to_pylist()
        elif fmt == "csv":
            with open(f, encoding="utf-8", newline="") as fh:
                rows += list(csv.DictReader(fh))
        else:
            with open(f, encoding="utf-8") as fh:
                rows += [json.loads(line) for line in fh if line.strip()]
    return rows


def listing(folder) -> list[str]:
    """The names in ``folder`` but Hadoop's hidden checksum files (``.name.crc``)."""
    return sorted(n for n in os.listdir(folder) if not n.startswith("."))


def normalise(row: dict) -> tuple:
    return (int(row["id"]), row["key"], row["city"])


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_output_folders_hold_the_right_rows(spark, tmp_path, fmt):
    rows = make_rows()
    src = write_input(tmp_path / "in", rows, fmt)
    out = str(tmp_path / "out")
    result = run_pipeline(spark, input=src, key_column="key", partitions=8, output=out)
    assert result.format == fmt
    assert listing(out) == sorted([f"partition={p}" for p in range(8)] + ["_SUCCESS"])
    seen = []
    counts = []
    for p in range(8):
        got = read_folder(os.path.join(out, f"partition={p}"), fmt)
        assert all(kgroup.partition_for_key(r["key"], 8) == p for r in got)
        counts.append(len(got))
        seen += [normalise(r) for r in got]
    assert sorted(seen) == sorted(normalise(r) for r in rows)
    # The report counts what was written.
    report = result.report
    assert list(report.rows) == counts
    assert report.total == len(rows)
    assert report.null_key_rows == 0
    want = Counter(r["key"] for r in rows).most_common(10)
    assert [(k.key, k.rows) for k in report.heavy_keys][:3] == want[:3]
    assert report.heavy_keys[0].partition == kgroup.partition_for_key("key-0", 8)
    # Nothing else is left beside the output.
    assert sorted(os.listdir(tmp_path)) == ["in", "out"]


def test_empty_kafka_partitions_get_empty_folders_and_sorted_files(spark, tmp_path):
    # 40 keys over 64 partitions: most partitions are empty; rows arrive in random order.
    keys = [f"k{i}" for i in range(40)] * 25
    random.Random(2).shuffle(keys)
    rows = [{"id": i, "key": k, "city": "Oslo"} for i, k in enumerate(keys)]
    src = write_input(tmp_path / "in", rows, "parquet")
    out = str(tmp_path / "out")
    result = run_pipeline(
        spark,
        input=src,
        key_column="key",
        partitions=64,
        output=out,
        output_format="json",
        sort_within=True,
    )
    used = {kgroup.partition_for_key(k, 64) for k in keys}
    assert len(used) < 40  # some partitions hold several keys
    for p in range(64):
        got = [r["key"] for r in read_folder(os.path.join(out, f"partition={p}"), "json")]
        assert (len(got) > 0) == (p in used)
        assert all(kgroup.partition_for_key(k, 64) == p for k in got)
        assert got == sorted(got)
    assert sorted(result.report.empty_partitions) == sorted(set(range(64)) - used)


def test_null_keys_are_counted_and_spread_or_dropped(spark, tmp_path):
    rows = [{"id": i, "key": None if i % 3 == 0 else f"k{i}", "city": "Oslo"} for i in range(300)]
    src = write_input(tmp_path / "in", rows, "parquet")
    spread = run_pipeline(
        spark, input=src, key_column="key", partitions=3, output=str(tmp_path / "s")
    )
    assert spread.report.total == 300 and spread.report.null_key_rows == 100
    dropped = run_pipeline(
        spark,
        input=src,
        key_column="key",
        partitions=3,
        output=str(tmp_path / "d"),
        null_keys="drop",
        top_keys=0,
    )
    assert dropped.report.total == 200 and dropped.report.null_key_rows == 0
    assert dropped.report.heavy_keys == ()


def test_bad_input_fails_before_any_job_and_writes_nothing(spark, tmp_path):
    rows = make_rows(50)
    src = write_input(tmp_path / "in", rows, "parquet")
    out = str(tmp_path / "out")
    common = {"input": src, "output": out, "partitions": 4, "key_column": "key"}
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup()
    cases = [
        (InvalidArgument, "key column 'user' not found", {"key_column": "user"}),
        (InvalidType, "key column 'id' is (bigint|int64)", {"key_column": "id"}),
        (InvalidArgument, "between 1 and", {"partitions": 0}),
        (InvalidArgument, "no such file", {"input": str(tmp_path / "missing.parquet")}),
        (InvalidArgument, "unknown format", {"fmt": "avro"}),
        (
            InvalidArgument,
            "overlap",
            {"input": str(tmp_path / "in"), "output": str(tmp_path / "in" / "sub")},
        ),
        (InvalidArgument, "overlap", {"input": str(tmp_path / "in"), "output": str(tmp_path)}),
    ]
    for exc, message, change in cases:
        with pytest.raises(exc, match=message):
            run_pipeline(spark, **{**common, **change})
    # An unreadable file: not Parquet at all.
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"this is not parquet")
    with pytest.raises(InvalidArgument, match="cannot read input"):
        run_pipeline(spark, **{**common, "input": str(bad)})
    # CSV cannot hold a binary column; said before the job.
    pq.write_table(
        pa.table({"key": ["a"], "blob": pa.array([b"\x00"], pa.binary())}), tmp_path / "b.parquet"
    )
    with pytest.raises(InvalidType, match="CSV cannot hold"):
        run_pipeline(
            spark, **{**common, "input": str(tmp_path / "b.parquet"), "output_format": "csv"}
        )
    assert spark.sparkContext.statusTracker().getJobIdsForGroup() == jobs
    # JSON's types are known only from Spark's schema inference (itself a job), but the
    # partitioning job never starts.
    src_json = write_input(tmp_path / "js", [{"id": 1, "key": 7}], "json")
    with pytest.raises(InvalidType, match="key column 'key' is bigint"):
        run_pipeline(spark, **{**common, "input": src_json})
    with pytest.raises(InvalidArgument, match="key column 'user' not found"):
        run_pipeline(spark, **{**common, "input": src_json, "key_column": "user"})
    assert not os.path.exists(out)
    assert sorted(os.listdir(tmp_path)) == ["b.parquet", "bad.parquet", "in", "js"]


def test_existing_output_needs_overwrite_and_is_replaced_whole(spark, tmp_path):
    src = write_input(tmp_path / "in", make_rows(100), "parquet")
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(InvalidArgument, match="already exists"):
        run_pipeline(spark, input=src, key_column="key", partitions=2, output=str(out))
    assert os.listdir(out) == ["old.txt"]
    run_pipeline(spark, input=src, key_column="key", partitions=2, output=str(out), overwrite=True)
    assert listing(out) == ["_SUCCESS", "partition=0", "partition=1"]
    assert sorted(os.listdir(tmp_path)) == ["in", "out"]


def test_a_failing_job_leaves_nothing_behind(spark, tmp_path):
    # Two Parquet files whose key columns disagree: the schema comes from one, the job fails
    # reading the other, halfway through the write.
    src = tmp_path / "in"
    src.mkdir()
    pq.write_table(pa.table({"key": ["a", "b"], "v": [1, 2]}), src / "a.parquet")
    pq.write_table(pa.table({"key": [1.5, 2.5], "v": [3, 4]}), src / "b.parquet")
    out = tmp_path / "out"
    with pytest.raises(Exception) as info:
        run_pipeline(spark, input=str(src), key_column="key", partitions=4, output=str(out))
    assert not isinstance(info.value, InvalidArgument | InvalidType)
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["in"]


def test_detect_format(tmp_path):
    (tmp_path / "a.csv.gz").write_bytes(b"")
    assert detect_format(str(tmp_path / "a.csv.gz")) == "csv"
    spark_dir = tmp_path / "sparky"
    (spark_dir / "x=1").mkdir(parents=True)
    (spark_dir / "_SUCCESS").write_bytes(b"")
    (spark_dir / "x=1" / "part-0000-abc.snappy.parquet").write_bytes(b"")
    assert detect_format(str(spark_dir)) == "parquet"
    (tmp_path / "plain").write_bytes(b"")
    with pytest.raises(InvalidArgument, match="pass --format"):
        detect_format(str(tmp_path / "plain"))


def test_cli_rejects_bad_arguments_before_starting_spark(tmp_path, capsys):
    src = write_input(tmp_path / "in", make_rows(10), "csv")
    base = ["--input", src, "--key-column", "key", "--output", str(tmp_path / "out")]
    assert main([*base, "--partitions", "0"]) == 2
    assert "between 1 and" in capsys.readouterr().err
    assert main([*base[:1], str(tmp_path / "nope.csv"), *base[2:], "--partitions", "3"]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    ok = [*base, "--partitions", "3"]
    assert main([*ok, "--report", str(tmp_path / "no-such-folder" / "skew.png")]) == 2
    assert "not a writable folder" in capsys.readouterr().err
    assert main([*ok, "--report", str(tmp_path / "skew.jpg")]) == 2
    assert ".png, .svg or .pdf" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_skew_report_text_and_chart(tmp_path):
    report = SkewReport(
        num_partitions=4,
        hash="murmur2",
        rows=(10, 0, 30, 0),
        null_key_rows=2,
        heavy_keys=(HeavyKey("big", 25, 2), HeavyKey(b"\x00\xff", 5, 0)),
    )
    assert report.total == 40 and report.mean == 10.0 and report.max_over_mean == 3.0
    text = report.format()
    assert "max/mean 3.000 (partition 2)" in text
    assert "empty partitions: 1, 3" in text
    assert "big" in text and "b'\\x00\\xff'" in text
    png = tmp_path / "skew.png"
    report.plot(str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert SkewReport(num_partitions=3, hash="crc32", rows=(0, 0, 0)).max_over_mean == 0.0


@pytest.mark.slow
def test_cli_end_to_end(tmp_path):
    # The command exactly as a user types it, in its own Spark (local[2] to spare the machine).
    rows = make_rows(2000)
    src = write_input(tmp_path / "in", rows, "csv")
    out, png = tmp_path / "out", tmp_path / "skew.png"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spark_udfs.repartition",
            "--input",
            src,
            "--key-column",
            "key",
            "--partitions",
            "6",
            "--output",
            str(out),
            "--master",
            "local[2]",
            "--report",
            str(png),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "max/mean" in proc.stdout and "key-0" in proc.stdout
    assert png.read_bytes()[:4] == b"\x89PNG"
    total = 0
    for p in range(6):
        got = read_folder(str(out / f"partition={p}"), "csv")
        assert all(kgroup.partition_for_key(r["key"], 6) == p for r in got)
        total += len(got)
    assert total == len(rows)


def test_skew_report_lists_the_extremes_of_many_partitions():
    rows = tuple(100 + (p * 37) % 101 for p in range(500))
    text = SkewReport(num_partitions=500, hash="murmur2", rows=rows).format()
    assert "the 20 heaviest of 500 partitions:" in text and "the 5 lightest:" in text
    heaviest = max(range(500), key=lambda p: rows[p])
    listed = [line.split() for line in text.splitlines() if line[:9].strip().isdigit()]
    assert len(listed) == 25
    assert int(listed[0][0]) == heaviest and int(listed[0][1]) == rows[heaviest] == 200


def test_heavy_keys_from_a_sample_are_counted_exactly(spark, monkeypatch):
    # 60,000 rows: ten heavy keys (1,000 to 5,500 rows) over 20,000 light ones; a 3,000-row
    # sample finds the candidates, whose rows are then counted exactly.
    rng = random.Random(8)
    keys = [f"heavy-{i}" for i in range(10) for _ in range(1000 + 500 * i)]
    keys += [f"light-{rng.randrange(20_000)}" for _ in range(60_000 - len(keys))]
    keys += [None] * 7
    rng.shuffle(keys)
    df = spark.createDataFrame(
        [(k, kgroup.partition_for_key(k, 5) if k else i % 5) for i, k in enumerate(keys)],
        "key string, partition int",
    )
    monkeypatch.setattr(repartition, "SAMPLE_ROWS", 3000)
    report = skew_report(df, "key", "partition", 5, "murmur2", top_keys=10)
    counts = Counter(k for k in keys if k is not None)
    assert [(k.key, k.rows) for k in report.heavy_keys] == counts.most_common(10)
    assert all(k.partition == kgroup.partition_for_key(k.key, 5) for k in report.heavy_keys)
    assert report.total == len(keys) and report.null_key_rows == 7
