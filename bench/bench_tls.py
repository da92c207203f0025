"""What TLS costs kgroup's broker beside what it costs Apache Kafka (issue 24): produce and
consume throughput and acks=all latency (p50, p99) over PLAINTEXT, over SSL and over SASL_SSL
(SCRAM-SHA-512 and PLAIN), with the same client (confluent-kafka) on both brokers, and each
broker's ratio against PLAINTEXT. Target: TLS costs kgroup no more, relatively, than it costs
Kafka.

Each broker runs once, a process of its own with three listeners (PLAINTEXT; SSL and SASL_SSL
with the test PKI of tests/support/certs.py, no client certificates), its data on disk; each
listener type gets a topic of its own. Another listener type is one more entry of LISTENERS:
its broker settings and its client settings.

    make bench-tls            # pytest-benchmark; or: python bench/bench_tls.py [--records N]

Figures print as a table; ``--json FILE`` writes them too. Broker CPU seconds per phase are
shown beside each figure: where the time goes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import confluent_kafka  # noqa: E402
import confluent_kafka.admin  # noqa: E402
from support import tls as client_tls  # noqa: E402
from support.certs import Certs  # noqa: E402

from bench.report import load_average, summary  # noqa: E402
from bench.servers import KAFKA_HEAP, Server, free_port, wait_answering  # noqa: E402

#: SASL_USER and SASL_PASSWORD are the SASL_SSL clients' credentials: a SCRAM user made on
#: each broker through AlterUserScramCredentials, and a PLAIN user of the listener's JAAS config.
SASL_USER, SASL_PASSWORD = "bench", "bench-secret"


@dataclass(frozen=True)
class ListenerType:
    """One way of connecting: ``label`` names it in the figures; ``protocol`` is the listener
    it connects to (named as its security protocol, one per protocol), ``broker`` that
    listener's settings, ``client`` a client's."""

    label: str
    protocol: str
    broker: Callable[[Certs], dict[str, str]]
    client: Callable[[Certs], dict[str, Any]]


def sasl_ssl_broker(certs: Certs) -> dict[str, str]:
    """The SASL_SSL listener: TLS as the SSL listener's (Kafka's ``ssl.*`` keys serve every
    TLS listener), SCRAM-SHA-512 and PLAIN in Kafka's per-listener JAAS keys."""
    plain = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'user_{SASL_USER}="{SASL_PASSWORD}";'
    )
    return {
        **client_tls.broker_ssl(certs, "none", encrypted=False),
        "sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        ),
        "listener.name.sasl_ssl.plain.sasl.jaas.config": plain,
    }


def sasl_ssl_client(mechanism: str) -> Callable[[Certs], dict[str, Any]]:
    def conf(certs: Certs) -> dict[str, Any]:
        return {
            **client_tls.confluent(certs),
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": mechanism,
            "sasl.username": SASL_USER,
            "sasl.password": SASL_PASSWORD,
        }

    return conf


#: LISTENERS are the listener types compared, PLAINTEXT first (the baseline of the ratios).
LISTENERS = [
    ListenerType("PLAINTEXT", "PLAINTEXT", lambda certs: {}, lambda certs: {}),
    ListenerType(
        "SSL",
        "SSL",
        # Kafka's JDK cannot decrypt PBES2 PEM keys: both brokers read the key in the clear.
        lambda certs: client_tls.broker_ssl(certs, "none", encrypted=False),
        lambda certs: client_tls.confluent(certs),
    ),
    ListenerType("SASL_SSL/SCRAM", "SASL_SSL", sasl_ssl_broker, sasl_ssl_client("SCRAM-SHA-512")),
    ListenerType("SASL_SSL/PLAIN", "SASL_SSL", sasl_ssl_broker, sasl_ssl_client("PLAIN")),
]
#: PROTOCOLS are the listeners each broker runs, one per security protocol, PLAINTEXT first.
PROTOCOLS = list(dict.fromkeys(lt.protocol for lt in LISTENERS))


@dataclass
class Broker:
    server: Server
    addresses: dict[str, str]


def listener_config(certs: Certs) -> tuple[dict[str, str], dict[str, int]]:
    ports = {p: free_port() for p in PROTOCOLS}
    config = {
        "listeners": ",".join(f"{p}://127.0.0.1:{port}" for p, port in ports.items()),
        "advertised.listeners": ",".join(f"{p}://127.0.0.1:{port}" for p, port in ports.items()),
    }
    for lt in LISTENERS:
        config.update(lt.broker(certs))
    return config, ports


