"""The Java scenario program (``tests/support/java/kgroup/Scenarios.java``): Kafka's own Java
clients run against any bootstrap address, one JSON result on stdout.

It is compiled with ``javac`` against Apache Kafka's fetched jars once, into a cache folder named
after a hash of its source (beside the jars, see :func:`support.apache_kafka.cache_dir`), so an
edited source compiles again and an unchanged one never does. The folder also keeps a class-data
archive (AppCDS) dumped from one warm-up run: a scenario starts a JVM per group member, and the
archive halves what each start costs.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from .apache_kafka import FAST_JVM, TOOLS_LOG4J, check_run, classpath, compiled, java, javac

SOURCE_DIR = Path(__file__).resolve().parent / "java"
MAIN = "kgroup.Scenarios"
#: JVM logging goes to stderr: stdout carries the scenario's JSON (and a member's events).
JVM_LOG = ["-Xlog:disable", "-Xlog:all=warning:stderr"]


def sources() -> list[Path]:
    return sorted(SOURCE_DIR.rglob("*.java"))


def build_dir() -> Path:
    """The folder of the compiled program (``scenarios.jar``, ``scenarios.jsa``), built first if
    its source changed (safe across processes)."""

    def finish(out: Path) -> None:
        # CDS takes classes from jars only; the archive names the jar by its path.
        jar = os.path.join(os.path.dirname(javac()), "jar")
        check_run([jar, "cf", str(out / "scenarios.jar"), "-C", str(out / "classes"), "."], "jar")
        check_run(
            [
                *_java(out, f"-XX:ArchiveClassesAtExit={out / 'scenarios.jsa'}"),
                *[MAIN, "warm", "127.0.0.1:1", "max.block.ms=200"],
            ],
            "the warm-up run",
        )

    return compiled("scenarios", sources(), SOURCE_DIR, finish)


def _java(build: Path, *flags: str) -> list[str]:
    return [
        java(),
        "-Xmx256m",
        *FAST_JVM,
        *JVM_LOG,
        *flags,
        f"-Dlog4j2.configurationFile={TOOLS_LOG4J}",
        "-cp",
        classpath(build / "scenarios.jar"),
    ]


def command(scenario: str, bootstrap: str, **opts: Any) -> list[str]:
    """The command line of one scenario (keyword ``a_b`` passes option ``a.b``); the members it
    starts run with the same JVM flags."""
    build = build_dir()
    return [
        *_java(build, f"-XX:SharedArchiveFile={build / 'scenarios.jsa'}"),
        MAIN,
        scenario,
        bootstrap,
        *(f"{k.replace('_', '.')}={v}" for k, v in opts.items()),
    ]


def run(scenario: str, bootstrap: str, *, timeout: float = 180, **opts: Any) -> dict[str, Any]:
    """Run one scenario to its end; its JSON result."""
    got = subprocess.run(
        command(scenario, bootstrap, **opts),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    if got.returncode != 0:
        raise AssertionError(
            f"scenario {scenario} on {bootstrap} exited {got.returncode}:\n"
            f"{got.stdout[-4000:]}\n{got.stderr[-6000:]}"
        )
    return json.loads(got.stdout)
