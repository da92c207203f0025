"""ListTransactions: v0-1 (flexible). The transactions the coordinator holds, filtered by
state and producer id (KIP-664), and from v1 by how long they have been open (KIP-994);
unknown state names are echoed back.

Served by the transaction coordinator (``kgroup.broker.coordinators.transactions``).

With an authorizer, only the transactions whose transactional id the principal may DESCRIBE are
listed (Kafka's KafkaApis.handleListTransactionsRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.coordinated import then
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.LIST_TRANSACTIONS
VERSIONS = (0, 1)


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    answer = ctx.state.transactions.handle(ctx.request)
    if ctx.state.authorizer is None:
        return answer

    def keep(response: dict[str, Any]) -> dict[str, Any]:
        states = response["transaction_states"]
        allowed = ctx.authorized(
            AclOperation.DESCRIBE,
            ResourceType.TRANSACTIONAL_ID,
            states,
            lambda s: s["transactional_id"],
        )
        response["transaction_states"] = [s for s in states if s["transactional_id"] in allowed]
        return response

    return then(ctx, answer, keep)
