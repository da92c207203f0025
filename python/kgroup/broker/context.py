"""RequestContext: what a handler knows of one request.

A module of its own so that the server, which makes contexts, and the handlers, which read
them, each import it without importing the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from kgroup.acl import AclOperation, ResourceType

if TYPE_CHECKING:
    from kgroup.broker.quotas import MutationQuota
    from kgroup.broker.state import BrokerState, Peer
    from kgroup.protocol import Request

T = TypeVar("T")

__all__ = ["RequestContext"]


class RequestContext:
    """RequestContext is what a handler knows of a request: the broker's state, the decoded
    request and the connection it came on."""

    __slots__ = ("connection", "mutations", "request", "state")

    def __init__(self, state: BrokerState, request: Request, connection: Peer) -> None:
        self.state = state
        self.request = request
        self.connection = connection
        #: mutations is the request's controller mutation quota, once its handler asked for
        #: it (:meth:`mutation_quota`); the server throttles the client by it.
        self.mutations: MutationQuota | None = None

    def mutation_quota(self, strict_since: int) -> MutationQuota:
        """This request's ``controller_mutation_rate`` quota (KIP-599): strict from request
        version ``strict_since`` on (the versions that can answer THROTTLING_QUOTA_EXCEEDED),
        permissive before it (Kafka's ``ControllerMutationQuotaManager.newQuotaFor``)."""
        q = self.state.quotas.mutation_quota(
            self.connection.principal,
            self.request.client_id or "",
            self.request.api_version >= strict_since,
        )
        self.mutations = q
        return q

    def authorize(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        """Whether this request's principal may do ``operation`` on the resource: always when
        the broker has no authorizer (``authorizer.class.name`` empty)."""
        a = self.state.authorizer
        if a is None:
            return True
        c = self.connection
        return a.authorize(c.principal, c.client_address, operation, resource_type, name)

    def authorized(
        self,
        operation: AclOperation,
        resource_type: ResourceType,
        items: Iterable[T],
        name: Callable[[T], str],
    ) -> set[str]:
        """The names, of those ``items`` have, that this request's principal may do
        ``operation`` on (each name decided once; Kafka's AuthHelper.filterByAuthorized)."""
        names = {name(i) for i in items}
        a = self.state.authorizer
        if a is None:
            return names
        c = self.connection
        p, h = c.principal, c.client_address
        return {n for n in names if a.authorize(p, h, operation, resource_type, n)}

    def authorized_operations(self, resource_type: ResourceType, name: str) -> int:
        """The ``authorized_operations`` bit set of the resource for this request's principal:
        every operation the resource type has when the broker has no authorizer."""
        a = self.state.authorizer
        if a is None:
            from kgroup.acl import supported_operations

            return sum(1 << op for op in supported_operations(resource_type))
        c = self.connection
        return a.authorized_operations(c.principal, c.client_address, resource_type, name)
