"""repartition_by_kafka_key: a DataFrame whose Spark partition i holds Kafka partition i.

Spark's only DataFrame partitioner with a fixed partition count is hash partitioning:
``repartition(N, e)`` puts a row in Spark partition ``pmod(murmur3(e, seed 42), N)``
(Spark's HashPartitioning.partitionIdExpression). Repartitioning by the Kafka partition
number itself would scatter Kafka partitions over Spark partitions. Instead each Kafka
partition p is given a *bucket*: an int that Spark's own hash sends to partition p. The table
of buckets is computed once on the driver (:func:`spark_buckets`), the rows are shuffled by
their bucket, and Spark partition p then holds exactly the rows of Kafka partition p, whatever
partitions are empty. A shuffle with an explicit partition count is never coalesced or split
by adaptive query execution, so the count stays N.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

from kgroup.errors import InvalidArgument, InvalidType
from spark_udfs.udf import check_hash, check_partitions, kafka_partition

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType

__all__ = [
    "MAX_PARTITIONS",
    "NullKeys",
    "check_key_column",
    "repartition_by_kafka_key",
    "spark_buckets",
]

NullKeys = Literal["spread", "drop"]

# Spark's Murmur3Hash expression: Murmur3_x86_32 with seed 42.
_SEED = 42
_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def spark_hash_int(values: np.ndarray) -> np.ndarray:
    """spark_hash_int is Spark SQL's ``hash(v)`` of int (IntegerType) values: Murmur3_x86_32's
    hashInt with Spark's seed 42, as signed int32."""
    k1 = values.astype(np.int64).astype(np.uint32)
    with np.errstate(over="ignore"):
        k1 = _rotl(k1 * _C1, 15) * _C2
        h1 = np.uint32(_SEED) ^ k1
        h1 = _rotl(h1, 13) * np.uint32(5) + np.uint32(0xE6546B64)
        h1 ^= np.uint32(4)
        h1 ^= h1 >> np.uint32(16)
        h1 *= np.uint32(0x85EBCA6B)
        h1 ^= h1 >> np.uint32(13)
        h1 *= np.uint32(0xC2B2AE35)
        h1 ^= h1 >> np.uint32(16)
    return h1.view(np.int32)


# MAX_PARTITIONS bounds the Spark partitions repartition_by_kafka_key lays out (Spark itself
# struggles far below it; Kafka clusters hold a few hundred thousand partitions in all).
MAX_PARTITIONS = 1 << 20


def spark_buckets(num_partitions: int) -> list[int]:
    """spark_buckets is, for every partition p of ``num_partitions``, the smallest
    non-negative int b with ``pmod(hash(b), num_partitions) == p`` in Spark SQL: the value
    whose hash partitioning lands in Spark partition p. Deterministic; ``num_partitions`` is
    at most MAX_PARTITIONS."""
    n = check_partitions(num_partitions)
    if n > MAX_PARTITIONS:
        raise InvalidArgument(
            f"num_partitions must be at most {MAX_PARTITIONS} to lay out Spark partitions, got {n}"
        )
    buckets = np.full(n, -1, dtype=np.int64)
    missing = n
    start = 0
    while missing:
        # Blocks of a few times n find a preimage of every partition within about ln(n)
        # blocks (the coupon collector's bound); memory stays bounded.
        block = np.arange(start, start + min(max(4096, 4 * n), 1 << 22), dtype=np.int64)
        if block[-1] > 2**31 - 1:  # pragma: no cover - never reached for n <= MAX_PARTITIONS
            raise InvalidArgument(f"no int hashes to every one of {n} partitions")
        parts = spark_hash_int(block).astype(np.int64) % n
        # The first value of each partition in this block, for partitions still missing.
        order = np.argsort(parts, kind="stable")
        first = np.ones(len(order), dtype=bool)
        first[1:] = parts[order][1:] != parts[order][:-1]
        ps, vs = parts[order][first], block[order][first]
        new = buckets[ps] < 0
        buckets[ps[new]] = vs[new]
        missing -= int(new.sum())
        start += len(block)
    return buckets.tolist()


