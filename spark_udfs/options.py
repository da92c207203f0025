"""options: the data source's options, checked on the driver as Spark's Kafka source checks them.

Option names and messages are those of Spark's ``KafkaSourceProvider`` (Structured Streaming +
Kafka Integration Guide), so that moving a job between ``format("kafka")`` and
``format("kgroup")`` is a change of name. Unlike Spark's, an option neither source knows is an
error that names it, and ``kafka.*`` keys are checked against kgroup's client configuration
before any job runs.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kgroup.client.config import ClientConfig, canonical_key
from kgroup.errors import KafkaError

__all__ = [
    "CUSTOM_GROUP_ID_WARNING",
    "EARLIEST",
    "LATEST",
    "OffsetSpec",
    "ReadOptions",
    "WriteOptions",
    "parse_read_options",
    "parse_write_options",
]

EARLIEST = -2
LATEST = -1

STRATEGY_KEYS = ("subscribe", "subscribepattern", "assign")

# Every option of Spark's Kafka source and sink (lower case: Spark's options are
# case-insensitive and reach a Python data source lower-cased).
_READ_KEYS = {
    "subscribe",
    "subscribepattern",
    "assign",
    "startingoffsets",
    "endingoffsets",
    "startingtimestamp",
    "endingtimestamp",
    "startingoffsetsbytimestamp",
    "endingoffsetsbytimestamp",
    "startingoffsetsbytimestampstrategy",
    "failondataloss",
    "kafkaconsumer.polltimeoutms",
    "fetchoffset.numretries",
    "fetchoffset.retryintervalms",
    "maxoffsetspertrigger",
    "minoffsetspertrigger",
    "maxtriggerdelay",
    "minpartitions",
    "maxrecordsperpartition",
    "groupidprefix",
    "includeheaders",
}
# kgroup.commitReport: a file where the driver's commit writes the rows written per partition
# as JSON {"topic": {"partition": rows}} (Spark runs commit() in a Python worker of its own).
_WRITE_KEYS = {"topic", "includeheaders", "kgroup.commitreport", "kgroup.transactionalidprefix"}

log = logging.getLogger("spark_udfs.options")

# Consumer settings Spark's source refuses, with Spark's words. Spark 3.x+ allows `group.id`
# (KafkaSourceProvider.validateGeneralOptions logs CUSTOM_GROUP_ID_ERROR_MESSAGE instead).
_REFUSED_CONSUMER = {
    "auto.offset.reset": "Kafka option 'auto.offset.reset' is not supported. Instead set the "
    "source option 'startingoffsets' to 'earliest' or 'latest' to specify where to start. "
    "Structured Streaming manages which offsets are consumed internally, rather than relying "
    "on the kafkaConsumer to do it.",
    "key.deserializer": "Kafka option 'key.deserializer' is not supported as keys are "
    "deserialized as byte arrays with ByteArrayDeserializer. Use DataFrame operations to "
    "explicitly deserialize the keys.",
    "value.deserializer": "Kafka option 'value.deserializer' is not supported as values are "
    "deserialized as byte arrays with ByteArrayDeserializer. Use DataFrame operations to "
    "explicitly deserialize the values.",
    "enable.auto.commit": "Kafka option 'enable.auto.commit' is not supported",
    "interceptor.classes": "Kafka option 'interceptor.classes' is not supported",
}
#: Spark's caution when ``kafka.group.id`` is set (its CUSTOM_GROUP_ID_ERROR_MESSAGE), logged
#: as Spark logs it. kgroup's tasks never join the group (see :class:`ReadOptions`).
CUSTOM_GROUP_ID_WARNING = (
    "Kafka option 'kafka.group.id' has been set on this query, it is not recommended to set "
    "this option. This option is unsafe to use since multiple concurrent queries or sources "
    "using the same group id will interfere with each other as they are part of the same "
    "consumer group. Restarted queries may also suffer interference from the previous run "
    "having the same group id. The user should have only one query per group id, and/or set "
    "the option 'kafka.session.timeout.ms' to be very small so that the Kafka consumers from "
    "the previous query are marked dead by the Kafka group coordinator before the restarted "
    "query starts running."
)

_REFUSED_PRODUCER = {
    "key.serializer": "Kafka option 'key.serializer' is not supported as keys are serialized "
    "with ByteArraySerializer.",
    "value.serializer": "Kafka option 'value.serializer' is not supported as value are "
    "serialized with ByteArraySerializer.",
}

# The sink's ``kafka.partitioner`` values: Java's default, or librdkafka's hashes by the names
# kgroup's accumulator knows (a null key goes to a random partition, as librdkafka's do).
PARTITIONERS = {
    "murmur2": "murmur2_builtin",
    "default": "murmur2_builtin",
    "crc32": "consistent_random",
    "consistent": "consistent",
    "consistent_random": "consistent_random",
    "fnv1a": "fnv1a_random",
    "fnv1a_random": "fnv1a_random",
    "murmur2_random": "murmur2_random",
}


@dataclass(frozen=True)
class OffsetSpec:
    """Where a range starts or ends: ``earliest``/``latest`` (``kind``), one timestamp for every
    partition, or per-partition offsets or timestamps ({(topic, partition): value}; offsets
    -2/-1 mean earliest/latest)."""

    kind: str  # "earliest" | "latest" | "offsets" | "timestamp" | "timestamps"
    timestamp: int = -1
    per_partition: dict[tuple[str, int], int] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadOptions:
    """The source's options, parsed and checked.

    ``group_id`` is the ``group.id`` of the tasks' consumers: ``kafka.group.id``, or one made
    up as Spark makes it (``<groupIdPrefix>-<uuid>-executor``, the prefix
    ``spark-kafka-relation`` for batch reads and ``spark-kafka-source`` for streams). The
    consumers read by ``assign`` from offsets the driver planned, with ``enable.auto.commit``
    off: they never join the group, fetch or commit its offsets, so no group appears on the
    broker and none needs an ACL."""

    kafka: dict[str, str]
    strategy: str  # subscribe | subscribepattern | assign
    topics: tuple[str, ...] = ()
    pattern: str = ""
    assign: tuple[tuple[str, int], ...] = ()
    starting: OffsetSpec = OffsetSpec("earliest")
    ending: OffsetSpec = OffsetSpec("latest")
    timestamp_strategy: str = "error"
    fail_on_data_loss: bool = True
    include_headers: bool = False
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60_000
    poll_timeout_ms: int = 120_000
    fetch_offset_attempts: int = 3
    fetch_offset_retry_interval_ms: int = 1000
    group_id: str = "spark-kafka-relation-executor"

    @property
    def isolation_level(self) -> int:
        """``kafka.isolation.level``: 1 for read_committed (planned ranges then end at each
        partition's last stable offset, and the tasks' consumers drop aborted records), else
        0."""
        return 1 if self.kafka.get("isolation.level") == "read_committed" else 0

    def admin_config(self) -> dict[str, Any]:
        """The ``kafka.*`` settings an AdminClient takes (the common ones)."""
        return admin_config(self.kafka)


@dataclass(frozen=True)
class WriteOptions:
    """The sink's options, parsed and checked."""

    kafka: dict[str, str]
    topic: str | None = None
    partitioner: str = "murmur2_builtin"
    report_path: str | None = None
    #: transactional_id_prefix (``kgroup.transactionalIdPrefix``): each task writes its rows in
    #: one transaction of ``transactional.id`` ``<prefix>-<Spark partition id>``, so that a
    #: failed task's rows are never read by read_committed readers (its retry, under the same
    #: id, fences it and aborts what it left open).
    transactional_id_prefix: str | None = None


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    v = options.get(key)
    if v is None:
        return default
    s = str(v).strip().lower()
    if s not in ("true", "false"):
        raise ValueError(f"option '{key}' must be true or false, got {v!r}")
    return s == "true"


