"""CreatePartitions: v0-3. Grow topics to a new partition count, or with validate_only only
check that it could be done. v1 adds nothing but the throttling change of KIP-219; v2 is
flexible; v3 changes only the semantics of errors for throttling.

With an authorizer, ALTER on each topic (else TOPIC_AUTHORIZATION_FAILED, no message), checked
before the topic is looked up (Kafka's ControllerApis.createPartitions).

A ``controller_mutation_rate`` quota (KIP-599) counts the partitions each topic would add, once
its count and number of assignments are checked and before the assignments themselves are
(Kafka's ReplicationControlManager.createPartitions), validate_only or not: from v3 a topic
asked for once the client's bucket is empty fails with THROTTLING_QUOTA_EXCEEDED; before v3
every topic is grown and the client is throttled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.CREATE_PARTITIONS
VERSIONS = (0, 3)
#: _THROTTLED is answered without a message: Kafka's ApiError.fromThrowable drops the
#: ThrottlingQuotaExceededException's text, which is the error's default one.
_THROTTLED = errors.ThrottlingQuotaExceeded.code


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, body = ctx.state, ctx.request.body
    names = [t.name for t in body.topics]
    quota = ctx.mutation_quota(strict_since=3)
    results = []
    answered: set[str] = set()
    # Kafka's ControllerApis.createPartitions: ALTER on each topic, after the duplicates.
    alterable = (
        None
        if state.authorizer is None
        else ctx.authorized(AclOperation.ALTER, ResourceType.TOPIC, names, str)
    )
    for t in body.topics:
        if t.name in answered:
            # Kafka answers a topic given more than once with one result.
            continue
        answered.add(t.name)
        out: dict[str, Any] = {"name": t.name, "error_code": 0, "error_message": None}
        try:
            if names.count(t.name) > 1:
                raise errors.InvalidRequest("Duplicate topic in request.")
            if alterable is not None and t.name not in alterable:
                out["error_code"] = errors.TopicAuthorizationFailed.code
                results.append(out)
                continue
            topic = state.topics.by_name.get(t.name)
            if topic is None:
                # Kafka's controller answers an unknown topic without a message.
                out["error_code"] = errors.UnknownTopicOrPartition.code
                results.append(out)
                continue
            current = len(topic.partitions)
            # Kafka's messages (the controller's ReplicationControlManager.createPartitions).
            if t.count == current:
                raise errors.InvalidPartitions(f"Topic already has {current} partition(s).")
            if t.count < current:
                raise errors.InvalidPartitions(
                    f"The topic {t.name} currently has {current} partition(s); {t.count} "
                    "would not be an increase."
                )
            if t.assignments is not None:
                if len(t.assignments) != t.count - current:
                    raise errors.InvalidReplicaAssignment(
                        f"Attempted to add {t.count - current} additional partition(s), but "
                        f"only {len(t.assignments)} assignment(s) were specified."
                    )
            if not quota.record(t.count - current):
                raise errors.ThrottlingQuotaExceeded()
            if t.assignments is not None:
                for a in t.assignments:
                    if list(a.broker_ids) != [state.node_id]:
                        raise errors.InvalidReplicaAssignment(
                            f"The assignment {list(a.broker_ids)} names brokers other than this "
                            f"cluster's only broker {state.node_id}, or more than one replica."
                        )
            if not body.validate_only:
                state.topics.add_partitions(topic, t.count)
        except errors.KafkaError as e:
            out["error_code"] = e.code
            out["error_message"] = None if e.code == _THROTTLED else str(e)
        results.append(out)
    return {"throttle_time_ms": 0, "results": results}
