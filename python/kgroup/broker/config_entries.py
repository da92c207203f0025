"""The config entries DescribeConfigs and CreateTopics answer with: every config of a topic or
of the broker, with its value, where the value comes from, its synonyms, type and what it
does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kgroup.broker.config import (
    BROKER_CONFIGS,
    LISTENER_PREFIX,
    TOPIC_CONFIGS,
    ConfigSource,
    ConfigSpec,
    ConfigType,
    format_value,
)
from kgroup.broker.dynamic_config import DYNAMIC_CONFIGS

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


def broker_chain(name: str) -> list[str]:
    """The broker configs that set the same thing as ``name``, first first (Kafka's
    DynamicBrokerConfig.brokerConfigSynonyms): ``log.retention.ms``, ``.minutes`` and
    ``.hours``; the roll and jitter times; the flush interval. Else ``name`` alone."""
    for spec in TOPIC_CONFIGS.values():
        chain = [syn for syn, _ in spec.synonyms]
        if len(chain) > 1 and name in chain:
            return chain
    return [name]


def broker_entries(
    state: BrokerState,
    names: Iterable[str] | None,
    include_synonyms: bool,
    include_documentation: bool,
    cluster_default: bool = False,
) -> list[dict[str, Any]]:
    """The broker's configs (those in ``names``, or all), as Kafka's ConfigHelper lists
    them: each with its value (set dynamically for this broker, as a cluster default,
    statically, or its default), the source of the first of its synonyms (each synonym in
    every layer, then the defaults; those before the config's own name dropped), and
    read-only unless dynamic. Configs without a value and unset are left out, as Kafka
    leaves out null defaults; dynamic configs the broker does not know are listed as
    sensitive. With ``cluster_default`` (the resource named ""), only the cluster's dynamic
    defaults (min.insync.replicas always, see ``CLUSTER_MIN_ISR``)."""
    config = state.config
    layers = config.layers()
    defaults = {n: s.default for n, s in BROKER_CONFIGS.items() if s.default is not None}
    everything = [*layers, (defaults, ConfigSource.DEFAULT_CONFIG)]
    cluster_values = layers[1][0]
    if cluster_default:
        known = set(cluster_values) | set(config.dynamic_default)
    else:
        known = set(BROKER_CONFIGS) | set(config.dynamic_broker) | set(config.dynamic_default)
    wanted = known if names is None else known & set(names)
    out = []
    for name in sorted(wanted):
        spec = BROKER_CONFIGS.get(name)
        if spec is None:
            out.append(_custom_entry(state, name, cluster_default, include_synonyms))
            continue
        chain = broker_chain(name)
        synonyms: list[dict[str, Any]] = [
            {"name": n, "value": format_value(BROKER_CONFIGS[n], values[n]), "source": int(source)}
            for values, source in everything
            for n in chain
            if values.get(n) is not None
        ]
        while synonyms and synonyms[0]["name"] != name:
            synonyms.pop(0)
        if cluster_default:
            synonyms = [
                s for s in synonyms if s["source"] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
            ]
            value = cluster_values.get(name)
        else:
            value = config.get(name)
        if value is None and names is None:
            continue
        source = ConfigSource(synonyms[0]["source"]) if synonyms else ConfigSource.DEFAULT_CONFIG
        entry = _entry(spec, value, source, synonyms, include_synonyms, include_documentation)
        entry["read_only"] = name not in DYNAMIC_CONFIGS
        out.append(entry)
    if not cluster_default:
        out += _listener_entries(state, names, include_synonyms, include_documentation)
    return out


def _custom_entry(
    state: BrokerState, name: str, cluster_default: bool, include_synonyms: bool
) -> dict[str, Any]:
    """A dynamic config the broker does not know: no type, and sensitive (Kafka's
    KafkaConfig.maybeSensitive of an unknown config), so without a value."""
    layers = [(state.config.dynamic_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)]
    if not cluster_default:
        layers.insert(0, (state.config.dynamic_broker, ConfigSource.DYNAMIC_BROKER_CONFIG))
    synonyms = [
        {"name": name, "value": None, "source": int(source)}
        for values, source in layers
        if name in values
    ]
    return {
        "name": name,
        "value": None,
        "read_only": name not in DYNAMIC_CONFIGS,
        "is_default": False,
        "config_source": synonyms[0]["source"],
        "is_sensitive": True,
        "synonyms": synonyms if include_synonyms else [],
        "config_type": int(ConfigType.UNKNOWN),
        "documentation": None,
    }


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
