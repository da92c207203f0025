"""CreateAcls: v0-3. Add ACL bindings: one result per binding, in request order. v1 adds the
pattern type (v0 creates LITERAL ones); v2 is flexible; v3 admits the USER resource type. Kafka
4.0 removed v0; kgroup serves it.

Needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED for every binding). Without an
authorizer every binding answers SECURITY_DISABLED. A binding Kafka refuses (a CLUSTER resource
not named ``kafka-cluster``, an empty name, ANY or MATCH where a binding needs a value, a
principal without a type) answers INVALID_REQUEST with Kafka's message; one that exists
already succeeds (its message "", the field's default, as Kafka leaves it). A binding with ANY
or MATCH in it fails the whole request with UNKNOWN_SERVER_ERROR, as Kafka cannot build it. A
binding with an unknown code, or a v0 one not LITERAL, is a request Kafka cannot parse: the
connection is closed. The bindings are written to ``acls.json`` before the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import (
    CLUSTER_NAME,
    AclBinding,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.CREATE_ACLS
VERSIONS = (0, 3)


def _not_a_binding(b: AclBinding) -> bool:
    return (
        b.restype == ResourceType.ANY
        or b.resource_pattern_type in (ResourcePatternType.ANY, ResourcePatternType.MATCH)
        or b.operation == AclOperation.ANY
        or b.permission_type == AclPermissionType.ANY
    )


def handle(ctx: RequestContext) -> dict[str, Any] | None:
    authorizer = ctx.state.authorizer
    request = ctx.request
    creations = request.body.creations

    def every(e: errors.KafkaError, message: str | None) -> dict[str, Any]:
        result = {"error_code": e.code, "error_message": message}
        return {"throttle_time_ms": 0, "results": [result for _ in creations]}

    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return every(
            errors.ClusterAuthorizationFailed(), "Request needs ALTER permission on the cluster."
        )
    if authorizer is None:
        return every(errors.SecurityDisabled(), "No Authorizer is configured.")
    bindings = [
        AclBinding(
            c.resource_type,
            c.resource_name,
            c.resource_pattern_type if request.api_version >= 1 else ResourcePatternType.LITERAL,
            c.principal,
            c.host,
            c.operation,
            c.permission_type,
        )
        for c in creations
    ]
    for b in bindings:
        if 0 in (b.restype, b.resource_pattern_type, b.operation, b.permission_type):
            ctx.connection.close_for(
                errors.InvalidRequest(f"CreatableAcls contain unknown elements: {b}")
            )
            return None
    if any(_not_a_binding(b) for b in bindings):
        # Kafka cannot even make the binding (ResourcePattern and AccessControlEntry refuse
        # ANY and MATCH): the whole request fails, UNKNOWN_SERVER_ERROR without a message.
        return every(errors.UnknownServerError(), None)
    results = authorizer.create(bindings)
    return {
        "throttle_time_ms": 0,
        "results": [
            {"error_code": 0, "error_message": ""}
            if e is None
            else {"error_code": e.code, "error_message": str(e)}
            for e in results
        ],
    }
