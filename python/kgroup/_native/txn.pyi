# Typed stubs of kgroup._native.txn, built from rust/py/txn.rs;
# `make lint` checks them against the built module (mypy.stubtest).
# Users import kgroup.txn.

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, final

CONFIG_KEYS: list[str]
TXN_API_KEYS: list[int]

@final
class Respond:
    """Write ``frame`` (a whole response frame) to the connection of ``token``'s request."""

    __match_args__: ClassVar[tuple[str, str]]
    @property
    def token(self) -> Any: ...
    @property
    def frame(self) -> bytes: ...

@final
class Append:
    """Append ``records`` (one v2 batch) to ``__transaction_state``-``partition``; report with
    ``Coordinator.appended``."""

    __match_args__: ClassVar[tuple[str, str, str]]
    @property
    def token(self) -> int: ...
    @property
    def partition(self) -> int: ...
    @property
    def records(self) -> bytes: ...

@final
class WriteMarkers:
    """Write a transaction's markers to ``partitions``; report with
    ``Coordinator.markers_written``."""

    __match_args__: ClassVar[tuple[str, str, str, str, str, str]]
    @property
    def transactional_id(self) -> str: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def commit(self) -> bool: ...
    @property
    def coordinator_epoch(self) -> int: ...
    @property
    def partitions(self) -> list[tuple[str, int]]: ...

@final
class Coordinator:
    """The transaction coordinator of a broker: requests in, effects out."""

    def __new__(cls, config: Mapping[str, int | str] | None = None) -> Coordinator: ...
    def handle_frame(
        self,
        now_ms: int,
        token: Any,
        frame: bytes | bytearray,
        next_producer_id: Callable[[], int] | None = None,
    ) -> list[Respond | Append | WriteMarkers]: ...
    def appended(
        self, now_ms: int, token: int, error_code: int = 0
    ) -> list[Respond | Append | WriteMarkers]: ...
    def markers_written(
        self, now_ms: int, transactional_id: str, producer_id: int, producer_epoch: int
    ) -> list[Respond | Append | WriteMarkers]: ...
    def tick(self, now_ms: int) -> list[Respond | Append | WriteMarkers]: ...
    @property
    def next_deadline(self) -> int | None: ...
    def load(
        self, partition: int, batches: bytes, last: bool = True, coordinator_epoch: int = 0
    ) -> dict[str, int]: ...
    def unload(self, now_ms: int, partition: int) -> list[Respond | Append | WriteMarkers]: ...
    def set_topics(self, topics: Mapping[str, int] | None) -> None: ...
    def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        topic: str,
        partition: int,
    ) -> int: ...
    def partition_for(self, transactional_id: str) -> int: ...
    def transaction_state(self, transactional_id: str) -> str | None: ...
    def transactions(self) -> list[dict[str, Any]]: ...
    @property
    def transaction_count(self) -> int: ...
    @property
    def pending_appends(self) -> int: ...
    @property
    def waiting(self) -> int: ...
