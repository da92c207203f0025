"""kgroup: Kafka's consumer-group machinery and Java-compatible partitioning.

>>> import kgroup
>>> kgroup.partition_for_key(b"foobar", 12)
6
"""

from kgroup._native import __version__
from kgroup.assignors import (
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
)
from kgroup.client import (
    AdminClient,
    ConfigResource,
    Consumer,
    Message,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    Producer,
    TopicPartition,
)
from kgroup.errors import DecodeError, InvalidArgument, InvalidType, KafkaError, KGroupError
from kgroup.partitioners import (
    HASH_NAMES,
    BuiltInPartitioner,
    RoundRobinPartitioner,
    StickyPartitionCache,
    crc32,
    fnv1a,
    murmur2,
    partition_for_key,
    partition_keys,
    to_positive,
)

__all__ = [
    "HASH_NAMES",
    "AdminClient",
    "BuiltInPartitioner",
    "ConfigResource",
    "Consumer",
    "CooperativeStickyAssignor",
    "DecodeError",
    "InvalidArgument",
    "InvalidType",
    "KGroupError",
    "KafkaError",
    "Message",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "Producer",
    "RangeAssignor",
    "RoundRobinAssignor",
    "RoundRobinPartitioner",
    "StickyAssignor",
    "StickyPartitionCache",
    "TopicPartition",
    "__version__",
    "crc32",
    "fnv1a",
    "murmur2",
    "partition_for_key",
    "partition_keys",
    "to_positive",
]
