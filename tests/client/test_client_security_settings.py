"""The clients' security settings and SASL mechanisms without a broker: librdkafka's and the
Java client's names, the stores Python's ssl can and cannot read, and the SASL tokens against
the RFCs' own examples (the broker side is in test_client_security.py)."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import pytest
from support.certs import Certs

from kgroup.client.config import ClientConfig
from kgroup.client.security import (
    Security,
    _OAuthBearer,
    _Plain,
    _Scram,
    parse_jaas_config,
    unsecured_jwt,
)
from kgroup.errors import InvalidArgument, SaslAuthenticationFailed


def security(**settings: object) -> Security:
    return Security.from_config(ClientConfig("admin", {"bootstrap.servers": "h:1", **settings}))


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return Certs(tmp_path_factory.mktemp("certs"))


def test_security_protocol_is_case_insensitive_and_checked() -> None:
    sec = security(
        **{
            "security.protocol": "SASL_SSL",
            "sasl.mechanisms": "plain",
            "sasl.username": "u",
            "sasl.password": "p",
        }
    )
    assert (sec.protocol, sec.sasl_mechanism) == ("SASL_SSL", "PLAIN")
    with pytest.raises(InvalidArgument, match=r"'security\.protocol'"):
        security(**{"security.protocol": "tls"})


def test_default_mechanism_gssapi_is_refused_by_name() -> None:
    # Java's and librdkafka's default mechanism is GSSAPI, which kgroup does not speak.
    with pytest.raises(InvalidArgument, match="GSSAPI is not supported"):
        security(**{"security.protocol": "sasl_plaintext"})


def test_jaas_config_of_each_login_module() -> None:
    module, options = parse_jaas_config(
        "org.apache.kafka.common.security.scram.ScramLoginModule required\n"
        '  username="alice" password="p\\"w;=";'
    )
    assert (module, options) == ("ScramLoginModule", {"username": "alice", "password": 'p"w;='})
    sec = security(
        **{
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
            "required username=bob password=secret;",
        }
    )
    assert (sec.username, sec.password) == ("bob", "secret")
    oauth = security(
        **{
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer."
            'OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="carol" '
            'unsecuredLoginLifetimeSeconds="60" unsecuredLoginListClaim_scope="|a|b";',
        }
    )
    assert oauth.oauth_config == "principal=carol lifeSeconds=60 scope=a,b"
    with pytest.raises(InvalidArgument, match="Krb5LoginModule is not supported"):
        security(
            **{
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;",
            }
        )


def test_oauthbearer_needs_a_callback_or_the_unsecured_jwt_switch() -> None:
    # librdkafka: enable.sasl.oauthbearer.unsecure.jwt or an oauthbearer_token_refresh_cb.
    with pytest.raises(InvalidArgument, match="oauth_cb"):
        security(**{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"})


def test_stores_python_can_read_and_jks_refused(certs: Certs, tmp_path: Path) -> None:
    pem = security(
        **{
            "security.protocol": "SSL",
            "ssl.truststore.location": str(certs.ca),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(certs.broker.keystore_pem),
            "ssl.key.password": certs.password,
        }
    )
    assert pem.ssl_context is not None and pem.check_hostname
    p12 = security(
        **{
            "security.protocol": "SSL",
            "ssl.ca.pem": certs.ca.read_text(),
            "ssl.keystore.location": str(certs.client("dave").p12),
            "ssl.keystore.password": certs.password,
            "ssl.endpoint.identification.algorithm": "none",
        }
    )
    assert p12.ssl_context is not None and not p12.check_hostname
    with pytest.raises(InvalidArgument, match="cannot read the PKCS#12 store"):
        security(
            **{
                "security.protocol": "SSL",
                "ssl.keystore.location": str(certs.client("dave").p12),
                "ssl.keystore.password": "wrong",
            }
        )
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\0" * 32)
    with pytest.raises(InvalidArgument, match="cannot read Java keystores"):
        security(
            **{
                "security.protocol": "SSL",
                "ssl.truststore.type": "JKS",
                "ssl.truststore.location": str(jks),
            }
        )


def test_plain_token() -> None:
    # RFC 4616: an empty authzid, then the user and password after NULs.
    assert _Plain("alice", "pw").first() == b"\0alice\0pw"


def test_scram_sha_256_with_rfc_7677s_example() -> None:
    # RFC 7677 section 3: user "user", password "pencil".
    m = _Scram("SCRAM-SHA-256", "user", "pencil")
    m.nonce = "rOprNGfwEbeRWgbNEkqO"
    m.client_first_bare = f"n=user,r={m.nonce}"
    assert m.first() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    final = m.respond(
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert final == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert m.respond(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None


def test_scram_refuses_a_wrong_server_signature_and_few_iterations() -> None:
    m = _Scram("SCRAM-SHA-512", "user", "pencil")
    m.respond(f"r={m.nonce}x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096".encode())
    with pytest.raises(SaslAuthenticationFailed, match="signature"):
        m.respond(b"v=" + base64.b64encode(b"\0" * 64))
    weak = _Scram("SCRAM-SHA-256", "user", "pencil")
    with pytest.raises(SaslAuthenticationFailed, match="iterations"):
        weak.respond(f"r={weak.nonce}x,s=AAAA,i=1024".encode())
    other = _Scram("SCRAM-SHA-256", "user", "pencil")
    with pytest.raises(SaslAuthenticationFailed, match="nonce"):
        other.respond(b"r=someone-else,s=AAAA,i=4096")


def test_unsecured_jwt_and_oauthbearer_initial_response() -> None:
    token, expiry, principal, ext = unsecured_jwt(
        "principal=alice scope=read,write lifeSeconds=60 extension_traceId=42", now=1000
    )
    header, payload, signature = token.split(".")
    pad = lambda s: s + "=" * (-len(s) % 4)  # noqa: E731
    assert json.loads(base64.urlsafe_b64decode(pad(header))) == {"alg": "none"}
    assert json.loads(base64.urlsafe_b64decode(pad(payload))) == {
        "sub": "alice",
        "iat": 1000,
        "exp": 1060,
        "scope": ["read", "write"],
    }
    assert (signature, expiry, principal, ext) == ("", 1060, "alice", {"traceId": "42"})
    # Kafka's OAuthBearerClientInitialResponse: n,,^Aauth=Bearer <token>^A<ext>^A^A.
    assert _OAuthBearer("tok", {"traceId": "42"}).first() == (
        b"n,,\x01auth=Bearer tok\x01traceId=42\x01\x01"
    )


def test_oauth_cb_token_is_reused_until_80_percent_of_its_life() -> None:
    calls: list[str] = []

    def cb(config: str) -> tuple[str, float]:
        import time

        calls.append(config)
        return f"tok{len(calls)}", time.time() + 3600

    sec = security(
        **{
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.config": "anything",
            "oauth_cb": cb,
        }
    )

    async def twice() -> list[bytes]:
        return [(await sec.mechanism()).first() for _ in range(2)]

    first, second = asyncio.run(twice())
    assert first == second and b"Bearer tok1" in first
    assert calls == ["anything"]


def test_java_tls_version_and_host_name_settings(certs: Certs) -> None:
    # Java turns host name checking off with an empty ssl.endpoint.identification.algorithm.
    sec = security(
        **{
            "security.protocol": "SSL",
            "ssl.ca.location": str(certs.ca),
            "ssl.endpoint.identification.algorithm": "",
            "ssl.enabled.protocols": "TLSv1.3",
        }
    )
    assert sec.ssl_context is not None and not sec.check_hostname
    assert sec.ssl_context.minimum_version == sec.ssl_context.maximum_version
    capped = security(**{"security.protocol": "SSL", "ssl.protocol": "TLSv1.2"}).ssl_context
    assert capped is not None and capped.maximum_version.name == "TLSv1_2"
    with pytest.raises(InvalidArgument, match=r"TLSv1\.1"):
        security(**{"security.protocol": "SSL", "ssl.enabled.protocols": "TLSv1.1"})


def test_cipher_suites_in_openssl_names() -> None:
    ctx = security(
        **{"security.protocol": "SSL", "ssl.cipher.suites": "ECDHE-ECDSA-AES128-GCM-SHA256"}
    ).ssl_context
    assert ctx is not None
    assert "ECDHE-ECDSA-AES128-GCM-SHA256" in {c["name"] for c in ctx.get_ciphers()}
    with pytest.raises(InvalidArgument, match="no cipher"):
        security(**{"security.protocol": "SSL", "ssl.cipher.suites": "NOT-A-CIPHER"})


def test_an_oauth_cb_that_raises_fails_the_authentication() -> None:
    def cb(config: str) -> tuple[str, float]:
        raise RuntimeError("the identity provider is down")

    sec = security(
        **{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "oauth_cb": cb}
    )
    with pytest.raises(SaslAuthenticationFailed, match="identity provider is down"):
        asyncio.run(sec.mechanism())
