"""Listeners as Kafka configures them: ``listeners``, ``advertised.listeners`` and
``listener.security.protocol.map``; a client is told the address of the listener it came in
on (Kafka's Metadata answers with the request's own listener's endpoint)."""

from __future__ import annotations

import confluent_kafka
import confluent_kafka.admin
import pytest
from support.ports import free_port

from kgroup.broker import Broker
from kgroup.broker.config import BrokerConfig, ConfigError
from kgroup.broker.listeners import parse_listeners


def test_each_listener_advertises_its_own_address(tmp_path) -> None:
    inside, outside = free_port(), free_port()
    config = {
        "listeners": f"INSIDE://127.0.0.1:{inside},OUTSIDE://127.0.0.1:{outside}",
        "advertised.listeners": f"INSIDE://127.0.0.1:{inside},OUTSIDE://localhost:{outside}",
        "listener.security.protocol.map": "INSIDE:PLAINTEXT,OUTSIDE:PLAINTEXT",
    }
    with Broker(tmp_path, config=config) as broker:
        assert broker.bootstrap_servers == f"127.0.0.1:{inside}"
        assert broker.address("outside") == f"localhost:{outside}"
        seen = {}
        for name, port in (("INSIDE", inside), ("OUTSIDE", outside)):
            admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
            md = admin.list_topics(timeout=10)
            seen[name] = [(b.host, b.port) for b in md.brokers.values()]
        assert seen == {"INSIDE": [("127.0.0.1", inside)], "OUTSIDE": [("localhost", outside)]}
        # A client that bootstraps on OUTSIDE goes on working through its advertised address.
        p = confluent_kafka.Producer({"bootstrap.servers": f"127.0.0.1:{outside}"})
        p.produce("t", b"v")
        assert p.flush(10) == 0


def test_port_zero_listeners_bind_and_advertise_free_ports(tmp_path) -> None:
    config = {
        "listeners": "PLAINTEXT://127.0.0.1:0,OTHER://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT",
    }
    with Broker(tmp_path, config=config) as broker:
        a, b = broker.bootstrap_servers, broker.address("OTHER")
        assert a != b and not a.endswith(":0") and not b.endswith(":0")
        for addr in (a, b):
            md = confluent_kafka.admin.AdminClient({"bootstrap.servers": addr}).list_topics(
                timeout=10
            )
            assert [f"{x.host}:{x.port}" for x in md.brokers.values()] == [addr]


def test_controller_listeners_are_not_bound() -> None:
    # A Kafka combined-mode server.properties runs unchanged: CONTROLLER is skipped.
    config = BrokerConfig(
        {
            "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        }
    )
    assert [lst.name for lst in parse_listeners(config)] == ["PLAINTEXT"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"listeners": "INSIDE://127.0.0.1:1"}, "No security protocol defined for listener INSIDE"),
        (
            {"listeners": "PLAINTEXT://127.0.0.1:1,PLAINTEXT://127.0.0.1:2"},
            "Each listener must have a different name",
        ),
        (
            {"listeners": "PLAINTEXT://127.0.0.1:1,SSL://127.0.0.1:1"},
            "Each listener must have a different port",
        ),
        ({"listeners": "PLAINTEXT:127.0.0.1:1"}, "Unable to parse PLAINTEXT:127.0.0.1:1"),
        (
            {"listeners": "PLAINTEXT://127.0.0.1:1", "advertised.listeners": "SSL://h:2"},
            "must be equal to or a subset of the ones defined in listeners",
        ),
        (
            {"listeners": "A://127.0.0.1:1", "listener.security.protocol.map": "A:TLS"},
            "SecurityProtocol.TLS",
        ),
    ],
)
def test_bad_listeners_are_refused_as_kafka_refuses_them(config, message) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_listeners(BrokerConfig(config))


def test_listener_prefixed_settings_override_the_broker_wide_ones() -> None:
    config = BrokerConfig(
        {
            "socket.request.max.bytes": "1000",
            "listener.name.outside.socket.request.max.bytes": "500",
            "listener.name.outside.plain.sasl.jaas.config": "x required;",
        }
    )
    assert config.for_listener("OUTSIDE", "socket.request.max.bytes") == 500
    assert config.for_listener("INSIDE", "socket.request.max.bytes") == 1000
    assert config.for_listener("OUTSIDE", "plain.sasl.jaas.config") == "x required;"
    assert config.for_listener("INSIDE", "plain.sasl.jaas.config") is None
