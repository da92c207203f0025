"""A TLS listener's key store replaced while the broker runs (KIP-226: Kafka's SslFactory
reconfiguration), on kgroup's broker as on Apache Kafka 4.4: an update of
``listener.name.<l>.ssl.keystore.location`` through IncrementalAlterConfigs is served to new
connections, connections already made keep theirs, a certificate with another subject or fewer
alternative names is refused with Kafka's INVALID_REQUEST and message, and a store file
rewritten in place is read again when this broker's configs are next updated."""

from __future__ import annotations

import re
import socket
import ssl
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from support.certs import Certs, Identity
from support.secure_kafka import (
    SecureKafka,
    broker_config,
    java_keystore_pem,
    run_secure_kafka,
    run_secure_kgroup,
)

from kgroup.broker import Broker
from kgroup.broker.principals import distinguished_name

pytestmark = pytest.mark.network

KEY = "listener.name.ssl.ssl.keystore.location"


def served(address: str, ca: Path) -> bytes:
    """The certificate (DER) a new TLS connection to ``address`` is given."""
    host, port = address.rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection((host, int(port)), 5) as raw,
        ctx.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def der_of(identity: Identity) -> bytes:
    pem = identity.cert.read_text()
    return ssl.PEM_cert_to_DER_cert(pem[: pem.index("-----END CERTIFICATE-----") + 25])


def served_soon(address: str, ca: Path, want: bytes) -> bool:
    """Whether new connections are given ``want`` within a few seconds (Kafka applies an
    update once its metadata brings it back to the broker)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if served(address, ca) == want:
            return True
        time.sleep(0.1)
    return False


def alter(bootstrap: str, entries: dict[str, str]) -> tuple[int, str | None]:
    """IncrementalAlterConfigs (SET) on broker 1: its error code and message."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    changes = [
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in entries.items()
    ]
    future = next(
        iter(
            admin.incremental_alter_configs(
                [ConfigResource(ResourceType.BROKER, "1", incremental_configs=changes)]
            ).values()
        )
    )
    try:
        future.result(15)
    except Exception as e:  # KafkaException: its KafkaError
        err = e.args[0]
        return err.code(), err.str()
    return 0, None


def api_versions_over(tls: ssl.SSLSocket) -> int:
    """An ApiVersions v0 round trip on an open connection: its error code."""
    request = struct.pack(">hhih", 18, 0, 7, -1)
    tls.sendall(struct.pack(">i", len(request)) + request)
    size = struct.unpack(">i", _read(tls, 4))[0]
    body = _read(tls, size)
    assert struct.unpack(">i", body[:4])[0] == 7
    return int(struct.unpack(">h", body[4:6])[0])


def _read(tls: ssl.SSLSocket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        got = tls.recv(n - len(out))
        assert got, "connection closed"
        out += got
    return out


def _normalise(message: str | None) -> str | None:
    # Kafka 4.4 prints a certificate's alternative names as a Set.copyOf, whose order
    # changes with each JVM: compared as sets.
    if message is None:
        return None
    return re.sub(
        r"SAN=\[(.*?)\]\}",
        lambda m: "SAN=" + str(sorted(re.findall(r"\[\d+, [^\]]*\]", m.group(1)))) + "}",
        message,
    )


def exercise(broker: SecureKafka) -> dict[str, Any]:
    certs = broker.certs
    ssl_listener = broker.addresses["SSL"]
    first = served(ssl_listener, certs.ca)
    out: dict[str, Any] = {}
    host, port = ssl_listener.rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    with (
        socket.create_connection((host, int(port)), 5) as raw,
        ctx.wrap_socket(raw, server_hostname="localhost") as before,
    ):
        rotated = certs.server("rotated")
        out["same subject"] = alter(broker.plaintext, {KEY: str(java_keystore_pem(certs, rotated))})
        out["same subject served"] = served_soon(ssl_listener, certs.ca, der_of(rotated))
        out["other listener unchanged"] = served(broker.addresses["MTLS"], certs.ca) == first
        out["open connection still served"] = api_versions_over(before)
    elsewhere = certs.server("elsewhere", cn="elsewhere")
    out["other subject"] = alter(broker.plaintext, {KEY: str(java_keystore_pem(certs, elsewhere))})
    # A listener's ssl.allow.dn.changes is read as the listener was made, not dynamically.
    out["other subject, allowed dynamically"] = alter(
        broker.plaintext,
        {
            KEY: str(java_keystore_pem(certs, elsewhere)),
            "listener.name.ssl.ssl.allow.dn.changes": "true",
        },
    )
    nameless = certs.server("nameless", names=False)
    code, message = alter(broker.plaintext, {KEY: str(java_keystore_pem(certs, nameless))})
    out["fewer names"] = (code, _normalise(message))
    missing = certs.folder / "missing.pem"
    code, message = alter(broker.plaintext, {KEY: str(missing)})
    # Kafka's message ends at the path; kgroup's says why after it.
    out["missing file"] = (code, message and message.split(str(missing))[0])
    out["still served after refusals"] = served(ssl_listener, certs.ca) == der_of(rotated)
    # Rewritten in place, then the same value set again: read again.
    again = certs.server("again")
    time.sleep(0.05)
    java_keystore_pem(certs, again, path=certs.folder / "rotated.java-keystore.pem")
    out["same value, file rewritten"] = alter(
        broker.plaintext, {KEY: str(certs.folder / "rotated.java-keystore.pem")}
    )
    out["rewritten served"] = served_soon(ssl_listener, certs.ca, der_of(again))
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Any]]]:
    runs: dict[str, Callable[..., Any]] = {"kafka": run_secure_kafka, "kgroup": run_secure_kgroup}
    out = {}
    for name, run in runs.items():
        with run(tmp_path_factory.mktemp(f"key-store-{name}")) as broker:
            out[name] = exercise(broker)
    yield out


