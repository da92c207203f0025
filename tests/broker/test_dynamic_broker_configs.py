"""Dynamic broker configs (KIP-226): IncrementalAlterConfigs and AlterConfigs on BROKER
resources, this broker's ("1") and the cluster's defaults (""), through confluent-kafka's
AdminClient, answered and described (values, sources, synonyms, read-only) on kgroup's broker
as on Apache Kafka 4.4; kept across a restart; and a cluster-wide log.retention.ms reaching the
topics without their own retention.ms, as on Kafka."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from support.apache_kafka import KafkaCluster
from support.kgroup_broker import Wire, run_broker

from kgroup.protocol import ApiKey

pytestmark = pytest.mark.network

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
TOPIC, BROKER = 2, 4
Change = tuple[str, str | None, int]
#: STEPS are IncrementalAlterConfigs changes, each to a broker resource ("1" or ""), in
#: order, each answered as Kafka answers it (0081-admin.c's among them).
STEPS: list[tuple[str, str, list[Change]]] = [
    ("kerberos relogin", "1", [("sasl.kerberos.min.time.before.relogin", "58000", SET)]),
    (
        "threads and an appended list",
        "1",
        [("background.threads", "9", SET), ("log.cleanup.policy", "compact", APPEND)],
    ),
    ("a static config", "1", [("log.dirs", "/elsewhere", SET)]),
    ("a store without its listener", "1", [("ssl.keystore.location", "/k.p12", SET)]),
    ("per-broker as a default", "", [("sasl.kerberos.min.time.before.relogin", "1", SET)]),
    ("a bad value", "", [("log.retention.ms", "soon", SET)]),
    ("threads more than doubled", "1", [("background.threads", "100", SET)]),
    ("append to a number", "1", [("background.threads", "1", APPEND)]),
    ("another broker", "7", [("log.retention.ms", "1000", SET)]),
    ("not a broker id", "one", [("log.retention.ms", "1000", SET)]),
    ("a null value", "1", [("log.retention.ms", None, SET)]),
    ("a cluster default", "", [("log.retention.ms", "604800001", SET)]),
    ("a custom config", "", [("kgroup.test.custom", "x", SET)]),
    ("subtract", "1", [("log.cleanup.policy", "delete", SUBTRACT)]),
]
#: UNDO puts both brokers back as they were (the Kafka cluster serves the whole session).
UNDO: list[tuple[str, list[Change]]] = [
    (
        "1",
        [
            ("sasl.kerberos.min.time.before.relogin", None, DELETE),
            ("background.threads", None, DELETE),
            ("log.cleanup.policy", None, DELETE),
            ("log.cleaner.threads", None, DELETE),
        ],
    ),
    ("", [("log.retention.ms", None, DELETE), ("kgroup.test.custom", None, DELETE)]),
]
#: KEYS are the broker configs compared, with their synonyms.
KEYS = [
    "sasl.kerberos.min.time.before.relogin",
    "background.threads",
    "log.cleanup.policy",
    "log.retention.ms",
    "log.retention.hours",
    "num.io.threads",
    "log.segment.bytes",
    "log.cleaner.threads",
]
#: ConfigSource ids.
DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 2, 3, 4, 5


def alter(w: Wire, name: str, changes: list[Change]) -> tuple[int, str | None]:
    """IncrementalAlterConfigs v1 of one broker resource: its error code and message."""
    body = {
        "resources": [
            {
                "resource_type": BROKER,
                "resource_name": name,
                "configs": [
                    {"name": n, "config_operation": op, "value": v} for n, v, op in changes
                ],
            }
        ],
        "validate_only": False,
    }
    r = w.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body).body.responses[0]
    return r.error_code, r.error_message


def replace(w: Wire, name: str, configs: dict[str, str | None]) -> tuple[int, str | None]:
    """AlterConfigs v2 (0081-admin.c's do_test_AlterConfigs): one broker resource's whole
    set of dynamic configs; its error code and message."""
    body = {
        "resources": [
            {
                "resource_type": BROKER,
                "resource_name": name,
                "configs": [{"name": n, "value": v} for n, v in configs.items()],
            }
        ],
        "validate_only": False,
    }
    r = w.request(ApiKey.ALTER_CONFIGS, 2, body).body.responses[0]
    return r.error_code, r.error_message


def describe(w: Wire, rtype: int, name: str) -> dict[str, Any]:
    """DescribeConfigs v4 with synonyms: each config's value, source, read-only, sensitive
    and synonyms."""
    body = {
        "resources": [{"resource_type": rtype, "resource_name": name, "configuration_keys": None}],
        "include_synonyms": True,
        "include_documentation": False,
    }
    r = w.request(ApiKey.DESCRIBE_CONFIGS, 4, body).body.results[0]
    assert r.error_code == 0, r
    return {
        c.name: (
            c.value,
            c.config_source,
            c.read_only,
            c.is_sensitive,
            [(s.name, s.value, s.source) for s in c.synonyms],
        )
        for c in r.configs
    }


def settled(a: Wire, topic: str) -> dict[str, Any]:
    """What the broker, the cluster defaults and a topic without overrides describe once the
    last change shows (Kafka's some milliseconds after its answer)."""
    deadline = time.monotonic() + 10
    while True:
        default, broker = describe(a, BROKER, ""), describe(a, BROKER, "1")
        shown = "kgroup.test.custom" in default and broker["background.threads"][1] == DEFAULT
        if shown or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    return {
        "broker": {k: broker.get(k) for k in KEYS},
        "defaults": {k: v for k, v in default.items() if k in (*KEYS, "kgroup.test.custom")},
        "topic": describe(a, TOPIC, topic)["retention.ms"],
    }


def admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})


