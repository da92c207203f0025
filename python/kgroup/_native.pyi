# Typed stubs of the native module kgroup._native (rust/py/). Users import `kgroup`.
# Each area keeps its own section; `make lint` checks these against the built module.

from collections.abc import Mapping, Sequence
from typing import Any

__version__: str

# --- partitioning (rust/py/partition.rs) -------------------------------------------------
HASH_NAMES: list[str]

def murmur2(data: bytes | bytearray | str) -> int: ...
def crc32(data: bytes | bytearray | str) -> int: ...
def fnv1a(data: bytes | bytearray | str) -> int: ...
def partition_for_key(key: bytes | bytearray | str | None, num_partitions: int, hash: str) -> int: ...
def partition_seq_into(keys: Sequence[Any], num_partitions: int, hash: str, out: Any) -> None: ...
def partition_arrow_into(keys: Any, num_partitions: int, hash: str, out: Any) -> None: ...
def partition_fixed_into(
    data: Any, width: int, num_partitions: int, hash: str, out: Any
) -> None: ...
def partition_ucs4_into(
    data: Any, width: int, num_partitions: int, hash: str, out: Any
) -> None: ...

# --- null-key partitioners (rust/py/partitioners.rs) --------------------------------------
class RoundRobinPartitioner:
    """Kafka <= 2.3 null-key round robin (start=0: Kafka 3.x's RoundRobinPartitioner)."""

    def __init__(self, *, seed: int | None = None, start: int | None = None) -> None: ...
    def partition(
        self,
        topic: str,
        num_partitions: int,
        key: bytes | bytearray | str | None = None,
        available: Sequence[int] | None = None,
    ) -> int: ...

class StickyPartitionCache:
    """Kafka 2.4 to 3.2 sticky partition cache (KIP-480)."""

    def __init__(self, *, seed: int | None = None) -> None: ...
    def partition(
        self,
        topic: str,
        num_partitions: int,
        key: bytes | bytearray | str | None = None,
        available: Sequence[int] | None = None,
    ) -> int: ...
    def next_partition(
        self,
        topic: str,
        prev_partition: int,
        num_partitions: int,
        available: Sequence[int] | None = None,
    ) -> int: ...

class BuiltInPartitioner:
    """Kafka 3.3+ built-in partitioner (KIP-794), one per topic."""

    def __init__(
        self,
        num_partitions: int,
        *,
        batch_size: int = 16384,
        adaptive_partitioning: bool = True,
        availability_timeout_ms: int = 0,
        ignore_keys: bool = False,
        available: Sequence[int] | None = None,
        seed: int | None = None,
    ) -> None: ...
    def partition(self, key: bytes | bytearray | str | None = None) -> int: ...
    def peek_partition(self) -> int: ...
    def update_partition_info(self, appended_bytes: int, enable_switch: bool = True) -> bool: ...
    def update_load_stats(
        self,
        queue_sizes: Sequence[int | None],
        leaders: Sequence[int | None] | None = None,
        node_unready_ms: Mapping[int, int] | None = None,
    ) -> None: ...
    def update_metadata(self, num_partitions: int, available: Sequence[int] | None = None) -> None: ...
    @property
    def load_weights(self) -> list[tuple[int, int]] | None: ...
    @property
    def produced_bytes(self) -> int: ...
    @property
    def num_partitions(self) -> int: ...
    @property
    def batch_size(self) -> int: ...

# --- assignors and consumer protocol (rust/py/assignors.rs) ------------------------------
class Subscription:
    """Java's ConsumerPartitionAssignor.Subscription; the data lives in Rust."""

    def __init__(
        self,
        topics: Any,
        user_data: bytes | bytearray | None = b"",
        owned_partitions: Any = None,
        generation_id: int | None = -1,
        rack_id: str | None = None,
        group_instance_id: str | None = None,
    ) -> None: ...
    @property
    def topics(self) -> tuple[str, ...]: ...
    @property
    def user_data(self) -> bytes | None: ...
    @property
    def owned_partitions(self) -> tuple[Any, ...]: ...
    @property
    def generation_id(self) -> int: ...
    @property
    def rack_id(self) -> str | None: ...
    @property
    def group_instance_id(self) -> str | None: ...

class Assignment:
    """Java's ConsumerPartitionAssignor.Assignment; TopicPartitions are built on first access."""

    def __init__(self, partitions: Any, user_data: bytes | bytearray | None = b"") -> None: ...
    @property
    def partitions(self) -> tuple[Any, ...]: ...
    @property
    def user_data(self) -> bytes | None: ...
    def __len__(self) -> int: ...

class StickyEngine:
    def __init__(self, cooperative: bool, scheduled_rebalance_max_delay_ms: int = 0) -> None: ...
    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: Mapping[tuple[str, int], Sequence[str]] | None = None,
        now_ms: int = 0,
    ) -> tuple[dict[str, Assignment], list[tuple[Any, str]], bool]: ...
    @property
    def max_generation(self) -> int: ...
    @property
    def held_back(self) -> dict[str, tuple[tuple[Any, ...], int]]: ...

def assign_range(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    partition_racks: Mapping[tuple[str, int], Sequence[str]] | None = None,
) -> dict[str, Assignment]: ...
def assign_round_robin(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    partition_racks: Mapping[tuple[str, int], Sequence[str]] | None = None,
) -> dict[str, Assignment]: ...
def encode_subscription(subscription: Subscription, version: int = 3) -> bytes: ...
def decode_subscription(data: bytes | bytearray) -> tuple[Subscription, int]: ...
def encode_assignment(assignment: Assignment, version: int = 3) -> bytes: ...
def decode_assignment(data: bytes | bytearray) -> tuple[Assignment, int]: ...
def encode_sticky_user_data(partitions: Any, generation: int | None = None) -> bytes: ...
def decode_sticky_user_data(data: bytes | bytearray) -> tuple[tuple[Any, ...], int | None]: ...
