"""InitProducerId: v0-5. A producer id and epoch for an idempotent producer. v2 is flexible;
v3 lets a producer that knows its id and epoch ask for the next epoch (KIP-360), after an
error that left its sequence numbers unknown (for an idempotent producer Kafka answers with a
new id then); v4 and v5 change error codes of transactions.

Transactions are not served (no transaction coordinator): a transactional id is answered
with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, a fatal error for the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.INIT_PRODUCER_ID
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    body = request.body
    if body.transactional_id is not None:
        code = errors.TransactionalIdAuthorizationFailed.code
        return {"throttle_time_ms": 0, "error_code": code, "producer_id": -1, "producer_epoch": -1}
    # Kafka's transaction coordinator answers every idempotent (non-transactional) producer
    # with a new id and epoch 0, whatever id and epoch it names (v3+).
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "producer_id": state.producer_ids.next(),
        "producer_epoch": 0,
    }