def create_topic(bootstrap: str, name: str) -> None:
    a = admin(bootstrap)
    a.create_topics([NewTopic(name, 1, 1)])[name].result(15)


def exercise(bootstrap: str) -> dict[str, Any]:
    a = admin(bootstrap)
    topic = f"dyn-{uuid.uuid4().hex[:8]}"
    a.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
    out: dict[str, Any] = {}
    with Wire(bootstrap) as w:
        try:
            for label, name, changes in STEPS:
                out[label] = alter(w, name, changes)
            out["replaced"] = replace(
                w,
                "1",
                {"sasl.kerberos.min.time.before.relogin": "58000", "log.cleaner.threads": "2"},
            )
            out["replaced, a null"] = replace(w, "1", {"log.cleaner.threads": None})
            out["replaced, static"] = replace(w, "1", {"num.partitions": "3"})
            out["described"] = settled(w, topic)
        finally:
            for name, changes in UNDO:
                alter(w, name, changes)
    a.delete_topics([topic])[topic].result(15)
    return out


def test_dynamic_broker_configs_as_kafka_answers(kafka: KafkaCluster, tmp_path: Path) -> None:
    ref = exercise(kafka.bootstrap)
    with run_broker(tmp_path, {"node.id": 1}) as b:
        got = exercise(b.bootstrap_servers)
    assert got == ref
    # What the comparison covers, on kgroup's side.
    assert got["kerberos relogin"] == (0, None)
    assert got["a static config"] == (
        42,  # INVALID_REQUEST
        "Cannot update these configs dynamically: [log.dirs]",
    )
    assert got["per-broker as a default"][0] == 42
    described = got["described"]
    assert described["broker"]["sasl.kerberos.min.time.before.relogin"] == (
        "58000",
        DYNAMIC_BROKER,
        False,
        False,
        [
            ("sasl.kerberos.min.time.before.relogin", "58000", DYNAMIC_BROKER),
            ("sasl.kerberos.min.time.before.relogin", "60000", DEFAULT),
        ],
    )
    # AlterConfigs replaced the broker's whole set: the appended cleanup policy is gone.
    assert described["broker"]["log.cleanup.policy"][:2] == ("delete", DEFAULT)
    assert described["broker"]["log.cleaner.threads"][:2] == ("2", DYNAMIC_BROKER)
    # Kafka's LogConfig: a topic without retention.ms takes the cluster's log.retention.ms.
    assert described["topic"][:2] == ("604800001", DYNAMIC_DEFAULT)


# Kept in the broker's metadata folder (Kafka's metadata log): described after a restart as
# before, and still the topics' default; a topic's logs take a changed broker synonym at once
# (Kafka's DynamicLogConfig reconfigures every log without its own override).
def test_dynamic_broker_configs_survive_a_restart_and_reach_the_logs(tmp_path: Path) -> None:
    def flush_ms(b: Any) -> int:
        assert b.state is not None
        return int(b.state.topics.by_name["kept"].partitions[0].log.flush_ms)

    with run_broker(tmp_path, {"node.id": 1}) as b, Wire(b.bootstrap_servers) as w:
        create_topic(b.bootstrap_servers, "kept")
        default_flush = flush_ms(b)
        assert alter(w, "", [("log.retention.ms", "120000", SET)]) == (0, None)
        assert alter(w, "1", [("log.cleanup.policy", "compact", APPEND)]) == (0, None)
        assert alter(w, "", [("log.flush.interval.ms", "12345", SET)]) == (0, None)
        assert (default_flush, flush_ms(b)) == (2**63 - 1, 12345)
        before = (
            describe(w, BROKER, "1"),
            describe(w, BROKER, ""),
            describe(w, TOPIC, "kept"),
        )
    with run_broker(tmp_path, {"node.id": 1}) as b, Wire(b.bootstrap_servers) as w:
        after = (
            describe(w, BROKER, "1"),
            describe(w, BROKER, ""),
            describe(w, TOPIC, "kept"),
        )
        assert after == before
        assert after[2]["retention.ms"][:2] == ("120000", DYNAMIC_DEFAULT)
        assert after[2]["cleanup.policy"][:2] == ("delete,compact", DYNAMIC_BROKER)
        assert flush_ms(b) == 12345
        # Deleted, the static value (here the default) is back, on the logs too.
        assert alter(w, "", [("log.flush.interval.ms", None, DELETE)]) == (0, None)
        assert flush_ms(b) == default_flush
