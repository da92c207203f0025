"""The Apache Kafka peer itself (tests/support/apache_kafka.py): it serves Kafka's own answers,
and a machine without Java or Maven gets a failure that says what to install, never a skip."""

from __future__ import annotations

import pytest
from support import apache_kafka
from support.apache_kafka import KafkaCluster, KafkaUnavailable
from support.kgroup_broker import Wire


def test_a_machine_without_java_is_told_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(KafkaUnavailable, match=r"Java 17 or newer.*apt-get install"):
        apache_kafka.java()


def test_a_machine_without_maven_is_told_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("KGROUP_CACHE", str(tmp_path))  # nothing fetched there yet
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(KafkaUnavailable, match=r"needs Maven.*apt-get install -y maven"):
        apache_kafka.lib_dir()


def test_the_node_is_apache_kafka_4(kafka: KafkaCluster) -> None:
    with Wire(kafka.bootstrap) as w:
        answer = w.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    keys = {k["api_key"]: k for k in answer.body["api_keys"]}
    # KIP-848's ConsumerGroupHeartbeat (68) and the share groups' ShareFetch (78) are Kafka 4.
    assert 68 in keys and 78 in keys
    features = {f["name"] for f in answer.body["finalized_features"]}
    assert {"metadata.version", "group.version", "transaction.version"} <= features
    assert kafka.nodes[0].running
