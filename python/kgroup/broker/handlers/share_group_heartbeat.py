"""ShareGroupHeartbeat: v1. KIP-932's share group membership: a member joins (epoch 0, with
the member id it made), keeps its session, learns its assignment (partitions whose share state
is initialized, computed by the coordinator's ``simple`` assignor; many members may share a
partition); epoch -1 leaves. v1 (Kafka 4.1) is the first stable version (4.0's v0 is gone).
Every version is flexible.

Served behind ``group.share.enable`` with ShareFetch and ShareAcknowledge (off: UNSUPPORTED_VERSION,
and ApiVersions does not list it), by the group coordinator (``kgroup.broker.coordinators.groups``),
which writes the response frame.

With an authorizer the principal must be allowed to READ the group (else
GROUP_AUTHORIZATION_FAILED) and to DESCRIBE every topic it subscribes to (else
TOPIC_AUTHORIZATION_FAILED), as Kafka 4.2's KafkaApis.handleShareGroupHeartbeat checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.handlers.api_versions import share_enabled
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.SHARE_GROUP_HEARTBEAT
VERSIONS = (1, 1)
#: PROTOCOL: listed in ApiVersions only while share groups are on (``api_versions``).
PROTOCOL = "share"


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes] | dict[str, Any]:
    state = ctx.state
    if not share_enabled(state.config):
        return {"error_code": errors.UnsupportedVersion.code}
    if state.authorizer is not None:
        body = ctx.request.body
        if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, body.group_id):
            return {"error_code": errors.GroupAuthorizationFailed.code}
        names = body.subscribed_topic_names
        if names:
            allowed = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, names, str)
            if len(allowed) < len(set(names)):
                return {"error_code": errors.TopicAuthorizationFailed.code}
    return state.groups.handle(ctx)
