"""The broker's configuration, in Kafka's own names: ``server.properties`` keys for the broker and
topic config keys for each topic, with Kafka's types, defaults, validation and broker synonyms.

A topic config that a topic does not override takes its value from the broker's synonym
(``retention.ms`` from ``log.retention.ms``, then ``log.retention.minutes``, then
``log.retention.hours``, as Kafka reads them), else from its default; DescribeConfigs reports
which, with the synonyms behind it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from kgroup.errors import InvalidArgument

__all__ = [
    "BROKER_CONFIGS",
    "TOPIC_CONFIGS",
    "BrokerConfig",
    "ConfigError",
    "ConfigSource",
    "ConfigSpec",
    "ConfigType",
    "parse_properties",
]

log = logging.getLogger("kgroup.broker")

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
#: SENDFILE_MIN_BYTES is kgroup.fetch.sendfile.min.bytes' default, measured with
#: bench/bench_sendfile.py (one consumer, 12 partitions, broker CPU for 300 MB): with every
#: partition sent by sendfile against every partition read into the response, 0.64 s against
#: 0.39 s at 16 KB a partition, 0.16-0.19 s against 0.14-0.16 s at 64 KB, even at 128 KB
#: (0.11-0.12 s), and 0.05 s against 0.09 s at 1 MB.
SENDFILE_MIN_BYTES = 128 * 1024


class ConfigType(IntEnum):
    """A config's type, with the ids DescribeConfigs v3+ uses (Kafka's ``ConfigDef.Type``)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """Where a config's value comes from, with DescribeConfigs' ids (Kafka's ``ConfigSource``)."""

    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigError(InvalidArgument):
    """A config name kgroup does not know, or a value it cannot take (Kafka's INVALID_CONFIG)."""


Validator = Callable[[Any], str | None]


def at_least(low: float) -> Validator:
    return lambda v: None if v >= low else f"Value must be at least {low}"


def between(low: float, high: float) -> Validator:
    return lambda v: None if low <= v <= high else f"Value must be between {low} and {high}"


def one_of(*allowed: str) -> Validator:
    def check(v: Any) -> str | None:
        values = v if isinstance(v, list) else [v]
        bad = [x for x in values if x not in allowed]
        return f"Value must be one of {', '.join(allowed)}" if bad else None

    return check


def parse_ip_overrides(value: str) -> dict[str, int]:
    """``max.connections.per.ip.overrides`` as {host: count}: ``host:count`` entries,
    comma-separated (Kafka's ``getMap``); ValueError names a malformed entry."""
    out: dict[str, int] = {}
    for entry in (e.strip() for e in value.split(",")):
        if not entry:
            continue
        host, sep, count = entry.rpartition(":")
        host = host.strip().strip("[]")
        count = count.strip()
        if not sep or not host or not count.lstrip("-").isdigit():
            raise ValueError(f"Map entry {entry!r} is not of the form host:count")
        out[host] = int(count)
    return out


def check_ip_overrides(value: str) -> str | None:
    """The validator of ``max.connections.per.ip.overrides``: None, or what is wrong."""
    try:
        parse_ip_overrides(value)
    except ValueError as e:
        return str(e)
    return None


def level(default: int, low: int, high: int) -> Validator:
    # Kafka's codec level validators: gzip also takes -1, zlib's default.
    return lambda v: (
        None if low <= v <= high or v == default else f"Value must be in [{low}, {high}]"
    )


@dataclass(frozen=True)
class ConfigSpec:
    """ConfigSpec is one config: its name, type, default, validation, broker synonyms (for a
    topic config, in the order Kafka reads them, each with the factor that turns its value into
    the topic config's unit) and what it does."""

    name: str
    type: ConfigType
    default: Any
    doc: str
    validator: Validator | None = None
    synonyms: tuple[tuple[str, int], ...] = ()
    read_only: bool = False

    def parse(self, raw: Any) -> Any:
        """The value of ``raw`` (a string from a properties file or a request, or a Python
        value) in this config's type; ConfigError when it does not parse or validate."""
        try:
            value = _parse(self.type, raw)
        except (TypeError, ValueError) as e:
            raise ConfigError(f"Invalid value {raw} for configuration {self.name}: {e}") from None
        if value is not None and self.validator is not None:
            problem = self.validator(value)
            if problem:
                raise ConfigError(f"Invalid value {raw} for configuration {self.name}: {problem}")
        return value


def _parse(t: ConfigType, raw: Any) -> Any:
    if raw is None:
        return None
    if t is ConfigType.BOOLEAN:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text not in ("true", "false"):
            raise ValueError("Expected value to be either true or false")
        return text == "true"
    if t in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
        if isinstance(raw, bool):
            raise ValueError("Expected a number")
        try:
            value = int(str(raw).strip()) if not isinstance(raw, int) else raw
        except ValueError:
            # Kafka's ConfigDef.parseType on a NumberFormatException.
            raise ValueError(f"Not a number of type {t.name}") from None
        limit = {ConfigType.INT: 2**31, ConfigType.SHORT: 2**15, ConfigType.LONG: 2**63}[t]
        if not -limit <= value < limit:
            raise ValueError(f"Not a number of type {t.name}")
        return value
    if t is ConfigType.DOUBLE:
        try:
            number = float(raw)
        except ValueError:
            raise ValueError("Not a number of type DOUBLE") from None
        if math.isnan(number):
            raise ValueError("Not a number")
        return number
    if t is ConfigType.LIST:
        if isinstance(raw, list | tuple):
            return [str(x).strip() for x in raw]
        text = str(raw).strip()
        return [x.strip() for x in text.split(",")] if text else []
    return str(raw).strip() if isinstance(raw, str) else str(raw)


def format_value(spec: ConfigSpec, value: Any) -> str | None:
    """A value as Kafka writes it in DescribeConfigs: ``true``, ``compact,delete``, ``0.5``."""
    if value is None:
        return None
    if spec.type is ConfigType.BOOLEAN:
        return "true" if value else "false"
    if spec.type is ConfigType.LIST:
        return ",".join(value)
    return str(value)


HOURS = 3_600_000
MINUTES = 60_000
MS = 1


def _topic(
    name: str,
    t: ConfigType,
    default: Any,
    doc: str,
    validator: Validator | None = None,
    *synonyms: tuple[str, int],
) -> ConfigSpec:
    return ConfigSpec(name, t, default, doc, validator, tuple(synonyms))


T = ConfigType

