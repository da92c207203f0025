"""Kafka's Java clients over TLS with a client certificate (ssl.client.auth=required), on
kgroup's broker beside Apache Kafka configured the same way: the same scenario gives the same
result on both (tests/java/test_java_clients.py runs them over PLAINTEXT)."""

from __future__ import annotations

import concurrent.futures
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from support import java_scenarios
from support import tls as client_tls
from support.certs import Certs
from support.kgroup_broker import run_broker

from kgroup.broker import Broker

pytestmark = pytest.mark.network

FAST_GROUPS = {"group.initial.rebalance.delay.ms": 0, "num.partitions": 1}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return Certs(tmp_path_factory.mktemp("java-certs"))


@pytest.fixture(scope="module")
def kafka_ssl(certs: Certs) -> Iterator[str]:
    with client_tls.kafka_with_ssl(certs, "required", **FAST_GROUPS) as (_, address):
        yield address


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory, certs: Certs) -> Iterator[Broker]:
    config = {
        **FAST_GROUPS,
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        **client_tls.broker_ssl(certs, "required"),
    }
    with run_broker(tmp_path_factory.mktemp("java-tls"), config) as b:
        yield b


def on_both(
    scenario: str, kafka_address: str, kgroup_address: str, **opts: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    name = f"{scenario}-{uuid.uuid4().hex[:8]}"
    opts = {"topic": name, "group": name, **opts}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        on_kafka = pool.submit(java_scenarios.run, scenario, kafka_address, **opts)
        on_kgroup = pool.submit(java_scenarios.run, scenario, kgroup_address, **opts)
        return on_kafka.result(), on_kgroup.result()


def client_opts(certs: Certs) -> dict[str, str]:
    who = certs.client("java")
    return {f"client.{k}": v for k, v in client_tls.java(certs, who).items()}


def test_idempotent_producer_over_tls(kafka_ssl: str, broker: Broker, certs: Certs) -> None:
    ref, got = on_both(
        "produce",
        kafka_ssl,
        broker.address("SSL"),
        records=2000,
        partitions=3,
        **client_opts(certs),
    )
    assert got == ref
    assert got["errors"] == []
    assert got["acknowledged_once"] == got["read_back"] == 2000
    assert got["read_back_as_sent"]


def test_group_over_tls(kafka_ssl: str, broker: Broker, certs: Certs) -> None:
    ref, got = on_both(
        "group",
        kafka_ssl,
        broker.address("SSL"),
        assignor="range",
        session=6000,
        **client_opts(certs),
    )
    assert got == ref
    assert got["problems"] == []
    assert got["committed"] == got["produced"]


def test_a_client_without_a_certificate_gets_an_authentication_error(
    kafka_ssl: str, broker: Broker, certs: Certs
) -> None:
    # ssl.client.auth=required and no key store: Kafka's client fails with
    # SslAuthenticationException (the broker's TLS alert), on both brokers alike.
    opts = {f"client.{k}": v for k, v in client_tls.java(certs).items()}
    opts["client.default.api.timeout.ms"] = "20000"

    def run(address: str) -> str:
        got = subprocess.run(
            java_scenarios.command("produce", address, records=1, **opts),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert got.returncode != 0
        return got.stderr

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        on_kafka = pool.submit(run, kafka_ssl)
        on_kgroup = pool.submit(run, broker.address("SSL"))
        for stderr in (on_kafka.result(), on_kgroup.result()):
            assert "SslAuthenticationException" in stderr
