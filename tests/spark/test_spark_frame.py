"""repartition_by_kafka_key: Spark partition i holds exactly the rows of Kafka partition i."""

from __future__ import annotations

import random

import numpy as np
import pytest
from pyspark.sql import functions as F

import kgroup
from kgroup.errors import InvalidArgument, InvalidType
from spark_udfs import repartition_by_kafka_key, spark_buckets
from spark_udfs.frame import spark_hash_int


def test_spark_hash_int_is_sparks_hash(spark):
    rng = np.random.default_rng(1)
    values = np.concatenate(
        [np.arange(-50, 50), [2**31 - 1, -(2**31)], rng.integers(-(2**31), 2**31, 500)]
    ).astype(np.int64)
    df = spark.createDataFrame([(int(v),) for v in values], "v int")
    got = [r[0] for r in df.select(F.hash("v")).collect()]
    assert got == spark_hash_int(values).tolist()


@pytest.mark.parametrize("n", [1, 2, 12, 97, 1000, 4099])
def test_buckets_land_in_their_partition_by_sparks_own_hash(spark, n):
    buckets = spark_buckets(n)
    assert len(buckets) == n
    df = spark.createDataFrame([(p, b) for p, b in enumerate(buckets)], "p int, b int")
    wrong = df.where(F.pmod(F.hash("b"), F.lit(n)) != F.col("p")).count()
    assert wrong == 0


def by_partition(df) -> list[list[tuple]]:
    """The rows of every Spark partition, in order (read in the JVM: no Python task)."""
    parts: list[list[tuple]] = [[] for _ in range(df.rdd.getNumPartitions())]
    for r in df.select(F.spark_partition_id().alias("__pid"), *df.columns).collect():
        parts[r[0]].append(tuple(r)[1:])
    return parts


def keyed(spark, keys):
    rows = [(k, i) for i, k in enumerate(keys)]
    return spark.createDataFrame(rows, "key string, v long")


def test_every_row_of_spark_partition_i_is_kafka_partition_i(spark):
    rng = random.Random(3)
    keys = [f"user-{rng.randrange(2000)}" for _ in range(6000)]
    df = keyed(spark, keys).repartition(5)
    out = repartition_by_kafka_key(df, "key", 12)
    assert out.columns == ["key", "v"]
    parts = by_partition(out)
    assert len(parts) == 12
    seen = []
    for i, rows in enumerate(parts):
        for key, v in rows:
            assert kgroup.partition_for_key(key, 12) == i, (key, i)
            seen.append(v)
    assert sorted(seen) == list(range(len(keys)))


def test_empty_kafka_partitions_stay_empty_and_in_place(spark):
    # Three keys over 16 partitions: 13 empty Kafka partitions; the others must not move.
    keys = ["a", "b", "c"] * 50
    want = {k: kgroup.partition_for_key(k, 16) for k in "abc"}
    out = repartition_by_kafka_key(keyed(spark, keys), "key", 16, partition_column="p")
    parts = by_partition(out)
    assert len(parts) == 16
    for i, rows in enumerate(parts):
        assert {key for key, _, _ in rows} == {k for k, p in want.items() if p == i}
        assert all(p == i for _, _, p in rows)
    assert sum(len(r) for r in parts) == 150


def test_more_partitions_than_rows_and_one_partition(spark):
    out = repartition_by_kafka_key(keyed(spark, ["x", "y"]), "key", 300)
    parts = by_partition(out)
    assert len(parts) == 300
    assert [r[0] for r in parts[kgroup.partition_for_key("x", 300)]] == ["x"]
    assert sum(len(p) for p in parts) == 2
    one = by_partition(repartition_by_kafka_key(keyed(spark, list("abcdef")), "key", 1))
    assert len(one) == 1 and len(one[0]) == 6


def test_binary_keys_other_hashes_and_adaptive_execution(spark):
    rng = random.Random(5)
    keys = [bytes(rng.randrange(256) for _ in range(rng.randrange(20))) for _ in range(3000)]
    df = spark.createDataFrame([(k,) for k in keys], "key binary")
    for hash in ("crc32", "fnv1a"):
        parts = by_partition(repartition_by_kafka_key(df, "key", 7, hash=hash))
        assert len(parts) == 7
        for i, rows in enumerate(parts):
            assert all(kgroup.partition_for_key(bytes(k), 7, hash=hash) == i for (k,) in rows)


def test_sort_within_sorts_each_partition_by_key(spark):
    keys = [f"k{random.Random(i).randrange(10**6)}" for i in range(2000)]
    parts = by_partition(repartition_by_kafka_key(keyed(spark, keys), "key", 5, sort_within=True))
    for i, rows in enumerate(parts):
        got = [k for k, _ in rows]
        assert got == sorted(got)
        assert all(kgroup.partition_for_key(k, 5) == i for k in got)


def test_null_keys_spread_or_drop(spark):
    keys = [None] * 400 + ["a"] * 10
    df = keyed(spark, keys)
    spread = by_partition(repartition_by_kafka_key(df, "key", 4, partition_column="p"))
    nulls_per_partition = [sum(1 for k, _, _ in rows if k is None) for rows in spread]
    assert sum(nulls_per_partition) == 400
    assert min(nulls_per_partition) > 50  # spread over every partition, by a hash of the row
    for i, rows in enumerate(spread):
        assert all(p == i for _, _, p in rows)
    # Deterministic: a second run puts every null-key row in the same place.
    again = by_partition(repartition_by_kafka_key(df, "key", 4, partition_column="p"))
    assert [sorted(r, key=repr) for r in again] == [sorted(r, key=repr) for r in spread]
    dropped = by_partition(repartition_by_kafka_key(df, "key", 4, null_keys="drop"))
    assert sum(len(r) for r in dropped) == 10
    assert len(dropped[kgroup.partition_for_key("a", 4)]) == 10


def test_bad_arguments_fail_before_any_job(spark):
    df = spark.createDataFrame([("a", 1)], "Key string, n int")
    with pytest.raises(InvalidArgument, match=r"'key' not found \(did you mean 'Key'\?\)"):
        repartition_by_kafka_key(df, "key", 4)
    with pytest.raises(InvalidType, match="key column 'n' is int"):
        repartition_by_kafka_key(df, "n", 4)
    with pytest.raises(InvalidArgument, match="between 1 and"):
        repartition_by_kafka_key(df, "Key", 0)
    with pytest.raises(InvalidArgument, match="unknown hash"):
        repartition_by_kafka_key(df, "Key", 4, hash="sha1")
    with pytest.raises(InvalidArgument, match="already exists"):
        repartition_by_kafka_key(df, "Key", 4, partition_column="n")
    with pytest.raises(InvalidArgument, match="null_keys"):
        repartition_by_kafka_key(df, "Key", 4, null_keys="keep")  # type: ignore[arg-type]


def test_bucket_table_is_bounded():
    from spark_udfs.frame import MAX_PARTITIONS

    buckets = spark_buckets(100_000)
    assert len(set(buckets)) == 100_000 and min(buckets) >= 0
    with pytest.raises(InvalidArgument, match="at most"):
        spark_buckets(MAX_PARTITIONS + 1)
