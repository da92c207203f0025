"""The config entries DescribeConfigs and CreateTopics answer with: every config of a topic or
of the broker, with its value, where the value comes from, its synonyms, type and what it
does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kgroup.broker.config import (
    BROKER_CONFIGS,
    CLUSTER_MIN_ISR,
    LISTENER_PREFIX,
    TOPIC_CONFIGS,
    ConfigSource,
    ConfigSpec,
    ConfigType,
    format_value,
)

if TYPE_CHECKING:
    from kgroup.broker.state import BrokerState

__all__ = ["broker_entries", "topic_entries"]


def _entry(
    spec: ConfigSpec,
    value: Any,
    source: ConfigSource,
    synonyms: list[dict[str, Any]],
    include_synonyms: bool,
    include_documentation: bool,
) -> dict[str, Any]:
    # A password is never shown, set or not: Kafka answers null and is_sensitive.
    sensitive = spec.type is ConfigType.PASSWORD
    if sensitive:
        synonyms = [dict(s, value=None) for s in synonyms]
    return {
        "name": spec.name,
        "value": None if sensitive else format_value(spec, value),
        "read_only": spec.read_only,
        "is_default": source == ConfigSource.DEFAULT_CONFIG,
        "config_source": int(source),
        "is_sensitive": sensitive,
        "synonyms": synonyms if include_synonyms else [],
        "config_type": int(spec.type),
        "documentation": spec.doc if include_documentation else None,
    }


def topic_entries(
    state: BrokerState,
    overrides: Mapping[str, Any],
    names: Iterable[str] | None,
    include_synonyms: bool,
    include_documentation: bool,
) -> list[dict[str, Any]]:
    """A topic's configs (those in ``names``, or all), with the topic's ``overrides``."""
    wanted = TOPIC_CONFIGS if names is None else [n for n in names if n in TOPIC_CONFIGS]
    out = []
    for name in wanted:
        spec = TOPIC_CONFIGS[name]
        synonyms = [
            {"name": syn, "value": value, "source": int(source)}
            for syn, value, source in state.config.synonyms(spec)
        ]
        if name in overrides:
            value, source = overrides[name], ConfigSource.TOPIC_CONFIG
            synonyms.insert(
                0,
                {"name": name, "value": format_value(spec, value), "source": int(source)},
            )
        else:
            value, source, _ = state.config.topic_default(spec)
        out.append(_entry(spec, value, source, synonyms, include_synonyms, include_documentation))
    return out


def broker_entries(
    state: BrokerState,
    names: Iterable[str] | None,
    include_synonyms: bool,
    include_documentation: bool,
    cluster_default: bool = False,
) -> list[dict[str, Any]]:
    """The broker's configs (those in ``names``, or all): set in its properties, or defaults.
    Configs without a value and unset are left out, as Kafka leaves out null defaults. With
    ``cluster_default`` (the resource named ""), only the cluster's dynamic defaults, as
    Kafka answers: min.insync.replicas (see ``CLUSTER_MIN_ISR``)."""
    wanted = BROKER_CONFIGS if names is None else [n for n in names if n in BROKER_CONFIGS]
    out = []
    for name in sorted(wanted):
        spec = BROKER_CONFIGS[name]
        synonyms = []
        if name == CLUSTER_MIN_ISR:
            value = state.config.cluster_min_isr
            source = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
            synonyms.append({"name": name, "value": str(value), "source": int(source)})
            if name in state.config.explicit and not cluster_default:
                static = ConfigSource.STATIC_BROKER_CONFIG
                synonyms.append({"name": name, "value": str(value), "source": int(static)})
        elif cluster_default:
            continue
        elif name in state.config.explicit:
            value, source = state.config.explicit[name], ConfigSource.STATIC_BROKER_CONFIG
        else:
            value, source = spec.default, ConfigSource.DEFAULT_CONFIG
        if value is None and names is None:
            continue
        if not synonyms:
            shown = None if spec.type == ConfigType.PASSWORD else format_value(spec, value)
            synonyms = [{"name": name, "value": shown, "source": int(source)}]
        out.append(_entry(spec, value, source, synonyms, include_synonyms, include_documentation))
    if not cluster_default:
        out += _listener_entries(state, names, include_synonyms, include_documentation)
    return out


def _listener_entries(
    state: BrokerState,
    names: Iterable[str] | None,
    include_synonyms: bool,
    include_documentation: bool,
) -> list[dict[str, Any]]:
    """The ``listener.name.<listener>.<key>`` settings, as Kafka lists a broker's originals:
    static, and sensitive (no value) when the key is a password or unknown (a mechanism's
    ``sasl.jaas.config``), as Kafka's KafkaConfig.maybeSensitive judges them."""
    wanted = None if names is None else set(names)
    out = []
    for listener, settings in sorted(state.config.per_listener.items()):
        for sub, value in sorted(settings.items()):
            name = f"{LISTENER_PREFIX}{listener}.{sub}"
            if wanted is not None and name not in wanted:
                continue
            known = BROKER_CONFIGS.get(sub)
            if known is None and sub.endswith(".sasl.jaas.config"):
                known = BROKER_CONFIGS["sasl.jaas.config"]
            spec = ConfigSpec(
                name,
                known.type if known is not None else ConfigType.UNKNOWN,
                None,
                known.doc if known is not None else "",
                read_only=True,
            )
            sensitive = known is None or known.type == ConfigType.PASSWORD
            shown = None if sensitive else format_value(spec, value)
            source = ConfigSource.STATIC_BROKER_CONFIG
            entry = _entry(
                spec,
                value,
                source,
                [{"name": name, "value": shown, "source": int(source)}],
                include_synonyms,
                include_documentation,
            )
            entry["value"], entry["is_sensitive"] = shown, sensitive
            out.append(entry)
    return out
