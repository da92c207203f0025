"""DeleteTopics: v0-6. Delete topics and their data. v1 adds throttle_time_ms; v4 is flexible;
v5 adds error messages; v6 names topics by name or by id.

With an authorizer (Kafka's ControllerApis.deleteTopics): DELETE on the cluster, else on each
topic; a topic named that the principal may not DESCRIBE is refused before it is looked up
(TOPIC_AUTHORIZATION_FAILED), one named by id answers without its name.

A ``controller_mutation_rate`` quota (KIP-599) counts each partition of a topic to delete (Kafka's
ReplicationControlManager.deleteTopic): from v5 a topic asked for once the client's bucket is
empty fails with THROTTLING_QUOTA_EXCEEDED; before v5 every topic is deleted and the client is
throttled.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DELETE_TOPICS
VERSIONS = (0, 6)
#: _THROTTLED is answered without a message: Kafka's ApiError.fromThrowable drops the
#: ThrottlingQuotaExceededException's text, which is the error's default one.
_THROTTLED = errors.ThrottlingQuotaExceeded.code

NIL = uuid.UUID(int=0)


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    version = request.api_version
    body = request.body
    if version >= 6:
        wanted = [(t.name, t.topic_id) for t in body.topics]
    else:
        wanted = [(name, NIL) for name in body.topic_names]
    quota = ctx.mutation_quota(strict_since=5)
    responses = []
    # Kafka's ControllerApis.deleteTopics: DELETE on the cluster, else DESCRIBE and DELETE on
    # each topic; a topic the principal may not describe is refused before it is looked up.
    check = state.authorizer is not None and not ctx.authorize(
        AclOperation.DELETE, ResourceType.CLUSTER, CLUSTER_NAME
    )
    for name, topic_id in wanted:
        out: dict[str, Any] = {"name": name, "topic_id": topic_id, "error_code": 0}
        try:
            if name is not None and topic_id != NIL:
                raise errors.InvalidRequest("A topic is named by its name or by its id, not both")
            if name is None:
                topic = state.topics.by_id.get(topic_id)
                if topic is None:
                    raise errors.UnknownTopicId()
                if check and not ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, topic.name):
                    if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name):
                        out["name"] = topic.name
                    raise errors.TopicAuthorizationFailed(errors.TopicAuthorizationFailed.message)
            else:
                if check and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
                    raise errors.TopicAuthorizationFailed(errors.TopicAuthorizationFailed.message)
                topic = state.topics.by_name.get(name)
                if topic is None:
                    raise errors.UnknownTopicOrPartition()
                if check and not ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, name):
                    raise errors.TopicAuthorizationFailed(errors.TopicAuthorizationFailed.message)
            if topic.internal:
                raise errors.TopicDeletionDisabled(f"Internal topic {topic.name} cannot be deleted")
            out["name"], out["topic_id"] = topic.name, topic.id
            if not quota.record(len(topic.partitions)):
                raise errors.ThrottlingQuotaExceeded()
            state.topics.delete(topic)
        except errors.KafkaError as e:
            out["error_code"] = e.code
            out["error_message"] = None if e.code == _THROTTLED else str(e)
        responses.append(out)
    return {"throttle_time_ms": 0, "responses": responses}
