"""config: the clients' configuration, under Kafka's own key names.

A client takes a ``dict`` as confluent-kafka's do (``{"bootstrap.servers": "127.0.0.1:9092"}``).
Every key is one of Kafka's client configs (or one of confluent-kafka's Python callbacks:
``on_commit``, ``on_delivery``); a key the client does not know is an error that names it, so a
typo is not silently ignored. Values may be given as Python values or as the strings of a
``.properties`` file (``"true"``, ``"500"``). Defaults are Java's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kgroup.errors import InvalidArgument, InvalidType

__all__ = ["ClientConfig", "parse_bootstrap"]


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    raise InvalidType(f"expected true or false, got {v!r}")


def _int(v: Any) -> int:
    if isinstance(v, bool):
        raise InvalidType(f"expected an integer, got {v!r}")
    try:
        return int(v)
    except (TypeError, ValueError):
        raise InvalidType(f"expected an integer, got {v!r}") from None


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise InvalidType(f"expected a string, got {v!r}")
    return v


def _opt_str(v: Any) -> str | None:
    return None if v is None or v == "" else _str(v)


def _list(v: Any) -> list[Any]:
    if isinstance(v, str):
        return [s.strip() for s in v.split(",") if s.strip()]
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v]


def _callable(v: Any) -> Callable[..., Any] | None:
    if v is not None and not callable(v):
        raise InvalidType(f"expected a callable, got {v!r}")
    return v


def _choice(*names: str) -> Callable[[Any], str]:
    def parse(v: Any) -> str:
        s = _str(v).lower()
        if s not in names:
            raise InvalidArgument(f"{v!r} is not one of {', '.join(names)}")
        return s

    return parse


def _acks(v: Any) -> str:
    s = str(v).strip().lower()
    if s in ("all", "-1"):
        return "all"
    if s in ("0", "1"):
        return s
    raise InvalidArgument(f"{v!r} is not one of 0, 1, all, -1")


# key: (default, parser). Java's defaults unless said otherwise.
_COMMON: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "bootstrap.servers": (None, _str),
    "client.id": ("kgroup", _str),
    "client.rack": (None, _opt_str),
    "request.timeout.ms": (30000, _int),
    "default.api.timeout.ms": (60000, _int),
    "retry.backoff.ms": (100, _int),
    "retry.backoff.max.ms": (1000, _int),
    "reconnect.backoff.ms": (50, _int),
    "reconnect.backoff.max.ms": (1000, _int),
    "socket.connection.setup.timeout.ms": (10000, _int),
    "metadata.max.age.ms": (300000, _int),
    "security.protocol": ("plaintext", _choice("plaintext", "sasl_plaintext")),
    # SASL (kgroup.client.sasl): librdkafka's credentials, or Java's JAAS config.
    "sasl.mechanism": ("GSSAPI", _str),
    "sasl.username": (None, _opt_str),
    "sasl.password": (None, _opt_str),
    "sasl.jaas.config": (None, _opt_str),
    "allow.auto.create.topics": (True, _bool),
}

_CONSUMER: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "group.id": (None, _opt_str),
    "group.instance.id": (None, _opt_str),
    # KIP-848: "consumer" selects kgroup.client.consumer_membership; the default stays classic,
    # as in Java and librdkafka.
    "group.protocol": ("classic", _choice("classic", "consumer")),
    "group.remote.assignor": (None, _opt_str),
    "session.timeout.ms": (45000, _int),
    "heartbeat.interval.ms": (3000, _int),
    "max.poll.interval.ms": (300000, _int),
    "rebalance.timeout.ms": (None, _int),
    "enable.auto.commit": (True, _bool),
    "auto.commit.interval.ms": (5000, _int),
    "enable.auto.offset.store": (True, _bool),
    "auto.offset.reset": (
        "latest",
        _choice("earliest", "latest", "none", "smallest", "largest", "beginning", "end", "error"),
    ),
    "isolation.level": ("read_uncommitted", _choice("read_uncommitted", "read_committed")),
    "fetch.min.bytes": (1, _int),
    "fetch.max.bytes": (52428800, _int),
    "fetch.max.wait.ms": (500, _int),
    "max.partition.fetch.bytes": (1048576, _int),
    "queued.max.messages.kbytes": (65536, _int),
    "partition.assignment.strategy": ("range,cooperative-sticky", _list),
    "scheduled.rebalance.max.delay.ms": (0, _int),
    "check.crcs": (True, _bool),
    "enable.partition.eof": (False, _bool),
    "exclude.internal.topics": (True, _bool),
    "topic.metadata.refresh.interval.ms": (None, _int),
    "on_commit": (None, _callable),
}

_PRODUCER: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "acks": ("all", _acks),
    "batch.size": (16384, _int),
    "linger.ms": (5, _int),
    "compression.type": ("none", _choice("none", "gzip", "snappy", "lz4", "zstd")),
    "compression.level": (-1, _int),
    "buffer.memory": (33554432, _int),
    "max.request.size": (1048576, _int),
    "retries": (2147483647, _int),
    "delivery.timeout.ms": (120000, _int),
    "enable.idempotence": (True, _bool),
    "max.in.flight.requests.per.connection": (5, _int),
    "partitioner": ("murmur2_builtin", _str),
    "max.block.ms": (60000, _int),
    "transactional.id": (None, _opt_str),
    "transaction.timeout.ms": (60000, _int),
    "on_delivery": (None, _callable),
    "delivery.report.only.error": (False, _bool),
}

# Names librdkafka / confluent-kafka users write for the same settings.
_ALIASES = {
    "metadata.broker.list": "bootstrap.servers",
    "compression.codec": "compression.type",
    "queue.buffering.max.ms": "linger.ms",
    "message.send.max.retries": "retries",
    "message.timeout.ms": "delivery.timeout.ms",
    "request.required.acks": "acks",
    "sasl.mechanisms": "sasl.mechanism",
    "dr_cb": "on_delivery",
    "dr_msg_cb": "on_delivery",
    "partition.assignment.strategy": "partition.assignment.strategy",
}

_TABLES = {
    "consumer": {**_COMMON, **_CONSUMER},
    "producer": {**_COMMON, **_PRODUCER},
    "admin": dict(_COMMON),
}


def parse_bootstrap(servers: str) -> list[tuple[str, int]]:
    """``host:port,host:port`` as a list of (host, port); IPv6 hosts in brackets."""
    out: list[tuple[str, int]] = []
    for item in servers.split(","):
        item = item.strip()
        if not item:
            continue
        if "://" in item:
            item = item.split("://", 1)[1]
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise InvalidArgument(f"bootstrap.servers: {item!r} is not host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise InvalidArgument("bootstrap.servers is empty")
    return out


class ClientConfig(Mapping[str, Any]):
    """ClientConfig is a client's parsed configuration: every known key, with its default
    where the user gave none. ``kind`` is ``consumer``, ``producer`` or ``admin``.

    >>> c = ClientConfig("consumer", {"bootstrap.servers": "127.0.0.1:9092", "group.id": "g"})
    >>> c["session.timeout.ms"], c.bootstrap
    (45000, [('127.0.0.1', 9092)])
    >>> ClientConfig("admin", {"bootstrap.servers": "h:1", "sesion.timeout.ms": 1})
    Traceback (most recent call last):
    ...
    kgroup.errors.InvalidArgument: unknown configuration property 'sesion.timeout.ms' for the \
