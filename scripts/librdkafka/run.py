#!/usr/bin/env python3
"""librdkafka's own integration tests against kgroup's broker (``make test-compat``).

    .venv/bin/python scripts/librdkafka/run.py [--src DIR] [--tests "0011 0055"] [--delays 0]
        [--protocol consumer]

For each group setting (``default``: Kafka's group.initial.rebalance.delay.ms of 3 s, which the
suite assumes; ``0``: groups form at once) it starts a kgroup broker of its own in a process
(``num.partitions=4``, ``auto.create.topics.enable=true``, as librdkafka's CI broker), runs each
test program in a process of its own under a time limit (a hung program ends alone), then stops
the broker. One line per program, a summary per setting; the logs, the broker's included, go to
``--out``. Exit status 1 when a program expected to pass failed (tests.txt: ``pass``, or
``default`` for the programs that pass only with Kafka's default group settings, as on Kafka).

``--src`` (``RDK_SRC``) is librdkafka v2.15.0's source tree with its test programs built as
README.md beside this file says; the test list is tests.txt beside it (``n/a`` programs are run
only when named).

``--protocol consumer`` (``COMPAT_PROTOCOL``) runs the programs that use a consumer group with
KIP-848's consumer protocol (librdkafka's ``TEST_CONSUMER_GROUP_PROTOCOL=consumer``, with
``TEST_KAFKA_VERSION=4.1.0`` so that its tests take the broker for one that speaks it): their list
and expectations are consumer.txt beside this file, and the group setting is a delay of 0 unless
``--delays`` says otherwise (consumer groups have no initial delay).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))

from support.kgroup_broker import BrokerProcess  # noqa: E402

#: BROKER is the config of librdkafka's own CI broker, as far as one kgroup broker has it.
BROKER = {"num.partitions": 4, "auto.create.topics.enable": "true"}
#: KAFKA_TOOLS are the scripts of Kafka's bin/ that some programs run (through KAFKA_PATH), each
#: made here from the main class in Apache Kafka's jars (support.apache_kafka).
KAFKA_TOOLS = {
    "kafka-topics.sh": "org.apache.kafka.tools.TopicCommand",
    "kafka-acls.sh": "org.apache.kafka.tools.AclCommand",
}
ANSI = re.compile(r"\x1b\[[0-9;]*m|\x1b\(B")
FAILURE = re.compile(r'### Test "([^"]+)" failed at ([^\n]*)\n([^\n]*)')


@dataclass
class Program:
    """Program is one line of tests.txt."""

    number: str
    name: str
    expect: str
    note: str
    #: subtests are librdkafka SUBTESTS strings, one run each; empty: one run of everything.
    subtests: list[str] = field(default_factory=list)


def read_list(path: Path) -> list[Program]:
    out = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        number, name, expect, *rest = line.split(None, 3)
        note = rest[0] if rest else ""
        p = Program(number, name, expect, note)
        m = re.match(r"subtests=([^:\s]+):?", note)
        if m:
            p.subtests = m.group(1).split(",")
        out.append(p)
    return out


def kafka_path(out: Path) -> Path:
    """A KAFKA_PATH whose bin/ holds Kafka's scripts that the programs run, each a call of the
    tool's main class from Apache Kafka's jars (fetched with Maven on first use)."""
    from support.apache_kafka import tool_command

    bin_dir = out / "kafka" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for script, main_class in KAFKA_TOOLS.items():
        command = " ".join(shlex.quote(a) for a in tool_command(main_class))
        path = bin_dir / script
        path.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        path.chmod(0o755)
    return bin_dir.parent


#: PROTOCOLS are, for each group protocol, its program list and the environment of librdkafka's
#: test runner (TEST_KAFKA_VERSION is the default: the caller's environment wins).
PROTOCOLS = {
    "classic": ("tests.txt", {"TEST_KAFKA_VERSION": "3.9.0"}),
    "consumer": (
        "consumer.txt",
        {"TEST_KAFKA_VERSION": "4.1.0", "TEST_CONSUMER_GROUP_PROTOCOL": "consumer"},
    ),
}


def run_program(
    src: Path, out: Path, bootstrap: str, p: Program, timeout: int, protocol: str = "classic"
) -> tuple[bool, str]:
    """Run one test program (each of its sub-test selections in turn); whether it passed, and
    why not."""
    conf = out / "test.conf"
    conf.write_text(f"bootstrap.servers={bootstrap}\ntest.topic.random=true\n")
    runner_env = dict(PROTOCOLS[protocol][1])
    runner_env["TEST_KAFKA_VERSION"] = os.environ.get(
        "TEST_KAFKA_VERSION", runner_env["TEST_KAFKA_VERSION"]
    )
    env = dict(
        os.environ,
        RDKAFKA_TEST_CONF=str(conf),
        TESTS=p.number,  # through the environment: the runner frees argv
        LD_LIBRARY_PATH="../src:../src-cpp",
        **runner_env,
    )
    if protocol == "classic":
        env.pop("TEST_CONSUMER_GROUP_PROTOCOL", None)
    if "kafka-tools" in p.note:
        env.update(KAFKA_PATH=str(kafka_path(out)), BROKERS=bootstrap)
    reasons = []
    for sub in p.subtests or [""]:
        env.pop("SUBTESTS", None)
        if sub:
            env["SUBTESTS"] = sub
        log = out / (f"{p.number}-{sub}.log" if sub else f"{p.number}.log")
        with open(log, "wb") as f:
            # -p1: one test at a time; -L: not the tests of librdkafka's mock cluster. Never -Q,
            # which skips sub-tests silently.
            try:
                rc = subprocess.run(
                    ["./test-runner", "-p1", "-L"],
                    cwd=src / "tests",
                    env=env,
                    stdout=f,
                    stderr=subprocess.STDOUT,
                    timeout=timeout,
                ).returncode
            except subprocess.TimeoutExpired:
                rc = None
        if rc == 0:
            continue
        text = ANSI.sub("", log.read_text(errors="replace"))
        # The first failure that is a test's own, not the runner's summing up (<MAIN>).
        found = sorted(FAILURE.findall(text), key=lambda f: f[0] == "<MAIN>")
        why = f"{found[0][1].strip()}: {found[0][2].strip()}" if found else f"exit {rc}"
        if rc is None:
            why = f"timed out after {timeout} s"
        reasons.append(f"[{sub}] {why}" if sub else why)
    return not reasons, "; ".join(reasons)


def run_setting(
    src: Path, out: Path, delay: str, programs: list[Program], timeout: int, protocol: str
) -> list[tuple[Program, bool, str, float]]:
    config = dict(BROKER)
    if delay != "default":
        config["group.initial.rebalance.delay.ms"] = delay
    out.mkdir(parents=True, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="kgroup-rdk-") as tmp:
        broker = BrokerProcess(Path(tmp) / "data", config)
        try:
            broker.start()
            print(
                f"== group.protocol={protocol}, group.initial.rebalance.delay.ms={delay}: "
                f"broker {broker.bootstrap}"
            )
            for p in programs:
                started = time.monotonic()
                ok, why = run_program(src, out, broker.bootstrap, p, timeout, protocol)
                took = time.monotonic() - started
                results.append((p, ok, why, took))
                mark = "pass" if ok else "FAIL"
                extra = "" if ok else f"  {why}"
                print(f"{p.number} {p.name:<40} {mark} {took:6.0f}s{extra}", flush=True)
        finally:
            broker.stop()
            shutil.copy(broker.log, out / "broker.log")
            broker.log.unlink(missing_ok=True)
    return results


def expected(p: Program, delay: str) -> bool:
    """Whether `p` is expected to pass with this group.initial.rebalance.delay.ms."""
    return p.expect == "pass" or (p.expect == "default" and delay == "default")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=os.environ.get("RDK_SRC") or None)
    parser.add_argument("--tests", default=os.environ.get("COMPAT_TESTS", ""))
    parser.add_argument(
        "--protocol",
        choices=sorted(PROTOCOLS),
        default=os.environ.get("COMPAT_PROTOCOL")
        or os.environ.get("TEST_CONSUMER_GROUP_PROTOCOL")
        or "classic",
    )
    parser.add_argument("--delays", default=None, help="default: default,0 (consumer: 0)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--timeout", type=int, default=int(os.environ.get("RDK_TIMEOUT", 900)))
    args = parser.parse_args(argv)
    src = Path(args.src or Path(tempfile.gettempdir()) / "rdk" / "src")
    if not os.access(src / "tests" / "test-runner", os.X_OK):
        print(
            f"no built librdkafka test programs in {src} (tests/test-runner): build them as "
            f"{HERE / 'README.md'} says, or point RDK_SRC at a built tree",
            file=sys.stderr,
        )
        return 2
    list_name = PROTOCOLS[args.protocol][0]
    delays = args.delays or ("0" if args.protocol == "consumer" else "default,0")
    listed = read_list(HERE / list_name)
    if args.tests:
        wanted = args.tests.replace(",", " ").split()
        by_number = {p.number: p for p in listed}
        unknown = [n for n in wanted if n not in by_number]
        if unknown:
            print(f"not in {list_name}: {' '.join(unknown)}", file=sys.stderr)
            return 2
        programs = [by_number[n] for n in wanted]
    else:
        programs = [p for p in listed if p.expect in ("pass", "default")]
    out = Path(args.out or tempfile.mkdtemp(prefix="kgroup-rdk-logs-"))
    failed = []
    for delay in delays.split(","):
        sub = f"delay-{delay}" if args.protocol == "classic" else f"{args.protocol}-delay-{delay}"
        results = run_setting(src, out / sub, delay, programs, args.timeout, args.protocol)
        passed = sum(ok for _, ok, _, _ in results)
        took = sum(t for *_, t in results)
        print(f"== delay {delay}: {passed} of {len(results)} passed in {took:.0f}s")
        failed += [(delay, p) for p, ok, _, _ in results if not ok and expected(p, delay)]
    print(f"logs: {out}")
    for delay, p in failed:
        print(f"expected to pass, failed (delay {delay}): {p.number} {p.name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