#: TOPIC_CONFIGS are Kafka 4.4's topic configs (``TopicConfig``), each with its broker synonyms
#: (Kafka 4.0 removed message.downconversion.enable, message.format.version and
#: message.timestamp.difference.max.ms).
TOPIC_CONFIGS: dict[str, ConfigSpec] = {
    s.name: s
    for s in (
        _topic(
            "cleanup.policy",
            T.LIST,
            ["delete"],
            "What happens to old segments: delete them (by retention time and size), compact "
            "them (keep the latest record per key), or both.",
            one_of("compact", "delete"),
            ("log.cleanup.policy", MS),
        ),
        _topic(
            "compression.type",
            T.STRING,
            "producer",
            "The codec batches are stored with: producer keeps each batch as the producer "
            "compressed it; a codec name recompresses batches that use another one.",
            one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
            ("compression.type", MS),
        ),
        _topic(
            "compression.gzip.level",
            T.INT,
            -1,
            "The gzip level used when the broker recompresses with gzip (-1: zlib's default).",
            level(-1, 1, 9),
            ("compression.gzip.level", MS),
        ),
        _topic(
            "compression.lz4.level",
            T.INT,
            9,
            "The lz4 level used when the broker recompresses with lz4.",
            between(1, 17),
            ("compression.lz4.level", MS),
        ),
        _topic(
            "compression.zstd.level",
            T.INT,
            3,
            "The zstd level used when the broker recompresses with zstd.",
            between(-131072, 22),
            ("compression.zstd.level", MS),
        ),
        _topic(
            "delete.retention.ms",
            T.LONG,
            86_400_000,
            "How long a tombstone (a record with a null value) stays in a compacted topic after "
            "the cleaner first reaches it, so that consumers can see the delete.",
            at_least(0),
            ("log.cleaner.delete.retention.ms", MS),
        ),
        _topic(
            "errors.deadletterqueue.group.enable",
            T.BOOLEAN,
            False,
            "Share groups: whether the group's dead-letter queue may write to this topic (no "
            "share groups here).",
        ),
        _topic(
            "file.delete.delay.ms",
            T.LONG,
            60_000,
            "How long a deleted segment's files are kept before they are removed.",
            at_least(0),
            ("log.segment.delete.delay.ms", MS),
        ),
        _topic(
            "flush.messages",
            T.LONG,
            LONG_MAX,
            "Force an fsync after this many messages (with kgroup.acks.all.fsync, acks=all is "
            "synced before its answer whatever this says).",
            at_least(1),
            ("log.flush.interval.messages", MS),
        ),
        _topic(
            "flush.ms",
            T.LONG,
            LONG_MAX,
            "Force an fsync of data older than this many milliseconds.",
            at_least(0),
            ("log.flush.interval.ms", MS),
            ("log.flush.scheduler.interval.ms", MS),
        ),
        _topic(
            "follower.replication.throttled.replicas",
            T.LIST,
            [],
            "Replicas whose replication is throttled on the follower side (no effect on a "
            "single broker).",
        ),
        _topic(
            "index.interval.bytes",
            T.INT,
            4096,
            "How many bytes of batches lie between two entries of the offset index.",
            at_least(0),
            ("log.index.interval.bytes", MS),
        ),
        _topic(
            "leader.replication.throttled.replicas",
            T.LIST,
            [],
            "Replicas whose replication is throttled on the leader side (no effect on a single "
            "broker).",
        ),
        _topic(
            "local.retention.bytes",
            T.LONG,
            -2,
            "Local retention in bytes when tiered storage is on (not supported; kept for "
            "compatibility).",
            at_least(-2),
            ("log.local.retention.bytes", MS),
        ),
        _topic(
            "local.retention.ms",
            T.LONG,
            -2,
            "Local retention in milliseconds when tiered storage is on (not supported; kept "
            "for compatibility).",
            at_least(-2),
            ("log.local.retention.ms", MS),
        ),
        _topic(
            "max.compaction.lag.ms",
            T.LONG,
            LONG_MAX,
            "The longest a record may stay uncompacted in a compacted topic.",
            at_least(1),
            ("log.cleaner.max.compaction.lag.ms", MS),
        ),
        _topic(
            "max.decompressed.message.bytes",
            T.INT,
            2_147_483_639,
            "The largest a record batch may be once decompressed (Kafka 4.4).",
            at_least(0),
            ("max.decompressed.message.bytes", MS),
        ),
        _topic(
            "max.message.bytes",
            T.INT,
            1_048_588,
            "The largest record batch the topic takes, after compression.",
            at_least(0),
            ("message.max.bytes", MS),
        ),
        _topic(
            "message.timestamp.after.max.ms",
            T.LONG,
            3_600_000,  # one hour since Kafka 4.0 (KIP-1030); Long.MAX_VALUE before
            "How far in the future (after the broker's clock) a CreateTime timestamp may be.",
            at_least(0),
            ("log.message.timestamp.after.max.ms", MS),
        ),
        _topic(
            "message.timestamp.before.max.ms",
            T.LONG,
            LONG_MAX,
            "How far in the past (before the broker's clock) a CreateTime timestamp may be.",
            at_least(0),
            ("log.message.timestamp.before.max.ms", MS),
        ),
        _topic(
            "message.timestamp.type",
            T.STRING,
            "CreateTime",
            "CreateTime keeps the producer's timestamps; LogAppendTime stamps each batch with "
            "the time the broker appended it.",
            one_of("CreateTime", "LogAppendTime"),
            ("log.message.timestamp.type", MS),
        ),
        _topic(
            "min.cleanable.dirty.ratio",
            T.DOUBLE,
            0.5,
            "How much of a compacted log must be uncompacted before the cleaner runs on it.",
            between(0, 1),
            ("log.cleaner.min.cleanable.ratio", MS),
        ),
        _topic(
            "min.compaction.lag.ms",
            T.LONG,
            0,
            "The least time a record stays uncompacted in a compacted topic.",
            at_least(0),
            ("log.cleaner.min.compaction.lag.ms", MS),
        ),
        _topic(
            "min.insync.replicas",
            T.INT,
            1,
            "The in-sync replicas an acks=all produce needs (one broker: 1).",
            at_least(1),
            ("min.insync.replicas", MS),
        ),
        _topic(
            "preallocate",
            T.BOOLEAN,
            False,
            "Whether a new segment's file is preallocated (kgroup does not preallocate).",
            None,
            ("log.preallocate", MS),
        ),
        _topic(
            "remote.copy.lag.bytes",
            T.LONG,
            -1,
            "Tiered storage: how far behind the copy to remote storage may fall, in bytes (not "
            "supported).",
            None,
            ("log.remote.copy.lag.bytes", MS),
        ),
        _topic(
            "remote.copy.lag.ms",
            T.LONG,
            0,
            "Tiered storage: how far behind the copy to remote storage may fall, in "
            "milliseconds (not supported).",
            None,
            ("log.remote.copy.lag.ms", MS),
        ),
        _topic(
            "remote.log.copy.disable",
            T.BOOLEAN,
            False,
            "Tiered storage: stop copying to remote storage (not supported).",
        ),
        _topic(
            "remote.log.delete.on.disable",
            T.BOOLEAN,
            False,
            "Tiered storage: delete remote data when it is disabled (not supported).",
        ),
        _topic(
            "remote.storage.enable",
            T.BOOLEAN,
            False,
            "Tiered storage for the topic (not supported: must stay false).",
            lambda v: None if v is False else "Tiered storage is not supported",
        ),
        _topic(
            "retention.bytes",
            T.LONG,
            -1,
            "The most a partition keeps before its oldest segments are deleted (-1: no limit).",
            None,
            ("log.retention.bytes", MS),
        ),
        _topic(
            "retention.ms",
            T.LONG,
            604_800_000,
            "How long a segment is kept after its newest record before it is deleted (-1: "
            "forever).",
            at_least(-1),
            ("log.retention.ms", MS),
            ("log.retention.minutes", MINUTES),
            ("log.retention.hours", HOURS),
        ),
        _topic(
            "segment.bytes",
            T.INT,
            1_073_741_824,
            "The size at which the active segment is closed and a new one started.",
            at_least(14),
            ("log.segment.bytes", MS),
        ),
        _topic(
            "segment.index.bytes",
            T.INT,
            10_485_760,
            "The largest offset index of a segment; a full index starts a new segment.",
            at_least(4),
            ("log.index.size.max.bytes", MS),
        ),
        _topic(
            "segment.jitter.ms",
            T.LONG,
            0,
            "A random amount taken off segment.ms so that segments do not all roll at once.",
            at_least(0),
            ("log.roll.jitter.ms", MS),
            ("log.roll.jitter.hours", HOURS),
        ),
        _topic(
            "segment.ms",
            T.LONG,
            604_800_000,
            "The age at which the active segment is closed and a new one started.",
            at_least(1),
            ("log.roll.ms", MS),
            ("log.roll.hours", HOURS),
        ),
        _topic(
            "unclean.leader.election.enable",
            T.BOOLEAN,
            False,
            "Whether an out-of-sync replica may become leader (no effect on a single broker).",
            None,
            ("unclean.leader.election.enable", MS),
        ),
    )
}


