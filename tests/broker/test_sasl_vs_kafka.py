"""kgroup's SASL against Apache Kafka's, side by side: the same exchanges on both brokers'
SASL_PLAINTEXT listeners (same mechanisms, same JAAS configs, the same SCRAM users made with
AlterUserScramCredentials), the answers compared field by field: handshake errors and the
enabled list, SaslAuthenticate's error codes and messages for wrong passwords, unknown users,
bad tokens (PLAIN, SCRAM, OAUTHBEARER's JSON challenge), whether the connection is closed, and
AlterUserScramCredentials' validation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from support import java_scenarios, sasl
from support.apache_kafka import KafkaCluster
from support.ports import free_port
from support.wire import read_frame

from kgroup import protocol
from kgroup.client.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)


@pytest.fixture(scope="module")
def brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[str, str]]]:
    """{"kafka": (plaintext, sasl address), "kgroup": (...)}."""
    port = free_port()
    cluster = KafkaCluster(1, sasl.sasl_config())
    node = cluster.nodes[0]
    node.config["listeners"] += f",SASL_PLAINTEXT://127.0.0.1:{port}"
    node.config["advertised.listeners"] += f",SASL_PLAINTEXT://127.0.0.1:{port}"
    node.config["listener.security.protocol.map"] += ",SASL_PLAINTEXT:SASL_PLAINTEXT"
    with cluster, sasl.sasl_broker(tmp_path_factory.mktemp("kgroup")) as b:
        sasl.add_scram_users(cluster.bootstrap)
        yield {
            "kafka": (cluster.bootstrap, f"127.0.0.1:{port}"),
            "kgroup": (b.bootstrap_servers, b.address("SASL_PLAINTEXT")),
        }


def connect(address: str) -> socket.socket:
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def call(s: socket.socket, api: protocol.ApiKey, version: int, body: dict, cid: int) -> Any:
    s.sendall(protocol.encode_request(int(api), version, cid, "t", body))
    return protocol.decode_response(int(api), version, read_frame(s)).body


def closed(s: socket.socket) -> bool:
    try:
        return s.recv(1) == b""
    except (ConnectionResetError, TimeoutError):
        return True


def exchange(address: str, mechanism: str, tokens: list[Any]) -> list[Any]:
    """SaslHandshake v1 then a SaslAuthenticate v2 per token (a token may be a function of the
    last answer's bytes); what each answered (error code, message, bytes' kind), then whether
    the connection was closed."""
    out: list[Any] = []
    with connect(address) as s:
        r = call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": mechanism}, 1)
        out.append(("handshake", r["error_code"], list(r["mechanisms"])))
        if r["error_code"]:
            out.append(("closed", closed(s)))
            return out
        last = b""
        for i, token in enumerate(tokens):
            auth = token(last) if callable(token) else token
            r = call(s, protocol.ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": auth}, i + 2)
            last = bytes(r["auth_bytes"])
            out.append((r["error_code"], r["error_message"]))
            if r["error_code"]:
                break
        out.append(("closed", closed(s)))
    return out


class ScramClient:
    """RFC 5802's client side, enough to send a proof made with any password."""

    def __init__(self, mechanism: str, user: str, password: str) -> None:
        self.algo = "sha256" if mechanism.endswith("256") else "sha512"
        self.user, self.password = user, password
        self.nonce = base64.b64encode(os.urandom(18)).decode()
        self.first_bare = f"n={user},r={self.nonce}"

    def first(self) -> bytes:
        return f"n,,{self.first_bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        fields = dict(kv.split("=", 1) for kv in server_first.decode().split(","))
        salted = hashlib.pbkdf2_hmac(
            self.algo, self.password.encode(), base64.b64decode(fields["s"]), int(fields["i"])
        )
        without_proof = f"c=biws,r={fields['r']}"
        auth = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = hmac.digest(salted, b"Client Key", self.algo)
        stored = hashlib.new(self.algo, client_key).digest()
        sig = hmac.digest(stored, auth, self.algo)
        proof = bytes(a ^ b for a, b in zip(client_key, sig, strict=True))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


def scram(mechanism: str, user: str, password: str) -> list[Any]:
    c = ScramClient(mechanism, user, password)
    return [c.first(), c.final]


def oauth(token: str) -> bytes:
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


