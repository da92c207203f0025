"""Apache Kafka 4.x beside kgroup: its jars fetched once from Maven Central, a KRaft node (or a
three-node cluster) on loopback, and Kafka's own tools and Java client run from the same jars.

The jars come from ``kafka_ref/pom.xml`` through ``mvn dependency:copy-dependencies`` into a cache
outside the repository (``$KGROUP_CACHE`` or ``~/.cache/kgroup``), once per Kafka version; every
later start reads them from there. Each node is a combined broker and controller (KRaft, a static
quorum of every node), with its own free ports and data folder, and the replication factors of
the internal topics set to the number of nodes (at most 3), as Kafka's own system tests do.

``spec_jars`` fetches the same way, from ``kafka_ref/specs-pom.xml``, the two jars of Kafka 3.9
that carry its JSON message specs, which kgroup's protocol tables were transcribed from.

What is missing (Java, Maven, the registry) raises :class:`KafkaUnavailable` with what to
install: a test that needs Apache Kafka fails, it never skips.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .ports import free_port

KAFKA_VERSION = os.environ.get("KGROUP_KAFKA_VERSION", "4.4.0")
HERE = Path(__file__).resolve().parent / "kafka_ref"
POM = HERE / "pom.xml"
SPECS_POM = HERE / "specs-pom.xml"
#: The release kgroup's protocol tables were transcribed from (3.9's newest patch release): its
#: specs are what scripts/check_protocol_spec.py compares them with exactly.
SPECS_VERSION = "3.9.2"
BROKER_LOG4J = HERE / "log4j2.yaml"
TOOLS_LOG4J = HERE / "tools-log4j2.yaml"

#: The JVM flags of Kafka's kafka-server-start.sh (KAFKA_JVM_PERFORMANCE_OPTS), heap aside.
SERVER_JVM = [
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
]
#: Tools and the scenario program start many short JVMs: C1 only and the serial collector
#: halve their start (the perf tools are run without these, see run_tool's ``fast``).
FAST_JVM = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]


class KafkaUnavailable(RuntimeError):
    """Apache Kafka cannot run here: what is missing and how to get it."""


def cache_dir() -> Path:
    root = os.environ.get("KGROUP_CACHE") or os.path.join(Path.home(), ".cache", "kgroup")
    return Path(root) / f"apache-kafka-{KAFKA_VERSION}"


def java() -> str:
    """The ``java`` to run Kafka with: $JAVA_HOME's, else the one on PATH (Kafka 4 needs 17+)."""
    home = os.environ.get("JAVA_HOME")
    exe = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not exe or not os.access(exe, os.X_OK):
        raise KafkaUnavailable(
            "Apache Kafka needs Java 17 or newer: no `java` on PATH or in $JAVA_HOME "
            "(on Debian: apt-get install -y openjdk-17-jre-headless)"
        )
    return exe


def javac() -> str:
    exe = os.path.join(os.path.dirname(java()), "javac")
    if not os.access(exe, os.X_OK):
        raise KafkaUnavailable(
            f"the Java scenario program needs javac beside {java()} "
            "(on Debian: apt-get install -y openjdk-17-jdk-headless)"
        )
    return exe


def compiled(
    name: str,
    sources: Sequence[Path],
    root: Path,
    finish: Callable[[Path], None] | None = None,
) -> Path:
    """The cache folder of Java ``sources`` (under ``root``) compiled against Kafka's jars into
    its ``classes``, then ``finish(folder)`` for any further step: named after a hash of the
    sources (beside the jars, :func:`cache_dir`), so an edited source compiles again and an
    unchanged one never does; built in place under a lock, so safe across processes, and
    marked done last."""
    digest = hashlib.sha256()
    for src in sources:
        digest.update(src.relative_to(root).as_posix().encode() + b"\0")
        digest.update(src.read_bytes())
    out = cache_dir() / f"{name}-{digest.hexdigest()[:16]}"
    done = out / ".built"
    if done.exists():
        return out
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return out
        shutil.rmtree(out, ignore_errors=True)
        check_run(
            [javac(), "--release", "17", "-cp", classpath(), "-d", str(out / "classes")]
            + [str(s) for s in sources],
            "javac",
        )
        if finish is not None:
            finish(out)
        done.touch()
    return out


def check_run(cmd: list[str], what: str) -> None:
    """Runs ``cmd``; an AssertionError with its output when it fails."""
    got = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if got.returncode != 0:
        raise AssertionError(f"{what} failed ({got.returncode}):\n{got.stdout}{got.stderr}")


