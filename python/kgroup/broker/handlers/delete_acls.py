"""DeleteAcls: v0-3. Remove the ACL bindings matching each filter, answering each filter with
the bindings it removed. v1 adds the pattern type (v0 matches LITERAL; its ANY is read as
LITERAL); v2 is flexible; v3 admits the USER resource type. Kafka 4.0 removed v0; kgroup serves
it.

Needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED for every filter). Without an
authorizer every filter answers SECURITY_DISABLED. A filter with an unknown code is a request
Kafka cannot parse: the connection is closed. What is removed is written to ``acls.json``
before the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.broker.handlers.describe_acls import binding_filter
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DELETE_ACLS
VERSIONS = (0, 3)


def handle(ctx: RequestContext) -> dict[str, Any] | None:
    authorizer = ctx.state.authorizer
    request = ctx.request
    entries = request.body.filters

    def every(e: errors.KafkaError, message: str) -> dict[str, Any]:
        result = {"error_code": e.code, "error_message": message, "matching_acls": []}
        return {"throttle_time_ms": 0, "filter_results": [dict(result) for _ in entries]}

    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return every(
            errors.ClusterAuthorizationFailed(), "Request needs ALTER permission on the cluster."
        )
    if authorizer is None:
        return every(errors.SecurityDisabled(), "No Authorizer is configured.")
    try:
        filters = [binding_filter(f, request.api_version) for f in entries]
    except errors.InvalidRequest as e:
        ctx.connection.close_for(e)
        return None
    results = []
    for r in authorizer.delete(filters):
        if isinstance(r, errors.KafkaError):
            results.append({"error_code": r.code, "error_message": str(r), "matching_acls": []})
            continue
        results.append(
            {
                "error_code": 0,
                "error_message": None,
                "matching_acls": [
                    {
                        "error_code": 0,
                        "error_message": None,
                        "resource_type": int(b.restype),
                        "resource_name": b.name,
                        "pattern_type": int(b.resource_pattern_type),
                        "principal": b.principal,
                        "host": b.host,
                        "operation": int(b.operation),
                        "permission_type": int(b.permission_type),
                    }
                    for b in r
                ],
            }
        )
    return {"throttle_time_ms": 0, "filter_results": results}
