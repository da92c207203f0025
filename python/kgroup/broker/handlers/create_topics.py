"""CreateTopics: v0-7. Create topics, or with validate_only (v1+) only check that they could
be. v1 adds error messages; v4 lets num_partitions and replication_factor be -1 (the broker's
defaults); v5 is flexible and answers with the topic's partitions, replication factor and
configs; v7 adds the topic id.

One broker: a replication factor or an assignment naming more than this node is refused as
Kafka refuses one larger than its live brokers.

With an authorizer (Kafka's ControllerApis.createTopics): CREATE on the cluster, else on each
topic (TOPIC_AUTHORIZATION_FAILED, "Authorization failed."); a topic created without
DESCRIBE_CONFIGS on it is answered without its configs and counts, its topic_config_error_code
TOPIC_AUTHORIZATION_FAILED.

A ``controller_mutation_rate`` quota (KIP-599) counts each partition of a topic that passed
every other check, validate_only or not (Kafka's ReplicationControlManager.createTopic): from
v6 a topic asked for once the client's bucket is empty fails with THROTTLING_QUOTA_EXCEEDED;
before v6 every topic is created and the client is throttled.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.broker import config_entries
from kgroup.broker.config import ConfigError
from kgroup.broker.topics import Topic, validate_topic_name
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext
    from kgroup.broker.state import BrokerState

API_KEY = ApiKey.CREATE_TOPICS
VERSIONS = (0, 7)
#: _THROTTLED is answered without a message: Kafka's ApiError.fromThrowable drops the
#: ThrottlingQuotaExceededException's text, which is the error's default one.
_THROTTLED = errors.ThrottlingQuotaExceeded.code


def check(
    state: BrokerState,
    name: str,
    num_partitions: int,
    replication_factor: int,
    assignments: list[tuple[int, list[int]]],
    configs: list[tuple[str, Any]],
) -> tuple[int, dict[str, Any]]:
    """Check a topic to create as Kafka does; returns its partition count and parsed config
    overrides, or raises the KafkaError to answer with."""
    problem = validate_topic_name(name)
    if problem:
        raise errors.InvalidTopicException(problem)
    if name in state.topics.by_name:
        raise errors.TopicAlreadyExists(f"Topic '{name}' already exists.")
    other = state.topics.collision(name)
    if other is not None:
        raise errors.InvalidTopicException(f"Topic '{name}' collides with existing topic: {other}")
    if assignments:
        if num_partitions != -1 or replication_factor != -1:
            raise errors.InvalidRequest(
                "Both numPartitions or replicationFactor and replicasAssignments were set. "
                "Both cannot be used at the same time."
            )
        indexes = sorted(p for p, _ in assignments)
        if indexes != list(range(len(indexes))):
            raise errors.InvalidReplicaAssignment(
                "Partitions should be numbered consecutively from 0."
            )
        for p, brokers in assignments:
            if not brokers:
                raise errors.InvalidReplicaAssignment(f"Partition {p} has no replicas.")
            if any(b != state.node_id for b in brokers):
                raise errors.InvalidReplicaAssignment(
                    f"Partition {p} names brokers {brokers}; this cluster has only broker "
                    f"{state.node_id}."
                )
            if len(brokers) > 1:
                raise errors.InvalidReplicationFactor(
                    f"Partition {p} has {len(brokers)} replicas on a cluster of one broker."
                )
        num_partitions = len(assignments)
    else:
        # Kafka's controller checks both values' signs, the replication factor first, before it
        # applies the defaults.
        if replication_factor < -1 or replication_factor == 0:
            raise errors.InvalidReplicationFactor(
                "Replication factor must be larger than 0, or -1 to use the default value."
            )
        if num_partitions == -1:
            num_partitions = int(state.config.get("num.partitions"))
        if num_partitions <= 0:
            raise errors.InvalidPartitions(
                "Number of partitions was set to an invalid non-positive value."
            )
        if replication_factor == -1:
            replication_factor = int(state.config.get("default.replication.factor"))
        if replication_factor <= 0:
            raise errors.InvalidReplicationFactor(
                "Replication factor must be larger than 0, or -1 to use the default value."
            )
        if replication_factor > 1:
            raise errors.InvalidReplicationFactor(
                f"Unable to replicate the partition {replication_factor} time(s): The target "
                f"replication factor of {replication_factor} cannot be reached because only 1 "
                "broker(s) are registered or some brokers have all their log directories "
                "cordoned."
            )
    try:
        parsed = state.config.validate_topic_configs(configs)
    except ConfigError as e:
        raise errors.InvalidConfig(str(e)) from None
    return num_partitions, parsed


def create(state: BrokerState, name: str, num_partitions: int, configs: dict[str, Any]) -> Topic:
    """Create a topic already checked with ``check``."""
    return state.topics.create(name, num_partitions, configs)


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    body = request.body
    version = request.api_version
    validate_only = version >= 1 and body.validate_only
    names = [t.name for t in body.topics]
    # Kafka's ControllerApis.createTopics: CREATE on the cluster, else on each topic.
    creatable = None
    if state.authorizer is not None and not ctx.authorize(
        AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME
    ):
        creatable = ctx.authorized(AclOperation.CREATE, ResourceType.TOPIC, names, str)
    describable = (
        None
        if state.authorizer is None
        else ctx.authorized(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names, str)
    )
    quota = ctx.mutation_quota(strict_since=6)
    out = []
    answered: set[str] = set()
    for t in body.topics:
        result: dict[str, Any] = {"name": t.name}
        if t.name in answered:
            # Kafka answers a name given more than once with one result.
            continue
        answered.add(t.name)
        try:
            if names.count(t.name) > 1:
                raise errors.InvalidRequest(
                    "Create topics request from client `"
                    f"{request.client_id}` contains multiple entries for the following "
                    f"topics: {t.name}"
                )
            if creatable is not None and t.name not in creatable:
                raise errors.TopicAuthorizationFailed("Authorization failed.")
            num_partitions, configs = check(
                state,
                t.name,
                t.num_partitions,
                t.replication_factor,
                [(a.partition_index, list(a.broker_ids)) for a in t.assignments],
                [(c.name, c.value) for c in t.configs],
            )
            if not quota.record(num_partitions):
                raise errors.ThrottlingQuotaExceeded()
            if validate_only:
                # Kafka's controller picks the id before it checks validate_only, and answers
                # with it though nothing is created.
                topic_id = uuid.uuid4()
            else:
                topic_id = create(state, t.name, num_partitions, configs).id
        except errors.KafkaError as e:
            result["error_code"] = e.code
            if version >= 1:
                result["error_message"] = None if e.code == _THROTTLED else str(e)
            if version >= 5:
                # The controller answers its errors without configs (null); ControllerApis
                # answers a refused topic itself, its configs left at the default, empty.
                refused = isinstance(e, errors.TopicAuthorizationFailed)
                result["configs"] = [] if refused else None
            out.append(result)
            continue
        result["error_code"] = 0
        if version >= 1:
            result["error_message"] = None
        if version >= 5 and describable is not None and t.name not in describable:
            # Created, but its configs are not the principal's to see (Kafka's
            # ReplicationControlManager.createTopic): no configs, no counts.
            result["configs"] = []
            result["topic_config_error_code"] = errors.TopicAuthorizationFailed.code
        elif version >= 5:
            result["num_partitions"] = num_partitions
            result["replication_factor"] = 1
            result["configs"] = [
                {
                    "name": e["name"],
                    "value": e["value"],
                    "read_only": e["read_only"],
                    "config_source": e["config_source"],
                    "is_sensitive": False,
                }
                for e in config_entries.topic_entries(state, configs, None, False, False)
            ]
        if version >= 7 and topic_id is not None:
            result["topic_id"] = topic_id
        out.append(result)
    return {"throttle_time_ms": 0, "topics": out}
