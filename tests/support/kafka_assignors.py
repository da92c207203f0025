"""Apache Kafka's own server-side assignors (``range``, ``uniform``) on group specs: the harness
``tests/support/assignor_harness/ServerAssignors.java`` runs the group coordinator's
``RangeAssignor`` and ``UniformAssignor`` from Kafka's fetched jars (see its header for the
JSON it reads and prints).

The harness is compiled with ``javac`` once, into a cache folder named after a hash of its
source (beside the jars, :func:`support.apache_kafka.cache_dir`), so an edited source compiles
again and an unchanged one never does.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .apache_kafka import FAST_JVM, TOOLS_LOG4J, classpath, compiled, java

SOURCE = Path(__file__).resolve().parent / "assignor_harness" / "ServerAssignors.java"
MAIN = "ServerAssignors"


def build_dir() -> Path:
    """The folder of the compiled harness, compiled first if its source changed."""
    return compiled("server-assignors", [SOURCE], SOURCE.parent)


def run(groups: list[dict[str, Any]], *, timeout: float = 120) -> list[dict[str, Any]]:
    """Kafka's results for ``groups`` (the harness's input format): one dict per group, assignor
    and mode, in the harness's order."""
    build = build_dir()
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as specs:
        json.dump(groups, specs)
        specs.flush()
        got = subprocess.run(
            [
                java(),
                "-Xmx256m",
                *FAST_JVM,
                f"-Dlog4j2.configurationFile={TOOLS_LOG4J}",
                "-cp",
                classpath(build / "classes"),
                MAIN,
                specs.name,
            ],
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    if got.returncode != 0:
        err = got.stderr.decode(errors="replace")
        raise AssertionError(f"the assignor harness failed ({got.returncode}):\n{err}")
    return [json.loads(line) for line in got.stdout.decode("utf-8").splitlines() if line]