def _positive_int(options: Mapping[str, str], key: str) -> int | None:
    v = options.get(key)
    if v is None:
        return None
    try:
        n = int(str(v).strip())
    except ValueError:
        raise ValueError(
            f"Invalid value '{v}' for option '{key}', must be a positive integer"
        ) from None
    if n <= 0:
        raise ValueError(f"Invalid value '{v}' for option '{key}', must be a positive integer")
    return n


_TIME_UNITS_MS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000}
_TIME_UNITS_MS["d"] = 24 * _TIME_UNITS_MS["h"]


def time_ms(value: str, key: str) -> int:
    """A duration as Spark's ``Utils.timeStringAsMs`` reads it: a whole number with an optional
    unit (us, ms, s, m, min, h, d; none is ms), rounded down to ms."""
    m = re.fullmatch(r"(-?[0-9]+)([a-z]+)?", str(value).strip().lower())
    unit = m.group(2) if m else None
    if m is None or (unit is not None and unit not in _TIME_UNITS_MS):
        raise ValueError(
            f"option '{key}': {value!r} is not a duration: a whole number with a unit of "
            f"{', '.join(_TIME_UNITS_MS)} (none is ms), e.g. 15m"
        )
    return int(int(m.group(1)) * _TIME_UNITS_MS[unit or "ms"])


