"""Real clients authenticate to kgroup's SASL_PLAINTEXT listener: kafka-python and aiokafka
with PLAIN and SCRAM, confluent-kafka with OAUTHBEARER's unsecured JWTs, and Kafka's Java
clients with every mechanism, including re-authentication (KIP-368) and the errors they report
for bad credentials."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import confluent_kafka
import confluent_kafka.admin
import pytest
from support import java_scenarios, sasl

from kgroup.broker import Broker

CASES = [
    ("PLAIN", "alice", "alice-secret"),
    ("SCRAM-SHA-256", "alice", "alice-secret"),
    ("SCRAM-SHA-512", "bob", "bob-secret"),
]


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with sasl.sasl_broker(
        tmp_path_factory.mktemp("sasl-clients"), **{"connections.max.reauth.ms": "2000"}
    ) as b:
        yield b


@pytest.mark.parametrize(("mechanism", "user", "password"), CASES)
def test_kafka_python(sasl_broker, mechanism, user, password) -> None:
    import kafka

    topic = f"kp-{uuid.uuid4().hex[:8]}"
    opts = {
        "bootstrap_servers": sasl_broker.address("SASL_PLAINTEXT"),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }
    producer = kafka.KafkaProducer(**opts)
    for i in range(3):
        producer.send(topic, f"v{i}".encode()).get(timeout=15)
    producer.close()
    consumer = kafka.KafkaConsumer(
        topic, auto_offset_reset="earliest", consumer_timeout_ms=5000, **opts
    )
    assert [m.value for m in consumer] == [b"v0", b"v1", b"v2"]
    consumer.close()


@pytest.mark.parametrize(("mechanism", "user", "password"), CASES)
def test_aiokafka(sasl_broker, mechanism, user, password) -> None:
    import aiokafka

    topic = f"aio-{uuid.uuid4().hex[:8]}"
    opts = {
        "bootstrap_servers": sasl_broker.address("SASL_PLAINTEXT"),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }

    async def go() -> list[bytes]:
        producer = aiokafka.AIOKafkaProducer(**opts)
        await producer.start()
        try:
            for i in range(3):
                await producer.send_and_wait(topic, f"v{i}".encode())
        finally:
            await producer.stop()
        consumer = aiokafka.AIOKafkaConsumer(topic, auto_offset_reset="earliest", **opts)
        await consumer.start()
        got: list[bytes] = []
        try:
            while len(got) < 3:
                batch = await consumer.getmany(timeout_ms=5000)
                if not batch:
                    break
                got += [m.value for ms in batch.values() for m in ms]
        finally:
            await consumer.stop()
        return got

    assert asyncio.run(go()) == [b"v0", b"v1", b"v2"]


def oauth_config(broker: Broker, sasl_oauthbearer_config: str) -> dict[str, str]:
    return {
        "bootstrap.servers": broker.address("SASL_PLAINTEXT"),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": "true",
        "sasl.oauthbearer.config": sasl_oauthbearer_config,
    }


def test_confluent_kafka_oauthbearer_unsecured(sasl_broker) -> None:
    p = confluent_kafka.Producer(oauth_config(sasl_broker, "principal=alice"))
    p.produce("oauth", b"v")
    assert p.flush(15) == 0
    principals = {c.principal for c in sasl_broker.state.connections}
    assert "User:alice" in principals


# -- Kafka's Java clients -----------------------------------------------------------------


def java(broker: Broker, mechanism: str, jaas: str, **opts: object) -> dict:
    return java_scenarios.run(
        "sasl",
        broker.address("SASL_PLAINTEXT"),
        timeout=120,
        client_security_protocol="SASL_PLAINTEXT",
        **{"client.sasl.mechanism": mechanism, "client.sasl.jaas.config": jaas},
        **opts,
    )


@pytest.mark.parametrize(("mechanism", "user", "password"), CASES)
def test_java_clients_reauthenticate(sasl_broker, mechanism, user, password) -> None:
    # Three rounds 2.5 s apart: each connection outlives connections.max.reauth.ms (2 s) and
    # re-authenticates, or the broker would close it on its next request.
    counts = sasl_broker.state.sasl["SASL_PLAINTEXT"].counts
    before = dict(counts)
    got = java(
        sasl_broker,
        mechanism,
        sasl.java_jaas(mechanism, user, password),
        topic=f"java-{mechanism}",
        rounds=3,
        records=5,
        pause_ms=2500,
    )
    assert got == {"produced": 15, "consumed": 15}
    assert counts["reauthenticated"] > before.get("reauthenticated", 0)
    assert counts["expired"] == before.get("expired", 0)


def test_java_oauthbearer_unsecured(sasl_broker) -> None:
    jaas = (
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'unsecuredLoginStringClaim_sub="alice";'
    )
    assert java(sasl_broker, "OAUTHBEARER", jaas, topic="java-oauth") == {
        "produced": 10,
        "consumed": 10,
    }


@pytest.mark.parametrize(
    ("mechanism", "user", "password", "message"),
    [
        ("PLAIN", "alice", "wrong", "Authentication failed: Invalid username or password"),
        (
            "SCRAM-SHA-256",
            "nobody",
            "x",
            "Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-256",
        ),
    ],
)
def test_java_sees_kafkas_authentication_error(
    sasl_broker, mechanism, user, password, message
) -> None:
    got = java(sasl_broker, mechanism, sasl.java_jaas(mechanism, user, password))
    assert got == {"error": "SaslAuthenticationException", "message": message}
