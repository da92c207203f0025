"""IncrementalAlterConfigs: v0-1. Change some configs of topics and groups (SET, DELETE, APPEND
to and SUBTRACT from a list), or with validate_only only check the change. v1 is flexible.

Topic configs take effect at once on the topic's logs. Group configs (resource type 32,
KIP-848) are checked whole after the change as Kafka's ``GroupConfig.validate`` checks them,
kept durably, and read by the group's members at their next heartbeat; Kafka refuses APPEND and
SUBTRACT on every group config, lists included, and so does kgroup. The broker's dynamic
configs (resource name: this node's id, or "" for the cluster's defaults) change as
``kgroup.broker.dynamic_config`` says; its static ones are refused as Kafka refuses them.

With an authorizer (Kafka's ControllerApis.authorizeAlterResource): ALTER_CONFIGS on the
cluster for the broker, on the topic or group for theirs, else CLUSTER_, TOPIC_ or
GROUP_AUTHORIZATION_FAILED (AlterConfigs alike).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.broker import dynamic_config, group_configs
from kgroup.broker.config import TOPIC_CONFIGS, ConfigError, ConfigType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext
    from kgroup.broker.coordinators.groups import GroupHost
    from kgroup.broker.state import BrokerState
    from kgroup.broker.topics import Topic

API_KEY = ApiKey.INCREMENTAL_ALTER_CONFIGS
VERSIONS = (0, 1)

TOPIC = 2
BROKER = 4
GROUP = 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
#: GroupChange is what a request asks of one group's configs: its configs as set (name to
#: text) to its new ones; errors.KafkaError or ConfigError when refused.
GroupChange = Callable[[dict[str, str], Any], dict[str, str]]


#: BrokerChange is what a request asks of a broker resource's dynamic configs: its configs
#: as set (name to text) to its new ones; errors.KafkaError when refused.
BrokerChange = Callable[[dict[str, str], Any], dict[str, str]]


def broker_resource(state: BrokerState, r: Any, change: BrokerChange, validate_only: bool) -> None:
    """Change the dynamic configs of the broker resource ``r`` as ``change`` says, checked as
    Kafka's ConfigAdminManager checks them (see ``kgroup.broker.dynamic_config``)."""
    name = r.resource_name
    dynamic_config.check_resource_name(state, name)
    names = [c.name for c in r.configs]
    if len(set(names)) != len(names):
        raise errors.InvalidRequest("Error due to duplicate config keys")
    nulls = [c.name for c in r.configs if c.value is None and _op(c) != DELETE]
    if nulls:
        raise errors.InvalidRequest(f"Null value not supported for : {', '.join(nulls)}")
    new = change(state.dynamic_configs.get(name), r)
    state.dynamic_configs.set(state, name, new, validate_only)


def _op(c: Any) -> int:
    # AlterConfigs' entries have no operation: each sets its config.
    return int(getattr(c, "config_operation", SET))


def incremental_broker_change(current: dict[str, str], r: Any) -> dict[str, str]:
    """A broker resource's dynamic configs after IncrementalAlterConfigs' operations."""
    return dynamic_config.incremental(
        current, [(c.name, c.config_operation, c.value) for c in r.configs]
    )


def apply(current: dict[str, Any], changes: list[tuple[str, int, str | None]]) -> dict[str, Any]:
    """A topic's config overrides after ``changes`` (name, operation, value), checked."""
    out = dict(current)
    for name, op, value in changes:
        spec = TOPIC_CONFIGS.get(name)
        if spec is None:
            raise ConfigError(f"Unknown topic config name: {name}")
        if op == SET:
            out[name] = spec.parse(value)
        elif op == DELETE:
            out.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            if spec.type is not ConfigType.LIST:
                raise ConfigError(
                    f"Config value append is not allowed for config key: {name}"
                    if op == APPEND
                    else f"Config value subtract is not allowed for config key: {name}"
                )
            items = list(out.get(name, spec.default) or [])
            for v in spec.parse(value) or []:
                if op == APPEND and v not in items:
                    items.append(v)
                elif op == SUBTRACT and v in items:
                    items.remove(v)
            out[name] = spec.parse(items)
        else:
            raise errors.InvalidRequest(f"Unknown config operation {op}")
    return out


def group_resource(groups: GroupHost, r: Any, change: GroupChange, validate_only: bool) -> None:
    """Change one group's configs as ``change`` says, checked as Kafka checks them, unless
    validate_only."""
    if not r.resource_name:
        raise errors.InvalidRequest("Default group resources are not allowed.")
    names = [c.name for c in r.configs]
    if len(set(names)) != len(names):
        raise errors.InvalidRequest("Error due to duplicate config keys")
    config = groups.state.config
    try:
        raw = change(groups.configs.get(r.resource_name), r)
        if validate_only:
            group_configs.validate(config, raw)
        else:
            groups.configs.set(config, r.resource_name, raw)
    except ConfigError as e:
        raise errors.InvalidConfig(str(e)) from None


