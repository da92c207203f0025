"""Kafka partitions for 10,000,000 Spark rows: the kgroup UDF beside what a Spark user has today.

Keys: 10M 16-character hex strings generated and cached inside Spark, local[2] (the shapes of
shared/reference/spark-and-python-baselines.md). Every case builds a fresh DataFrame (so no
shuffle is reused) and is forced the same way: rows counted per partition,
``select(key, p).groupBy(p).count().collect()``.

- ``kgroup arrow_udf``: ``spark_udfs.kafka_partition`` (an ``arrow_udf`` over
  ``kgroup.partition_keys``), the UDF the package ships;
- ``kgroup mapInArrow`` / ``kgroup pandas_udf``: the same kernel in Spark's other vectorised
  shapes, to show which is fastest;
- ``arrow_udf floor``: a no-op ``arrow_udf`` returning a constant int column: the JVM-to-Python
  round trip of the arrow_udf shape alone, the floor of every Python UDF of that shape;
- ``arrow floor``: an identity ``mapInArrow`` that adds a constant column: the same round trip
  in the mapInArrow shape (the baseline of the ratios printed per case);
- ``mapInArrow + confluent_kafka``: ``confluent_kafka.murmur2`` per element (the best a user
  can write today); ``pandas_udf + confluent_kafka``: the same in a pandas_udf;
- ``row udf + kafka-python``: a row-at-a-time Python UDF with kafka-python's murmur2;
- ``builtin pmod(hash)``: Spark's murmur3 in the JVM, not Kafka's partition: speed reference.

Then the pipeline (``spark_udfs.repartition``) on the same keys written as Parquet, cut into
steps to show where its time goes: scan, + partition UDF, + shuffle into Kafka partitions,
+ write (the whole pipeline without and with its skew report).

Targets (restated by issue 13): the kgroup arrow_udf within 1.05x of the no-op arrow_udf in the
same run, and faster than mapInArrow + confluent_kafka. Issue 4's "25x the kafka-python row
UDF" is withdrawn (Spark's own JVM-to-Python round trip is the floor of every Python UDF, which
caps that ratio); the row UDF stays as a reference. A summary with the ratios prints at the end.

Run: ``make bench`` or ``.venv/bin/python -m pytest bench/bench_spark.py -o
python_files='bench_*.py' --benchmark-only``. Takes about 10 minutes on 2 cores.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import confluent_kafka
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import kgroup

ROWS = int(os.environ.get("KGROUP_BENCH_SPARK_ROWS", 10_000_000))  # smaller for a smoke run
PARTITIONS = 12
GROUP = f"spark: kafka partition of {ROWS:,} 16-char keys, local[2]"
PIPELINE = f"spark pipeline: {ROWS:,} rows, parquet in and out, 12 partitions"

_results: dict[str, float] = {}
#: the interleaved kgroup / no-op arrow_udf pairs (medians, seconds, and the median ratio).
_pairs: dict[str, float] = {}


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    from spark_udfs.session import get_session

    session = get_session(
        "local[2]",
        app_name="kgroup-bench",
        progress=False,
        conf={"spark.driver.memory": "4g", "spark.sql.shuffle.partitions": "2"},
        log_level="ERROR",
    )
    yield session
    session.catalog.clearCache()
    session.stop()


@pytest.fixture(scope="module")
def keys(spark):
    """10M rows, one column ``key``: 16 hex characters, cached in memory."""
    from pyspark.sql import functions as F

    df = (
        spark.range(ROWS, numPartitions=4)
        .select(F.lpad(F.hex(F.xxhash64("id")), 16, "0").alias("key"))
        .cache()
    )
    assert df.count() == ROWS
    # Warm the JVM's Arrow and Python paths up (JIT, worker processes) before any timing:
    # otherwise the first case measured pays for it.
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("int")
    def zero(keys: pa.Array) -> pa.Array:
        return pa.array(np.zeros(len(keys), dtype=np.int32))

    for _ in range(3):
        force(df, zero("key"))
        force(df, F.pmod(F.hash("key"), F.lit(PARTITIONS)))
    yield df
    df.unpersist()


@pytest.fixture(scope="module")
def parquet(spark, keys) -> Iterator[str]:
    """The same keys as a Parquet dataset on disk, for the pipeline."""
    folder = tempfile.mkdtemp(prefix="kgroup-bench-spark-")
    path = os.path.join(folder, "keys")
    keys.write.parquet(path)
    yield path
    shutil.rmtree(folder, ignore_errors=True)


def force(df, col) -> list:
    """The same action for every case: rows per partition."""
    counts = df.select("key", col.alias("p")).groupBy("p").count().collect()
    assert sum(r["count"] for r in counts) == ROWS
    return counts


def run(benchmark, name: str, fn, *, group: str = GROUP, rounds: int = 5, baseline=False):
    benchmark.group = group
    benchmark.extra_info["items"] = ROWS
    if baseline:
        benchmark.extra_info["baseline"] = True
    result = benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=1)
    _results[name] = benchmark.stats.stats.median
    return result


# --- partitioning 10M keys ------------------------------------------------------------------


def test_kgroup_arrow_udf(benchmark, spark, keys):
    from spark_udfs import kafka_partition

    counts = run(
        benchmark, "kgroup arrow_udf", lambda: force(keys, kafka_partition("key", PARTITIONS))
    )
    _check_counts(spark, keys, counts)


def test_kgroup_map_in_arrow(benchmark, spark, keys):

    def fn(batches):
        for b in batches:
            parts = kgroup.partition_keys(b.column(0), PARTITIONS)
            yield pa.RecordBatch.from_arrays([b.column(0), pa.array(parts)], ["key", "p"])

    def go():
        counts = keys.mapInArrow(fn, "key string, p int").groupBy("p").count().collect()
        assert sum(r["count"] for r in counts) == ROWS
        return counts

    _check_counts(spark, keys, run(benchmark, "kgroup mapInArrow", go, rounds=3))


def test_kgroup_pandas_udf(benchmark, spark, keys):
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("int")
    def part(s: pd.Series) -> pd.Series:
        return pd.Series(kgroup.partition_keys(pa.Array.from_pandas(s), PARTITIONS))

    _check_counts(
        spark, keys, run(benchmark, "kgroup pandas_udf", lambda: force(keys, part("key")), rounds=3)
    )


def test_arrow_udf_floor(benchmark, keys):
    # The floor of the arrow_udf shape: keys go to Python, a constant int column comes back.
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("int")
    def zero(keys: pa.Array) -> pa.Array:
        return pa.array(np.zeros(len(keys), dtype=np.int32))

    run(benchmark, "arrow_udf floor (constant column)", lambda: force(keys, zero("key")))


def test_kgroup_arrow_udf_beside_noop_arrow_udf(spark, keys):
    """The restated target, measured so that drift cannot favour either side: rounds of the
    kgroup arrow_udf and the no-op arrow_udf alternate (7 pairs, the first pair a warm-up),
    and the ratio is the median of the pairs' ratios. Both are forced by ``sum(p)``, an
    action whose cost does not depend on the values (``groupBy(p)`` would favour the no-op's
    single group)."""
    import time

    from pyspark.sql import functions as F
    from pyspark.sql.functions import arrow_udf

    from spark_udfs import kafka_partition

    @arrow_udf("int")
    def zero(keys: pa.Array) -> pa.Array:
        return pa.array(np.zeros(len(keys), dtype=np.int32))

    def timed(col) -> float:
        t = time.perf_counter()
        keys.select(col.alias("p")).agg(F.sum("p")).collect()
        return time.perf_counter() - t

    ratios, ours, noops = [], [], []
    for i in range(7):
        a, b = timed(kafka_partition("key", PARTITIONS)), timed(zero("key"))
        if i:
            ours.append(a)
            noops.append(b)
            ratios.append(a / b)
    _pairs["kgroup arrow_udf"] = float(np.median(ours))
    _pairs["no-op arrow_udf"] = float(np.median(noops))
    _pairs["ratio"] = float(np.median(ratios))
    _pairs["ratio of medians"] = _pairs["kgroup arrow_udf"] / _pairs["no-op arrow_udf"]
    print(
        "\n  pairs (kgroup s, no-op s):",
        ", ".join(f"({a:.2f}, {b:.2f})" for a, b in zip(ours, noops, strict=True)),
    )


def test_arrow_floor(benchmark, keys):

    def fn(batches):
        for b in batches:
            zero = pa.array(np.zeros(b.num_rows, dtype=np.int32))
            yield pa.RecordBatch.from_arrays([b.column(0), zero], ["key", "p"])

    def go():
        counts = keys.mapInArrow(fn, "key string, p int").groupBy("p").count().collect()
        assert sum(r["count"] for r in counts) == ROWS
        return counts

    run(benchmark, "arrow floor", go, baseline=True)


def test_map_in_arrow_confluent_kafka(benchmark, spark, keys):

    def fn(batches):
        murmur2 = confluent_kafka.murmur2
        for b in batches:
            raw = b.column(0).cast(pa.binary()).to_pylist()
            parts = pa.array([murmur2(k, PARTITIONS) for k in raw], pa.int32())
            yield pa.RecordBatch.from_arrays([b.column(0), parts], ["key", "p"])

    def go():
        counts = keys.mapInArrow(fn, "key string, p int").groupBy("p").count().collect()
        assert sum(r["count"] for r in counts) == ROWS
        return counts

    _check_counts(spark, keys, run(benchmark, "mapInArrow + confluent_kafka", go))


def test_pandas_udf_confluent_kafka(benchmark, spark, keys):
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("int")
    def part(s: pd.Series) -> pd.Series:
        murmur2 = confluent_kafka.murmur2
        return pd.Series([murmur2(k.encode(), PARTITIONS) for k in s], dtype="int32")

    counts = run(
        benchmark, "pandas_udf + confluent_kafka", lambda: force(keys, part("key")), rounds=2
    )
    _check_counts(spark, keys, counts)


def test_row_udf_kafka_python(benchmark, spark, keys):
    from kafka.partitioner.default import murmur2
    from pyspark.sql.functions import udf

    @udf("int")
    def part(k: str) -> int:
        return (murmur2(k.encode()) & 0x7FFFFFFF) % PARTITIONS

    benchmark.group = GROUP
    benchmark.extra_info["items"] = ROWS
    # One round: it takes half a minute.
    counts = benchmark.pedantic(lambda: force(keys, part("key")), rounds=1, iterations=1)
    _results["row udf + kafka-python"] = benchmark.stats.stats.median
    _check_counts(spark, keys, counts)


def test_builtin_pmod_hash(benchmark, keys):
    from pyspark.sql import functions as F

    run(
        benchmark,
        "builtin pmod(hash)",
        lambda: force(keys, F.pmod(F.hash("key"), F.lit(PARTITIONS))),
        rounds=5,
    )


_expected: list | None = None


def _check_counts(spark, keys, counts) -> None:
    """Every Kafka-partitioning case must find the same rows per partition; the first also
    checks the kgroup UDF against confluent-kafka key by key on a sample."""
    global _expected
    got = sorted((r["p"], r["count"]) for r in counts)
    assert len(got) == PARTITIONS
    if _expected is None:
        from spark_udfs import kafka_partition

        sample = keys.limit(20_000).select("key", kafka_partition("key", PARTITIONS).alias("p"))
        for r in sample.collect():
            assert r["p"] == confluent_kafka.murmur2(r["key"].encode(), PARTITIONS)
        _expected = got
    assert got == _expected


# --- the pipeline ---------------------------------------------------------------------------


def test_pipeline_1_scan(benchmark, spark, parquet):
    from pyspark.sql import functions as F

    def go():
        # Sum the key lengths: a plain count would read only Parquet's row counts.
        got = spark.read.parquet(parquet).select(F.sum(F.length("key"))).collect()[0][0]
        assert got == 16 * ROWS

    run(benchmark, "pipeline: scan", go, group=PIPELINE, rounds=3)


def test_pipeline_2_partition(benchmark, spark, parquet):
    from spark_udfs import kafka_partition

    def go():
        force(spark.read.parquet(parquet), kafka_partition("key", PARTITIONS))

    run(benchmark, "pipeline: scan + partition udf", go, group=PIPELINE, rounds=3)


def test_pipeline_3_shuffle(benchmark, spark, parquet):
    from pyspark.sql import functions as F

    from spark_udfs import repartition_by_kafka_key

    def go():
        laid = repartition_by_kafka_key(spark.read.parquet(parquet), "key", PARTITIONS)
        got = laid.groupBy(F.spark_partition_id()).count().collect()
        assert sum(r["count"] for r in got) == ROWS

    run(benchmark, "pipeline: scan + udf + shuffle", go, group=PIPELINE, rounds=3)


def _pipeline(spark, parquet, top_keys: int):
    from spark_udfs.repartition import run_pipeline

    out = tempfile.mkdtemp(prefix="kgroup-bench-out-")
    try:
        result = run_pipeline(
            spark,
            input=parquet,
            key_column="key",
            partitions=PARTITIONS,
            output=os.path.join(out, "by-partition"),
            top_keys=top_keys,
        )
        assert result.report.total == ROWS
        return result
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_pipeline_4_write(benchmark, spark, parquet):
    result = run(
        benchmark,
        "pipeline: scan + udf + shuffle + write (no heavy keys)",
        lambda: _pipeline(spark, parquet, 0),
        group=PIPELINE,
        rounds=2,
    )
    benchmark.extra_info["steps"] = {k: round(v, 3) for k, v in result.timings.items()}


def test_pipeline_5_full(benchmark, spark, parquet):
    result = run(
        benchmark,
        "pipeline: whole run with skew report (10 heavy keys)",
        lambda: _pipeline(spark, parquet, 10),
        group=PIPELINE,
        rounds=2,
    )
    benchmark.extra_info["steps"] = {k: round(v, 3) for k, v in result.timings.items()}
    _results["pipeline steps"] = result.timings  # type: ignore[assignment]


class _Summary:
    """A plugin printing the medians, ratios and targets after pytest-benchmark's tables."""

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter) -> None:
        tr = terminalreporter
        if not _results and not _pairs:
            return
        tr.write_sep("=", "spark: medians and targets (issues 4 and 13)")
        floor = _results.get("arrow floor")
        for name, secs in _results.items():
            if isinstance(secs, dict):
                steps = ", ".join(f"{k} {v:.2f} s" for k, v in secs.items())
                tr.write_line(f"  {name:<56} {steps}")
                continue
            ratio = f"{secs / floor:6.2f}x the Arrow floor" if floor else ""
            tr.write_line(f"  {name:<56} {secs:8.2f} s  {ratio}")
        k = _results.get("kgroup arrow_udf", _pairs.get("kgroup arrow_udf"))
        noop = _results.get("arrow_udf floor (constant column)")
        confluent = _results.get("mapInArrow + confluent_kafka")
        row = _results.get("row udf + kafka-python")
        if k is None:
            return
        lines = []
        if _pairs:
            r = _pairs["ratio"]
            lines.append(
                (
                    r <= 1.05,
                    f"kgroup arrow_udf / no-op arrow_udf = {r:.3f} (<= 1.05; median of 6 "
                    f"interleaved pairs; medians {_pairs['kgroup arrow_udf']:.2f} s beside "
                    f"{_pairs['no-op arrow_udf']:.2f} s, their ratio "
                    f"{_pairs['ratio of medians']:.3f})",
                )
            )
        elif noop:
            lines.append(
                (k / noop <= 1.05, f"kgroup arrow_udf / no-op arrow_udf = {k / noop:.3f} (<= 1.05)")
            )
        if confluent:
            lines.append(
                (k < confluent, f"kgroup / mapInArrow+confluent_kafka = {k / confluent:.3f} (< 1)")
            )
        for ok, text in lines:
            tr.write_line(f"  {'MET' if ok else 'MISSED':<7}{text}")
        if row:
            tr.write_line(f"  (reference) kafka-python row UDF / kgroup = {row / k:.1f}x")


@pytest.fixture(scope="module", autouse=True)
def _summary(request):
    plugin = _Summary()
    request.config.pluginmanager.register(plugin, "kgroup-spark-summary")
    yield
