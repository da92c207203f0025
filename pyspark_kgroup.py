"""pyspark_kgroup: Spark finds the ``kgroup`` data source here with no register call.

Spark 4 (``pyspark.sql.worker.lookup_data_sources``) imports every installed top-level module
whose name starts with ``pyspark_`` and registers its ``DefaultSource`` under the source's
``name()``: with kgroup's wheel installed (extra ``[spark]``), ``spark.read.format("kgroup")``
works in any session. :func:`spark_udfs.register` does the same by hand.
"""

from __future__ import annotations

from spark_udfs.datasource import KafkaDataSource as DefaultSource

__all__ = ["DefaultSource"]
