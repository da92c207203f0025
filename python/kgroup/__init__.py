"""kgroup: Kafka's consumer-group machinery and Java-compatible partitioning.

>>> import kgroup
>>> kgroup.partition_for_key(b"foobar", 12)
6
"""

from typing import TYPE_CHECKING, Any

from kgroup._native import __version__

if TYPE_CHECKING:
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

#: _LAZY: where each name of the package's top level lives, imported on first use, so that
#: `import kgroup.broker` (a broker in a child process, the test kit) loads neither the client
#: nor numpy.
_LAZY = {
    "CooperativeStickyAssignor": "kgroup.assignors",
    "RangeAssignor": "kgroup.assignors",
    "RoundRobinAssignor": "kgroup.assignors",
    "StickyAssignor": "kgroup.assignors",
    "AdminClient": "kgroup.client",
    "ConfigResource": "kgroup.client",
    "Consumer": "kgroup.client",
    "Message": "kgroup.client",
    "NewPartitions": "kgroup.client",
    "NewTopic": "kgroup.client",
    "OffsetSpec": "kgroup.client",
    "Producer": "kgroup.client",
    "TopicPartition": "kgroup.client",
    "DecodeError": "kgroup.errors",
    "InvalidArgument": "kgroup.errors",
    "InvalidType": "kgroup.errors",
    "KafkaError": "kgroup.errors",
    "KGroupError": "kgroup.errors",
    "HASH_NAMES": "kgroup.partitioners",
    "BuiltInPartitioner": "kgroup.partitioners",
    "RoundRobinPartitioner": "kgroup.partitioners",
    "StickyPartitionCache": "kgroup.partitioners",
    "crc32": "kgroup.partitioners",
    "fnv1a": "kgroup.partitioners",
    "murmur2": "kgroup.partitioners",
    "partition_for_key": "kgroup.partitioners",
    "partition_keys": "kgroup.partitioners",
    "to_positive": "kgroup.partitioners",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kgroup' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
