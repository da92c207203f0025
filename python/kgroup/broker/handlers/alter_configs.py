"""AlterConfigs: v0-2. Replace the whole set of config overrides of topics (configs left out
return to their defaults), or with validate_only only check it. v1 changes throttling; v2 is
flexible. Deprecated by IncrementalAlterConfigs, which most admin clients use now."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.config import ConfigError
from kgroup.broker.handlers.incremental_alter_configs import BROKER, TOPIC, broker_resource
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.server import RequestContext

API_KEY = ApiKey.ALTER_CONFIGS
VERSIONS = (0, 2)


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, body = ctx.state, ctx.request.body
    keys = [(r.resource_type, r.resource_name) for r in body.resources]
    responses = []
    for r in body.resources:
        out: dict[str, Any] = {
            "resource_type": r.resource_type,
            "resource_name": r.resource_name,
            "error_code": 0,
            "error_message": None,
        }
        try:
            if keys.count((r.resource_type, r.resource_name)) > 1:
                raise errors.InvalidRequest("Duplicate resource in request")
            if r.resource_type == TOPIC:
                topic = state.topics.by_name.get(r.resource_name)
                if topic is None:
                    raise errors.UnknownTopicOrPartition(
                        f"The topic '{r.resource_name}' does not exist."
                    )
                try:
                    configs = state.config.validate_topic_configs(
                        (c.name, c.value) for c in r.configs
                    )
                except ConfigError as e:
                    raise errors.InvalidConfig(str(e)) from None
                if not body.validate_only:
                    state.topics.alter_configs(topic, configs)
            elif r.resource_type == BROKER:
                broker_resource(state, r.resource_name, [c.name for c in r.configs])
            else:
                raise errors.InvalidRequest(f"Unsupported resource type {r.resource_type}")
        except errors.KafkaError as e:
            out["error_code"], out["error_message"] = e.code, str(e)
        responses.append(out)
    return {"throttle_time_ms": 0, "responses": responses}