def lib_dir() -> Path:
    """The folder of Kafka's jars, fetched with Maven on first use (safe across processes)."""
    return _fetched(POM, KAFKA_VERSION, cache_dir())


def spec_jars(version: str = SPECS_VERSION) -> Path:
    """The folder of the two jars of Kafka ``version`` that carry its JSON message specs
    (``specs-pom.xml``), fetched with Maven on first use, for scripts/check_protocol_spec.py."""
    return _fetched(SPECS_POM, version, cache_dir().with_name(f"kafka-specs-{version}"))


def _fetched(pom: Path, version: str, home: Path) -> Path:
    """``home/lib``: the runtime jars of ``pom`` at ``-Dkafka.version=version``, copied there by
    ``mvn dependency:copy-dependencies`` once; a lock file makes concurrent callers wait."""
    lib = home / "lib"
    done = home / "lib.complete"
    if done.exists():
        return lib
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaUnavailable(
            "fetching Apache Kafka's jars needs Maven: no `mvn` on PATH "
            "(on Debian: apt-get install -y maven)"
        )
    java()
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return lib
        tmp = home / "lib.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        cmd = [
            mvn,
            "-B",
            "-q",
            "-f",
            str(pom),
            f"-Dkafka.version={version}",
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={tmp}",
        ]
        got = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if got.returncode != 0:
            raise KafkaUnavailable(
                f"mvn could not fetch Apache Kafka {version}'s jars "
                f"(exit {got.returncode}):\n{got.stdout[-3000:]}{got.stderr[-2000:]}"
            )
        shutil.rmtree(lib, ignore_errors=True)
        tmp.rename(lib)
        done.write_text(" ".join(cmd) + "\n")
    return lib


def classpath(*extra: str | Path) -> str:
    return os.pathsep.join([*map(str, extra), str(lib_dir() / "*")])


def tool_command(
    main_class: str, *args: str, heap: str = "256m", fast: bool = True, extra_cp: Sequence = ()
) -> list[str]:
    """The command line of one of Kafka's tools (``kafka-topics`` is
    ``org.apache.kafka.tools.TopicCommand``), as its bin/ script would run it."""
    return [
        java(),
        f"-Xmx{heap}",
        *(FAST_JVM if fast else []),
        f"-Dlog4j2.configurationFile={TOOLS_LOG4J}",
        "-cp",
        classpath(*extra_cp),
        main_class,
        *args,
    ]