def test_key_store_updates_as_kafka_answers_them(results: dict[str, dict[str, Any]]) -> None:
    got, ref = results["kgroup"], results["kafka"]
    assert got == ref
    # What the comparison covers, on kgroup's side.
    assert got["same subject"] == (0, None)
    assert got["same subject served"] and got["other listener unchanged"]
    assert got["open connection still served"] == 0
    assert got["other subject"][0] == 42  # INVALID_REQUEST
    assert (
        "Keystore DistinguishedName does not match:  existing={alias=kafka, DN=O=kgroup, "
        in (got["other subject"][1])
    )
    assert got["other subject, allowed dynamically"] == got["other subject"]
    assert got["fewer names"][0] == 42
    assert "Keystore SubjectAltNames do not match" in got["fewer names"][1]
    assert got["missing file"][0] == 42
    assert got["still served after refusals"]
    assert got["same value, file rewritten"] == (0, None)
    assert got["rewritten served"]


def test_an_updated_key_store_is_served_after_a_restart(tmp_path: Path) -> None:
    """The update is kept with the broker's dynamic configs: a restarted broker serves the
    new certificate, as Kafka's does from its metadata log."""
    certs = Certs(tmp_path / "certs")
    config = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        "node.id": 1,
        **broker_config(certs, {"SSL": "SSL"}),
    }
    rotated = certs.server("rotated")
    with Broker(tmp_path / "data", config=config) as broker:
        assert alter(broker.bootstrap_servers, {KEY: str(java_keystore_pem(certs, rotated))}) == (
            0,
            None,
        )
        assert served(broker.address("SSL"), certs.ca) == der_of(rotated)
    with Broker(tmp_path / "data", config=config) as broker:
        got = served(broker.address("SSL"), certs.ca)
        assert got == der_of(rotated), distinguished_name(got)


def test_a_store_that_cannot_be_read_keeps_the_listener_as_it_was(tmp_path: Path) -> None:
    """Rewritten in place with something that is not a key store: the update of another
    config that reads it again is answered (Kafka reloads after the update is kept, and logs
    a failure), and the listener keeps serving the certificate it had."""
    certs = Certs(tmp_path / "certs")
    store = java_keystore_pem(certs, certs.server("first"))
    config = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        "node.id": 1,
        **broker_config(certs, {"SSL": "SSL"}),
        "listener.name.ssl.ssl.keystore.location": str(store),
    }
    with Broker(tmp_path / "data", config=config) as broker:
        before = served(broker.address("SSL"), certs.ca)
        time.sleep(0.05)
        store.write_text("not a key store\n")
        assert alter(broker.bootstrap_servers, {"log.cleaner.threads": "2"}) == (0, None)
        assert served(broker.address("SSL"), certs.ca) == before
