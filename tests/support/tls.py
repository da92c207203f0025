"""TLS settings for tests and benchmarks: a listener's ``ssl.*`` broker settings (kgroup's and
Apache Kafka's are the same keys), an Apache Kafka cluster with an SSL listener beside its
PLAINTEXT one, and each client library's settings to connect with or without a client
certificate."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .apache_kafka import KafkaCluster
from .certs import Certs, Identity
from .ports import free_port


def clear_keystore(certs: Certs, who: Identity) -> Path:
    """A PEM key store of ``who`` with its key in the clear (the JDKs Kafka runs on here cannot
    decrypt the PBES2 keys ``Certs`` writes)."""
    path = certs.folder / f"{who.name}.clear.keystore.pem"
    path.write_bytes(who.key.read_bytes() + who.cert.read_bytes())
    return path


def broker_ssl(
    certs: Certs, client_auth: str = "none", prefix: str = "", encrypted: bool = True
) -> dict[str, str]:
    """A listener's TLS settings: the broker's PEM key store (its key encrypted, or clear:
    the JDKs Kafka runs on here cannot decrypt PBES2 keys) and the test CA as its PEM trust
    store; ``prefix`` (``listener.name.ssl.``) for one listener's own."""
    values = {"ssl.keystore.type": "PEM"}
    if encrypted:
        values["ssl.keystore.location"] = str(certs.broker.keystore_pem)
        values["ssl.key.password"] = certs.password
    else:
        values["ssl.keystore.location"] = str(clear_keystore(certs, certs.broker))
    values |= {
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs.ca),
        "ssl.client.auth": client_auth,
    }
    return {prefix + k: v for k, v in values.items()}


def confluent(certs: Certs, who: Identity | None = None, ca: Path | None = None) -> dict[str, Any]:
    """confluent-kafka's (librdkafka's) settings for an SSL listener."""
    conf: dict[str, Any] = {"security.protocol": "SSL", "ssl.ca.location": str(ca or certs.ca)}
    if who is not None:
        conf["ssl.certificate.location"] = str(who.cert)
        conf["ssl.key.location"] = str(who.key)
    return conf


def python_context(certs: Certs, who: Identity | None = None) -> ssl.SSLContext:
    """An SSLContext for kafka-python and aiokafka: trusts the test CA, presents ``who``."""
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    if who is not None:
        ctx.load_cert_chain(str(who.cert), str(who.key))
    return ctx


def java(certs: Certs, who: Identity | None = None) -> dict[str, str]:
    """The Java client's settings (PEM trust store; a PEM key store for ``who``)."""
    conf = {
        "security.protocol": "SSL",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs.ca),
    }
    if who is not None:
        store = clear_keystore(certs, who)
        conf.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(store)})
    return conf


@contextlib.contextmanager
def kafka_with_ssl(
    certs: Certs, client_auth: str = "none", **config: Any
) -> Iterator[tuple[KafkaCluster, str]]:
    """Apache Kafka (one node) with an SSL listener beside its PLAINTEXT one: the cluster and
    the SSL listener's address."""
    cluster = KafkaCluster(1, {**config, **broker_ssl(certs, client_auth, encrypted=False)})
    node = cluster.nodes[0]
    port = free_port()
    node.config["listeners"] += f",SSL://127.0.0.1:{port}"
    node.config["advertised.listeners"] += f",SSL://127.0.0.1:{port}"
    node.config["listener.security.protocol.map"] += ",SSL:SSL"
    with cluster:
        yield cluster, f"127.0.0.1:{port}"