def _broker(
    name: str, t: ConfigType, default: Any, doc: str, validator: Validator | None = None
) -> ConfigSpec:
    return ConfigSpec(name, t, default, doc, validator, read_only=True)


_SYNONYM_TYPES = {
    "log.retention.minutes": T.INT,
    "log.retention.hours": T.INT,
    "log.roll.hours": T.INT,
    "log.roll.jitter.hours": T.INT,
}


#: NULL_DEFAULT_SYNONYMS are the broker synonyms that Kafka leaves without a default though
#: they end their chain (KafkaConfig's log.flush.interval.ms: the topic default stands).
NULL_DEFAULT_SYNONYMS = frozenset({"log.flush.interval.ms"})


def _synonym_default(spec: ConfigSpec, index: int) -> Any:
    """The default of a topic config's broker synonym, as Kafka has it: the last synonym of the
    chain (``log.retention.hours``) holds the topic default in its unit, the finer ones before
    it (``log.retention.ms``, ``log.retention.minutes``) are unset."""
    if index != len(spec.synonyms) - 1 or spec.default is None:
        return None
    if spec.synonyms[index][0] in NULL_DEFAULT_SYNONYMS:
        return None
    factor = spec.synonyms[index][1]
    return spec.default // factor if factor != 1 else spec.default


def _mapping_rules(value: Any) -> str | None:
    from kgroup.broker.principals import check_mapping_rules

    return check_mapping_rules(value)


#: SSL_CONFIGS are Kafka's TLS settings of a listener (SslConfigs, BrokerSecurityConfigs), with
#: its defaults; each may be set for one listener as ``listener.name.<listener>.<key>``
#: (kgroup.broker.tls reads them).
SSL_CONFIGS = (
    _broker(
        "ssl.keystore.type",
        T.STRING,
        "JKS",
        "The file format of the key store file: PEM or PKCS12 (Kafka's default, JKS, cannot be "
        "read by kgroup: convert the store to PKCS12 or PEM).",
    ),
    _broker(
        "ssl.keystore.location",
        T.STRING,
        None,
        "The location of the key store file: the listener's private key and certificate chain.",
    ),
    _broker(
        "ssl.keystore.password",
        T.PASSWORD,
        None,
        "The store password for the key store file (not set for PEM, whose key is decrypted "
        "with ssl.key.password).",
    ),
    _broker(
        "ssl.key.password",
        T.PASSWORD,
        None,
        "The password of the private key in the key store file or the PEM key specified in "
        "'ssl.keystore.key'.",
    ),
    _broker(
        "ssl.keystore.key",
        T.PASSWORD,
        None,
        "Private key in the format specified by 'ssl.keystore.type' (PEM, PKCS#8, encrypted "
        "with ssl.key.password or clear), with ssl.keystore.certificate.chain.",
    ),
    _broker(
        "ssl.keystore.certificate.chain",
        T.PASSWORD,
        None,
        "Certificate chain in the format specified by 'ssl.keystore.type' (PEM: X.509 "
        "certificates, the listener's first).",
    ),
    _broker(
        "ssl.truststore.type",
        T.STRING,
        "JKS",
        "The file format of the trust store file: PEM or PKCS12 (JKS cannot be read by kgroup).",
    ),
    _broker(
        "ssl.truststore.location",
        T.STRING,
        None,
        "The location of the trust store file: the certificates client certificates are "
        "checked against (unset: the system's).",
    ),
    _broker(
        "ssl.truststore.password",
        T.PASSWORD,
        None,
        "The password for the trust store file (not for PEM).",
    ),
    _broker(
        "ssl.truststore.certificates",
        T.PASSWORD,
        None,
        "Trusted certificates in the format specified by 'ssl.truststore.type' (PEM).",
    ),
    _broker(
        "ssl.client.auth",
        T.STRING,
        "none",
        "Whether the broker asks clients for a certificate: required (a client without a "
        "trusted one is refused), requested (a client may send none, and is then "
        "User:ANONYMOUS) or none.",
        one_of("required", "requested", "none"),
    ),
    _broker(
        "ssl.enabled.protocols",
        T.LIST,
        ["TLSv1.2", "TLSv1.3"],
        "The list of protocols enabled for SSL connections.",
    ),
    _broker(
        "ssl.protocol",
        T.STRING,
        "TLSv1.3",
        "The SSL protocol used to generate the SSLContext; the protocols a connection may use "
        "are ssl.enabled.protocols.",
    ),
    _broker(
        "ssl.cipher.suites",
        T.LIST,
        None,
        "A list of TLS 1.2 cipher suites, by Java's names or OpenSSL's (default: all of "
        "OpenSSL's secure ones; TLS 1.3's suites are always enabled).",
    ),
    _broker(
        "ssl.allow.dn.changes",
        T.BOOLEAN,
        False,
        "Whether a dynamic update of a listener's key store may change its certificate's "
        "distinguished name.",
    ),
    _broker(
        "ssl.allow.san.changes",
        T.BOOLEAN,
        False,
        "Whether a dynamic update of a listener's key store may change its certificate's "
        "subject alternative names.",
    ),
    _broker(
        "ssl.principal.mapping.rules",
        T.STRING,
        "DEFAULT",
        "A list of rules for mapping from distinguished name from the client certificate to "
        "short name: RULE:pattern/replacement/[LU] or DEFAULT (the name itself), the first "
        "that matches applies.",
        _mapping_rules,
    ),
    _broker(
        "ssl.endpoint.identification.algorithm",
        T.STRING,
        "https",
        "The endpoint identification algorithm a client uses to check the server's host name "
        "(accepted for Kafka's server.properties; a single broker makes no TLS connections).",
    ),
    _broker(
        "ssl.keymanager.algorithm",
        T.STRING,
        "SunX509",
        "Java's key manager factory algorithm (accepted for Kafka's server.properties; no effect).",
    ),
    _broker(
        "ssl.trustmanager.algorithm",
        T.STRING,
        "PKIX",
        "Java's trust manager factory algorithm (accepted for Kafka's server.properties; no "
        "effect).",
    ),
)


