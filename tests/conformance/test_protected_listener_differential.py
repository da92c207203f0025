"""The inter-broker listener beside Apache Kafka: with more than one listener, the one brokers
use between themselves (PLAINTEXT here, Kafka's default security.inter.broker.protocol) is
protected from the broker-wide ``max.connections`` (Kafka's ConnectionQuotas.protectedListener):
when the other listeners have taken every connection, it still accepts one, and the least
recently active connection of another listener is closed to make room; the others still wait.

Both brokers run one network thread's worth of connections order (Kafka with
num.network.threads=1, so that its one processor's least recently used connection is the one
closed, as kgroup's)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from support.abuse import api_versions_request
from support.apache_kafka import KafkaCluster
from support.kgroup_broker import run_broker

pytestmark = pytest.mark.network

MAX = 4
CONFIG = {"max.connections": MAX, "num.network.threads": 1}


@pytest.fixture(scope="module")
def kafka_listeners() -> Iterator[tuple[str, str]]:
    with KafkaCluster(config=CONFIG, listeners={"EXTERNAL": "PLAINTEXT"}) as cluster:
        yield cluster.bootstrap, cluster.bootstrap_of("EXTERNAL")


@pytest.fixture(scope="module")
def kgroup_listeners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    config = {
        **CONFIG,
        "listeners": "PLAINTEXT://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT",
    }
    with run_broker(tmp_path_factory.mktemp("protected"), config) as b:
        yield b.bootstrap_servers, b.address("EXTERNAL")


@pytest.fixture(params=["kgroup", "kafka"])
def addresses(request: pytest.FixtureRequest) -> tuple[str, str]:
    name = "kafka_listeners" if request.param == "kafka" else "kgroup_listeners"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]


def _connect(address: str) -> socket.socket:
    host, port = address.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    return s


def _ask(s: socket.socket, timeout: float = 5.0) -> bool:
    """An ApiVersions round trip on ``s``: whether it was answered in time."""
    s.settimeout(timeout)
    try:
        s.sendall(api_versions_request())
        head = s.recv(4)
        if len(head) < 4:
            return False
        size = int.from_bytes(head, "big")
        while size:
            got = s.recv(size)
            if not got:
                return False
            size -= len(got)
        return True
    except OSError:
        return False


def _closed(s: socket.socket, timeout: float) -> bool:
    s.settimeout(timeout)
    try:
        return s.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_the_inter_broker_listener_takes_a_connection_past_max_connections(
    addresses: tuple[str, str],
) -> None:
    inter_broker, external = addresses
    crowd = [_connect(external) for _ in range(MAX)]
    try:
        for s in crowd:
            assert _ask(s)
            time.sleep(0.05)
        # Every slot taken: another connection to the same listener waits, unanswered.
        waiting = _connect(external)
        assert not _ask(waiting, 1.0)
        # The first becomes the most recently active: the second is now the least.
        assert _ask(crowd[0])
        time.sleep(0.05)
        protected = _connect(inter_broker)
        assert _ask(protected)
        closed = [i for i, s in enumerate(crowd) if _closed(s, 1.0 if i == 1 else 0.2)]
        assert closed == [1]
        # Still at the limit: the waiting connection still waits.
        assert not _ask(waiting, 0.5)
        protected.close()
        # A slot freed: it is served.
        assert _ask(waiting, 5.0)
        waiting.close()
    finally:
        for s in crowd:
            s.close()
        time.sleep(0.5)


def test_the_inter_broker_listener_is_not_held_by_the_broker_wide_creation_rate() -> None:
    # Kafka's ConnectionQuotas.recordConnectionAndGetThrottleTimeMs: a protected listener's
    # connections count against its own rate only (which, unset, is the broker's value).
    from kgroup.broker.config import BrokerConfig
    from kgroup.broker.limits import ConnectionQuotas

    quotas = ConnectionQuotas(BrokerConfig({"max.connection.creation.rate": 2}))
    quotas.protect(["PLAINTEXT", "EXTERNAL"])
    assert quotas.protected == "PLAINTEXT"
    now = 1_000_000.0
    assert quotas.record_connection("PLAINTEXT", now) == 0
    assert max(quotas.record_connection("PLAINTEXT", now + i) for i in range(50)) > 0
    # The broker-wide rate has not counted them: another listener connects at once.
    assert quotas.record_connection("EXTERNAL", now + 60) == 0
    delays = [quotas.record_connection("EXTERNAL", now + 60 + i) for i in range(40)]
    assert delays[-1] > 0
    # One listener: nothing is protected.
    single = ConnectionQuotas(BrokerConfig({"max.connection.creation.rate": 2}))
    single.protect(["PLAINTEXT"])
    assert single.protected is None
    # inter.broker.listener.name names it.
    named = ConnectionQuotas(BrokerConfig({"inter.broker.listener.name": "external"}))
    named.protect(["PLAINTEXT", "EXTERNAL"])
    assert named.protected == "EXTERNAL"


def test_only_one_of_the_inter_broker_settings() -> None:
    from kgroup.broker.config import BrokerConfig, ConfigError

    with pytest.raises(ConfigError, match=r"Only one of inter\.broker\.listener\.name and"):
        BrokerConfig(
            {"inter.broker.listener.name": "EXTERNAL", "security.inter.broker.protocol": "SSL"}
        )
