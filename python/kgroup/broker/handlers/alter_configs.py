"""AlterConfigs: v0-2. Replace the whole set of config overrides of topics and groups (configs
left out return to their defaults), and of the broker's dynamic configs, or with
validate_only only check it. v1 changes
throttling; v2 is flexible. Deprecated by IncrementalAlterConfigs, which most admin clients use
now.

With an authorizer, ALTER_CONFIGS on the topic or group (or the cluster, for the broker), as
IncrementalAlterConfigs checks it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.handlers.incremental_alter_configs import alter_resources
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.ALTER_CONFIGS
VERSIONS = (0, 2)


def replace_group_configs(_current: dict[str, str], r: Any) -> dict[str, str]:
    """A group's configs as an AlterConfigs resource gives them: all of them."""
    out = {}
    for c in r.configs:
        if c.value is None:
            raise errors.InvalidRequest(f"Null value not supported for : {c.name}")
        out[c.name] = c.value
    return out


def handle(ctx: RequestContext) -> dict[str, Any]:
    state = ctx.state
    return alter_resources(
        ctx,
        lambda r: [c.name for c in r.configs],
        lambda _topic, r: state.config.validate_topic_configs((c.name, c.value) for c in r.configs),
        replace_group_configs,
        lambda _current, r: {c.name: c.value for c in r.configs},
    )
