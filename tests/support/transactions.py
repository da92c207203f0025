"""Real transactions for the transaction admin tests: confluent-kafka's transactional Producer
leaves one open (or commits it) on any broker that serves transactions, and a read_committed
confluent-kafka Consumer reads a partition to its end, as an application would.

The broker fixtures the tests run on are parametrised by name: ``"kafka"`` (the session's
Apache Kafka) and ``"kgroup"`` (a kgroup broker of the test module, started with KIP-890's
partition verification off, as :func:`without_verification` turns it off on Kafka for a while:
kgroup's broker configs are static).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as CkTP

from kgroup.client import AdminClient, ConfigEntry, ConfigResource, NewTopic
from kgroup.client.admin import AlterConfigOpType
from kgroup.client.connection import Connection
from kgroup.errors import raise_for_code
from kgroup.protocol import ApiKey
from kgroup.protocol.records import encode_batch

#: The brokers the transaction admin tests run on (see the module's docstring).
TXN_BROKERS = ["kafka", "kgroup"]

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


VERIFICATION = "transaction.partition.verification.enable"


@contextlib.contextmanager
def without_verification(bootstrap: str, broker: int) -> Iterator[None]:
    """Apache Kafka's ``broker`` with KIP-890's partition verification off (a dynamic broker
    config) for the length of the block: it then appends a transactional batch for a
    partition its transaction never added, as brokers before 3.6 did, which is how a hanging
    transaction comes about. Restored on exit."""
    res = ConfigResource("broker", str(broker))

    def alter(op: AlterConfigOpType, value: str | None) -> None:
        entry = ConfigEntry(VERIFICATION, value, incremental_operation=op)
        with AdminClient({"bootstrap.servers": bootstrap}) as admin:
            change = ConfigResource("broker", str(broker), incremental_configs=[entry])
            admin.incremental_alter_configs([change], request_timeout=10)[change].result()
            # The broker applies it once the controller's record reaches it.
            deadline = time.monotonic() + 10
            want = "true" if value is None else value
            while time.monotonic() < deadline:
                configs = admin.describe_configs([res], request_timeout=5)[res].result()
                if configs[VERIFICATION].value == want:
                    return
                time.sleep(0.1)
        raise TimeoutError(f"{VERIFICATION} is not {value} after 10 s")

    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        current = admin.describe_configs([res], request_timeout=5)[res].result()[VERIFICATION]
    if current.value == "false":
        yield  # off already (kgroup's broker of these tests)
        return
    alter(AlterConfigOpType.SET, "false")
    try:
        yield
    finally:
        alter(AlterConfigOpType.DELETE, None)


def hanging_transaction(
    bootstrap: str, topic: str, partition: int, values: list[bytes]
) -> tuple[str, int, int]:
    """A transaction open in one partition that its coordinator knows nothing of: a
    transactional id is initialised (confluent-kafka's ``init_transactions``), then its
    producer id and epoch write a transactional batch straight to the partition's leader
    (Produce v11, no AddPartitionsToTxn) while the leader does not verify it. The
    transactional id, producer id and epoch."""
    tid = f"hang-{uuid.uuid4().hex[:8]}"
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "log_level": 3})
        p.init_transactions(15)
        del p
        d = admin.describe_transactions([tid], request_timeout=5)[tid].result()
        md = admin.list_topics(topic, timeout=5)
        leader = md.topics[topic].partitions[partition].leader
        broker = md.brokers[leader]

    async def produce_raw() -> None:
        conn = Connection(
            broker.host, broker.port, node_id=leader, client_id=tid, request_timeout_ms=10_000
        )
        await conn.open(10)
        try:
            now = int(time.time() * 1000)
            batch = encode_batch(
                [(i, now, None, v) for i, v in enumerate(values)],
                transactional=True,
                producer_id=d.producer_id,
                producer_epoch=d.producer_epoch,
                base_sequence=0,
            )
            body = {
                "transactional_id": tid,
                "acks": -1,
                "timeout_ms": 10_000,
                "topic_data": [
                    {"name": topic, "partition_data": [{"index": partition, "records": batch}]}
                ],
            }
            resp = await conn.request(ApiKey.PRODUCE, body, version=11)
            raise_for_code(resp["responses"][0]["partition_responses"][0]["error_code"])
        finally:
            conn.close()

    with without_verification(bootstrap, leader):
        asyncio.run(produce_raw())
    return tid, d.producer_id, d.producer_epoch
