"""EndTxn: v0-4. Commit or abort a transaction. Answered once its PrepareCommit or
PrepareAbort is durable in ``__transaction_state``, as Kafka answers it; the markers follow,
and until they are all written the producer's next transaction request gets
CONCURRENT_TRANSACTIONS. v2 answers PRODUCER_FENCED where v0-1 answer INVALID_PRODUCER_EPOCH;
v3 is flexible; v4 answers TRANSACTION_ABORTABLE. (Kafka 4.0's v5, transaction protocol 2,
is not served: this broker advertises no ``transaction.version`` feature.)

Served by the transaction coordinator (``kgroup.broker.coordinators.transactions``).

With an authorizer, the principal needs WRITE on the transactional id (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), as Kafka's KafkaApis.handleEndTxnRequest checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.END_TXN
VERSIONS = (0, 4)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes] | dict[str, Any]:
    if ctx.state.authorizer is not None and not ctx.authorize(
        AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, ctx.request.body.transactional_id
    ):
        return {"error_code": errors.TransactionalIdAuthorizationFailed.code}
    return ctx.state.transactions.handle(ctx.request)
