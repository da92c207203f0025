"""InitProducerId: v0-5. A producer id and epoch for an idempotent or transactional producer.
v2 is flexible; v3 lets a producer that knows its id and epoch ask for the next epoch
(KIP-360), after an error that left its sequence numbers unknown (for an idempotent producer
Kafka answers with a new id then); v4 answers PRODUCER_FENCED where older versions answer
INVALID_PRODUCER_EPOCH; v5 answers TRANSACTION_ABORTABLE.

With a transactional id the request is the transaction coordinator's
(``kgroup.broker.coordinators.transactions``): the id's producer id and a bumped epoch, which
fences its older producers and aborts their open transaction; the answer comes once that is
durable in ``__transaction_state``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.INIT_PRODUCER_ID
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> dict[str, Any] | bytes | asyncio.Future[bytes]:
    state, request = ctx.state, ctx.request
    if request.body.transactional_id is not None:
        return state.transactions.handle(request)
    # Kafka's transaction coordinator answers every idempotent (non-transactional) producer
    # with a new id and epoch 0, whatever id and epoch it names (v3+).
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "producer_id": state.producer_ids.next(),
        "producer_epoch": 0,
    }
