"""DescribeAcls: v0-3. The ACL bindings matching one filter, grouped by resource pattern. v1
adds the pattern type (v0 asks for LITERAL; its ANY is read as LITERAL, as Kafka normalises
it); v2 is flexible; v3 admits the USER resource type. Kafka 4.0 removed v0; kgroup serves it.

Needs DESCRIBE on the cluster (else CLUSTER_AUTHORIZATION_FAILED). Without an authorizer the
answer is SECURITY_DISABLED, as Kafka's AclApis gives it. A filter with an unknown code is a
request Kafka cannot parse: the connection is closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import (
    CLUSTER_NAME,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    ResourcePatternType,
    ResourceType,
)
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_ACLS
VERSIONS = (0, 3)


def binding_filter(f: Any, version: int) -> AclBindingFilter:
    """The filter of a DescribeAcls request or a DeleteAcls filter entry; InvalidRequest for one
    Kafka's request parsing refuses (an UNKNOWN code; a v0 pattern type other than LITERAL or
    ANY, which v0 reads as LITERAL)."""
    flt = AclBindingFilter(
        f.resource_type_filter,
        f.resource_name_filter,
        f.pattern_type_filter if version >= 1 else ResourcePatternType.LITERAL,
        f.principal_filter,
        f.host_filter,
        f.operation,
        f.permission_type,
    )
    if version == 0 and flt.resource_pattern_type == ResourcePatternType.ANY:
        flt = AclBindingFilter(
            flt.restype,
            flt.name,
            ResourcePatternType.LITERAL,
            flt.principal,
            flt.host,
            flt.operation,
            flt.permission_type,
        )
    if 0 in (flt.restype, flt.resource_pattern_type, flt.operation, flt.permission_type):
        raise errors.InvalidRequest(f"The filter contains UNKNOWN elements: {flt}")
    return flt


def resources(bindings: list[AclBinding]) -> list[dict[str, Any]]:
    """Bindings grouped by resource pattern, as DescribeAcls answers them."""
    by_pattern: dict[tuple[int, str, int], list[dict[str, Any]]] = {}
    for b in bindings:
        by_pattern.setdefault((b.restype, b.name, b.resource_pattern_type), []).append(
            {
                "principal": b.principal,
                "host": b.host,
                "operation": int(b.operation),
                "permission_type": int(b.permission_type),
            }
        )
    return [
        {"resource_type": t, "resource_name": n, "pattern_type": p, "acls": acls}
        for (t, n, p), acls in by_pattern.items()
    ]


def handle(ctx: RequestContext) -> dict[str, Any] | None:
    authorizer = ctx.state.authorizer
    # Kafka leaves the message of an answer without error at the field's default, "".
    out: dict[str, Any] = {"throttle_time_ms": 0, "error_code": 0, "error_message": ""}
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        out["error_code"] = errors.ClusterAuthorizationFailed.code
        out["error_message"] = "Request needs DESCRIBE permission on the cluster."
        out["resources"] = []
        return out
    if authorizer is None:
        out["error_code"] = errors.SecurityDisabled.code
        out["error_message"] = "No Authorizer is configured on the broker"
        out["resources"] = []
        return out
    try:
        flt = binding_filter(ctx.request.body, ctx.request.api_version)
    except errors.InvalidRequest as e:
        ctx.connection.close_for(e)
        return None
    out["resources"] = resources(authorizer.acls(flt))
    return out
