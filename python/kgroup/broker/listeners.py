"""Listeners: where the broker accepts connections, and how each one is secured.

Kafka names each listener (``listeners=PLAINTEXT://:9092,SECURE://host:9093``) and maps each
name to a security protocol (``listener.security.protocol.map``; a name that is itself a
protocol maps to it by default). ``advertised.listeners`` gives, per listener name, the address
clients are told to use; a client is always told the address of the listener its own
connection came in on. Listeners named in ``controller.listener.names`` are KRaft's controller
endpoints, which a single kgroup broker does not have: they are skipped, so a Kafka
``server.properties`` runs unchanged.
"""

from __future__ import annotations

import dataclasses
import re
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgroup.broker.config import ConfigError

if TYPE_CHECKING:
    from kgroup.broker.config import BrokerConfig

__all__ = [
    "SECURITY_PROTOCOLS",
    "Listener",
    "bound",
    "host_port",
    "parse_endpoints",
    "parse_listeners",
    "protocol_map",
]

#: SECURITY_PROTOCOLS are Kafka's security protocols (SecurityProtocol), by name.
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

# Kafka's SocketServerConfigs.URI_PARSE_REGEXP: NAME://host:port, host empty, a name or
# [IPv6].
_URI = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclasses.dataclass(frozen=True)
class Listener:
    """Listener is one endpoint of the broker: its name (upper case, as Kafka normalises it),
    its security protocol, where it binds (``port`` is the bound port once started) and the
    address it advertises."""

    name: str
    security_protocol: str
    host: str
    port: int
    advertised_host: str
    advertised_port: int

    @property
    def config_prefix(self) -> str:
        """The prefix of this listener's own settings: ``listener.name.<name lower>.``."""
        return f"listener.name.{self.name.lower()}."

    @property
    def uses_ssl(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def bootstrap(self) -> str:
        """``host:port`` to connect to (an IPv6 host in brackets)."""
        host = self.advertised_host
        return (
            f"[{host}]:{self.advertised_port}" if ":" in host else f"{host}:{self.advertised_port}"
        )


def host_port(value: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``NAME://HOST:PORT`` as (host, port); an empty host is loopback."""
    if "://" in value:
        value = value.split("://", 1)[1]
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def protocol_map(value: str | None) -> dict[str, str]:
    """``listener.security.protocol.map`` as {listener name: security protocol}; unset, each
    protocol's name maps to itself."""
    if not value:
        return {p: p for p in SECURITY_PROTOCOLS}
    out: dict[str, str] = {}
    for entry in value.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, proto = entry.partition(":")
        name, proto = name.strip().upper(), proto.strip().upper()
        if not sep or not name:
            raise ConfigError(
                f"Invalid value {value} for configuration listener.security.protocol.map: "
                f"Map entry '{entry}' is improperly formatted"
            )
        if proto not in SECURITY_PROTOCOLS:
            raise ConfigError(
                f"No enum constant org.apache.kafka.common.security.auth.SecurityProtocol.{proto}"
            )
        out[name] = proto
    return out


def parse_endpoints(
    value: str | Sequence[str], protocols: dict[str, str], what: str
) -> list[tuple[str, str, str | None, int]]:
    """Endpoints ``NAME://host:port`` as (name, security protocol, host or None, port), as
    Kafka's ``listenerListToEndPoints`` reads them."""
    entries = value.split(",") if isinstance(value, str) else list(value)
    out: list[tuple[str, str, str | None, int]] = []
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        m = _URI.match(entry)
        if m is None:
            raise ConfigError(f"Unable to parse {entry} to a broker endpoint")
        name, host, port = m.group(1).upper(), m.group(2) or None, int(m.group(3))
        if name not in protocols:
            raise ConfigError(f"No security protocol defined for listener {name}")
        if not 0 <= port <= 65535:
            raise ConfigError(f"Invalid port {port} in {what}: {entry}")
        out.append((name, protocols[name], host, port))
    names = [e[0] for e in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"Each listener must have a different name, listeners: {value}")
    return out


def parse_listeners(
    config: BrokerConfig,
    host: str | None = None,
    port: int | None = None,
    advertised: str | None = None,
) -> list[Listener]:
    """The broker's listeners, before binding (``port`` 0: a free one is picked).

    ``listeners`` in the configuration names them; ``host``/``port`` given and ``listeners``
    not set make one PLAINTEXT listener there (the constructor's and ``kgroup broker
    --listen``'s form). ``advertised`` (``HOST:PORT``) overrides the first listener's
    advertised address."""
    protocols = protocol_map(config.get("listener.security.protocol.map"))
    skip = {
        n.strip().upper()
        for n in (config.get("controller.listener.names") or "").split(",")
        if n.strip()
    }
    if "listeners" in config.explicit or (host is None and port is None):
        endpoints = parse_endpoints(config.get("listeners"), protocols, "listeners")
    else:
        endpoints = [
            (
                "PLAINTEXT",
                protocols.get("PLAINTEXT", "PLAINTEXT"),
                host or "127.0.0.1",
                9092 if port is None else port,
            )
        ]
    endpoints = [e for e in endpoints if e[0] not in skip]
    if not endpoints:
        raise ConfigError("listeners must name at least one listener that is not a controller's")
    ports = [(e[2], e[3]) for e in endpoints if e[3] != 0]
    if len(set(ports)) != len(ports):
        raise ConfigError(
            f"Each listener must have a different port, listeners: {config.get('listeners')}"
        )
    adv: dict[str, tuple[str | None, int]] = {}
    raw_adv = config.get("advertised.listeners")
    if raw_adv:
        for name, _, ahost, aport in parse_endpoints(raw_adv, protocols, "advertised.listeners"):
            if name in skip:
                continue
            if name not in {e[0] for e in endpoints}:
                raise ConfigError(
                    f"advertised.listeners listener names must be equal to or a subset of the "
                    f"ones defined in listeners. Found {name}."
                )
            adv[name] = (ahost, aport)
    out = []
    for i, (name, proto, lhost, lport) in enumerate(endpoints):
        ahost, aport = adv.get(name, (lhost, lport))
        if i == 0 and advertised:
            ahost, aport = host_port(advertised)
        bind = lhost or "0.0.0.0"
        if not ahost or ahost in ("0.0.0.0", "::"):
            ahost = socket.getfqdn() if lhost is None else lhost
        out.append(Listener(name, proto, bind, lport, ahost, aport))
    return out


def bound(listener: Listener, port: int) -> Listener:
    """``listener`` once bound on ``port``: an advertised port of 0 becomes the bound port."""
    return dataclasses.replace(
        listener,
        port=port,
        advertised_port=listener.advertised_port or port,
    )
