"""ListConfigResources: v0-1 (flexible from v0). The config resources the broker knows, as
Kafka 4.1's KafkaApis.handleListConfigResources lists them: v0 (Kafka's
ListClientMetricsResources) client metrics resources only; v1 (KIP-1142) the types asked, or
all it supports when none is: groups with configs of their own, client metrics resources
(kgroup has none: it does not take client metrics, KIP-714), this broker as a broker logger and
as a broker, and every topic. A type it does not support fails the request with
UNSUPPORTED_VERSION. ``kafka-configs.sh --describe --entity-type groups`` (no name) lists the
groups this way.

With an authorizer, DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.LIST_CONFIG_RESOURCES
VERSIONS = (0, 1)

#: Kafka's ConfigResource.Type ids.
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
#: _SUPPORTED: what each version may ask for (ListConfigResourcesRequest.supportedResourceTypes).
_SUPPORTED = {0: (CLIENT_METRICS,), 1: (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)}


def _answer(code: int, resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "config_resources": resources}


def handle(ctx: RequestContext) -> dict[str, Any]:
    if not ctx.authorize(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME):
        return _answer(errors.ClusterAuthorizationFailed.code, [])
    version = ctx.request.api_version
    supported = _SUPPORTED[min(version, 1)]
    asked = list(ctx.request.body.resource_types) if version >= 1 else []
    types = set(asked or supported)
    if not types <= set(supported):
        return _answer(errors.UnsupportedVersion.code, [])
    state = ctx.state
    found: list[tuple[str, int]] = []
    if GROUP in types:
        found += [(g, GROUP) for g in state.groups.configs.raw]
    # CLIENT_METRICS: none (kgroup takes no client metrics subscriptions).
    node = str(state.node_id)
    if BROKER_LOGGER in types:
        found.append((node, BROKER_LOGGER))
    if BROKER in types:
        found.append((node, BROKER))
    if TOPIC in types:
        found += [(t, TOPIC) for t in state.topics.by_name]
    return _answer(0, [{"resource_name": n, "resource_type": t} for n, t in found])
