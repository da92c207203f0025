"""admin: kgroup's AdminClient, shaped as confluent-kafka's.

Each method that asks the cluster something returns a ``dict`` of
:class:`concurrent.futures.Future`, keyed by what it was asked about (a topic, a group, a
:class:`~kgroup.client.types.TopicPartition`, a :class:`ConfigResource`, an ACL binding or
filter), as confluent-kafka's do, so ``for t, f in admin.create_topics([NewTopic("t",
3)]).items(): f.result()`` works. A future's exception is the :class:`~kgroup.errors.KafkaError`
subclass of the broker's error code (``TopicAlreadyExists``, ``GroupIdNotFound``, ...), or
:class:`~kgroup.client.types.ClientTimeout` when the call did not finish in its time.
``list_topics`` and ``watermarks`` answer directly, as confluent-kafka's ``list_topics`` does;
``describe_acls`` answers with one future, as confluent-kafka's.

Where each request goes, as Java's KafkaAdminClient sends it: topic creation, deletion and new
partitions to the controller (Metadata's ``controller_id``); a group's requests to its
coordinator (FindCoordinator, retried on NOT_COORDINATOR), those about several groups as one
request per coordinator (one FindCoordinator for them all); ListOffsets to each partition's
leader; ListGroups to every broker; a broker's configs to that broker, a topic's to any; the
ACL requests to any broker. Transactions as Java's Admin (KIP-664): DescribeTransactions to
each transactional id's transaction coordinator (FindCoordinator key type 1, one request per
coordinator), ListTransactions to every broker, DescribeProducers and the WriteTxnMarkers of
``abort_transaction`` to each partition's leader.

The work runs on the client's own event loop thread (:mod:`.runtime`); the AdminClient is
thread-safe. ``close()`` (or ``with AdminClient(...) as admin``) stops the thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import enum
import functools
import hashlib
import os
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kgroup.acl import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
)
from kgroup.assignors.consumer_protocol import decode_assignment
from kgroup.client.cluster import (
    Cluster,
    backoff,
    offset_fetch_code,
    partitions_coordinator_code,
    retrying,
    retrying_each,
)
from kgroup.client.config import ClientConfig
from kgroup.client.connection import Connection
from kgroup.client.metadata import (
    BrokerMetadata,
    ClusterMetadata,
    TopicMetadata,
    cluster_metadata,
    error_from_code,
)
from kgroup.client.offsets import (
    MAX_TIMESTAMP,
    list_offsets_at,
    offset_fetch_body,
    offset_fetch_topics,
)
from kgroup.client.runtime import Runtime
from kgroup.client.types import OFFSET_INVALID, ClientClosed, ClientTimeout, TopicPartition
from kgroup.errors import (
    BrokerNotAvailable,
    CoordinatorLoadInProgress,
    CoordinatorNotAvailable,
    DecodeError,
    GroupIdNotFound,
    InvalidArgument,
    KafkaError,
    LeaderNotAvailable,
    NetworkException,
    NotController,
    NotCoordinator,
    NotLeaderOrFollower,
    ReplicaNotAvailable,
    ThrottlingQuotaExceeded,
    UnknownTopicOrPartition,
    UnsupportedVersion,
    raise_for_code,
)
from kgroup.protocol import ApiKey

__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "AdminClient",
    "AlterConfigOpType",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSource",
    "ConsumerGroupDescription",
    "ConsumerGroupListing",
    "ConsumerGroupType",
    "ListConsumerGroupsResult",
    "ListOffsetsResultInfo",
    "LogDirDescription",
    "MemberAssignment",
    "MemberDescription",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "ProducerState",
    "ReplicaInfo",
    "ResourcePatternType",
    "ResourceType",
    "ScramCredentialInfo",
    "ScramMechanism",
    "TransactionDescription",
    "TransactionListing",
    "UserScramCredentialAlteration",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
    "UserScramCredentialsDescription",
]

K = TypeVar("K")
T = TypeVar("T")

# _CLASSIC: a group ConsumerGroupDescribe leaves to DescribeGroups; _LEFT_OUT: one missing from
# an answer (sent again, as Java's AdminApiDriver retries a key neither completed nor failed).
_CLASSIC = object()
_LEFT_OUT = object()

# The errors of a partition whose leader moved, or that a broker does not know yet: sent again
# after fresh metadata (Java's PartitionLeaderStrategy, and AbortTransactionHandler's list).
_LEADER_MOVED = (
    NotLeaderOrFollower,
    UnknownTopicOrPartition,
    LeaderNotAvailable,
    ReplicaNotAvailable,
    BrokerNotAvailable,
)


# -- the values passed in and out -----------------------------------------------------------


class NewTopic:
    """NewTopic is a topic to create: ``num_partitions`` and ``replication_factor`` -1 take the
    broker's defaults (num.partitions, default.replication.factor; CreateTopics v4+);
    ``replica_assignment`` lists each partition's broker ids instead; ``config`` is the topic's
    configs by Kafka's names."""

    def __init__(
        self,
        topic: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        replica_assignment: list[list[int]] | None = None,
        config: Mapping[str, str] | None = None,
    ) -> None:
        self.topic = topic
        self.num_partitions = num_partitions
        self.replication_factor = replication_factor
        self.replica_assignment = replica_assignment
        self.config = {str(k): str(v) for k, v in (config or {}).items()}

    def __repr__(self) -> str:
        return f"NewTopic({self.topic!r}, {self.num_partitions}, {self.replication_factor})"


class NewPartitions:
    """NewPartitions raises ``topic``'s partition count to ``new_total_count``."""

    def __init__(
        self, topic: str, new_total_count: int, replica_assignment: list[list[int]] | None = None
    ) -> None:
        self.topic = topic
        self.new_total_count = new_total_count
        self.replica_assignment = replica_assignment

    def __repr__(self) -> str:
        return f"NewPartitions({self.topic!r}, {self.new_total_count})"


