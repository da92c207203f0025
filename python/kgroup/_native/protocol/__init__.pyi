# Typed stubs of kgroup._native.protocol, built from rust/py/protocol/;
# `make lint` checks them against the built module (mypy.stubtest).
# Users import kgroup.protocol.

from collections.abc import Iterator, Mapping, Sequence
from enum import IntEnum
from typing import Any, final

from typing_extensions import disjoint_base

from ..log import FileSlice
from . import records as records

API_VERSIONS: dict[int, tuple[int, int]]
API_NAMES: dict[int, str]
MAX_FRAME_SIZE: int

class ApiKey(IntEnum):
    """The api keys kgroup speaks, named as in Kafka's ApiKeys enum."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    INCREMENTAL_ALTER_CONFIGS = 44
    OFFSET_DELETE = 47
    DESCRIBE_CLIENT_QUOTAS = 48
    ALTER_CLIENT_QUOTAS = 49
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    DESCRIBE_CLUSTER = 60
    DESCRIBE_PRODUCERS = 61
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66
    CONSUMER_GROUP_HEARTBEAT = 68
    CONSUMER_GROUP_DESCRIBE = 69
    LIST_CONFIG_RESOURCES = 74
    SHARE_GROUP_HEARTBEAT = 76
    SHARE_GROUP_DESCRIBE = 77
    SHARE_FETCH = 78
    SHARE_ACKNOWLEDGE = 79
    DESCRIBE_SHARE_GROUP_OFFSETS = 90
    ALTER_SHARE_GROUP_OFFSETS = 91
    DELETE_SHARE_GROUP_OFFSETS = 92

@final
class StructView(Mapping[str, Any]):
    """A decoded struct: a read-only mapping of field names to values, over the Rust tree."""

    @property
    def message(self) -> str: ...
    @property
    def version(self) -> int: ...
    def __getitem__(self, key: str, /) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def get(self, key: str, default: Any = None) -> Any: ...
    def keys(self) -> list[str]: ...  # type: ignore[override]
    def values(self) -> list[Any]: ...  # type: ignore[override]
    def items(self) -> list[tuple[str, Any]]: ...  # type: ignore[override]
    def to_dict(self) -> dict[str, Any]: ...

@final
class ArrayView(Sequence[StructView]):
    """A decoded array of structs: a read-only sequence of StructViews."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: int | slice, /) -> Any: ...
    def __iter__(self) -> Iterator[StructView]: ...
    def to_list(self) -> list[dict[str, Any]]: ...

@disjoint_base
class RequestHeader:
    """The header of a request; `size` is its length in the frame."""

    def __new__(
        cls,
        api_key: int,
        api_version: int,
        correlation_id: int,
        client_id: str | None = None,
        tagged_fields: dict[int, bytes] | None = None,
        size: int = 0,
    ) -> RequestHeader: ...
    @property
    def api_key(self) -> int: ...
    @property
    def api_version(self) -> int: ...
    @property
    def correlation_id(self) -> int: ...
    @property
    def client_id(self) -> str | None: ...
    @property
    def tagged_fields(self) -> dict[int, bytes]: ...
    @property
    def size(self) -> int: ...
    @property
    def api_name(self) -> str | None: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class Request(RequestHeader):
    """A decoded request: its header and its body."""

    def __new__(
        cls,
        api_key: int,
        api_version: int,
        correlation_id: int,
        client_id: str | None,
        body: Any,
        tagged_fields: dict[int, bytes] | None = None,
        size: int = 0,
    ) -> Request: ...
    @property
    def body(self) -> StructView: ...
    @property
    def api_name(self) -> str: ...

@final
class Response:
    """A decoded response; `api_version` is the version its body was read at."""

    def __new__(
        cls,
        api_key: int,
        api_version: int,
        correlation_id: int,
        body: Any,
        tagged_fields: dict[int, bytes] | None = None,
    ) -> Response: ...
    @property
    def api_key(self) -> int: ...
    @property
    def api_version(self) -> int: ...
    @property
    def correlation_id(self) -> int: ...
    @property
    def body(self) -> StructView: ...
    @property
    def tagged_fields(self) -> dict[int, bytes]: ...
    def __eq__(self, other: object, /) -> bool: ...

def decode_request(frame: bytes | bytearray | memoryview, *, strict: bool = True) -> Request: ...
def decode_request_header(frame: bytes | bytearray | memoryview) -> RequestHeader: ...
def encode_request(
    api_key: int,
    version: int,
    correlation_id: int,
    client_id: str | None,
    body: Mapping[str, Any],
    *,
    tagged_fields: Mapping[int, bytes] | None = None,
) -> bytes: ...
def decode_response(
    api_key: int, version: int, frame: bytes | bytearray | memoryview
) -> Response: ...
def encode_response(
    request: RequestHeader,
    body: Mapping[str, Any],
    *,
    version: int | None = None,
    tagged_fields: Mapping[int, bytes] | None = None,
) -> bytes: ...
def encode_response_segments(
    request: RequestHeader,
    body: Mapping[str, Any],
    *,
    inline_below: int = 0,
    version: int | None = None,
    tagged_fields: Mapping[int, bytes] | None = None,
) -> list[bytes | FileSlice]: ...
def frame_size(prefix: bytes | bytearray | memoryview, max_size: int = ...) -> int: ...
def decode_body(
    api_key: int, version: int, data: bytes | bytearray | memoryview, *, request: bool
) -> StructView: ...
def encode_body(api_key: int, version: int, body: Mapping[str, Any], *, request: bool) -> bytes: ...
def body_size(api_key: int, version: int, body: Mapping[str, Any], *, request: bool) -> int: ...
def is_supported(api_key: int, api_version: int) -> bool: ...
def request_header_version(api_key: int, api_version: int) -> int: ...
def response_header_version(api_key: int, api_version: int) -> int: ...
def definitions() -> list[dict[str, Any]]: ...
