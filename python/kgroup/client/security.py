"""security: TLS and SASL for the clients' connections, configured with Kafka's client settings.

:class:`Security` is read once from a client's :class:`~kgroup.client.config.ClientConfig`:
``security.protocol`` (``plaintext``, ``ssl``, ``sasl_plaintext``, ``sasl_ssl``), the TLS context
the ``ssl.*`` settings describe (librdkafka's names, and the Java client's ``ssl.truststore.*`` /
``ssl.keystore.*`` for users who bring those), and the SASL mechanism with its credentials
(``sasl.username`` / ``sasl.password``, or Java's ``sasl.jaas.config``; for OAUTHBEARER an
``oauth_cb`` or librdkafka's unsecured JWT built from ``sasl.oauthbearer.config``).

A :class:`~kgroup.client.connection.Connection` asks :meth:`Security.mechanism` for a fresh
:class:`SaslMechanism` each time it authenticates: PLAIN (RFC 4616), SCRAM-SHA-256/512 (RFC 5802,
RFC 7677: the server's signature is checked) and OAUTHBEARER (RFC 7628, as Kafka frames it).
Every method here is safe to call from any thread; mechanisms are single-use.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgroup.errors import InvalidArgument, KafkaError, SaslAuthenticationFailed
from kgroup.jaas import parse_jaas

__all__ = [
    "MECHANISMS",
    "SaslMechanism",
    "Security",
    "SslAuthenticationFailed",
    "parse_jaas_config",
    "unsecured_jwt",
]

#: The SASL mechanisms kgroup's client speaks.
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


class SslAuthenticationFailed(KafkaError):
    """SSL_AUTHENTICATION_FAILED: a TLS handshake with a broker failed (its certificate is not
    trusted or does not name the host, it refused ours, the port does not speak TLS). Java's
    SslAuthenticationException, which has no code on the wire (``code`` stays -1, so it lives
    here rather than among :mod:`kgroup.errors`' one class per code). Not retriable: a client
    backs off before it connects again."""

    name = "SSL_AUTHENTICATION_FAILED"


# -- sasl.jaas.config ------------------------------------------------------------------------


def parse_jaas_config(text: str) -> tuple[str, dict[str, str]]:
    """The login module (its class name without package) and options of one
    ``sasl.jaas.config`` entry, as Java's JaasConfig reads it (``kgroup.jaas``, which the
    broker reads its own with): ``org.apache.kafka.common.security.plain.PlainLoginModule
    required username="u" password="p";``.

    >>> parse_jaas_config('org.apache.kafka.common.security.plain.PlainLoginModule '
    ...                   'required username="alice" password="a;b";')
    ('PlainLoginModule', {'username': 'alice', 'password': 'a;b'})
    """
    modules = parse_jaas(text)
    if len(modules) != 1:
        raise InvalidArgument(
            "sasl.jaas.config: expected one '<LoginModule> required key=\"value\" ...;' entry"
        )
    return modules[0].login_module.rsplit(".", 1)[-1], dict(modules[0].options)


# -- OAUTHBEARER tokens ----------------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsecured_jwt(config: str, now: float | None = None) -> tuple[str, float, str, dict[str, str]]:
    """An unsecured JWT (``alg: none``) built from ``sasl.oauthbearer.config`` as librdkafka
    builds it: ``principal=alice`` (required), ``principalClaimName=sub``, ``scope=a,b``,
    ``scopeClaimName=scope``, ``lifeSeconds=3600``, ``extension_<name>=value``. Returns
    (token, expiry in epoch seconds, principal, SASL extensions); Kafka's unsecured validator
    (OAuthBearerUnsecuredValidatorCallbackHandler) accepts it.

    >>> tok, exp, who, ext = unsecured_jwt("principal=alice scope=a,b extension_x=1", now=100)
    >>> tok.split(".")[2], exp, who, ext
    ('', 3700, 'alice', {'x': '1'})
    """
    values: dict[str, str] = {}
    for item in config.split():
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidArgument(f"sasl.oauthbearer.config: {item!r} is not key=value")
        values[key] = value
    principal = values.pop("principal", "")
    if not principal:
        raise InvalidArgument("sasl.oauthbearer.config: principal=<name> is required")
    claim = values.pop("principalClaimName", "sub")
    scope_claim = values.pop("scopeClaimName", "scope")
    scope = [s for s in values.pop("scope", "").split(",") if s]
    try:
        life = int(values.pop("lifeSeconds", "3600"))
    except ValueError:
        raise InvalidArgument("sasl.oauthbearer.config: lifeSeconds must be a number") from None
    extensions = {
        k[len("extension_") :]: v for k, v in values.items() if k.startswith("extension_")
    }
    unknown = sorted(k for k in values if not k.startswith("extension_"))
    if unknown:
        raise InvalidArgument(f"sasl.oauthbearer.config: unknown key {unknown[0]!r}")
    now = time.time() if now is None else now
    issued = int(now)
    payload: dict[str, Any] = {claim: principal, "iat": issued, "exp": issued + life}
    if scope:
        payload[scope_claim] = scope
    header = _b64url(json.dumps({"alg": "none"}, separators=(",", ":")).encode())
    body = _b64url(json.dumps(payload, separators=(",", ":")).encode())
    return f"{header}.{body}.", issued + life, principal, extensions


# -- SASL mechanisms -------------------------------------------------------------------------


class SaslMechanism:
    """SaslMechanism is one client-side SASL exchange: :meth:`first` gives the first token,
    :meth:`respond` answers each challenge (None: the exchange is complete on our side)."""

    name = ""

    def first(self) -> bytes:
        raise NotImplementedError

    def respond(self, challenge: bytes) -> bytes | None:
        return None


class _Plain(SaslMechanism):
    name = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password

    def first(self) -> bytes:
        # RFC 4616: [authzid] NUL authcid NUL passwd.
        return b"\0" + self.username.encode() + b"\0" + self.password.encode()


def _saslname(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


class _Scram(SaslMechanism):
    """RFC 5802 client, without channel binding (``n,,``), as Kafka's ScramSaslClient."""

    # Kafka's ScramMechanism.minIterations: fewer means a broker (or a man in the middle)
    # that weakens the hash, so the exchange stops.
    MIN_ITERATIONS = 4096

    def __init__(self, name: str, username: str, password: str) -> None:
        self.name = name
        self.hash = "sha256" if name == "SCRAM-SHA-256" else "sha512"
        self.username, self.password = username, password
        self.nonce = _b64url(secrets.token_bytes(24))
        self.client_first_bare = f"n={_saslname(username)},r={self.nonce}"
        self.state = "first"
        self.server_signature = b""

    def _hmac(self, key: bytes, msg: bytes) -> bytes:
        return hmac.new(key, msg, self.hash).digest()

    def first(self) -> bytes:
        return ("n,," + self.client_first_bare).encode()

    def respond(self, challenge: bytes) -> bytes | None:
        if self.state == "first":
            self.state = "final"
            return self._client_final(challenge)
        if self.state == "final":
            self.state = "done"
            self._check_server_final(challenge)
            return None
        raise SaslAuthenticationFailed(f"{self.name}: unexpected challenge after the exchange")

    def _client_final(self, challenge: bytes) -> bytes:
        server_first = challenge.decode()
        attrs = dict(a.split("=", 1) for a in server_first.split(",") if "=" in a)
        nonce, salt, iterations = attrs.get("r", ""), attrs.get("s"), attrs.get("i", "")
        if "e" in attrs:
            raise SaslAuthenticationFailed(f"{self.name}: the broker refused: {attrs['e']}")
        if not nonce.startswith(self.nonce) or len(nonce) == len(self.nonce):
            raise SaslAuthenticationFailed(f"{self.name}: the broker's nonce does not extend ours")
        if salt is None or not iterations.isdigit():
            raise SaslAuthenticationFailed(f"{self.name}: malformed server-first-message")
        if int(iterations) < self.MIN_ITERATIONS:
            raise SaslAuthenticationFailed(
                f"{self.name}: {iterations} iterations, fewer than {self.MIN_ITERATIONS}"
            )
        salted = hashlib.pbkdf2_hmac(
            self.hash, self.password.encode(), base64.b64decode(salt), int(iterations)
        )
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self.hash, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self.client_first_bare},{server_first},{without_proof}".encode()
        signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self.server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _check_server_final(self, challenge: bytes) -> None:
        attrs = dict(a.split("=", 1) for a in challenge.decode().split(",") if "=" in a)
        if "e" in attrs:
            raise SaslAuthenticationFailed(f"{self.name}: the broker refused: {attrs['e']}")
        got = base64.b64decode(attrs.get("v", ""))
        if not hmac.compare_digest(got, self.server_signature):
            raise SaslAuthenticationFailed(
                f"{self.name}: the broker's signature is wrong (it does not know the password)"
            )


