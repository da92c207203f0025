"""Spark's own JVM Kafka connector (``spark-sql-kafka-0-10_2.13``) for the benchmarks: its jars
fetched once from Maven Central with ``mvn`` (bench/spark_kafka_ref/pom.xml) into a cache
outside the repository (``$KGROUP_CACHE`` or ``~/.cache/kgroup``, beside Apache Kafka's jars),
then handed to a new SparkSession through ``spark.jars``.

The connector's version should equal pyspark's (Spark's internal APIs move between minor
versions). When Maven Central does not serve that version (pyspark 4.3.0 is on PyPI, Spark's
4.3.0 jars are not, when this was written), the newest x.y.0 of an earlier minor that Central
serves is taken and :func:`connector_version` says so; ``KGROUP_SPARK_KAFKA_VERSION`` picks one.
Only the jars pyspark does not ship go to Spark: the connector, its token provider,
kafka-clients (Spark's own choice, 3.9.x for Spark 4) and commons-pool2.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

POM = Path(__file__).resolve().parent / "spark_kafka_ref" / "pom.xml"
WANTED = (
    "spark-sql-kafka-0-10_2.13-",
    "spark-token-provider-kafka-0-10_2.13-",
    "kafka-clients-",
    "commons-pool2-",
)


class ConnectorUnavailable(RuntimeError):
    """Spark's Kafka connector cannot be fetched: what is missing."""


def _cache_root() -> Path:
    root = os.environ.get("KGROUP_CACHE") or os.path.join(Path.home(), ".cache", "kgroup")
    return Path(root)


def _candidates(pyspark_version: str) -> list[str]:
    """The versions to try, best first: pyspark's own, then x.(y-1).0 down to x.0.0."""
    chosen = os.environ.get("KGROUP_SPARK_KAFKA_VERSION")
    if chosen:
        return [chosen]
    major, minor = (int(x) for x in pyspark_version.split(".")[:2])
    return [pyspark_version] + [f"{major}.{m}.0" for m in range(minor - 1, -1, -1)]


def _fetch(version: str, into: Path) -> subprocess.CompletedProcess[str]:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ConnectorUnavailable(
            "fetching Spark's Kafka connector needs Maven: no `mvn` on PATH "
            "(on Debian: apt-get install -y maven)"
        )
    cmd = [mvn, "-B", "-q", "-f", str(POM), f"-Dspark.version={version}"]
    cmd += ["dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={into}"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def connector_version() -> tuple[str, str]:
    """The connector's version in the cache (fetched on first use) and pyspark's."""
    import pyspark

    want = pyspark.__version__
    root = _cache_root()
    root.mkdir(parents=True, exist_ok=True)
    record = root / f"spark-kafka-for-pyspark-{want}"
    if record.exists():
        return record.read_text().strip(), want
    with open(root / ".spark-kafka.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if record.exists():
            return record.read_text().strip(), want
        failures = []
        for version in _candidates(want):
            lib = root / f"spark-kafka-{version}" / "lib"
            if not lib.exists():
                tmp = lib.with_name("lib.tmp")
                shutil.rmtree(tmp, ignore_errors=True)
                got = _fetch(version, tmp)
                if got.returncode != 0:
                    failures.append(f"{version}: {(got.stdout + got.stderr)[-600:]}")
                    continue
                tmp.rename(lib)
            record.write_text(version + "\n")
            return version, want
    raise ConnectorUnavailable(
        "no spark-sql-kafka-0-10_2.13 on Maven Central:\n" + "\n".join(failures)
    )


def jars() -> list[str]:
    """The jars to give Spark (``spark.jars``, comma-separated) for ``format("kafka")``."""
    version, _ = connector_version()
    lib = _cache_root() / f"spark-kafka-{version}" / "lib"
    found = sorted(str(j) for j in lib.glob("*.jar") if j.name.startswith(WANTED))
    if len(found) != len(WANTED):
        raise ConnectorUnavailable(f"expected {len(WANTED)} jars in {lib}, found {found}")
    return found
