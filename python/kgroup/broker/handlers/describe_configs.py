"""DescribeConfigs: v0-4. The configs of topics and of the broker. v1 adds each config's
source and synonyms (replacing v0's is_default); v3 adds its type and documentation; v4 is
flexible.

Resource types: TOPIC (2), BROKER (4: this node's id, with its dynamic configs first, or ""
for the cluster-wide dynamic defaults, min.insync.replicas always among them as a Kafka 4
KRaft cluster has it; see ``kgroup.broker.dynamic_config``) and GROUP (32: a group's
configs, KIP-848, whether or not the group exists; see ``kgroup.broker.group_configs``). Others
are answered with INVALID_REQUEST.

With an authorizer (Kafka's ConfigHelper): DESCRIBE_CONFIGS on the cluster for the broker
(else CLUSTER_AUTHORIZATION_FAILED), on the topic or group for theirs (TOPIC_ or
GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation
from kgroup.broker import config_entries, group_configs
from kgroup.broker.handlers.incremental_alter_configs import config_denied
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_CONFIGS
VERSIONS = (0, 4)

TOPIC = 2
BROKER = 4
GROUP = 32
#: KNOWN_TYPES are the resource types Kafka's ConfigResource.Type knows; another one fails the
#: whole request, as Kafka's request parsing does.
KNOWN_TYPES = frozenset({2, 4, 8, 16, 32})


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    version = request.api_version
    body = request.body
    synonyms = version >= 1 and body.include_synonyms
    documentation = version >= 3 and body.include_documentation
    results = []
    if any(r.resource_type not in KNOWN_TYPES for r in body.resources):
        return {
            "throttle_time_ms": 0,
            "results": [
                {
                    "resource_type": r.resource_type,
                    "resource_name": r.resource_name,
                    "error_code": errors.InvalidRequest.code,
                    "error_message": errors.InvalidRequest.message,
                    "configs": [],
                }
                for r in body.resources
            ],
        }
    for r in body.resources:
        result: dict[str, Any] = {
            "resource_type": r.resource_type,
            "resource_name": r.resource_name,
            "error_code": 0,
            # Kafka leaves the message at its spec default, "", when there is no error.
            "error_message": "",
            "configs": [],
        }
        keys = r.configuration_keys
        try:
            denied = config_denied(
                ctx, AclOperation.DESCRIBE_CONFIGS, r.resource_type, r.resource_name
            )
            if denied is not None:
                raise denied
            if r.resource_type == TOPIC:
                topic = state.topics.by_name.get(r.resource_name)
                if topic is None:
                    # Kafka answers an unknown topic without a message.
                    raise errors.UnknownTopicOrPartition("")
                entries = config_entries.topic_entries(
                    state, topic.configs, keys, synonyms, documentation
                )
            elif r.resource_type == BROKER:
                if r.resource_name not in ("", str(state.node_id)):
                    raise errors.InvalidRequest(
                        f"Unexpected broker id, expected {state.node_id} or empty string, "
                        f"but received {r.resource_name}"
                    )
                entries = config_entries.broker_entries(
                    state, keys, synonyms, documentation, cluster_default=not r.resource_name
                )
            elif r.resource_type == GROUP:
                if not r.resource_name:
                    raise errors.InvalidRequest("Group name must not be empty")
                entries = group_configs.describe(
                    state.config,
                    state.groups.configs.parsed(r.resource_name),
                    keys,
                    synonyms,
                    documentation,
                )
            else:
                raise errors.InvalidRequest(f"Unsupported resource type {r.resource_type}")
        except errors.KafkaError as e:
            result["error_code"], result["error_message"] = e.code, str(e)
            results.append(result)
            continue
        for entry in entries:
            if version >= 1:
                del entry["is_default"]
            else:
                del entry["config_source"], entry["synonyms"]
        result["configs"] = entries
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}
