"""TxnOffsetCommit: v0-4. Offsets committed inside a transaction, sent to the group's
coordinator: written to ``__consumer_offsets`` in the producer's transactional batch and kept
pending, invisible to OffsetFetch, until the transaction's marker commits or aborts them. v2
adds leader epochs; v3 the member id, generation and group instance id, checked as a commit's
(KIP-447), and flexible versions; v4 answers TRANSACTION_ABORTABLE.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame once the records are durable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.TXN_OFFSET_COMMIT
VERSIONS = (0, 4)


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
