"""SASL in tests: a kgroup broker with a PLAINTEXT listener (for tools), a SASL_PLAINTEXT one
offering PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (and, given certificates, a
SASL_SSL one offering the same), its JAAS configs in Kafka's names, SCRAM users made with
AlterUserScramCredentials, and each client library's settings for either listener."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kgroup.broker import Broker
from kgroup.client.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from . import tls
from .certs import Certs

PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" '
    'user_admin="admin-secret" user_alice="alice-secret";'
)
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
OAUTH_JAAS = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
MECHANISMS = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER"
#: USERS are the SCRAM users made by :func:`add_scram_users`, with their passwords.
USERS = {"alice": "alice-secret", "bob": "bob-secret"}


def sasl_config(listener: str = "sasl_plaintext", **extra: str) -> dict[str, str]:
    """A SASL listener's settings (``listener`` lower case), every mechanism enabled."""
    return {
        "sasl.enabled.mechanisms": MECHANISMS,
        f"listener.name.{listener}.plain.sasl.jaas.config": PLAIN_JAAS,
        f"listener.name.{listener}.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
        f"listener.name.{listener}.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        f"listener.name.{listener}.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
        **extra,
    }


def add_scram_users(bootstrap: str, users: Mapping[str, str] = USERS) -> None:
    """Give each user both SCRAM credentials (4096 iterations), through ``bootstrap``'s
    AlterUserScramCredentials."""
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        # One request per mechanism: Kafka refuses a user named twice in one request.
        for mech in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
            alterations: list[Any] = [
                UserScramCredentialUpsertion(user, ScramCredentialInfo(mech, 4096), password)
                for user, password in users.items()
            ]
            for f in admin.alter_user_scram_credentials(alterations).values():
                f.result(15)


@contextmanager
def sasl_broker(data: Path, certs: Certs | None = None, **extra: str) -> Iterator[Broker]:
    """A kgroup broker with PLAINTEXT and SASL_PLAINTEXT listeners and the SCRAM users; with
    ``certs``, a SASL_SSL listener too (the broker's certificate, no client certificates)."""
    listeners = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"
    config = sasl_config(**extra)
    if certs is not None:
        listeners += ",SASL_SSL://127.0.0.1:0"
        config |= sasl_config("sasl_ssl") | tls.broker_ssl(certs, prefix="listener.name.sasl_ssl.")
    with Broker(data, config={"listeners": listeners, **config}) as b:
        add_scram_users(b.bootstrap_servers)
        yield b


def client_config(
    bootstrap: str,
    mechanism: str,
    user: str,
    password: str,
    protocol: str = "SASL_PLAINTEXT",
    certs: Certs | None = None,
) -> dict[str, str]:
    """librdkafka's (and Java's, in the same names) settings of a SASL client; ``protocol``
    SASL_SSL trusts ``certs``' CA."""
    conf = {
        "bootstrap.servers": bootstrap,
        "security.protocol": protocol,
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }
    if protocol == "SASL_SSL":
        assert certs is not None, "SASL_SSL needs the CA"
        conf["ssl.ca.location"] = str(certs.ca)
    return conf


def python_client_config(
    bootstrap: str,
    mechanism: str,
    user: str,
    password: str,
    protocol: str = "SASL_PLAINTEXT",
    certs: Certs | None = None,
) -> dict[str, Any]:
    """kafka-python's and aiokafka's settings (the same names) of a SASL client."""
    conf: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "security_protocol": protocol,
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }
    if protocol == "SASL_SSL":
        assert certs is not None, "SASL_SSL needs the CA"
        conf["ssl_context"] = tls.python_context(certs)
    return conf


def java_jaas(mechanism: str, user: str, password: str) -> str:
    """The Java client's ``sasl.jaas.config`` for ``mechanism``."""
    module = {
        "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
        "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
        "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    }[mechanism]
    return f'{module} required username="{user}" password="{password}";'


def unsecured_jwt(claims: Mapping[str, Any]) -> str:
    """An unsecured JWS (``alg`` none, no signature) of ``claims``."""

    def part(obj: Mapping[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part(claims)}."


def jwt_claims(sub: str = "alice", lifetime_s: float = 3600, **more: Any) -> dict[str, Any]:
    now = time.time()
    return {"sub": sub, "iat": now, "exp": now + lifetime_s, **more}
