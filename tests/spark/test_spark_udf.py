"""kafka_partition as a Spark UDF agrees with kgroup.partition_for_key and Kafka's clients."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import confluent_kafka
import pyarrow as pa
import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2
from pyspark.errors import PythonException
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType

import kgroup
import spark_udfs
from kgroup.errors import InvalidArgument, InvalidType
from spark_udfs import kafka_partition, partition_array

HASHES = ("murmur2", "crc32", "fnv1a")
COUNTS = (1, 3, 12, 1000, 2**31 - 1)


def sample_keys(count: int = 3000, seed: int = 4) -> list[bytes | None]:
    """Random keys as bytes: empty, short, long, UTF-8 text in several scripts, arbitrary
    binary (every byte value, so the sign of tail bytes matters), and nulls."""
    rng = random.Random(seed)
    text = "aZ09 -_éßøπЖ中文日本語한국어😀🚀\u0000\x7f"
    keys: list[bytes | None] = [b"", None, b"\x00", b"\xff", b"\x80" * 3, "😀".encode()]
    while len(keys) < count:
        kind = rng.random()
        if kind < 0.05:
            keys.append(None)
        elif kind < 0.5:
            n = rng.choice([0, 1, 2, 3, 4, 5, 7, 8, 16, 17, 100, 1000])
            keys.append("".join(rng.choice(text) for _ in range(n)).encode())
        else:
            n = rng.choice([0, 1, 2, 3, 4, 5, 15, 16, 31, 64, 500])
            keys.append(bytes(rng.randrange(256) for _ in range(n)))
    return keys


def as_text(key: bytes | None) -> str | None:
    return None if key is None else key.decode("utf-8", errors="replace")


@pytest.fixture(scope="module")
def frame(spark):
    keys = sample_keys()
    rows = [(i, as_text(k), k) for i, k in enumerate(keys)]
    schema = StructType(
        [
            StructField("id", LongType(), nullable=False),
            StructField("s", StringType()),
            StructField("b", BinaryType()),
        ]
    )
    return spark.createDataFrame(rows, schema).repartition(3), rows


@pytest.mark.parametrize("hash", HASHES)
def test_udf_matches_partition_for_key_on_every_row(frame, hash):
    df, rows = frame
    cols = [F.col("id")]
    for n in COUNTS:
        cols.append(kafka_partition("s", n, hash).alias(f"s{n}"))
        cols.append(kafka_partition(F.col("b"), n, hash).alias(f"b{n}"))
    got = {r["id"]: r for r in df.select(*cols).collect()}
    assert len(got) == len(rows)
    for i, s, b in rows:
        for n in COUNTS:
            want_s = kgroup.partition_for_key(s, n, hash=hash)
            want_b = kgroup.partition_for_key(b, n, hash=hash)
            assert got[i][f"s{n}"] == (None if want_s == -1 else want_s), (s, n)
            assert got[i][f"b{n}"] == (None if want_b == -1 else want_b), (b, n)


def test_udf_agrees_with_kafka_clients(frame):
    # Java's producer is the spec; confluent-kafka's murmur2 is librdkafka's Java-compatible
    # murmur2_random, kafka-python's is a port of Java's (unsigned: mask to 31 bits).
    df, rows = frame
    got = {r["id"]: r["p"] for r in df.select("id", kafka_partition("b", 12).alias("p")).collect()}
    for i, _, b in rows:
        if b is None:
            assert got[i] is None
        else:
            assert got[i] == confluent_kafka.murmur2(b, 12)
            assert got[i] == (kafka_python_murmur2(b) & 0x7FFFFFFF) % 12


def test_udf_across_small_batches_and_large_var_types(spark, frame):
    # Many Arrow batches per task (nulls in some of them) and Spark's large_string/large_binary.
    df, rows = frame
    want = {i: kgroup.partition_for_key(b, 7) for i, _, b in rows}
    conf = {
        "spark.sql.execution.arrow.maxRecordsPerBatch": "7",
        "spark.sql.execution.arrow.useLargeVarTypes": "true",
    }
    old = {k: spark.conf.get(k, None) for k in conf}
    try:
        for k, v in conf.items():
            spark.conf.set(k, v)
        got = df.select("id", kafka_partition("b", 7).alias("p")).collect()
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
    assert {r["id"]: (-1 if r["p"] is None else r["p"]) for r in got} == want


def test_sql_registration(spark, frame):
    df, rows = frame
    spark_udfs.register(spark)
    df.createOrReplaceTempView("keys")
    got = spark.sql(
        "SELECT id, kafka_partition(s, 12) AS m, kafka_partition(b, 12, 'crc32') AS c, "
        "kafka_partition(b, CAST(id % 5 + 1 AS INT)) AS v FROM keys"
    ).collect()
    by_id = {i: (s, b) for i, s, b in rows}
    for r in got:
        s, b = by_id[r["id"]]
        null = {-1: None}
        want_m = kgroup.partition_for_key(s, 12)
        want_c = kgroup.partition_for_key(b, 12, hash="crc32")
        want_v = kgroup.partition_for_key(b, r["id"] % 5 + 1)
        assert r["m"] == null.get(want_m, want_m)
        assert r["c"] == null.get(want_c, want_c)
        assert r["v"] == null.get(want_v, want_v)


def test_sql_rejects_bad_arguments_at_run_time(spark):
    spark_udfs.register(spark)
    with pytest.raises(PythonException, match="num_partitions must be between 1"):
        spark.sql("SELECT kafka_partition('k', 0)").collect()
    with pytest.raises(PythonException, match="unknown hash 'md5'"):
        spark.sql("SELECT kafka_partition('k', 4, 'md5')").collect()


def test_arguments_are_checked_before_any_job():
    with pytest.raises(InvalidArgument, match="between 1 and"):
        kafka_partition("k", 0)
    with pytest.raises(InvalidArgument, match="between 1 and"):
        kafka_partition("k", 2**31)
    with pytest.raises(InvalidType):
        kafka_partition("k", 12.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidType):
        kafka_partition("k", True)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="unknown hash 'murmur3'"):
        kafka_partition("k", 12, "murmur3")


def test_non_key_column_fails_with_a_clear_error(spark):
    with pytest.raises(PythonException, match="keys must be binary or string"):
        spark.range(3).select(kafka_partition("id", 4)).collect()


def test_partition_array_turns_null_keys_into_nulls():
    keys = pa.array(["a", None, "", None], pa.large_string())
    got = partition_array(keys, 12, "murmur2")
    assert got.type == pa.int32()
    assert got.to_pylist() == [kgroup.partition_for_key("a", 12), None, 9, None]
    assert partition_array(pa.array([], pa.binary()), 12, "murmur2").to_pylist() == []


def test_udf_code_travels_by_value(tmp_path):
    # Executors need kgroup, not spark_udfs: the UDF unpickles where spark_udfs cannot be
    # imported (a fresh interpreter outside the repository).
    from pyspark import cloudpickle
    from pyspark.util import PythonEvalType

    from spark_udfs.udf import _udf

    udf = _udf(12, "murmur2")
    payload = cloudpickle.dumps(udf.func)
    # Spark 4.0's form of the UDF (a pandas_udf) takes and gives pandas Series.
    pandas = udf.evalType == PythonEvalType.SQL_SCALAR_PANDAS_UDF
    code = (
        "import pickle, sys, pyarrow as pa\n"
        "assert 'spark_udfs' not in sys.modules\n"
        "try:\n    import spark_udfs\nexcept ImportError:\n    pass\n"
        "else:\n    raise SystemExit('spark_udfs importable')\n"
        "f = pickle.loads(sys.stdin.buffer.read())\n"
        "keys = pa.array(['a', None, ''])\n"
        f"print(pa.array(f(keys.to_pandas() if {pandas} else keys)).to_pylist())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=payload,
        capture_output=True,
        cwd=tmp_path,
        env=env,
        check=True,
    )
    assert out.stdout.decode().strip() == str([kgroup.partition_for_key("a", 12), None, 9])


def test_the_spark_4_0_form_gives_the_same_partitions(spark, frame):
    # Spark 4.0 has no arrow_udf: kafka_partition runs there as a pandas_udf that turns each
    # batch back into Arrow. Every Spark 4 has pandas_udf, so that form runs on this one too.
    from spark_udfs.udf import _pandas_udf, _sql_partitions

    df, rows = frame

    def by_pandas(keys: pa.Array) -> pa.Array:
        return partition_array(keys, 12, "murmur2")

    udf = _pandas_udf(by_pandas)
    got = {r["id"]: r for r in df.select("id", udf("s").alias("s"), udf("b").alias("b")).collect()}
    spark.udf.register("kafka_partition_by_pandas", _pandas_udf(_sql_partitions))
    df.createOrReplaceTempView("keys_by_pandas")
    sql = spark.sql(
        "SELECT id, kafka_partition_by_pandas(b, 7, 'crc32') AS c, "
        "kafka_partition_by_pandas(s, CAST(id % 5 + 1 AS INT)) AS v FROM keys_by_pandas"
    ).collect()
    null = {-1: None}
    for i, s, b in rows:
        want_s, want_b = kgroup.partition_for_key(s, 12), kgroup.partition_for_key(b, 12)
        assert got[i]["s"] == null.get(want_s, want_s)
        assert got[i]["b"] == null.get(want_b, want_b)
    by_id = {i: (s, b) for i, s, b in rows}
    for r in sql:
        s, b = by_id[r["id"]]
        want_c = kgroup.partition_for_key(b, 7, hash="crc32")
        want_v = kgroup.partition_for_key(s, r["id"] % 5 + 1)
        assert r["c"] == null.get(want_c, want_c)
        assert r["v"] == null.get(want_v, want_v)


def test_the_spark_4_0_form_names_pandas_when_it_is_missing(monkeypatch):
    from spark_udfs.udf import _pandas_udf

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"kafka_partition needs pandas on Spark 4\.0"):
        _pandas_udf(partition_array)
