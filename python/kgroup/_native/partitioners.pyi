# Typed stubs of kgroup._native.partitioners, built from rust/py/partitioners/;
# `make lint` checks them against the built module (mypy.stubtest).
# Users import kgroup.partitioners.

from collections.abc import Mapping, Sequence
from typing import Any, Self, final

HASH_NAMES: list[str]

def murmur2(data: bytes | bytearray | str) -> int: ...
def crc32(data: bytes | bytearray | str) -> int: ...
def fnv1a(data: bytes | bytearray | str) -> int: ...
def partition_for_key(
    key: bytes | bytearray | str | None, num_partitions: int, hash: str
) -> int: ...
def partition_seq_into(keys: Sequence[Any], num_partitions: int, hash: str, out: Any) -> None: ...
def partition_arrow_into(keys: Any, num_partitions: int, hash: str, out: Any) -> None: ...
def partition_fixed_into(
    data: Any, width: int, num_partitions: int, hash: str, out: Any
) -> None: ...
def partition_ucs4_into(
    data: Any, width: int, num_partitions: int, hash: str, out: Any
) -> None: ...

@final
class RoundRobinPartitioner:
    """Kafka <= 2.3 null-key round robin (start=0: Kafka 3.x's RoundRobinPartitioner)."""

    def __new__(cls, *, seed: int | None = None, start: int | None = None) -> Self: ...
    def partition(
        self,
        topic: str,
        num_partitions: int,
        key: bytes | bytearray | str | None = None,
        available: Sequence[int] | None = None,
    ) -> int: ...

@final
class StickyPartitionCache:
    """Kafka 2.4 to 3.2 sticky partition cache (KIP-480)."""

    def __new__(cls, *, seed: int | None = None) -> Self: ...
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

@final
class BuiltInPartitioner:
    """Kafka 3.3+ built-in partitioner (KIP-794), one per topic."""

    def __new__(
        cls,
        num_partitions: int,
        *,
        batch_size: int = 16384,
        adaptive_partitioning: bool = True,
        availability_timeout_ms: int = 0,
        ignore_keys: bool = False,
        available: Sequence[int] | None = None,
        seed: int | None = None,
    ) -> Self: ...
    def partition(self, key: bytes | bytearray | str | None = None) -> int: ...
    def peek_partition(self) -> int: ...
    def update_partition_info(self, appended_bytes: int, enable_switch: bool = True) -> bool: ...
    def update_load_stats(
        self,
        queue_sizes: Sequence[int | None],
        leaders: Sequence[int | None] | None = None,
        node_unready_ms: Mapping[int, int] | None = None,
    ) -> None: ...
    def update_metadata(
        self, num_partitions: int, available: Sequence[int] | None = None
    ) -> None: ...
    @property
    def load_weights(self) -> list[tuple[int, int]] | None: ...
    @property
    def produced_bytes(self) -> int: ...
    @property
    def num_partitions(self) -> int: ...
    @property
    def batch_size(self) -> int: ...