def run_tool(
    main_class: str,
    *args: str,
    timeout: float = 120,
    input: str | None = None,
    heap: str = "256m",
    fast: bool = True,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run one of Kafka's tools to its end; its stdout and stderr as text. With ``fast`` it
    runs in a warm JVM of the tool shell (``support.tool_shell``), else in a JVM of its own."""
    from . import tool_shell

    if fast and tool_shell.enabled():
        got = tool_shell.run_in_shell(main_class, list(args), input, timeout)
    else:
        got = subprocess.run(
            tool_command(main_class, *args, heap=heap, fast=fast),
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    if check and got.returncode != 0:
        raise AssertionError(
            f"{main_class} {' '.join(args)} exited {got.returncode}:\n{got.stdout}\n{got.stderr}"
        )
    return got


def new_cluster_id() -> str:
    """A cluster id as ``kafka-storage random-uuid`` prints it (base64url of 16 bytes; never
    one that starts with "-", which Kafka's Uuid.randomUuid draws again: a command line would
    read it as an option)."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


@dataclass
class KafkaNode:
    """One combined broker and controller of a cluster: start, stop (SIGTERM), kill -9."""

    node_id: int
    port: int
    controller_port: int
    home: Path
    config: dict[str, str]
    heap: str = "1g"
    jvm: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    #: the port of each extra listener (KafkaCluster's ``listeners``), by listener name
    ports: dict[str, int] = field(default_factory=dict)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.home / "logs" / "server.log"

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def properties(self) -> Path:
        return self.home / "server.properties"

    def write_config(self) -> None:
        self.properties.write_text("".join(f"{k}={v}\n" for k, v in self.config.items()))

    def format(self, cluster_id: str, features: Mapping[str, int] | None = None) -> None:
        """Format the node's storage; ``features`` sets feature levels
        (``{"transaction.version": 1}``), Kafka's ``--feature name=level``."""
        pinned = [a for k, v in (features or {}).items() for a in ("--feature", f"{k}={v}")]
        run_tool(
            "kafka.tools.StorageTool",
            "format",
            "-t",
            cluster_id,
            "-c",
            str(self.properties),
            "--ignore-formatted",
            *pinned,
            timeout=120,
        )

    def start(self) -> None:
        """Start the JVM; :meth:`wait_started` waits until it serves."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        (self.home / "logs").mkdir(exist_ok=True)
        self._log_offset = self.log.stat().st_size if self.log.exists() else 0
        out = open(self.home / "logs" / "kafkaServer.out", "ab")
        self.proc = subprocess.Popen(
            [
                java(),
                f"-Xmx{self.heap}",
                f"-Xms{self.heap}",
                *SERVER_JVM,
                *self.jvm,
                f"-Dkafka.logs.dir={self.home / 'logs'}",
                f"-Dlog4j2.configurationFile={BROKER_LOG4J}",
                "-cp",
                classpath(),
                "kafka.Kafka",
                str(self.properties),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            # Stop with the test run even when pytest itself is killed: see _die_with_parent.
            preexec_fn=_die_with_parent,
        )
        out.close()
        self.starts += 1

    def wait_started(self, timeout: float = 90) -> None:
        """Wait for "Kafka Server started" (logged once the broker is unfenced and serving),
        then for an answered ApiVersions on its listener."""
        deadline = time.monotonic() + timeout
        assert self.proc is not None
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"Apache Kafka node {self.node_id} exited with {self.proc.returncode}:\n"
                    + self.tail()
                )
            if self._started_logged():
                break
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"node {self.node_id} not started after {timeout}s:\n" + self.tail()
                )
            time.sleep(0.05)
        while not _answers_api_versions(self.port):
            if time.monotonic() > deadline:
                raise TimeoutError(f"node {self.node_id} does not answer ApiVersions")
            time.sleep(0.05)

    def _started_logged(self) -> bool:
        try:
            with open(self.log, "rb") as f:
                f.seek(self._log_offset)
                return b"Kafka Server started" in f.read()
        except FileNotFoundError:
            return False

    def tail(self, lines: int = 40) -> str:
        text = ""
        for name in ("kafkaServer.out", "server.log"):
            with contextlib.suppress(OSError):
                text += "".join(
                    (self.home / "logs" / name)
                    .read_text(errors="replace")
                    .splitlines(keepends=True)[-lines:]
                )
        return text

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 60) -> int | None:
        """SIGTERM: Kafka's clean shutdown (leaderships moved, logs flushed)."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def kill9(self) -> None:
        """SIGKILL, as a crash: the next start recovers its logs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG: the JVM gets SIGKILL when the process that started it dies.
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


def _answers_api_versions(port: int) -> bool:
    from kgroup import protocol

    from .wire import read_frame

    try:
        with socket.create_connection(("127.0.0.1", port), 1) as s:
            s.settimeout(2)
            s.sendall(
                protocol.encode_request(
                    18,
                    3,
                    1,
                    "kgroup-probe",
                    {"client_software_name": "kgroup-probe", "client_software_version": "1"},
                )
            )
            answer = protocol.decode_response(18, 3, read_frame(s))
            return answer.body["error_code"] == 0
    except (OSError, EOFError, ValueError):
        return False


class KafkaCluster:
    """Apache Kafka on loopback: ``nodes`` combined KRaft nodes (one quorum of all of them)."""

    def __init__(
        self,
        nodes: int = 1,
        config: Mapping[str, Any] | None = None,
        *,
        home: str | Path | None = None,
        heap: str = "1g",
        jvm: Sequence[str] = (),
        features: Mapping[str, int] | None = None,
        listeners: Mapping[str, str] | None = None,
    ) -> None:
        #: listeners are extra client listeners beside PLAINTEXT, by name, with their security
        #: protocol (``{"SASL_SSL": "SASL_SSL", "MTLS": "SSL"}``), each on a free port of its
        #: own (:meth:`bootstrap_of`); their ``ssl.*`` / ``sasl.*`` settings go in ``config``.
        #: PLAINTEXT stays the first listener and the inter-broker one.
        #: features are the feature levels the cluster is formatted with: Kafka 4.x's defaults
        #: unless set (``{"transaction.version": 1}`` keeps transactions at protocol v1, as
        #: kgroup's broker speaks them).
        self.features = dict(features or {})
        self._tmp = None
        if home is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="apache-kafka-")
            home = self._tmp.name
        self.home = Path(home)
        self.cluster_id = new_cluster_id()
        extra = dict(listeners or {})
        ports = [(free_port(), free_port()) for _ in range(nodes)]
        extra_ports = [{name: free_port() for name in extra} for _ in range(nodes)]
        voters = ",".join(f"{i + 1}@127.0.0.1:{c}" for i, (_, c) in enumerate(ports))
        rf = str(min(3, nodes))
        self.nodes: list[KafkaNode] = []
        for i, (port, cport) in enumerate(ports):
            node_home = self.home / f"node-{i + 1}"
            node_home.mkdir(parents=True, exist_ok=True)
            more = "".join(f",{n}://127.0.0.1:{p}" for n, p in extra_ports[i].items())
            values: dict[str, str] = {
                "process.roles": "broker,controller",
                "node.id": str(i + 1),
                "controller.quorum.voters": voters,
                "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}{more}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}{more}",
                "inter.broker.listener.name": "PLAINTEXT",
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
                + "".join(f",{n}:{proto}" for n, proto in extra.items()),
                "log.dirs": str(node_home / "data"),
                "offsets.topic.replication.factor": rf,
                "transaction.state.log.replication.factor": rf,
                "transaction.state.log.min.isr": str(min(2, nodes)),
                "share.coordinator.state.topic.replication.factor": rf,
                "share.coordinator.state.topic.min.isr": str(min(2, nodes)),
                "default.replication.factor": "1",
            }
            values.update({k: str(v) for k, v in (config or {}).items()})
            self.nodes.append(
                KafkaNode(
                    i + 1,
                    port,
                    cport,
                    node_home,
                    values,
                    heap=heap,
                    jvm=list(jvm),
                    ports=extra_ports[i],
                )
            )

    @property
    def bootstrap(self) -> str:
        return ",".join(n.bootstrap for n in self.nodes)

    def bootstrap_of(self, listener: str) -> str:
        """The bootstrap servers of one of the extra ``listeners``."""
        return ",".join(f"127.0.0.1:{n.ports[listener]}" for n in self.nodes)

    def node(self, node_id: int) -> KafkaNode:
        return self.nodes[node_id - 1]

    def start(self, timeout: float = 120) -> KafkaCluster:
        lib_dir()
        for n in self.nodes:
            n.write_config()
            n.format(self.cluster_id, self.features)
        for n in self.nodes:
            n.start()
        for n in self.nodes:
            n.wait_started(timeout)
        return self

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()

    def __enter__(self) -> KafkaCluster:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        # Every node at once: stopped one by one, the last ones lose their quorum and wait.
        for n in self.nodes:
            if n.running:
                assert n.proc is not None
                n.proc.send_signal(signal.SIGTERM)
        for n in self.nodes:
            with contextlib.suppress(Exception):
                n.stop(30)
            n.kill9()
        if self._tmp is not None:
            self._tmp.cleanup()

    # -- as a test peer, like support.tansu.Tansu --------------------------------------------

    def create_topic(
        self,
        partitions: int = 1,
        *,
        name: str | None = None,
        replication: int = 1,
        config: Mapping[str, str] | None = None,
    ) -> str:
        """Create a topic through confluent-kafka's admin client and wait until every node
        knows its leaders; its name (``name``, or a new ``kg-`` name)."""
        from confluent_kafka.admin import AdminClient, NewTopic

        name = name or f"kg-{uuid.uuid4().hex[:12]}"
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        topic = NewTopic(name, partitions, replication, config=dict(config or {}))
        for f in admin.create_topics([topic]).values():
            f.result(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            md = admin.list_topics(name, timeout=10).topics.get(name)
            if (
                md is not None
                and md.error is None
                and len(md.partitions) == partitions
                and all(p.leader >= 0 for p in md.partitions.values())
            ):
                return name
            time.sleep(0.1)
        raise TimeoutError(f"topic {name} has no leaders after 30 s")


@contextlib.contextmanager
def run_kafka(
    nodes: int = 1, config: Mapping[str, Any] | None = None, **kwargs: Any
) -> Iterator[KafkaCluster]:
    """Apache Kafka on free loopback ports for the length of the block."""
    with KafkaCluster(nodes, config, **kwargs) as cluster:
        yield cluster
