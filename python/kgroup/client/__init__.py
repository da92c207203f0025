"""kgroup.client: kgroup's own Kafka client, with confluent-kafka's Python API and Kafka's
config names, for kgroup's broker or any Kafka-compatible cluster.

The network side of each client runs in a background thread of its own (:mod:`.runtime`);
:mod:`.connection` speaks the protocol to one broker, :mod:`.cluster` holds the metadata, the
connections and the group coordinators, :mod:`.config` parses Kafka's config keys and
:mod:`.security` turns the ``security.protocol``, ``ssl.*`` and ``sasl.*`` ones into TLS and SASL.
"""

from kgroup._native.client import Message
from kgroup.client.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ConsumerGroupDescription,
    ConsumerGroupListing,
    ConsumerGroupType,
    ListConsumerGroupsResult,
    ListOffsetsResultInfo,
    MemberAssignment,
    MemberDescription,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ProducerState,
    ResourceType,
    TransactionDescription,
    TransactionListing,
)
from kgroup.client.config import ClientConfig
from kgroup.client.consumer import Consumer
from kgroup.client.metadata import (
    BrokerMetadata,
    ClusterMetadata,
    PartitionMetadata,
    TopicMetadata,
)
from kgroup.client.producer import Producer
from kgroup.client.types import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_INVALID,
    OFFSET_STORED,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_NOT_AVAILABLE,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ConsumerGroupMetadata,
    ResourcePatternType,
    TopicPartition,
)

__all__ = [
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "OFFSET_INVALID",
    "OFFSET_STORED",
    "TIMESTAMP_CREATE_TIME",
    "TIMESTAMP_LOG_APPEND_TIME",
    "TIMESTAMP_NOT_AVAILABLE",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "AdminClient",
    "AlterConfigOpType",
    "BrokerMetadata",
    "ClientConfig",
    "ClusterMetadata",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSource",
    "Consumer",
    "ConsumerGroupDescription",
    "ConsumerGroupListing",
    "ConsumerGroupMetadata",
    "ConsumerGroupType",
    "ListConsumerGroupsResult",
    "ListOffsetsResultInfo",
    "MemberAssignment",
    "MemberDescription",
    "Message",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "PartitionMetadata",
    "Producer",
    "ProducerState",
    "ResourcePatternType",
    "ResourceType",
    "TopicMetadata",
    "TopicPartition",
    "TransactionDescription",
    "TransactionListing",
]
