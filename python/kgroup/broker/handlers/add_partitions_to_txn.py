"""AddPartitionsToTxn: v0-5. Partitions a transaction is about to write to, added before the
first batch to each. v0-3 are the client's (one transaction); v4+ carry several transactions
and ``verify_only`` (KIP-890 part 1: partition leaders asking whether a partition is already
in its transaction); v2 answers PRODUCER_FENCED where v0-1 answer INVALID_PRODUCER_EPOCH; v3 is
flexible; v5 answers TRANSACTION_ABORTABLE.

Served by the transaction coordinator (``kgroup.broker.coordinators.transactions``), which
writes the response frame once the transaction's new partitions are durable in
``__transaction_state``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.ADD_PARTITIONS_TO_TXN
VERSIONS = (0, 5)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.transactions.handle(ctx.request)
