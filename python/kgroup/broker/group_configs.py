"""Group configs (KIP-848): a group's own values of some group settings, resource type GROUP
(32) in DescribeConfigs, IncrementalAlterConfigs and AlterConfigs, as Kafka 4.4 has them
(``GroupConfig``).

Kafka's list, with its types, bounds, broker synonyms and validation messages. Those the
consumer protocol reads (``consumer.session.timeout.ms``, ``consumer.heartbeat.interval.ms``,
``consumer.assignment.interval.ms``) reach the group coordinator
(``Coordinator.set_group_config``) and override the broker's for that group's members from
their next heartbeat. The share and streams groups' configs are kept and described as Kafka
keeps them; their bounds are Kafka's broker defaults where kgroup has no such broker setting.
The share fetch path (``kgroup.broker.share``) reads ``share.record.lock.duration.ms``
(bounded by ``group.share.min/max.record.lock.duration.ms``), ``share.auto.offset.reset``,
``share.isolation.level``, ``share.delivery.count.limit`` and
``share.partition.max.record.locks``.

Kept in ``group_configs.json`` in the metadata directory beside ``topics.json``, written
atomically before a change is answered: they survive a restart as Kafka's ConfigRecords do.
A group's configs do not depend on the group existing, and stay when it is deleted: Kafka 4.4
keeps them too (checked on 4.4: DeleteGroups leaves them, DescribeConfigs still shows them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgroup.broker.config import (
    BrokerConfig,
    ConfigError,
    ConfigSource,
    ConfigSpec,
    ConfigType,
    Validator,
    at_least,
    format_value,
)
from kgroup.log import file_exists, read_text, write_atomically

__all__ = ["GROUP_CONFIGS", "GroupConfigDef", "GroupConfigs", "describe", "validate"]

T = ConfigType


def _in(*allowed: str) -> Validator:
    return lambda v: None if v in allowed else f"String must be one of: {', '.join(allowed)}"


# A java.time.Duration in ISO-8601 (PnDTnHnMn.nS), as Duration.parse reads it.
_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,]\d{0,9})?S)?)?",
    re.IGNORECASE,
)


def _auto_offset_reset(v: Any) -> str | None:
    ok = v in ("earliest", "latest")
    if not ok and v.startswith("by_duration:"):
        text = v[len("by_duration:") :]
        m = _DURATION.fullmatch(text)
        ok = (
            m is not None
            and text.upper() not in ("P", "PT")
            and not text.upper().endswith("T")
            and m.group(1) != "-"
            and not any(g and g.startswith("-") for g in m.groups()[1:])
        )
    if ok:
        return None
    return (
        f"Invalid value `{v}` for configuration share.auto.offset.reset. The value must be "
        "either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
    )


def duration_ms(text: str) -> int:
    """The milliseconds of a non-negative ISO-8601 duration (``PnDTnHnMn.nS``, as
    ``share.auto.offset.reset``'s ``by_duration:`` takes it, already validated); fractions of a
    second are dropped."""
    m = _DURATION.fullmatch(text)
    if m is None:
        raise ValueError(f"not a duration: {text!r}")
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups()[1:])
    return (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000


@dataclass(frozen=True)
class GroupConfigDef:
    """GroupConfigDef is one group config: its spec (type, Kafka's ``atLeast``), its broker
    synonym (None: the config is its own synonym, at its default), its bounds (a broker config's
    name, or Kafka's broker default when kgroup has no such setting), and whether Kafka defines
    it as internal (described only once set)."""

    spec: ConfigSpec
    synonym: str | None = None
    low: str | int | None = None
    high: str | int | None = None
    internal: bool = False


def _g(
    name: str,
    t: ConfigType,
    default: Any,
    doc: str,
    *,
    synonym: str | None = None,
    minimum: int | None = None,
    low: str | int | None = None,
    high: str | int | None = None,
    validator: Validator | None = None,
    internal: bool = False,
) -> GroupConfigDef:
    check = validator if validator is not None else (None if minimum is None else at_least(minimum))
    return GroupConfigDef(ConfigSpec(name, t, default, doc, check), synonym, low, high, internal)


#: GROUP_CONFIGS are Kafka 4.4's group configs in the order Kafka defines them (which is the
#: order its validation reports the first bad value in). Defaults of those with a broker synonym
#: that kgroup has come from the broker's config; the others are Kafka's broker defaults.
GROUP_CONFIGS: dict[str, GroupConfigDef] = {
    d.spec.name: d
    for d in (
        _g(
            "consumer.session.timeout.ms",
            T.INT,
            None,
            "How long a member of this consumer group may go without a heartbeat.",
            synonym="group.consumer.session.timeout.ms",
            minimum=1,
            low="group.consumer.min.session.timeout.ms",
            high="group.consumer.max.session.timeout.ms",
        ),
        _g(
            "consumer.heartbeat.interval.ms",
            T.INT,
            None,
            "The heartbeat interval this consumer group's members are told to keep.",
            synonym="group.consumer.heartbeat.interval.ms",
            minimum=1,
            low="group.consumer.min.heartbeat.interval.ms",
            high="group.consumer.max.heartbeat.interval.ms",
        ),
        _g(
            "consumer.assignment.interval.ms",
            T.INT,
            None,
            "How often, at most, this consumer group's target assignment is computed.",
            synonym="group.consumer.assignment.interval.ms",
            minimum=0,
            low="group.consumer.min.assignment.interval.ms",
            high="group.consumer.max.assignment.interval.ms",
        ),
        _g(
            "consumer.assignor.offload.enable",
            T.BOOLEAN,
            True,
            "Whether this consumer group's assignments run off the coordinator's thread.",
            synonym="group.consumer.assignor.offload.enable",
            internal=True,
        ),
        _g(
            "share.session.timeout.ms",
            T.INT,
            None,
            "How long a member of this share group may go without a heartbeat.",
            synonym="group.share.session.timeout.ms",
            minimum=1,
            low="group.share.min.session.timeout.ms",
            high="group.share.max.session.timeout.ms",
        ),
        _g(
            "share.heartbeat.interval.ms",
            T.INT,
            None,
            "The heartbeat interval this share group's members are told to keep.",
            synonym="group.share.heartbeat.interval.ms",
            minimum=1,
            low="group.share.min.heartbeat.interval.ms",
            high="group.share.max.heartbeat.interval.ms",
        ),
        _g(
            "share.record.lock.duration.ms",
            T.INT,
            None,
            "How long a record delivered to this share group stays acquired.",
            synonym="group.share.record.lock.duration.ms",
            minimum=1000,
            low="group.share.min.record.lock.duration.ms",
            high="group.share.max.record.lock.duration.ms",
        ),
        _g(
            "share.delivery.count.limit",
            T.INT,
            5,
            "How many times a record is delivered to this share group at most.",
            synonym="group.share.delivery.count.limit",
            minimum=2,
            low=2,
            high=10,
        ),
        _g(
            "share.partition.max.record.locks",
            T.INT,
            2000,
            "How many records of one partition this share group may hold acquired.",
            synonym="group.share.partition.max.record.locks",
            minimum=100,
            low=100,
            high=4000,
        ),
        _g(
            "share.auto.offset.reset",
            T.STRING,
            "latest",
            "Where a share partition starts: earliest, latest, or by_duration:<ISO-8601 "
            "duration> back from now.",
            validator=_auto_offset_reset,
        ),
        _g(
            "share.isolation.level",
            T.STRING,
            "read_uncommitted",
            "Whether this share group gets only committed transactional records.",
            validator=_in("read_committed", "read_uncommitted"),
        ),
        _g(
            "share.renew.acknowledge.enable",
            T.BOOLEAN,
            True,
            "Whether this share group's members may renew their acquisition locks.",
        ),
        _g(
            "share.assignment.interval.ms",
            T.INT,
            1000,
            "How often, at most, this share group's target assignment is computed.",
            synonym="group.share.assignment.interval.ms",
            minimum=0,
            low=0,
            high=15_000,
        ),
        _g(
            "share.assignor.offload.enable",
            T.BOOLEAN,
            True,
            "Whether this share group's assignments run off the coordinator's thread.",
            synonym="group.share.assignor.offload.enable",
            internal=True,
        ),
        _g(
            "streams.session.timeout.ms",
            T.INT,
            45_000,
            "How long a member of this streams group may go without a heartbeat.",
            synonym="group.streams.session.timeout.ms",
            minimum=1,
            low=45_000,
            high=60_000,
        ),
        _g(
            "streams.heartbeat.interval.ms",
            T.INT,
            5_000,
            "The heartbeat interval this streams group's members are told to keep.",
            synonym="group.streams.heartbeat.interval.ms",
            minimum=1,
            low=5_000,
            high=15_000,
        ),
        _g(
            "streams.num.standby.replicas",
            T.INT,
            0,
            "Standby replicas of each task of this streams group.",
            synonym="group.streams.num.standby.replicas",
            minimum=0,
            high=2,
        ),
        _g(
            "streams.initial.rebalance.delay.ms",
            T.INT,
            3000,
            "How long a new streams group waits for more members before its first assignment.",
            synonym="group.streams.initial.rebalance.delay.ms",
            minimum=0,
        ),
        _g(
            "streams.assignment.interval.ms",
            T.INT,
            1000,
            "How often, at most, this streams group's target assignment is computed.",
            synonym="group.streams.assignment.interval.ms",
            minimum=0,
            low=0,
            high=15_000,
        ),
        _g(
            "streams.assignor.offload.enable",
            T.BOOLEAN,
            True,
            "Whether this streams group's assignments run off the coordinator's thread.",
            synonym="group.streams.assignor.offload.enable",
            internal=True,
        ),
        _g(
            "streams.task.offset.interval.ms",
            T.INT,
            60_000,
            "How often this streams group's members report their warmup tasks' offsets.",
            synonym="group.streams.task.offset.interval.ms",
            minimum=1,
            low=15_000,
            internal=True,
        ),
        _g(
            "streams.num.warmup.replicas",
            T.INT,
            2,
            "Warmup replicas of this streams group's tasks, at most.",
            synonym="group.streams.num.warmup.replicas",
            minimum=0,
            high=20,
            internal=True,
        ),
        _g(
            "streams.rack.aware.assignment.tags",
            T.LIST,
            [],
            "The client tags this streams group spreads standby replicas over.",
            synonym="group.streams.rack.aware.assignment.tags",
        ),
        _g(
            "streams.acceptable.recovery.lag",
            T.LONG,
            10_000,
            "How far behind a member may be and still be given an active task.",
            synonym="group.streams.acceptable.recovery.lag",
            minimum=0,
            internal=True,
        ),
        _g(
            "streams.assignor.name",
            T.STRING,
            "sticky",
            "This streams group's task assignor, one of the broker's group.streams.assignors.",
            synonym="group.streams.assignors",
        ),
        _g(
            "errors.deadletterqueue.topic.name",
            T.STRING,
            "",
            "This share group's dead-letter topic; none when blank.",
        ),
        _g(
            "errors.deadletterqueue.copy.record.enable",
            T.BOOLEAN,
            False,
            "Whether a record sent to the dead-letter topic is copied, or only described in "
            "headers.",
        ),
    )
}

#: INTERNAL_ORDER is the order Kafka 4.4 lists the internal configs a group sets in, first
#: (its HashMap's).
INTERNAL_ORDER = (
    "share.assignor.offload.enable",
    "streams.num.warmup.replicas",
    "consumer.assignor.offload.enable",
    "streams.acceptable.recovery.lag",
    "streams.assignor.offload.enable",
    "streams.task.offset.interval.ms",
)
#: DESCRIBE_ORDER is the order Kafka 4.4 lists the other configs in, after them.
DESCRIBE_ORDER = (
    "consumer.session.timeout.ms",
    "streams.assignor.name",
    "consumer.assignment.interval.ms",
    "errors.deadletterqueue.copy.record.enable",
    "share.auto.offset.reset",
    "streams.rack.aware.assignment.tags",
    "share.renew.acknowledge.enable",
    "streams.initial.rebalance.delay.ms",
    "share.session.timeout.ms",
    "streams.assignment.interval.ms",
    "share.heartbeat.interval.ms",
    "streams.heartbeat.interval.ms",
    "share.delivery.count.limit",
    "errors.deadletterqueue.topic.name",
    "consumer.heartbeat.interval.ms",
    "share.record.lock.duration.ms",
    "share.assignment.interval.ms",
    "share.isolation.level",
    "streams.session.timeout.ms",
    "share.partition.max.record.locks",
    "streams.num.standby.replicas",
)
#: BOUNDS_ORDER is the order Kafka checks the bounds in (``GroupConfig.validateValues``).
BOUNDS_ORDER = (
    "consumer.heartbeat.interval.ms",
    "consumer.session.timeout.ms",
    "consumer.assignment.interval.ms",
    "share.heartbeat.interval.ms",
    "share.session.timeout.ms",
    "share.record.lock.duration.ms",
    "share.delivery.count.limit",
    "share.partition.max.record.locks",
    "share.assignment.interval.ms",
    "streams.heartbeat.interval.ms",
    "streams.session.timeout.ms",
    "streams.num.standby.replicas",
    "streams.assignment.interval.ms",
    "streams.task.offset.interval.ms",
    "streams.num.warmup.replicas",
)
#: STREAMS_ASSIGNORS are the task assignors Kafka 4.4 registers by default.
STREAMS_ASSIGNORS = ("sticky",)
#: COORDINATOR_KEYS are the configs the group coordinator reads.
COORDINATOR_KEYS = (
    "consumer.session.timeout.ms",
    "consumer.heartbeat.interval.ms",
    "consumer.assignment.interval.ms",
    "share.session.timeout.ms",
    "share.heartbeat.interval.ms",
)


def _bound(config: BrokerConfig, bound: str | int) -> int:
    return int(config.get(bound)) if isinstance(bound, str) else bound


def broker_value(config: BrokerConfig, d: GroupConfigDef) -> tuple[Any, ConfigSource]:
    """A group config's value when the group does not set it: its broker synonym's (set in the
    broker's properties, or its default), else its own default."""
    if d.synonym is not None and d.spec.default is None:
        source = (
            ConfigSource.STATIC_BROKER_CONFIG
            if d.synonym in config.explicit
            else ConfigSource.DEFAULT_CONFIG
        )
        return config.get(d.synonym), source
    return d.spec.default, ConfigSource.DEFAULT_CONFIG


def validate(config: BrokerConfig, raw: Mapping[str, str | None]) -> dict[str, Any]:
    """A group's whole set of configs (name to text) parsed and checked as Kafka's
    ``GroupConfig.validate`` checks it, in its order: the names, duplicate rack tags, each
    value's type and ``atLeast`` (in definition order), then the bounds. ConfigError (Kafka's
    INVALID_CONFIG) with Kafka's message for the first problem."""
    for name in raw:
        if name not in GROUP_CONFIGS:
            raise ConfigError(f"Unknown group config name: {name}")
    tags = raw.get("streams.rack.aware.assignment.tags")
    if tags is not None and tags.strip():
        items = [t.strip() for t in tags.strip().split(",")]
        if len(set(items)) != len(items):
            raise ConfigError(
                "streams.rack.aware.assignment.tags must not contain duplicate tag keys."
            )
    parsed = {name: d.spec.parse(raw[name]) for name, d in GROUP_CONFIGS.items() if name in raw}
    for name in BOUNDS_ORDER:
        if name not in parsed:
            continue
        d, value = GROUP_CONFIGS[name], parsed[name]
        if d.low is not None and d.high is not None:
            low, high = _bound(config, d.low), _bound(config, d.high)
            if not low <= value <= high:
                raise ConfigError(f"{name} must be in the range {low} to {high} inclusive.")
        elif d.high is not None and value > _bound(config, d.high):
            raise ConfigError(f"{name} must be less than or equal to {_bound(config, d.high)}")
        elif d.low is not None and value < _bound(config, d.low):
            raise ConfigError(f"{name} must be greater than or equal to {_bound(config, d.low)}")
    assignor = parsed.get("streams.assignor.name")
    if assignor is not None and assignor not in STREAMS_ASSIGNORS:
        raise ConfigError(
            f"streams.assignor.name '{assignor}' is not a registered task assignor. Registered "
            f"assignors are: [{', '.join(STREAMS_ASSIGNORS)}]."
        )
    dlq = parsed.get("errors.deadletterqueue.topic.name")
    if dlq and dlq.startswith("__"):
        raise ConfigError(
            "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"
        )
    return parsed


def describe(
    config: BrokerConfig,
    overrides: Mapping[str, Any],
    names: Iterable[str] | None,
    include_synonyms: bool,
    include_documentation: bool,
) -> list[dict[str, Any]]:
    """A group's config entries as DescribeConfigs lists them (Kafka's
    ``ConfigHelper.createGroupConfigEntry``): its value, source GROUP_CONFIG (8) when the group
    sets it, and as synonyms the group's value then the broker's."""
    set_internal = [n for n in INTERNAL_ORDER if n in overrides]
    order = [*set_internal, *DESCRIBE_ORDER]
    if names is not None:
        wanted = set(names)
        order = [n for n in order if n in wanted]
    out = []
    for name in order:
        d = GROUP_CONFIGS[name]
        spec = d.spec
        default, source = broker_value(config, d)
        synonyms = [
            {
                "name": d.synonym or name,
                "value": format_value(spec, default),
                "source": int(source),
            }
        ]
        if name in overrides:
            value, source = overrides[name], ConfigSource.GROUP_CONFIG
            synonyms.insert(
                0, {"name": name, "value": format_value(spec, value), "source": int(source)}
            )
        else:
            value = default
        out.append(
            {
                "name": name,
                "value": format_value(spec, value),
                "read_only": False,
                "is_default": source == ConfigSource.DEFAULT_CONFIG,
                "config_source": int(source),
                "is_sensitive": False,
                "synonyms": synonyms if include_synonyms else [],
                "config_type": int(spec.type),
                "documentation": spec.doc if include_documentation else None,
            }
        )
    return out


class GroupConfigs:
    """GroupConfigs keeps every group's configs (as set: name to text, Kafka's raw values) in
    ``group_configs.json`` and tells ``on_change`` (group id, the coordinator's configs) of each
    change. Not thread-safe: the broker's event loop owns it."""

    def __init__(self, path: Path, on_change: Callable[[str, dict[str, int]], None]) -> None:
        self.path = path
        self.on_change = on_change
        self.raw: dict[str, dict[str, str]] = {}

    def load(self) -> None:
        """Read the file, if any, and hand every group's configs to ``on_change``. Values are
        not checked against the broker's bounds again: Kafka checks them when they are set."""
        if file_exists(self.path):
            self.raw = json.loads(read_text(self.path))
        for group in self.raw:
            self.on_change(group, coordinator_configs(self.parsed(group)))

    def get(self, group: str) -> dict[str, str]:
        """A group's configs as set (name to text)."""
        return dict(self.raw.get(group, {}))

    def set(self, config: BrokerConfig, group: str, raw: Mapping[str, str]) -> None:
        """Replace a group's configs with ``raw`` (validated first: ConfigError), durably, and
        tell the coordinator."""
        parsed = validate(config, raw)
        if raw:
            self.raw[group] = dict(raw)
        else:
            self.raw.pop(group, None)
        write_atomically(self.path, json.dumps(self.raw, indent=1, sort_keys=True))
        self.on_change(group, coordinator_configs(parsed))

    def parsed(self, group: str) -> dict[str, Any]:
        """A group's configs as values."""
        return {
            name: GROUP_CONFIGS[name].spec.parse(value)
            for name, value in self.raw.get(group, {}).items()
            if name in GROUP_CONFIGS
        }


def coordinator_configs(parsed: Mapping[str, Any]) -> dict[str, int]:
    """The configs among ``parsed`` the group coordinator reads."""
    return {k: int(parsed[k]) for k in COORDINATOR_KEYS if k in parsed}