def kafka_params(options: Mapping[str, str], refused: Mapping[str, str]) -> dict[str, str]:
    """The ``kafka.*`` options without their prefix, refusing what Spark refuses."""
    out: dict[str, str] = {}
    for k, v in options.items():
        if k.startswith("kafka."):
            name = k[len("kafka.") :]
            if name in refused:
                raise ValueError(refused[name])
            out[name] = v
    if "bootstrap.servers" not in out:
        raise ValueError(
            "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer"
        )
    return out


def admin_config(kafka: Mapping[str, str]) -> dict[str, Any]:
    """The subset of client settings the admin client takes."""
    known = set(ClientConfig("admin", {"bootstrap.servers": kafka["bootstrap.servers"]}))
    # librdkafka's aliases (sasl.mechanisms) name admin settings too.
    return {k: v for k, v in kafka.items() if canonical_key(k) in known}


def _check_client(kind: str, config: Mapping[str, Any]) -> None:
    try:
        ClientConfig(kind, dict(config))
    except KafkaError as e:
        raise ValueError(f"kgroup: kafka.* options: {e}") from None


# Options Spark itself hands every source and sink (a stream's checkpoint, a path).
_SPARK_KEYS = {"checkpointlocation", "path", "queryname"}


def _unknown(options: Mapping[str, str], known: set[str], what: str) -> None:
    for k in options:
        if not k.startswith("kafka.") and k not in known and k not in _SPARK_KEYS:
            raise ValueError(
                f"kgroup {what}: unknown option '{k}' (known: "
                f"{', '.join(sorted(known))}, and kafka.* client settings)"
            )


def _partition_json(text: str, what: str) -> dict[str, dict[str, Any]]:
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if not isinstance(obj, dict) or not all(isinstance(v, dict) for v in obj.values()):
        raise ValueError(
            f'Expected e.g. {{"topicA":{{"0":23,"1":-1}},"topicB":{{"0":-2}}}}, '
            f"got {text} (option '{what}')"
        )
    return obj


def _per_partition(text: str, what: str) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for topic, parts in _partition_json(text, what).items():
        for p, v in parts.items():
            try:
                out[(topic, int(p))] = int(v)
            except (TypeError, ValueError):
                raise ValueError(f"option '{what}': {topic}-{p}: {v!r} is not an integer") from None
    return out


def _offset_spec(options: Mapping[str, str], side: str, default: str) -> OffsetSpec:
    """startingOffsets and friends (``side`` is ``starting`` or ``ending``); Spark's
    precedence: global timestamp, then per-partition timestamps, then offsets."""
    ts = options.get(f"{side}timestamp")
    if ts is not None:
        try:
            return OffsetSpec("timestamp", timestamp=int(ts))
        except ValueError:
            raise ValueError(
                f"option '{side}Timestamp' must be a timestamp in ms, got {ts!r}"
            ) from None
    by_ts = options.get(f"{side}offsetsbytimestamp")
    if by_ts is not None:
        return OffsetSpec(
            "timestamps", per_partition=_per_partition(by_ts, f"{side}OffsetsByTimestamp")
        )
    text = options.get(f"{side}offsets", default).strip()
    if text.lower() in ("earliest", "latest"):
        return OffsetSpec(text.lower())
    return OffsetSpec("offsets", per_partition=_per_partition(text, f"{side}Offsets"))


