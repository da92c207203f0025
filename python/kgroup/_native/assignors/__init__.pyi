# Typed stubs of kgroup._native.assignors, built from rust/py/assignors/;
# `make lint` checks them against the built module (mypy.stubtest).
# Users import kgroup.assignors.

from collections.abc import Mapping, Sequence
from typing import Any, Self, final

from . import consumer_protocol as consumer_protocol

@final
class Subscription:
    """Java's ConsumerPartitionAssignor.Subscription; the data lives in Rust."""

    def __new__(
        cls,
        topics: Any,
        user_data: bytes | bytearray | None = ...,
        owned_partitions: Any = None,
        generation_id: int | None = None,
        rack_id: str | None = None,
        group_instance_id: str | None = None,
    ) -> Self: ...
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

@final
class Assignment:
    """Java's ConsumerPartitionAssignor.Assignment; TopicPartitions are built on first access."""

    def __new__(cls, partitions: Any, user_data: bytes | bytearray | None = ...) -> Self: ...
    @property
    def partitions(self) -> tuple[Any, ...]: ...
    @property
    def user_data(self) -> bytes | None: ...
    def __len__(self) -> int: ...

@final
class StickyEngine:
    def __new__(cls, cooperative: bool, scheduled_rebalance_max_delay_ms: int = 0) -> Self: ...
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
