"""Apache Kafka with every kind of secured listener at once, for the clients' security tests.

One node, one JVM: PLAINTEXT (the first listener, for setting up), ``SSL`` (server certificate
only), ``MTLS`` (SSL with ``ssl.client.auth=required``), ``SASL_SSL`` enabling PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (unsecured JWTs, Kafka's default validator), and
``SASL_PLAINTEXT`` enabling the first three. The broker's TLS identity is a PEM keystore
(``ssl.keystore.type=PEM``, its key encrypted under ``ssl.key.password``), its truststore the
test CA as PEM. PLAIN knows ``alice``; the SCRAM credentials of ``alice`` are added with
AlterUserScramCredentials (through confluent-kafka's AdminClient) once the node serves. On
``SASL_PLAINTEXT``, SCRAM-SHA-512 sessions last :data:`REAUTH_MS` (``connections.max.reauth.ms``),
so clients must re-authenticate (KIP-368). :func:`run_secure_kgroup` starts kgroup's broker with
the same listeners and settings.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .apache_kafka import KafkaCluster
from .certs import Certs, Identity

__all__ = [
    "PASSWORD",
    "REAUTH_MS",
    "USER",
    "SecureKafka",
    "run_secure_kafka",
    "run_secure_kgroup",
]

USER = "alice"
PASSWORD = "alice-secret"
REAUTH_MS = 3000

LISTENERS = {
    "SSL": "SSL",
    "MTLS": "SSL",
    "SASL_PLAINTEXT": "SASL_PLAINTEXT",
    "SASL_SSL": "SASL_SSL",
}
_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'user_{USER}="{PASSWORD}";',
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
}


@dataclass
class SecureKafka:
    """A running broker with the secured listeners: ``plaintext`` (its PLAINTEXT address),
    ``addresses`` (each secured listener's, by name), its certificates, and client settings
    for each listener. Any broker that configures the listeners as Kafka does fits."""

    plaintext: str
    addresses: dict[str, str]
    certs: Certs

    def bootstrap(self, listener: str) -> str:
        return self.addresses[listener]

    def client(self, listener: str, mechanism: str | None = None, **extra: Any) -> dict[str, Any]:
        """librdkafka-style client settings for ``listener`` (and a SASL ``mechanism``)."""
        config: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap(listener),
            "security.protocol": LISTENERS[listener],
        }
        if LISTENERS[listener] in ("SSL", "SASL_SSL"):
            config["ssl.ca.location"] = str(self.certs.ca)
        if mechanism == "OAUTHBEARER":
            config.update(
                {
                    "sasl.mechanism": mechanism,
                    "enable.sasl.oauthbearer.unsecure.jwt": True,
                    "sasl.oauthbearer.config": f"principal={USER}",
                }
            )
        elif mechanism is not None:
            config.update(
                {"sasl.mechanism": mechanism, "sasl.username": USER, "sasl.password": PASSWORD}
            )
        config.update(extra)
        return config


def java_keystore_pem(
    certs: Certs, identity: Identity | None = None, path: Path | None = None
) -> Path:
    """The broker's PEM keystore with its key encrypted as Java 17 can read it.

    ``Identity.keystore_pem`` encrypts the key with PBES2 (cryptography's best available),
    which Java 17's EncryptedPrivateKeyInfo cannot open ("PBES2 SecretKeyFactory not
    available"); PKCS#12's PBE with SHA-1 and 3DES it can (``openssl pkcs8 -v1
    PBE-SHA1-3DES``; cryptography writes PBES1 only into PKCS#12 files)."""
    identity = identity or certs.broker
    cmd = ["openssl", "pkcs8", "-topk8", "-v1", "PBE-SHA1-3DES", "-in", str(identity.key)]
    cmd += ["-passout", f"pass:{certs.password}"]
    pem = subprocess.run(
        cmd,
        capture_output=True,
        check=True,
    ).stdout
    path = path or certs.folder / f"{identity.name}.java-keystore.pem"
    path.write_bytes(pem + identity.cert.read_bytes())
    return path


def broker_config(certs: Certs, listeners: Mapping[str, str] = LISTENERS) -> dict[str, str]:
    """The secured listeners' settings, in Kafka's names (kgroup's broker takes the same)."""
    config = {"group.initial.rebalance.delay.ms": "0"}
    config.update(_sasl_config([name.lower() for name, p in listeners.items() if "SASL" in p]))
    if any(p in ("SSL", "SASL_SSL") for p in listeners.values()):
        config.update(_ssl_config(certs, "MTLS" in listeners))
    return config


def _ssl_config(certs: Certs, mtls: bool) -> dict[str, str]:
    config = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(java_keystore_pem(certs)),
        "ssl.key.password": certs.password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs.ca),
    }
    if mtls:
        config["listener.name.mtls.ssl.client.auth"] = "required"
    return config


def _sasl_config(listeners: list[str]) -> dict[str, str]:
    config = {
        "sasl.enabled.mechanisms": ",".join(_MECHANISMS),
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": ",".join(_MECHANISMS[:3]),
        "listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms": str(REAUTH_MS),
    }
    for listener in listeners:
        for mech in _MECHANISMS:
            config[f"listener.name.{listener}.{mech.lower()}.sasl.jaas.config"] = _MODULES[mech]
    return config


def _add_scram_users(bootstrap: str) -> None:
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    # One request per mechanism: Kafka refuses two changes of one user in one request
    # (DUPLICATE_RESOURCE).
    for m in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
        upsert = UserScramCredentialUpsertion(USER, ScramCredentialInfo(m, 4096), PASSWORD.encode())
        for f in admin.alter_user_scram_credentials([upsert]).values():
            f.result(30)


@contextlib.contextmanager
def run_secure_kafka(folder: Path) -> Iterator[SecureKafka]:
    """Apache Kafka with the secured listeners, for the length of the block."""
    certs = Certs(folder / "certs")
    with KafkaCluster(
        1, broker_config(certs), home=folder / "kafka", listeners=LISTENERS, heap="512m"
    ) as cluster:
        _add_scram_users(cluster.bootstrap)
        addresses = {name: cluster.bootstrap_of(name) for name in LISTENERS}
        yield SecureKafka(cluster.bootstrap, addresses, certs)


@contextlib.contextmanager
def run_secure_kgroup(folder: Path) -> Iterator[SecureKafka]:
    """kgroup's broker with the same listeners as :func:`run_secure_kafka`'s, configured with
    the same Kafka settings."""
    from kgroup.broker import Broker

    certs = Certs(folder / "certs")
    names = ["PLAINTEXT", *LISTENERS]
    config = {
        "listeners": ",".join(f"{n}://127.0.0.1:0" for n in names),
        "listener.security.protocol.map": ",".join(
            ["PLAINTEXT:PLAINTEXT", *(f"{n}:{p}" for n, p in LISTENERS.items())]
        ),
        **broker_config(certs),
    }
    with Broker(folder / "data", config=config) as broker:
        _add_scram_users(broker.bootstrap_servers)
        addresses = {name: broker.address(name) for name in LISTENERS}
        yield SecureKafka(broker.bootstrap_servers, addresses, certs)
