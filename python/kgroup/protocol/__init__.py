"""kgroup.protocol: Kafka's wire protocol, requests and responses, for 22 APIs.

Every version of Kafka 3.9's range is spoken for ApiVersions, Metadata, Produce, Fetch,
ListOffsets, FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch, ListGroups, DescribeGroups, DeleteGroups, OffsetDelete, CreateTopics, DeleteTopics,
InitProducerId, DescribeConfigs, SaslHandshake and SaslAuthenticate (:data:`API_VERSIONS`).

Bodies are plain Python values shaped by Kafka's message specs: a struct is a ``dict`` keyed by
Kafka's field names in snake_case (``rebalance_timeout_ms``), an array a ``list``, a string
``str``, bytes and record sets ``bytes`` (records are never decoded here; see
``kgroup.protocol.records``), a UUID ``uuid.UUID``, null ``None``. When encoding, a missing field
takes its default; a field the version lacks must be left at its default unless Kafka marks it
ignorable; an unknown key is an error. Tagged fields that the definitions do not know are kept
under ``"unknown_tagged_fields"`` as ``{tag: bytes}``, so that messages round-trip.

A decoded body is a :class:`StructView`: the whole frame is decoded and checked in Rust (with
the GIL released), and the view turns a field into a Python value only when it is read. It is a
read-only mapping of exactly the fields of its version, tagged fields included (at their
default when not sent): ``body["topics"]``, ``body.topics``, ``body.get(...)``, iteration,
``len``. Arrays of structs are :class:`ArrayView` sequences; arrays of scalars are lists.
``to_dict()`` / ``to_list()`` build plain dicts and lists, a view equals the plain value it
stands for, and encoding a view of the same message writes its tree directly.

A frame is what follows the INT32 size prefix on the wire. Encoders return whole frames, prefix
included, ready to write::

    size = frame_size(await reader.readexactly(4))
    request = decode_request(await reader.readexactly(size))
    writer.write(encode_response(request, {"error_code": 0, ...}))

Bad bytes raise :class:`kgroup.errors.DecodeError`; bad bodies raise
:class:`kgroup.errors.InvalidArgument` or :class:`kgroup.errors.InvalidType`. Decoding releases
the GIL while it reads the frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from kgroup import _native

__all__ = [
    "API_NAMES",
    "API_VERSIONS",
    "MAX_FRAME_SIZE",
    "ApiKey",
    "ArrayView",
    "Request",
    "RequestHeader",
    "Response",
    "StructView",
    "body_size",
    "decode_body",
    "decode_request",
    "decode_request_header",
    "decode_response",
    "definitions",
    "encode_body",
    "encode_request",
    "encode_response",
    "frame_size",
    "is_supported",
    "request_header_version",
    "response_header_version",
]

#: StructView is a decoded struct: a read-only mapping over the Rust value tree (see above).
StructView = _native.StructView
#: ArrayView is a decoded array of structs: a read-only sequence of StructViews.
ArrayView = _native.ArrayView
Mapping.register(StructView)
Sequence.register(ArrayView)

Body = Mapping[str, Any]


class ApiKey(IntEnum):
    """The api keys kgroup speaks, named as in Kafka's ``ApiKeys`` enum."""

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
    INIT_PRODUCER_ID = 22
    DESCRIBE_CONFIGS = 32
    SASL_AUTHENTICATE = 36
    DELETE_GROUPS = 42
    OFFSET_DELETE = 47


_APIS = _native.protocol_apis()

#: API_VERSIONS maps each api key to the (min, max) versions kgroup speaks (Kafka 3.9's range).
#: A broker answers any other key or version with UNSUPPORTED_VERSION.
API_VERSIONS: Mapping[int, tuple[int, int]] = {key: (lo, hi) for key, _, lo, hi, _, _ in _APIS}

#: API_NAMES maps each api key to Kafka's name for it (``"JoinGroup"``).
API_NAMES: Mapping[int, str] = {key: name for key, name, *_ in _APIS}

_FIRST_FLEXIBLE: dict[int, tuple[int | None, int | None]] = {
    key: (req, resp) for key, _, _, _, req, resp in _APIS
}

#: MAX_FRAME_SIZE is Kafka's default ``socket.request.max.bytes`` (100 MiB).
MAX_FRAME_SIZE = 104_857_600


def is_supported(api_key: int, api_version: int) -> bool:
    """Whether kgroup speaks this api key at this version."""
    r = API_VERSIONS.get(api_key)
    return r is not None and r[0] <= api_version <= r[1]


def _check(api_key: int, api_version: int) -> None:
    if not is_supported(api_key, api_version):
        from kgroup.errors import InvalidArgument

        raise InvalidArgument(f"api key {api_key} version {api_version} is not supported")


def request_header_version(api_key: int, api_version: int) -> int:
    """The request header version of a request: 2 when its version is flexible, else 1."""
    _check(api_key, api_version)
    first = _FIRST_FLEXIBLE[api_key][0]
    return 2 if first is not None and api_version >= first else 1


