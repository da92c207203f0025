"""Differential conformance: each test runs one request sequence on Apache Kafka (the session's
``kafka`` node) and on a kgroup broker with the same settings, and compares the answers (see
``support.differential``). ``KGROUP_DIFF_KAFKA=host:port`` points the folder at an Apache Kafka
that is already running with those settings, for iterating on one test without a JVM start."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from support.differential import BROKER_CONFIG, Differential, wait_for_coordinator
from support.kgroup_broker import run_broker

from kgroup.broker import Broker


@pytest.fixture(scope="session")
def kafka_bootstrap(request: pytest.FixtureRequest) -> str:
    return os.environ.get("KGROUP_DIFF_KAFKA") or request.getfixturevalue("kafka").bootstrap


@pytest.fixture(scope="session")
def kgroup_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("conformance"), BROKER_CONFIG) as b:
        yield b


@pytest.fixture
def diff(kgroup_broker: Broker, kafka_bootstrap: str) -> Iterator[Differential]:
    with Differential(kgroup_broker.bootstrap_servers, kafka_bootstrap) as d:
        yield d


@pytest.fixture(scope="session")
def coordinators(kgroup_broker: Broker, kafka_bootstrap: str) -> None:
    """Both group coordinators loaded (see ``wait_for_coordinator``)."""
    for bootstrap in (kgroup_broker.bootstrap_servers, kafka_bootstrap):
        wait_for_coordinator(bootstrap)
