"""kgroup.errors: one exception tree for everything kgroup raises.

Every exception derives from :class:`KGroupError`, and also from the standard exception whose
meaning matches, so existing ``except ValueError`` / ``except TypeError`` clauses keep working.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "DecodeError",
    "InvalidArgument",
    "InvalidType",
    "KGroupError",
    "KafkaError",
    "error_for_code",
    "raise_for_code",
]


class KGroupError(Exception):
    """Base of every exception kgroup raises."""


class InvalidArgument(KGroupError, ValueError):
    """An argument is out of its range (a partition count below 1, an unknown hash name...)."""


class InvalidType(KGroupError, TypeError):
    """A value has a type kgroup cannot use (a key that is neither bytes, str nor None...)."""


class DecodeError(KGroupError, ValueError):
    """Bytes that do not decode: a truncated or malformed payload, frame or buffer."""


class KafkaError(KGroupError):
    """Base of the Kafka error codes: one subclass per code of Kafka's ``Errors`` enum (3.9).

    ``code`` is the number on the wire, ``name`` Kafka's name (``REBALANCE_IN_PROGRESS``) and
    ``retriable`` whether Kafka's exception for it is a ``RetriableException``: the same request
    may succeed if sent again (after refreshing metadata or finding the coordinator).
    Use :func:`error_for_code` to map a code to its class.
    """

    code: ClassVar[int] = -1
    name: ClassVar[str] = "UNKNOWN_SERVER_ERROR"
    retriable: ClassVar[bool] = False

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message if message is not None else self.name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.args[0]!r})" if self.args else type(self).__name__


# One class per Kafka error code, named after Kafka's names in CamelCase; codes, names and
# retriability from Kafka 3.9's clients/.../common/protocol/Errors.java and the exception
# classes it maps them to. (Code 0, NONE, is no error; 99 is unused.)


class UnknownServerError(KafkaError):
    code, name, retriable = -1, "UNKNOWN_SERVER_ERROR", False


class OffsetOutOfRange(KafkaError):
    code, name, retriable = 1, "OFFSET_OUT_OF_RANGE", False


class CorruptMessage(KafkaError):
    code, name, retriable = 2, "CORRUPT_MESSAGE", True


class UnknownTopicOrPartition(KafkaError):
    code, name, retriable = 3, "UNKNOWN_TOPIC_OR_PARTITION", True


class InvalidFetchSize(KafkaError):
    code, name, retriable = 4, "INVALID_FETCH_SIZE", False


class LeaderNotAvailable(KafkaError):
    code, name, retriable = 5, "LEADER_NOT_AVAILABLE", True


class NotLeaderOrFollower(KafkaError):
    code, name, retriable = 6, "NOT_LEADER_OR_FOLLOWER", True


class RequestTimedOut(KafkaError):
    code, name, retriable = 7, "REQUEST_TIMED_OUT", True


class BrokerNotAvailable(KafkaError):
    code, name, retriable = 8, "BROKER_NOT_AVAILABLE", False


class ReplicaNotAvailable(KafkaError):
    code, name, retriable = 9, "REPLICA_NOT_AVAILABLE", True


class MessageTooLarge(KafkaError):
    code, name, retriable = 10, "MESSAGE_TOO_LARGE", False


class StaleControllerEpoch(KafkaError):
    code, name, retriable = 11, "STALE_CONTROLLER_EPOCH", False


class OffsetMetadataTooLarge(KafkaError):
    code, name, retriable = 12, "OFFSET_METADATA_TOO_LARGE", False


class NetworkException(KafkaError):
    code, name, retriable = 13, "NETWORK_EXCEPTION", True


class CoordinatorLoadInProgress(KafkaError):
    code, name, retriable = 14, "COORDINATOR_LOAD_IN_PROGRESS", True


class CoordinatorNotAvailable(KafkaError):
    code, name, retriable = 15, "COORDINATOR_NOT_AVAILABLE", True


class NotCoordinator(KafkaError):
    code, name, retriable = 16, "NOT_COORDINATOR", True


class InvalidTopicException(KafkaError):
    code, name, retriable = 17, "INVALID_TOPIC_EXCEPTION", False


class RecordListTooLarge(KafkaError):
    code, name, retriable = 18, "RECORD_LIST_TOO_LARGE", False


class NotEnoughReplicas(KafkaError):
    code, name, retriable = 19, "NOT_ENOUGH_REPLICAS", True


class NotEnoughReplicasAfterAppend(KafkaError):
    code, name, retriable = 20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True


class InvalidRequiredAcks(KafkaError):
    code, name, retriable = 21, "INVALID_REQUIRED_ACKS", False


class IllegalGeneration(KafkaError):
    code, name, retriable = 22, "ILLEGAL_GENERATION", False


class InconsistentGroupProtocol(KafkaError):
    code, name, retriable = 23, "INCONSISTENT_GROUP_PROTOCOL", False


class InvalidGroupId(KafkaError):
    code, name, retriable = 24, "INVALID_GROUP_ID", False


class UnknownMemberId(KafkaError):
    code, name, retriable = 25, "UNKNOWN_MEMBER_ID", False


class InvalidSessionTimeout(KafkaError):
    code, name, retriable = 26, "INVALID_SESSION_TIMEOUT", False


class RebalanceInProgress(KafkaError):
    code, name, retriable = 27, "REBALANCE_IN_PROGRESS", False


class InvalidCommitOffsetSize(KafkaError):
    code, name, retriable = 28, "INVALID_COMMIT_OFFSET_SIZE", False


class TopicAuthorizationFailed(KafkaError):
    code, name, retriable = 29, "TOPIC_AUTHORIZATION_FAILED", False


class GroupAuthorizationFailed(KafkaError):
    code, name, retriable = 30, "GROUP_AUTHORIZATION_FAILED", False


class ClusterAuthorizationFailed(KafkaError):
    code, name, retriable = 31, "CLUSTER_AUTHORIZATION_FAILED", False


class InvalidTimestamp(KafkaError):
    code, name, retriable = 32, "INVALID_TIMESTAMP", False


class UnsupportedSaslMechanism(KafkaError):
    code, name, retriable = 33, "UNSUPPORTED_SASL_MECHANISM", False


class IllegalSaslState(KafkaError):
    code, name, retriable = 34, "ILLEGAL_SASL_STATE", False


class UnsupportedVersion(KafkaError):
    code, name, retriable = 35, "UNSUPPORTED_VERSION", False


class TopicAlreadyExists(KafkaError):
    code, name, retriable = 36, "TOPIC_ALREADY_EXISTS", False


class InvalidPartitions(KafkaError):
    code, name, retriable = 37, "INVALID_PARTITIONS", False


class InvalidReplicationFactor(KafkaError):
    code, name, retriable = 38, "INVALID_REPLICATION_FACTOR", False


class InvalidReplicaAssignment(KafkaError):
    code, name, retriable = 39, "INVALID_REPLICA_ASSIGNMENT", False


class InvalidConfig(KafkaError):
    code, name, retriable = 40, "INVALID_CONFIG", False


class NotController(KafkaError):
    code, name, retriable = 41, "NOT_CONTROLLER", True


class InvalidRequest(KafkaError):
    code, name, retriable = 42, "INVALID_REQUEST", False


class UnsupportedForMessageFormat(KafkaError):
    code, name, retriable = 43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", False


class PolicyViolation(KafkaError):
    code, name, retriable = 44, "POLICY_VIOLATION", False


class OutOfOrderSequenceNumber(KafkaError):
    code, name, retriable = 45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False


class DuplicateSequenceNumber(KafkaError):
    code, name, retriable = 46, "DUPLICATE_SEQUENCE_NUMBER", False


class InvalidProducerEpoch(KafkaError):
    code, name, retriable = 47, "INVALID_PRODUCER_EPOCH", False


class InvalidTxnState(KafkaError):
    code, name, retriable = 48, "INVALID_TXN_STATE", False


class InvalidProducerIdMapping(KafkaError):
    code, name, retriable = 49, "INVALID_PRODUCER_ID_MAPPING", False


class InvalidTransactionTimeout(KafkaError):
    code, name, retriable = 50, "INVALID_TRANSACTION_TIMEOUT", False


class ConcurrentTransactions(KafkaError):
    code, name, retriable = 51, "CONCURRENT_TRANSACTIONS", True


class TransactionCoordinatorFenced(KafkaError):
    code, name, retriable = 52, "TRANSACTION_COORDINATOR_FENCED", False


class TransactionalIdAuthorizationFailed(KafkaError):
    code, name, retriable = 53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False


class SecurityDisabled(KafkaError):
    code, name, retriable = 54, "SECURITY_DISABLED", False


class OperationNotAttempted(KafkaError):
    code, name, retriable = 55, "OPERATION_NOT_ATTEMPTED", False


class KafkaStorageError(KafkaError):
    code, name, retriable = 56, "KAFKA_STORAGE_ERROR", True


class LogDirNotFound(KafkaError):
    code, name, retriable = 57, "LOG_DIR_NOT_FOUND", False


class SaslAuthenticationFailed(KafkaError):
    code, name, retriable = 58, "SASL_AUTHENTICATION_FAILED", False


class UnknownProducerId(KafkaError):
    code, name, retriable = 59, "UNKNOWN_PRODUCER_ID", False


class ReassignmentInProgress(KafkaError):
    code, name, retriable = 60, "REASSIGNMENT_IN_PROGRESS", False


class DelegationTokenAuthDisabled(KafkaError):
    code, name, retriable = 61, "DELEGATION_TOKEN_AUTH_DISABLED", False


class DelegationTokenNotFound(KafkaError):
    code, name, retriable = 62, "DELEGATION_TOKEN_NOT_FOUND", False


class DelegationTokenOwnerMismatch(KafkaError):
    code, name, retriable = 63, "DELEGATION_TOKEN_OWNER_MISMATCH", False


class DelegationTokenRequestNotAllowed(KafkaError):
    code, name, retriable = 64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", False


class DelegationTokenAuthorizationFailed(KafkaError):
    code, name, retriable = 65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False


class DelegationTokenExpired(KafkaError):
    code, name, retriable = 66, "DELEGATION_TOKEN_EXPIRED", False


class InvalidPrincipalType(KafkaError):
    code, name, retriable = 67, "INVALID_PRINCIPAL_TYPE", False


class NonEmptyGroup(KafkaError):
    code, name, retriable = 68, "NON_EMPTY_GROUP", False


class GroupIdNotFound(KafkaError):
    code, name, retriable = 69, "GROUP_ID_NOT_FOUND", False


class FetchSessionIdNotFound(KafkaError):
    code, name, retriable = 70, "FETCH_SESSION_ID_NOT_FOUND", True


class InvalidFetchSessionEpoch(KafkaError):
    code, name, retriable = 71, "INVALID_FETCH_SESSION_EPOCH", True


class ListenerNotFound(KafkaError):
    code, name, retriable = 72, "LISTENER_NOT_FOUND", True


class TopicDeletionDisabled(KafkaError):
    code, name, retriable = 73, "TOPIC_DELETION_DISABLED", False


class FencedLeaderEpoch(KafkaError):
    code, name, retriable = 74, "FENCED_LEADER_EPOCH", True


class UnknownLeaderEpoch(KafkaError):
    code, name, retriable = 75, "UNKNOWN_LEADER_EPOCH", True


class UnsupportedCompressionType(KafkaError):
    code, name, retriable = 76, "UNSUPPORTED_COMPRESSION_TYPE", False


class StaleBrokerEpoch(KafkaError):
    code, name, retriable = 77, "STALE_BROKER_EPOCH", False


class OffsetNotAvailable(KafkaError):
    code, name, retriable = 78, "OFFSET_NOT_AVAILABLE", True


class MemberIdRequired(KafkaError):
    code, name, retriable = 79, "MEMBER_ID_REQUIRED", False


class PreferredLeaderNotAvailable(KafkaError):
    code, name, retriable = 80, "PREFERRED_LEADER_NOT_AVAILABLE", True


class GroupMaxSizeReached(KafkaError):
    code, name, retriable = 81, "GROUP_MAX_SIZE_REACHED", False


class FencedInstanceId(KafkaError):
    code, name, retriable = 82, "FENCED_INSTANCE_ID", False


class EligibleLeadersNotAvailable(KafkaError):
    code, name, retriable = 83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", True


class ElectionNotNeeded(KafkaError):
    code, name, retriable = 84, "ELECTION_NOT_NEEDED", True


class NoReassignmentInProgress(KafkaError):
    code, name, retriable = 85, "NO_REASSIGNMENT_IN_PROGRESS", False


class GroupSubscribedToTopic(KafkaError):
    code, name, retriable = 86, "GROUP_SUBSCRIBED_TO_TOPIC", False


class InvalidRecord(KafkaError):
    code, name, retriable = 87, "INVALID_RECORD", False


class UnstableOffsetCommit(KafkaError):
    code, name, retriable = 88, "UNSTABLE_OFFSET_COMMIT", True


class ThrottlingQuotaExceeded(KafkaError):
    code, name, retriable = 89, "THROTTLING_QUOTA_EXCEEDED", True


class ProducerFenced(KafkaError):
    code, name, retriable = 90, "PRODUCER_FENCED", False


class ResourceNotFound(KafkaError):
    code, name, retriable = 91, "RESOURCE_NOT_FOUND", False


class DuplicateResource(KafkaError):
    code, name, retriable = 92, "DUPLICATE_RESOURCE", False


class UnacceptableCredential(KafkaError):
    code, name, retriable = 93, "UNACCEPTABLE_CREDENTIAL", False


class InconsistentVoterSet(KafkaError):
    code, name, retriable = 94, "INCONSISTENT_VOTER_SET", False


class InvalidUpdateVersion(KafkaError):
    code, name, retriable = 95, "INVALID_UPDATE_VERSION", False


class FeatureUpdateFailed(KafkaError):
    code, name, retriable = 96, "FEATURE_UPDATE_FAILED", False


class PrincipalDeserializationFailure(KafkaError):
    code, name, retriable = 97, "PRINCIPAL_DESERIALIZATION_FAILURE", False


class SnapshotNotFound(KafkaError):
    code, name, retriable = 98, "SNAPSHOT_NOT_FOUND", False


class UnknownTopicId(KafkaError):
    code, name, retriable = 100, "UNKNOWN_TOPIC_ID", True


class DuplicateBrokerRegistration(KafkaError):
    code, name, retriable = 101, "DUPLICATE_BROKER_REGISTRATION", False


class BrokerIdNotRegistered(KafkaError):
    code, name, retriable = 102, "BROKER_ID_NOT_REGISTERED", False


class InconsistentTopicId(KafkaError):
    code, name, retriable = 103, "INCONSISTENT_TOPIC_ID", True


class InconsistentClusterId(KafkaError):
    code, name, retriable = 104, "INCONSISTENT_CLUSTER_ID", False


class TransactionalIdNotFound(KafkaError):
    code, name, retriable = 105, "TRANSACTIONAL_ID_NOT_FOUND", False


class FetchSessionTopicIdError(KafkaError):
    code, name, retriable = 106, "FETCH_SESSION_TOPIC_ID_ERROR", True


class IneligibleReplica(KafkaError):
    code, name, retriable = 107, "INELIGIBLE_REPLICA", False


class NewLeaderElected(KafkaError):
    code, name, retriable = 108, "NEW_LEADER_ELECTED", False


class OffsetMovedToTieredStorage(KafkaError):
    code, name, retriable = 109, "OFFSET_MOVED_TO_TIERED_STORAGE", False


class FencedMemberEpoch(KafkaError):
    code, name, retriable = 110, "FENCED_MEMBER_EPOCH", False


class UnreleasedInstanceId(KafkaError):
    code, name, retriable = 111, "UNRELEASED_INSTANCE_ID", False


class UnsupportedAssignor(KafkaError):
    code, name, retriable = 112, "UNSUPPORTED_ASSIGNOR", False


class StaleMemberEpoch(KafkaError):
    code, name, retriable = 113, "STALE_MEMBER_EPOCH", False


class MismatchedEndpointType(KafkaError):
    code, name, retriable = 114, "MISMATCHED_ENDPOINT_TYPE", False


class UnsupportedEndpointType(KafkaError):
    code, name, retriable = 115, "UNSUPPORTED_ENDPOINT_TYPE", False


class UnknownControllerId(KafkaError):
    code, name, retriable = 116, "UNKNOWN_CONTROLLER_ID", False


class UnknownSubscriptionId(KafkaError):
    code, name, retriable = 117, "UNKNOWN_SUBSCRIPTION_ID", False


class TelemetryTooLarge(KafkaError):
    code, name, retriable = 118, "TELEMETRY_TOO_LARGE", False


class InvalidRegistration(KafkaError):
    code, name, retriable = 119, "INVALID_REGISTRATION", False


class TransactionAbortable(KafkaError):
    code, name, retriable = 120, "TRANSACTION_ABORTABLE", False


class InvalidRecordState(KafkaError):
    code, name, retriable = 121, "INVALID_RECORD_STATE", False


class ShareSessionNotFound(KafkaError):
    code, name, retriable = 122, "SHARE_SESSION_NOT_FOUND", True


class InvalidShareSessionEpoch(KafkaError):
    code, name, retriable = 123, "INVALID_SHARE_SESSION_EPOCH", True


class FencedStateEpoch(KafkaError):
    code, name, retriable = 124, "FENCED_STATE_EPOCH", False


class InvalidVoterKey(KafkaError):
    code, name, retriable = 125, "INVALID_VOTER_KEY", False


class DuplicateVoter(KafkaError):
    code, name, retriable = 126, "DUPLICATE_VOTER", False


class VoterNotFound(KafkaError):
    code, name, retriable = 127, "VOTER_NOT_FOUND", False


_BY_CODE: dict[int, type[KafkaError]] = {
    c.code: c for c in KafkaError.__subclasses__() if c.__module__ == __name__
}
__all__ += sorted(c.__name__ for c in _BY_CODE.values())


def error_for_code(code: int) -> type[KafkaError] | None:
    """The class of a Kafka error code; ``None`` for 0 (NONE).

    An unknown code maps to :class:`UnknownServerError`, as Kafka's ``Errors.forCode`` does.
    """
    if code == 0:
        return None
    return _BY_CODE.get(code, UnknownServerError)


def raise_for_code(code: int, message: str | None = None) -> None:
    """Raise the :class:`KafkaError` of ``code`` unless it is 0 (NONE)."""
    cls = error_for_code(code)
    if cls is not None:
        raise cls(message)
