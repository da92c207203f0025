"""spark_udfs: Kafka's keyed partitioning on Spark, through kgroup.

- :func:`kafka_partition` is an Arrow-vectorised UDF: ``df.select(kafka_partition("key", 12))``.
- :func:`register` makes it callable from SQL: ``SELECT kafka_partition(key, 12) FROM t``.
- :func:`repartition_by_kafka_key` lays a DataFrame out so that Spark partition i holds
  exactly the rows of Kafka partition i.
- ``python -m spark_udfs.repartition`` is the pipeline: read, partition, write one folder per
  Kafka partition, report the skew.

The executors need ``kgroup`` (with pyarrow and numpy), not this package: the UDFs' code is
pickled by value, so spark_udfs itself travels with each job.
"""

from __future__ import annotations

import sys

from pyspark import cloudpickle

from spark_udfs.frame import check_key_column, repartition_by_kafka_key, spark_buckets
from spark_udfs.udf import SQL_NAME, kafka_partition, partition_array, register

__all__ = [
    "SQL_NAME",
    "check_key_column",
    "kafka_partition",
    "partition_array",
    "register",
    "repartition_by_kafka_key",
    "spark_buckets",
]

# Ship this package's functions inside the pickled UDFs: executors then import only kgroup.
cloudpickle.register_pickle_by_value(sys.modules[__name__])
