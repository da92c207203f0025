"""kgroup for confluent-kafka users.

confluent-kafka's partitioner runs inside librdkafka (C), whose default, ``consistent_random``,
hashes keys with CRC-32 and so disagrees with Java's producer for most keys. Python code cannot
plug a partitioner in, but ``Producer.produce`` takes an explicit ``partition=``:
:class:`JavaPartitioner` computes it.

    from confluent_kafka import Producer
    from kgroup.adapters.confluent_kafka import JavaPartitioner

    producer = Producer({"bootstrap.servers": "127.0.0.1:9092"})
    partition_for = JavaPartitioner(producer)
    producer.produce("orders", key=b"customer-42", value=b"...",
                     partition=partition_for("orders", b"customer-42"))

A null key gives -1 (librdkafka's ``RD_KAFKA_PARTITION_UA``), which leaves the choice to
librdkafka's own sticky partitioner, as Java leaves null keys to its own.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from kgroup.errors import KGroupError
from kgroup.partitioners import HashName, partition_for_key

__all__ = ["UNASSIGNED", "JavaPartitioner"]

#: librdkafka's RD_KAFKA_PARTITION_UA: "let librdkafka's partitioner choose".
UNASSIGNED = -1


class JavaPartitioner:
    """Computes ``partition=`` for ``Producer.produce`` as Java's producer would choose it.

    ``client`` is a confluent-kafka ``Producer`` (or ``Consumer`` / ``AdminClient``): anything
    with ``list_topics(topic, timeout)``. Partition counts are cached per topic for
    ``metadata_max_age_s`` (Kafka's ``metadata.max.age.ms`` default is 5 minutes), so a topic
    that grows is picked up as Java's producer would pick it up. Thread-safe.
    """

    def __init__(
        self,
        client: Any,
        hash: HashName = "murmur2",
        *,
        metadata_max_age_s: float = 300.0,
        timeout_s: float = 10.0,
    ) -> None:
        partition_for_key(b"", 1, hash=hash)  # validates the name
        self.client = client
        self.hash = hash
        self.metadata_max_age_s = metadata_max_age_s
        self.timeout_s = timeout_s
        self._counts: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def partition_count(self, topic: str) -> int:
        """The topic's partition count from (cached) cluster metadata."""
        now = time.monotonic()
        with self._lock:
            cached = self._counts.get(topic)
        if cached is not None and now - cached[1] < self.metadata_max_age_s:
            return cached[0]
        md = self.client.list_topics(topic, timeout=self.timeout_s)
        t = md.topics.get(topic)
        if t is None or t.error is not None or not t.partitions:
            err = t.error if t is not None else "not in metadata"
            raise KGroupError(f"cannot get the partition count of topic {topic!r}: {err}")
        count = len(t.partitions)
        with self._lock:
            self._counts[topic] = (count, now)
        return count

    def __call__(self, topic: str, key: bytes | str | None) -> int:
        if key is None:
            return UNASSIGNED
        return partition_for_key(key, self.partition_count(topic), hash=self.hash)