CASES = {
    "plain ok": ("PLAIN", [b"\0alice\0alice-secret"]),
    "plain wrong password": ("PLAIN", [b"\0alice\0wrong"]),
    "plain unknown user": ("PLAIN", [b"\0nobody\0x"]),
    "plain other authzid": ("PLAIN", [b"admin\0alice\0alice-secret"]),
    "plain two tokens": ("PLAIN", [b"alice\0alice-secret"]),
    "plain no password": ("PLAIN", [b"\0alice\0"]),
    "unsupported mechanism": ("GSSAPI", []),
    "scram-256 ok": ("SCRAM-SHA-256", scram("SCRAM-SHA-256", "alice", "alice-secret")),
    "scram-512 wrong password": ("SCRAM-SHA-512", scram("SCRAM-SHA-512", "bob", "wrong")),
    "scram unknown user": ("SCRAM-SHA-256", scram("SCRAM-SHA-256", "nobody", "x")),
    "scram garbage": ("SCRAM-SHA-256", [b"hello"]),
    "oauth ok": ("OAUTHBEARER", [oauth(sasl.unsecured_jwt(sasl.jwt_claims()))]),
    "oauth expired": (
        "OAUTHBEARER",
        [oauth(sasl.unsecured_jwt(sasl.jwt_claims(lifetime_s=-60))), b"\x01"],
    ),
    "oauth no sub": (
        "OAUTHBEARER",
        [oauth(sasl.unsecured_jwt({"exp": 4102444800})), b"\x01"],
    ),
    "oauth signed": ("OAUTHBEARER", [oauth("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.sig"), b"\x01"]),
    "oauth garbage": ("OAUTHBEARER", [b"n,,auth=Bearer x"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_exchanges_answer_as_kafka(brokers, case) -> None:
    mechanism, tokens = CASES[case]
    got = {name: exchange(addr[1], mechanism, tokens) for name, addr in brokers.items()}
    assert got["kgroup"] == got["kafka"]


def test_requests_before_authentication_as_kafka(brokers) -> None:
    def run(address: str) -> list[Any]:
        out = []
        with connect(address) as s:
            # ApiVersions first is answered; a Metadata before the handshake closes.
            r = call(s, protocol.ApiKey.API_VERSIONS, 0, {}, 1)
            out.append(r["error_code"])
            s.sendall(
                protocol.encode_request(int(protocol.ApiKey.METADATA), 4, 2, "t", {"topics": None})
            )
            out.append(closed(s))
        with connect(address) as s:
            call(s, protocol.ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, 1)
            # A second handshake while authenticating: ILLEGAL_SASL_STATE, then closed.
            s.sendall(
                protocol.encode_request(
                    int(protocol.ApiKey.SASL_HANDSHAKE), 1, 2, "t", {"mechanism": "PLAIN"}
                )
            )
            try:
                frame = read_frame(s)
                r = protocol.decode_response(int(protocol.ApiKey.SASL_HANDSHAKE), 1, frame).body
                out.append(r["error_code"])
            except EOFError:
                out.append("closed at once")
            out.append(closed(s))
        return out

    assert run(brokers["kgroup"][1]) == run(brokers["kafka"][1])


def test_alter_user_scram_credentials_as_kafka(brokers) -> None:
    def run(address: str) -> dict[str, str | None]:
        alterations: list[Any] = [
            UserScramCredentialUpsertion(
                "few", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4095), "pw"
            ),
            UserScramCredentialUpsertion(
                "many", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 16385), "pw"
            ),
            UserScramCredentialUpsertion(
                "twice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "pw"
            ),
            UserScramCredentialDeletion("twice", ScramMechanism.SCRAM_SHA_512),
            UserScramCredentialDeletion("missing", ScramMechanism.SCRAM_SHA_256),
            UserScramCredentialDeletion("odd", ScramMechanism.UNKNOWN),
        ]
        out: dict[str, str | None] = {}
        with AdminClient({"bootstrap.servers": address}) as admin:
            for user, f in admin.alter_user_scram_credentials(alterations).items():
                try:
                    f.result(15)
                    out[user] = None
                except Exception as e:
                    out[user] = f"{type(e).__name__}: {e}"
            d = admin.describe_user_scram_credentials(["nobody"])["nobody"]
            try:
                d.result(15)
            except Exception as e:
                out["describe nobody"] = f"{type(e).__name__}: {e}"
        return out

    assert run(brokers["kgroup"][0]) == run(brokers["kafka"][0])


@pytest.mark.parametrize(
    ("mechanism", "user", "password"),
    [
        ("PLAIN", "alice", "wrong"),
        ("SCRAM-SHA-512", "bob", "wrong"),
        ("PLAIN", "alice", "alice-secret"),
    ],
)
def test_java_client_sees_what_kafka_gives(brokers, mechanism, user, password) -> None:
    jaas = sasl.java_jaas(mechanism, user, password)
    got = {
        name: java_scenarios.run(
            "sasl",
            addr[1],
            timeout=120,
            topic=f"j-{mechanism}-{password}",
            records=1,
            client_security_protocol="SASL_PLAINTEXT",
            **{"client.sasl.mechanism": mechanism, "client.sasl.jaas.config": jaas},
        )
        for name, addr in brokers.items()
    }
    assert got["kgroup"] == got["kafka"]