class _OAuthBearer(SaslMechanism):
    name = "OAUTHBEARER"

    def __init__(self, token: str, extensions: dict[str, str]) -> None:
        self.token, self.extensions = token, extensions
        self.failed = False

    def first(self) -> bytes:
        # RFC 7628's initial response as Kafka's OAuthBearerClientInitialResponse frames it.
        ext = "".join(f"\x01{k}={v}" for k, v in self.extensions.items())
        return f"n,,\x01auth=Bearer {self.token}{ext}\x01\x01".encode()

    def respond(self, challenge: bytes) -> bytes | None:
        # A challenge is the broker's JSON error (RFC 7628 3.2.2): answer with the lone
        # separator it waits for, and it fails the exchange with SASL_AUTHENTICATION_FAILED.
        if challenge and not self.failed:
            self.failed = True
            return b"\x01"
        return None


# -- the settings ----------------------------------------------------------------------------


@dataclass
class _Token:
    value: str
    expiry: float  # epoch seconds
    fetched: float
    extensions: dict[str, str] = field(default_factory=dict)


@dataclass
class Security:
    """Security is how a client's connections are secured: ``protocol`` (Kafka's upper-case
    name), the TLS ``ssl_context`` (None without TLS) and whether the broker's certificate
    must name the host (``check_hostname``), and the SASL ``sasl_mechanism`` (None without
    SASL). Thread-safe."""

    protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    check_hostname: bool = True
    sasl_mechanism: str | None = None
    username: str = ""
    # Secrets stay out of repr(), so that a logged client shows none.
    password: str = field(default="", repr=False)
    oauth_config: str = field(default="", repr=False)
    oauth_cb: Callable[[str], Any] | None = field(default=None, repr=False)
    _token: _Token | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @classmethod
    def from_config(cls, config: Any) -> Security:
        """The security a ClientConfig (or any mapping of its keys) describes; raises
        InvalidArgument for settings that cannot work (an unknown mechanism, a JKS store,
        missing credentials) before any connection is tried."""
        protocol = str(config["security.protocol"]).upper()
        sec = cls(protocol=protocol)
        if sec.tls:
            sec.ssl_context, sec.check_hostname = _ssl_context(config)
        if sec.sasl:
            _sasl_settings(sec, config)
        return sec

    async def mechanism(self) -> SaslMechanism:
        """A fresh exchange of the configured mechanism (an OAUTHBEARER token is fetched again
        once 80% of its life has passed, as librdkafka refreshes it)."""
        name = self.sasl_mechanism
        if name == "PLAIN":
            return _Plain(self.username, self.password)
        if name in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            return _Scram(name, self.username, self.password)
        assert name == "OAUTHBEARER"
        token = await self._oauth_token()
        return _OAuthBearer(token.value, token.extensions)

    async def _oauth_token(self) -> _Token:
        with self._lock:
            tok = self._token
        if tok is not None and time.time() < tok.fetched + 0.8 * (tok.expiry - tok.fetched):
            return tok
        if self.oauth_cb is not None:
            try:
                got = await asyncio.to_thread(self.oauth_cb, self.oauth_config)
            except Exception as e:
                # The application's token source failed: no token, no authentication.
                raise SaslAuthenticationFailed(f"oauth_cb failed: {e!r}") from e
            if not isinstance(got, tuple) or len(got) < 2:
                raise SaslAuthenticationFailed(
                    "oauth_cb must return (token, expiry) or (token, expiry, principal, "
                    f"extensions), got {got!r}"
                )
            extensions = dict(got[3]) if len(got) > 3 and got[3] else {}
            tok = _Token(str(got[0]), float(got[1]), time.time(), extensions)
        else:
            value, expiry, _, extensions = unsecured_jwt(self.oauth_config)
            tok = _Token(value, expiry, time.time(), extensions)
        with self._lock:
            self._token = tok
        return tok


