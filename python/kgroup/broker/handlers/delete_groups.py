"""DeleteGroups: v0-2. Delete groups and their offsets; only an Empty group can go, any other
is refused with NON_EMPTY_GROUP, an unknown one with GROUP_ID_NOT_FOUND. v1 changes only
throttling; v2 is flexible.

Served by the group coordinator (``kgroup.broker.coordinators.groups``), which writes the
response frame.

With an authorizer, a group the principal may not DELETE answers GROUP_AUTHORIZATION_FAILED and
is left alone (Kafka's KafkaApis.handleDeleteGroupsRequest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.coordinated import then, to_groups
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DELETE_GROUPS
VERSIONS = (0, 2)


def handle(
    ctx: RequestContext,
) -> bytes | asyncio.Future[bytes] | dict[str, Any] | Awaitable[dict[str, Any]]:
    if ctx.state.authorizer is None:
        return ctx.state.groups.handle(ctx)
    names = list(ctx.request.body.groups_names)
    allowed = ctx.authorized(AclOperation.DELETE, ResourceType.GROUP, names, str)
    refused = [
        {"group_id": g, "error_code": errors.GroupAuthorizationFailed.code}
        for g in dict.fromkeys(names)
        if g not in allowed
    ]
    if not refused:
        return ctx.state.groups.handle(ctx)
    kept = [g for g in names if g in allowed]
    if not kept:
        return {"results": refused}

    def merge(response: dict[str, Any]) -> dict[str, Any]:
        response["results"] = response["results"] + refused
        return response

    return then(ctx, to_groups(ctx, {"groups_names": kept}), merge)
