"""metadata: the cluster's metadata as the clients' ``list_topics`` return it.

:class:`ClusterMetadata`, :class:`TopicMetadata`, :class:`PartitionMetadata` and
:class:`BrokerMetadata` have confluent-kafka's shapes and attribute names (``.topics``,
``.partitions``, ``.isrs``, ...), so code written against confluent-kafka's
``list_topics()`` reads kgroup's the same way. :func:`cluster_metadata` builds them from a
:class:`~kgroup.client.cluster.Cluster`'s cache; the Consumer, the Producer and the
AdminClient all return what it builds.

Errors are :class:`~kgroup.errors.KafkaError` instances (None when the broker answered
NONE), as confluent-kafka's are ``KafkaError`` objects.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kgroup.errors import KafkaError, error_for_code

if TYPE_CHECKING:
    from kgroup.client.cluster import Cluster

__all__ = [
    "BrokerMetadata",
    "ClusterMetadata",
    "PartitionMetadata",
    "TopicMetadata",
    "cluster_metadata",
    "error_from_code",
    "topic_id_string",
]


def error_from_code(code: int, message: str | None = None) -> KafkaError | None:
    """The :class:`KafkaError` instance for Kafka error ``code`` (None for 0, NONE)."""
    cls = error_for_code(code)
    return None if cls is None else cls(message)


def topic_id_string(topic_id: Any) -> str:
    """A topic id as Kafka prints it (``Uuid.toString``: URL-safe base64 of the 16 bytes, no
    padding); ``""`` for no id (None or the zero UUID)."""
    if topic_id is None:
        return ""
    if not isinstance(topic_id, uuid.UUID):
        topic_id = uuid.UUID(str(topic_id))
    if topic_id.int == 0:
        return ""
    return base64.urlsafe_b64encode(topic_id.bytes).rstrip(b"=").decode()


class BrokerMetadata:
    """BrokerMetadata is one broker: ``id``, ``host``, ``port`` (and ``rack``)."""

    __slots__ = ("host", "id", "port", "rack")

    def __init__(self, id: int, host: str, port: int, rack: str | None = None) -> None:
        self.id, self.host, self.port, self.rack = id, host, port, rack

    def __repr__(self) -> str:
        return f"BrokerMetadata({self.id}, {self.host}:{self.port})"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}/{self.id}"


class PartitionMetadata:
    """PartitionMetadata is one partition: ``id``, ``leader`` (-1: none), ``replicas``,
    ``isrs`` (broker ids) and ``error``."""

    __slots__ = ("error", "id", "isrs", "leader", "leader_epoch", "replicas")

    def __init__(
        self,
        id: int,
        leader: int = -1,
        replicas: Iterable[int] = (),
        isrs: Iterable[int] = (),
        error: KafkaError | None = None,
        leader_epoch: int = -1,
    ) -> None:
        self.id, self.leader = id, leader
        self.replicas, self.isrs = list(replicas), list(isrs)
        self.error, self.leader_epoch = error, leader_epoch

    def __repr__(self) -> str:
        err = "" if self.error is None else f", error={self.error!r}"
        return f"PartitionMetadata({self.id}, leader={self.leader}{err})"

    def __str__(self) -> str:
        return str(self.id)


class TopicMetadata:
    """TopicMetadata is one topic: ``topic`` (its name), ``partitions`` ({id:
    :class:`PartitionMetadata`}), ``error``; and kgroup's additions ``topic_id`` (a UUID or
    None) and ``is_internal``."""

    __slots__ = ("error", "is_internal", "partitions", "topic", "topic_id")

    def __init__(
        self,
        topic: str,
        partitions: dict[int, PartitionMetadata] | None = None,
        error: KafkaError | None = None,
        topic_id: uuid.UUID | None = None,
        is_internal: bool = False,
    ) -> None:
        self.topic = topic
        self.partitions = partitions if partitions is not None else {}
        self.error, self.topic_id, self.is_internal = error, topic_id, is_internal

    def __repr__(self) -> str:
        err = "" if self.error is None else f", error={self.error!r}"
        return f"TopicMetadata({self.topic}, {len(self.partitions)} partitions{err})"

    def __str__(self) -> str:
        return self.topic


class ClusterMetadata:
    """ClusterMetadata is what ``list_topics`` returns: ``cluster_id``, ``controller_id``,
    ``brokers`` ({id: :class:`BrokerMetadata`}), ``topics`` ({name: :class:`TopicMetadata`}),
    and ``orig_broker_id`` / ``orig_broker_name``, the broker that answered (-1 / "" when
    unknown)."""

    __slots__ = (
        "brokers",
        "cluster_id",
        "controller_id",
        "orig_broker_id",
        "orig_broker_name",
        "topics",
    )

    def __init__(self) -> None:
        self.cluster_id: str | None = None
        self.controller_id = -1
        self.brokers: dict[int, BrokerMetadata] = {}
        self.topics: dict[str, TopicMetadata] = {}
        self.orig_broker_id = -1
        self.orig_broker_name = ""

    def __repr__(self) -> str:
        return (
            f"ClusterMetadata({self.cluster_id}, {len(self.brokers)} brokers, "
            f"{len(self.topics)} topics)"
        )


def cluster_metadata(cluster: Cluster, topics: Iterable[str] | None = None) -> ClusterMetadata:
    """A :class:`ClusterMetadata` of ``cluster``'s cached metadata: every cached topic, or only
    ``topics`` (a named topic the cache lacks is left out). Call it after
    ``await cluster.refresh(...)``; it reads the cache only, so it may run on any thread."""
    md = ClusterMetadata()
    md.cluster_id = cluster.cluster_id
    md.controller_id = cluster.controller_id
    md.brokers = {
        b.node_id: BrokerMetadata(b.node_id, b.host, b.port, b.rack)
        for b in cluster.brokers.values()
    }
    cached = cluster.topics
    names = list(cached) if topics is None else [t for t in topics if t in cached]
    for name in names:
        info = cached[name]
        md.topics[name] = TopicMetadata(
            name,
            {
                p.partition: PartitionMetadata(
                    p.partition,
                    p.leader,
                    p.replicas,
                    p.isr,
                    error_from_code(p.error),
                    p.leader_epoch,
                )
                for p in sorted(info.partitions.values(), key=lambda p: p.partition)
            },
            error_from_code(info.error),
            info.topic_id,
            info.internal,
        )
    return md
