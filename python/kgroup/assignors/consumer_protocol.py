"""The ConsumerProtocol payloads: what consumers put in JoinGroup (Subscription) and what the
leader sends back in SyncGroup (Assignment), versions 0 to 3, byte-equal to Java's
``ConsumerProtocol``; and the user data of Java's StickyAssignor and CooperativeStickyAssignor.

>>> from kgroup.assignors import Subscription
>>> encode_subscription(Subscription(["t"], user_data=None), version=0).hex()
'000000000001000174ffffffff'

Encoding sorts subscription topics and owned partitions as Java does; an assignment's
partitions are grouped by topic in order of first appearance. Decoding reads any version (a
version above 3 as 3) and ignores trailing bytes, as Java's parser does; truncated or malformed
bytes raise :class:`kgroup.errors.DecodeError`.
"""

from __future__ import annotations

from collections.abc import Iterable

from kgroup._native.assignors import consumer_protocol as _native
from kgroup.assignors import Assignment, Subscription, TopicPartition

__all__ = [
    "HIGHEST_VERSION",
    "decode_assignment",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "decode_subscription",
    "encode_assignment",
    "encode_cooperative_user_data",
    "encode_sticky_user_data",
    "encode_subscription",
]

#: HIGHEST_VERSION is the newest ConsumerProtocol version (3, Kafka 3.5+).
HIGHEST_VERSION: int = _native.HIGHEST_VERSION


def encode_subscription(sub: Subscription, version: int = HIGHEST_VERSION) -> bytes:
    """Java's ``ConsumerProtocol.serializeSubscription``: fields the version lacks are dropped."""
    return _native.encode_subscription(sub, version)


def decode_subscription(data: bytes) -> Subscription:
    """Java's ``ConsumerProtocol.deserializeSubscription`` (the version is not kept)."""
    return _native.decode_subscription(data)[0]


def decode_subscription_version(data: bytes) -> tuple[Subscription, int]:
    """Like :func:`decode_subscription`, also returning the version written in ``data``."""
    return _native.decode_subscription(data)


def encode_assignment(assignment: Assignment, version: int = HIGHEST_VERSION) -> bytes:
    """Java's ``ConsumerProtocol.serializeAssignment``."""
    return _native.encode_assignment(assignment, version)


def decode_assignment(data: bytes) -> Assignment:
    """Java's ``ConsumerProtocol.deserializeAssignment``."""
    return _native.decode_assignment(data)[0]


def encode_sticky_user_data(
    partitions: Iterable[tuple[str, int]] | Assignment, generation: int | None = None
) -> bytes:
    """The StickyAssignor's user data: V1 (with ``generation``) as Java writes it, or V0
    without. Topics come in Java ``HashMap`` order, as Java's writer groups them.
    ``partitions`` may be an :class:`Assignment`, read without building tuples."""
    return _native.encode_sticky_user_data(partitions, generation)


def decode_sticky_user_data(data: bytes) -> tuple[tuple[TopicPartition, ...], int | None]:
    """Read StickyAssignor user data as V1, else as V0: ``(partitions, generation or None)``."""
    return _native.decode_sticky_user_data(data)


def encode_cooperative_user_data(generation: int) -> bytes:
    """The CooperativeStickyAssignor's user data: the generation as an int32."""
    return int(generation).to_bytes(4, "big", signed=True)


def decode_cooperative_user_data(data: bytes) -> int:
    """Read CooperativeStickyAssignor user data (an int32 generation)."""
    if len(data) < 4:
        from kgroup.errors import MalformedMessage

        raise MalformedMessage(f"cooperative-sticky user data needs 4 bytes, got {len(data)}")
    return int.from_bytes(data[:4], "big", signed=True)
