"""Exactly-once, end to end, under kill -9: three consume-transform-produce services
(``support.eos_service``) in one group copy an input topic to an output topic in transactions
that also commit the group's offsets, while one of them is killed with kill -9 and started again
and the broker itself is killed with kill -9 and started again on its data. A read_committed
reader of the output then finds every input record exactly once, and the group's committed
offsets are the input's end: Kafka's system test ``transactions_test.py`` (copiers bounced hard,
brokers bounced hard), with confluent-kafka's client and with kgroup's own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from support.kgroup_broker import BrokerProcess

pytestmark = pytest.mark.network

ck = pytest.importorskip("confluent_kafka")
admin_module = pytest.importorskip("confluent_kafka.admin")  # ck.admin

RECORDS = 3000
PARTITIONS = 6
TESTS = Path(__file__).resolve().parents[1]


def service(bootstrap: str, client: str, group: str, index: int, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "support.eos_service",
            "--client",
            client,
            "--bootstrap",
            bootstrap,
            "--input",
            "in",
            "--output",
            "out",
            "--group",
            group,
            "--transactional-id",
            f"{group}-{index}",
            "--transaction-timeout-ms",
            "5000",
        ],
        cwd=TESTS,
        stdout=open(log, "a"),
        stderr=subprocess.STDOUT,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )


def committed_total(bootstrap: str, group: str) -> int:
    admin = admin_module.AdminClient({"bootstrap.servers": bootstrap})
    req = ck.ConsumerGroupTopicPartitions(
        group, [ck.TopicPartition("in", p) for p in range(PARTITIONS)]
    )
    try:
        [f] = admin.list_consumer_group_offsets([req], require_stable=True).values()
        return sum(max(tp.offset, 0) for tp in f.result(5).topic_partitions)
    except ck.KafkaException:
        return -1


def read_output(bootstrap: str) -> list[bytes]:
    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:6]}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    c.assign([ck.TopicPartition("out", p, 0) for p in range(PARTITIONS)])
    got: list[bytes] = []
    idle_since = time.monotonic()
    try:
        while time.monotonic() - idle_since < 3:
            msgs = [m for m in c.consume(500, 0.3) if m.error() is None]
            if msgs:
                idle_since = time.monotonic()
                got += [m.value() for m in msgs]
    finally:
        c.close()
    return got


@pytest.mark.parametrize("client", ["confluent", "kgroup"])
def test_exactly_once_through_kill9(tmp_path: Path, client: str) -> None:
    config = {
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000,
        "group.initial.rebalance.delay.ms": 0,
    }
    group = f"eos-{uuid.uuid4().hex[:6]}"
    logs = [tmp_path / f"service-{i}.log" for i in range(3)]
    with BrokerProcess(tmp_path / "data", config) as broker:
        bootstrap = broker.bootstrap
        admin = admin_module.AdminClient({"bootstrap.servers": bootstrap})
        for name in ("in", "out"):
            admin.create_topics([admin_module.NewTopic(name, PARTITIONS, 1)])[name].result(10)
        seed = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
        for i in range(RECORDS):
            seed.produce("in", f"{i}".encode(), key=f"{i}".encode())
        assert seed.flush(30) == 0
        services = [service(bootstrap, client, group, i, logs[i]) for i in range(3)]
        try:
            deadline = time.monotonic() + 120

            def wait_for(total: int) -> None:
                while committed_total(bootstrap, group) < total:
                    assert time.monotonic() < deadline, [log.read_text()[-2000:] for log in logs]
                    assert all(s.poll() is None for s in services), [
                        log.read_text()[-2000:] for log in logs
                    ]
                    time.sleep(0.2)

            wait_for(RECORDS // 5)
            # A member dies mid-transaction, and comes back under the same transactional id.
            services[1].kill()
            services[1].wait(10)
            services[1] = service(bootstrap, client, group, 1, logs[1])
            wait_for(RECORDS // 2)
            # The broker dies; the services ride it out on their retries.
            broker.kill9()
            broker.start()
            wait_for(RECORDS)
        finally:
            for s in services:
                s.kill()
                s.wait(10)
        out = read_output(bootstrap)
        counts = Counter(out)
        twice = [v for v, n in counts.items() if n > 1]
        missing = set(f"{i}".encode() for i in range(RECORDS)) - set(counts)
        assert not twice, f"{len(twice)} records written twice, e.g. {twice[:5]}"
        assert not missing, f"{len(missing)} records missing, e.g. {sorted(missing)[:5]}"
        assert len(out) == RECORDS
