"""Kafka's own tools against kgroup's broker and Apache Kafka side by side: one kgroup broker
for the folder, beside the session's Apache Kafka (the ``kafka`` fixture), both forming groups
at once (no initial rebalance delay)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.apache_kafka import KafkaCluster
from support.kgroup_broker import run_broker

from kgroup.broker import Broker


@pytest.fixture(scope="package")
def kgroup_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(
        tmp_path_factory.mktemp("kafka-tools"), {"group.initial.rebalance.delay.ms": 0}
    ) as b:
        yield b


@pytest.fixture
def brokers(kgroup_broker: Broker, kafka: KafkaCluster) -> dict[str, str]:
    """The bootstrap address of each broker a scenario runs on, by name."""
    return {"kafka": kafka.bootstrap, "kgroup": kgroup_broker.bootstrap_servers}
