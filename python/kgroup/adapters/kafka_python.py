"""kgroup for kafka-python users.

:class:`JavaPartitioner` is a partitioner for ``KafkaProducer(partitioner=...)``: keyed records
go where Java's producer puts them (or where librdkafka's ``crc32`` / ``fnv1a`` partitioners
would, with ``hash=``); null-key records follow Kafka 2.4-3.2's sticky partition cache, rotated
by the producer's ``on_new_batch`` hook (kafka-python 2.1+), so batches fill up as in Java.

    from kafka import KafkaProducer
    from kgroup.adapters.kafka_python import JavaPartitioner

    producer = KafkaProducer(bootstrap_servers="127.0.0.1:9092", partitioner=JavaPartitioner())
"""

from __future__ import annotations

import threading
from typing import Any

from kgroup.partitioners import HashName, StickyPartitionCache, partition_for_key

try:  # kafka-python >= 2.1 has an abstract base class; older releases call a plain callable.
    from kafka.partitioner.abc import Partitioner as _Base
except ImportError:  # pragma: no cover - depends on the installed kafka-python
    _Base = object

__all__ = ["JavaPartitioner"]


class JavaPartitioner(_Base):
    """A kafka-python partitioner that places keys exactly as Java's producer does.

    Works with both of kafka-python's partitioner interfaces: the ``Partitioner`` class
    (``partition(topic, key, serialized_key, value, serialized_value, cluster)`` plus the
    optional ``on_new_batch`` hook) and the older callable ``(serialized_key, all_partitions,
    available_partitions)``. Thread-safe.
    """

    def __init__(self, hash: HashName = "murmur2", *, seed: int | None = None) -> None:
        partition_for_key(b"", 1, hash=hash)  # validates the name now, not on first send
        self.hash = hash
        self._sticky = StickyPartitionCache(seed=seed)
        self._lock = threading.Lock()

    def partition(
        self,
        topic: str,
        key: Any,
        serialized_key: bytes | None,
        value: Any,
        serialized_value: bytes | None,
        cluster: Any,
    ) -> int:
        partitions = cluster.partitions_for_topic(topic)
        if not partitions:
            raise ValueError(f"Topic {topic} not found in ClusterMetadata")
        all_partitions = sorted(partitions)
        if serialized_key is not None:
            return all_partitions[
                partition_for_key(serialized_key, len(all_partitions), hash=self.hash)
            ]
        available = sorted(cluster.available_partitions_for_topic(topic) or ())
        with self._lock:
            return self._sticky.partition(topic, len(all_partitions), available=available)

    def on_new_batch(self, topic: str, cluster: Any, prev_partition: int) -> None:
        """Rotate the topic's sticky partition: the batch on ``prev_partition`` is closed."""
        partitions = cluster.partitions_for_topic(topic) or ()
        if not partitions:
            return
        available = sorted(cluster.available_partitions_for_topic(topic) or ())
        with self._lock:
            self._sticky.next_partition(topic, prev_partition, len(partitions), available=available)

    def __call__(
        self, serialized_key: bytes | None, all_partitions: list[int], available: list[int]
    ) -> int:
        """The pre-2.1 kafka-python interface: ``partitioner(key, all, available)``."""
        ordered = sorted(all_partitions)
        if serialized_key is not None:
            return ordered[partition_for_key(serialized_key, len(ordered), hash=self.hash)]
        with self._lock:
            return self._sticky.partition("", len(ordered), available=sorted(available))


# The assignor plug-ins live beside this partitioner: one import for kafka-python users.
from kgroup.adapters.kafka_python_assignors import *  # noqa: E402, F403
from kgroup.adapters.kafka_python_assignors import __all__ as _assignors_all  # noqa: E402

__all__ = ["JavaPartitioner", *_assignors_all]