def response_header_version(api_key: int, api_version: int) -> int:
    """The response header version: 1 when flexible, else 0; always 0 for ApiVersions."""
    _check(api_key, api_version)
    first = _FIRST_FLEXIBLE[api_key][1]
    if api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if first is not None and api_version >= first else 0


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """The header of a request: what a broker needs to answer it, even when it cannot decode
    the body. ``size`` is the header's length in the frame."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    tagged_fields: Mapping[int, bytes] = field(default_factory=dict)
    size: int = 0

    @property
    def api_name(self) -> str | None:
        """Kafka's name of the api (``"JoinGroup"``), or None for a key kgroup does not speak."""
        return API_NAMES.get(self.api_key)


@dataclass(frozen=True, slots=True)
class Request:
    """A decoded request: its header fields and its body."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Body
    #: tagged_fields are the request header's tagged fields (v2 headers; Kafka defines none).
    tagged_fields: Mapping[int, bytes] = field(default_factory=dict)

    @property
    def api_name(self) -> str:
        """Kafka's name of the api (``"JoinGroup"``)."""
        return API_NAMES[self.api_key]


@dataclass(frozen=True, slots=True)
class Response:
    """A decoded response. ``api_version`` is the version its body was read at: the one asked
    for, except an ApiVersions answer that only parses as v0 (a broker answers an ApiVersions
    version it does not speak with a v0 body carrying UNSUPPORTED_VERSION)."""

    api_key: int
    api_version: int
    correlation_id: int
    body: Body
    tagged_fields: Mapping[int, bytes] = field(default_factory=dict)


def frame_size(prefix: bytes, max_size: int = MAX_FRAME_SIZE) -> int:
    """The size announced by a frame's 4-byte prefix; DecodeError when negative or above
    ``max_size``."""
    return _native.protocol_frame_size(prefix, max_size)


def decode_request(frame: bytes) -> Request:
    """Decode a request frame (the bytes after its size prefix).

    An unknown api key or version, a truncated or malformed frame, or bytes left over raise
    DecodeError; :func:`decode_request_header` still reads the header of such a frame.
    """
    key, version, corr, client_id, tagged, body = _native.protocol_decode_request(frame)
    return Request(key, version, corr, client_id, body, tagged or {})


def decode_request_header(frame: bytes) -> RequestHeader:
    """Read only the header of a request frame, whatever its api key and version, so that a
    broker can answer a request it cannot decode (UNSUPPORTED_VERSION, under its correlation
    id)."""
    key, version, corr, client_id, tagged, size = _native.protocol_decode_request_header(frame)
    return RequestHeader(key, version, corr, client_id, tagged or {}, size)


def encode_request(
    api_key: int,
    version: int,
    correlation_id: int,
    client_id: str | None,
    body: Mapping[str, Any] | Any,
    *,
    tagged_fields: Mapping[int, bytes] | None = None,
) -> bytes:
    """Encode a request frame, size prefix included; the header version follows from the api
    key and version."""
    return _native.protocol_encode_request(
        api_key, version, correlation_id, client_id, body, tagged_fields
    )


def encode_response(
    request: Request | RequestHeader,
    body: Mapping[str, Any] | Any,
    *,
    version: int | None = None,
    tagged_fields: Mapping[int, bytes] | None = None,
) -> bytes:
    """Encode the response to ``request`` (its api key, version and correlation id), size
    prefix included.

    ``version`` overrides the body's version: an ApiVersions request at a version the broker
    does not speak is answered with a v0 body (``error_code`` 35, UNSUPPORTED_VERSION, and the
    broker's ``api_keys``), as Kafka does.
    """
    v = request.api_version if version is None else version
    return _native.protocol_encode_response(
        request.api_key, v, request.correlation_id, body, tagged_fields
    )


def decode_response(api_key: int, version: int, frame: bytes) -> Response:
    """Decode a response frame (the bytes after its size prefix) to a request of ``api_key``
    sent at ``version``."""
    corr, tagged, read_version, body = _native.protocol_decode_response(api_key, version, frame)
    return Response(api_key, read_version, corr, body, tagged or {})


def encode_body(
    api_key: int, version: int, body: Mapping[str, Any] | Any, *, request: bool
) -> bytes:
    """Encode a request or response body alone, without header or size prefix."""
    return _native.protocol_encode_body(api_key, version, request, body)


def decode_body(api_key: int, version: int, data: bytes, *, request: bool) -> StructView:
    """Decode a request or response body alone (no header, no size prefix); every byte must be
    used."""
    return _native.protocol_decode_body(api_key, version, request, data)


def body_size(api_key: int, version: int, body: Mapping[str, Any] | Any, *, request: bool) -> int:
    """The encoded size of a body, computed without encoding it."""
    return _native.protocol_body_size(api_key, version, request, body)


def definitions() -> list[dict[str, Any]]:
    """Every message definition (requests, responses and the two headers) as plain data:
    name, api key, type, valid and flexible versions, and fields with their versions, nullable
    versions, tags, defaults and nested fields, in Kafka's version syntax (``"3+"``)."""
    return _native.protocol_schema()