def parse_read_options(options: Mapping[str, str], *, batch: bool | None) -> ReadOptions:
    """The source's options checked as Spark's ``validateBatchOptions`` /
    ``validateStreamOptions`` do (``batch`` None: only what both check, as when the schema is
    asked for); raises ValueError with Spark's message."""
    _unknown(options, _READ_KEYS, "source")
    chosen = [k for k in STRATEGY_KEYS if k in options]
    if not chosen:
        raise ValueError(
            "One of the following options must be specified for Kafka source: "
            "subscribe, subscribepattern, assign. See the docs for more details."
        )
    if len(chosen) > 1:
        raise ValueError(
            "Only one of the following options can be specified for Kafka source: "
            "subscribe, subscribepattern, assign. See the docs for more details."
        )
    kafka = kafka_params(options, _REFUSED_CONSUMER)
    _check_client("consumer", kafka)
    strategy = chosen[0]
    value = options[strategy]
    topics: tuple[str, ...] = ()
    pattern = ""
    assign: tuple[tuple[str, int], ...] = ()
    if strategy == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise ValueError(
                f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'"
            )
    elif strategy == "subscribepattern":
        pattern = value.strip()
        if not pattern:
            raise ValueError(
                "Pattern to subscribe is empty as specified value for option "
                f"'subscribePattern' is '{value}'"
            )
        try:
            re.compile(pattern)
        except re.error as e:
            raise ValueError(
                f"option 'subscribePattern': {pattern!r} is not a pattern: {e}"
            ) from None
    else:
        if not value.strip().startswith("{"):
            raise ValueError(
                f"No topicpartitions to assign as specified value for option 'assign' is '{value}'"
            )
        try:
            obj = json.loads(value)
            assign = tuple(
                (str(t), int(p))
                for t, ps in obj.items()
                for p in ps  # type: ignore[union-attr]
            )
        except (ValueError, TypeError, AttributeError):
            raise ValueError(
                f'Expected e.g. {{"topicA":[0,1],"topicB":[0,1]}}, got {value} (option \'assign\')'
            ) from None
        if not assign:
            raise ValueError(
                f"No topicpartitions to assign as specified value for option 'assign' is '{value}'"
            )
    starting = _offset_spec(options, "starting", "latest" if batch is False else "earliest")
    ending = _offset_spec(options, "ending", "latest")
    if batch:
        if starting.kind == "latest":
            raise ValueError("starting offset can't be latest for batch queries on Kafka")
        if ending.kind == "earliest":
            raise ValueError("ending offset can't be earliest for batch queries on Kafka")
        for (t, p), off in starting.per_partition.items():
            if starting.kind == "offsets" and off == LATEST:
                raise ValueError(
                    f"startingOffsets for {t}-{p} can't be latest for batch queries on Kafka"
                )
        for (t, p), off in ending.per_partition.items():
            if ending.kind == "offsets" and off == EARLIEST:
                raise ValueError(
                    f"endingOffsets for {t}-{p} can't be earliest for batch queries on Kafka"
                )
    elif batch is False:
        for k in ("endingoffsets", "endingtimestamp", "endingoffsetsbytimestamp"):
            if k in options:
                raise ValueError(f"Ending offset not valid in streaming queries ('{k}')")
    strat = options.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strat not in ("error", "latest"):
        raise ValueError(
            "option 'startingOffsetsByTimestampStrategy' must be 'error' or 'latest', "
            f"got {strat!r}"
        )
    min_partitions = _positive_int(options, "minpartitions")
    max_records = _positive_int(options, "maxrecordsperpartition")
    max_per_trigger = _positive_int(options, "maxoffsetspertrigger")
    min_per_trigger = _positive_int(options, "minoffsetspertrigger")
    delay = options.get("maxtriggerdelay")
    delay_ms = time_ms(delay, "maxTriggerDelay") if delay is not None else 15 * 60_000
    if min_per_trigger is not None and max_per_trigger is not None:
        if min_per_trigger > max_per_trigger:
            raise ValueError(
                f"The value of minOffsetPerTrigger({min_per_trigger}) is higher than the "
                f"maxOffsetsPerTrigger({max_per_trigger})."
            )
    if batch:
        for k, name in (
            ("maxoffsetspertrigger", "maxOffsetsPerTrigger"),
            ("minoffsetspertrigger", "minOffsetsPerTrigger"),
            ("maxtriggerdelay", "maxTriggerDelay"),
        ):
            if k in options:
                log.warning("%s option ignored in batch queries", name)
    poll = _positive_int(options, "kafkaconsumer.polltimeoutms")
    attempts = _positive_int(options, "fetchoffset.numretries")
    interval = options.get("fetchoffset.retryintervalms")
    interval_ms = 1000
    if interval is not None:
        try:
            interval_ms = int(str(interval).strip())
        except ValueError:
            interval_ms = -1
        if interval_ms < 0:
            raise ValueError(
                f"Invalid value '{interval}' for option 'fetchOffset.retryIntervalMs', must be "
                "a whole number of ms"
            )
    group_id = kafka.get("group.id")
    if group_id is not None:
        log.warning(CUSTOM_GROUP_ID_WARNING)
        if "groupidprefix" in options:
            log.warning(
                "Option groupIdPrefix will be ignored as option kafka.group.id has been set."
            )
    else:
        prefix = options.get("groupidprefix") or (
            "spark-kafka-source" if batch is False else "spark-kafka-relation"
        )
        group_id = f"{prefix}-{uuid.uuid4()}-executor"
    return ReadOptions(
        kafka=kafka,
        strategy=strategy,
        topics=topics,
        pattern=pattern,
        assign=assign,
        starting=starting,
        ending=ending,
        timestamp_strategy=strat,
        fail_on_data_loss=_bool(options, "failondataloss", True),
        include_headers=_bool(options, "includeheaders", False),
        min_partitions=min_partitions,
        max_records_per_partition=max_records,
        max_offsets_per_trigger=max_per_trigger,
        min_offsets_per_trigger=min_per_trigger,
        max_trigger_delay_ms=delay_ms,
        poll_timeout_ms=poll or 120_000,
        fetch_offset_attempts=attempts or 3,
        fetch_offset_retry_interval_ms=interval_ms,
        group_id=group_id,
    )


