"""acl: Kafka's access control model, shared by the broker's authorizer and the AdminClient.

The enums carry Kafka's codes (``org.apache.kafka.common.acl`` and ``.resource``) and, where
confluent-kafka names one differently, its name too (``ResourceType.BROKER`` is Kafka's
``CLUSTER``; ``ResourcePatternType`` is Kafka's ``PatternType``). :class:`AclBinding` is one
ACL: a resource pattern and an access control entry; :class:`AclBindingFilter` selects
bindings, with ``None`` and the ``ANY`` values matching anything and ``MATCH`` matching the
patterns that apply to a resource name, as Kafka's ``AclBindingFilter.matches`` does.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CLUSTER_NAME",
    "WILDCARD",
    "WILDCARD_PRINCIPAL",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "ResourcePatternType",
    "ResourceType",
    "supported_operations",
]

#: CLUSTER_NAME is the one name of the CLUSTER resource (Kafka's ``Resource.CLUSTER_NAME``).
CLUSTER_NAME = "kafka-cluster"
#: WILDCARD, as a LITERAL resource name or an ACL's host, matches any.
WILDCARD = "*"
#: WILDCARD_PRINCIPAL, as an ACL's principal, matches any principal.
WILDCARD_PRINCIPAL = "User:*"


class ResourceType(enum.IntEnum):
    """ResourceType: what an ACL protects, with Kafka's codes."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    BROKER = 4  # confluent-kafka's name for CLUSTER
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class ResourcePatternType(enum.IntEnum):
    """ResourcePatternType: how an ACL's resource name is matched (Kafka's ``PatternType``):
    LITERAL (the name, or ``*`` for any) and PREFIXED in bindings; ANY and MATCH in filters."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    """AclOperation: what an ACL allows or denies, with Kafka's codes."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(enum.IntEnum):
    """AclPermissionType: whether an ACL allows or denies."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_Op = AclOperation
#: _SUPPORTED are the operations each concrete resource type has (Kafka's
#: AclEntry.supportedOperations): what ``authorized_operations`` fields are computed over.
_SUPPORTED: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        _Op.READ,
        _Op.WRITE,
        _Op.CREATE,
        _Op.DESCRIBE,
        _Op.DELETE,
        _Op.ALTER,
        _Op.DESCRIBE_CONFIGS,
        _Op.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (
        _Op.READ,
        _Op.DESCRIBE,
        _Op.DELETE,
        _Op.DESCRIBE_CONFIGS,
        _Op.ALTER_CONFIGS,
    ),
    ResourceType.CLUSTER: (
        _Op.CREATE,
        _Op.CLUSTER_ACTION,
        _Op.DESCRIBE_CONFIGS,
        _Op.ALTER_CONFIGS,
        _Op.IDEMPOTENT_WRITE,
        _Op.ALTER,
        _Op.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (_Op.DESCRIBE, _Op.WRITE, _Op.TWO_PHASE_COMMIT),
    ResourceType.DELEGATION_TOKEN: (_Op.DESCRIBE,),
    ResourceType.USER: (_Op.CREATE_TOKENS, _Op.DESCRIBE_TOKENS),
}


def supported_operations(resource_type: ResourceType) -> tuple[AclOperation, ...]:
    """supported_operations: the operations a concrete resource type has."""
    return _SUPPORTED[resource_type]


def _enum(cls: type[enum.IntEnum], value: Any) -> Any:
    """``value`` as a member of ``cls``; a code Kafka does not define is UNKNOWN, as Kafka's
    ``fromCode`` reads it."""
    if isinstance(value, str):
        return cls[value.upper()]
    try:
        return cls(int(value))
    except ValueError:
        return cls(0)


@dataclass(frozen=True, init=False)
class AclBinding:
    """AclBinding is one ACL, as confluent-kafka's: a resource (type, name, pattern type) and
    an entry (principal ``User:alice``, host ``*`` or an IP, operation, permission). Equal and
    hashed by all seven; an ACL is stored once however often it is created."""

    restype: ResourceType
    name: str
    resource_pattern_type: ResourcePatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __init__(
        self,
        restype: ResourceType | int | str,
        name: str,
        resource_pattern_type: ResourcePatternType | int | str,
        principal: str,
        host: str,
        operation: AclOperation | int | str,
        permission_type: AclPermissionType | int | str,
    ) -> None:
        object.__setattr__(self, "restype", _enum(ResourceType, restype))
        object.__setattr__(self, "name", name)
        object.__setattr__(
            self, "resource_pattern_type", _enum(ResourcePatternType, resource_pattern_type)
        )
        object.__setattr__(self, "principal", principal)
        object.__setattr__(self, "host", host)
        object.__setattr__(self, "operation", _enum(AclOperation, operation))
        object.__setattr__(self, "permission_type", _enum(AclPermissionType, permission_type))

    def to_dict(self) -> dict[str, Any]:
        """The binding as ``acls.json`` stores it: Kafka's enum names."""
        return {
            "resource_type": self.restype.name,
            "resource_name": self.name,
            "pattern_type": self.resource_pattern_type.name,
            "principal": self.principal,
            "host": self.host,
            "operation": self.operation.name,
            "permission_type": self.permission_type.name,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AclBinding:
        return cls(
            d["resource_type"],
            d["resource_name"],
            d["pattern_type"],
            d["principal"],
            d["host"],
            d["operation"],
            d["permission_type"],
        )

    def __str__(self) -> str:
        return (
            f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, "
            f"permissionType={self.permission_type.name}) on {_resource_type_name(self.restype)}"
            f":{self.resource_pattern_type.name}:{self.name}"
        )


def _resource_type_name(t: ResourceType) -> str:
    return "CLUSTER" if t == ResourceType.CLUSTER else t.name


@dataclass(frozen=True, init=False)
class AclBindingFilter:
    """AclBindingFilter selects ACL bindings (DescribeAcls, DeleteAcls), as confluent-kafka's:
    ``None`` for name, principal or host and ANY for the enums match anything; pattern type
    MATCH matches every binding that applies to the resource named (LITERAL of that name or
    ``*``, PREFIXED of a prefix of it)."""

    restype: ResourceType
    name: str | None
    resource_pattern_type: ResourcePatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def __init__(
        self,
        restype: ResourceType | int | str,
        name: str | None,
        resource_pattern_type: ResourcePatternType | int | str,
        principal: str | None,
        host: str | None,
        operation: AclOperation | int | str,
        permission_type: AclPermissionType | int | str,
    ) -> None:
        object.__setattr__(self, "restype", _enum(ResourceType, restype))
        object.__setattr__(self, "name", name)
        object.__setattr__(
            self, "resource_pattern_type", _enum(ResourcePatternType, resource_pattern_type)
        )
        object.__setattr__(self, "principal", principal)
        object.__setattr__(self, "host", host)
        object.__setattr__(self, "operation", _enum(AclOperation, operation))
        object.__setattr__(self, "permission_type", _enum(AclPermissionType, permission_type))

    def matches(self, b: AclBinding) -> bool:
        """Whether ``b`` is selected (Kafka's ``AclBindingFilter.matches``)."""
        if self.restype != ResourceType.ANY and self.restype != b.restype:
            return False
        pt = self.resource_pattern_type
        any_pattern = pt in (ResourcePatternType.ANY, ResourcePatternType.MATCH)
        if not any_pattern and pt != b.resource_pattern_type:
            return False
        if self.name is not None:
            if pt in (ResourcePatternType.ANY, b.resource_pattern_type):
                if self.name != b.name:
                    return False
            elif b.resource_pattern_type == ResourcePatternType.LITERAL:
                if self.name != b.name and b.name != WILDCARD:
                    return False
            elif b.resource_pattern_type == ResourcePatternType.PREFIXED:
                if not self.name.startswith(b.name):
                    return False
            else:
                return False
        if self.principal is not None and self.principal != b.principal:
            return False
        if self.host is not None and self.host != b.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != b.operation:
            return False
        return self.permission_type in (AclPermissionType.ANY, b.permission_type)