admin client
    """

    def __init__(self, kind: str, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        table = _TABLES[kind]
        self.kind = kind
        given = dict(config or {})
        given.update(kwargs)
        values = {k: d for k, (d, _) in table.items()}
        self.given: set[str] = set()
        for raw_key, value in given.items():
            if not isinstance(raw_key, str):
                raise InvalidType(f"configuration keys are strings, got {raw_key!r}")
            key = _ALIASES.get(raw_key, raw_key)
            if key.startswith("default.topic.config"):
                continue
            if key not in table:
                raise InvalidArgument(
                    f"unknown configuration property {raw_key!r} for the {kind} client"
                )
            try:
                values[key] = table[key][1](value)
            except (InvalidArgument, InvalidType) as e:
                raise type(e)(f"configuration property {raw_key!r}: {e}") from None
            self.given.add(key)
        if values["bootstrap.servers"] is None:
            raise InvalidArgument("bootstrap.servers is required")
        self._values = values
        self.bootstrap = parse_bootstrap(values["bootstrap.servers"])
        from kgroup.client.sasl import sasl_settings

        #: sasl is how connections authenticate (None: no SASL).
        self.sasl = sasl_settings(values)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def ms(self, key: str) -> float:
        """A ``.ms`` setting in seconds."""
        return self._values[key] / 1000.0
