"""AddOffsetsToTxn: v0-4. A transaction is about to commit a group's offsets: the group's
``__consumer_offsets`` partition joins the transaction. v2 answers PRODUCER_FENCED where v0-1
answer INVALID_PRODUCER_EPOCH; v3 is flexible; v4 answers TRANSACTION_ABORTABLE.

Served by the transaction coordinator (``kgroup.broker.coordinators.transactions``).

With an authorizer, the principal needs WRITE on the transactional id (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and READ on the group (else GROUP_AUTHORIZATION_FAILED),
as Kafka's KafkaApis.handleAddOffsetsToTxnRequest checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.ADD_OFFSETS_TO_TXN
VERSIONS = (0, 4)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes] | dict[str, Any]:
    body = ctx.request.body
    if ctx.state.authorizer is not None:
        if not ctx.authorize(
            AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id
        ):
            return {"error_code": errors.TransactionalIdAuthorizationFailed.code}
        if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, body.group_id):
            return {"error_code": errors.GroupAuthorizationFailed.code}
    return ctx.state.transactions.handle(ctx.request)
