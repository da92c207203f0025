"""DescribeTransactions: v0 (flexible). The state of transactional ids as their coordinator
holds them (KIP-664): state, timeout, start time, producer id and epoch, partitions;
TRANSACTIONAL_ID_NOT_FOUND for an id it does not know.

Served by the transaction coordinator (``kgroup.broker.coordinators.transactions``).

With an authorizer (Kafka's KafkaApis.handleDescribeTransactionsRequest): a transactional id
the principal may not DESCRIBE answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED; the topics of a
transaction it may not DESCRIBE are left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.coordinated import then, to_transactions
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_TRANSACTIONS
VERSIONS = (0, 0)


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    if ctx.state.authorizer is None:
        return ctx.state.transactions.handle(ctx.request)
    ids = list(ctx.request.body.transactional_ids)
    allowed = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, ids, str)
    kept = [i for i in ids if i in allowed]

    def complete(response: dict[str, Any]) -> dict[str, Any]:
        answered = {s["transactional_id"]: s for s in response["transaction_states"]}
        states = []
        for i in ids:
            if i not in allowed:
                states.append(
                    {
                        "transactional_id": i,
                        "error_code": errors.TransactionalIdAuthorizationFailed.code,
                        "transaction_state": "",
                        "topics": [],
                    }
                )
                continue
            s = answered[i]
            s["topics"] = [
                t
                for t in s["topics"]
                if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t["topic"])
            ]
            states.append(s)
        response["transaction_states"] = states
        return response

    if not kept:
        return complete({"transaction_states": []})
    return then(ctx, to_transactions(ctx, {"transactional_ids": kept}), complete)
