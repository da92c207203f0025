"""KIP-368 re-authentication: with ``connections.max.reauth.ms`` a SASL session has a lifetime
(SaslAuthenticate v1+ gives it to the client); after it any request other than SaslHandshake
closes the connection; a SaslHandshake on the authenticated connection re-authenticates without
disturbing the answers in flight, and may not change the principal or the mechanism (Kafka's
SaslServerAuthenticator.ReauthInfo)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import confluent_kafka
import pytest
from support import sasl
from support.wire import read_frame

from kgroup import errors, protocol
from kgroup.broker import Broker

REAUTH_MS = 1500


@pytest.fixture(scope="module")
def reauth_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with sasl.sasl_broker(
        tmp_path_factory.mktemp("reauth"), **{"connections.max.reauth.ms": str(REAUTH_MS)}
    ) as b:
        yield b


def connect(broker: Broker) -> socket.socket:
    host, port = broker.address("SASL_PLAINTEXT").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)


def call(s: socket.socket, api: protocol.ApiKey, version: int, body: dict, cid: int = 1):
    s.sendall(protocol.encode_request(int(api), version, cid, "t", body))
    return protocol.decode_response(int(api), version, read_frame(s))


def closed(s: socket.socket) -> bool:
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def authenticate(s: socket.socket, user: str, password: str, cid: int = 1):
    r = call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, cid)
    assert r.body["error_code"] == 0
    return call(
        s,
        protocol.ApiKey.SASL_AUTHENTICATE,
        2,
        {"auth_bytes": f"\0{user}\0{password}".encode()},
        cid + 1,
    )


def test_session_lifetime_and_expiry(reauth_broker) -> None:
    with connect(reauth_broker) as s:
        r = authenticate(s, "alice", "alice-secret")
        assert r.body["error_code"] == 0
        assert r.body["session_lifetime_ms"] == REAUTH_MS
        assert call(s, protocol.ApiKey.METADATA, 4, {"topics": None}, 3).body["brokers"]
        time.sleep(REAUTH_MS / 1000 + 0.3)
        # Kafka's SocketServer: "Disconnecting expired channel", no answer.
        s.sendall(
            protocol.encode_request(int(protocol.ApiKey.METADATA), 4, 4, "t", {"topics": None})
        )
        assert closed(s)


def test_reauthentication_keeps_answers_in_flight_in_order(reauth_broker) -> None:
    with connect(reauth_broker) as s:
        assert authenticate(s, "alice", "alice-secret").body["error_code"] == 0
        time.sleep(1.05)  # at most one re-authentication a second
        # A Metadata, then the re-authentication right behind it: answers in request order.
        s.sendall(
            protocol.encode_request(int(protocol.ApiKey.METADATA), 4, 10, "t", {"topics": None})
            + protocol.encode_request(
                int(protocol.ApiKey.SASL_HANDSHAKE), 1, 11, "t", {"mechanism": "PLAIN"}
            )
        )
        first = protocol.decode_response(int(protocol.ApiKey.METADATA), 4, read_frame(s))
        assert first.correlation_id == 10
        second = protocol.decode_response(int(protocol.ApiKey.SASL_HANDSHAKE), 1, read_frame(s))
        assert (second.correlation_id, second.body["error_code"]) == (11, 0)
        r = call(
            s,
            protocol.ApiKey.SASL_AUTHENTICATE,
            2,
            {"auth_bytes": b"\0alice\0alice-secret"},
            12,
        )
        assert (r.body["error_code"], r.body["session_lifetime_ms"]) == (0, REAUTH_MS)
        # The new session outlives the first one's expiry.
        time.sleep(0.6)
        assert call(s, protocol.ApiKey.METADATA, 4, {"topics": None}, 13).body["brokers"]


def test_reauthentication_may_not_change_the_principal(reauth_broker) -> None:
    with connect(reauth_broker) as s:
        assert authenticate(s, "alice", "alice-secret").body["error_code"] == 0
        time.sleep(1.05)
        r = authenticate(s, "admin", "admin-secret", cid=5)
        assert r.body["error_code"] == errors.SaslAuthenticationFailed.code
        assert r.body["error_message"] == (
            "Cannot change principals during re-authentication from User.alice: User.admin"
        )
        assert closed(s)


def test_reauthentication_may_not_change_the_mechanism(reauth_broker) -> None:
    with connect(reauth_broker) as s:
        assert authenticate(s, "alice", "alice-secret").body["error_code"] == 0
        time.sleep(1.05)
        r = call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"}, 5)
        assert r.body["error_code"] == 0
        # Kafka's REAUTH_BAD_MECHANISM: the next token closes the connection, unanswered.
        s.sendall(
            protocol.encode_request(
                int(protocol.ApiKey.SASL_AUTHENTICATE), 2, 6, "t", {"auth_bytes": b"n,,n=alice"}
            )
        )
        assert closed(s)


def test_a_handshake_within_a_second_is_an_ordinary_request(reauth_broker) -> None:
    with connect(reauth_broker) as s:
        assert authenticate(s, "alice", "alice-secret").body["error_code"] == 0
        r = call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, 5)
        # The first re-authentication is allowed at once; a second within a second is not.
        assert r.body["error_code"] == 0
        r = call(
            s, protocol.ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0alice-secret"}, 6
        )
        assert r.body["error_code"] == 0
        r = call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, 7)
        assert r.body["error_code"] == errors.IllegalSaslState.code


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_confluent_kafka_reauthenticates(reauth_broker, mechanism) -> None:
    user, password = ("alice", "alice-secret")
    config = sasl.client_config(reauth_broker.address("SASL_PLAINTEXT"), mechanism, user, password)
    p = confluent_kafka.Producer(config)
    counts = reauth_broker.state.sasl["SASL_PLAINTEXT"].counts
    before = dict(counts)
    for _ in range(3):
        p.produce(f"reauth-{mechanism}", b"v")
        assert p.flush(10) == 0
        time.sleep(REAUTH_MS / 1000 + 0.2)
    p.produce(f"reauth-{mechanism}", b"v")
    assert p.flush(10) == 0
    # librdkafka re-authenticated its connections rather than being cut off.
    assert counts["reauthenticated"] >= before.get("reauthenticated", 0) + 2
    assert counts["expired"] == before.get("expired", 0)
