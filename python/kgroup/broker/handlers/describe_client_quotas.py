"""DescribeClientQuotas: v0-1. The client quotas of the entities a filter matches
(``kgroup.broker.quotas``): each component names an entity type and an exact name, the
type's default, or any name given; ``strict`` leaves out entities with other types. A bad
filter fails the whole request with INVALID_REQUEST (an unknown entity type with
UNSUPPORTED_VERSION), Kafka's message and null entries. v1 is flexible."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.quotas import QuotaError, UnsupportedEntityType, describe_entity
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_CLIENT_QUOTAS
VERSIONS = (0, 1)


def handle(ctx: RequestContext) -> dict[str, Any]:
    body = ctx.request.body
    components = [(c.entity_type, c.match_type, c.match) for c in body.components]
    try:
        found = ctx.state.quotas.describe(components, body.strict)
    except QuotaError as e:
        unsupported = isinstance(e, UnsupportedEntityType)
        code = errors.UnsupportedVersion.code if unsupported else errors.InvalidRequest.code
        return {
            "throttle_time_ms": 0,
            "error_code": code,
            "error_message": str(e),
            "entries": None,
        }
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "entries": [
            {
                "entity": describe_entity(entity),
                "values": [{"key": k, "value": v} for k, v in sorted(values.items())],
            }
            for entity, values in found
        ],
    }