#: BROKER_CONFIGS are the ``server.properties`` keys kgroup reads: its own, and every broker
#: synonym of a topic config.
BROKER_CONFIGS: dict[str, ConfigSpec] = {
    s.name: s
    for s in (
        _broker("node.id", T.INT, 1, "This broker's id.", at_least(0)),
        _broker(
            "listeners",
            T.LIST,
            ["PLAINTEXT://127.0.0.1:9092"],
            "The listeners, comma-separated NAME://host:port (an empty host: every interface; "
            "port 0: a free one). A name that is not a security protocol must be mapped by "
            "listener.security.protocol.map.",
        ),
        _broker(
            "advertised.listeners",
            T.LIST,
            None,
            "The address of each listener that clients are told to use, NAME://host:port, if "
            "not the listener's own.",
        ),
        _broker(
            "listener.security.protocol.map",
            T.STRING,
            "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
            "Each listener name's security protocol, comma-separated NAME:PROTOCOL.",
        ),
        _broker(
            "quota.window.num",
            T.INT,
            11,
            "The number of samples kept in memory for client quotas.",
            at_least(1),
        ),
        _broker(
            "quota.window.size.seconds",
            T.INT,
            1,
            "The time span of each sample for client quotas.",
            at_least(1),
        ),
        _broker(
            "controller.quota.window.num",
            T.INT,
            11,
            "The number of samples of controller mutation quotas: with the sample's span, how "
            "many seconds' worth of mutations a client may make at once.",
            at_least(1),
        ),
        _broker(
            "controller.quota.window.size.seconds",
            T.INT,
            1,
            "The time span of each sample of controller mutation quotas.",
            at_least(1),
        ),
        _broker(
            "controller.listener.names",
            T.STRING,
            None,
            "KRaft's controller listeners: a single kgroup broker has none, so listeners of "
            "these names are not bound.",
        ),
        *SSL_CONFIGS,
        _broker(
            "log.dirs",
            T.STRING,
            None,
            "The folders holding the broker's data, comma-separated: new partitions go to the "
            "one holding fewest; the first also holds the broker's metadata.",
        ),
        _broker("log.dir", T.STRING, "./kgroup-data", "The data folder when log.dirs is unset."),
        _broker(
            "num.partitions",
            T.INT,
            1,
            "The partitions of a topic created without a partition count (auto-created "
            "topics included).",
            at_least(1),
        ),
        _broker(
            "default.replication.factor",
            T.INT,
            1,
            "The replication factor of topics created without one (one broker: 1).",
            between(1, 1),
        ),
        _broker(
            "auto.create.topics.enable",
            T.BOOLEAN,
            True,
            "Whether a Metadata request for a missing topic creates it.",
        ),
        _broker(
            "socket.request.max.bytes",
            T.INT,
            104_857_600,
            "The largest request frame the broker reads; a larger one closes the connection.",
            at_least(1),
        ),
        _broker(
            "sasl.enabled.mechanisms",
            T.LIST,
            ["GSSAPI"],
            "The SASL mechanisms SASL listeners offer: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, "
            "OAUTHBEARER (kgroup has no GSSAPI, Kafka's default: a SASL listener needs another). "
            "Each needs its listener.name.<listener>.<mechanism>.sasl.jaas.config.",
        ),
        _broker(
            "sasl.jaas.config",
            T.PASSWORD,
            None,
            "A JAAS login module configuration. A broker reads it per listener and mechanism: "
            "listener.name.<listener>.<mechanism lower>.sasl.jaas.config.",
        ),
        _broker(
            "inter.broker.listener.name",
            T.STRING,
            None,
            "The listener brokers use between themselves (default: the listener named as "
            "security.inter.broker.protocol). A single kgroup broker has no peers; with more "
            "than one listener, this one is exempt from the broker-wide max.connections and "
            "max.connection.creation.rate, as in Kafka.",
        ),
        _broker(
            "security.inter.broker.protocol",
            T.STRING,
            "PLAINTEXT",
            "The security protocol brokers use between themselves: the inter-broker listener "
            "is the one of that name, unless inter.broker.listener.name is set.",
            one_of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
        ),
        _broker(
            "sasl.mechanism.inter.broker.protocol",
            T.STRING,
            "GSSAPI",
            "The SASL mechanism brokers use between themselves (a single kgroup broker has "
            "no peers).",
        ),
        _broker(
            "connections.max.reauth.ms",
            T.LONG,
            0,
            "The longest a SASL session lasts before the client must re-authenticate "
            "(KIP-368; 0: sessions never expire). Clients learn it from SaslAuthenticate v1+.",
        ),
        _broker(
            "connection.failed.authentication.delay.ms",
            T.INT,
            100,
            "How long a failed authentication waits before its answer and the connection's "
            "close (fewer tries for a password guesser); keep it below connections.max.idle.ms.",
            at_least(0),
        ),
        _broker(
            "sasl.server.max.receive.size",
            T.INT,
            524_288,
            "The largest frame taken before SASL authentication completes.",
        ),
        _broker(
            "log.retention.check.interval.ms",
            T.LONG,
            300_000,
            "How often retention and segment rolling by time are checked.",
            at_least(1),
        ),
        _broker("log.cleaner.enable", T.BOOLEAN, True, "Whether compacted topics are cleaned."),
        _broker(
            "log.cleaner.backoff.ms",
            T.LONG,
            15_000,
            "How long the cleaner sleeps when no log needs cleaning.",
            at_least(0),
        ),
        _broker(
            "producer.id.expiration.ms",
            T.INT,
            86_400_000,
            "How long an idle idempotent producer's state is kept.",
            at_least(1),
        ),
        _broker(
            "transaction.state.log.num.partitions",
            T.INT,
            50,
            "The partitions of __transaction_state; a transactional id lives in partition "
            "abs(hashCode(transactional id)) % this. Set it before the topic is first created.",
            at_least(1),
        ),
        _broker(
            "transaction.state.log.segment.bytes",
            T.INT,
            104_857_600,
            "The segment size of __transaction_state.",
            at_least(1),
        ),
        _broker(
            "transaction.state.log.load.buffer.size",
            T.INT,
            5 * 1024 * 1024,
            "How many bytes of __transaction_state are read at a time when transactions are "
            "loaded at start.",
            at_least(1),
        ),
        _broker(
            "transaction.state.log.replication.factor",
            T.SHORT,
            3,
            "The replication factor of __transaction_state. One broker keeps one replica "
            "whatever this says.",
            at_least(1),
        ),
        _broker(
            "transaction.state.log.min.isr",
            T.INT,
            2,
            "The min.insync.replicas of __transaction_state (one broker: one replica).",
            at_least(1),
        ),
        _broker(
            "transaction.max.timeout.ms",
            T.INT,
            900_000,
            "The longest transaction timeout a producer may ask for (InitProducerId answers "
            "INVALID_TRANSACTION_TIMEOUT above it).",
            at_least(1),
        ),
        _broker(
            "transactional.id.expiration.ms",
            T.INT,
            604_800_000,
            "How long the coordinator keeps a transactional id that sends no transaction request.",
            at_least(1),
        ),
        _broker(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            T.INT,
            10_000,
            "How often transactions open longer than their timeout are aborted.",
            at_least(1),
        ),
        _broker(
            "transaction.remove.expired.transaction.cleanup.interval.ms",
            T.INT,
            3_600_000,
            "How often expired transactional ids are removed.",
            at_least(1),
        ),
        _broker(
            "transaction.partition.verification.enable",
            T.BOOLEAN,
            True,
            "Whether a partition checks with the transaction coordinator that a transactional "
            "batch's partition is in its transaction before the first write (KIP-890).",
        ),
        _broker(
            "kgroup.acks.all.fsync",
            T.BOOLEAN,
            False,
            "kgroup's own: whether an acks=all produce is answered only once its batch is "
            "fsynced (produces waiting together share one fsync per log). Off, as in Kafka: "
            "acks=all is answered once the batch is written, which survives the broker's crash "
            "(kill -9) but not the machine's; flush.messages and flush.ms decide the fsync. On "
            "this also survives a power loss, at the cost of one fsync in each answer's time.",
        ),
        _broker(
            "kgroup.log.dir.failure.summary.ms",
            T.LONG,
            30_000,
            "kgroup's own: while writes to a log directory keep failing, how often a warning "
            "sums them up (the first failure of each kind is logged at once as an error).",
            at_least(1),
        ),
        _broker(
            "kgroup.log.storage",
            T.STRING,
            "disk",
            "kgroup's own: where the broker keeps its data. disk: the folders of log.dirs. "
            "memory: an in-process memory filesystem with the disk's semantics (the same "
            "recovery, retention and compaction run; fsync does nothing), for tests; log.dirs "
            "then names memory paths, and when neither log.dirs nor log.dir is set the broker "
            "makes a fresh one (/kgroup-memory/<pid>-<n>). Fetch copies records into its "
            "responses (no sendfile); the memory is freed when the broker stops unless "
            "kgroup.log.storage.keep is set.",
            one_of("disk", "memory"),
        ),
        _broker(
            "kgroup.log.storage.keep",
            T.BOOLEAN,
            False,
            "kgroup's own: with kgroup.log.storage=memory, whether the broker's memory "
            "filesystem outlives its stop, so that a broker started later in the same process "
            "on the same log.dirs finds its topics, records and offsets (the test kit's "
            "restart); whoever set it frees the memory with kgroup.log.drop_memory_root.",
        ),
        _broker(
            "kgroup.fetch.sendfile",
            T.BOOLEAN,
            True,
            "kgroup's own: whether Fetch responses send record batches straight from their "
            "segment files with sendfile(2), as Kafka does, rather than copying them through "
            "the broker (false: read into memory, then written).",
        ),
        _broker(
            "kgroup.fetch.sendfile.min.bytes",
            T.INT,
            SENDFILE_MIN_BYTES,
            "kgroup's own: a partition's fetched records shorter than this are read straight "
            "into the response rather than sent with sendfile: below about 128 KB a sendfile "
            "call, and the write of the bytes around it, cost more than the copy.",
            at_least(0),
        ),
        # Authorisation (Kafka's KafkaConfig and StandardAuthorizer; kgroup.broker.authorizer).
        _broker(
            "authorizer.class.name",
            T.STRING,
            "",
            "The authorizer: org.apache.kafka.metadata.authorizer.StandardAuthorizer checks "
            "every request against the ACLs; empty (the default) allows everything.",
        ),
        _broker(
            "super.users",
            T.STRING,
            None,
            "Principals allowed every operation, separated by semicolons (User:admin;User:ops).",
        ),
        # StandardAuthorizer's own keys, not KafkaConfig's: unset (false) by default, so that
        # DescribeConfigs leaves them out as Kafka's does.
        _broker(
            "allow.everyone.if.no.acl.found",
            T.BOOLEAN,
            None,
            "Whether an action on a resource that no ACL applies to is allowed (default false).",
        ),
        _broker(
            "queued.max.requests",
            T.INT,
            500,
            "The requests a connection may have in flight before the broker stops reading it.",
            at_least(1),
        ),
        # The limits on clients (Kafka's SocketServerConfigs; kgroup.broker.limits).
        _broker(
            "queued.max.request.bytes",
            T.LONG,
            -1,
            "The number of queued bytes allowed before no more requests are read: requests "
            "read and not yet answered, and frames begun, across the broker (-1: no limit).",
        ),
        _broker(
            "max.connections",
            T.INT,
            INT_MAX,
            "The maximum number of connections allowed in the broker at any time; past it new "
            "connections wait to be accepted. listener.name.<listener>.max.connections sets "
            "one listener's.",
            at_least(0),
        ),
        _broker(
            "max.connections.per.ip",
            T.INT,
            INT_MAX,
            "The maximum number of connections allowed from each ip address (0 is allowed if "
            "max.connections.per.ip.overrides is set); a new connection past it is closed.",
            at_least(0),
        ),
        _broker(
            "max.connections.per.ip.overrides",
            T.STRING,
            "",
            "Per-ip or hostname overrides of max.connections.per.ip, comma-separated: "
            "hostName:100,127.0.0.1:200.",
            check_ip_overrides,
        ),
        _broker(
            "connections.max.idle.ms",
            T.LONG,
            600_000,
            "Idle connections timeout: a connection that reads and writes nothing for this "
            "long (with no request in flight) is closed.",
        ),
        # The group coordinator's (Kafka's GroupCoordinatorConfig, 3.9 defaults).
        _broker(
            "group.initial.rebalance.delay.ms",
            T.INT,
            3000,
            "How long the first rebalance of an empty group waits for more members to join, "
            "re-armed by each new one up to the rebalance timeout (0: none).",
        ),
        _broker(
            "group.min.session.timeout.ms",
            T.INT,
            6000,
            "The shortest session timeout a member may ask for.",
        ),
        _broker(
            "group.max.session.timeout.ms",
            T.INT,
            1_800_000,
            "The longest session timeout a member may ask for.",
        ),
        _broker(
            "group.max.size",
            T.INT,
            INT_MAX,
            "The most members a classic group takes.",
            at_least(1),
        ),
        _broker(
            "offset.metadata.max.bytes",
            T.INT,
            4096,
            "The longest metadata string a committed offset may carry.",
        ),
        # KIP-848's consumer protocol (Kafka 4.x's GroupCoordinatorConfig defaults); the group
        # coordinator checks the timings against each other at start.
        _broker(
            "group.coordinator.rebalance.protocols",
            T.LIST,
            ["classic", "consumer"],
            "The group protocols the coordinator serves: classic (JoinGroup, SyncGroup) and "
            "consumer (KIP-848's ConsumerGroupHeartbeat).",
            one_of("classic", "consumer", "share", "streams"),
        ),
        _broker(
            "group.consumer.session.timeout.ms",
            T.INT,
            45_000,
            "How long a consumer-protocol member may go without a heartbeat before it is "
            "removed from its group.",
            at_least(1),
        ),
        _broker(
            "group.consumer.min.session.timeout.ms",
            T.INT,
            45_000,
            "The shortest session timeout of consumer-protocol groups.",
            at_least(1),
        ),
        _broker(
            "group.consumer.max.session.timeout.ms",
            T.INT,
            60_000,
            "The longest session timeout of consumer-protocol groups.",
            at_least(1),
        ),
        _broker(
            "group.consumer.heartbeat.interval.ms",
            T.INT,
            5_000,
            "The heartbeat interval consumer-protocol members are told to keep.",
            at_least(1),
        ),
        _broker(
            "group.consumer.min.heartbeat.interval.ms",
            T.INT,
            5_000,
            "The shortest heartbeat interval of consumer-protocol groups.",
            at_least(1),
        ),
        _broker(
            "group.consumer.max.heartbeat.interval.ms",
            T.INT,
            15_000,
            "The longest heartbeat interval of consumer-protocol groups.",
            at_least(1),
        ),
        _broker(
            "group.consumer.assignment.interval.ms",
            T.INT,
            1_000,
            "How often, at most, a consumer-protocol group's target assignment is computed "
            "(Kafka 4.3+); 0 computes it at every change of the group.",
            at_least(0),
        ),
        _broker(
            "group.consumer.min.assignment.interval.ms",
            T.INT,
            0,
            "The shortest assignment interval a consumer-protocol group may be given.",
            at_least(0),
        ),
        _broker(
            "group.consumer.max.assignment.interval.ms",
            T.INT,
            15_000,
            "The longest assignment interval a consumer-protocol group may be given.",
            at_least(0),
        ),
        _broker(
            "group.consumer.max.size",
            T.INT,
            INT_MAX,
            "The most members a consumer-protocol group takes.",
            at_least(1),
        ),
        _broker(
            "group.consumer.assignors",
            T.LIST,
            ["uniform", "range"],
            "The server-side assignors of consumer-protocol groups; the first is the default.",
        ),
        _broker(
            "group.consumer.migration.policy",
            T.STRING,
            "bidirectional",
            "Whether non-empty groups convert online between the classic and the consumer "
            "protocol: bidirectional, upgrade, downgrade or disabled.",
            one_of("bidirectional", "upgrade", "downgrade", "disabled"),
        ),
        # Share groups (KIP-932; Kafka 4.2's ShareGroupConfig, ShareSessionCache): the broker
        # side of ShareFetch and ShareAcknowledge (kgroup.broker.share).
        _broker(
            "group.share.enable",
            T.BOOLEAN,
            True,
            "Whether the broker serves share groups (KIP-932): ShareGroupHeartbeat, "
            "ShareGroupDescribe, ShareFetch and ShareAcknowledge, advertised only when it is on "
            "(Kafka's internal switch; on, as Kafka 4.2+ with share.version=1, the default of a "
            "new cluster).",
        ),
        # The group coordinator's share group settings (Kafka 4.2's GroupCoordinatorConfig).
        _broker(
            "group.share.session.timeout.ms",
            T.INT,
            45_000,
            "How long a share group member may go without a heartbeat before it is removed "
            "from its group.",
            at_least(1),
        ),
        _broker(
            "group.share.min.session.timeout.ms",
            T.INT,
            45_000,
            "The shortest share.session.timeout.ms a share group may be given.",
            at_least(1),
        ),
        _broker(
            "group.share.max.session.timeout.ms",
            T.INT,
            60_000,
            "The longest share.session.timeout.ms a share group may be given.",
            at_least(1),
        ),
        _broker(
            "group.share.heartbeat.interval.ms",
            T.INT,
            5_000,
            "The heartbeat interval share group members are told to keep.",
            at_least(1),
        ),
        _broker(
            "group.share.min.heartbeat.interval.ms",
            T.INT,
            5_000,
            "The shortest share.heartbeat.interval.ms a share group may be given.",
            at_least(1),
        ),
        _broker(
            "group.share.max.heartbeat.interval.ms",
            T.INT,
            15_000,
            "The longest share.heartbeat.interval.ms a share group may be given.",
            at_least(1),
        ),
        _broker(
            "group.share.max.size",
            T.INT,
            200,
            "How many members a share group accepts.",
            between(1, 1000),
        ),
        _broker(
            "group.share.initialize.retry.interval.ms",
            T.INT,
            30_000,
            "How long the share state of a share group's partitions may take to be "
            "initialized before the coordinator asks for it again (Kafka's internal setting).",
            at_least(1),
        ),
        _broker(
            "group.share.record.lock.duration.ms",
            T.INT,
            30_000,
            "How long a record delivered to a share group stays acquired, unless the group "
            "sets share.record.lock.duration.ms.",
            between(1000, 3_600_000),
        ),
        _broker(
            "group.share.min.record.lock.duration.ms",
            T.INT,
            15_000,
            "The shortest record lock duration a share group may be given.",
            between(1000, 30_000),
        ),
        _broker(
            "group.share.max.record.lock.duration.ms",
            T.INT,
            60_000,
            "The longest record lock duration a share group may be given.",
            between(30_000, 3_600_000),
        ),
        _broker(
            "group.share.delivery.count.limit",
            T.INT,
            5,
            "How many times a record is delivered to a share group before it is archived.",
            between(2, 10),
        ),
        _broker(
            "group.share.partition.max.record.locks",
            T.INT,
            2000,
            "How many records of one partition a share group may hold in flight.",
            between(100, 10_000),
        ),
        _broker(
            "group.share.max.share.sessions",
            T.INT,
            2000,
            "The most share sessions the broker keeps at once.",
            at_least(1),
        ),
        _broker(
            "offsets.load.buffer.size",
            T.INT,
            5 * 1024 * 1024,
            "How many bytes of __consumer_offsets are read at a time when its groups are "
            "loaded at start.",
            at_least(1),
        ),
        _broker(
            "offsets.retention.minutes",
            T.INT,
            10080,
            "How long the committed offsets of a group stay once it is empty (or, for a "
            "group without members, since the commit).",
            at_least(1),
        ),
        _broker(
            "offsets.retention.check.interval.ms",
            T.LONG,
            600_000,
            "How often expired committed offsets are removed.",
            at_least(1),
        ),
        _broker(
            "offsets.topic.num.partitions",
            T.INT,
            50,
            "The partitions of __consumer_offsets; a group lives in partition "
            "abs(hashCode(group id)) % this. Set it before the topic is first created.",
            at_least(1),
        ),
        _broker(
            "offsets.topic.segment.bytes",
            T.INT,
            104_857_600,
            "The segment size of __consumer_offsets (kept small so that it compacts quickly).",
            at_least(1),
        ),
        _broker(
            "offsets.topic.replication.factor",
            T.SHORT,
            3,
            "The replication factor of __consumer_offsets. One broker keeps one replica "
            "whatever this says (Kafka's default of 3 would keep a single node from ever "
            "creating the topic).",
            at_least(1),
        ),
        *(
            ConfigSpec(
                syn,
                _SYNONYM_TYPES.get(syn, spec.type),
                _synonym_default(spec, i),
                f"The broker's default for the topic config {spec.name}.",
                read_only=True,
            )
            for spec in TOPIC_CONFIGS.values()
            for i, (syn, _) in enumerate(spec.synonyms)
        ),
    )
}
# message.max.bytes has Kafka's default even unset: it is also a broker limit.
BROKER_CONFIGS["message.max.bytes"] = ConfigSpec(
    "message.max.bytes",
    T.INT,
    1_048_588,
    "The largest record batch the broker takes; the default of max.message.bytes.",
    at_least(0),
    read_only=True,
)