class ResourceType(enum.IntEnum):
    """ResourceType: Kafka's resource types, as confluent-kafka's: ``ConfigResource.Type`` on
    the wire for configs; ACLs take the same codes (``kgroup.acl.ResourceType``, where BROKER is
    Kafka's CLUSTER)."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    BROKER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7
    BROKER_LOGGER = 8


class ConfigSource(enum.IntEnum):
    """ConfigSource: where a config's value comes from (DescribeConfigs v1+)."""

    UNKNOWN_CONFIG = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class AlterConfigOpType(enum.IntEnum):
    """AlterConfigOpType: what IncrementalAlterConfigs does with one config."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class ConfigEntry:
    """ConfigEntry is one config of a resource: as described (``value``, ``source``,
    ``is_read_only``, ``is_default``, ``is_sensitive``, ``synonyms``), or as one change of
    :meth:`AdminClient.incremental_alter_configs` (``incremental_operation``)."""

    def __init__(
        self,
        name: str,
        value: str | None,
        source: ConfigSource = ConfigSource.UNKNOWN_CONFIG,
        is_read_only: bool = False,
        is_default: bool = False,
        is_sensitive: bool = False,
        is_synonym: bool = False,
        synonyms: list[ConfigEntry] | None = None,
        incremental_operation: AlterConfigOpType | None = None,
    ) -> None:
        self.name, self.value, self.source = name, value, source
        self.is_read_only, self.is_default = is_read_only, is_default
        self.is_sensitive, self.is_synonym = is_sensitive, is_synonym
        self.synonyms = synonyms or []
        self.incremental_operation = incremental_operation

    def __repr__(self) -> str:
        return f"ConfigEntry({self.name}={self.value!r}, {self.source.name})"

    def __str__(self) -> str:
        return f"{self.name}={self.value}"


class ConfigResource:
    """ConfigResource is a topic's or a broker's configs: ``restype`` (a
    :class:`ResourceType`, its value, or its name: ``"topic"``, ``"broker"``) and ``name`` (a
    broker's is its id). ``set_config`` holds the values :meth:`AdminClient.alter_configs`
    sets; ``incremental_configs`` the :class:`ConfigEntry` changes of
    :meth:`AdminClient.incremental_alter_configs`. Equal and hashed by type and name."""

    Type = ResourceType

    def __init__(
        self,
        restype: ResourceType | int | str,
        name: str,
        set_config: Mapping[str, str] | None = None,
        incremental_configs: list[ConfigEntry] | None = None,
    ) -> None:
        if isinstance(restype, str):
            try:
                restype = ResourceType[restype.upper()]
            except KeyError:
                raise InvalidArgument(f"unknown resource type {restype!r}") from None
        self.restype = ResourceType(restype)
        self.name = str(name)
        self.set_config_dict: dict[str, str] = dict(set_config or {})
        self.incremental_configs: list[ConfigEntry] = list(incremental_configs or [])

    def set_config(self, name: str, value: str) -> None:
        """Set ``name`` to ``value`` in an :meth:`AdminClient.alter_configs` call."""
        self.set_config_dict[name] = str(value)

    def add_incremental_config(self, entry: ConfigEntry) -> None:
        """Add one change to an :meth:`AdminClient.incremental_alter_configs` call."""
        self.incremental_configs.append(entry)

    def _key(self) -> tuple[int, str]:
        return (int(self.restype), self.name)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ConfigResource) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ConfigResource({self.restype.name}, {self.name!r})"


class OffsetSpec:
    """OffsetSpec is what :meth:`AdminClient.list_offsets` looks for in a partition: the
    earliest offset, the latest, the one with the largest timestamp, or the first whose
    timestamp is at least ``for_timestamp(ms)``. ``timestamp`` is the value ListOffsets sends
    (-2 earliest, -1 latest, -3 max timestamp)."""

    EARLIEST = -2
    LATEST = -1
    MAX_TIMESTAMP = MAX_TIMESTAMP

    def __init__(self, timestamp: int) -> None:
        self.timestamp = int(timestamp)

    @classmethod
    def earliest(cls) -> OffsetSpec:
        return cls(cls.EARLIEST)

    @classmethod
    def latest(cls) -> OffsetSpec:
        return cls(cls.LATEST)

    @classmethod
    def max_timestamp(cls) -> OffsetSpec:
        return cls(cls.MAX_TIMESTAMP)

    @classmethod
    def for_timestamp(cls, timestamp_ms: int) -> OffsetSpec:
        return cls(timestamp_ms)

    @classmethod
    def of(cls, spec: OffsetSpec | int | str) -> OffsetSpec:
        """``spec`` as an OffsetSpec: one already, ``"earliest"`` / ``"latest"`` /
        ``"max_timestamp"``, or an int (a timestamp in ms, or -2 / -1 / -3)."""
        if isinstance(spec, OffsetSpec):
            return spec
        if isinstance(spec, str):
            named = {"earliest": cls.EARLIEST, "latest": cls.LATEST}
            named["max_timestamp"] = cls.MAX_TIMESTAMP
            if spec.lower() not in named:
                raise InvalidArgument(f"unknown offset spec {spec!r}")
            return cls(named[spec.lower()])
        if isinstance(spec, bool) or not isinstance(spec, int):
            raise InvalidArgument(f"an offset spec is an OffsetSpec, a name or an int: {spec!r}")
        return cls(spec)

    def __repr__(self) -> str:
        return f"OffsetSpec({self.timestamp})"


class ListOffsetsResultInfo:
    """ListOffsetsResultInfo is a partition's answer to ListOffsets: ``offset`` (-1 when no
    record has a timestamp at or after the one asked for), ``timestamp``, ``leader_epoch``."""

    __slots__ = ("leader_epoch", "offset", "timestamp")

    def __init__(self, offset: int, timestamp: int = -1, leader_epoch: int | None = None) -> None:
        self.offset, self.timestamp, self.leader_epoch = offset, timestamp, leader_epoch

    def __repr__(self) -> str:
        return f"ListOffsetsResultInfo(offset={self.offset}, timestamp={self.timestamp})"


class ReplicaInfo:
    """ReplicaInfo is a partition's replica in a log directory (Java's ``ReplicaInfo``):
    ``size`` in bytes, ``offset_lag`` (0 for a current replica) and ``is_future`` (a replica
    being moved there)."""

    __slots__ = ("is_future", "offset_lag", "size")

    def __init__(self, size: int, offset_lag: int = 0, is_future: bool = False) -> None:
        self.size, self.offset_lag, self.is_future = size, offset_lag, is_future

    def __repr__(self) -> str:
        return f"ReplicaInfo(size={self.size}, offset_lag={self.offset_lag})"


class LogDirDescription:
    """LogDirDescription is one log directory of a broker (Java's ``LogDirDescription``):
    ``path``; ``error``, the :class:`~kgroup.errors.KafkaError` the broker reports for it
    (``KafkaStorageError`` for a directory in error) or None; ``replicas`` by
    :class:`~kgroup.client.types.TopicPartition`; ``total_bytes`` and ``usable_bytes`` of its
    filesystem (None where the broker does not say: DescribeLogDirs before v4)."""

    __slots__ = ("error", "path", "replicas", "total_bytes", "usable_bytes")

    def __init__(
        self,
        path: str,
        error: KafkaError | None,
        replicas: dict[TopicPartition, ReplicaInfo],
        total_bytes: int | None = None,
        usable_bytes: int | None = None,
    ) -> None:
        self.path, self.error, self.replicas = path, error, replicas
        self.total_bytes, self.usable_bytes = total_bytes, usable_bytes

    def __repr__(self) -> str:
        return (
            f"LogDirDescription(path={self.path!r}, error={self.error!r}, "
            f"{len(self.replicas)} replicas, usable_bytes={self.usable_bytes})"
        )


class ConsumerGroupType(enum.StrEnum):
    """ConsumerGroupType is a group's type (KIP-848): ``consumer`` for a group of the consumer
    protocol (ConsumerGroupHeartbeat), ``classic`` for one of JoinGroup/SyncGroup (and a
    simple group of offsets only). A ``str``: ``listing.type == "consumer"`` holds. The value is
    the broker's (ListGroups' ``GroupType``); :attr:`display` is Kafka's name (Java's
    ``GroupType.toString()``: ``Consumer``, ``Classic``)."""

    UNKNOWN = "unknown"
    CONSUMER = "consumer"
    CLASSIC = "classic"

    @classmethod
    def of(cls, value: Any) -> ConsumerGroupType:
        """The type that ``value`` names, ignoring case: a string (``"consumer"``,
        ``"Classic"``) or an enum with a ``name`` (confluent-kafka's ``ConsumerGroupType``);
        UNKNOWN for any other name."""
        name = value if isinstance(value, str) else getattr(value, "name", str(value))
        try:
            return cls(name.strip().lower())
        except ValueError:
            return cls.UNKNOWN

    @property
    def display(self) -> str:
        return self.value.capitalize()


#: Kafka's names of group states (Java's ``GroupState.toString()``), by lower-case name: the
#: classic protocol's and the consumer protocol's (``Assigning``, ``Reconciling``).
GROUP_STATES = {
    s.lower(): s
    for s in (
        "Unknown",
        "PreparingRebalance",
        "CompletingRebalance",
        "Stable",
        "Dead",
        "Empty",
        "Assigning",
        "Reconciling",
    )
}


def _state(name: str) -> str:
    """Kafka's name of the state a broker names, ignoring case (Java's ``GroupState.parse``,
    ``Unknown`` for a name it does not know)."""
    return GROUP_STATES.get(name.strip().lower(), "Unknown")


class ConsumerGroupListing:
    """ConsumerGroupListing is one group of :meth:`AdminClient.list_consumer_groups`:
    ``group_id``, ``state`` (Kafka's name: ``Stable``, ``Empty``, ``Reconciling``, ...; None
    before ListGroups v4), ``type`` (a :class:`ConsumerGroupType`; None before v5),
    ``protocol_type`` and ``is_simple_consumer_group`` (no protocol type: offsets committed
    without a member)."""

    def __init__(
        self,
        group_id: str,
        protocol_type: str,
        state: str | None,
        type: ConsumerGroupType | str | None,
    ) -> None:
        self.group_id, self.protocol_type = group_id, protocol_type
        self.state = None if state is None else _state(state)
        self.type = None if type is None else ConsumerGroupType.of(type)
        self.is_simple_consumer_group = protocol_type == ""

    def __repr__(self) -> str:
        return f"ConsumerGroupListing({self.group_id!r}, {self.state}, {self.type})"


class ListConsumerGroupsResult:
    """ListConsumerGroupsResult: ``valid`` listings (of every broker that answered) and the
    ``errors`` of those that did not."""

    def __init__(self, valid: list[ConsumerGroupListing], errors: list[KafkaError]) -> None:
        self.valid, self.errors = valid, errors


class MemberAssignment(list[TopicPartition]):
    """MemberAssignment is a member's partitions: a list of :class:`TopicPartition`, and its
    ``topic_partitions`` (the list itself) as confluent-kafka names them."""

    @property
    def topic_partitions(self) -> list[TopicPartition]:
        return self


class MemberDescription:
    """MemberDescription is one member of a described group: ``member_id`` (``consumer_id``
    too, Java's name), ``client_id``, ``host``, ``group_instance_id`` and ``assignment`` (a
    :class:`MemberAssignment`: in a classic group the partitions its ConsumerProtocol
    assignment names, empty for other protocols; in a consumer group the partitions it owns).

    Of consumer groups only (None in a classic group, as Java's ``Optional.empty()``):
    ``target_assignment`` (what the coordinator means it to own once reconciled),
    ``member_epoch``, ``rack_id`` (None too when the member named no rack) and ``upgraded``
    (True for a member of the consumer protocol, False for a classic member in a consumer group;
    None when the broker does not say: ConsumerGroupDescribe v0)."""

    def __init__(
        self,
        member_id: str,
        client_id: str,
        host: str,
        group_instance_id: str | None,
        assignment: Iterable[TopicPartition],
        target_assignment: Iterable[TopicPartition] | None = None,
        member_epoch: int | None = None,
        rack_id: str | None = None,
        upgraded: bool | None = None,
    ) -> None:
        self.member_id, self.client_id, self.host = member_id, client_id, host
        self.group_instance_id = group_instance_id
        self.assignment = MemberAssignment(assignment)
        self.target_assignment = (
            None if target_assignment is None else MemberAssignment(target_assignment)
        )
        self.member_epoch, self.rack_id, self.upgraded = member_epoch, rack_id, upgraded

    @property
    def consumer_id(self) -> str:
        return self.member_id

    def __repr__(self) -> str:
        return f"MemberDescription({self.member_id!r}, {len(self.assignment)} partitions)"


class ConsumerGroupDescription:
    """ConsumerGroupDescription is one described group: ``group_id``, ``type`` (a
    :class:`ConsumerGroupType`), ``state`` (Kafka's name; ``Dead`` for a group the coordinator
    does not know), ``protocol_type``, ``protocol`` (also ``partition_assignor``: the classic
    members' assignor, or the consumer group's server-side assignor), ``members`` and
    ``coordinator`` (a :class:`BrokerMetadata`). Of consumer groups only (None for classic
    ones): ``group_epoch`` and ``target_assignment_epoch``, Java's ``groupEpoch()`` and
    ``targetAssignmentEpoch()``."""

    def __init__(
        self,
        group_id: str,
        state: str,
        protocol_type: str,
        protocol: str,
        members: list[MemberDescription],
        coordinator: BrokerMetadata,
        type: ConsumerGroupType = ConsumerGroupType.CLASSIC,
        group_epoch: int | None = None,
        target_assignment_epoch: int | None = None,
    ) -> None:
        self.group_id, self.state = group_id, _state(state)
        self.protocol_type, self.protocol = protocol_type, protocol
        self.members, self.coordinator = members, coordinator
        self.type = type
        self.group_epoch, self.target_assignment_epoch = group_epoch, target_assignment_epoch
        self.is_simple_consumer_group = type is ConsumerGroupType.CLASSIC and protocol_type == ""

    @property
    def partition_assignor(self) -> str:
        return self.protocol

    def __repr__(self) -> str:
        return (
            f"ConsumerGroupDescription({self.group_id!r}, {self.type}, {self.state}, "
            f"{len(self.members)} members)"
        )


#: Kafka's names of transaction states (Java's ``TransactionState.toString()``), as the
#: coordinator names them in ListTransactions and DescribeTransactions answers.
TRANSACTION_STATES = (
    "Ongoing",
    "PrepareAbort",
    "PrepareCommit",
    "CompleteAbort",
    "CompleteCommit",
    "Empty",
    "PrepareEpochFence",
    "Unknown",
)


def _transaction_state(name: str) -> str:
    """Kafka's name of the state a coordinator names (Java's ``TransactionState.parse``: the
    exact name, ``Unknown`` for one it does not know)."""
    return name if name in TRANSACTION_STATES else "Unknown"


@dataclass(frozen=True)
class TransactionListing:
    """TransactionListing is one transactional id of :meth:`AdminClient.list_transactions`:
    ``transactional_id``, ``producer_id``, ``state`` (Kafka's name: ``Ongoing``,
    ``CompleteCommit``, ...) and ``coordinator_id``, the broker that listed it (Java's
    ``allByBrokerId()`` key)."""

    transactional_id: str
    producer_id: int
    state: str
    coordinator_id: int


@dataclass(frozen=True)
class TransactionDescription:
    """TransactionDescription is a transactional id as its coordinator holds it (Java's
    ``TransactionDescription``): ``coordinator_id``, ``state`` (Kafka's name),
    ``producer_id``, ``producer_epoch``, ``transaction_timeout_ms``,
    ``transaction_start_time_ms`` (None when no transaction is open) and
    ``topic_partitions``, the partitions of the open transaction (those whose marker is not
    yet written while it commits or aborts), sorted."""

    coordinator_id: int
    state: str
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_start_time_ms: int | None
    topic_partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class ProducerState:
    """ProducerState is one active producer of a partition, as its leader holds it (Java's
    ``ProducerState``, of :meth:`AdminClient.describe_producers`): ``producer_id``,
    ``producer_epoch``, ``last_sequence``, ``last_timestamp`` (ms), ``coordinator_epoch``
    (of its last transaction marker; None when none was written) and
    ``current_transaction_start_offset`` (the first offset of its open transaction in the
    partition; None when it has none open)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int | None
    current_transaction_start_offset: int | None


def _tp(x: TopicPartition | tuple[str, int]) -> TopicPartition:
    if isinstance(x, TopicPartition):
        return x
    topic, partition = x
    return TopicPartition(topic, partition)


def _by_topic(tps: Iterable[TopicPartition]) -> dict[str, list[TopicPartition]]:
    out: dict[str, list[TopicPartition]] = {}
    for tp in tps:
        out.setdefault(tp.topic, []).append(tp)
    return out


def _config_errors(resp: Any) -> dict[ConfigResource, KafkaError | None]:
    """Each resource's error in an AlterConfigs / IncrementalAlterConfigs answer."""
    return {
        ConfigResource(r["resource_type"], r["resource_name"]): error_from_code(
            r["error_code"], r.get("error_message")
        )
        for r in resp["responses"]
    }


@dataclass(frozen=True)
class ClientQuotaEntity:
    """ClientQuotaEntity is who a client quota applies to: entity types (``user``,
    ``client-id``, ``ip``) and their names, None for a type's default (Java's
    ``ClientQuotaEntity``). Equal entities compare equal whatever the order given."""

    entries: tuple[tuple[str, str | None], ...]

    def __init__(self, entries: Mapping[str, str | None]) -> None:
        object.__setattr__(self, "entries", tuple(sorted(entries.items())))

    def as_dict(self) -> dict[str, str | None]:
        return dict(self.entries)


@dataclass(frozen=True)
class ClientQuotaFilterComponent:
    """ClientQuotaFilterComponent matches one entity type: ``match`` a name, or None with
    ``default=True`` for the type's default, or None for any name given (Java's
    ``ofEntity``, ``ofDefaultEntity``, ``ofEntityType``)."""

    entity_type: str
    match: str | None = None
    default: bool = False

    @property
    def match_type(self) -> int:
        return 0 if self.match is not None else 1 if self.default else 2


@dataclass(frozen=True)
class ClientQuotaAlteration:
    """ClientQuotaAlteration sets (a float) or removes (None) quota keys of one entity:
    ``ops`` {key: value or None}."""

    entity: ClientQuotaEntity
    ops: Mapping[str, float | None]


class ScramMechanism(enum.IntEnum):
    """ScramMechanism: Kafka's SCRAM mechanisms, by their type ids on the wire."""

    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def mechanism_name(self) -> str:
        """The SASL name: ``SCRAM-SHA-256``."""
        return self.name.replace("_", "-")


@dataclass(frozen=True)
class ScramCredentialInfo:
    """ScramCredentialInfo is one SCRAM credential of a user: its mechanism and iterations."""

    mechanism: ScramMechanism
    iterations: int


@dataclass(frozen=True)
class UserScramCredentialsDescription:
    """UserScramCredentialsDescription is a user's SCRAM credentials
    (:meth:`AdminClient.describe_user_scram_credentials`)."""

    user: str
    scram_credential_infos: list[ScramCredentialInfo]


class UserScramCredentialAlteration:
    """UserScramCredentialAlteration is one change of
    :meth:`AdminClient.alter_user_scram_credentials`."""

    def __init__(self, user: str) -> None:
        self.user = user


class UserScramCredentialUpsertion(UserScramCredentialAlteration):
    """UserScramCredentialUpsertion sets ``user``'s credential of ``scram_credential_info``'s
    mechanism from ``password`` (bytes or str) and ``salt`` (random when None); only the salted
    password is sent."""

    def __init__(
        self,
        user: str,
        scram_credential_info: ScramCredentialInfo,
        password: bytes | str,
        salt: bytes | None = None,
    ) -> None:
        super().__init__(user)
        self.scram_credential_info = scram_credential_info
        self.password = password.encode() if isinstance(password, str) else bytes(password)
        self.salt = salt


class UserScramCredentialDeletion(UserScramCredentialAlteration):
    """UserScramCredentialDeletion removes ``user``'s credential of ``mechanism``."""

    def __init__(self, user: str, mechanism: ScramMechanism) -> None:
        super().__init__(user)
        self.mechanism = mechanism


# -- the client ----------------------------------------------------------------------------


def _filter_body(f: AclBindingFilter) -> dict[str, Any]:
    """A DescribeAcls request's body, or a DeleteAcls filter, for ``f``."""
    return {
        "resource_type_filter": int(f.restype),
        "resource_name_filter": f.name,
        "pattern_type_filter": int(f.resource_pattern_type),
        "principal_filter": f.principal,
        "host_filter": f.host,
        "operation": int(f.operation),
        "permission_type": int(f.permission_type),
    }


def _operation_ms(operation_timeout: float | None, request_timeout: float) -> int:
    """The ``timeout_ms`` of a topic operation: ``operation_timeout`` seconds when given, else
    the request's timeout (Java's Admin sends the time left before its own deadline)."""
    seconds = request_timeout if operation_timeout is None else operation_timeout
    return int(seconds * 1000)


class AdminClient:
    """AdminClient manages topics, configs, consumer groups and their offsets, with
    confluent-kafka's API and Kafka's config keys (``{"bootstrap.servers": ...}``; unknown
    keys raise InvalidArgument). Thread-safe."""

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        self._config = ClientConfig("admin", config, **kwargs)
        self._runtime = Runtime("admin")
        self._cluster = Cluster(self._config)

    # -- plumbing ----------------------------------------------------------------------------

    def close(self, timeout: float = 10.0) -> None:
        """Close the connections and stop the client's thread. Idempotent."""
        if self._runtime.closed:
            return
        try:
            self._runtime.call(self._cluster.close(), timeout)
        except Exception:  # closing anyway
            pass
        self._runtime.close(timeout)

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _timeout(self, request_timeout: float | None) -> float:
        if request_timeout is None or request_timeout < 0:
            return self._config.ms("default.api.timeout.ms")
        return float(request_timeout)

    def _fan_out(
        self,
        keys: Iterable[K],
        work: Callable[[], Awaitable[Mapping[K, Any]]],
        timeout: float,
    ) -> dict[K, concurrent.futures.Future[Any]]:
        """One future per key, completed from the mapping ``work`` returns: a value is the
        key's result, an exception its error; an exception of ``work`` fails every key."""
        futures: dict[K, concurrent.futures.Future[Any]] = {
            k: concurrent.futures.Future() for k in keys
        }
        for f in futures.values():
            f.set_running_or_notify_cancel()

        def fail(e: BaseException) -> None:
            for f in futures.values():
                if not f.done():
                    f.set_exception(e)

        async def run() -> None:
            try:
                results = await asyncio.wait_for(work(), timeout)
            except TimeoutError:
                fail(ClientTimeout(f"the admin call did not finish in {timeout:g} s"))
                return
            except asyncio.CancelledError:
                fail(ClientClosed("the admin client was closed"))
                raise
            except Exception as e:
                fail(e)
                return
            for k, f in futures.items():
                if f.done():
                    continue
                r = results.get(k, None)
                if isinstance(r, BaseException):
                    f.set_exception(r)
                else:
                    f.set_result(r)

        if not futures:
            return futures
        try:
            self._runtime.submit(run())
        except RuntimeError:
            fail(ClientClosed("the admin client is closed"))
        return futures

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        try:
            return self._runtime.call(asyncio.wait_for(coro, timeout))
        except TimeoutError:
            raise ClientTimeout(f"the admin call did not finish in {timeout:g} s") from None

    async def _controller(self) -> Connection:
        """The connection to the controller, from fresh metadata (any broker when the cluster
        names none, as KRaft clusters may)."""
        await self._cluster.refresh([])
        node = self._cluster.controller_id
        if node >= 0 and node in self._cluster.brokers:
            return await self._cluster.connection(node)
        return await self._cluster.any_connection()

    async def _to_controller(self, fn: Callable[[Connection], Awaitable[T]], timeout: float) -> T:
        """``fn(controller)``, again with a newly found controller while it raises
        NOT_CONTROLLER (the controller moved)."""

        async def once() -> T:
            return await fn(await self._controller())

        return await retrying(
            once,
            timeout=timeout,
            base_ms=self._config["retry.backoff.ms"],
            max_ms=self._config["retry.backoff.max.ms"],
        )

    async def _quota_retrying(
        self,
        send: Callable[[list[str], Connection], Awaitable[tuple[dict[str, Any], int]]],
        names: list[str],
        retry: bool,
        timeout: float,
    ) -> dict[str, Any]:
        """Each topic's result of ``send(topics, controller)`` (its results by name and the
        answer's throttle_time_ms), as Java's Admin treats THROTTLING_QUOTA_EXCEEDED (KIP-599):
        with ``retry`` the refused topics are sent again once the throttle time is over, while
        that is before the deadline; the others, and all without ``retry``, fail with
        :class:`ThrottlingQuotaExceeded` carrying the throttle time left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        results: dict[str, Any] = {}
        pending = names
        while True:
            left = deadline - loop.time()
            answers, throttle_ms = await self._to_controller(functools.partial(send, pending), left)
            answered = loop.time()
            again = []
            for name, result in answers.items():
                if isinstance(result, ThrottlingQuotaExceeded):
                    result.throttle_time_ms = throttle_ms
                    again.append(name)
                results[name] = result
            # Java's Admin sends them again once the broker's throttle is over (its network
            # client waits that long before sending to the node, KIP-219); past the deadline
            # they fail with the quota error. kgroup fails them as soon as it knows the next
            # try would come too late, instead of at the deadline.
            if not retry or not again or answered + throttle_ms / 1000 >= deadline:
                return results
            await asyncio.sleep(throttle_ms / 1000)
            pending = again

    # -- topics ------------------------------------------------------------------------------

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        """The cluster's brokers and topics (only ``topic`` when given; a topic that does not
        exist is listed with its error), as confluent-kafka's ``list_topics``."""
        t = self._timeout(timeout)

        async def go() -> ClusterMetadata:
            names = None if topic is None else [topic]
            await retrying(lambda: self._cluster.refresh(names), timeout=t)
            return cluster_metadata(self._cluster, names)

        return self._call(go(), t)

    def create_topics(
        self,
        new_topics: list[NewTopic],
        operation_timeout: float | None = None,
        request_timeout: float | None = None,
        validate_only: bool = False,
        retry_on_quota_violation: bool = True,
    ) -> dict[str, concurrent.futures.Future[None]]:
        """Create ``new_topics`` (CreateTopics to the controller): {topic: future of None}.
        ``operation_timeout`` (s) is how long the controller waits for the topics to exist:
        by default the request's own timeout, as Java's Admin sends (Apache Kafka's KRaft
        controller answers a 0 with REQUEST_TIMED_OUT and creates nothing). A topic refused
        by the client's ``controller_mutation_rate`` (THROTTLING_QUOTA_EXCEEDED) is sent
        again after the throttle time until the timeout, unless ``retry_on_quota_violation``
        is False (Java's ``CreateTopicsOptions.retryOnQuotaViolation``); it then fails with
        :class:`~kgroup.errors.ThrottlingQuotaExceeded` and its ``throttle_time_ms``."""
        timeout = self._timeout(request_timeout)

        async def send(names: list[str], conn: Connection) -> tuple[dict[str, Any], int]:
            wanted = set(names)
            v = conn.version(ApiKey.CREATE_TOPICS)
            body: dict[str, Any] = {
                "topics": [
                    {
                        "name": t.topic,
                        "num_partitions": t.num_partitions,
                        "replication_factor": t.replication_factor,
                        "assignments": [
                            {"partition_index": i, "broker_ids": list(ids)}
                            for i, ids in enumerate(t.replica_assignment or [])
                        ],
                        "configs": [{"name": k, "value": v} for k, v in t.config.items()],
                    }
                    for t in new_topics
                    if t.topic in wanted
                ],
                "timeout_ms": _operation_ms(operation_timeout, timeout),
            }
            if v >= 1:
                body["validate_only"] = validate_only
            elif validate_only:
                raise UnsupportedVersion("validate_only needs CreateTopics v1+")
            resp = await conn.request(ApiKey.CREATE_TOPICS, body, version=v)
            if any(t["error_code"] == NotController.code for t in resp["topics"]):
                raise NotController()
            results = {
                t["name"]: error_from_code(t["error_code"], t.get("error_message"))
                for t in resp["topics"]
            }
            return results, resp.get("throttle_time_ms", 0)

        names = [t.topic for t in new_topics]
        return self._fan_out(
            names,
            lambda: self._quota_retrying(send, names, retry_on_quota_violation, timeout),
            timeout,
        )

    def delete_topics(
        self,
        topics: list[str],
        operation_timeout: float | None = None,
        request_timeout: float | None = None,
        retry_on_quota_violation: bool = True,
    ) -> dict[str, concurrent.futures.Future[None]]:
        """Delete ``topics`` (DeleteTopics to the controller): {topic: future of None}. A
        topic refused by the client's ``controller_mutation_rate`` is sent again after the
        throttle time, as :meth:`create_topics` does."""
        timeout = self._timeout(request_timeout)

        async def send(names: list[str], conn: Connection) -> tuple[dict[str, Any], int]:
            v = conn.version(ApiKey.DELETE_TOPICS)
            body: dict[str, Any] = {"timeout_ms": _operation_ms(operation_timeout, timeout)}
            if v >= 6:
                body["topics"] = [{"name": t} for t in names]
            else:
                body["topic_names"] = list(names)
            resp = await conn.request(ApiKey.DELETE_TOPICS, body, version=v)
            if any(r["error_code"] == NotController.code for r in resp["responses"]):
                raise NotController()
            results = {
                r["name"]: error_from_code(r["error_code"], r.get("error_message"))
                for r in resp["responses"]
            }
            return results, resp.get("throttle_time_ms", 0)

        return self._fan_out(
            topics,
            lambda: self._quota_retrying(send, list(topics), retry_on_quota_violation, timeout),
            timeout,
        )

    def describe_topics(
        self, topics: list[str], request_timeout: float | None = None
    ) -> dict[str, concurrent.futures.Future[TopicMetadata]]:
        """Each topic's :class:`TopicMetadata` (Metadata): {topic: future}; a topic that does
        not exist fails with UnknownTopicOrPartition."""
        timeout = self._timeout(request_timeout)

        async def work() -> dict[str, Any]:
            await self._cluster.refresh(topics)
            md = cluster_metadata(self._cluster, topics)
            out: dict[str, Any] = {}
            for t in topics:
                tm = md.topics.get(t)
                if tm is None:
                    out[t] = UnknownTopicOrPartition(t)
                elif tm.error is not None:
                    out[t] = tm.error
                else:
                    out[t] = tm
            return out

        return self._fan_out(topics, work, timeout)

    def create_partitions(
        self,
        new_partitions: list[NewPartitions],
        operation_timeout: float | None = None,
        request_timeout: float | None = None,
        validate_only: bool = False,
        retry_on_quota_violation: bool = True,
    ) -> dict[str, concurrent.futures.Future[None]]:
        """Raise topics' partition counts (CreatePartitions to the controller): {topic:
        future of None}. A topic refused by the client's ``controller_mutation_rate`` is sent
        again after the throttle time, as :meth:`create_topics` does."""
        timeout = self._timeout(request_timeout)

        async def send(names: list[str], conn: Connection) -> tuple[dict[str, Any], int]:
            wanted = set(names)
            body = {
                "topics": [
                    {
                        "name": p.topic,
                        "count": p.new_total_count,
                        "assignments": None
                        if p.replica_assignment is None
                        else [{"broker_ids": list(ids)} for ids in p.replica_assignment],
                    }
                    for p in new_partitions
                    if p.topic in wanted
                ],
                "timeout_ms": _operation_ms(operation_timeout, timeout),
                "validate_only": validate_only,
            }
            resp = await conn.request(ApiKey.CREATE_PARTITIONS, body)
            if any(r["error_code"] == NotController.code for r in resp["results"]):
                raise NotController()
            results = {
                r["name"]: error_from_code(r["error_code"], r.get("error_message"))
                for r in resp["results"]
            }
            return results, resp.get("throttle_time_ms", 0)

        names = [p.topic for p in new_partitions]
        return self._fan_out(
            names,
            lambda: self._quota_retrying(send, names, retry_on_quota_violation, timeout),
            timeout,
        )

    # -- configs -----------------------------------------------------------------------------

    async def _per_node(
        self,
        resources: list[ConfigResource],
        send: Callable[[Connection, list[ConfigResource]], Awaitable[dict[ConfigResource, Any]]],
    ) -> dict[ConfigResource, Any]:
        """Send ``resources`` in one request per broker: a broker's own configs to that broker,
        the rest to any."""
        groups: dict[int | None, list[ConfigResource]] = {}
        for r in resources:
            node = None
            if r.restype in (ResourceType.BROKER, ResourceType.BROKER_LOGGER) and r.name:
                node = int(r.name)
            groups.setdefault(node, []).append(r)
        if any(node is not None for node in groups):
            await self._cluster.refresh([])
        out: dict[ConfigResource, Any] = {}
        for node, rs in groups.items():
            conn = (
                await self._cluster.any_connection()
                if node is None
                else await self._cluster.connection(node)
            )
            out.update(await send(conn, rs))
        return out

    def describe_configs(
        self, resources: list[ConfigResource], request_timeout: float | None = None
    ) -> dict[ConfigResource, concurrent.futures.Future[dict[str, ConfigEntry]]]:
        """Each resource's configs (DescribeConfigs): {resource: future of {name:
        :class:`ConfigEntry`}}."""
        timeout = self._timeout(request_timeout)

        async def send(conn: Connection, rs: list[ConfigResource]) -> dict[ConfigResource, Any]:
            v = conn.version(ApiKey.DESCRIBE_CONFIGS)
            body: dict[str, Any] = {
                "resources": [
                    {
                        "resource_type": int(r.restype),
                        "resource_name": r.name,
                        "configuration_keys": None,
                    }
                    for r in rs
                ]
            }
            if v >= 1:
                body["include_synonyms"] = False
            resp = await conn.request(ApiKey.DESCRIBE_CONFIGS, body, version=v)
            out: dict[ConfigResource, Any] = {}
            for res in resp["results"]:
                key = ConfigResource(res["resource_type"], res["resource_name"])
                if res["error_code"]:
                    out[key] = error_from_code(res["error_code"], res.get("error_message"))
                    continue
                entries: dict[str, ConfigEntry] = {}
                for c in res["configs"]:
                    if v >= 1:
                        source = ConfigSource(c["config_source"])
                        is_default = source == ConfigSource.DEFAULT_CONFIG
                    else:
                        is_default = c["is_default"]
                        source = (
                            ConfigSource.DEFAULT_CONFIG
                            if is_default
                            else ConfigSource.UNKNOWN_CONFIG
                        )
                    entries[c["name"]] = ConfigEntry(
                        c["name"],
                        c["value"],
                        source,
                        c["read_only"],
                        is_default,
                        c["is_sensitive"],
                    )
                out[key] = entries
            return out

        return self._fan_out(resources, lambda: self._per_node(resources, send), timeout)

    def alter_configs(
        self,
        resources: list[ConfigResource],
        request_timeout: float | None = None,
        validate_only: bool = False,
    ) -> dict[ConfigResource, concurrent.futures.Future[None]]:
        """Replace each resource's configs with its ``set_config`` values (AlterConfigs: the
        configs not named return to their defaults, as Kafka's AlterConfigs does)."""
        timeout = self._timeout(request_timeout)

        async def send(conn: Connection, rs: list[ConfigResource]) -> dict[ConfigResource, Any]:
            body = {
                "resources": [
                    {
                        "resource_type": int(r.restype),
                        "resource_name": r.name,
                        "configs": [{"name": k, "value": v} for k, v in r.set_config_dict.items()],
                    }
                    for r in rs
                ],
                "validate_only": validate_only,
            }
            return _config_errors(await conn.request(ApiKey.ALTER_CONFIGS, body))

        return self._fan_out(resources, lambda: self._per_node(resources, send), timeout)

    def incremental_alter_configs(
        self,
        resources: list[ConfigResource],
        request_timeout: float | None = None,
        validate_only: bool = False,
    ) -> dict[ConfigResource, concurrent.futures.Future[None]]:
        """Apply each resource's ``incremental_configs`` changes (IncrementalAlterConfigs:
        SET, DELETE, APPEND, SUBTRACT; other configs stay as they are)."""
        timeout = self._timeout(request_timeout)

        async def send(conn: Connection, rs: list[ConfigResource]) -> dict[ConfigResource, Any]:
            body = {
                "resources": [
                    {
                        "resource_type": int(r.restype),
                        "resource_name": r.name,
                        "configs": [
                            {
                                "name": e.name,
                                "config_operation": int(
                                    e.incremental_operation
                                    if e.incremental_operation is not None
                                    else AlterConfigOpType.SET
                                ),
                                "value": e.value,
                            }
                            for e in r.incremental_configs
                        ],
                    }
                    for r in rs
                ],
                "validate_only": validate_only,
            }
            return _config_errors(await conn.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, body))

        return self._fan_out(resources, lambda: self._per_node(resources, send), timeout)

    # -- consumer groups ---------------------------------------------------------------------

    def list_consumer_groups(
        self,
        states: Iterable[str] | None = None,
        request_timeout: float | None = None,
        types: Iterable[ConsumerGroupType | str] | None = None,
    ) -> concurrent.futures.Future[ListConsumerGroupsResult]:
        """Every group of every broker (ListGroups to each), only those in ``states`` (Kafka's
        names) and of ``types`` (:class:`ConsumerGroupType` or their names; ListGroups v5's
        type filter, KIP-848) when given: a future of :class:`ListConsumerGroupsResult`."""
        timeout = self._timeout(request_timeout)
        wanted = sorted(set(states or ()))
        kinds = sorted({ConsumerGroupType.of(t).value for t in types or ()})

        async def one(node: int) -> list[ConsumerGroupListing]:
            conn = await self._cluster.connection(node)
            v = conn.version(ApiKey.LIST_GROUPS)
            if v < 4 and wanted:
                raise UnsupportedVersion("filtering groups by state needs ListGroups v4+")
            if v < 5 and kinds:
                raise UnsupportedVersion("filtering groups by type needs ListGroups v5+")
            body: dict[str, Any] = {}
            if v >= 4:
                body["states_filter"] = wanted
            if v >= 5:
                body["types_filter"] = kinds
            resp = await conn.request(ApiKey.LIST_GROUPS, body, version=v)
            raise_for_code(resp["error_code"])
            return [
                ConsumerGroupListing(
                    g["group_id"],
                    g["protocol_type"],
                    g["group_state"] if v >= 4 else None,
                    g["group_type"] if v >= 5 else None,
                )
                for g in resp["groups"]
            ]

        async def work() -> dict[str, Any]:
            await self._cluster.refresh([])
            valid: list[ConsumerGroupListing] = []
            errors: list[KafkaError] = []
            nodes = sorted(self._cluster.brokers)
            results = await asyncio.gather(*(one(n) for n in nodes), return_exceptions=True)
            for r in results:
                if isinstance(r, KafkaError):
                    errors.append(r)
                elif isinstance(r, BaseException):
                    raise r
                else:
                    valid.extend(r)
            return {"": ListConsumerGroupsResult(valid, errors)}

        return self._fan_out([""], work, timeout)[""]

    def describe_consumer_groups(
        self, group_ids: list[str], request_timeout: float | None = None
    ) -> dict[str, concurrent.futures.Future[ConsumerGroupDescription]]:
        """Each group's type, state, assignor, epochs and members: {group: future of
        :class:`ConsumerGroupDescription`}.

        As Java's Admin (``DescribeConsumerGroupsHandler``): ConsumerGroupDescribe (KIP-848)
        to the group's coordinator first, with each member's epoch, assignment and target
        assignment; DescribeGroups when the coordinator does not serve it (UNSUPPORTED_VERSION)
        or answers GROUP_ID_NOT_FOUND (a classic group, or none), the members' assignments then
        decoded from the ConsumerProtocol. A group unknown to both is described as ``Dead``.
        Each is one request per coordinator, carrying every group it owns of those asked
        (:meth:`_by_coordinator`); a group's error fails that group's future only."""
        timeout = self._timeout(request_timeout)

        async def work() -> dict[str, Any]:
            deadline = time.monotonic() + timeout
            groups = list(dict.fromkeys(group_ids))
            results = await self._by_coordinator(groups, self._describe_consumer_groups, timeout)
            classic = [g for g in groups if results.get(g) is _CLASSIC]
            if classic:
                results.update(
                    await self._by_coordinator(
                        classic, self._describe_classic_groups, deadline - time.monotonic()
                    )
                )
            return results

        return self._fan_out(group_ids, work, timeout)

    async def _by_coordinator(
        self,
        groups: list[str],
        send: Callable[[Connection, list[str]], Awaitable[dict[str, Any]]],
        timeout: float,
        key_type: int = 0,
    ) -> dict[str, Any]:
        """Each key's result from one ``send(coordinator, keys)`` per coordinator, carrying
        all the keys it owns, as Java's Admin batches them (CoordinatorStrategy): the
        coordinators found together (:meth:`Cluster.coordinators`). The keys are groups
        (``key_type`` 0) or transactional ids (1, the transaction coordinators). ``send`` maps
        each key to its result or KafkaError; a key answered NOT_COORDINATOR,
        COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS, or left out, is sent again
        (to its coordinator found anew for the first two), and so are all of a request's keys
        when it failed with a retriable error (a lost connection), with backoff until
        ``timeout`` seconds have passed; then its last error is its result."""
        deadline = time.monotonic() + timeout
        kind = "group" if key_type == 0 else "transactional id"

        async def attempt(pending: list[str]) -> tuple[dict[str, Any], dict[str, KafkaError]]:
            results: dict[str, Any] = {}
            nodes = await self._cluster.coordinators(
                pending, key_type, timeout=max(deadline - time.monotonic(), 0.0)
            )
            by_node: dict[int, list[str]] = {}
            for g in pending:
                node = nodes[g]
                if isinstance(node, KafkaError):
                    results[g] = node
                else:
                    by_node.setdefault(node, []).append(g)

            async def one(node: int, owned: list[str]) -> tuple[dict[str, Any], KafkaError | None]:
                try:
                    return await send(await self._cluster.connection(node), owned), None
                except KafkaError as e:
                    if isinstance(e, NetworkException):
                        for g in owned:
                            self._cluster.coordinator_dead(g, key_type)
                    return {}, e

            answers = await asyncio.gather(*(one(n, gs) for n, gs in by_node.items()))
            retry: dict[str, KafkaError] = {}
            for owned, (answer, failed) in zip(by_node.values(), answers, strict=True):
                for g in owned:
                    if failed is not None:
                        if failed.retriable:
                            retry[g] = failed
                        else:
                            results[g] = failed
                        continue
                    r = answer.get(g, _LEFT_OUT)
                    if r is _LEFT_OUT:
                        retry[g] = CoordinatorNotAvailable(f"{kind} {g!r} left out of the answer")
                    elif isinstance(r, (NotCoordinator, CoordinatorNotAvailable)):
                        self._cluster.coordinator_dead(g, key_type)
                        retry[g] = r
                    elif isinstance(r, CoordinatorLoadInProgress):
                        retry[g] = r
                    else:
                        results[g] = r
            return results, retry

        return await retrying_each(
            list(groups),
            attempt,
            deadline=deadline,
            base_ms=self._config["retry.backoff.ms"],
            max_ms=self._config["retry.backoff.max.ms"],
        )

    async def _describe_consumer_groups(
        self, conn: Connection, groups: list[str]
    ) -> dict[str, Any]:
        """One ConsumerGroupDescribe of ``groups`` to their coordinator ``conn``: each group's
        description, its KafkaError, or _CLASSIC when the coordinator does not serve the api or
        the group is not a consumer group (then DescribeGroups tells)."""
        try:
            v = conn.version(ApiKey.CONSUMER_GROUP_DESCRIBE)
            resp = await conn.request(
                ApiKey.CONSUMER_GROUP_DESCRIBE,
                {"group_ids": groups, "include_authorized_operations": False},
                version=v,
            )
        except UnsupportedVersion:  # not advertised, or refused
            return dict.fromkeys(groups, _CLASSIC)
        coordinator = BrokerMetadata(conn.node_id, conn.host, conn.port)

        def partitions(assignment: Any) -> list[TopicPartition]:
            return [
                TopicPartition(t["topic_name"], p)
                for t in assignment["topic_partitions"]
                for p in t["partitions"]
            ]

        out: dict[str, Any] = {}
        for g in resp["groups"]:
            group = g["group_id"]
            code = g["error_code"]
            if code in (GroupIdNotFound.code, UnsupportedVersion.code):
                out[group] = _CLASSIC
                continue
            if code:
                out[group] = error_from_code(code, g["error_message"] or f"group {group!r}")
                continue
            members = [
                MemberDescription(
                    m["member_id"],
                    m["client_id"],
                    m["client_host"],
                    m["instance_id"],
                    partitions(m["assignment"]),
                    target_assignment=partitions(m["target_assignment"]),
                    member_epoch=m["member_epoch"],
                    rack_id=m["rack_id"],
                    # v1's MemberType (KIP-1099): 1 the consumer protocol, 0 classic, -1 unknown
                    upgraded=None if m.get("member_type", -1) == -1 else m["member_type"] == 1,
                )
                for m in g["members"]
            ]
            out[group] = ConsumerGroupDescription(
                group,
                g["group_state"],
                "consumer",
                g["assignor_name"],
                members,
                coordinator,
                type=ConsumerGroupType.CONSUMER,
                group_epoch=g["group_epoch"],
                target_assignment_epoch=g["assignment_epoch"],
            )
        return out

    async def _describe_classic_groups(self, conn: Connection, groups: list[str]) -> dict[str, Any]:
        """One DescribeGroups of ``groups`` to their coordinator ``conn``: each group's
        description or its KafkaError."""
        v = conn.version(ApiKey.DESCRIBE_GROUPS)
        body: dict[str, Any] = {"groups": groups}
        if v >= 3:
            body["include_authorized_operations"] = False
        resp = await conn.request(ApiKey.DESCRIBE_GROUPS, body, version=v)
        coordinator = BrokerMetadata(conn.node_id, conn.host, conn.port)
        out: dict[str, Any] = {}
        for g in resp["groups"]:
            group = g["group_id"]
            if g["error_code"] == GroupIdNotFound.code:
                # v6 (KIP-1043) answers GROUP_ID_NOT_FOUND where v0-5 described the group as
                # Dead: the same description whichever version the broker speaks.
                out[group] = ConsumerGroupDescription(group, "Dead", "", "", [], coordinator)
                continue
            if g["error_code"]:
                out[group] = error_from_code(g["error_code"], f"group {group!r}")
                continue
            members = []
            for m in g["members"]:
                assignment: list[TopicPartition] = []
                if g["protocol_type"] == "consumer" and m["member_assignment"]:
                    try:
                        decoded = decode_assignment(bytes(m["member_assignment"]))
                        assignment = [TopicPartition(t, p) for t, p in decoded.partitions]
                    except DecodeError:
                        pass
                members.append(
                    MemberDescription(
                        m["member_id"],
                        m["client_id"],
                        m["client_host"],
                        m.get("group_instance_id"),
                        assignment,
                    )
                )
            out[group] = ConsumerGroupDescription(
                group,
                g["group_state"],
                g["protocol_type"],
                g["protocol_data"],
                members,
                coordinator,
            )
        return out

    def delete_consumer_groups(
        self, group_ids: list[str], request_timeout: float | None = None
    ) -> dict[str, concurrent.futures.Future[None]]:
        """Delete groups with no members: {group: future of None}; a group with members fails
        with NonEmptyGroup. One DeleteGroups per coordinator carrying the groups it owns, as
        Java's Admin sends it (DeleteConsumerGroupsHandler, batched)."""
        timeout = self._timeout(request_timeout)

        async def send(conn: Connection, groups: list[str]) -> dict[str, Any]:
            v = conn.version(ApiKey.DELETE_GROUPS)
            resp = await conn.request(ApiKey.DELETE_GROUPS, {"groups_names": groups}, version=v)
            return {
                r["group_id"]: error_from_code(r["error_code"], f"group {r['group_id']!r}")
                for r in resp["results"]
            }

        async def work() -> dict[str, Any]:
            return await self._by_coordinator(list(dict.fromkeys(group_ids)), send, timeout)

        return self._fan_out(group_ids, work, timeout)

    def list_consumer_group_offsets(
        self,
        group: str,
        partitions: Iterable[TopicPartition | tuple[str, int]] | None = None,
        require_stable: bool = False,
        request_timeout: float | None = None,
    ) -> dict[str, concurrent.futures.Future[list[TopicPartition]]]:
        """``group``'s committed offsets (OffsetFetch to its coordinator), of ``partitions``
        or of every partition it committed: {group: future of a sorted list of
        :class:`TopicPartition` with ``offset`` (OFFSET_INVALID where none is committed),
        ``metadata``, ``leader_epoch`` and ``error``}."""
        timeout = self._timeout(request_timeout)
        wanted = None if partitions is None else [_tp(p) for p in partitions]

        body = offset_fetch_body(
            group,
            None
            if wanted is None
            else {t: [tp.partition for tp in tps] for t, tps in _by_topic(wanted).items()},
            require_stable,
        )

        async def work() -> dict[str, Any]:
            resp = await self._cluster.coordinator_request(
                group, ApiKey.OFFSET_FETCH, body, timeout=timeout, code_of=offset_fetch_code
            )
            code = offset_fetch_code(resp)
            if code:
                return {group: error_from_code(code, f"group {group!r}")}
            topics = offset_fetch_topics(resp)
            out: list[TopicPartition] = []
            for t in topics:
                for p in t["partitions"]:
                    offset = p["committed_offset"]
                    epoch = p.get("committed_leader_epoch", -1)
                    out.append(
                        TopicPartition(
                            t["name"],
                            p["partition_index"],
                            OFFSET_INVALID if offset < 0 else offset,
                            p["metadata"],
                            None if epoch is None or epoch < 0 else epoch,
                            error_from_code(p["error_code"]),
                        )
                    )
            return {group: sorted(out)}

        return self._fan_out([group], work, timeout)

    def alter_consumer_group_offsets(
        self,
        group: str,
        offsets: Iterable[TopicPartition],
        request_timeout: float | None = None,
    ) -> dict[TopicPartition, concurrent.futures.Future[None]]:
        """Commit ``offsets`` for ``group`` as a tool does (OffsetCommit with no member,
        generation -1: Kafka accepts it only while the group has no members): {partition:
        future of None}; a group with members fails each with UnknownMemberId."""
        timeout = self._timeout(request_timeout)
        tps = [_tp(tp) for tp in offsets]

        def body(v: int) -> dict[str, Any]:
            b: dict[str, Any] = {
                "group_id": group,
                "topics": [
                    {
                        "name": t,
                        "partitions": [
                            {
                                "partition_index": tp.partition,
                                "committed_offset": tp.offset,
                                "committed_metadata": tp.metadata or "",
                                **(
                                    {"committed_leader_epoch": tp.leader_epoch}
                                    if v >= 6 and tp.leader_epoch is not None
                                    else {}
                                ),
                            }
                            for tp in group_tps
                        ],
                    }
                    for t, group_tps in _by_topic(tps).items()
                ],
            }
            if v >= 1:
                b["generation_id_or_member_epoch"] = -1
                b["member_id"] = ""
            return b

        async def work() -> dict[TopicPartition, Any]:
            resp = await self._cluster.coordinator_request(
                group,
                ApiKey.OFFSET_COMMIT,
                body,
                timeout=timeout,
                code_of=partitions_coordinator_code,
            )
            return {
                TopicPartition(t["name"], p["partition_index"]): error_from_code(
                    p["error_code"], f"group {group!r}, {t['name']} [{p['partition_index']}]"
                )
                for t in resp["topics"]
                for p in t["partitions"]
            }

        return self._fan_out(tps, work, timeout)

    def delete_consumer_group_offsets(
        self,
        group: str,
        partitions: Iterable[TopicPartition | tuple[str, int]],
        request_timeout: float | None = None,
    ) -> dict[TopicPartition, concurrent.futures.Future[None]]:
        """Delete ``group``'s committed offsets of ``partitions`` (OffsetDelete): {partition:
        future of None}; a partition of a topic the group's members subscribe to fails with
        GroupSubscribedToTopic, every partition with the group's error if it has one."""
        timeout = self._timeout(request_timeout)
        tps = [_tp(tp) for tp in partitions]
        body = {
            "group_id": group,
            "topics": [
                {"name": t, "partitions": [{"partition_index": tp.partition} for tp in ps]}
                for t, ps in _by_topic(tps).items()
            ],
        }

        async def work() -> dict[TopicPartition, Any]:
            resp = await self._cluster.coordinator_request(
                group, ApiKey.OFFSET_DELETE, body, timeout=timeout
            )
            if resp["error_code"]:
                raise_for_code(resp["error_code"], f"group {group!r}")
            return {
                TopicPartition(t["name"], p["partition_index"]): error_from_code(
                    p["error_code"], f"{t['name']} [{p['partition_index']}]"
                )
                for t in resp["topics"]
                for p in t["partitions"]
            }

        return self._fan_out(tps, work, timeout)

    # -- offsets -----------------------------------------------------------------------------

    async def _list_offsets(
        self, specs: Mapping[TopicPartition, OffsetSpec], isolation_level: int
    ) -> dict[TopicPartition, Any]:
        """ListOffsets to each partition's leader, from fresh metadata."""
        await self._cluster.refresh({tp.topic for tp in specs})
        out: dict[TopicPartition, Any] = {}
        by_leader: dict[int, list[TopicPartition]] = {}
        for tp in specs:
            info = self._cluster.topics.get(tp.topic)
            if info is None or info.error or tp.partition not in info.partitions:
                out[tp] = UnknownTopicOrPartition(f"{tp.topic} [{tp.partition}]")
                continue
            leader = self._cluster.leader(tp.topic, tp.partition)
            if leader is None:
                out[tp] = LeaderNotAvailable(f"{tp.topic} [{tp.partition}]")
                continue
            by_leader.setdefault(leader, []).append(tp)

        async def one(node: int, tps: list[TopicPartition]) -> None:
            conn = await self._cluster.connection(node)
            wanted = {(tp.topic, tp.partition): specs[tp].timestamp for tp in tps}
            for (t, p), r in (await list_offsets_at(conn, wanted, isolation_level)).items():
                if isinstance(r, KafkaError):
                    out[TopicPartition(t, p)] = r
                else:
                    offset, ts, epoch = r
                    out[TopicPartition(t, p)] = ListOffsetsResultInfo(
                        offset, ts, None if epoch < 0 else epoch
                    )

        await asyncio.gather(*(one(n, tps) for n, tps in by_leader.items()))
        return out

    def list_offsets(
        self,
        topic_partition_offsets: Mapping[TopicPartition, OffsetSpec | int | str],
        isolation_level: int = 0,
        request_timeout: float | None = None,
    ) -> dict[TopicPartition, concurrent.futures.Future[ListOffsetsResultInfo]]:
        """Each partition's earliest or latest offset, or its first offset at or after a
        timestamp (ListOffsets to its leader): {partition: future of
        :class:`ListOffsetsResultInfo`}. A spec is an :class:`OffsetSpec`, ``"earliest"`` /
        ``"latest"``, or an int (a timestamp in ms; -2 earliest, -1 latest).
        ``isolation_level`` 1 is read_committed (the last stable offset)."""
        timeout = self._timeout(request_timeout)
        specs = {_tp(tp): OffsetSpec.of(s) for tp, s in topic_partition_offsets.items()}
        return self._fan_out(
            list(specs), lambda: self._list_offsets(specs, isolation_level), timeout
        )

    def watermarks(
        self,
        topic_partitions: Iterable[TopicPartition | tuple[str, int]],
        timeout: float | None = None,
        isolation_level: int = 0,
    ) -> dict[TopicPartition, tuple[int, int]]:
        """Each partition's (log start offset, log end offset), as confluent-kafka's
        ``get_watermark_offsets`` for many partitions at once; raises the first partition's
        error. With ``isolation_level`` 1 (read_committed) the end is the last stable
        offset, as a read_committed consumer's watermarks are."""
        t = self._timeout(timeout)
        tps = [_tp(tp) for tp in topic_partitions]

        async def go() -> dict[TopicPartition, tuple[int, int]]:
            low = await self._list_offsets({tp: OffsetSpec.earliest() for tp in tps}, 0)
            high = await self._list_offsets(
                {tp: OffsetSpec.latest() for tp in tps}, isolation_level
            )
            out: dict[TopicPartition, tuple[int, int]] = {}
            for tp in tps:
                lo, hi = low.get(tp), high.get(tp)
                for r in (lo, hi):
                    if isinstance(r, BaseException):
                        raise r
                assert isinstance(lo, ListOffsetsResultInfo)
                assert isinstance(hi, ListOffsetsResultInfo)
                out[tp] = (lo.offset, hi.offset)
            return out

        return self._call(go(), t)

    # -- log directories ---------------------------------------------------------------------

    def describe_log_dirs(
        self,
        brokers: Iterable[int] | None = None,
        topic_partitions: Iterable[TopicPartition | tuple[str, int]] | None = None,
        request_timeout: float | None = None,
    ) -> dict[int, concurrent.futures.Future[dict[str, LogDirDescription]]]:
        """Each broker's log directories (DescribeLogDirs, sent to each broker, as Java's
        ``describeLogDirs``): {broker id: future of {path: :class:`LogDirDescription`}}.
        ``brokers`` defaults to every broker of the cluster; ``topic_partitions`` limits the
        replicas described (default: all)."""
        timeout = self._timeout(request_timeout)
        ids = (
            sorted(self.list_topics(timeout=timeout).brokers)
            if brokers is None
            else [int(b) for b in brokers]
        )
        wanted = None if topic_partitions is None else _by_topic(_tp(tp) for tp in topic_partitions)

        async def one(node: int) -> dict[str, LogDirDescription]:
            conn = await self._cluster.connection(node)
            v = conn.version(ApiKey.DESCRIBE_LOG_DIRS)
            topics = (
                None
                if wanted is None
                else [
                    {"topic": t, "partitions": [tp.partition for tp in tps]}
                    for t, tps in wanted.items()
                ]
            )
            resp = await conn.request(ApiKey.DESCRIBE_LOG_DIRS, {"topics": topics}, version=v)
            if v >= 3 and resp["error_code"]:
                raise_for_code(resp["error_code"])
            out: dict[str, LogDirDescription] = {}
            for d in resp["results"]:
                replicas = {
                    TopicPartition(t["name"], p["partition_index"]): ReplicaInfo(
                        p["partition_size"], p["offset_lag"], p["is_future_key"]
                    )
                    for t in d["topics"]
                    for p in t["partitions"]
                }
                total = d["total_bytes"] if v >= 4 and d["total_bytes"] >= 0 else None
                usable = d["usable_bytes"] if v >= 4 and d["usable_bytes"] >= 0 else None
                error = error_from_code(d["error_code"], None) if d["error_code"] else None
                out[d["log_dir"]] = LogDirDescription(d["log_dir"], error, replicas, total, usable)
            return out

        async def work() -> dict[int, Any]:
            await self._cluster.refresh([])
            results: dict[int, Any] = {}
            for node in ids:
                try:
                    results[node] = await one(node)
                except Exception as e:
                    results[node] = e
            return results

        return self._fan_out(ids, work, timeout)

    # -- ACLs --------------------------------------------------------------------------------

    def create_acls(
        self, acls: list[AclBinding], request_timeout: float | None = None
    ) -> dict[AclBinding, concurrent.futures.Future[None]]:
        """Create ``acls`` (CreateAcls to any broker, as Java's ``createAcls``):
        {binding: future of None}; a binding the broker refuses fails with its error
        (InvalidRequest, SecurityDisabled, ClusterAuthorizationFailed)."""
        timeout = self._timeout(request_timeout)
        bindings = list(dict.fromkeys(acls))

        async def work() -> dict[AclBinding, Any]:
            conn = await self._cluster.any_connection()
            v = conn.version(ApiKey.CREATE_ACLS)
            body = {
                "creations": [
                    {
                        "resource_type": int(b.restype),
                        "resource_name": b.name,
                        "resource_pattern_type": int(b.resource_pattern_type),
                        "principal": b.principal,
                        "host": b.host,
                        "operation": int(b.operation),
                        "permission_type": int(b.permission_type),
                    }
                    for b in bindings
                ]
            }
            resp = await conn.request(ApiKey.CREATE_ACLS, body, version=v)
            return {
                b: error_from_code(r["error_code"], r["error_message"])
                for b, r in zip(bindings, resp["results"], strict=True)
            }

        return self._fan_out(bindings, work, timeout)

    def describe_acls(
        self, acl_binding_filter: AclBindingFilter, request_timeout: float | None = None
    ) -> concurrent.futures.Future[list[AclBinding]]:
        """The bindings ``acl_binding_filter`` matches (DescribeAcls to any broker), as
        confluent-kafka's ``describe_acls``: one future of a list."""
        timeout = self._timeout(request_timeout)
        flt = acl_binding_filter

        async def work() -> dict[AclBindingFilter, Any]:
            conn = await self._cluster.any_connection()
            v = conn.version(ApiKey.DESCRIBE_ACLS)
            resp = await conn.request(ApiKey.DESCRIBE_ACLS, _filter_body(flt), version=v)
            if resp["error_code"]:
                return {flt: error_from_code(resp["error_code"], resp["error_message"])}
            return {
                flt: [
                    AclBinding(
                        r["resource_type"],
                        r["resource_name"],
                        r["pattern_type"] if v >= 1 else ResourcePatternType.LITERAL,
                        a["principal"],
                        a["host"],
                        a["operation"],
                        a["permission_type"],
                    )
                    for r in resp["resources"]
                    for a in r["acls"]
                ]
            }

        return self._fan_out([flt], work, timeout)[flt]

    def delete_acls(
        self, acl_binding_filters: list[AclBindingFilter], request_timeout: float | None = None
    ) -> dict[AclBindingFilter, concurrent.futures.Future[list[AclBinding]]]:
        """Delete the bindings each filter matches (DeleteAcls to any broker):
        {filter: future of the bindings it deleted}."""
        timeout = self._timeout(request_timeout)
        filters = list(dict.fromkeys(acl_binding_filters))

        async def work() -> dict[AclBindingFilter, Any]:
            conn = await self._cluster.any_connection()
            v = conn.version(ApiKey.DELETE_ACLS)
            body = {"filters": [_filter_body(f) for f in filters]}
            resp = await conn.request(ApiKey.DELETE_ACLS, body, version=v)
            out: dict[AclBindingFilter, Any] = {}
            for f, r in zip(filters, resp["filter_results"], strict=True):
                if r["error_code"]:
                    out[f] = error_from_code(r["error_code"], r["error_message"])
                    continue
                out[f] = [
                    AclBinding(
                        m["resource_type"],
                        m["resource_name"],
                        m["pattern_type"] if v >= 1 else ResourcePatternType.LITERAL,
                        m["principal"],
                        m["host"],
                        m["operation"],
                        m["permission_type"],
                    )
                    for m in r["matching_acls"]
                ]
            return out

        return self._fan_out(filters, work, timeout)

    # -- transactions ------------------------------------------------------------------------

    def list_transactions(
        self,
        states: Iterable[str] | None = None,
        producer_ids: Iterable[int] | None = None,
        duration_ms: int | None = None,
        request_timeout: float | None = None,
    ) -> concurrent.futures.Future[list[TransactionListing]]:
        """Every transactional id of every broker's transaction coordinator (ListTransactions
        to each broker, merged, as Java's ``listTransactions().all()``): a future of a list of
        :class:`TransactionListing`, by broker id, then as each broker listed them. Only those
        in ``states`` (Kafka's names), of ``producer_ids``, and open longer than
        ``duration_ms`` (ListTransactions v1+, KIP-994) when given. A broker whose coordinator
        is loading is asked again until the timeout; any other error of a broker fails the
        whole call, as Java's ``all()`` does."""
        timeout = self._timeout(request_timeout)
        state_filters = list(dict.fromkeys(states or ()))
        pid_filters = list(dict.fromkeys(int(p) for p in producer_ids or ()))
        duration = -1 if duration_ms is None else int(duration_ms)

        async def once(node: int) -> list[TransactionListing] | KafkaError:
            conn = await self._cluster.connection(node)
            v = conn.version(ApiKey.LIST_TRANSACTIONS)
            if duration >= 0 and v < 1:
                raise UnsupportedVersion(
                    "filtering transactions by duration needs ListTransactions v1+"
                )
            body: dict[str, Any] = {
                "state_filters": state_filters,
                "producer_id_filters": pid_filters,
            }
            if v >= 1:
                body["duration_filter"] = duration
            resp = await conn.request(ApiKey.LIST_TRANSACTIONS, body, version=v)
            code = resp["error_code"]
            if code == CoordinatorLoadInProgress.code:
                raise CoordinatorLoadInProgress(f"ListTransactions to broker {node}")
            if code:
                # Not retried, COORDINATOR_NOT_AVAILABLE included (a coordinator shutting
                # down), as Java's ListTransactionsHandler fails it.
                return error_from_code(code, f"ListTransactions to broker {node}") or KafkaError()
            return [
                TransactionListing(
                    t["transactional_id"],
                    t["producer_id"],
                    _transaction_state(t["transaction_state"]),
                    node,
                )
                for t in resp["transaction_states"]
            ]

        async def one(node: int) -> list[TransactionListing]:
            r = await retrying(
                lambda: once(node),
                timeout=timeout,
                base_ms=self._config["retry.backoff.ms"],
                max_ms=self._config["retry.backoff.max.ms"],
            )
            if isinstance(r, KafkaError):
                raise r
            return r

        async def work() -> dict[str, Any]:
            await self._cluster.refresh([])
            nodes = sorted(self._cluster.brokers)
            listed = await asyncio.gather(*(one(n) for n in nodes))
            return {"": [t for ts in listed for t in ts]}

        return self._fan_out([""], work, timeout)[""]

    def describe_transactions(
        self, transactional_ids: Iterable[str], request_timeout: float | None = None
    ) -> dict[str, concurrent.futures.Future[TransactionDescription]]:
        """Each transactional id's state, producer id and epoch, timeout, start time and
        partitions, as its transaction coordinator holds it: {transactional id: future of
        :class:`TransactionDescription`}. One DescribeTransactions per coordinator, carrying
        every id it owns (FindCoordinator key type 1 for them all), as Java's
        ``DescribeTransactionsHandler`` sends it. An id the coordinator does not know fails
        with TransactionalIdNotFound; a moved or loading coordinator is asked again."""
        timeout = self._timeout(request_timeout)
        ids = list(dict.fromkeys(transactional_ids))

        async def send(conn: Connection, owned: list[str]) -> dict[str, Any]:
            v = conn.version(ApiKey.DESCRIBE_TRANSACTIONS)
            resp = await conn.request(
                ApiKey.DESCRIBE_TRANSACTIONS, {"transactional_ids": owned}, version=v
            )
            out: dict[str, Any] = {}
            for t in resp["transaction_states"]:
                tid = t["transactional_id"]
                if t["error_code"]:
                    out[tid] = error_from_code(t["error_code"], f"transactional id {tid!r}")
                    continue
                start = t["transaction_start_time_ms"]
                out[tid] = TransactionDescription(
                    conn.node_id,
                    _transaction_state(t["transaction_state"]),
                    t["producer_id"],
                    t["producer_epoch"],
                    t["transaction_timeout_ms"],
                    None if start < 0 else start,
                    tuple(
                        sorted(
                            TopicPartition(topic["topic"], p)
                            for topic in t["topics"]
                            for p in topic["partitions"]
                        )
                    ),
                )
            return out

        async def work() -> dict[str, Any]:
            return await self._by_coordinator(ids, send, timeout, key_type=1)

        return self._fan_out(ids, work, timeout)

    async def _by_leader(
        self,
        tps: list[TopicPartition],
        send: Callable[[Connection, list[TopicPartition]], Awaitable[dict[TopicPartition, Any]]],
        timeout: float,
        broker: int | None = None,
    ) -> dict[TopicPartition, Any]:
        """Each partition's result from one ``send(leader, partitions)`` per leader, carrying
        every partition it leads, from fresh metadata, as Java's Admin sends them
        (PartitionLeaderStrategy). ``send`` maps each partition to its result or KafkaError.
        A partition with no leader known, left out of the answer, or answered with an error of
        a moved leader (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, ...), and all of a
        request's partitions when it failed with a retriable error (a lost connection), are
        sent again after fresh metadata, with backoff, until ``timeout`` seconds have passed;
        then each one's last error is its result. With ``broker``, every partition goes to
        that broker instead (Java's StaticBrokerStrategy), and NOT_LEADER_OR_FOLLOWER is its
        answer, not a reason to look again."""
        deadline = time.monotonic() + timeout
        results: dict[TopicPartition, Any] = {}
        pending = list(dict.fromkeys(tps))
        attempt = 0
        while pending:
            retry: dict[TopicPartition, KafkaError] = {}
            by_node: dict[int, list[TopicPartition]] = {}
            try:
                await self._cluster.refresh(
                    [] if broker is not None else {tp.topic for tp in pending}
                )
            except KafkaError as e:
                if not e.retriable:
                    raise
                retry = dict.fromkeys(pending, e)
            else:
                for tp in pending:
                    if broker is not None:
                        by_node.setdefault(broker, []).append(tp)
                        continue
                    info = self._cluster.topics.get(tp.topic)
                    err: KafkaError | None = None
                    if info is not None and info.error:
                        err = error_from_code(info.error, tp.topic)
                    elif info is None or tp.partition not in info.partitions:
                        err = UnknownTopicOrPartition(f"{tp.topic} [{tp.partition}]")
                    else:
                        leader = self._cluster.leader(tp.topic, tp.partition)
                        if leader is None:
                            err = LeaderNotAvailable(f"{tp.topic} [{tp.partition}]")
                        else:
                            by_node.setdefault(leader, []).append(tp)
                    if err is not None:
                        (retry if err.retriable else results)[tp] = err

            async def one(
                node: int, owned: list[TopicPartition]
            ) -> tuple[dict[TopicPartition, Any], KafkaError | None]:
                try:
                    return await send(await self._cluster.connection(node), owned), None
                except KafkaError as e:
                    return {}, e

            answers = await asyncio.gather(*(one(n, ps) for n, ps in by_node.items()))
            for owned, (answer, failed) in zip(by_node.values(), answers, strict=True):
                for tp in owned:
                    if failed is not None:
                        (retry if failed.retriable else results)[tp] = failed
                        continue
                    r = answer.get(tp, _LEFT_OUT)
                    if r is _LEFT_OUT:
                        retry[tp] = LeaderNotAvailable(f"{tp.topic} [{tp.partition}] left out")
                    elif isinstance(r, _LEADER_MOVED) and not (
                        broker is not None and isinstance(r, NotLeaderOrFollower)
                    ):
                        retry[tp] = r
                    else:
                        results[tp] = r
            if not retry:
                break
            wait = backoff(
                attempt, self._config["retry.backoff.ms"], self._config["retry.backoff.max.ms"]
            )
            if time.monotonic() + wait > deadline:
                results.update(retry)
                break
            attempt += 1
            await asyncio.sleep(wait)
            pending = list(retry)
        return results

    def describe_producers(
        self,
        partitions: Iterable[TopicPartition | tuple[str, int]],
        request_timeout: float | None = None,
        broker_id: int | None = None,
    ) -> dict[TopicPartition, concurrent.futures.Future[list[ProducerState]]]:
        """Each partition's active producers, as its leader holds them (DescribeProducers to
        each leader, carrying every partition it leads, as Java's ``describeProducers``):
        {partition: future of a list of :class:`ProducerState`}. A partition whose leader
        moved, or that its leader does not know yet, is asked again until the timeout; then
        it fails with that error (NotLeaderOrFollower, UnknownTopicOrPartition). With
        ``broker_id``, every partition is asked of that broker, a follower's replica too (Java's
        ``DescribeProducersOptions.brokerId``); a broker with no replica of one answers
        NotLeaderOrFollower for it."""
        timeout = self._timeout(request_timeout)
        tps = [_tp(tp) for tp in partitions]

        async def send(conn: Connection, owned: list[TopicPartition]) -> dict[TopicPartition, Any]:
            body = {
                "topics": [
                    {"name": t, "partition_indexes": [tp.partition for tp in ps]}
                    for t, ps in _by_topic(owned).items()
                ]
            }
            resp = await conn.request(ApiKey.DESCRIBE_PRODUCERS, body)
            out: dict[TopicPartition, Any] = {}
            for t in resp["topics"]:
                for p in t["partitions"]:
                    tp = TopicPartition(t["name"], p["partition_index"])
                    if p["error_code"]:
                        out[tp] = error_from_code(
                            p["error_code"], p["error_message"] or f"{tp.topic} [{tp.partition}]"
                        )
                        continue
                    out[tp] = [
                        ProducerState(
                            a["producer_id"],
                            a["producer_epoch"],
                            a["last_sequence"],
                            a["last_timestamp"],
                            None if a["coordinator_epoch"] < 0 else a["coordinator_epoch"],
                            None
                            if a["current_txn_start_offset"] < 0
                            else a["current_txn_start_offset"],
                        )
                        for a in p["active_producers"]
                    ]
            return out

        return self._fan_out(tps, lambda: self._by_leader(tps, send, timeout, broker_id), timeout)

    def abort_transaction(
        self,
        topic_partition: TopicPartition | tuple[str, int],
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        request_timeout: float | None = None,
    ) -> concurrent.futures.Future[None]:
        """Abort a producer's open transaction in one partition: WriteTxnMarkers with an ABORT
        marker for ``producer_id`` and ``producer_epoch`` to the partition's leader, as Java's
        ``abortTransaction`` (KIP-664) sends it, for a hanging transaction its coordinator will
        not end. A future of None; it fails with InvalidProducerEpoch for an epoch older than
        the partition's, TransactionCoordinatorFenced for a coordinator epoch older than the
        last marker's, ClusterAuthorizationFailed without ALTER on the cluster. The
        partition's last stable offset moves past the transaction's records."""
        timeout = self._timeout(request_timeout)
        tp = _tp(topic_partition)

        async def send(conn: Connection, owned: list[TopicPartition]) -> dict[TopicPartition, Any]:
            body = {
                "markers": [
                    {
                        "producer_id": producer_id,
                        "producer_epoch": producer_epoch,
                        "transaction_result": False,
                        "topics": [{"name": tp.topic, "partition_indexes": [tp.partition]}],
                        "coordinator_epoch": coordinator_epoch,
                    }
                ]
            }
            resp = await conn.request(ApiKey.WRITE_TXN_MARKERS, body)
            answered = [
                (m["producer_id"], t["name"], p["partition_index"], p["error_code"])
                for m in resp["markers"]
                for t in m["topics"]
                for p in t["partitions"]
            ]
            if len(answered) != 1 or answered[0][:3] != (producer_id, tp.topic, tp.partition):
                return {tp: KafkaError(f"WriteTxnMarkers answered for {answered}, not {tp}")}
            return {tp: error_from_code(answered[0][3], f"aborting {producer_id} in {tp}")}

        return self._fan_out([tp], lambda: self._by_leader([tp], send, timeout), timeout)[tp]

    # -- SCRAM credentials (KIP-554) ---------------------------------------------------------

    def describe_user_scram_credentials(
        self, users: list[str] | None = None, request_timeout: float | None = None
    ) -> Any:
        """Users' SCRAM credentials (DescribeUserScramCredentials), as confluent-kafka answers:
        for ``users`` None one future of {user: :class:`UserScramCredentialsDescription`} for
        every user with a credential; else {user: future of its description} (a user without
        one: ResourceNotFound)."""
        timeout = self._timeout(request_timeout)

        async def send() -> dict[str, Any]:
            conn = await self._cluster.any_connection()
            body = {"users": None if users is None else [{"name": u} for u in users]}
            resp = await conn.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, body)
            if resp["error_code"]:
                error = error_from_code(resp["error_code"], resp.get("error_message"))
                return {u: error for u in users or []} | {"": error}
            out: dict[str, Any] = {}
            for r in resp["results"]:
                if r["error_code"]:
                    out[r["user"]] = error_from_code(r["error_code"], r.get("error_message"))
                    continue
                out[r["user"]] = UserScramCredentialsDescription(
                    r["user"],
                    [
                        ScramCredentialInfo(ScramMechanism(c["mechanism"]), c["iterations"])
                        for c in r["credential_infos"]
                    ],
                )
            return out

        if users is not None:
            return self._fan_out(users, send, timeout)

        async def everyone() -> dict[str, Any]:
            out = await send()
            if isinstance(out.get(""), BaseException):
                return {"": out[""]}
            return {"": out}

        return self._fan_out([""], everyone, timeout)[""]

    def describe_client_quotas(
        self,
        components: list[ClientQuotaFilterComponent],
        strict: bool = False,
        request_timeout: float | None = None,
    ) -> concurrent.futures.Future[dict[ClientQuotaEntity, dict[str, float]]]:
        """The client quotas of the entities the filter matches (DescribeClientQuotas): a
        future of {entity: {key: value}}; ``strict`` leaves out entities with types the
        filter does not name."""
        timeout = self._timeout(request_timeout)

        async def send() -> dict[str, Any]:
            conn = await self._cluster.any_connection()
            body = {
                "components": [
                    {"entity_type": c.entity_type, "match_type": c.match_type, "match": c.match}
                    for c in components
                ],
                "strict": strict,
            }
            resp = await conn.request(ApiKey.DESCRIBE_CLIENT_QUOTAS, body)
            if resp["error_code"]:
                return {"": error_from_code(resp["error_code"], resp.get("error_message"))}
            return {
                "": {
                    ClientQuotaEntity({e["entity_type"]: e["entity_name"] for e in r["entity"]}): {
                        v["key"]: v["value"] for v in r["values"]
                    }
                    for r in resp["entries"] or []
                }
            }

        return self._fan_out([""], send, timeout)[""]

    def alter_client_quotas(
        self,
        alterations: list[ClientQuotaAlteration],
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[ClientQuotaEntity, concurrent.futures.Future[None]]:
        """Set and remove client quotas (AlterClientQuotas): {entity: future of None}."""
        timeout = self._timeout(request_timeout)

        async def send() -> dict[ClientQuotaEntity, Any]:
            conn = await self._controller()
            body = {
                "entries": [
                    {
                        "entity": [
                            {"entity_type": t, "entity_name": n} for t, n in a.entity.entries
                        ],
                        "ops": [
                            {"key": k, "value": v or 0.0, "remove": v is None}
                            for k, v in a.ops.items()
                        ],
                    }
                    for a in alterations
                ],
                "validate_only": validate_only,
            }
            resp = await conn.request(ApiKey.ALTER_CLIENT_QUOTAS, body)
            return {
                ClientQuotaEntity({e["entity_type"]: e["entity_name"] for e in r["entity"]}): (
                    error_from_code(r["error_code"], r.get("error_message"))
                )
                for r in resp["entries"]
            }

        return self._fan_out(list(dict.fromkeys(a.entity for a in alterations)), send, timeout)

    def alter_user_scram_credentials(
        self,
        alterations: list[UserScramCredentialAlteration],
        request_timeout: float | None = None,
    ) -> dict[str, concurrent.futures.Future[None]]:
        """Insert, update and delete SCRAM credentials (AlterUserScramCredentials): {user:
        future of None}. A password is salted here (PBKDF2, the credential's iterations) and
        never sent."""
        timeout = self._timeout(request_timeout)
        deletions, upsertions = [], []
        for a in alterations:
            if isinstance(a, UserScramCredentialUpsertion):
                info = a.scram_credential_info
                salt = a.salt if a.salt is not None else os.urandom(32)
                mech = ScramMechanism(info.mechanism)
                # RFC 5802's SaltedPassword, Hi(password, salt, i): PBKDF2 with HMAC.
                salted = (
                    hashlib.pbkdf2_hmac(
                        "sha256" if mech == ScramMechanism.SCRAM_SHA_256 else "sha512",
                        a.password,
                        salt,
                        info.iterations,
                    )
                    if mech != ScramMechanism.UNKNOWN and info.iterations > 0
                    else b""
                )
                upsertions.append(
                    {
                        "name": a.user,
                        "mechanism": int(mech),
                        "iterations": info.iterations,
                        "salt": salt,
                        "salted_password": salted,
                    }
                )
            elif isinstance(a, UserScramCredentialDeletion):
                deletions.append({"name": a.user, "mechanism": int(a.mechanism)})
            else:
                raise InvalidArgument(f"not a SCRAM credential alteration: {a!r}")

        async def send() -> dict[str, Any]:
            conn = await self._controller()
            body = {"deletions": deletions, "upsertions": upsertions}
            resp = await conn.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, body)
            return {
                r["user"]: error_from_code(r["error_code"], r.get("error_message"))
                for r in resp["results"]
            }

        return self._fan_out(list(dict.fromkeys(a.user for a in alterations)), send, timeout)
