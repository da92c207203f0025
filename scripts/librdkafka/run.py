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

``--security MODE`` (``COMPAT_SECURITY``) runs the programs that need a secured broker, each
mode with its own broker and client settings, as librdkafka's CI (trivup) sets them up:
``acl`` (Kafka's StandardAuthorizer, everyone allowed where no ACL matches: 0081, 0115, 0119),
``ssl`` (an SSL listener with client certificates required, and the ``SSL_*`` files 0097 reads),
``sasl-plain`` and ``sasl-scram`` (SASL_PLAINTEXT with PLAIN or SCRAM-SHA-512: 0135). The
programs of a mode are listed in SECURITY below; ``--tests`` picks some.

``--protocol consumer`` (``COMPAT_PROTOCOL``) runs the programs that use a consumer group with
KIP-848's consumer protocol (librdkafka's ``TEST_CONSUMER_GROUP_PROTOCOL=consumer``, with
``TEST_KAFKA_VERSION=4.1.0`` so that its tests take the broker for one that speaks it): their list
and expectations are consumer.txt beside this file, and the group setting is a delay of 0 unless
``--delays`` says otherwise (consumer groups have no initial delay).
"""

from __future__ import annotations

import argparse
import dataclasses
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


#: SASL_USER is the user of the SASL modes (trivup's default ``sasl_users``).
SASL_USER, SASL_PASSWORD = "testuser", "testpass"

#: SECURITY are, for each ``--security`` mode, the programs it runs.
SECURITY = {
    "plaintext": [],
    "acl": ["0081", "0115", "0119"],
    "ssl": ["0097"],
    "sasl-plain": ["0135"],
    "sasl-scram": ["0135"],
}
#: SECURITY_SUBTESTS are the sub-tests a secured program runs, where not all of them: none now
#: (0135's share consumer sub-tests pass since kgroup serves share groups, KIP-932, once
#: one-broker.sed has made their topic ask for one replica, README.md).
SECURITY_SUBTESTS: dict[str, list[str]] = {}
#: KAFKA_VERSIONS are the programs told the broker is Kafka 4 (TEST_KAFKA_VERSION) whatever the
#: group protocol: 0081 expects Kafka 3.9's INVALID_REQUEST for a GROUP config resource unless
#: told 4.0 or later, and kgroup's broker, as Kafka 4's, serves them (KIP-848 group configs).
KAFKA_VERSIONS = {"0081": "4.1.0"}
#: TIMEOUT_MULTIPLIERS are the programs given librdkafka CI's more forgiving time limits
#: (``test.timeout.multiplier``: its runner adds 2 to the multiplier of 1 when CI is set):
#: 0081's limit of 180 s holds some 40 consumer groups that each wait the 3 s
#: group.initial.rebalance.delay.ms before they form, and so does not hold them on Apache
#: Kafka either unless on CI. 0119's 20 s hold a 15 s consume and three runs of kafka-acls.sh,
#: each a JVM start of 1.1-1.7 s here: 20.7 s on a busy machine, against either broker.
TIMEOUT_MULTIPLIERS = {"0081": 3, "0119": 3}
#: KAFKA_TOO are the secured programs that fail against Apache Kafka 4.4 here as well, why.
KAFKA_TOO = {
    "0097": "with ssl.client.auth=required the broker refuses an untrusted client certificate "
    "after the client's TLS 1.3 handshake is done: librdkafka 2.16 reports it as a transport "
    "error (in state APIVERSION_QUERY) where the program wants an SSL error; Apache Kafka "
    "4.4 gives the same (tests/broker/test_tls.py)",
}


@dataclass
class Secured:
    """Secured is what a ``--security`` mode adds: broker settings, the client's test.conf
    lines, environment variables, the listener clients use and a step once the broker runs."""

    config: dict[str, str] = field(default_factory=dict)
    conf: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    #: admin_port is a PLAINTEXT listener for the set-up step; port the one clients use.
    admin_port: int = 0
    port: int = 0
    users: dict[str, str] = field(default_factory=dict)


def secured(mode: str, out: Path) -> Secured:
    """The settings of a ``--security`` mode (certificates made in ``out``)."""
    from support.ports import free_port

    sec = Secured()
    if mode == "plaintext":
        return sec
    if mode == "acl":
        sec.config = {
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true",
        }
        return sec
    sec.admin_port, sec.port = free_port(), free_port()
    if mode == "ssl":
        sec.config, sec.conf, sec.env = _ssl(out / "certs")
        sec.config["listeners"] = (
            f"PLAINTEXT://127.0.0.1:{sec.admin_port},SSL://127.0.0.1:{sec.port}"
        )
        return sec
    mechanism = "PLAIN" if mode == "sasl-plain" else "SCRAM-SHA-512"
    jaas = (
        f"org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'user_{SASL_USER}="{SASL_PASSWORD}";'
        if mechanism == "PLAIN"
        else "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    )
    sec.config = {
        "listeners": f"PLAINTEXT://127.0.0.1:{sec.admin_port},"
        f"SASL_PLAINTEXT://127.0.0.1:{sec.port}",
        "sasl.enabled.mechanisms": mechanism,
        f"listener.name.sasl_plaintext.{mechanism.lower()}.sasl.jaas.config": jaas,
    }
    sec.conf = [
        "security.protocol=SASL_PLAINTEXT",
        f"sasl.mechanisms={mechanism}",
        f"sasl.username={SASL_USER}",
        f"sasl.password={SASL_PASSWORD}",
    ]
    if mechanism != "PLAIN":
        sec.users = {SASL_USER: SASL_PASSWORD}
    return sec


def _ssl(folder: Path) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """A broker certificate, a client's, and the files and variables 0097 reads (trivup's
    ``SSL_*``: the client's certificate and key as PEM and DER, a PKCS#12 of both, the CA)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from support.certs import Certs

    certs = Certs(folder)
    client = certs.client("librdkafka")
    cert = x509.load_pem_x509_certificate(client.cert.read_bytes())
    key = serialization.load_pem_private_key(client.key.read_bytes(), None)
    ca = x509.load_pem_x509_certificate(certs.ca.read_bytes())
    der = serialization.Encoding.DER
    files = {
        "pub_der": cert.public_bytes(der),
        "priv_der": key.private_bytes(
            der, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
        "ca_der": ca.public_bytes(der),
        # The CA and one that signed nothing here (trivup's "all CAs").
        "all_cas_pem": certs.ca.read_bytes() + certs.other_ca.read_bytes(),
    }
    env = {"SSL_password": certs.password, "SSL_client_auth": "required"}
    for name, data in files.items():
        path = folder / f"librdkafka-{name.replace('_', '.')}"
        path.write_bytes(data)
        env[f"SSL_{name}"] = str(path)
    env.update(
        SSL_pkcs=str(client.p12),
        SSL_pub_pem=str(client.cert),
        SSL_priv_pem=str(client.key_encrypted),
        SSL_ca_pem=str(certs.ca),
    )
    config = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(certs.broker.keystore_pem),
        "ssl.key.password": certs.password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs.ca),
        "ssl.client.auth": "required",
    }
    conf = [
        "security.protocol=SSL",
        f"ssl.ca.location={certs.ca}",
        f"ssl.certificate.location={client.cert}",
        f"ssl.key.location={client.key_encrypted}",
        f"ssl.key.password={certs.password}",
    ]
    return config, conf, env


