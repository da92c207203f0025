"""Java's transactional clients on kgroup's broker: Kafka's own TransactionalMessageCopier (the
tool Kafka's system test ``transactions_test.py`` runs), two of them in one group, each a Java
consumer under read_committed and a Java transactional producer that sends its offsets to the
transaction with the consumer's group metadata (KIP-447) and aborts a third of its transactions
at random, copy an input topic to an output topic. Every input record is then in the output
exactly once for read_committed readers: kgroup's consumer and confluent-kafka's."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from support.apache_kafka import tool_command
from support.kgroup_broker import run_broker

import kgroup

pytestmark = [pytest.mark.network, pytest.mark.slow]

ck = pytest.importorskip("confluent_kafka")

COPIER = "org.apache.kafka.tools.TransactionalMessageCopier"
RECORDS = 600
PARTITIONS = 2


def copier(
    bootstrap: str,
    group: str,
    index: int,
    log: Path,
    source: str = "in",
    sink: str = "out",
    partition: int | None = None,
) -> subprocess.Popen:
    """A copier in ``group`` (group mode), or of one ``partition`` of ``source`` (assign mode,
    copying its ``RECORDS / PARTITIONS`` records: the tool counts what is left in offsets,
    markers and aborted records too, so on transactional input it is told how many)."""
    if partition is None:
        mode = ["--input-partition", "0", "--group-mode"]
    else:
        mode = ["--input-partition", str(partition), "--max-messages", str(RECORDS // PARTITIONS)]
    return subprocess.Popen(
        tool_command(
            COPIER,
            "--broker-list",
            bootstrap,
            "--input-topic",
            source,
            *mode,
            "--output-topic",
            sink,
            "--consumer-group",
            group,
            "--transactional-id",
            f"{group}-{index}",
            "--transaction-size",
            "50",
            "--transaction-timeout",
            "10000",
            "--use-group-metadata",
            "--enable-random-aborts",
        ),
        stdout=open(log, "w"),
        stderr=subprocess.STDOUT,
    )


def read_committed(
    bootstrap: str, expect: int, topic: str = "out", timeout: float = 20
) -> tuple[list, list]:
    """``topic``'s values as kgroup's and confluent-kafka's read_committed consumers see
    them."""
    tps = [kgroup.TopicPartition(topic, p, 0) for p in range(PARTITIONS)]
    ours = kgroup.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "check",
            "isolation.level": "read_committed",
        }
    )
    ours.assign(tps)
    theirs = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "check",
            "isolation.level": "read_committed",
        }
    )
    theirs.assign([ck.TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    got: tuple[list, list] = ([], [])
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and min(map(len, got)) < expect:
            for m in ours.consume(500, 0.2):
                if m.error() is None:
                    got[0].append(m.value())
            for m in theirs.consume(500, 0.2):
                if m.error() is None:
                    got[1].append(m.value())
    finally:
        ours.close()
        theirs.close()
    return got


def test_java_copiers_copy_exactly_once(tmp_path: Path) -> None:
    with run_broker(tmp_path / "data", {"group.initial.rebalance.delay.ms": 0}) as broker:
        bootstrap = broker.bootstrap_servers
        with kgroup.AdminClient({"bootstrap.servers": bootstrap}) as admin:
            for name in ("in", "out"):
                admin.create_topics([kgroup.NewTopic(name, PARTITIONS, 1)])[name].result(10)
        seed = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
        for i in range(RECORDS):
            seed.produce("in", f"{i}".encode(), key=f"{i}".encode(), partition=i % PARTITIONS)
        assert seed.flush(30) == 0
        group = f"copier-{uuid.uuid4().hex[:6]}"
        logs = [tmp_path / f"copier-{i}.log" for i in range(2)]
        procs = [copier(bootstrap, group, i, logs[i]) for i in range(2)]
        try:
            deadline = time.monotonic() + 120
            while any(p.poll() is None for p in procs):
                assert time.monotonic() < deadline, [log.read_text()[-3000:] for log in logs]
                time.sleep(0.5)
        finally:
            for p in procs:
                p.kill()
                p.wait(10)
        # Each copier ends once it copied what its partitions held when they were assigned.
        assert all(p.returncode == 0 for p in procs), [log.read_text()[-3000:] for log in logs]
        want = {f"{i}".encode() for i in range(RECORDS)}
        ours, theirs = read_committed(bootstrap, RECORDS)
        for got in (ours, theirs):
            counts = Counter(got)
            assert not [v for v, n in counts.items() if n > 1], "a record copied twice"
            assert set(counts) == want
        # Java read_committed consumers of that output (copiers of each of its partitions, on
        # to "out2") skip what the first ones aborted.
        with kgroup.AdminClient({"bootstrap.servers": bootstrap}) as admin:
            admin.create_topics([kgroup.NewTopic("out2", PARTITIONS, 1)])["out2"].result(10)
        logs = [tmp_path / f"copier-out-{p}.log" for p in range(PARTITIONS)]
        again = [
            copier(bootstrap, f"{group}-out", 10 + p, logs[p], "out", "out2", partition=p)
            for p in range(PARTITIONS)
        ]
        try:
            for proc, log in zip(again, logs, strict=True):
                assert proc.wait(60) == 0, log.read_text()[-3000:]
        finally:
            for proc in again:
                proc.kill()
                proc.wait(10)
        for got in read_committed(bootstrap, RECORDS, "out2"):
            assert sorted(got) == sorted(want)
