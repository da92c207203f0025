"""RequestContext: what a handler knows of one request.

A module of its own so that the server, which makes contexts, and the handlers, which read
them, each import it without importing the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgroup.broker.state import BrokerState, Peer
    from kgroup.protocol import Request

__all__ = ["RequestContext"]


class RequestContext:
    """RequestContext is what a handler knows of a request: the broker's state, the decoded
    request and the connection it came on."""

    __slots__ = ("connection", "request", "state")

    def __init__(self, state: BrokerState, request: Request, connection: Peer) -> None:
        self.state = state
        self.request = request
        self.connection = connection
