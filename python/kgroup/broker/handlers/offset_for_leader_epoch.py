"""OffsetForLeaderEpoch: v0-4. For each partition, the end offset of a leader epoch: where a
client's (or follower's) log may have diverged from the leader's (KIP-101, KIP-320). v1 adds
the epoch in the answer; v2 the current leader epoch (fencing) and throttle_time_ms; v3 the
replica id; v4 is flexible.

Every partition here has had one leader epoch, 0, since its creation (``LEADER_EPOCH``), the
one stamped on every batch and reported by Metadata: its end offset is the log end offset.
A later epoch is unknown: (-1, -1), as Kafka answers an epoch above its latest.

With an authorizer, CLUSTER_ACTION on the cluster or DESCRIBE on each topic, else
TOPIC_AUTHORIZATION_FAILED (Kafka's KafkaApis.handleOffsetForLeaderEpochRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.broker.handlers.fetch import check_leader_epoch
from kgroup.broker.topics import LEADER_EPOCH
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.OFFSET_FOR_LEADER_EPOCH
VERSIONS = (0, 4)


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    version = request.api_version
    topics = []
    # Kafka's handleOffsetForLeaderEpochRequest: CLUSTER_ACTION on the cluster (a follower), or
    # DESCRIBE on each topic (a consumer, KIP-320).
    described = None
    if state.authorizer is not None and not ctx.authorize(
        AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME
    ):
        described = ctx.authorized(
            AclOperation.DESCRIBE, ResourceType.TOPIC, request.body.topics, lambda t: t.topic
        )
    for t in request.body.topics:
        topic = state.topics.by_name.get(t.topic)
        partitions = []
        for p in t.partitions:
            out: dict[str, Any] = {"partition": p.partition, "error_code": 0}
            out["leader_epoch"], out["end_offset"] = -1, -1
            try:
                if described is not None and t.topic not in described:
                    raise errors.TopicAuthorizationFailed()
                if topic is None or not 0 <= p.partition < len(topic.partitions):
                    raise errors.UnknownTopicOrPartition()
                if version >= 2:
                    check_leader_epoch(p.current_leader_epoch)
                if p.leader_epoch == LEADER_EPOCH:
                    out["leader_epoch"] = LEADER_EPOCH
                    out["end_offset"] = topic.partitions[p.partition].log.log_end_offset
            except errors.KafkaError as e:
                out["error_code"] = e.code
            if version < 1:
                del out["leader_epoch"]
            partitions.append(out)
        topics.append({"topic": t.topic, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
