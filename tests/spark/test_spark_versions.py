"""The Spark versions spark_udfs runs on: 4.0 and later, refused below with the version named.
What later versions added is guarded where it is used (test_datasource, test_spark_udf);
`make test-spark-compat` runs these tests on the newest Spark 4.0 release."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import spark_udfs
from spark_udfs import MIN_SPARK, spark_version

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "want"),
    [("4.0.5", (4, 0)), ("4.1.0.dev0", (4, 1)), ("4.0.0-preview2", (4, 0)), ("10.2", (10, 2))],
)
def test_spark_version(text, want):
    assert spark_version(text) == want


def test_spark_version_refuses_what_is_not_a_version():
    with pytest.raises(ValueError, match="not a Spark version"):
        spark_version("master")


def test_the_running_spark_is_supported():
    import pyspark

    assert spark_version(pyspark.__version__) >= MIN_SPARK == (4, 0)
    assert spark_udfs.MIN_SPARK is MIN_SPARK


def test_an_older_pyspark_is_refused_at_import_naming_the_version(tmp_path):
    # A pyspark 3.5 stand-in ahead of the real one: importing spark_udfs must stop at the check.
    (tmp_path / "pyspark").mkdir()
    (tmp_path / "pyspark" / "__init__.py").write_text('__version__ = "3.5.3"\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    out = subprocess.run(
        [sys.executable, "-c", "import spark_udfs"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0
    assert (
        "ImportError: spark_udfs needs Spark 4.0 or later; pyspark 3.5.3 is installed" in out.stderr
    )
