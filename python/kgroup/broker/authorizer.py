"""Authorizer: Kafka's StandardAuthorizer for kgroup's broker (``authorizer.class.name``).

Off by default: ``BrokerState.authorizer`` is None and every handler skips its checks with that
one test. On (``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer``)
each request's actions are decided as Kafka's ``StandardAuthorizerData.authorize`` decides them:

- a principal listed in ``super.users`` (``User:a;User:b``) may do anything;
- otherwise the ACLs that apply to the resource are those of its type whose pattern is LITERAL
  with its name or ``*``, or PREFIXED with a prefix of its name;
- of those, the ones whose principal is the client's or ``User:*``, whose host is the client's
  IP or ``*``, and whose operation is the action's or ALL (an ALLOW of READ, WRITE, DELETE or
  ALTER also allows DESCRIBE; one of ALTER_CONFIGS, DESCRIBE_CONFIGS) decide: any DENY denies,
  else any ALLOW allows;
- when none decides: allowed only if no ACL applies to the resource at all and
  ``allow.everyone.if.no.acl.found`` is true.

ACLs are kept in ``acls.json`` in the broker's metadata folder (the first log dir), rewritten
whole with ``kgroup.log.write_atomically`` on each change and read back at start, as Kafka
keeps them in its metadata log.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from kgroup import errors
from kgroup.acl import (
    CLUSTER_NAME,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
    supported_operations,
)
from kgroup.broker.config import BrokerConfig, ConfigError
from kgroup.log import file_exists, read_text, write_atomically

__all__ = ["STANDARD_AUTHORIZER", "Authorizer", "authorizer_from_config"]

log = logging.getLogger("kgroup.broker")

#: STANDARD_AUTHORIZER is the one ``authorizer.class.name`` kgroup serves.
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
#: ACLS_FILE is where the ACLs are kept, in the broker's metadata folder.
ACLS_FILE = "acls.json"

_Op = AclOperation
#: _IMPLIES: an ALLOW of one of these operations also allows the key's (Kafka's
#: IMPLIES_DESCRIBE and IMPLIES_DESCRIBE_CONFIGS); a DENY implies nothing.
_IMPLIES = {
    _Op.DESCRIBE: frozenset({_Op.DESCRIBE, _Op.READ, _Op.WRITE, _Op.DELETE, _Op.ALTER}),
    _Op.DESCRIBE_CONFIGS: frozenset({_Op.DESCRIBE_CONFIGS, _Op.ALTER_CONFIGS}),
}
_ALLOW = AclPermissionType.ALLOW
_DENY = AclPermissionType.DENY
_LITERAL = ResourcePatternType.LITERAL
_PREFIXED = ResourcePatternType.PREFIXED


def _principal_type_and_name(principal: str) -> tuple[str, str] | None:
    i = principal.find(":")
    return None if i < 0 else (principal[:i], principal[i + 1 :])


class Authorizer:
    """Authorizer decides each action of a request and holds the ACLs. Not thread-safe: it
    lives on the broker's event loop.

    ``super_users`` are principal strings; ``allow_if_no_acl`` is
    ``allow.everyone.if.no.acl.found``; ``path`` is the ACL file (None: kept in memory only)."""

    def __init__(
        self, super_users: Iterable[str], allow_if_no_acl: bool, path: Path | None
    ) -> None:
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl
        self._path = path
        #: _acls are every binding, in the order they were created.
        self._acls: dict[AclBinding, None] = {}
        #: _literal and _prefixed index the bindings by resource type, then name.
        self._literal: dict[ResourceType, dict[str, list[AclBinding]]] = defaultdict(dict)
        self._prefixed: dict[ResourceType, dict[str, list[AclBinding]]] = defaultdict(dict)
        #: _prefix_lengths are the lengths of the PREFIXED names of each resource type, sorted;
        #: _length_counts how many names have each.
        self._prefix_lengths: dict[ResourceType, list[int]] = defaultdict(list)
        self._length_counts: dict[ResourceType, dict[int, int]] = defaultdict(dict)
        if path is not None and file_exists(path):
            for d in json.loads(read_text(path)).get("acls", []):
                self._add(AclBinding.from_dict(d))
            log.info("Loaded %d ACL(s) from %s", len(self._acls), path)

    # -- deciding -------------------------------------------------------------------------

    def authorize(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        """Whether ``principal`` connected from ``host`` (an IP) may do ``operation`` on the
        resource (a LITERAL name)."""
        if principal in self.super_users:
            return True
        found = False
        allowed = False
        literal = self._literal.get(resource_type)
        prefixed = self._prefixed.get(resource_type)
        sections: list[list[AclBinding]] = []
        if literal:
            exact = literal.get(name)
            if exact:
                sections.append(exact)
        if prefixed:
            # Each length some prefix has, not each prefix: a handful of lookups however many
            # PREFIXED ACLs there are.
            for n in self._prefix_lengths[resource_type]:
                if n > len(name):
                    break
                acls = prefixed.get(name[:n])
                if acls:
                    sections.append(acls)
        # The wildcard comes last: a DENY on the resource itself is found without it.
        if literal and name != WILDCARD:
            wild = literal.get(WILDCARD)
            if wild:
                sections.append(wild)
        for acls in sections:
            found = True
            for acl in acls:
                result = _decide(acl, principal, host, operation)
                if result is _DENY:
                    return False
                if result is _ALLOW:
                    allowed = True
        if allowed:
            return True
        return not found and self.allow_if_no_acl

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Whether ``principal`` may do ``operation`` on some resource of the type (Kafka's
        ``Authorizer.authorizeByResourceType``: an ALLOW on a name or prefix that no DENY of
        the same or a shorter prefix covers; any DENY on ``*`` denies)."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allow_literal: set[str] = set()
        allow_prefixed: set[str] = set()
        wildcard_allow = False
        for acl in self._acls:
            if acl.restype != resource_type:
                continue
            if acl.host != host and acl.host != WILDCARD:
                continue
            if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
                continue
            if acl.operation != operation and acl.operation != AclOperation.ALL:
                continue
            if acl.permission_type == _DENY:
                if acl.resource_pattern_type == _LITERAL:
                    if acl.name == WILDCARD:
                        return False
                    deny_literal.add(acl.name)
                elif acl.resource_pattern_type == _PREFIXED:
                    deny_prefixed.add(acl.name)
                continue
            if acl.resource_pattern_type == _LITERAL:
                if acl.name == WILDCARD:
                    wildcard_allow = True
                else:
                    allow_literal.add(acl.name)
            elif acl.resource_pattern_type == _PREFIXED:
                allow_prefixed.add(acl.name)
        if wildcard_allow:
            return True
        for pattern_type, names in ((_LITERAL, allow_literal), (_PREFIXED, allow_prefixed)):
            for allowed in names:
                if pattern_type == _LITERAL and allowed in deny_literal:
                    continue
                if not any(allowed[:i] in deny_prefixed for i in range(1, len(allowed) + 1)):
                    return True
        return False

    def authorized_operations(
        self, principal: str, host: str, resource_type: ResourceType, name: str
    ) -> int:
        """The operations ``principal`` may do on the resource, as the bit set the
        ``authorized_operations`` fields carry (Kafka's AuthHelper.authorizedOperations)."""
        bits = 0
        for op in supported_operations(resource_type):
            if self.authorize(principal, host, op, resource_type, name):
                bits |= 1 << op
        return bits

    # -- the ACLs ------------------------------------------------------------------------------

    def acls(self, flt: AclBindingFilter) -> list[AclBinding]:
        """The bindings ``flt`` selects."""
        return [b for b in self._acls if flt.matches(b)]

    def create(self, bindings: list[AclBinding]) -> list[errors.KafkaError | None]:
        """Add ``bindings``: one result per binding, None or its error (Kafka's AclApis and
        AclControlManager.validateNewAcl). A binding that exists already succeeds."""
        results: list[errors.KafkaError | None] = []
        changed = False
        for b in bindings:
            problem = validate_new_acl(b)
            if problem is not None:
                results.append(errors.InvalidRequest(problem))
                continue
            if b not in self._acls:
                self._add(b)
                changed = True
            results.append(None)
        if changed:
            self._save()
        return results

    def delete(self, filters: list[AclBindingFilter]) -> list[list[AclBinding] | errors.KafkaError]:
        """Remove the bindings each filter selects: per filter, those removed, or its error.
        A binding several filters select is listed under each."""
        results: list[list[AclBinding] | errors.KafkaError] = []
        doomed: dict[AclBinding, None] = {}
        for flt in filters:
            if flt.restype == ResourceType.UNKNOWN or (
                flt.resource_pattern_type == ResourcePatternType.UNKNOWN
            ):
                results.append(errors.InvalidRequest("Unknown patternFilter."))
                continue
            if (
                flt.operation == AclOperation.UNKNOWN
                or flt.permission_type == AclPermissionType.UNKNOWN
            ):
                results.append(errors.InvalidRequest("Unknown entryFilter."))
                continue
            matched = self.acls(flt)
            doomed.update(dict.fromkeys(matched))
            results.append(matched)
        if doomed:
            for b in doomed:
                self._remove(b)
            self._save()
        return results

    def _add(self, b: AclBinding) -> None:
        self._acls[b] = None
        index = self._literal if b.resource_pattern_type == _LITERAL else self._prefixed
        by_name = index[b.restype]
        if index is self._prefixed and b.name not in by_name:
            self._count_length(b.restype, len(b.name), 1)
        by_name.setdefault(b.name, []).append(b)

    def _remove(self, b: AclBinding) -> None:
        del self._acls[b]
        index = self._literal if b.resource_pattern_type == _LITERAL else self._prefixed
        by_name = index[b.restype]
        acls = by_name[b.name]
        acls.remove(b)
        if not acls:
            del by_name[b.name]
            if index is self._prefixed:
                self._count_length(b.restype, len(b.name), -1)

    def _count_length(self, resource_type: ResourceType, length: int, delta: int) -> None:
        counts = self._length_counts[resource_type]
        n = counts.get(length, 0) + delta
        if n:
            counts[length] = n
        else:
            del counts[length]
        if (n == 1 and delta == 1) or n == 0:
            self._prefix_lengths[resource_type] = sorted(counts)

    def _save(self) -> None:
        if self._path is None:
            return
        body = {"version": 1, "acls": [b.to_dict() for b in self._acls]}
        write_atomically(self._path, json.dumps(body, indent=1) + "\n")

    def __len__(self) -> int:
        return len(self._acls)


def _decide(
    acl: AclBinding, principal: str, host: str, operation: AclOperation
) -> AclPermissionType | None:
    """What ``acl`` says of the action (its resource already matched): ALLOW, DENY or None
    (Kafka's StandardAuthorizerData.findResult)."""
    if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
        return None
    if acl.host != WILDCARD and acl.host != host:
        return None
    if acl.operation != AclOperation.ALL:
        if acl.permission_type == _ALLOW:
            implied = _IMPLIES.get(operation)
            if implied is not None:
                if acl.operation not in implied:
                    return None
            elif acl.operation != operation:
                return None
        elif acl.operation != operation:
            return None
    return acl.permission_type


def validate_new_acl(b: AclBinding) -> str | None:
    """Why CreateAcls refuses ``b`` (INVALID_REQUEST), or None: Kafka's AclApis checks, then
    AclControlManager.validateNewAcl, in their order."""
    if b.restype == ResourceType.CLUSTER and b.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not b.name:
        return "Invalid empty resource name"
    if b.restype in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {b.restype.name}"
    if b.resource_pattern_type not in (_LITERAL, _PREFIXED):
        return f"Invalid patternType {b.resource_pattern_type.name}"
    if b.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {b.operation.name}"
    if b.permission_type not in (_ALLOW, _DENY):
        return f"Invalid permissionType {b.permission_type.name}"
    if _principal_type_and_name(b.principal) is None:
        return (
            f"Could not parse principal from `{b.principal}` (no colon is present separating "
            "the principal type from the principal name)"
        )
    return None


def authorizer_from_config(config: BrokerConfig) -> Authorizer | None:
    """The broker's Authorizer as its config asks (``authorizer.class.name``, ``super.users``,
    ``allow.everyone.if.no.acl.found``), or None when none is configured. Another class name
    raises ConfigError: kgroup serves Kafka's StandardAuthorizer only."""
    name = (config.get("authorizer.class.name") or "").strip()
    if not name:
        return None
    if name != STANDARD_AUTHORIZER:
        raise ConfigError(
            f"Invalid value {name} for configuration authorizer.class.name: kgroup's broker "
            f"serves {STANDARD_AUTHORIZER} only (or none: leave it empty)"
        )
    raw = config.get("super.users") or ""
    supers = [s.strip() for s in raw.split(";") if s.strip()]
    allow = bool(config.get("allow.everyone.if.no.acl.found"))
    return Authorizer(supers, allow, config.data_dir / ACLS_FILE)
