"""Authorisation around the coordinators' apis: their requests narrowed, their answers completed.

The group and transaction coordinators (Rust) decode their requests and write whole response
frames. With an authorizer, a handler checks a request first, as Kafka's KafkaApis does before
it calls its coordinator: a request refused whole is answered here; one refused in part goes on
without the refused topics or groups (:func:`to_groups`, :func:`to_transactions`, with a new
body), and their errors are merged into the coordinator's answer (:func:`then`, which decodes the
frame, lets a function complete the body, and leaves the server to encode it again). Only with
an authorizer: without one the server hands the group apis' raw frames straight to Rust.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from kgroup import protocol

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

__all__ = ["Answer", "then", "to_groups", "to_transactions"]

#: Answer is what a coordinator gives: a response frame, now or later.
Answer = bytes | asyncio.Future[bytes]


def to_groups(ctx: RequestContext, body: dict[str, Any]) -> Answer:
    """The group coordinator's answer to this request with ``body`` in place of its own."""
    r = ctx.request
    frame = protocol.encode_request(
        r.api_key, r.api_version, r.correlation_id, r.client_id, body, tagged_fields=r.tagged_fields
    )
    return ctx.state.groups.handle_frame(frame[4:], ctx.connection.client_host)


def to_transactions(ctx: RequestContext, body: dict[str, Any]) -> Answer:
    """The transaction coordinator's answer to this request with ``body`` in place of its own."""
    r = ctx.request
    request = protocol.Request(
        r.api_key, r.api_version, r.correlation_id, r.client_id, body, r.tagged_fields
    )
    return ctx.state.transactions.handle(request)


def then(
    ctx: RequestContext, answer: Answer, complete: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """The coordinator's ``answer`` decoded and passed through ``complete``: the body to send,
    now or once the coordinator answers."""
    r = ctx.request

    def apply(frame: bytes) -> dict[str, Any]:
        response = protocol.decode_response(r.api_key, r.api_version, frame[4:])
        return complete(response.body.to_dict())

    if isinstance(answer, bytes):
        return apply(answer)

    async def later() -> dict[str, Any]:
        return apply(await answer)

    return later()
