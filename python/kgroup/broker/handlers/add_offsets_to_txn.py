"""AddOffsetsToTxn: v0-4. A transaction is about to commit a group's offsets: the group's
``__consumer_offsets`` partition joins the transaction. v2 answers PRODUCER_FENCED where v0-1
answer INVALID_PRODUCER_EPOCH; v3 is flexible; v4 answers TRANSACTION_ABORTABLE.

Served by the transaction coordinator (``kgroup.broker.coordinators.transactions``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.ADD_OFFSETS_TO_TXN
VERSIONS = (0, 4)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.transactions.handle(ctx.request)
