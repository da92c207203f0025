"""InitProducerId: v0-5. A producer id and epoch for an idempotent or transactional producer.
v2 is flexible; v3 lets a producer that knows its id and epoch ask for the next epoch
(KIP-360), after an error that left its sequence numbers unknown (for an idempotent producer
Kafka answers with a new id then); v4 answers PRODUCER_FENCED where older versions answer
INVALID_PRODUCER_EPOCH; v5 answers TRANSACTION_ABORTABLE.

With a transactional id the request is the transaction coordinator's
(``kgroup.broker.coordinators.transactions``): the id's producer id and a bumped epoch, which
fences its older producers and aborts their open transaction; the answer comes once that is
durable in ``__transaction_state``.

With an authorizer (Kafka's KafkaApis.handleInitProducerIdRequest): a transactional producer
needs WRITE on its transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent
one IDEMPOTENT_WRITE on the cluster or WRITE on some topic (else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.INIT_PRODUCER_ID
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> dict[str, Any] | bytes | asyncio.Future[bytes]:
    state, request = ctx.state, ctx.request
    txn_id = request.body.transactional_id
    if state.authorizer is not None:
        refused = _refused(ctx, txn_id)
        if refused is not None:
            return {"error_code": refused.code, "producer_id": -1, "producer_epoch": -1}
    if txn_id is not None:
        return state.transactions.handle(request)
    # Kafka's transaction coordinator answers every idempotent (non-transactional) producer
    # with a new id and epoch 0, whatever id and epoch it names (v3+).
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "producer_id": state.producer_ids.next(),
        "producer_epoch": 0,
    }


def _refused(ctx: RequestContext, txn_id: str | None) -> errors.KafkaError | None:
    if txn_id is not None:
        if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id):
            return errors.TransactionalIdAuthorizationFailed()
        return None
    if ctx.authorize(AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME):
        return None
    a, c = ctx.state.authorizer, ctx.connection
    assert a is not None
    if a.authorize_by_resource_type(
        c.principal, c.client_address, AclOperation.WRITE, ResourceType.TOPIC
    ):
        return None
    return errors.ClusterAuthorizationFailed()
