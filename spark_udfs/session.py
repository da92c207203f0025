"""session: the SparkSession the pipeline runs in, local by default.

Under spark-submit the session (master, resources, shipped archives) comes from spark-submit;
run directly, the pipeline starts a local Spark whose Python workers run this interpreter
(so they import the same kgroup) and whose driver listens on 127.0.0.1 only.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DEFAULT_MASTER", "get_session", "is_local", "under_spark_submit"]

DEFAULT_MASTER = "local[*]"


def under_spark_submit() -> bool:
    """under_spark_submit is true when spark-submit launched this Python driver."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def is_local(master: str) -> bool:
    """is_local is true for Spark's in-process masters (``local``, ``local[4]``, ...)."""
    return master == "local" or master.startswith("local[")


def get_session(
    master: str | None = None,
    *,
    app_name: str = "kgroup",
    progress: bool = True,
    conf: dict[str, str] | None = None,
    log_level: str = "WARN",
) -> SparkSession:
    """get_session returns the running SparkSession or starts one on ``master``
    (``local[*]`` unless spark-submit chose one). ``progress`` shows Spark's console progress
    bar for stages that run longer than half a second; ``conf`` adds Spark settings (read when
    the session starts); ``log_level`` is the driver's log level (``WARN``, ``ERROR``, ...)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master is None and not under_spark_submit():
        master = DEFAULT_MASTER
    if master is not None:
        builder = builder.master(master)
        if is_local(master):
            # Workers must import the kgroup this driver imports; the driver is reachable
            # from this machine only.
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            builder = (
                builder.config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.ui.enabled", "false")
            )
    builder = builder.config("spark.ui.showConsoleProgress", "true" if progress else "false")
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    return spark
