"""ListTransactions: v0-1 (flexible). The transactions the coordinator holds, filtered by
state and producer id (KIP-664), and from v1 by how long they have been open (KIP-994);
unknown state names are echoed back.

Served by the transaction coordinator (``kgroup.broker.coordinators.transactions``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.LIST_TRANSACTIONS
VERSIONS = (0, 1)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.transactions.handle(ctx.request)
