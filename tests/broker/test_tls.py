"""TLS listeners: real clients (confluent-kafka, kafka-python, aiokafka) produce, consume and
join groups over SSL, with and without client certificates, beside a PLAINTEXT listener of
the same broker; the principal comes from the client certificate; clients Kafka refuses are
refused and leave the broker serving everyone else; a key store that cannot be read stops
the start, as Kafka's does."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
import uuid
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest
from support import tls as client_tls
from support.certs import Certs

from kgroup.broker import Broker
from kgroup.broker.config import BrokerConfig, ConfigError
from kgroup.broker.listeners import parse_listeners

pytestmark = pytest.mark.network

#: PLAINTEXT, SSL (client certificates requested) and MTLS (an SSL listener that requires
#: them, through its own listener.name.mtls. setting).
LISTENERS = {
    "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL",
    "listener.name.mtls.ssl.client.auth": "required",
    "group.initial.rebalance.delay.ms": 0,
    "num.partitions": 1,
}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return Certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module", params=["uvloop", "asyncio"])
def broker(
    request: pytest.FixtureRequest, certs: Certs, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Broker]:
    config = {**LISTENERS, **client_tls.broker_ssl(certs, "requested")}
    with Broker(tmp_path_factory.mktemp("tls"), config=config, event_loop=request.param) as b:
        yield b


def principals(broker: Broker, listener: str, expect: str | None = None) -> set[str]:
    """The principals of the connections open on ``listener`` (once one is ``expect``: a
    client opens its connection to the broker's advertised address in its own time)."""
    assert broker.state is not None
    deadline = time.monotonic() + 5
    while True:
        got = {c.principal for c in broker.state.connections if c.listener.name == listener}
        if expect is None or expect in got or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def roundtrip(conf: dict[str, Any], n: int = 200, size: int = 100) -> list[bytes]:
    """Produce ``n`` records to a new topic, then consume them in a group; their values."""
    topic = f"tls-{uuid.uuid4().hex[:8]}"
    p = confluent_kafka.Producer({**conf, "acks": "all"})
    for i in range(n):
        p.produce(topic, i.to_bytes(4, "big") + bytes(size))
    assert p.flush(20) == 0
    c = confluent_kafka.Consumer(
        {**conf, "group.id": topic, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    c.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < n and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
    c.commit(asynchronous=False)
    c.close()
    return got


def test_confluent_kafka_with_a_client_certificate(broker: Broker, certs: Certs) -> None:
    alice = certs.client("alice", "kgroup")
    conf = {"bootstrap.servers": broker.address("SSL"), **client_tls.confluent(certs, alice)}
    p = confluent_kafka.Producer(conf)
    p.produce("tls-principal", b"x")
    assert p.flush(10) == 0
    # Kafka's DefaultKafkaPrincipalBuilder: User: and the subject as X500Principal.getName().
    assert principals(broker, "SSL") == {"User:" + alice.subject} == {"User:O=kgroup,CN=alice"}
    got = roundtrip(conf)
    assert [int.from_bytes(v[:4], "big") for v in got] == list(range(200))


def test_confluent_kafka_without_a_client_certificate_is_anonymous(
    broker: Broker, certs: Certs
) -> None:
    # ssl.client.auth=requested: a client may send none (Kafka: User:ANONYMOUS).
    conf = {"bootstrap.servers": broker.address("SSL"), **client_tls.confluent(certs)}
    assert len(roundtrip(conf, n=50)) == 50
    p = confluent_kafka.Producer(conf)
    p.produce("tls-anonymous", b"x")
    assert p.flush(10) == 0
    assert "User:ANONYMOUS" in principals(broker, "SSL", "User:ANONYMOUS")


def test_large_fetches_are_copied_through_tls(broker: Broker, certs: Certs) -> None:
    # Records above kgroup.fetch.sendfile.min.bytes go out with sendfile on PLAINTEXT; on TLS
    # they are encrypted, never sent raw (Kafka's SslTransportLayer copies them too).
    assert broker.state is not None
    before = broker.state.send_stats.sendfile_calls
    conf = {"bootstrap.servers": broker.address("SSL"), **client_tls.confluent(certs)}
    got = roundtrip(conf, n=300, size=10_000)
    assert [int.from_bytes(v[:4], "big") for v in got] == list(range(300))
    assert all(len(v) == 10_004 for v in got)
    assert broker.state.send_stats.sendfile_calls == before


def test_plaintext_and_tls_listeners_serve_side_by_side(broker: Broker, certs: Certs) -> None:
    bob = certs.client("bob")
    plain = {"bootstrap.servers": broker.bootstrap_servers}
    mtls = {"bootstrap.servers": broker.address("MTLS"), **client_tls.confluent(certs, bob)}
    assert len(roundtrip(plain, n=20)) == 20
    assert len(roundtrip(mtls, n=20)) == 20
    md = confluent_kafka.admin.AdminClient(mtls).list_topics(timeout=10)
    assert [f"{b.host}:{b.port}" for b in md.brokers.values()] == [broker.address("MTLS")]
    p = confluent_kafka.Producer(mtls)
    p.produce("tls-bob", b"x")
    assert p.flush(10) == 0
    assert "User:CN=bob" in principals(broker, "MTLS", "User:CN=bob")


def test_kafka_python_over_tls(broker: Broker, certs: Certs) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    ctx = client_tls.python_context(certs, certs.client("carol"))
    common = {
        "bootstrap_servers": broker.address("MTLS"),
        "security_protocol": "SSL",
        "ssl_context": ctx,
    }
    topic = f"tls-kp-{uuid.uuid4().hex[:8]}"
    p = KafkaProducer(**common, acks="all")
    for i in range(50):
        p.send(topic, str(i).encode())
    p.flush(20)
    p.close()
    c = KafkaConsumer(
        topic,
        **common,
        group_id=topic,
        auto_offset_reset="earliest",
        consumer_timeout_ms=10_000,
    )
    got = [m.value for _, m in zip(range(50), c, strict=False)]
    c.close()
    assert got == [str(i).encode() for i in range(50)]


def test_aiokafka_over_tls(broker: Broker, certs: Certs) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    ctx = client_tls.python_context(certs, certs.client("dave"))
    topic = f"tls-aio-{uuid.uuid4().hex[:8]}"
    common = {
        "bootstrap_servers": broker.address("MTLS"),
        "security_protocol": "SSL",
        "ssl_context": ctx,
    }

    async def run() -> list[bytes]:
        p = AIOKafkaProducer(**common, acks="all")
        await p.start()
        try:
            for i in range(50):
                await p.send(topic, str(i).encode())
            await p.flush()
        finally:
            await p.stop()
        c = AIOKafkaConsumer(topic, **common, group_id=topic, auto_offset_reset="earliest")
        await c.start()
        got: list[bytes] = []
        try:
            async with asyncio.timeout(20):
                async for m in c:
                    got.append(m.value)
                    if len(got) == 50:
                        break
        finally:
            await c.stop()
        return got

    assert asyncio.run(run()) == [str(i).encode() for i in range(50)]


# -- refusals ------------------------------------------------------------------------------


def refused(conf: dict[str, Any]) -> str:
    """What librdkafka reports about a client the broker refuses: a transport or SSL failure,
    which its error callback explains."""
    errors: list[confluent_kafka.KafkaError] = []
    p = confluent_kafka.Producer({**conf, "log_level": 0, "error_cb": errors.append})
    p.produce("tls-refused", b"x")
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        p.poll(0.1)
    assert errors, "the client was not refused"
    assert errors[0].code() in (
        confluent_kafka.KafkaError._TRANSPORT,
        confluent_kafka.KafkaError._SSL,
        confluent_kafka.KafkaError._ALL_BROKERS_DOWN,
    )
    return errors[0].str()


def test_refused_clients_leave_the_listener_serving_others(broker: Broker, certs: Certs) -> None:
    address = broker.address("MTLS")
    erin = certs.client("erin")
    good = {"bootstrap.servers": address, **client_tls.confluent(certs, erin)}
    producer = confluent_kafka.Producer(good)
    # A PLAINTEXT client on a TLS port: the handshake fails and the connection closes.
    refused({"bootstrap.servers": address})
    # ssl.client.auth=required: no certificate, or one from a CA the broker does not trust.
    # The broker sends a TLS alert before it closes, as Kafka's does (Kafka's JSSE sends
    # bad_certificate, OpenSSL certificate_required and unknown_ca): the client reports the
    # alert, and Java's client raises SslAuthenticationException.
    missing = refused({"bootstrap.servers": address, **client_tls.confluent(certs)})
    assert "alert certificate required" in missing
    untrusted = refused(
        {"bootstrap.servers": address, **client_tls.confluent(certs, certs.untrusted)}
    )
    assert "alert unknown ca" in untrusted
    # A client that does not trust the broker's CA.
    distrust = refused(
        {"bootstrap.servers": address, **client_tls.confluent(certs, erin, certs.other_ca)}
    )
    assert "certificate verify failed" in distrust
    producer.produce("tls-meanwhile", b"still here")
    assert producer.flush(10) == 0
    assert "User:CN=erin" in principals(broker, "MTLS", "User:CN=erin")


def test_garbage_on_a_tls_port_closes_only_that_connection(broker: Broker) -> None:
    host, port = broker.address("SSL").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        # A Kafka ApiVersions request in the clear, as a PLAINTEXT client starts.
        s.sendall(bytes.fromhex("0000001f0012000300000001000b6b61666b612d746f6f6c73000000"))
        s.settimeout(5)
        try:
            data = s.recv(1024)
        except ConnectionResetError:
            data = b""
        assert data == b"" or data[:1] == b"\x15"  # closed, or a TLS alert first
    md = confluent_kafka.admin.AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    assert md.list_topics(timeout=10).brokers


# -- configuration -------------------------------------------------------------------------


def start_fails(tmp_path: Any, config: dict[str, Any], match: str) -> None:
    listeners = {"listeners": "SSL://127.0.0.1:0"}
    with pytest.raises(ConfigError, match=match):
        with Broker(tmp_path, config={**listeners, **config}):
            pass


def test_a_key_store_that_cannot_be_read_stops_the_start(tmp_path: Any, certs: Certs) -> None:
    # Kafka's DefaultSslEngineFactory messages, where Kafka has one.
    start_fails(tmp_path, {}, "has no key store")
    start_fails(
        tmp_path,
        {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(tmp_path / "missing.pem")},
        "Failed to load PEM SSL keystore",
    )
    start_fails(
        tmp_path,
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(certs.broker.keystore_pem),
            "ssl.key.password": "wrong",
        },
        "Failed to load PEM SSL keystore",
    )
    start_fails(
        tmp_path,
        {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(certs.broker.keystore_pem)},
        "ssl.key.password is not set",
    )
    start_fails(
        tmp_path,
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(certs.broker.keystore_pem),
            "ssl.keystore.password": "x",
        },
        "SSL key store password cannot be specified with PEM format",
    )
    start_fails(
        tmp_path,
        {"ssl.keystore.location": str(certs.broker.p12), "ssl.keystore.password": "x"},
        "convert it to PKCS12",
    )
    start_fails(
        tmp_path,
        {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(certs.broker.p12)},
        "key store password is not specified",
    )
    start_fails(
        tmp_path,
        {
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(certs.broker.p12),
            "ssl.keystore.password": "wrong",
        },
        "Failed to load SSL keystore .* of type PKCS12",
    )
    start_fails(
        tmp_path,
        {"ssl.keystore.key": certs.broker.key.read_text()},
        "SSL private key can be specified only for PEM, but key store type is JKS",
    )


def test_key_store_forms_kafka_accepts(tmp_path: Any, certs: Certs) -> None:
    forms = {
        "pkcs12": {
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(certs.broker.p12),
            "ssl.keystore.password": certs.password,
        },
        "inline": {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": certs.broker.key_encrypted.read_text(),
            "ssl.key.password": certs.password,
            "ssl.keystore.certificate.chain": certs.broker.cert.read_text(),
        },
    }
    for name, form in forms.items():
        config = {
            "listeners": "SSL://127.0.0.1:0",
            "ssl.client.auth": "required",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": certs.ca.read_text(),
            **form,
        }
        with Broker(tmp_path / name, config=config) as b:
            conf = {
                "bootstrap.servers": b.bootstrap_servers,
                **client_tls.confluent(certs, certs.client("frank")),
            }
            md = confluent_kafka.admin.AdminClient(conf).list_topics(timeout=10)
            assert md.brokers, name


def test_ssl_settings_are_declared_with_kafkas_defaults() -> None:
    config = BrokerConfig({})
    assert config.get("ssl.keystore.type") == "JKS"
    assert config.get("ssl.client.auth") == "none"
    assert config.get("ssl.enabled.protocols") == ["TLSv1.2", "TLSv1.3"]
    assert config.get("ssl.protocol") == "TLSv1.3"
    assert config.get("ssl.principal.mapping.rules") == "DEFAULT"
    with pytest.raises(ConfigError, match=r"ssl\.client\.auth"):
        BrokerConfig({"ssl.client.auth": "sometimes"})
    with pytest.raises(ConfigError, match=r"ssl\.principal\.mapping\.rules"):
        BrokerConfig({"ssl.principal.mapping.rules": "DEFAULT/L"})
    # A listener's own setting wins over the broker's.
    config = BrokerConfig(
        {"ssl.client.auth": "none", "listener.name.mtls.ssl.client.auth": "required"}
    )
    assert config.for_listener("MTLS", "ssl.client.auth") == "required"
    assert config.for_listener("SSL", "ssl.client.auth") == "none"
    assert [x.security_protocol for x in parse_listeners(BrokerConfig(LISTENERS))] == [
        "PLAINTEXT",
        "SSL",
        "SSL",
    ]


def test_passwords_are_sensitive_in_describe_configs(broker: Broker) -> None:
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    resource = confluent_kafka.admin.ConfigResource("BROKER", "1")
    entries = admin.describe_configs([resource])[resource].result(10)
    # Kafka lists a set password as null and sensitive.
    key_password = entries["ssl.key.password"]
    assert key_password.is_sensitive and key_password.value is None
    assert entries["ssl.keystore.type"].value == "PEM"
    assert not entries["ssl.keystore.type"].is_sensitive


def test_protocols_and_cipher_suites_follow_the_settings(tmp_path: Any, certs: Certs) -> None:
    config = {
        "listeners": "SSL://127.0.0.1:0",
        "ssl.enabled.protocols": "TLSv1.2",
        # Java's names for TLS 1.2 suites, as Kafka's server.properties has them.
        "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        **client_tls.broker_ssl(certs),
    }
    with Broker(tmp_path, config=config) as b:
        host, port = b.bootstrap_servers.rsplit(":", 1)
        ctx = ssl.create_default_context(cafile=str(certs.ca))
        with socket.create_connection((host, int(port)), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                assert s.version() == "TLSv1.2"
                assert s.cipher()[0] == "ECDHE-ECDSA-AES256-GCM-SHA384"
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        with socket.create_connection((host, int(port)), timeout=5) as raw:
            with pytest.raises(ssl.SSLError):
                ctx.wrap_socket(raw, server_hostname="localhost")


def test_a_test_broker_in_a_child_process_serves_tls(certs: Certs) -> None:
    # kgroup.testing's child broker starts without ssl, unless a listener needs it.
    from kgroup.testing import Broker as TestBroker

    config = {"listeners": "SSL://127.0.0.1:0", **client_tls.broker_ssl(certs, "required")}
    with TestBroker(process=True, config=config) as broker:
        conf = {
            "bootstrap.servers": broker.bootstrap_servers,
            **client_tls.confluent(certs, certs.client("grace")),
        }
        assert len(roundtrip(conf, n=10)) == 10


def test_sasl_ssl_asks_for_certificates_only_when_its_own_setting_says_so(certs: Certs) -> None:
    # Kafka's ChannelBuilders: the broker-wide ssl.client.auth applies to SSL listeners only;
    # a SASL_SSL listener requests certificates with listener.name.<l>.ssl.client.auth.
    from kgroup.broker import tls

    base = {
        "listeners": "SASL_SSL://127.0.0.1:0,OTHER://127.0.0.1:0",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,OTHER:SASL_SSL",
        **client_tls.broker_ssl(certs, "required"),
        "listener.name.other.ssl.client.auth": "requested",
    }
    config = BrokerConfig(base)
    sasl_ssl, other = parse_listeners(config)
    assert tls.server_context(config, sasl_ssl).verify_mode == ssl.CERT_NONE
    assert tls.server_context(config, other).verify_mode == ssl.CERT_OPTIONAL


def test_a_client_that_never_finishes_its_handshake_is_closed(
    tmp_path: Any, certs: Certs, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgroup.broker import tls

    monkeypatch.setattr(tls, "HANDSHAKE_TIMEOUT_S", 0.3)
    config = {"listeners": "SSL://127.0.0.1:0", **client_tls.broker_ssl(certs)}
    with Broker(tmp_path, config=config) as b:
        host, port = b.bootstrap_servers.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.settimeout(5)
            started = time.monotonic()
            assert s.recv(1024) == b""  # closed by the broker, nothing sent
            assert time.monotonic() - started < 3


def test_principal_mapping_rules_map_the_certificate_name(tmp_path: Any, certs: Certs) -> None:
    # ssl.principal.mapping.rules (Kafka's SslPrincipalMapper): the first rule that matches
    # gives the name; a certificate no rule maps fails its authentication (the connection
    # closes) and leaves the others served.
    config = {
        "listeners": "SSL://127.0.0.1:0",
        **client_tls.broker_ssl(certs, "required"),
        "ssl.principal.mapping.rules": "RULE:^O=(.*),CN=(.*)$/$2@$1/U",
    }
    with Broker(tmp_path, config=config) as b:
        mapped = {
            "bootstrap.servers": b.bootstrap_servers,
            **client_tls.confluent(certs, certs.client("heidi", "kgroup")),
        }
        p = confluent_kafka.Producer(mapped)
        p.produce("tls-mapped", b"x")
        assert p.flush(10) == 0
        assert "User:HEIDI@KGROUP" in principals(b, "SSL", "User:HEIDI@KGROUP")
        unmapped = {
            "bootstrap.servers": b.bootstrap_servers,
            **client_tls.confluent(certs, certs.client("ivan")),
        }
        refused(unmapped)
        p.produce("tls-mapped", b"y")
        assert p.flush(10) == 0


def test_python_clients_without_a_certificate_fail_to_bootstrap(
    broker: Broker, certs: Certs
) -> None:
    # What kafka-python and aiokafka raise against Apache Kafka with ssl.client.auth=required
    # and no client certificate (tried side by side): the same here.
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaConnectionError
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError

    address = broker.address("MTLS")
    ctx = client_tls.python_context(certs)
    with pytest.raises(KafkaTimeoutError, match="Unable to bootstrap"):
        KafkaProducer(
            bootstrap_servers=address,
            security_protocol="SSL",
            ssl_context=ctx,
            bootstrap_timeout_ms=2000,
        )

    async def aio() -> None:
        p = AIOKafkaProducer(
            bootstrap_servers=address,
            security_protocol="SSL",
            ssl_context=ctx,
            request_timeout_ms=2000,
        )
        try:
            await p.start()
        finally:
            await p.stop()

    with pytest.raises(KafkaConnectionError, match="Unable to bootstrap"):
        asyncio.run(aio())