def add_scram_users(admin_bootstrap: str, users: dict[str, str]) -> None:
    """Create the SCRAM users over the PLAINTEXT listener (Kafka's ``--add-scram``)."""
    import kgroup
    from kgroup.client.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = kgroup.AdminClient({"bootstrap.servers": admin_bootstrap})
    try:
        info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)
        futures = admin.alter_user_scram_credentials(
            [UserScramCredentialUpsertion(user, info, password) for user, password in users.items()]
        )
        for f in futures.values():
            f.result()
    finally:
        admin.close()


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
    src: Path,
    out: Path,
    bootstrap: str,
    p: Program,
    timeout: int,
    protocol: str = "classic",
    sec: Secured | None = None,
) -> tuple[bool, str]:
    """Run one test program (each of its sub-test selections in turn); whether it passed, and
    why not."""
    sec = sec or Secured()
    conf = out / "test.conf"
    conf.write_text(
        f"bootstrap.servers={bootstrap}\ntest.topic.random=true\n"
        + "".join(f"{line}\n" for line in sec.conf)
        + (
            f"test.timeout.multiplier={TIMEOUT_MULTIPLIERS[p.number]}\n"
            if p.number in TIMEOUT_MULTIPLIERS
            else ""
        )
    )
    runner_env = dict(PROTOCOLS[protocol][1])
    runner_env["TEST_KAFKA_VERSION"] = KAFKA_VERSIONS.get(
        p.number, runner_env["TEST_KAFKA_VERSION"]
    )
    runner_env["TEST_KAFKA_VERSION"] = os.environ.get(
        "TEST_KAFKA_VERSION", runner_env["TEST_KAFKA_VERSION"]
    )
    env = dict(
        os.environ,
        RDKAFKA_TEST_CONF=str(conf),
        TESTS=p.number,  # through the environment: the runner frees argv
        LD_LIBRARY_PATH="../src:../src-cpp",
        **runner_env,
        **sec.env,
    )
    if protocol == "classic":
        env.pop("TEST_CONSUMER_GROUP_PROTOCOL", None)
    if "kafka-tools" in p.note or sec.config.get("authorizer.class.name"):
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
    src: Path,
    out: Path,
    delay: str,
    programs: list[Program],
    timeout: int,
    protocol: str,
    security: str = "plaintext",
) -> list[tuple[Program, bool, str, float]]:
    config = dict(BROKER)
    if delay != "default":
        config["group.initial.rebalance.delay.ms"] = delay
    out.mkdir(parents=True, exist_ok=True)
    sec = secured(security, out)
    config.update(sec.config)
    results = []
    with tempfile.TemporaryDirectory(prefix="kgroup-rdk-") as tmp:
        broker = BrokerProcess(Path(tmp) / "data", config)
        bootstrap = broker.bootstrap
        if sec.admin_port:
            broker.port = sec.admin_port
            bootstrap = f"127.0.0.1:{sec.port}"
        try:
            broker.start()
            if sec.users:
                add_scram_users(broker.bootstrap, sec.users)
            print(
                f"== group.protocol={protocol}, group.initial.rebalance.delay.ms={delay}, "
                f"security {security}: broker {bootstrap}"
            )
            for p in programs:
                started = time.monotonic()
                ok, why = run_program(src, out, bootstrap, p, timeout, protocol, sec)
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
    parser.add_argument(
        "--security",
        choices=sorted(SECURITY),
        default=os.environ.get("COMPAT_SECURITY") or "plaintext",
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
    delays = args.delays or (
        "0"
        if args.protocol == "consumer"
        else "default"
        if args.security != "plaintext"
        else "default,0"
    )
    listed = read_list(HERE / list_name)
    if args.tests:
        wanted = args.tests.replace(",", " ").split()
        by_number = {p.number: p for p in listed}
        unknown = [n for n in wanted if n not in by_number]
        if unknown:
            print(f"not in {list_name}: {' '.join(unknown)}", file=sys.stderr)
            return 2
        programs = [by_number[n] for n in wanted]
    elif args.security != "plaintext":
        by_number = {p.number: p for p in listed}
        programs = [
            dataclasses.replace(by_number[n], subtests=SECURITY_SUBTESTS.get(n, []))
            for n in SECURITY[args.security]
        ]
    else:
        programs = [p for p in listed if p.expect in ("pass", "default")]
    out = Path(args.out or tempfile.mkdtemp(prefix="kgroup-rdk-logs-"))
    failed = []
    for delay in delays.split(","):
        sub = f"delay-{delay}" if args.protocol == "classic" else f"{args.protocol}-delay-{delay}"
        if args.security != "plaintext":
            sub = f"{args.security}-{sub}"
        results = run_setting(
            src, out / sub, delay, programs, args.timeout, args.protocol, args.security
        )
        passed = sum(ok for _, ok, _, _ in results)
        took = sum(t for *_, t in results)
        print(f"== delay {delay}: {passed} of {len(results)} passed in {took:.0f}s")
        failed += [
            (delay, p)
            for p, ok, _, _ in results
            if not ok
            and (expected(p, delay) or (args.security != "plaintext" and p.number not in KAFKA_TOO))
        ]
    print(f"logs: {out}")
    for delay, p in failed:
        print(f"expected to pass, failed (delay {delay}): {p.number} {p.name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
