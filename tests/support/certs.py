"""Test certificates: a CA, a broker certificate for loopback and client certificates, as PEM
files (and PKCS#12 keystores) that kgroup, Apache Kafka, librdkafka and the Java client all
read.

``Certs(folder)`` writes them once; each property is a file path. Keys are PKCS#8 (Kafka's PEM
keystores need PKCS#8), encrypted with ``password`` where a name says so.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["Certs", "Identity"]

PASSWORD = "kgroup-secret"


@dataclass(frozen=True)
class Identity:
    """Identity is one certificate and its key, as files: ``cert`` (PEM, the certificate
    then its CA), ``key`` (PEM PKCS#8, clear), ``key_encrypted`` (PEM PKCS#8 under
    ``Certs.password``), ``keystore_pem`` (key and chain in one PEM file, Kafka's
    ``ssl.keystore.type=PEM`` form, key encrypted) and ``p12`` (PKCS#12 under the password)."""

    name: str
    subject: str
    cert: Path
    key: Path
    key_encrypted: Path
    keystore_pem: Path
    p12: Path


def _name(cn: str, org: str | None = None) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(parts)


class Certs:
    """Certs is a test PKI in ``folder``: ``ca`` (PEM), ``broker`` and clients made on demand
    by :meth:`client`; ``other_ca`` signs an ``untrusted`` client that the broker must refuse."""

    password = PASSWORD

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._ca_key, self._ca_cert = self._make_ca("kgroup test CA")
        self.ca = self._write("ca.pem", self._ca_cert.public_bytes(serialization.Encoding.PEM))
        other_key, other_cert = self._make_ca("another CA")
        self.other_ca = self._write(
            "other-ca.pem", other_cert.public_bytes(serialization.Encoding.PEM)
        )
        self.broker = self._issue("broker", _name("localhost", "kgroup"), server=True)
        self.untrusted = self._issue("untrusted", _name("mallory"), signer=(other_key, other_cert))

    def client(self, cn: str, org: str | None = None) -> Identity:
        """A client certificate whose subject is ``CN=<cn>[,O=<org>]``."""
        return self._issue(f"client-{cn}", _name(cn, org))

    def server(
        self, name: str, cn: str = "localhost", org: str | None = "kgroup", *, names: bool = True
    ) -> Identity:
        """Another server certificate (the broker's subject unless told otherwise), with the
        broker's alternative names (localhost, 127.0.0.1, ::1) unless ``names`` is false: a
        key store to rotate to."""
        return self._issue(name, _name(cn, org), server=names)

    # -- making them ------------------------------------------------------------------------

    def _make_ca(self, cn: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(_name(cn))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
            .sign(key, hashes.SHA256())
        )
        return key, cert

    def _issue(
        self,
        name: str,
        subject: x509.Name,
        *,
        server: bool = False,
        signer: tuple[ec.EllipticCurvePrivateKey, x509.Certificate] | None = None,
    ) -> Identity:
        ca_key, ca_cert = signer or (self._ca_key, self._ca_cert)
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=825))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                critical=False,
            )
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [
                        x509.DNSName("localhost"),
                        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                        x509.IPAddress(ipaddress.ip_address("::1")),
                    ]
                ),
                critical=False,
            )
        cert = builder.sign(ca_key, hashes.SHA256())
        chain = cert.public_bytes(serialization.Encoding.PEM) + ca_cert.public_bytes(
            serialization.Encoding.PEM
        )
        clear = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        encrypted = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(PASSWORD.encode()),
        )
        p12 = pkcs12.serialize_key_and_certificates(
            name.encode(),
            key,
            cert,
            [ca_cert],
            serialization.BestAvailableEncryption(PASSWORD.encode()),
        )
        return Identity(
            name=name,
            subject=subject.rfc4514_string(),
            cert=self._write(f"{name}.pem", chain),
            key=self._write(f"{name}.key", clear),
            key_encrypted=self._write(f"{name}.enc.key", encrypted),
            keystore_pem=self._write(f"{name}.keystore.pem", encrypted + chain),
            p12=self._write(f"{name}.p12", p12),
        )

    def _write(self, name: str, data: bytes) -> Path:
        path = self.folder / name
        path.write_bytes(data)
        return path
