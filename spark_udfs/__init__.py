"""spark_udfs: Kafka's keyed partitioning on Spark, through kgroup.

- :func:`kafka_partition` is an Arrow-vectorised UDF: ``df.select(kafka_partition("key", 12))``.
- :func:`register` makes it callable from SQL: ``SELECT kafka_partition(key, 12) FROM t``.
- :func:`repartition_by_kafka_key` lays a DataFrame out so that Spark partition i holds
  exactly the rows of Kafka partition i.
- ``python -m spark_udfs.repartition`` is the pipeline: read, partition, write one folder per
  Kafka partition, report the skew.

The executors need ``kgroup`` (with pyarrow and numpy), not this package: the UDFs' code is
pickled by value, so spark_udfs itself travels with each job.

Spark 4.0 and later: importing spark_udfs with an older pyspark fails with an ImportError that
names the version. What later versions added is used where present (``arrow_udf``, 4.1; Arrow
batches for streaming writes, 4.1; admission control for Python stream readers, 4.2).
"""

from __future__ import annotations

import re
import sys

import pyspark

# MIN_SPARK is the oldest Spark that spark_udfs runs on: the Python Data Source API came in 4.0.
# pyproject.toml's [spark] extra says the same, and `make test-spark-compat` runs the Spark
# tests on the newest 4.0 release.
MIN_SPARK = (4, 0)


def spark_version(version: str) -> tuple[int, int]:
    """spark_version is the ``(major, minor)`` of a Spark version string such as ``4.0.5``,
    ``4.1.0.dev0`` or ``4.0.0-preview2``."""
    m = re.match(r"(\d+)\.(\d+)", version)
    if m is None:
        raise ValueError(f"not a Spark version: {version!r}")
    return int(m[1]), int(m[2])


if spark_version(pyspark.__version__) < MIN_SPARK:
    raise ImportError(
        f"spark_udfs needs Spark {'.'.join(map(str, MIN_SPARK))} or later; pyspark "
        f"{pyspark.__version__} is installed"
    )

# After the check, so that an older pyspark meets it first.
from pyspark import cloudpickle  # noqa: E402

from spark_udfs.frame import check_key_column, repartition_by_kafka_key, spark_buckets  # noqa: E402
from spark_udfs.udf import SQL_NAME, kafka_partition, partition_array, register  # noqa: E402

__all__ = [
    "MIN_SPARK",
    "SQL_NAME",
    "check_key_column",
    "kafka_partition",
    "partition_array",
    "register",
    "repartition_by_kafka_key",
    "spark_buckets",
    "spark_version",
]

# Ship this package's functions inside the pickled UDFs: executors then import only kgroup.
cloudpickle.register_pickle_by_value(sys.modules[__name__])