#: DYNAMIC_ONLY_CONFIGS are the broker configs Kafka lets AlterConfigs change at run time
#: (``kgroup.broker.dynamic_config``) that kgroup declares only so that a client may set and
#: describe them, with Kafka's types and defaults: thread pools, the log cleaner's tuning,
#: metric reporters, Kerberos and SASL login refresh, which kgroup does not have. Setting one
#: has no effect in kgroup. (setdefault: a key declared above with its use wins.)
for _spec in (
    _broker(
        "background.threads", T.INT, 10, "Background threads (no effect in kgroup).", at_least(1)
    ),
    _broker("num.io.threads", T.INT, 8, "Request threads (no effect in kgroup).", at_least(1)),
    _broker("num.network.threads", T.INT, 3, "Network threads (no effect in kgroup).", at_least(1)),
    _broker(
        "num.replica.fetchers",
        T.INT,
        1,
        "Replica fetcher threads (no effect in kgroup).",
        at_least(1),
    ),
    _broker(
        "num.recovery.threads.per.data.dir",
        T.INT,
        2,
        "Log recovery threads per log dir (no effect in kgroup).",
        at_least(1),
    ),
    _broker(
        "log.cleaner.threads", T.INT, 1, "Log cleaner threads (no effect in kgroup).", at_least(0)
    ),
    _broker(
        "log.cleaner.dedupe.buffer.size",
        T.LONG,
        128 * 1024 * 1024,
        "Memory for the log cleaner's offset map (no effect in kgroup).",
    ),
    _broker(
        "log.cleaner.io.buffer.load.factor",
        T.DOUBLE,
        0.9,
        "Load factor of the log cleaner's offset map (no effect in kgroup).",
    ),
    _broker(
        "log.cleaner.io.buffer.size",
        T.INT,
        512 * 1024,
        "The log cleaner's I/O buffers (no effect in kgroup).",
        at_least(0),
    ),
    _broker(
        "log.cleaner.io.max.bytes.per.second",
        T.DOUBLE,
        1.7976931348623157e308,
        "The log cleaner's I/O throttle (no effect in kgroup).",
    ),
    _broker(
        "metric.reporters",
        T.LIST,
        ["org.apache.kafka.common.metrics.JmxReporter"],
        "Metrics reporter classes (no effect in kgroup).",
    ),
    _broker(
        "principal.builder.class",
        T.CLASS,
        "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
        "The class building principals (kgroup's is fixed: Kafka's default).",
    ),
    _broker("ssl.provider", T.STRING, None, "The TLS security provider (no effect in kgroup)."),
    _broker(
        "ssl.secure.random.implementation",
        T.STRING,
        None,
        "The TLS random number generator (no effect in kgroup).",
    ),
    _broker("ssl.engine.factory.class", T.CLASS, None, "TLS engine factory (no effect in kgroup)."),
    _broker(
        "sasl.kerberos.service.name", T.STRING, None, "Kerberos service name (no GSSAPI in kgroup)."
    ),
    _broker(
        "sasl.kerberos.kinit.cmd",
        T.STRING,
        "/usr/bin/kinit",
        "Kerberos kinit (no GSSAPI in kgroup).",
    ),
    _broker(
        "sasl.kerberos.ticket.renew.window.factor",
        T.DOUBLE,
        0.8,
        "Kerberos ticket renewal point (no GSSAPI in kgroup).",
    ),
    _broker(
        "sasl.kerberos.ticket.renew.jitter",
        T.DOUBLE,
        0.05,
        "Kerberos ticket renewal jitter (no GSSAPI in kgroup).",
    ),
    _broker(
        "sasl.kerberos.min.time.before.relogin",
        T.LONG,
        60_000,
        "Kerberos relogin interval, ms (no GSSAPI in kgroup).",
    ),
    _broker(
        "sasl.kerberos.principal.to.local.rules",
        T.LIST,
        ["DEFAULT"],
        "Kerberos principal mapping rules (no GSSAPI in kgroup).",
    ),
    _broker(
        "sasl.login.refresh.window.factor",
        T.DOUBLE,
        0.8,
        "Login refresh point (no effect in kgroup).",
        between(0.5, 1.0),
    ),
    _broker(
        "sasl.login.refresh.window.jitter",
        T.DOUBLE,
        0.05,
        "Login refresh jitter (no effect in kgroup).",
        between(0.0, 0.25),
    ),
    _broker(
        "sasl.login.refresh.min.period.seconds",
        T.SHORT,
        60,
        "Least time between login refreshes (no effect in kgroup).",
        between(0, 900),
    ),
    _broker(
        "sasl.login.refresh.buffer.seconds",
        T.SHORT,
        300,
        "Login refresh buffer (no effect in kgroup).",
        between(0, 3600),
    ),
    _broker("max.connections", T.INT, INT_MAX, "Most open connections.", at_least(0)),
    _broker(
        "max.connection.creation.rate",
        T.INT,
        INT_MAX,
        "Most new connections a second.",
        at_least(0),
    ),
    _broker("max.connections.per.ip", T.INT, INT_MAX, "Most connections from one IP.", at_least(0)),
    _broker("max.connections.per.ip.overrides", T.STRING, "", "Per-IP or host connection limits."),
):
    BROKER_CONFIGS.setdefault(_spec.name, _spec)


