"""kafka_partition: Kafka's keyed partitioner as an Arrow-vectorised Spark UDF.

Spark hands the UDF one Arrow batch of keys at a time (``arrow_udf``: no pandas, no per-row
Python objects); ``kgroup.partition_keys`` reads the batch's buffers in place and hashes every
key with the GIL released; the partitions go back to Spark as one Arrow int32 array. A null key
gives null: Kafka's producer does not hash a null key, its null-key partitioner picks a
partition when the record is sent.

Spark 4.0 has no ``arrow_udf`` (Spark 4.1 added it): there the same function runs inside a
``pandas_udf`` that turns each pandas batch back into Arrow, which needs pandas and costs a
conversion each way, with the same results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

import kgroup
from kgroup.errors import InvalidArgument, InvalidType

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

__all__ = ["SQL_NAME", "check_hash", "check_partitions", "kafka_partition", "register"]

SQL_NAME = "kafka_partition"


def check_partitions(num_partitions: object) -> int:
    """check_partitions returns ``num_partitions`` as an int, or raises InvalidArgument /
    InvalidType as Kafka's producer would refuse a topic without partitions."""
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int | np.integer):
        raise InvalidType(f"num_partitions must be an int, got {type(num_partitions).__name__}")
    n = int(num_partitions)
    if n < 1 or n > 2**31 - 1:
        raise InvalidArgument(f"num_partitions must be between 1 and 2147483647, got {n}")
    return n


def check_hash(hash: object) -> str:
    """check_hash returns ``hash`` if it names one of kgroup's keyed partitioners."""
    if hash not in kgroup.HASH_NAMES:
        names = ", ".join(kgroup.HASH_NAMES)
        raise InvalidArgument(f"unknown hash {hash!r}: expected one of {names}")
    return str(hash)


def partition_array(keys: pa.Array, num_partitions: int, hash: str) -> pa.Array:
    """partition_array is the Kafka partition of every key of an Arrow array, as an Arrow
    int32 array with null where the key is null. The keys are read in place."""
    parts = kgroup.partition_keys(keys, num_partitions, hash=hash)
    if keys.null_count:
        return pa.array(parts, mask=parts < 0)
    # A numpy int32 array without a mask becomes an Arrow array without a copy.
    return pa.array(parts)


def _arrow_udf(func: Callable[..., pa.Array]) -> Any:
    """_arrow_udf is ``func`` (Arrow arrays in, an Arrow int32 array out) as a vectorised
    Spark UDF returning IntegerType: an ``arrow_udf`` on Spark 4.1+, a ``pandas_udf`` that
    converts each batch to Arrow and back on Spark 4.0. ``.func`` is the function Spark
    pickles and calls."""
    from pyspark.sql.types import IntegerType

    try:
        from pyspark.sql.functions import arrow_udf
    except ImportError:  # Spark 4.0
        return _pandas_udf(func)
    return arrow_udf(func, IntegerType())


def _pandas_udf(func: Callable[..., pa.Array]) -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            "kafka_partition needs pandas on Spark 4.0 (Spark 4.1 and later run it with "
            "arrow_udf, without pandas): pip install pandas"
        ) from None
    from pyspark.sql.functions import pandas_udf
    from pyspark.sql.types import IntegerType

    nullable_int32 = {pa.int32(): pd.Int32Dtype()}.get

    def on_pandas(*cols: Any) -> Any:
        arrays = []
        for c in cols:
            a = pa.Array.from_pandas(c)
            # A batch of nulls only has no type of its own: its keys are binary.
            arrays.append(a.cast(pa.binary()) if a.type == pa.null() else a)
        return func(*arrays).to_pandas(types_mapper=nullable_int32)

    # pandas_udf tells a Series-to-Series UDF by its type hints; pandas is imported here only.
    on_pandas.__annotations__ = {"cols": pd.Series, "return": pd.Series}
    on_pandas.__name__ = on_pandas.__qualname__ = func.__name__
    return pandas_udf(on_pandas, IntegerType())  # type: ignore[call-overload]


@functools.lru_cache(maxsize=256)
def _udf(num_partitions: int, hash: str):

    # num_partitions and hash travel inside the pickled function, not as literal columns:
    # a literal column would cross the Arrow boundary once per row.
    def kafka_partition(keys: pa.Array) -> pa.Array:
        return partition_array(keys, num_partitions, hash)

    return _arrow_udf(kafka_partition)


def kafka_partition(col: Column | str, num_partitions: int, hash: str = "murmur2") -> Column:
    """kafka_partition is a Column holding the partition Kafka's producer sends each key of
    ``col`` to, in a topic of ``num_partitions`` partitions: exactly
    ``kgroup.partition_for_key(key, num_partitions, hash=hash)``, or null for a null key.

    ``col`` is a string or binary column (a name or a Column); a string key is hashed as its
    UTF-8 bytes, as Java's StringSerializer sends it. ``hash`` is ``murmur2`` (Java's
    producer and most clients), ``crc32`` (librdkafka's default ``consistent``) or ``fnv1a``.
    The arguments are checked here, before any Spark job runs.
    """
    n = check_partitions(num_partitions)
    h = check_hash(hash)
    return _udf(n, h)(col)


def _sql_partitions(keys: pa.Array, num_partitions: pa.Array, hash: pa.Array = None) -> pa.Array:  # type: ignore[assignment]
    # From SQL the partition count and hash arrive as columns (usually literals, so one
    # distinct value per batch); rows that share them are hashed together.
    if num_partitions.null_count:
        raise InvalidArgument("kafka_partition: num_partitions must not be null")
    counts = num_partitions.to_numpy(zero_copy_only=False)
    if hash is None:
        hashes = None
    elif hash.null_count:
        raise InvalidArgument("kafka_partition: hash must not be null")
    else:
        hashes = np.asarray(hash.to_pylist(), dtype=object)
    if hashes is None or (len(hashes) and (hashes == hashes[0]).all()):
        h = "murmur2" if hashes is None or not len(hashes) else check_hash(hashes[0])
        if not len(counts) or (counts == counts[0]).all():
            n = check_partitions(int(counts[0])) if len(counts) else 1
            return partition_array(keys, n, h)
        hashes = np.full(len(keys), h, dtype=object)
    out = np.empty(len(keys), dtype=np.int32)
    for n, h in {(int(c), str(x)) for c, x in zip(counts, hashes, strict=True)}:
        rows = np.flatnonzero((counts == n) & (hashes == h))
        out[rows] = kgroup.partition_keys(
            keys.take(pa.array(rows)), check_partitions(n), hash=check_hash(h)
        )
    return pa.array(out, mask=out < 0)


def register(spark: SparkSession, name: str = SQL_NAME) -> None:
    """register makes ``kafka_partition(key, num_partitions[, hash])`` callable from Spark SQL
    in ``spark``'s session: the same function as :func:`kafka_partition`, with the partition
    count (and optionally the hash name) as SQL expressions, usually literals.
    """
    spark.udf.register(name, _arrow_udf(_sql_partitions))
    from pyspark.errors import AnalysisException

    from spark_udfs.datasource import KafkaDataSource

    try:
        spark.dataSource.register(KafkaDataSource)
    except AnalysisException as e:
        # Spark 4.0 refuses a second source of one name (4.1+ replaces it): kgroup's is there
        # already, from an earlier register() or found through pyspark_kgroup.
        if e.getCondition() != "DATA_SOURCE_ALREADY_EXISTS":
            raise
