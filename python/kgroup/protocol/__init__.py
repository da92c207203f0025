"""kgroup.protocol: Kafka's wire protocol, requests and responses, for 31 APIs.

Every version of Kafka 3.9's range is spoken for ApiVersions, Metadata, Produce, Fetch,
ListOffsets, OffsetForLeaderEpoch, FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
OffsetCommit, OffsetFetch, ListGroups, DescribeGroups, DeleteGroups, OffsetDelete, CreateTopics,
DeleteTopics, CreatePartitions, DeleteRecords, InitProducerId, DescribeProducers,
DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, DescribeCluster, SaslHandshake,
SaslAuthenticate, DescribeUserScramCredentials and AlterUserScramCredentials
(:data:`API_VERSIONS`).

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

A records value may also be a :class:`kgroup.log.FileSlice` (batches left in a segment file):
:func:`encode_response` reads it into the frame, :func:`encode_response_segments` leaves it out
as a piece of its own, to send with ``os.sendfile``, and counts its length in the prefixes.

Bad bytes raise a :class:`kgroup.errors.DecodeError` whose class says what a broker answers:
:class:`~kgroup.errors.UnsupportedApiVersion` (UNSUPPORTED_VERSION, under the correlation id
that :func:`decode_request_header` still reads), :class:`~kgroup.errors.FrameTooLarge` and
:class:`~kgroup.errors.MalformedMessage` (close the connection). Bad bodies raise
:class:`kgroup.errors.InvalidArgument` or :class:`kgroup.errors.InvalidType`. Decoding releases
the GIL while it reads the frame.

The api table (:data:`API_VERSIONS`, :data:`API_NAMES`, :class:`ApiKey`) and the header version
rules come from the Rust definitions, so they cannot drift from what the codec speaks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgroup._native.protocol import (
    API_NAMES,
    API_VERSIONS,
    MAX_FRAME_SIZE,
    ApiKey,
    ArrayView,
    Request,
    RequestHeader,
    Response,
    StructView,
    body_size,
    decode_body,
    decode_request,
    decode_request_header,
    decode_response,
    definitions,
    encode_body,
    encode_request,
    encode_response,
    encode_response_segments,
    frame_size,
    is_supported,
    request_header_version,
    response_header_version,
)

__all__ = [
    "API_NAMES",
    "API_VERSIONS",
    "MAX_FRAME_SIZE",
    "ApiKey",
    "ArrayView",
    "Body",
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
    "encode_response_segments",
    "frame_size",
    "is_supported",
    "request_header_version",
    "response_header_version",
]

Mapping.register(StructView)
Sequence.register(ArrayView)

#: Body is what the encoders take: a mapping of Kafka's field names to values (or a view).
Body = Mapping[str, Any]