@contextlib.contextmanager
def kgroup_broker(certs: Certs, tmp: Path) -> Iterator[Broker]:
    config, ports = listener_config(certs)
    props = tmp / "kgroup.properties"
    props.write_text("".join(f"{k}={v}\n" for k, v in config.items()))
    argv = [sys.executable, "-m", "kgroup.cli", "broker", "--config", str(props)]
    argv += ["--data-dir", str(tmp / "kgroup-data"), "--log-level", "WARNING"]
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        first = ports[PROTOCOLS[0]]
        startup = wait_answering(first, proc, started)
        server = Server("kgroup", f"127.0.0.1:{first}", proc, startup_s=startup)
        yield Broker(server, {p: f"127.0.0.1:{port}" for p, port in ports.items()})
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def kafka_broker(certs: Certs) -> Iterator[Broker]:
    from support.apache_kafka import KafkaCluster, lib_dir

    listeners, ports = listener_config(certs)
    cluster = KafkaCluster(1, {k: v for k, v in listeners.items() if "listeners" not in k})
    node = cluster.nodes[0]
    for key in ("listeners", "advertised.listeners"):
        extra = listeners[key].split(",")[1:]  # PLAINTEXT is the node's own
        node.config[key] = ",".join([node.config[key], *extra])
    node.config["listener.security.protocol.map"] += "".join(f",{p}:{p}" for p in PROTOCOLS[1:])
    try:
        lib_dir()
        node.write_config()
        node.format(cluster.cluster_id)
        started = time.monotonic()
        node.start()
        assert node.proc is not None
        startup = wait_answering(node.port, node.proc, started)
        node.wait_started()
        server = Server("kafka", node.bootstrap, node.proc, startup_s=startup)
        addresses = {PROTOCOLS[0]: node.bootstrap}
        addresses |= {p: f"127.0.0.1:{ports[p]}" for p in PROTOCOLS[1:]}
        yield Broker(server, addresses)
    finally:
        cluster.close()


# -- the measurements ------------------------------------------------------------------------


def create_topic(conf: dict[str, Any], partitions: int) -> str:
    name = f"tls-{uuid.uuid4().hex[:8]}"
    admin = confluent_kafka.admin.AdminClient(conf)
    topic = confluent_kafka.admin.NewTopic(name, partitions, 1)
    for f in admin.create_topics([topic]).values():
        f.result(30)
    return name


def add_scram_user(conf: dict[str, Any]) -> None:
    """Make the SCRAM-SHA-512 user of the SASL_SSL clients, as Kafka's tools do: an
    AlterUserScramCredentials request (over ``conf``'s PLAINTEXT listener)."""
    admin = confluent_kafka.admin.AdminClient(conf)
    info = confluent_kafka.admin.ScramCredentialInfo(
        confluent_kafka.admin.ScramMechanism.SCRAM_SHA_512, 4096
    )
    upsert = confluent_kafka.admin.UserScramCredentialUpsertion(
        SASL_USER, info, SASL_PASSWORD.encode()
    )
    for f in admin.alter_user_scram_credentials([upsert]).values():
        f.result(30)


def produce(conf: dict[str, Any], topic: str, records: int, size: int) -> float:
    """Produce ``records`` of ``size`` bytes (acks=1); MB/s."""
    p = confluent_kafka.Producer(
        {**conf, "acks": "1", "linger.ms": 5, "batch.size": 1_000_000, "compression.type": "none"}
    )
    value = os.urandom(size)
    start = time.perf_counter()
    for _ in range(records):
        while True:
            try:
                p.produce(topic, value)
                break
            except BufferError:
                p.poll(0.01)
    assert p.flush(120) == 0
    return records * size / (time.perf_counter() - start) / 1e6


def consume(conf: dict[str, Any], topic: str, partitions: int, records: int, size: int) -> float:
    """Read the topic from its start (no group); MB/s."""
    c = confluent_kafka.Consumer(
        {**conf, "group.id": "bench-tls", "enable.auto.commit": False, "fetch.max.bytes": 52428800}
    )
    c.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(partitions)])
    got = 0
    start = time.perf_counter()
    deadline = time.monotonic() + 300
    while got < records and time.monotonic() < deadline:
        for m in c.consume(10_000, 1.0):
            if m.error() is None:
                got += 1
    elapsed = time.perf_counter() - start
    c.close()
    assert got == records, f"read {got} of {records}"
    return records * size / elapsed / 1e6