def parse_write_options(options: Mapping[str, str]) -> WriteOptions:
    """The sink's options: ``topic``, ``kafka.*`` producer settings (``kafka.partitioner``:
    murmur2 as Java's producer, crc32 / fnv1a as librdkafka's)."""
    _unknown(options, _WRITE_KEYS, "sink")
    kafka = {
        k: v for k, v in kafka_params(options, _REFUSED_PRODUCER).items() if k != "partitioner"
    }
    raw = options.get("kafka.partitioner", "murmur2").strip().lower()
    if raw not in PARTITIONERS:
        raise ValueError(
            f"option 'kafka.partitioner': {raw!r} is not one of {', '.join(sorted(PARTITIONERS))}"
        )
    _check_client("producer", kafka)
    topic = options.get("topic")
    if topic is not None and not topic.strip():
        raise ValueError("option 'topic' must not be empty")
    return WriteOptions(
        kafka=kafka,
        topic=topic,
        partitioner=PARTITIONERS[raw],
        report_path=options.get("kgroup.commitreport"),
        transactional_id_prefix=_transactional_prefix(options, kafka),
    )


def _transactional_prefix(options: Mapping[str, str], kafka: Mapping[str, str]) -> str | None:
    prefix = options.get("kgroup.transactionalidprefix")
    if prefix is None:
        return None
    if not prefix.strip():
        raise ValueError("option 'kgroup.transactionalIdPrefix' must not be empty")
    if "transactional.id" in kafka:
        raise ValueError(
            "option 'kafka.transactional.id' is not supported: each task needs an id of its "
            "own; set 'kgroup.transactionalIdPrefix' instead"
        )
    if str(kafka.get("enable.idempotence", "true")).lower() == "false":
        raise ValueError("option 'kgroup.transactionalIdPrefix' needs kafka.enable.idempotence")
    return prefix
