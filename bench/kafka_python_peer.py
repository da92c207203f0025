"""Real kafka-python objects for comparisons: a ClusterMetadata filled from an encoded
MetadataResponse, and JoinGroup members whose metadata kafka-python decoded itself.

bench_assignors.py times kafka-python's assignors on them and the assignor tests compare with
them; it lives here because bench does not import from tests. (It reads like the inverse of
kgroup.adapters.kafka_python_assignors, and would sit well there.)
"""

from __future__ import annotations

from kafka.cluster import ClusterMetadata
from kafka.protocol.consumer.group import JoinGroupResponse
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
from kafka.protocol.metadata import MetadataResponse

from kgroup.assignors import Subscription
from kgroup.assignors.consumer_protocol import encode_subscription


def cluster(partitions_per_topic: dict[str, int]) -> ClusterMetadata:
    """A kafka-python ClusterMetadata that knows these topics, as after a Metadata response."""
    b = MetadataResponse.MetadataResponseBroker
    t = MetadataResponse.MetadataResponseTopic
    p = t.MetadataResponsePartition
    topics = [
        t(
            error_code=0,
            name=name,
            is_internal=False,
            partitions=[
                p(error_code=0, partition_index=i, leader_id=0, replica_nodes=[0], isr_nodes=[0])
                for i in range(n)
            ],
        )
        for name, n in partitions_per_topic.items()
    ]
    resp = MetadataResponse(
        version=1,
        brokers=[b(node_id=0, host="127.0.0.1", port=9092, rack=None)],
        controller_id=0,
        topics=topics,
    )
    c = ClusterMetadata()
    c.update_metadata(MetadataResponse.decode(resp.encode(version=1), version=1))
    return c


def member(member_id: str, metadata: bytes, group_instance_id: str | None = None):
    """A JoinGroup response member as kafka-python's leader holds it before calling an
    assignor: the subscription bytes the member sent, decoded by kafka-python."""
    m = JoinGroupResponse.JoinGroupResponseMember(
        member_id=member_id, group_instance_id=group_instance_id, metadata=metadata
    )
    m.metadata = ConsumerProtocolSubscription.decode(metadata)
    return m


def members(subscriptions: dict[str, Subscription]) -> list:
    """JoinGroup response members carrying kgroup-encoded subscriptions."""
    return [
        member(member_id, encode_subscription(sub), sub.group_instance_id)
        for member_id, sub in subscriptions.items()
    ]


def partitions(assignment) -> list[tuple[str, int]]:
    """The (topic, partition) list of a kafka-python ConsumerProtocolAssignment, in its order."""
    return [(t, p) for t, ps in assignment.assigned_partitions for p in ps]
