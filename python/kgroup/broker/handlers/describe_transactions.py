"""DescribeTransactions: v0 (flexible). The state of transactional ids as their coordinator
holds them (KIP-664): state, timeout, start time, producer id and epoch, partitions;
TRANSACTIONAL_ID_NOT_FOUND for an id it does not know.

Served by the transaction coordinator (``kgroup.broker.coordinators.transactions``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_TRANSACTIONS
VERSIONS = (0, 0)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.transactions.handle(ctx.request)
