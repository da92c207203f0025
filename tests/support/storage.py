"""Helpers of the storage tests (tests/broker/test_storage*.py): topics made and deleted with
confluent-kafka's admin client, a producer that never retries and records every outcome,
everything of a topic read back, a raw Fetch body."""

from __future__ import annotations

import time
import uuid
from typing import Any

STORAGE_ERROR = 56


def admin(bootstrap: str) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap})


def create_topic(bootstrap: str, partitions: int = 1, config: dict[str, str] | None = None) -> str:
    from confluent_kafka.admin import NewTopic

    name = f"st-{uuid.uuid4().hex[:8]}"
    a = admin(bootstrap)
    a.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name].result(30)
    return name


def delete_topic(bootstrap: str, topic: str) -> None:
    a = admin(bootstrap)
    a.delete_topics([topic])[topic].result(30)


class Sender:
    """A confluent-kafka producer that never retries, recording every outcome."""

    def __init__(self, bootstrap: str, **config: Any) -> None:
        from confluent_kafka import Producer

        self.acked: dict[bytes, tuple[int, int]] = {}
        self.errors: list[int] = []
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "retries": 0,
                "enable.idempotence": False,
                "linger.ms": 2,
                "message.timeout.ms": 15_000,
                **config,
            }
        )

    def _done(self, err: Any, msg: Any) -> None:
        if err is None:
            self.acked[msg.value()] = (msg.partition(), msg.offset())
        else:
            self.errors.append(err.code())

    def send(self, topic: str, values: list[bytes], partition: int = 0) -> tuple[int, int]:
        """Send ``values`` and wait for every answer; (acked, failed) among them."""
        acked, failed = len(self.acked), len(self.errors)
        for v in values:
            while True:
                try:
                    self.producer.produce(topic, v, partition=partition, on_delivery=self._done)
                    break
                except BufferError:
                    self.producer.poll(0.05)
        assert self.producer.flush(30) == 0
        return len(self.acked) - acked, len(self.errors) - failed


def read_all(bootstrap: str, topic: str, partitions: int = 1) -> dict[bytes, tuple[int, int]]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "unused",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "fetch.max.bytes": 4 << 20,
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: dict[bytes, tuple[int, int]] = {}
    eof: set[int] = set()
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and len(eof) < partitions:
            for m in c.consume(500, 0.5):
                if m.error() is None:
                    out[m.value()] = (m.partition(), m.offset())
                    eof.discard(m.partition())
                elif m.error().code() == m.error()._PARTITION_EOF:
                    eof.add(m.partition())
                else:
                    raise AssertionError(f"fetch failed: {m.error()}")
    finally:
        c.close()
    return out


def fetch_body(topic: str, parts: dict[int, int]) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {"partition": p, "fetch_offset": o, "partition_max_bytes": 1 << 20}
                    for p, o in parts.items()
                ],
            }
        ],
    }


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def values(n: int, size: int, tag: str) -> list[bytes]:
    return [f"{tag}-{i:06d}-".encode().ljust(size, b"x") for i in range(n)]
