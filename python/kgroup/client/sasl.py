"""sasl: a client's SASL authentication (``security.protocol=SASL_PLAINTEXT``), as Java's
SaslClientAuthenticator runs it after ApiVersions: SaslHandshake v1, then the mechanism's
tokens in SaslAuthenticate requests. Mechanisms: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC
5802, RFC 7677, the server's signature checked).

Credentials come from librdkafka's ``sasl.username`` and ``sasl.password``, or from Java's
``sasl.jaas.config`` (``...PlainLoginModule required username="u" password="p";``), so a
Kafka tool's ``--command-config`` file works unchanged. The client does not re-authenticate
(KIP-368): a broker that ends the session closes the connection, and the client opens another.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kgroup.errors import (
    IllegalSaslState,
    InvalidArgument,
    SaslAuthenticationFailed,
    error_for_code,
)
from kgroup.jaas import parse_jaas
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.client.connection import Connection

__all__ = ["SaslSettings", "authenticate", "sasl_settings"]

_SCRAM = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


@dataclasses.dataclass(frozen=True)
class SaslSettings:
    """SaslSettings is how a client authenticates: its mechanism and credentials."""

    mechanism: str
    username: str
    password: str = dataclasses.field(repr=False)


def sasl_settings(config: Mapping[str, Any]) -> SaslSettings | None:
    """The SASL settings of a client config, None without SASL; InvalidArgument for a
    mechanism kgroup's client does not speak or missing credentials."""
    if config["security.protocol"] != "sasl_plaintext":
        return None
    mechanism = str(config["sasl.mechanism"]).upper()
    if mechanism != "PLAIN" and mechanism not in _SCRAM:
        raise InvalidArgument(
            f"sasl.mechanism {mechanism}: kgroup's client speaks PLAIN, SCRAM-SHA-256 and "
            "SCRAM-SHA-512"
        )
    user, password = config["sasl.username"], config["sasl.password"]
    if config["sasl.jaas.config"]:
        (module, *_) = parse_jaas(config["sasl.jaas.config"])
        user = module.options.get("username", user)
        password = module.options.get("password", password)
    if user is None or password is None:
        raise InvalidArgument(
            "SASL needs sasl.username and sasl.password (or sasl.jaas.config with username "
            "and password)"
        )
    return SaslSettings(mechanism, user, password)


async def authenticate(conn: Connection, settings: SaslSettings) -> None:
    """Authenticate ``conn`` (just opened, versions negotiated). Raises the broker's error:
    UnsupportedSaslMechanism (with the broker's mechanisms), SaslAuthenticationFailed."""
    resp = await conn.request(ApiKey.SASL_HANDSHAKE, {"mechanism": settings.mechanism}, version=1)
    if resp["error_code"]:
        cls = error_for_code(resp["error_code"]) or IllegalSaslState
        raise cls(
            f"{conn}: SASL mechanism {settings.mechanism} refused; the broker enables "
            f"{', '.join(resp['mechanisms'])}"
        )
    if settings.mechanism == "PLAIN":
        await _token(conn, f"\0{settings.username}\0{settings.password}".encode())
        return
    algo = _SCRAM[settings.mechanism]
    nonce = base64.b64encode(os.urandom(24)).decode()
    name = settings.username.replace("=", "=3D").replace(",", "=2C")
    first_bare = f"n={name},r={nonce}"
    server_first = (await _token(conn, f"n,,{first_bare}".encode())).decode()
    fields = dict(kv.split("=", 1) for kv in server_first.split(",") if "=" in kv)
    if not fields.get("r", "").startswith(nonce) or "s" not in fields or "i" not in fields:
        raise SaslAuthenticationFailed(f"{conn}: invalid SCRAM server first message")
    salted = hashlib.pbkdf2_hmac(
        algo, settings.password.encode(), base64.b64decode(fields["s"]), int(fields["i"])
    )
    without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"{first_bare},{server_first},{without_proof}".encode()
    client_key = hmac.digest(salted, b"Client Key", algo)
    signature = hmac.digest(hashlib.new(algo, client_key).digest(), auth_message, algo)
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True)))
    server_final = (await _token(conn, f"{without_proof},p={proof.decode()}".encode())).decode()
    expected = hmac.digest(hmac.digest(salted, b"Server Key", algo), auth_message, algo)
    if server_final != "v=" + base64.b64encode(expected).decode():
        raise SaslAuthenticationFailed(f"{conn}: the broker's SCRAM signature does not match")


async def _token(conn: Connection, token: bytes) -> bytes:
    version = conn.version(ApiKey.SASL_AUTHENTICATE)
    resp = await conn.request(ApiKey.SASL_AUTHENTICATE, {"auth_bytes": token}, version=version)
    if resp["error_code"]:
        cls = error_for_code(resp["error_code"]) or SaslAuthenticationFailed
        raise cls(resp["error_message"] or "SASL authentication failed")
    return bytes(resp["auth_bytes"])
