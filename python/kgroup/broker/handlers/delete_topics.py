"""DeleteTopics: v0-6. Delete topics and their data. v1 adds throttle_time_ms; v4 is flexible;
v5 adds error messages; v6 names topics by name or by id."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DELETE_TOPICS
VERSIONS = (0, 6)

NIL = uuid.UUID(int=0)


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    version = request.api_version
    body = request.body
    if version >= 6:
        wanted = [(t.name, t.topic_id) for t in body.topics]
    else:
        wanted = [(name, NIL) for name in body.topic_names]
    responses = []
    for name, topic_id in wanted:
        out: dict[str, Any] = {"name": name, "topic_id": topic_id, "error_code": 0}
        try:
            if name is not None and topic_id != NIL:
                raise errors.InvalidRequest("A topic is named by its name or by its id, not both")
            if name is None:
                topic = state.topics.by_id.get(topic_id)
                if topic is None:
                    raise errors.UnknownTopicId()
            else:
                topic = state.topics.by_name.get(name)
                if topic is None:
                    raise errors.UnknownTopicOrPartition()
            if topic.internal:
                raise errors.TopicDeletionDisabled(f"Internal topic {topic.name} cannot be deleted")
            out["name"], out["topic_id"] = topic.name, topic.id
            state.topics.delete(topic)
        except errors.KafkaError as e:
            out["error_code"] = e.code
            out["error_message"] = str(e)
        responses.append(out)
    return {"throttle_time_ms": 0, "responses": responses}