#: CLUSTER_MIN_ISR is the one cluster-wide dynamic config a Kafka 4.x KRaft cluster always has:
#: with eligible leader replicas (KIP-966, on in new clusters) the controller writes
#: min.insync.replicas at the cluster level (ConfigurationControlManager's ELR safety
#: records), from its own static value. kgroup answers as such a cluster does, so that topics
#: list it as DYNAMIC_DEFAULT_BROKER_CONFIG (kafka-topics --describe shows it on every topic).
CLUSTER_MIN_ISR = "min.insync.replicas"


#: LISTENER_PREFIX starts a listener's own setting: ``listener.name.<listener>.<key>``.
LISTENER_PREFIX = "listener.name."


def parse_properties(text: str) -> dict[str, str]:
    """The key/value pairs of a Java properties file: ``key=value`` or ``key: value`` lines,
    ``#`` and ``!`` comments, backslash line continuations."""
    out: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        pending = ""
        if not line or line[0] in "#!":
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        key, value = line, ""
        for i, ch in enumerate(line):
            if ch in "=:" or ch.isspace():
                key, value = line[:i].strip(), line[i + 1 :].strip()
                if ch.isspace() and value[:1] in ("=", ":"):
                    value = value[1:].strip()
                break
        out[key] = value
    return out


