"""One local SparkSession for every Spark test (starting one takes seconds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spark_udfs.session import get_session


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """A local[2] SparkSession bound to 127.0.0.1, without UI or progress bar, stopped at the
    end of the session. Its Python workers run this interpreter."""
    session = get_session(
        "local[2]",
        app_name="kgroup-tests",
        progress=False,
        conf={
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": "2",
            "spark.sql.session.timeZone": "UTC",
        },
        log_level="ERROR",
    )
    yield session
    session.stop()