def _sasl_settings(sec: Security, config: Any) -> None:
    mechanism = str(config["sasl.mechanism"]).upper()
    username, password = config["sasl.username"], config["sasl.password"]
    oauth_config = config["sasl.oauthbearer.config"]
    unsecure = bool(config["enable.sasl.oauthbearer.unsecure.jwt"])
    jaas = config["sasl.jaas.config"]
    if jaas:
        module, options = parse_jaas_config(jaas)
        if module in ("PlainLoginModule", "ScramLoginModule"):
            username = username or options.get("username")
            password = password or options.get("password")
        elif module == "OAuthBearerLoginModule":
            # Java's default login handler builds an unsecured token from these options.
            if oauth_config is None:
                parts = []
                if "unsecuredLoginStringClaim_sub" in options:
                    parts.append(f"principal={options['unsecuredLoginStringClaim_sub']}")
                if "unsecuredLoginLifetimeSeconds" in options:
                    parts.append(f"lifeSeconds={options['unsecuredLoginLifetimeSeconds']}")
                if "unsecuredLoginPrincipalClaimName" in options:
                    parts.append(
                        f"principalClaimName={options['unsecuredLoginPrincipalClaimName']}"
                    )
                if "unsecuredLoginScopeClaimName" in options:
                    parts.append(f"scopeClaimName={options['unsecuredLoginScopeClaimName']}")
                scopes = options.get("unsecuredLoginListClaim_scope", "")
                if scopes:
                    # Java's list claims: the value's first character is its delimiter.
                    items = [x for x in scopes[1:].split(scopes[0]) if x]
                    parts.append(f"scope={','.join(items)}")
                parts += [
                    f"extension_{k[len('unsecuredLoginExtension_') :]}={v}"
                    for k, v in options.items()
                    if k.startswith("unsecuredLoginExtension_")
                ]
                oauth_config = " ".join(parts)
            unsecure = True
        else:
            raise InvalidArgument(
                f"sasl.jaas.config: login module {module} is not supported by kgroup's client "
                "(PlainLoginModule, ScramLoginModule, OAuthBearerLoginModule are)"
            )
    if mechanism not in MECHANISMS:
        raise InvalidArgument(
            f"sasl.mechanism {mechanism} is not supported by kgroup's client "
            f"(it speaks {', '.join(MECHANISMS)})"
        )
    sec.sasl_mechanism = mechanism
    if mechanism == "OAUTHBEARER":
        sec.oauth_cb = config["oauth_cb"]
        sec.oauth_config = oauth_config or ""
        if sec.oauth_cb is None:
            if not unsecure:
                raise InvalidArgument(
                    "OAUTHBEARER needs an oauth_cb, or enable.sasl.oauthbearer.unsecure.jwt=true "
                    "with sasl.oauthbearer.config (as librdkafka)"
                )
            unsecured_jwt(sec.oauth_config)  # its errors now, not at connect time
        return
    if not username or password is None:
        raise InvalidArgument(f"{mechanism} needs sasl.username and sasl.password")
    sec.username, sec.password = username, password