def latency(conf: dict[str, Any], topic: str, rounds: int) -> tuple[float, float]:
    """acks=all round trips of one 100-byte record; p50 and p99 in ms."""
    p = confluent_kafka.Producer({**conf, "acks": "all", "linger.ms": 0})
    times = []
    for i in range(rounds + 20):
        start = time.perf_counter()
        p.produce(topic, b"x" * 100)
        assert p.flush(10) == 0
        if i >= 20:  # warm
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))]


def measure(
    broker: Broker, certs: Certs, records: int, size: int, partitions: int, rounds: int
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    add_scram_user({"bootstrap.servers": broker.addresses[PROTOCOLS[0]]})
    # A first pass on every listener, unmeasured: Kafka's JIT warms up (else the first
    # listener measured would pay for it), kgroup's caches fill.
    for lt in LISTENERS:
        conf = {"bootstrap.servers": broker.addresses[lt.protocol], **lt.client(certs)}
        warm = create_topic(conf, partitions)
        produce(conf, warm, records // 5, size)
        consume(conf, warm, partitions, records // 5, size)
        latency(conf, warm, 200)
    for lt in LISTENERS:
        conf = {"bootstrap.servers": broker.addresses[lt.protocol], **lt.client(certs)}
        topic = create_topic(conf, partitions)
        figures: dict[str, float] = {}
        # The client's CPU too (this process: librdkafka's threads and the Python loop): on a
        # shared machine the throughput is often the client's, and TLS costs it as much
        # whichever broker it talks to.
        cpu, mine = broker.server.cpu_seconds(), time.process_time()
        figures["produce MB/s"] = produce(conf, topic, records, size)
        figures["produce broker cpu s"] = broker.server.cpu_seconds() - cpu
        figures["produce client cpu s"] = time.process_time() - mine
        cpu, mine = broker.server.cpu_seconds(), time.process_time()
        figures["consume MB/s"] = consume(conf, topic, partitions, records, size)
        figures["consume broker cpu s"] = broker.server.cpu_seconds() - cpu
        figures["consume client cpu s"] = time.process_time() - mine
        one = create_topic(conf, 1)
        cpu = broker.server.cpu_seconds()
        p50, p99 = latency(conf, one, rounds)
        figures["acks=all p50 ms"], figures["acks=all p99 ms"] = p50, p99
        figures["acks=all broker cpu us"] = (broker.server.cpu_seconds() - cpu) / rounds * 1e6
        out[lt.label] = figures
    return out


def report(results: dict[str, dict[str, dict[str, float]]], moved_mb: float) -> list[str]:
    """The figures as a table per broker, the SSL/PLAINTEXT ratios side by side, and the
    broker CPU TLS adds per GB (each phase moved ``moved_mb``)."""
    base = LISTENERS[0].label
    lines = [load_average()]
    for broker, by_listener in results.items():
        lines.append(f"{broker}:")
        whats = list(next(iter(by_listener.values())))
        head = f"  {'':<22}" + "".join(f"{p:>15}" for p in by_listener)
        head += "".join(f"{p + '/' + base:>26}" for p in list(by_listener)[1:])
        lines.append(head)
        for w in whats:
            row = f"  {w:<22}" + "".join(f"{by_listener[p][w]:>15.2f}" for p in by_listener)
            for p in list(by_listener)[1:]:
                b = by_listener[base][w]
                row += f"{by_listener[p][w] / b if b else float('nan'):>26.2f}"
            lines.append(row)
    # The target: kgroup's ratio no worse than Kafka's (throughput: higher is better; latency
    # and CPU: lower is better).
    if {"kgroup", "kafka"} <= set(results):
        lines.append("TLS cost, kgroup's ratio against Kafka's (>= 1: TLS costs kgroup no more):")
        for p in list(results["kgroup"])[1:]:
            for w in results["kgroup"][p]:
                kg = results["kgroup"][p][w] / results["kgroup"][base][w]
                ka = results["kafka"][p][w] / results["kafka"][base][w]
                better = kg / ka if w.endswith("MB/s") else ka / kg
                lines.append(f"  {p} {w:<22} kgroup x{kg:.2f}  kafka x{ka:.2f}  -> {better:.2f}")
    # What TLS adds in broker CPU, per GB moved: a ratio flatters a broker whose PLAINTEXT
    # path is slow (and hurts one whose PLAINTEXT consume is zero-copy).
    lines.append(f"Broker CPU seconds TLS adds per GB ({moved_mb:.0f} MB moved each way):")
    for broker, by_listener in results.items():
        for p in list(by_listener)[1:]:
            added = [
                (by_listener[p][w] - by_listener[base][w]) / moved_mb * 1000
                for w in ("produce broker cpu s", "consume broker cpu s")
            ]
            lines.append(f"  {broker:<8} {p}: produce {added[0]:+.2f} s, consume {added[1]:+.2f} s")
    # The ceiling a broker could reach if TLS cost it nothing: the client still pays for its
    # own encryption, and on a machine where client and broker share the cores, every core
    # second the client takes is one the broker does not get. A produce of a GB needs at least
    # (the client's CPU on TLS + the broker's on PLAINTEXT) / cores seconds.
    cores = len(os.sched_getaffinity(0))
    lines.append(
        f"Produce ceiling were TLS free for the broker ({cores} cores shared by client and "
        "broker): cores / (client CPU per GB on TLS + broker CPU per GB on PLAINTEXT):"
    )
    for broker, by_listener in results.items():
        plain = by_listener[base]
        for p in list(by_listener)[1:]:
            per_gb = (
                (by_listener[p]["produce client cpu s"] + plain["produce broker cpu s"])
                / moved_mb
                * 1000
            )
            ceiling = cores / per_gb * 1000
            measured = by_listener[p]["produce MB/s"] / plain["produce MB/s"]
            lines.append(
                f"  {broker:<8} {p}: {ceiling:.0f} MB/s, x{ceiling / plain['produce MB/s']:.2f} "
                f"of PLAINTEXT (measured x{measured:.2f})"
            )
    lines.append("Client CPU seconds TLS adds per GB (the same client on both brokers):")
    for broker, by_listener in results.items():
        for p in list(by_listener)[1:]:
            added = [
                (by_listener[p][w] - by_listener[base][w]) / moved_mb * 1000
                for w in ("produce client cpu s", "consume client cpu s")
            ]
            lines.append(f"  {broker:<8} {p}: produce {added[0]:+.2f} s, consume {added[1]:+.2f} s")
    return lines


def run_all(
    records: int, size: int, partitions: int, rounds: int, servers: list[str]
) -> dict[str, dict[str, dict[str, float]]]:
    """Every figure of each broker of ``servers``, one broker after the other."""
    results: dict[str, dict[str, dict[str, float]]] = {}
    print(f"kafka heap {KAFKA_HEAP}; {load_average()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as tmp:
        certs = Certs(Path(tmp) / "certs")
        for name in servers:
            start = kgroup_broker(certs, Path(tmp)) if name == "kgroup" else kafka_broker(certs)
            with start as broker:
                results[name] = measure(broker, certs, records, size, partitions, rounds)
            print(f"{name} done; {load_average()}", flush=True)
    return results


#: _RESULTS are the figures of the pytest run (test_tls), for its summary.
_RESULTS: dict[str, dict[str, dict[str, float]]] = {}
_MOVED_MB: list[float] = []


def test_tls(benchmark: Any) -> None:
    """The whole comparison, once, as a pytest-benchmark (``make bench-tls``): the figures are
    in the summary at the end and in the benchmark's extra_info. KGROUP_BENCH_TLS_RECORDS
    (200,000) sets the records per phase, KGROUP_BENCH_SERVERS (kgroup,kafka) the brokers."""
    benchmark.group = "tls"
    records = int(os.environ.get("KGROUP_BENCH_TLS_RECORDS", 200_000))
    servers = os.environ.get("KGROUP_BENCH_SERVERS", "kgroup,kafka").split(",")
    servers = [s for s in servers if s in ("kgroup", "kafka")]

    def run() -> None:
        _RESULTS.clear()
        _RESULTS.update(run_all(records, 1000, 6, 1000, servers))
        _MOVED_MB[:] = [records * 1000 / 1e6]

    benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update(
        {
            f"{b} {lt} {w}": v
            for b, r in _RESULTS.items()
            for lt, f in r.items()
            for w, v in f.items()
        }
    )


@summary("tls: TLS and SASL_SSL against PLAINTEXT, kgroup beside Apache Kafka, confluent-kafka")
def _summary() -> list[str]:
    if not _RESULTS:
        return []
    return report(_RESULTS, _MOVED_MB[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=1000, help="acks=all round trips")
    parser.add_argument("--servers", default="kgroup,kafka")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = run_all(
        args.records, args.size, args.partitions, args.rounds, args.servers.split(",")
    )
    for line in report(results, args.records * args.size / 1e6):
        print(line)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
