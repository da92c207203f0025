"""kgroup's clients over TLS and SASL, against Apache Kafka 4.x (support.secure_kafka: one node
with SSL, mutual TLS, SASL_PLAINTEXT and SASL_SSL listeners at once), and against kgroup's broker
configured with the same Kafka settings (``peer`` "kgroup").

Each case creates a topic with kgroup's AdminClient, produces with its Producer and reads back
in a group with its Consumer, over one listener and mechanism, configured with librdkafka's
settings or the Java client's. The refusals are those Java's and librdkafka's clients meet: a
wrong password is SASL_AUTHENTICATION_FAILED with Kafka's message (SaslAuthenticatorTest.
testInvalidPasswordSaslPlain / testInvalidPasswordSaslScram), a broker certificate no trusted
CA signed fails the TLS handshake (SslTransportLayerTest.testInvalidEndpointIdentification's
kind: SslAuthenticationException).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.secure_kafka import (
    PASSWORD,
    REAUTH_MS,
    USER,
    SecureKafka,
    run_secure_kafka,
    run_secure_kgroup,
)

from kgroup.cli import main
from kgroup.client import AdminClient, Consumer, NewTopic, Producer
from kgroup.client.security import SslAuthenticationFailed
from kgroup.errors import (
    InvalidArgument,
    SaslAuthenticationFailed,
    UnsupportedSaslMechanism,
)

pytestmark = [pytest.mark.network, pytest.mark.slow]


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureKafka]:
    with run_secure_kafka(tmp_path_factory.mktemp("secure-kafka")) as k:
        yield k


@pytest.fixture(scope="module")
def kgroup_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureKafka]:
    with run_secure_kgroup(tmp_path_factory.mktemp("secure-kgroup")) as k:
        yield k


#: Apache Kafka, and kgroup's broker with the same listeners and settings.
PEERS = ["kafka", "kgroup"]


def peer_broker(request: pytest.FixtureRequest, peer: str) -> SecureKafka:
    return request.getfixturevalue("kafka" if peer == "kafka" else "kgroup_broker")


def _java_sasl_ssl(k: SecureKafka) -> dict[str, Any]:
    # What a Spark or Java user writes: Java's property names only.
    return {
        "bootstrap.servers": k.bootstrap("SASL_SSL"),
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
        f'required username="{USER}" password="{PASSWORD}";',
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(k.certs.ca),
    }


def _oauth_cb(k: SecureKafka) -> dict[str, Any]:
    calls: list[str] = []

    def token(config: str) -> tuple[str, float]:
        from kgroup.client.security import unsecured_jwt

        calls.append(config)
        value, expiry, _, _ = unsecured_jwt("principal=alice lifeSeconds=600")
        return value, expiry

    return k.client(
        "SASL_SSL",
        "OAUTHBEARER",
        oauth_cb=token,
        **{
            "enable.sasl.oauthbearer.unsecure.jwt": False,
            "sasl.oauthbearer.config": "from-the-callback",
        },
    )


def _java_pkcs12_truststore(k: SecureKafka) -> dict[str, Any]:
    # A PKCS#12 trust store holding only the CA, as `keytool -importcert -storetype PKCS12`
    # makes one.
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    ca = x509.load_pem_x509_certificate(k.certs.ca.read_bytes())
    store = k.certs.folder / "truststore.p12"
    store.write_bytes(
        pkcs12.serialize_key_and_certificates(
            None, None, None, [ca], serialization.BestAvailableEncryption(b"changeit")
        )
    )
    return {
        "bootstrap.servers": k.bootstrap("SSL"),
        "security.protocol": "SSL",
        "ssl.truststore.type": "PKCS12",
        "ssl.truststore.location": str(store),
        "ssl.truststore.password": "changeit",
    }


CASES: dict[str, Any] = {
    "ssl": lambda k: k.client("SSL"),
    "ssl-java-pkcs12-truststore": _java_pkcs12_truststore,
    "mtls-pem-files": lambda k: k.client(
        "MTLS",
        **{
            "ssl.certificate.location": str(k.certs.client("bob").cert),
            "ssl.key.location": str(k.certs.client("bob").key_encrypted),
            "ssl.key.password": k.certs.password,
        },
    ),
    "mtls-pkcs12": lambda k: k.client(
        "MTLS",
        **{
            "ssl.keystore.location": str(k.certs.client("carol").p12),
            "ssl.keystore.password": k.certs.password,
        },
    ),
    "sasl_plaintext-plain": lambda k: k.client("SASL_PLAINTEXT", "PLAIN"),
    "sasl_plaintext-scram-sha-256": lambda k: k.client("SASL_PLAINTEXT", "SCRAM-SHA-256"),
    "sasl_plaintext-scram-sha-512": lambda k: k.client("SASL_PLAINTEXT", "SCRAM-SHA-512"),
    "sasl_ssl-plain": lambda k: k.client("SASL_SSL", "PLAIN"),
    "sasl_ssl-scram-sha-512": lambda k: k.client("SASL_SSL", "SCRAM-SHA-512"),
    "sasl_ssl-oauthbearer-unsecured-jwt": lambda k: k.client("SASL_SSL", "OAUTHBEARER"),
    "sasl_ssl-oauth_cb": _oauth_cb,
    "sasl_ssl-java-names": _java_sasl_ssl,
}


@pytest.mark.parametrize(
    ("peer", "case"),
    [(peer, c) for peer in PEERS for c in CASES],
)
def test_admin_produce_and_group_consume(
    request: pytest.FixtureRequest, peer: str, case: str
) -> None:
    config = CASES[case](peer_broker(request, peer))
    topic = f"sec-{case}-{uuid.uuid4().hex[:8]}"
    with AdminClient(config) as admin:
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
        # Kafka answers CreateTopics before its metadata cache has the topic: wait for it.
        deadline = time.monotonic() + 10
        while topic not in admin.list_topics(timeout=10).topics:
            assert time.monotonic() < deadline, f"{topic} not in Metadata after 10 s"
            time.sleep(0.1)

    delivered: list[Any] = []
    producer = Producer({**config, "linger.ms": 0})
    for i in range(6):
        producer.produce(
            topic, key=f"k{i}", value=f"v{i}", on_delivery=lambda e, m: delivered.append(e)
        )
    assert producer.flush(30) == 0
    producer.close()
    assert delivered == [None] * 6

    consumer = Consumer(
        {
            **config,
            "group.id": f"g-{case}",
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 10000,
        }
    )
    try:
        consumer.subscribe([topic])
        got: set[bytes] = set()
        deadline = time.monotonic() + 30
        while len(got) < 6 and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None:
                assert m.error() is None, m.error()
                got.add(m.value())
        assert got == {f"v{i}".encode() for i in range(6)}
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()


@pytest.mark.parametrize("peer", PEERS)
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_wrong_password_is_sasl_authentication_failed_once(
    request: pytest.FixtureRequest, peer: str, mechanism: str
) -> None:
    k = peer_broker(request, peer)
    listener = "SASL_SSL" if "SASL_SSL" in k.addresses else "SASL_PLAINTEXT"
    errors: list[Exception] = []
    config = k.client(listener, mechanism, **{"sasl.password": "wrong", "error_cb": errors.append})
    with AdminClient(config) as admin:
        with pytest.raises(SaslAuthenticationFailed) as got:
            admin.list_topics(timeout=10)
        # Kafka's broker: "Authentication failed during authentication due to invalid
        # credentials with SASL mechanism <m>" (SCRAM) / "Invalid username or password" (PLAIN).
        assert "authentication failed" in str(got.value).lower()
        assert got.value.code == 58
        time.sleep(1)
    # One attempt for one call: a refusal is not retried (librdkafka's and Java's clients back
    # off, they do not storm the broker).
    assert len(errors) == 1
    assert isinstance(errors[0], SaslAuthenticationFailed)


@pytest.mark.parametrize("peer", PEERS)
def test_untrusted_broker_certificate_fails_the_handshake(
    request: pytest.FixtureRequest, peer: str
) -> None:
    kafka = peer_broker(request, peer)
    errors: list[Exception] = []
    config = kafka.client(
        "SSL", **{"ssl.ca.location": str(kafka.certs.other_ca), "error_cb": errors.append}
    )
    with AdminClient(config) as admin, pytest.raises(SslAuthenticationFailed) as got:
        admin.list_topics(timeout=10)
    assert "certificate verify failed" in str(got.value)
    assert [type(e) for e in errors] == [SslAuthenticationFailed]
    # librdkafka's enable.ssl.certificate.verification=false trusts any broker.
    config["enable.ssl.certificate.verification"] = False
    with AdminClient(config) as admin:
        assert admin.list_topics(timeout=10).brokers


@pytest.mark.parametrize("peer", PEERS)
def test_tls_to_a_plaintext_port_fails_the_handshake(
    request: pytest.FixtureRequest, peer: str
) -> None:
    kafka = peer_broker(request, peer)
    # Kafka reads the ClientHello as a frame size far above socket.request.max.bytes and
    # drops the connection: Java's client reports an SslAuthenticationException.
    config = {**kafka.client("SSL"), "bootstrap.servers": kafka.plaintext}
    with AdminClient(config) as admin, pytest.raises(SslAuthenticationFailed):
        admin.list_topics(timeout=10)


@pytest.mark.parametrize("peer", PEERS)
def test_client_certificate_required_by_the_broker(
    request: pytest.FixtureRequest, peer: str
) -> None:
    kafka = peer_broker(request, peer)
    # ssl.client.auth=required and no client certificate: the broker ends the handshake.
    with AdminClient(kafka.client("MTLS")) as admin, pytest.raises(SslAuthenticationFailed):
        admin.list_topics(timeout=10)


def test_unknown_mechanism_and_missing_credentials_are_refused_at_construction(
    kafka: SecureKafka,
) -> None:
    config = kafka.client("SASL_SSL", "PLAIN", **{"sasl.mechanism": "SCRAM-SHA-1"})
    with pytest.raises(InvalidArgument, match="SCRAM-SHA-1 is not supported"):
        AdminClient(config)
    config = kafka.client("SASL_SSL", "PLAIN")
    del config["sasl.username"]
    with pytest.raises(InvalidArgument, match=r"needs sasl\.username"):
        AdminClient(config)


@pytest.mark.parametrize("peer", PEERS)
def test_mechanism_the_listener_does_not_enable(request: pytest.FixtureRequest, peer: str) -> None:
    # SASL_PLAINTEXT enables no OAUTHBEARER: Kafka's SaslHandshake answers
    # UNSUPPORTED_SASL_MECHANISM with the mechanisms it enables.
    k = peer_broker(request, peer)
    with AdminClient(k.client("SASL_PLAINTEXT", "OAUTHBEARER")) as admin:
        with pytest.raises(UnsupportedSaslMechanism) as got:
            admin.list_topics(timeout=10)
    offered = str(got.value).rsplit("(it enables ", 1)[1].rstrip(")").split(", ")
    assert sorted(offered) == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert got.value.code == 33


@pytest.mark.parametrize("peer", PEERS)
def test_reauthentication_before_the_session_ends(
    request: pytest.FixtureRequest, peer: str
) -> None:
    # KIP-368: the listener gives SCRAM-SHA-512 sessions REAUTH_MS; a client that did not
    # re-authenticate would be disconnected by the broker at its next request after that.
    config = peer_broker(request, peer).client("SASL_PLAINTEXT", "SCRAM-SHA-512")
    with AdminClient(config) as admin:
        admin.list_topics(timeout=10)
        conns = [c for c in admin._cluster._conns.values() if not c.closed]
        assert conns and conns[0].session_lifetime_ms > 0
        conn = conns[0]
        deadline = time.monotonic() + REAUTH_MS / 1000 * 2.2
        while time.monotonic() < deadline:
            admin.list_topics(timeout=10)
            time.sleep(0.2)
        assert not conn.closed
        assert conn.authentications >= 2
        assert admin._cluster._conns[conn.node_id] is conn


@pytest.mark.parametrize("peer", PEERS)
def test_topics_tool_over_sasl_ssl_with_command_config(
    request: pytest.FixtureRequest, peer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kafka = peer_broker(request, peer)
    topic = f"tool-{uuid.uuid4().hex[:8]}"
    props = tmp_path / "client.properties"
    props.write_text(
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        f'    username="{USER}" password="{PASSWORD}";\n'
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={kafka.certs.ca}\n"
    )
    server = ["--bootstrap-server", kafka.bootstrap("SASL_SSL"), "--command-config", str(props)]
    assert main(["topics", "create", "--topic", topic, "--partitions", "1", *server]) == 0
    capsys.readouterr()
    assert main(["topics", "list", *server]) == 0
    assert topic in capsys.readouterr().out.split()
    # A wrong password in the file: Kafka's refusal, on stderr, and a failed exit.
    props.write_text(props.read_text().replace(PASSWORD, "wrong"))
    assert main(["topics", "list", *server]) != 0
    assert "SCRAM-SHA-512 authentication failed" in capsys.readouterr().err


@pytest.mark.parametrize("peer", PEERS)
def test_group_consumer_keeps_its_connections_across_reauthentication(
    request: pytest.FixtureRequest, peer: str
) -> None:
    # Fetches wait in the broker (fetch.max.wait.ms) while the session ends: re-authentication
    # goes out behind them and the records keep flowing on the same connections.
    config = peer_broker(request, peer).client("SASL_PLAINTEXT", "SCRAM-SHA-512")
    topic = f"reauth-{uuid.uuid4().hex[:8]}"
    with AdminClient(config) as admin:
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({**config, "linger.ms": 0})
    consumer = Consumer({**config, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        sent, got = 0, []
        deadline = time.monotonic() + REAUTH_MS / 1000 * 2.5
        while time.monotonic() < deadline:
            producer.produce(topic, value=str(sent))
            sent += 1
            producer.poll(0)
            m = consumer.poll(0.3)
            if m is not None:
                assert m.error() is None, m.error()
                got.append(m.value())
        assert producer.flush(10) == 0
        while len(got) < sent:
            m = consumer.poll(5)
            assert m is not None, f"{len(got)} of {sent} records"
            got.append(m.value())
        assert got == [str(i).encode() for i in range(sent)]
        conns = [*consumer._cluster._conns.values(), *consumer._fetcher._conns.values()]
        assert all(not c.closed for c in conns)
        assert max(c.authentications for c in conns) >= 2
    finally:
        consumer.close()
        producer.close()
