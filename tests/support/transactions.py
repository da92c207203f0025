"""Real transactions for the transaction admin tests: confluent-kafka's transactional Producer
leaves one open (or commits it) on any broker that serves transactions, and a read_committed
confluent-kafka Consumer reads a partition to its end, as an application would.

The broker fixtures the tests run on are parametrised by name: ``"kafka"`` (the session's
Apache Kafka) today; ``"kgroup"`` joins once kgroup's broker serves transactions.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as CkTP

from kgroup.client import AdminClient, NewTopic

#: The brokers the transaction admin tests run on (see the module's docstring).
TXN_BROKERS = ["kafka"]

#: The open transactions' timeout: longer than any test, short enough that a transaction a
#: failed test leaves open is aborted by its coordinator soon after.
TXN_TIMEOUT_MS = 60_000


def bootstrap_of(request: pytest.FixtureRequest, name: str) -> str:
    """The bootstrap servers of broker fixture ``name``: the session's Apache Kafka, or a
    kgroup broker the test module provides as its ``txn_kgroup_broker`` fixture."""
    if name == "kafka":
        return str(request.getfixturevalue("kafka").bootstrap)
    return str(request.getfixturevalue("txn_kgroup_broker").bootstrap_servers)


def new_topic(bootstrap: str, partitions: int = 2) -> str:
    """A new topic of ``partitions`` partitions, created with kgroup's AdminClient, once every
    partition has a leader."""
    name = f"txn-{uuid.uuid4().hex[:10]}"
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)], request_timeout=15)[name].result()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            md = admin.list_topics(name, timeout=5).topics.get(name)
            if (
                md is not None
                and md.error is None
                and len(md.partitions) == partitions
                and all(p.leader >= 0 for p in md.partitions.values())
            ):
                return name
            time.sleep(0.1)
    raise TimeoutError(f"topic {name} has no leaders after 15 s")


@contextlib.contextmanager
def transactional_producer(bootstrap: str, transactional_id: str) -> Iterator[Producer]:
    """A confluent-kafka Producer with ``transactional_id``, its transactions initialised; on
    exit a transaction left open is aborted (errors ignored: a test may have aborted it in a
    partition already) and the producer flushed."""
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": TXN_TIMEOUT_MS,
            "log_level": 3,
        }
    )
    p.init_transactions(15)
    try:
        yield p
    finally:
        with contextlib.suppress(Exception):
            p.abort_transaction(10)
        p.flush(5)


def produce(p: Producer, topic: str, partition: int, values: list[bytes]) -> None:
    """Send ``values`` to one partition in ``p``'s open transaction and wait until written."""
    for v in values:
        p.produce(topic, v, partition=partition)
    assert p.flush(10) == 0


def read_committed(
    bootstrap: str, topic: str, partition: int, timeout: float = 15
) -> tuple[list[bytes], int]:
    """What a read_committed consumer reads of one partition from its start until it reaches
    the end, and the offset at which it reached it (librdkafka's partition EOF: under
    read_committed, the last stable offset, which an open transaction holds back)."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"rc-{uuid.uuid4().hex[:8]}",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
            "log_level": 3,
        }
    )
    try:
        c.assign([CkTP(topic, partition, 0)])
        values: list[bytes] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            err = m.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    return values, int(m.offset())
                raise RuntimeError(f"consumer error: {err}")
            values.append(bytes(m.value()))
        raise TimeoutError(f"{topic} [{partition}] not read to its end in {timeout} s")
    finally:
        c.close()