def check_key_column(df: DataFrame, key_col: str) -> DataType:
    """check_key_column returns the type of ``df``'s key column, or raises InvalidArgument
    when there is none of that name and InvalidType when it is neither string nor binary.
    Reads only the schema: no Spark job runs."""
    from pyspark.sql.types import BinaryType, StringType

    if not isinstance(key_col, str):
        raise InvalidType(f"key_col must be a column name, got {type(key_col).__name__}")
    fields = {f.name: f for f in df.schema.fields}
    field = fields.get(key_col)
    if field is None:
        folded = [f for f in fields if f.lower() == key_col.lower()]
        hint = f" (did you mean {folded[0]!r}?)" if folded else ""
        names = ", ".join(fields) or "none"
        raise InvalidArgument(f"key column {key_col!r} not found{hint}; the columns are: {names}")
    if not isinstance(field.dataType, StringType | BinaryType):
        raise InvalidType(
            f"key column {key_col!r} is {field.dataType.simpleString()}: Kafka partitions "
            "the serialized key bytes, so the key column must be string or binary "
            "(cast it to the bytes your producer's key serializer writes)"
        )
    return field.dataType


def repartition_by_kafka_key(
    df: DataFrame,
    key_col: str,
    num_partitions: int,
    *,
    sort_within: bool = False,
    hash: str = "murmur2",
    partition_column: str | None = None,
    null_keys: NullKeys = "spread",
) -> DataFrame:
    """repartition_by_kafka_key returns ``df`` in exactly ``num_partitions`` Spark partitions,
    where Spark partition i holds exactly the rows whose key Kafka's producer sends to
    partition i (``kgroup.partition_for_key(key, num_partitions, hash=hash)``); a partition
    that no key maps to is empty. ``sort_within`` sorts each partition by key.

    ``partition_column``, when given, names a new int column holding each row's partition.
    Rows with a null key have no partition of their own (the producer's null-key partitioner
    picks one at send time): ``null_keys="spread"`` spreads them over all partitions by a
    hash of the row (deterministic, so task retries agree), ``"drop"`` drops them.

    Raises InvalidArgument / InvalidType, before any Spark job, for a missing key column, a
    key column that is neither string nor binary, ``num_partitions < 1``, an unknown hash, or
    a ``partition_column`` that already exists.
    """
    from pyspark.sql import functions as F

    n = check_partitions(num_partitions)
    h = check_hash(hash)
    if n > MAX_PARTITIONS:
        raise InvalidArgument(f"num_partitions must be at most {MAX_PARTITIONS}, got {n}")
    check_key_column(df, key_col)
    if null_keys not in ("spread", "drop"):
        raise InvalidArgument(f"null_keys must be 'spread' or 'drop', got {null_keys!r}")
    names = set(df.columns)
    if partition_column is not None and partition_column in names:
        raise InvalidArgument(f"partition column {partition_column!r} already exists in the data")
    tmp = "__kgroup_partition"
    while tmp in names:
        tmp += "_"

    key = F.col(f"`{key_col}`")
    part = kafka_partition(key, n, h)
    if null_keys == "drop":
        df = df.where(key.isNotNull())
    else:
        # Map columns are not hashable in Spark SQL; every other column takes part.
        hashable = [F.col(f"`{f.name}`") for f in df.schema.fields if not _has_map(f.dataType)]
        spread = F.pmod(F.hash(*hashable), F.lit(n)) if hashable else F.lit(0)
        part = F.when(key.isNull(), spread).otherwise(part)
    out = df.withColumn(tmp, part)
    bucket = F.element_at(F.array(*[F.lit(b) for b in spark_buckets(n)]), F.col(tmp) + 1)
    out = out.repartition(n, bucket)
    if sort_within:
        out = out.sortWithinPartitions(key)
    if partition_column is None:
        return out.drop(tmp)
    return out.withColumnRenamed(tmp, partition_column)


def _has_map(t: DataType) -> bool:
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(t, MapType):
        return True
    if isinstance(t, ArrayType):
        return _has_map(t.elementType)
    if isinstance(t, StructType):
        return any(_has_map(f.dataType) for f in t.fields)
    return False
