"""Connection creation rates beside Apache Kafka: the same sequence on a kgroup broker and on
Kafka (one KRaft node), both with quota windows of one second, two of them
(quota.window.num=2), so that a rate is measured over one second from the start:

- ``max.connection.creation.rate`` set as a dynamic cluster default: past it the acceptor holds
  the next connections back, none refused (Kafka's ConnectionQuotas.waitForConnectionSlot);
  removed, connections come at once again;
- an IP quota's ``connection_creation_rate`` (AlterClientQuotas): past it a connection from that
  address is closed unanswered after its throttle time (ConnectionThrottledException); other
  addresses are not affected; removed, the address connects again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from support.abuse import answered_in, api_versions_request, open_held
from support.apache_kafka import KafkaCluster
from support.kgroup_broker import Wire, run_broker

from kgroup.protocol import ApiKey

pytestmark = [pytest.mark.network, pytest.mark.slow]

CONFIG = {"quota.window.num": 2, "quota.window.size.seconds": 1}
#: SETTLE: Kafka's brokers apply a config or quota from the metadata log (kgroup's at once).
SETTLE = 1.5


@pytest.fixture(scope="module")
def kafka_rates() -> Iterator[KafkaCluster]:
    with KafkaCluster(config=CONFIG) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def kgroup_rates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_broker(tmp_path_factory.mktemp("rates"), CONFIG) as b:
        yield b.bootstrap_servers


@pytest.fixture(params=["kgroup", "kafka"])
def bootstrap(request: pytest.FixtureRequest) -> str:
    if request.param == "kafka":
        return str(request.getfixturevalue("kafka_rates").bootstrap)
    return str(request.getfixturevalue("kgroup_rates"))


def _alter_cluster(w: Wire, name: str, value: str | None) -> None:
    body = {
        "resources": [
            {
                "resource_type": 4,
                "resource_name": "",
                "configs": [
                    {
                        "name": name,
                        "config_operation": 0 if value is not None else 1,
                        "value": value,
                    }
                ],
            }
        ],
        "validate_only": False,
    }
    r = w.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body).body.responses[0]
    assert r.error_code == 0, r.error_message


def _alter_ip(w: Wire, ip: str, rate: float | None) -> None:
    body = {
        "entries": [
            {
                "entity": [{"entity_type": "ip", "entity_name": ip}],
                "ops": [
                    {
                        "key": "connection_creation_rate",
                        "value": rate or 0.0,
                        "remove": rate is None,
                    }
                ],
            }
        ],
        "validate_only": False,
    }
    r = w.request(ApiKey.ALTER_CLIENT_QUOTAS, 1, body)
    assert r.body.entries[0].error_code == 0, r.body.entries[0].error_message


def _answered_in(bootstrap: str, n: int, source: str) -> float:
    host, port = bootstrap.rsplit(":", 1)
    return answered_in(host, int(port), n, source)


def _closed_unanswered(bootstrap: str, source: str) -> float:
    """Seconds until the broker closes a new connection from ``source`` without answering its
    ApiVersions."""
    host, port = bootstrap.rsplit(":", 1)
    crowd = open_held(host, int(port), 1, source=source, first=api_versions_request())
    s = crowd.sockets[0]
    started = time.monotonic()
    try:
        s.settimeout(5)
        try:
            assert s.recv(4) == b"", "answered"
        except ConnectionResetError:
            pass
        return time.monotonic() - started
    finally:
        crowd.close()


def test_max_connection_creation_rate(bootstrap: str) -> None:
    with Wire(bootstrap) as w:
        _alter_cluster(w, "max.connection.creation.rate", "20")
        time.sleep(SETTLE)
        try:
            # 20 at once, the next 20 held back to about 20 a second.
            took = _answered_in(bootstrap, 40, "127.0.0.21")
            assert 0.6 < took < 10, took
        finally:
            _alter_cluster(w, "max.connection.creation.rate", None)
        time.sleep(SETTLE + 1)
        assert _answered_in(bootstrap, 40, "127.0.0.22") < 0.6


def test_ip_connection_creation_rate(bootstrap: str) -> None:
    with Wire(bootstrap) as w:
        _alter_ip(w, "127.0.0.23", 5)
        time.sleep(SETTLE)
        try:
            assert _answered_in(bootstrap, 5, "127.0.0.23") < 5
            # The sixth: (6 - 5) / 5 of the one-second window, 200 ms, then closed.
            waited = _closed_unanswered(bootstrap, "127.0.0.23")
            assert 0.1 < waited < 2, waited
            assert _answered_in(bootstrap, 10, "127.0.0.24") < 5
        finally:
            _alter_ip(w, "127.0.0.23", None)
        time.sleep(SETTLE + 1)
        assert _answered_in(bootstrap, 10, "127.0.0.23") < 5
