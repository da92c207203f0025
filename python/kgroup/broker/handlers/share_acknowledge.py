"""ShareAcknowledge: v1-2. A share group member acknowledges records it was given, without
fetching. v1 is the first stable version (Kafka 4.1); v2 (4.2) adds IsRenewAck (type 4 renews
locks, KIP-1222) and AcquisitionLockTimeoutMs in the response.

Served behind ``group.share.enable`` (off: UNSUPPORTED_VERSION), as Kafka 4.2's
``KafkaApis.handleShareAcknowledgeRequest``: READ on the group, a 1-36 character member id
(INVALID_REQUEST), then the session (``SharePartitionManager.acknowledgeSessionUpdate``): epoch
0 is INVALID_SHARE_SESSION_EPOCH (it cannot open a session), no session
SHARE_SESSION_NOT_FOUND, another epoch INVALID_SHARE_SESSION_EPOCH; a matching epoch moves the
session on. Each partition is answered with its acknowledgements' outcome
(``kgroup.broker.share.acks``). Epoch -1 then closes the session and releases the member's
records in its partitions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.handlers.share_fetch import top_level_error, valid_member
from kgroup.broker.share.acks import acknowledge, merged_partitions
from kgroup.broker.share.sessions import FINAL_EPOCH
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.SHARE_ACKNOWLEDGE
VERSIONS = (1, 2)
#: PROTOCOL: listed in ApiVersions only while share groups are on (``api_versions``).
PROTOCOL = "share"


def handle(ctx: RequestContext) -> dict[str, Any]:
    shares = ctx.state.shares
    if not shares.enabled:
        return top_level_error(errors.UnsupportedVersion())
    version = ctx.request.api_version
    body = ctx.request.body
    group = body.group_id or ""
    member = body.member_id or ""
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group):
        return top_level_error(errors.GroupAuthorizationFailed())
    if not valid_member(member):
        return top_level_error(errors.InvalidRequest("Invalid member id in the request."))
    epoch = body.share_session_epoch
    try:
        shares.sessions.acknowledge(group, member, epoch)
    except errors.KafkaError as e:
        return top_level_error(e)
    renew = version >= 2 and bool(body.is_renew_ack)
    results = acknowledge(ctx, group, member, merged_partitions(body.topics), version >= 2, renew)
    if epoch == FINAL_EPOCH:
        shares.close_session(group, member)
    topics: dict[Any, list[dict[str, Any]]] = {}
    for (topic_id, index), (code, message) in results.items():
        topics.setdefault(topic_id, []).append(
            {
                "partition_index": index,
                "error_code": code,
                "error_message": message,
                "current_leader": {"leader_id": -1, "leader_epoch": -1},
            }
        )
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "acquisition_lock_timeout_ms": shares.lock_duration_ms(group),
        "responses": [{"topic_id": t, "partitions": ps} for t, ps in topics.items()],
        "node_endpoints": [],
    }
