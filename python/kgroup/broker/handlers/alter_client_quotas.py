"""AlterClientQuotas: v0-1. Set or remove client quotas (``kgroup.broker.quotas``), or with
``validate_only`` only check them. Each entity gets its own result, with Kafka's
INVALID_REQUEST messages for a bad entity, key or value; the good ones apply and are kept in
``client-quotas.json``. v1 is flexible."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.quotas import describe_entity
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.ALTER_CLIENT_QUOTAS
VERSIONS = (0, 1)


def handle(ctx: RequestContext) -> dict[str, Any]:
    body = ctx.request.body
    entries = [
        (
            tuple((e.entity_type, e.entity_name) for e in entry.entity),
            [(op.key, op.value, op.remove) for op in entry.ops],
        )
        for entry in body.entries
    ]
    results = ctx.state.quotas.alter(entries, body.validate_only)
    return {
        "throttle_time_ms": 0,
        "entries": [
            {
                "error_code": 0 if error is None else errors.InvalidRequest.code,
                "error_message": None if error is None else str(error),
                "entity": describe_entity(entity),
            }
            for entity, error in results
        ],
    }
