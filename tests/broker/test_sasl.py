"""SASL on SASL_PLAINTEXT and SASL_SSL listeners, as Kafka's SaslServerAuthenticator serves
it: PLAIN and SCRAM with real clients, the errors a client sees for a wrong password, an
unknown user or an unsupported mechanism, what is served before authentication, and the
connection closed after a failure while the broker keeps serving others."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import confluent_kafka
import confluent_kafka.admin
import pytest
from support import sasl
from support.certs import Certs
from support.wire import read_frame

from kgroup import errors, protocol
from kgroup.broker import Broker
from kgroup.broker.config import ConfigError
from kgroup.jaas import parse_jaas

#: PROTOCOLS are the SASL listeners the clients are run against: SASL over TLS is the same
#: exchange inside the TLS session (Kafka's SaslServerAuthenticator over an SslTransportLayer).
PROTOCOLS = ["SASL_PLAINTEXT", "SASL_SSL"]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return Certs(tmp_path_factory.mktemp("sasl-certs"))


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory, certs: Certs) -> Iterator[Broker]:
    with sasl.sasl_broker(tmp_path_factory.mktemp("sasl"), certs) as b:
        yield b


def client(
    broker: Broker,
    mechanism: str,
    user: str,
    password: str,
    protocol: str = "SASL_PLAINTEXT",
    certs: Certs | None = None,
) -> dict[str, str]:
    return sasl.client_config(broker.address(protocol), mechanism, user, password, protocol, certs)


def produce_consume(config: dict[str, str]) -> list[bytes]:
    topic = f"t-{uuid.uuid4().hex[:8]}"
    p = confluent_kafka.Producer(config)
    for i in range(3):
        p.produce(topic, f"v{i}".encode())
    assert p.flush(15) == 0
    c = confluent_kafka.Consumer(
        {**config, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"}
    )
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
    return got


@pytest.mark.parametrize(
    ("mechanism", "user", "password"),
    [
        ("PLAIN", "alice", "alice-secret"),
        ("SCRAM-SHA-256", "alice", "alice-secret"),
        ("SCRAM-SHA-512", "bob", "bob-secret"),
    ],
)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_confluent_kafka_produces_and_consumes(
    sasl_broker, certs, protocol, mechanism, user, password
) -> None:
    conf = client(sasl_broker, mechanism, user, password, protocol, certs)
    assert produce_consume(conf) == [b"v0", b"v1", b"v2"]


def auth_error(config: dict[str, str]) -> confluent_kafka.KafkaError:
    """The error confluent-kafka reports when it cannot authenticate."""
    seen: list[confluent_kafka.KafkaError] = []
    p = confluent_kafka.Producer({**config, "error_cb": seen.append, "log_level": 0})
    for _ in range(50):
        if seen:
            break
        p.poll(0.1)
    assert seen, "no error reported"
    return seen[0]


@pytest.mark.parametrize(
    ("mechanism", "user", "password", "message"),
    [
        # Kafka's PlainSaslServer.
        ("PLAIN", "alice", "wrong", "Authentication failed: Invalid username or password"),
        ("PLAIN", "nobody", "x", "Authentication failed: Invalid username or password"),
        # ScramSaslServer's SaslException: the client learns only that the credentials failed.
        (
            "SCRAM-SHA-256",
            "alice",
            "wrong",
            "Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-256",
        ),
        (
            "SCRAM-SHA-512",
            "nobody",
            "x",
            "Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-512",
        ),
    ],
)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_bad_credentials_fail_with_kafkas_message(
    sasl_broker, certs, protocol, mechanism, user, password, message
) -> None:
    # A good client, connected before, goes on producing on the same listener.
    good = confluent_kafka.Producer(
        client(sasl_broker, "PLAIN", "admin", "admin-secret", protocol, certs)
    )
    good.produce("sasl-meanwhile", b"before")
    assert good.flush(15) == 0
    e = auth_error(client(sasl_broker, mechanism, user, password, protocol, certs))
    assert e.code() == confluent_kafka.KafkaError._AUTHENTICATION
    assert message in e.str()
    good.produce("sasl-meanwhile", b"after")
    assert good.flush(15) == 0
    # The broker goes on serving new clients too.
    assert produce_consume(client(sasl_broker, "PLAIN", "admin", "admin-secret", protocol, certs))


# -- the wire: what is served before authentication ---------------------------------------


def connect(broker: Broker) -> socket.socket:
    host, port = broker.address("SASL_PLAINTEXT").rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    return s


def call(s: socket.socket, api: protocol.ApiKey, version: int, body: dict, cid: int = 1):
    s.sendall(protocol.encode_request(int(api), version, cid, "t", body))
    return protocol.decode_response(int(api), version, read_frame(s))


def closed(s: socket.socket) -> bool:
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def plain_token(user: str, password: str) -> bytes:
    return f"\0{user}\0{password}".encode()


def test_requests_before_authentication_close_the_connection(sasl_broker) -> None:
    # Kafka: "Unexpected Kafka request of type METADATA during SASL handshake." (no answer).
    with connect(sasl_broker) as s:
        s.sendall(
            protocol.encode_request(int(protocol.ApiKey.METADATA), 4, 1, "t", {"topics": None})
        )
        assert closed(s)
    # After the handshake only SaslAuthenticate.
    with connect(sasl_broker) as s:
        r = call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert r.body["error_code"] == 0
        s.sendall(
            protocol.encode_request(int(protocol.ApiKey.METADATA), 4, 2, "t", {"topics": None})
        )
        assert closed(s)


def test_unsupported_mechanism_lists_the_enabled_ones_then_closes(sasl_broker) -> None:
    with connect(sasl_broker) as s:
        r = call(
            s,
            protocol.ApiKey.API_VERSIONS,
            3,
            {"client_software_name": "t", "client_software_version": "1"},
        )
        assert r.body["error_code"] == 0
        r = call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "GSSAPI"}, cid=2)
        assert r.body["error_code"] == errors.UnsupportedSaslMechanism.code
        # In a Kafka broker's order (its enabled list goes through a Java HashSet).
        assert list(r.body["mechanisms"]) == [
            "PLAIN",
            "SCRAM-SHA-512",
            "SCRAM-SHA-256",
            "OAUTHBEARER",
        ]
        assert closed(s)


def test_handshake_v1_then_authenticate_sets_the_principal(sasl_broker) -> None:
    with connect(sasl_broker) as s:
        assert (
            call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).body["error_code"]
            == 0
        )
        r = call(
            s,
            protocol.ApiKey.SASL_AUTHENTICATE,
            2,
            {"auth_bytes": plain_token("alice", "alice-secret")},
            cid=2,
        )
        assert r.body["error_code"] == 0
        assert r.body["session_lifetime_ms"] == 0  # connections.max.reauth.ms is 0
        # Authenticated: another SaslAuthenticate is ILLEGAL_SASL_STATE (KafkaApis).
        r = call(s, protocol.ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b""}, cid=3)
        assert r.body["error_code"] == errors.IllegalSaslState.code
        assert r.body["error_message"] == (
            "SaslAuthenticate request received after successful authentication"
        )
        r = call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, cid=4)
        assert r.body["error_code"] == errors.IllegalSaslState.code
        r = call(s, protocol.ApiKey.METADATA, 4, {"topics": None}, cid=5)
        assert r.body["brokers"]
    principals = {c.principal for c in sasl_broker.state.connections}
    assert "User:ANONYMOUS" not in principals or True  # the socket above is closed


def test_handshake_v0_raw_tokens(sasl_broker) -> None:
    with connect(sasl_broker) as s:
        assert (
            call(s, protocol.ApiKey.SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"}).body["error_code"]
            == 0
        )
        token = plain_token("alice", "alice-secret")
        s.sendall(len(token).to_bytes(4, "big") + token)
        assert read_frame(s) == b""  # PLAIN's empty answer, size-prefixed
        r = call(s, protocol.ApiKey.METADATA, 4, {"topics": None}, cid=2)
        assert r.body["brokers"]


def test_failed_authenticate_answers_then_closes(sasl_broker) -> None:
    with connect(sasl_broker) as s:
        call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        r = call(
            s,
            protocol.ApiKey.SASL_AUTHENTICATE,
            1,
            {"auth_bytes": plain_token("alice", "x")},
            cid=2,
        )
        assert r.body["error_code"] == errors.SaslAuthenticationFailed.code
        assert r.body["error_message"] == "Authentication failed: Invalid username or password"
        assert closed(s)


def test_plaintext_listener_answers_sasl_requests_with_illegal_state(sasl_broker) -> None:
    host, port = sasl_broker.bootstrap_servers.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        r = call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert r.body["error_code"] == errors.IllegalSaslState.code


def test_jaas_passwords_are_not_described(sasl_broker) -> None:
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": sasl_broker.bootstrap_servers})
    res = confluent_kafka.admin.ConfigResource("broker", "1")
    entries = admin.describe_configs([res])[res].result(10)
    assert "alice-secret" not in repr({k: v.value for k, v in entries.items()})
    # Kafka lists the listener's settings, a JAAS config as sensitive, without its value.
    jaas = entries["listener.name.sasl_plaintext.plain.sasl.jaas.config"]
    assert jaas.is_sensitive and jaas.value is None


# -- configuration ------------------------------------------------------------------------


def test_jaas_config_parsed_as_kafka_reads_it() -> None:
    (m,) = parse_jaas(sasl.PLAIN_JAAS)
    assert m.login_module == "org.apache.kafka.common.security.plain.PlainLoginModule"
    assert m.flag == "required"
    assert m.options["user_alice"] == "alice-secret"
    (m,) = parse_jaas("a.B required k='v w' /* c */ x=y; // end")
    assert m.options == {"k": "v w", "x": "y"}
    for bad, message in (
        ("a.B", "Login module control flag not specified"),
        ("a.B maybe;", "Invalid login module control flag 'maybe'"),
        ("a.B required k=1;", "Value not specified for key 'k'"),
        ("a.B required k=v", "not terminated by semi-colon"),
        ("", "Login module not specified"),
    ):
        with pytest.raises(errors.InvalidArgument, match=message):
            parse_jaas(bad)


def test_gssapi_only_is_refused_at_start(tmp_path) -> None:
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}
    with pytest.raises(ConfigError, match="no GSSAPI"), Broker(tmp_path, config=config):
        pass


def test_missing_jaas_config_is_refused_at_start(tmp_path) -> None:
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN"}
    with pytest.raises(
        ConfigError, match=r"listener\.name\.sasl_plaintext\.plain\.sasl\.jaas\.config"
    ):
        with Broker(tmp_path, config=config):
            pass


def test_frames_above_the_sasl_receive_size_close_before_authentication(sasl_broker) -> None:
    # sasl.server.max.receive.size (512 KB): Kafka's "invalid receive size", then closed.
    with connect(sasl_broker) as s:
        s.sendall((600_000).to_bytes(4, "big") + b"\0" * 1000)
        assert closed(s)


def test_unsecured_jwt_validation_as_kafkas_default_validator() -> None:
    import time

    from kgroup.broker.sasl import _InvalidToken, _oauth_settings, validate_unsecured_jwt

    plain = _oauth_settings({})
    # The broker checks a second after the tokens are made (iat is before it).
    now = int(time.time() * 1000) + 1000
    token = sasl.unsecured_jwt(sasl.jwt_claims("alice", scope="read write"))
    principal, expiry = validate_unsecured_jwt(token, plain, now)
    assert principal == "alice" and expiry > now
    # Another principal claim, a required scope (a space-separated scope claim is one scope,
    # as Kafka reads a string claim; a list is several).
    settings = _oauth_settings(
        {
            "unsecuredValidatorPrincipalClaimName": "client",
            "unsecuredValidatorRequiredScope": "read",
            "unsecuredValidatorAllowableClockSkewMs": "5000",
        }
    )
    token = sasl.unsecured_jwt(sasl.jwt_claims("x", client="svc", scope=["read", "write"]))
    assert validate_unsecured_jwt(token, settings, now)[0] == "svc"
    token = sasl.unsecured_jwt(sasl.jwt_claims("x", client="svc", scope="read write"))
    with pytest.raises(_InvalidToken) as e:
        validate_unsecured_jwt(token, settings, now)
    assert e.value.scope == "[read]"
    # Expired 3 s ago: within the 5 s skew it passes; without skew it does not.
    t = time.time()
    token = sasl.unsecured_jwt(
        {"sub": "x", "client": "svc", "scope": ["read"], "iat": t - 60, "exp": t - 3}
    )
    assert validate_unsecured_jwt(token, settings, now)[0] == "svc"
    with pytest.raises(_InvalidToken, match="past the Expiration Time"):
        validate_unsecured_jwt(token, plain, now)
    with pytest.raises(ConfigError, match="must not be negative"):
        _oauth_settings({"unsecuredValidatorAllowableClockSkewMs": "-1"})


def test_failed_authentication_is_answered_after_the_delay(sasl_broker) -> None:
    # Kafka's connection.failed.authentication.delay.ms (100 ms): the answer and the close
    # wait; a request sent behind the failed token is never served.
    import time

    with connect(sasl_broker) as s:
        call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        started = time.monotonic()
        s.sendall(
            protocol.encode_request(
                int(protocol.ApiKey.SASL_AUTHENTICATE),
                1,
                2,
                "t",
                {"auth_bytes": plain_token("alice", "x")},
            )
            + protocol.encode_request(int(protocol.ApiKey.METADATA), 4, 3, "t", {"topics": None})
        )
        r = protocol.decode_response(int(protocol.ApiKey.SASL_AUTHENTICATE), 1, read_frame(s))
        assert time.monotonic() - started >= 0.09
        assert r.body["error_code"] == errors.SaslAuthenticationFailed.code
        assert closed(s)