class BrokerConfig:
    """BrokerConfig is the broker's static configuration: ``server.properties`` (or a mapping),
    parsed and validated once. Unknown keys are logged and ignored, as Kafka does."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self.explicit: dict[str, Any] = {}
        #: per_listener holds the ``listener.name.<listener>.<key>`` settings, by listener name
        #: (lower case) then key: a known key parsed as its global form, any other (a SASL
        #: mechanism's ``plain.sasl.jaas.config``) as given.
        self.per_listener: dict[str, dict[str, Any]] = {}
        #: dynamic_broker and dynamic_default are the dynamic broker configs
        #: (``kgroup.broker.dynamic_config``) as set, raw: this broker's own, and the
        #: cluster-wide defaults. They win over the static values, this broker's first.
        self.dynamic_broker: dict[str, str] = {}
        self.dynamic_default: dict[str, str] = {}
        self._dynamic_broker_values: dict[str, Any] = {}
        self._dynamic_default_values: dict[str, Any] = {}
        #: _dynamic_per_listener holds the dynamic ``listener.name.<listener>.<key>`` configs
        #: by listener then key, parsed: this broker's over the cluster's defaults.
        self._dynamic_per_listener: dict[str, dict[str, Any]] = {}
        for key, raw in (values or {}).items():
            if key.startswith(LISTENER_PREFIX):
                name, _, sub = key[len(LISTENER_PREFIX) :].partition(".")
                if name and sub:
                    spec = BROKER_CONFIGS.get(sub)
                    value = spec.parse(raw) if spec is not None else raw
                    self.per_listener.setdefault(name.lower(), {})[sub] = value
                    continue
            spec = BROKER_CONFIGS.get(key)
            if spec is None:
                log.warning("The configuration '%s' was supplied but isn't a known config.", key)
                continue
            self.explicit[key] = spec.parse(raw)
        self._check_limits()

    @property
    def inter_broker_listener(self) -> str:
        """The inter-broker listener's name, upper case (Kafka's interBrokerListenerName)."""
        name = self.get("inter.broker.listener.name")
        return str(name or self.get("security.inter.broker.protocol")).upper()

    def _check_limits(self) -> None:
        """Kafka's KafkaConfig.validateValues for the limits."""
        if (
            self.explicit.get("inter.broker.listener.name") is not None
            and "security.inter.broker.protocol" in self.explicit
        ):
            raise ConfigError(
                "Only one of inter.broker.listener.name and security.inter.broker.protocol "
                "should be set."
            )
        queued = int(self.get("queued.max.request.bytes"))
        if 0 < queued < int(self.get("socket.request.max.bytes")):
            raise ConfigError(
                "queued.max.request.bytes must be larger or equal to socket.request.max.bytes"
            )
        if self.get("max.connections.per.ip") == 0 and not self.get(
            "max.connections.per.ip.overrides"
        ):
            raise ConfigError(
                "max.connections.per.ip can be set to zero only if "
                "max.connections.per.ip.overrides property is set."
            )

    @classmethod
    def from_file(
        cls, path: str | Path, overrides: Mapping[str, Any] | None = None
    ) -> BrokerConfig:
        """Read a ``server.properties`` file; ``overrides`` win over its values."""
        values: dict[str, Any] = dict(parse_properties(Path(path).read_text()))
        values.update(overrides or {})
        return cls(values)

    def set_dynamic(self, broker: Mapping[str, str], default: Mapping[str, str]) -> None:
        """Take these dynamic configs (this broker's, the cluster's defaults), already
        checked; keys kgroup does not declare are kept (Kafka keeps custom configs) but
        have no value to read."""
        self.dynamic_broker, self.dynamic_default = dict(broker), dict(default)
        self._dynamic_broker_values = {
            k: BROKER_CONFIGS[k].parse(v) for k, v in broker.items() if k in BROKER_CONFIGS
        }
        self._dynamic_default_values = {
            k: BROKER_CONFIGS[k].parse(v) for k, v in default.items() if k in BROKER_CONFIGS
        }
        per_listener: dict[str, dict[str, Any]] = {}
        for layer in (default, broker):
            for key, raw in layer.items():
                if not key.startswith(LISTENER_PREFIX):
                    continue
                name, _, sub = key[len(LISTENER_PREFIX) :].partition(".")
                if name and sub:
                    spec = BROKER_CONFIGS.get(sub)
                    value = spec.parse(raw) if spec is not None else raw
                    per_listener.setdefault(name.lower(), {})[sub] = value
        self._dynamic_per_listener = per_listener

    def layers(self) -> list[tuple[Mapping[str, Any], ConfigSource]]:
        """Where a broker config's value may come from, first first: this broker's dynamic
        configs, the cluster's dynamic defaults (with the cluster's min.insync.replicas,
        see CLUSTER_MIN_ISR), the static ones. Unset static keys hold None."""
        default = dict(self._dynamic_default_values)
        default.setdefault(CLUSTER_MIN_ISR, self.cluster_min_isr)
        return [
            (self._dynamic_broker_values, ConfigSource.DYNAMIC_BROKER_CONFIG),
            (default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
            (self.explicit, ConfigSource.STATIC_BROKER_CONFIG),
        ]

    def get(self, key: str) -> Any:
        """A broker config's value: set dynamically, set statically, or its default."""
        if key in self._dynamic_broker_values:
            return self._dynamic_broker_values[key]
        if key in self._dynamic_default_values:
            return self._dynamic_default_values[key]
        if key in self.explicit:
            return self.explicit[key]
        return BROKER_CONFIGS[key].default

    def for_listener(self, listener: str, key: str) -> Any:
        """``key``'s value on the listener named ``listener``: its
        ``listener.name.<listener>.<key>`` setting, else the broker-wide one (a known key's
        default; None for a key kgroup does not declare), as Kafka's listener overrides work: a
        dynamic one over a static one."""
        dynamic = self._dynamic_per_listener.get(listener.lower(), {})
        if key in dynamic:
            return dynamic[key]
        own = self.per_listener.get(listener.lower(), {})
        if key in own:
            return own[key]
        return self.get(key) if key in BROKER_CONFIGS else None

    # -- topic config defaults -----------------------------------------------------------

    @property
    def cluster_min_isr(self) -> int:
        """The cluster-wide min.insync.replicas (see CLUSTER_MIN_ISR): its dynamic default,
        else the broker's own."""
        value = self._dynamic_default_values.get(CLUSTER_MIN_ISR)
        if value is None:
            value = self.explicit.get(CLUSTER_MIN_ISR)
        return TOPIC_CONFIGS[CLUSTER_MIN_ISR].default if value is None else value

    def topic_default(self, spec: ConfigSpec) -> tuple[Any, ConfigSource, str | None]:
        """A topic config's broker-level value: the first broker synonym set (scaled to the
        topic config's unit), else the default. Returns the value, its source and the synonym.
        Each synonym is looked up in every layer (dynamic, then static) before the next
        synonym, as Kafka resolves its merged properties."""
        layers = self.layers()
        for syn, factor in spec.synonyms:
            for values, source in layers:
                if values.get(syn) is not None:
                    value = values[syn]
                    if factor != 1:
                        value = value * factor
                    return value, source, syn
        return spec.default, ConfigSource.DEFAULT_CONFIG, None

    def topic_defaults(self) -> dict[str, Any]:
        """Every topic config's broker-level value."""
        return {name: self.topic_default(spec)[0] for name, spec in TOPIC_CONFIGS.items()}

    def synonyms(self, spec: ConfigSpec) -> list[tuple[str, str | None, ConfigSource]]:
        """The broker-level synonyms behind a topic config, as DescribeConfigs v1+ lists them
        (Kafka's ``ConfigHelper.configSynonyms``): each synonym set for this broker dynamically,
        then as a cluster default (min.insync.replicas always is), then in the broker's
        properties, then each synonym's own default; and then
        nothing before the first entry of the first synonym. A topic config whose first
        synonym has no default (retention.ms's log.retention.ms) so lists none unless that one
        is set."""
        if not spec.synonyms:
            return []
        out: list[tuple[str, str | None, ConfigSource]] = []
        for values, source in self.layers():
            out += [
                (syn, format_value(BROKER_CONFIGS[syn], values[syn]), source)
                for syn, _ in spec.synonyms
                if values.get(syn) is not None
            ]
        primary = spec.synonyms[0][0]
        for syn, _ in spec.synonyms:
            default = format_value(BROKER_CONFIGS[syn], BROKER_CONFIGS[syn].default)
            if default is not None:
                out.append((syn, default, ConfigSource.DEFAULT_CONFIG))
        while out and out[0][0] != primary:
            out.pop(0)
        return out

    # -- derived settings ------------------------------------------------------------------

    @property
    def node_id(self) -> int:
        return int(self.get("node.id"))

    @property
    def data_dirs(self) -> list[Path]:
        """The folders of log.dirs (comma-separated, as Kafka reads it), else log.dir."""
        raw = self.get("log.dirs") or self.get("log.dir")
        dirs = [Path(p.strip()).expanduser() for p in str(raw).split(",") if p.strip()]
        if len(set(dirs)) != len(dirs):
            raise ConfigError(f"Duplicate log directory found: {raw}")
        return dirs

    @property
    def data_dir(self) -> Path:
        """The first folder of log.dirs: the one holding the broker's metadata (topics.json,
        producer ids), as Kafka's metadata.log.dir defaults to it."""
        return self.data_dirs[0]

    def validate_topic_configs(self, configs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
        """Parse topic config overrides; ConfigError names the first unknown or bad one."""
        out: dict[str, Any] = {}
        for name, raw in configs:
            spec = TOPIC_CONFIGS.get(name)
            if spec is None:
                raise ConfigError(f"Unknown topic config name: {name}")
            if raw is None:
                raise ConfigError(f"Null value not supported for topic configs: {name}")
            out[name] = spec.parse(raw)
        return out
