"""Spark finds the kgroup data source through the installed module pyspark_kgroup, with no
register call (Spark 4's lookup of ``pyspark_*`` modules in its Python workers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.kgroup_broker import run_broker

pytestmark = [pytest.mark.network, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
import kgroup
from spark_udfs.session import get_session

bootstrap, topic = sys.argv[1], sys.argv[2]
spark = get_session("local[1]", progress=False, log_level="ERROR")
rows = (
    spark.read.format("kgroup")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", topic)
    .load()
    .collect()
)
print(sorted(bytes(r.value) for r in rows))  # bytearray before Spark 4.1
spark.stop()
"""


def test_format_kgroup_works_without_register():
    with run_broker() as b:
        bs = b.bootstrap_servers
        import kgroup

        with kgroup.Producer({"bootstrap.servers": bs}) as p:
            for i in range(3):
                p.produce("found", value=b"v%d" % i)
            p.flush(30)
        # Spark's workers see the repository root the way an installed wheel is seen.
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
        env["PYSPARK_PYTHON"] = sys.executable
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT, bs, "found"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.stdout.strip().splitlines()[-1] == "[b'v0', b'v1', b'v2']"