def incremental_group_change(current: dict[str, str], r: Any) -> dict[str, str]:
    """A group's configs after an IncrementalAlterConfigs resource's operations."""
    out = dict(current)
    for c in r.configs:
        op = c.config_operation
        if op == SET:
            if c.value is None:
                raise errors.InvalidRequest(f"Null value not supported for : {c.name}")
            out[c.name] = c.value
        elif op == DELETE:
            out.pop(c.name, None)
        elif op in (APPEND, SUBTRACT):
            verb = "APPEND" if op == APPEND else "SUBTRACT"
            raise ConfigError(f"Can't {verb} to key {c.name} because its type is not LIST.")
        else:
            raise errors.InvalidRequest(f"Unknown config operation {op}")
    return out


def config_denied(
    ctx: RequestContext, operation: AclOperation, config_type: int, name: str
) -> errors.KafkaError | None:
    """Why the principal may not do ``operation`` (DESCRIBE_CONFIGS or ALTER_CONFIGS) on a
    config resource (of DescribeConfigs' types), or None: the cluster's for a broker, a broker
    logger or client metrics, else the topic's or group's (Kafka's ConfigHelper and
    ControllerApis.authorizeAlterResource)."""
    if ctx.state.authorizer is None:
        return None
    if config_type == TOPIC:
        if not ctx.authorize(operation, ResourceType.TOPIC, name):
            return errors.TopicAuthorizationFailed(errors.TopicAuthorizationFailed.message)
    elif config_type == GROUP:
        if not ctx.authorize(operation, ResourceType.GROUP, name):
            return errors.GroupAuthorizationFailed(errors.GroupAuthorizationFailed.message)
    elif not ctx.authorize(operation, ResourceType.CLUSTER, CLUSTER_NAME):
        return errors.ClusterAuthorizationFailed(errors.ClusterAuthorizationFailed.message)
    return None


def alter_resources(
    ctx: RequestContext,
    names_of: Callable[[Any], list[str]],
    topic_configs: Callable[[Topic, Any], dict[str, Any]],
    group_change: GroupChange,
    broker_change: BrokerChange,
) -> dict[str, Any]:
    """The answer to an AlterConfigs or IncrementalAlterConfigs request: for each resource,
    ``names_of(resource)`` checks the request's own rules and names the configs it changes;
    a topic gets ``topic_configs(topic, resource)`` (its new overrides; ConfigError for a bad
    value) unless validate_only; a group's configs change as ``group_change`` says (see
    ``group_resource``); a broker's dynamic configs as ``broker_change`` says (see
    ``broker_resource``)."""
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
            denied = config_denied(
                ctx, AclOperation.ALTER_CONFIGS, r.resource_type, r.resource_name
            )
            if denied is not None:
                raise denied
            if r.resource_type == GROUP:
                group_resource(state.groups, r, group_change, body.validate_only)
                responses.append(out)
                continue
            if r.resource_type == BROKER:
                broker_resource(state, r, broker_change, body.validate_only)
                responses.append(out)
                continue
            names_of(r)
            if r.resource_type == TOPIC:
                topic = state.topics.by_name.get(r.resource_name)
                if topic is None:
                    raise errors.UnknownTopicOrPartition(
                        f"The topic '{r.resource_name}' does not exist."
                    )
                try:
                    configs = topic_configs(topic, r)
                except ConfigError as e:
                    raise errors.InvalidConfig(str(e)) from None
                if not body.validate_only:
                    state.topics.alter_configs(topic, configs)
            else:
                raise errors.InvalidRequest(f"Unsupported resource type {r.resource_type}")
        except errors.KafkaError as e:
            out["error_code"], out["error_message"] = e.code, str(e)
        responses.append(out)
    return {"throttle_time_ms": 0, "responses": responses}


def _names(resource: Any) -> list[str]:
    names = [c.name for c in resource.configs]
    if len(set(names)) != len(names):
        raise errors.InvalidRequest("A config is changed twice in one request")
    return names


def handle(ctx: RequestContext) -> dict[str, Any]:
    return alter_resources(
        ctx,
        _names,
        lambda topic, r: apply(
            topic.configs, [(c.name, c.config_operation, c.value) for c in r.configs]
        ),
        incremental_group_change,
        incremental_broker_change,
    )