# -- TLS -------------------------------------------------------------------------------------


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InvalidArgument(f"{what}: cannot read {path}: {e.strerror or e}") from None


def _store_type(config: Any, key: str, path_or_data: bytes | None) -> str:
    """A Java store type: the one given, else PEM for text that looks like PEM and PKCS12 for
    anything else (librdkafka's ssl.keystore.location is always PKCS#12)."""
    if key in getattr(config, "given", ()):
        return str(config[key]).upper()
    if path_or_data is not None and path_or_data.lstrip().startswith(b"-----BEGIN"):
        return "PEM"
    return "PKCS12"


def _refuse_jks(key: str) -> None:
    raise InvalidArgument(
        f"{key}=JKS: Python's ssl cannot read Java keystores; convert it with `keytool "
        "-importkeystore -deststoretype PKCS12` or use PEM"
    )


def _pkcs12(data: bytes, password: str | None, what: str) -> tuple[Any, Any, list[Any]]:
    try:
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:
        raise InvalidArgument(
            f"{what} is PKCS#12: reading it needs the `cryptography` package "
            "(pip install cryptography), or give PEM files instead"
        ) from None
    try:
        return pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError as e:
        raise InvalidArgument(f"{what}: cannot read the PKCS#12 store: {e}") from None


def _pem(obj: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return obj.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@contextlib.contextmanager
def _temp_pem(data: bytes) -> Iterator[str]:
    # Python's ssl loads certificates and keys only from files: a private file that lives
    # only while the context reads it.
    fd, path = tempfile.mkstemp(prefix="kgroup-", suffix=".pem")
    try:
        os.write(fd, data)
        os.close(fd)
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _load_chain(ctx: ssl.SSLContext, chain: bytes, key: bytes | None, password: str | None) -> None:
    try:
        with _temp_pem(chain) as cert_path:
            if key is None:
                ctx.load_cert_chain(cert_path, password=password)
            else:
                with _temp_pem(key) as key_path:
                    ctx.load_cert_chain(cert_path, key_path, password=password)
    except ssl.SSLError as e:
        raise InvalidArgument(f"the client certificate or key cannot be used: {e}") from None


# Java's names of the TLS versions its clients may enable (older ones Python's ssl refuses).
_TLS_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


def _ssl_context(config: Any) -> tuple[ssl.SSLContext, bool]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    versions = []
    for name in config["ssl.enabled.protocols"]:
        version = _TLS_VERSIONS.get(str(name).strip())
        if version is None:
            raise InvalidArgument(
                f"ssl.enabled.protocols: {name!r} is not one of {', '.join(_TLS_VERSIONS)}"
            )
        versions.append(version)
    if not versions:
        raise InvalidArgument("ssl.enabled.protocols is empty")
    highest = max(versions)
    # Java's ssl.protocol names the newest version its SSLContext speaks ("TLS": any).
    cap = _TLS_VERSIONS.get(str(config["ssl.protocol"]).strip())
    if cap is not None:
        highest = min(highest, cap)
    if highest < min(versions):
        raise InvalidArgument(
            f"ssl.protocol {config['ssl.protocol']} allows none of ssl.enabled.protocols"
        )
    ctx.minimum_version, ctx.maximum_version = min(versions), highest
    verify = bool(config["enable.ssl.certificate.verification"])
    check_hostname = verify and config["ssl.endpoint.identification.algorithm"] == "https"
    ctx.check_hostname = check_hostname
    ctx.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
    if config["ssl.cipher.suites"]:
        try:
            ctx.set_ciphers(config["ssl.cipher.suites"].replace(",", ":"))
        except ssl.SSLError:
            raise InvalidArgument(
                f"ssl.cipher.suites: no cipher of {config['ssl.cipher.suites']!r} is known"
            ) from None
    _trust(ctx, config)
    _identity(ctx, config)
    return ctx, check_hostname


def _trust(ctx: ssl.SSLContext, config: Any) -> None:
    try:
        if config["ssl.ca.location"]:
            loc = config["ssl.ca.location"]
            if loc == "probe":
                ctx.load_default_certs()
            elif os.path.isdir(loc):
                ctx.load_verify_locations(capath=loc)
            else:
                ctx.load_verify_locations(cafile=loc)
        elif config["ssl.ca.pem"]:
            ctx.load_verify_locations(cadata=config["ssl.ca.pem"])
        elif config["ssl.truststore.certificates"]:
            ctx.load_verify_locations(cadata=config["ssl.truststore.certificates"])
        elif config["ssl.truststore.location"]:
            loc = config["ssl.truststore.location"]
            data = _read(loc, "ssl.truststore.location")
            kind = _store_type(config, "ssl.truststore.type", data)
            if kind == "PEM":
                ctx.load_verify_locations(cadata=data.decode())
            elif kind == "PKCS12":
                _, cert, extra = _pkcs12(
                    data, config["ssl.truststore.password"], "ssl.truststore.location"
                )
                certs = ([cert] if cert is not None else []) + list(extra)
                if not certs:
                    raise InvalidArgument(f"ssl.truststore.location: {loc} holds no certificate")
                ctx.load_verify_locations(cadata="".join(_pem(c).decode() for c in certs))
            elif kind == "JKS":
                _refuse_jks("ssl.truststore.type")
            else:
                raise InvalidArgument(f"ssl.truststore.type {kind} is not PEM or PKCS12")
        else:
            ctx.load_default_certs()
    except (ssl.SSLError, FileNotFoundError) as e:
        raise InvalidArgument(f"the trusted CA certificates cannot be read: {e}") from None


def _identity(ctx: ssl.SSLContext, config: Any) -> None:
    key_password = config["ssl.key.password"]
    if config["ssl.certificate.location"] or config["ssl.certificate.pem"]:
        chain = (
            _read(config["ssl.certificate.location"], "ssl.certificate.location")
            if config["ssl.certificate.location"]
            else config["ssl.certificate.pem"].encode()
        )
        key = (
            _read(config["ssl.key.location"], "ssl.key.location")
            if config["ssl.key.location"]
            else (config["ssl.key.pem"] or "").encode()
        )
        if not key:
            raise InvalidArgument("a client certificate needs ssl.key.location or ssl.key.pem")
        _load_chain(ctx, chain, key, key_password)
        return
    if config["ssl.keystore.certificate.chain"]:
        # Java's PEM keystore given inline.
        key = (config["ssl.keystore.key"] or "").encode()
        if not key:
            raise InvalidArgument("ssl.keystore.certificate.chain needs ssl.keystore.key")
        _load_chain(ctx, config["ssl.keystore.certificate.chain"].encode(), key, key_password)
        return
    loc = config["ssl.keystore.location"]
    if not loc:
        return
    data = _read(loc, "ssl.keystore.location")
    kind = _store_type(config, "ssl.keystore.type", data)
    if kind == "PEM":
        # Kafka's PEM keystore: the key (encrypted under ssl.key.password) and the chain.
        _load_chain(ctx, data, None, key_password)
    elif kind == "PKCS12":
        key_obj, cert, extra = _pkcs12(data, config["ssl.keystore.password"], "ssl.keystore")
        if key_obj is None or cert is None:
            raise InvalidArgument(f"ssl.keystore.location: {loc} holds no key and certificate")
        chain = _pem(cert) + b"".join(_pem(c) for c in extra)
        _load_chain(ctx, chain, _key_pem(key_obj), None)
    elif kind == "JKS":
        _refuse_jks("ssl.keystore.type")
    else:
        raise InvalidArgument(f"ssl.keystore.type {kind} is not PEM or PKCS12")
