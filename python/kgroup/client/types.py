"""types: the values the clients' API passes around, shaped as confluent-kafka's.

:class:`TopicPartition` is confluent-kafka's ``TopicPartition`` (a topic, a partition, an
offset, commit metadata, a leader epoch and a per-partition error), and the ``OFFSET_*``
constants are its logical offsets. The ACL values (:class:`AclBinding`, :class:`AclBindingFilter`
and their enums) are :mod:`kgroup.acl`'s. :class:`ClientError` is the base of the errors a client
raises on its own, without a broker's error code (a timeout, a closed client), with librdkafka's
local error codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgroup.acl import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
)
from kgroup.errors import KafkaError, KGroupError

__all__ = [
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "OFFSET_INVALID",
    "OFFSET_STORED",
    "TIMESTAMP_CREATE_TIME",
    "TIMESTAMP_LOG_APPEND_TIME",
    "TIMESTAMP_NOT_AVAILABLE",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "ClientClosed",
    "ClientError",
    "ClientTimeout",
    "CommitFailed",
    "ConsumerGroupMetadata",
    "OperationConflict",
    "PartitionEOF",
    "ResourcePatternType",
    "TopicPartition",
    "TransactionStateError",
]

#: confluent-kafka's logical offsets: the first offset, the end, the committed one, none.
OFFSET_BEGINNING = -2
OFFSET_END = -1
OFFSET_STORED = -1000
OFFSET_INVALID = -1001

#: ``Message.timestamp()[0]``: confluent-kafka's timestamp types.
TIMESTAMP_NOT_AVAILABLE = 0
TIMESTAMP_CREATE_TIME = 1
TIMESTAMP_LOG_APPEND_TIME = 2


class TopicPartition:
    """TopicPartition is a topic's partition, with an offset, as confluent-kafka's.

    Equal and hashed by topic and partition only, and ordered by them, as confluent-kafka's.

    >>> tp = TopicPartition("t", 1, 42)
    >>> tp, tp == TopicPartition("t", 1), tp.offset
    (TopicPartition{topic=t,partition=1,offset=42,leader_epoch=None,error=None}, True, 42)
    """

    __slots__ = ("error", "leader_epoch", "metadata", "offset", "partition", "topic")

    def __init__(
        self,
        topic: str,
        partition: int = -1,
        offset: int = OFFSET_INVALID,
        metadata: str | None = None,
        leader_epoch: int | None = None,
        error: KafkaError | None = None,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.metadata = metadata
        self.leader_epoch = leader_epoch
        self.error = error

    def _key(self) -> tuple[str, int]:
        return (self.topic, self.partition)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, TopicPartition):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: TopicPartition) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"TopicPartition{{topic={self.topic},partition={self.partition},"
            f"offset={self.offset},leader_epoch={self.leader_epoch},error={self.error}}}"
        )

    __str__ = __repr__


@dataclass(frozen=True)
class ConsumerGroupMetadata:
    """ConsumerGroupMetadata is a consumer's place in its group, Java's ConsumerGroupMetadata:
    the group, the generation and member id the coordinator gave it (-1 and "" when it is not a
    member) and its static instance id. Immutable: a consumer hands out a new one when they
    change."""

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


class ClientError(KGroupError):
    """An error the client raises without a broker's error code. ``code`` is librdkafka's
    local error code for it (negative), so code that tests ``err.code`` works for both."""

    code: int = -1
    name: str = "_FAIL"
    retriable: bool = False
    #: as :class:`~kgroup.errors.KafkaError`'s: the producer is unusable / the transaction
    #: must be aborted
    fatal: bool = False
    txn_requires_abort: bool = False


class ClientTimeout(ClientError, TimeoutError):
    """An operation did not finish in its timeout (librdkafka's ``_TIMED_OUT``)."""

    code = -185
    name = "_TIMED_OUT"
    retriable = True


class ClientClosed(ClientError, RuntimeError):
    """The client is closed (librdkafka's ``_DESTROY``)."""

    code = -197
    name = "_DESTROY"


class TransactionStateError(ClientError):
    """A transactional call the producer's state does not allow: begin_transaction() before
    init_transactions(), commit_transaction() outside a transaction, produce() outside one
    (librdkafka's ``_STATE``)."""

    code = -172
    name = "_STATE"


class OperationConflict(ClientError):
    """Another transactional call is still running in the background (one that timed out):
    call that one again to finish it first (librdkafka's ``_CONFLICT``)."""

    code = -173
    name = "_CONFLICT"


class PartitionEOF(ClientError):
    """The consumer reached the end of a partition (``enable.partition.eof``; librdkafka's
    ``_PARTITION_EOF``). Delivered as ``Message.error()``, never raised."""

    code = -191
    name = "_PARTITION_EOF"


class CommitFailed(ClientError):
    """A commit the group no longer accepts: the member was removed or the group rebalanced
    (Java's ``CommitFailedException``). ``cause`` is the coordinator's error."""

    code = -180
    name = "_COMMIT_FAILED"

    def __init__(self, message: str, cause: KafkaError | None = None) -> None:
        super().__init__(message)
        self.cause = cause
