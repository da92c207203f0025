"""Metadata: v0-12. The brokers, the cluster, and the topics asked for (all of them for a null
list, v1+; for an empty list in v0) with their partitions' leaders. v1 adds the controller,
racks and is_internal; v2 the cluster id; v4 allow_auto_topic_creation; v5 offline replicas;
v7 leader epochs; v8 authorized operations; v9 is flexible; v10 topic ids (and asking by id);
v11 drops cluster authorized operations; v12 allows a null topic name in the answer.

A topic asked for that does not exist is created, with ``num.partitions`` partitions, when the
request allows it and ``auto.create.topics.enable`` is on (one node: it is ready at once);
``__consumer_offsets`` with the group coordinator's partitions and configs.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.handlers import create_topics
from kgroup.broker.topics import LEADER_EPOCH, OFFSETS_TOPIC, Topic
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext
    from kgroup.broker.state import BrokerState

API_KEY = ApiKey.METADATA
VERSIONS = (0, 12)

NIL = uuid.UUID(int=0)
# Kafka's "authorized operations not requested" value.
NOT_REQUESTED = -(2**31)
# Every operation a topic or the cluster has, as a bit set of AclOperation codes, for a client
# that asks (no authorization here: everything is allowed), Kafka's
# AclEntry.supportedOperations. Topic: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
# DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11. Cluster: CREATE 5, ALTER 7, DESCRIBE 8,
# CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12 (no WRITE).
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


def topic_metadata(state: BrokerState, topic: Topic, version: int, operations: bool) -> dict:
    node = state.node_id
    return {
        "error_code": 0,
        "name": topic.name,
        "topic_id": topic.id,
        "is_internal": topic.internal,
        "partitions": [
            {
                "error_code": 0,
                "partition_index": p.index,
                "leader_id": node,
                "leader_epoch": LEADER_EPOCH,
                "replica_nodes": [node],
                "isr_nodes": [node],
                "offline_replicas": [],
            }
            for p in topic.partitions
        ],
        "topic_authorized_operations": TOPIC_OPERATIONS if operations else NOT_REQUESTED,
    }


def _missing(
    name: str | None, topic_id: uuid.UUID | None, e: errors.KafkaError, operations: bool
) -> dict:
    # Kafka reports the operations on every topic of the answer, those in error too.
    return {
        "error_code": e.code,
        "name": name,
        "topic_id": topic_id or NIL,
        "is_internal": False,
        "partitions": [],
        "topic_authorized_operations": TOPIC_OPERATIONS if operations else NOT_REQUESTED,
    }


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    version = request.api_version
    body = request.body
    operations = version >= 8 and body.include_topic_authorized_operations
    auto_create = (version < 4 or body.allow_auto_topic_creation) and bool(
        state.config.get("auto.create.topics.enable")
    )
    requested = body.topics
    topics: list[dict[str, Any]] = []
    if requested is None or (version == 0 and len(requested) == 0):
        topics = [
            topic_metadata(state, t, version, operations) for t in state.topics.by_name.values()
        ]
    else:
        for r in requested:
            topic_id = r.topic_id if version >= 10 else None
            name = r.name
            # A topic asked for by id: its id is set (Java's Admin leaves the name "", not
            # null), as Kafka's handleTopicMetadataRequest tells the two apart.
            if name is None or (topic_id is not None and topic_id != NIL):
                topic = state.topics.by_id.get(topic_id) if topic_id else None
                if topic is None:
                    # A null name in the answer only from v12; before, an empty one.
                    shown = None if version >= 12 else ""
                    topics.append(_missing(shown, topic_id, errors.UnknownTopicId(), operations))
                else:
                    topics.append(topic_metadata(state, topic, version, operations))
                continue
            topic = state.topics.by_name.get(name)
            if topic is None:
                if not auto_create:
                    topics.append(
                        _missing(name, None, errors.UnknownTopicOrPartition(), operations)
                    )
                    continue
                try:
                    if name == OFFSETS_TOPIC:
                        # Created as the group coordinator needs it, as Kafka creates it.
                        topic = state.groups.offsets_topic()
                    else:
                        n, configs = create_topics.check(state, name, -1, -1, [], [])
                        topic = create_topics.create(state, name, n, configs)
                except errors.KafkaError as e:
                    topics.append(_missing(name, None, e, operations))
                    continue
            topics.append(topic_metadata(state, topic, version, operations))
    if version < 10:
        for t in topics:
            t.pop("topic_id", None)
    if version < 8:
        for t in topics:
            t.pop("topic_authorized_operations", None)
    out: dict[str, Any] = {
        "throttle_time_ms": 0,
        "brokers": [state.broker(ctx.connection.listener)],
        "cluster_id": state.cluster_id if version >= 2 else None,
        "controller_id": state.node_id if version >= 1 else -1,
        "topics": topics,
    }
    if 8 <= version <= 10 and body.include_cluster_authorized_operations:
        out["cluster_authorized_operations"] = CLUSTER_OPERATIONS
    return out
