# Typed stubs of kgroup._native.share, built from rust/py/share.rs;
# `make lint` checks them against the built module (mypy.stubtest).
# Used by the broker's share handlers (kgroup.broker.share).

from collections.abc import Iterable, Sequence
from typing import final

UNINITIALIZED_START_OFFSET: int

#: (first_offset, last_offset, delivery_state id, delivery_count)
_StateTuple = tuple[int, int, int, int]
#: (first_offset, last_offset, acknowledge types)
_AckBatch = tuple[int, int, Sequence[int]]

def validate_acknowledgement_batches(
    batches: Sequence[_AckBatch], supports_renew: bool = False, is_renew_ack: bool = False
) -> None: ...
def batch_bounds(records: bytes) -> list[tuple[int, int, int]]: ...

@final
class ShareUpdate:
    """One change to persist (a ShareUpdate record of ``__share_group_state``)."""

    @property
    def state_epoch(self) -> int: ...
    @property
    def leader_epoch(self) -> int: ...
    @property
    def start_offset(self) -> int: ...
    @property
    def delivery_complete_count(self) -> int: ...
    @property
    def state_batches(self) -> list[_StateTuple]: ...

@final
class PersistedState:
    """A share partition's whole persisted state (a ShareSnapshot's value)."""

    def __new__(
        cls,
        state_epoch: int,
        start_offset: int,
        leader_epoch: int = ...,
        state_batches: Sequence[_StateTuple] = ...,
    ) -> PersistedState: ...
    def apply(self, update: ShareUpdate) -> None: ...
    @property
    def state_epoch(self) -> int: ...
    @property
    def leader_epoch(self) -> int: ...
    @property
    def start_offset(self) -> int: ...
    @property
    def state_batches(self) -> list[_StateTuple]: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class SharePartition:
    """The in-flight window of one (share group, topic-partition)."""

    def __new__(
        cls,
        start_offset: int = 0,
        *,
        state: PersistedState | None = None,
        state_epoch: int = 0,
        leader_epoch: int = 0,
        max_delivery_count: int = 5,
        max_in_flight_records: int = 2000,
        record_lock_duration_ms: int = 30000,
        undo_delivery_on_release: bool = False,
    ) -> SharePartition: ...
    @property
    def start_offset(self) -> int: ...
    @property
    def end_offset(self) -> int: ...
    @property
    def state_epoch(self) -> int: ...
    @property
    def in_flight_records(self) -> int: ...
    @property
    def delivery_complete_count(self) -> int: ...
    @property
    def next_deadline(self) -> int | None: ...
    def next_fetch_offset(self) -> int: ...
    def can_acquire_records(self) -> bool: ...
    def acquire(
        self,
        member: str,
        batch_size: int,
        max_records: int,
        fetch_offset: int,
        batches: Iterable[tuple[int, ...]],
        now_ms: int,
        record_limit: bool = False,
    ) -> tuple[list[tuple[int, int, int]], int]: ...
    def acknowledge(
        self, member: str, batches: Sequence[_AckBatch], now_ms: int
    ) -> ShareUpdate | None: ...
    def release_member(self, member: str) -> ShareUpdate | None: ...
    def expire(self, now_ms: int) -> ShareUpdate | None: ...
    def update_log_start_offset(self, log_start_offset: int) -> None: ...
    def record(self, offset: int) -> tuple[int, int, str | None, int | None] | None: ...
    def state_batches(self) -> list[_StateTuple]: ...
    def snapshot(self) -> PersistedState: ...
