"""Real clients authenticate to kgroup's SASL_PLAINTEXT and SASL_SSL listeners: kafka-python
and aiokafka with PLAIN and SCRAM, producing and consuming in a group, confluent-kafka with
OAUTHBEARER's unsecured JWTs, and Kafka's Java clients with every mechanism (over SASL_SSL too),
including re-authentication (KIP-368) and the errors they report for bad credentials."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import confluent_kafka
import confluent_kafka.admin
import pytest
from support import java_scenarios, sasl
from support import tls as client_tls
from support.certs import Certs

from kgroup.broker import Broker

CASES = [
    ("PLAIN", "alice", "alice-secret"),
    ("SCRAM-SHA-256", "alice", "alice-secret"),
    ("SCRAM-SHA-512", "bob", "bob-secret"),
]


#: PROTOCOLS are the SASL listeners each Python client is run against.
PROTOCOLS = ["SASL_PLAINTEXT", "SASL_SSL"]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return Certs(tmp_path_factory.mktemp("sasl-clients-certs"))


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory, certs: Certs) -> Iterator[Broker]:
    with sasl.sasl_broker(
        tmp_path_factory.mktemp("sasl-clients"),
        certs,
        **{"connections.max.reauth.ms": "2000", "group.initial.rebalance.delay.ms": "0"},
    ) as b:
        yield b


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(("mechanism", "user", "password"), CASES)
def test_kafka_python(sasl_broker, certs, protocol, mechanism, user, password) -> None:
    import kafka

    topic = f"kp-{uuid.uuid4().hex[:8]}"
    opts = sasl.python_client_config(
        sasl_broker.address(protocol), mechanism, user, password, protocol, certs
    )
    producer = kafka.KafkaProducer(**opts)
    for i in range(3):
        producer.send(topic, f"v{i}".encode()).get(timeout=15)
    producer.close()
    consumer = kafka.KafkaConsumer(
        topic, group_id=topic, auto_offset_reset="earliest", consumer_timeout_ms=10_000, **opts
    )
    got = [m.value for _, m in zip(range(3), consumer, strict=False)]
    consumer.commit()
    # The consumer's connections are authenticated as the user, on the listener asked for.
    on_listener = {
        c.principal for c in sasl_broker.state.connections if c.listener.name == protocol
    }
    consumer.close()
    assert got == [b"v0", b"v1", b"v2"]
    assert f"User:{user}" in on_listener


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(("mechanism", "user", "password"), CASES)
def test_aiokafka(sasl_broker, certs, protocol, mechanism, user, password) -> None:
    import aiokafka

    topic = f"aio-{uuid.uuid4().hex[:8]}"
    opts = sasl.python_client_config(
        sasl_broker.address(protocol), mechanism, user, password, protocol, certs
    )

    async def go() -> list[bytes]:
        producer = aiokafka.AIOKafkaProducer(**opts)
        await producer.start()
        try:
            for i in range(3):
                await producer.send_and_wait(topic, f"v{i}".encode())
        finally:
            await producer.stop()
        consumer = aiokafka.AIOKafkaConsumer(
            topic, group_id=topic, auto_offset_reset="earliest", **opts
        )
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


@pytest.mark.parametrize(("mechanism", "user", "password"), [CASES[0], CASES[2]])
def test_java_clients_over_sasl_ssl(sasl_broker, certs, mechanism, user, password) -> None:
    """SASL over TLS: the Java client trusts the broker's certificate (a PEM trust store, no
    client certificate) and authenticates inside the TLS session."""
    counts = sasl_broker.state.sasl["SASL_SSL"].counts
    before = counts["authenticated"]
    tls = {f"client.{k}": v for k, v in client_tls.java(certs).items() if k != "security.protocol"}
    got = java_scenarios.run(
        "sasl",
        sasl_broker.address("SASL_SSL"),
        timeout=120,
        client_security_protocol="SASL_SSL",
        **{
            "client.sasl.mechanism": mechanism,
            "client.sasl.jaas.config": sasl.java_jaas(mechanism, user, password),
            **tls,
        },
        topic=f"java-ssl-{mechanism}",
    )
    assert got == {"produced": 10, "consumed": 10}
    # Its producer and consumer authenticated on the SASL_SSL listener itself.
    assert counts["authenticated"] >= before + 2


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


# -- kgroup's own clients and tools ------------------------------------------------------


@pytest.mark.parametrize(("mechanism", "user", "password"), CASES)
def test_kgroup_clients(sasl_broker, mechanism, user, password) -> None:
    from kgroup.client import Consumer, Producer

    config = sasl.client_config(sasl_broker.address("SASL_PLAINTEXT"), mechanism, user, password)
    topic = f"kg-{uuid.uuid4().hex[:8]}"
    p = Producer(config)
    for i in range(3):
        p.produce(topic, f"v{i}".encode())
    assert p.flush(15) == 0
    p.close()
    c = Consumer({**config, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got: list[bytes] = []
    try:
        for _ in range(60):
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value())
            if len(got) == 3:
                break
    finally:
        c.close()
    assert got == [b"v0", b"v1", b"v2"]


def test_kgroup_client_errors(sasl_broker) -> None:
    from kgroup import errors
    from kgroup.client.admin import AdminClient

    bad = sasl.client_config(sasl_broker.address("SASL_PLAINTEXT"), "PLAIN", "alice", "wrong")
    with AdminClient({**bad, "default.api.timeout.ms": 3000}) as admin:
        with pytest.raises(errors.KafkaError, match="Invalid username or password"):
            admin.list_topics(timeout=3)


def test_kgroup_configs_with_a_kafka_command_config(sasl_broker, tmp_path) -> None:
    import io

    from kgroup.cli import build_parser

    props = tmp_path / "client.properties"
    props.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '    username="bob" password="bob-secret";\n'
    )
    argv = [
        "configs",
        "--bootstrap-server",
        sasl_broker.address("SASL_PLAINTEXT"),
        "--command-config",
        str(props),
        "--describe",
        "--entity-type",
        "users",
        "--entity-name",
        "bob",
    ]
    args = build_parser("configs").parse_args(argv)
    out = io.StringIO()
    assert args.func(args, out) == 0
    assert out.getvalue() == (
        "SCRAM credential configs for user-principal 'bob' are "
        "SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=4096\n"
    )
