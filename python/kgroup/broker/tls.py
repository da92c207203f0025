"""TLS on the broker's SSL and SASL_SSL listeners, from Kafka's ``ssl.*`` settings.

:func:`server_context` builds one listener's ``ssl.SSLContext`` as Kafka's
``DefaultSslEngineFactory`` reads the same settings (each may be overridden per listener with
``listener.name.<listener>.``): the key store as a PEM file (``ssl.keystore.type=PEM``: the
private key and its certificate chain in one file, the key under ``ssl.key.password``), inline
PEM (``ssl.keystore.key`` and ``ssl.keystore.certificate.chain``) or PKCS#12 (read with
``cryptography``, the ``kgroup[tls]`` extra); the trust store likewise (``ssl.truststore.*``);
``ssl.client.auth``, ``ssl.enabled.protocols`` and ``ssl.cipher.suites``. Java's JKS stores
cannot be read here: they are refused with the command that converts them. A key store that
cannot be read stops the broker's start with a :class:`ConfigError`, as Kafka's start fails.

Each connection of a TLS listener runs through a :class:`TlsProtocol`: the TLS layer, over the
raw TCP transport, in front of the connection's ``server.Connection``. It sends the alert of a
failed handshake before it closes, as Kafka does (the event loops' own TLS transports do not),
and costs less CPU than uvloop's (bench/bench_tls.py). The principal a client certificate gives
is ``kgroup.broker.principals``'.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import ssl
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kgroup import errors
from kgroup.broker import principals
from kgroup.broker.config import ConfigError
from kgroup.broker.dynamic_config import SSL_STORE_CONFIGS

if TYPE_CHECKING:
    from kgroup.broker.config import BrokerConfig
    from kgroup.broker.listeners import Listener
    from kgroup.broker.server import Connection

__all__ = ["TlsContexts", "TlsProtocol", "openssl_cipher_name", "server_context"]

log = logging.getLogger("kgroup.broker")

#: RECONFIGURABLE are a listener's settings a dynamic update may change (Kafka's
#: SslConfigs.RECONFIGURABLE_CONFIGS), in a fixed order.
RECONFIGURABLE = tuple(sorted(SSL_STORE_CONFIGS))

_VERSIONS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_CLIENT_AUTH = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}
_JKS = (
    "kgroup cannot read Java KeyStore (JKS) files: convert it to PKCS12 "
    "(keytool -importkeystore -srckeystore {path} -destkeystore {stem}.p12 "
    "-deststoretype PKCS12) and set {key}=PKCS12, or use PEM files ({key}=PEM)"
)


# -- the SSLContext ------------------------------------------------------------------------


def server_context(config: BrokerConfig, listener: Listener) -> ssl.SSLContext:
    """server_context is the SSLContext of ``listener`` (an SSL or SASL_SSL one), from its
    ``ssl.*`` settings. ConfigError says what is wrong when the key store or trust store is
    missing, unreadable or inconsistent, or a setting cannot be honoured."""
    return _make(config, listener).context


#: PEM_ALIAS is the alias of the one entry of a PEM key store (Kafka's PemStore).
PEM_ALIAS = "kafka"


@dataclass(frozen=True)
class _Made:
    """A listener's SSLContext and what it was made from: the values of its reconfigurable
    settings, its key store's alias and certificate (DER), whether it has a trust store, and
    the store files read with their modification times."""

    context: ssl.SSLContext
    values: tuple[Any, ...]
    alias: str
    certificate: bytes
    truststore: bool
    files: tuple[tuple[str, int], ...]

    def modified(self) -> bool:
        """Whether a store file changed since it was read (Kafka's SecurityStore.modified)."""
        return any(_mtime(path) != mtime for path, mtime in self.files)


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _reconfigurable_values(config: BrokerConfig, listener: Listener) -> tuple[Any, ...]:
    return tuple(config.for_listener(listener.name, k) for k in RECONFIGURABLE)


def _make(config: BrokerConfig, listener: Listener) -> _Made:
    def get(key: str) -> Any:
        return config.for_listener(listener.name, key)

    where = f"listener {listener.name}"
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _protocols(ctx, get("ssl.protocol"), get("ssl.enabled.protocols"), where)
    suites = get("ssl.cipher.suites")
    if suites:
        _cipher_suites(ctx, suites, where)
    files = [(p, _mtime(p)) for p in (get("ssl.keystore.location"),) if p]
    alias, pem = _keystore(ctx, get, where)
    auth = get("ssl.client.auth") or "none"
    if (
        listener.security_protocol == "SASL_SSL"
        and "ssl.client.auth" not in config.per_listener.get(listener.name.lower(), {})
    ):
        # Kafka (ChannelBuilders) asks SASL_SSL clients for certificates only when the
        # listener's own ssl.client.auth says so: the broker-wide one is for SSL listeners.
        if auth != "none":
            log.warning(
                "Broker configuration 'ssl.client.auth' is applied only to SSL listeners: "
                "set listener.name.%s.ssl.client.auth for the SASL_SSL listener %s",
                listener.name.lower(),
                listener.name,
            )
        auth = "none"
    ctx.verify_mode = _CLIENT_AUTH[auth]
    if ctx.verify_mode != ssl.CERT_NONE:
        trusted = get("ssl.truststore.location")
        if trusted and get("ssl.truststore.certificates") is None:
            files.append((trusted, _mtime(trusted)))
        _truststore(ctx, get)
    # No session resumption: each connection presents its certificate, checked against the
    # trust store at its own handshake.
    ctx.options |= ssl.OP_NO_TICKET
    first = pem[pem.index("-----BEGIN CERTIFICATE-----") :]
    first = first[: first.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")]
    return _Made(
        ctx,
        _reconfigurable_values(config, listener),
        alias,
        ssl.PEM_cert_to_DER_cert(first),
        get("ssl.truststore.location") is not None
        or get("ssl.truststore.certificates") is not None,
        tuple(files),
    )


class TlsContexts:
    """TlsContexts holds the SSLContext of each TLS listener, for its new connections, and
    remakes one when its key store or trust store changes (KIP-226, Kafka's SslFactory
    reconfiguration): a dynamic update of the listener's ``listener.name.<l>.ssl.keystore.*``,
    ``ssl.key.password`` or ``ssl.truststore.*``, or a store file changed in place and any
    update of this broker's configs. The new key store must hold a certificate with the same
    subject and (at least) the same alternative names as the one served, unless the
    listener's ``ssl.allow.dn.changes`` / ``ssl.allow.san.changes`` say otherwise; connections
    already made keep their TLS session. Event loop only."""

    def __init__(self, config: BrokerConfig, listeners: list[Listener]) -> None:
        self._listeners = {lst.name: lst for lst in listeners if lst.uses_ssl}
        self._made = {name: _make(config, lst) for name, lst in self._listeners.items()}
        # Whether a new certificate may change its subject or names: the listener's settings
        # as the broker started (Kafka's SslFactory keeps those of its creation).
        self._allow = {
            name: (
                _static(config, name, "ssl.allow.dn.changes"),
                _static(config, name, "ssl.allow.san.changes"),
            )
            for name in self._listeners
        }

    def context(self, listener: str) -> ssl.SSLContext:
        return self._made[listener].context

    def prepare(self, config: BrokerConfig) -> dict[str, _Made]:
        """The listeners' contexts remade for ``config`` (the configs after an update) where
        their reconfigurable settings changed, checked as Kafka's
        SslFactory.validateReconfiguration checks them; errors.InvalidRequest with Kafka's
        message when one is refused."""
        out = {}
        for name, lst in self._listeners.items():
            old = self._made[name]
            if _reconfigurable_values(config, lst) == old.values:
                continue
            out[name] = self._remake(config, lst, old)
        return out

    def commit(self, made: dict[str, _Made]) -> None:
        for name, m in made.items():
            self._made[name] = m
            log.info("Listener %s: new TLS key store %s (%s)", name, m.alias, _dn(m))

    def reload_modified(self, config: BrokerConfig, skip: Iterable[str] = ()) -> None:
        """Remake the contexts whose store files changed in place (Kafka's
        reloadUpdatedFilesWithoutConfigChange, after an update of this broker's configs):
        one that is refused is logged, and the listener keeps its context."""
        for name, lst in self._listeners.items():
            old = self._made[name]
            if name in skip or not old.modified():
                continue
            try:
                self.commit({name: self._remake(config, lst, old)})
            except errors.InvalidRequest as e:
                log.error("Listener %s: TLS stores not reloaded: %s", name, e)

    def _remake(self, config: BrokerConfig, lst: Listener, old: _Made) -> _Made:
        try:
            new = _make(config, lst)
            _ensure_compatible(old, new, *self._allow[lst.name])
            if not old.truststore and new.truststore:
                raise _Refused(
                    "Cannot add SSL truststore to an existing listener for which no truststore "
                    "was configured."
                )
        except ConfigError as e:
            kind = "config.ConfigException" if isinstance(e, _Refused) else _INVALID_CONFIG
            raise errors.InvalidRequest(
                "Invalid value org.apache.kafka.common.config.ConfigException: Validation of "
                f"dynamic config update of SSLFactory failed: org.apache.kafka.common.{kind}: "
                f"{e} for configuration Invalid dynamic configuration"
            ) from None
        return new


_INVALID_CONFIG = "errors.InvalidConfigurationException"


def _static(config: BrokerConfig, listener: str, key: str) -> bool:
    """A boolean setting of ``listener`` as the broker's properties file sets it."""
    own = config.per_listener.get(listener.lower(), {})
    return bool(own[key] if key in own else config.explicit.get(key, False))


class _Refused(ConfigError):
    """A new store that Kafka's SslFactory refuses (a ConfigException of its own)."""


def _dn(m: _Made) -> str:
    return principals.distinguished_name(m.certificate, ", ")


def _ensure_compatible(old: _Made, new: _Made, allow_dn: bool, allow_san: bool) -> None:
    """Kafka's SslFactory.CertificateEntries.ensureCompatible, for one entry a side."""
    if not allow_dn:
        same = principals.distinguished_name(old.certificate).lower() == (
            principals.distinguished_name(new.certificate).lower()
        )
        if not same:
            raise _Refused(
                "Keystore DistinguishedName does not match:  existing={alias="
                f"{old.alias}, DN={_dn(old)}}}, new={{alias={new.alias}, DN={_dn(new)}}}"
            )
    if not allow_san:
        had = principals.subject_alt_names(old.certificate)
        has = set(principals.subject_alt_names(new.certificate))
        if not has.issuperset(had):
            raise _Refused(
                "Keystore SubjectAltNames do not match:  existing={alias="
                f"{old.alias}, SAN={_san_text(had)}}}, new={{alias={new.alias}, "
                f"SAN={_san_text(principals.subject_alt_names(new.certificate))}}}"
            )


def _san_text(names: list[tuple[int, str]]) -> str:
    # Java prints a set of [type, name] lists; Kafka 4.4's (Set.copyOf) iterates in an order
    # that changes with each JVM, here the certificate's.
    return "[" + ", ".join(f"[{k}, {v}]" for k, v in dict.fromkeys(names)) + "]"


def _protocols(ctx: ssl.SSLContext, protocol: str, enabled: list[str] | None, where: str) -> None:
    names = [p for p in (enabled or []) if p] or [protocol]
    unknown = [p for p in names if p not in _VERSIONS]
    if unknown:
        raise ConfigError(
            f"Invalid value {','.join(unknown)} for configuration ssl.enabled.protocols on "
            f"{where}: supported protocols are {', '.join(_VERSIONS)}"
        )
    versions = sorted(_VERSIONS[p] for p in names)
    ctx.minimum_version = versions[0]
    ctx.maximum_version = versions[-1]
    # A list with a gap (TLSv1.1,TLSv1.3) leaves out what lies between.
    for name, flag in (("TLSv1.1", ssl.OP_NO_TLSv1_1), ("TLSv1.2", ssl.OP_NO_TLSv1_2)):
        if versions[0] < _VERSIONS[name] < versions[-1] and name not in names:
            ctx.options |= flag


# Java's cipher suite names (IANA's) as OpenSSL's: TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 is
# ECDHE-RSA-AES128-GCM-SHA256.
_KX = {"ECDHE_RSA": "ECDHE-RSA-", "ECDHE_ECDSA": "ECDHE-ECDSA-", "DHE_RSA": "DHE-RSA-", "RSA": ""}
_BULK = {
    "AES_128_GCM": "AES128-GCM",
    "AES_256_GCM": "AES256-GCM",
    "AES_128_CBC": "AES128",
    "AES_256_CBC": "AES256",
    "CHACHA20_POLY1305": "CHACHA20-POLY1305",
}
_TLS13_SUITES = {
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_CCM_SHA256",
    "TLS_AES_128_CCM_8_SHA256",
}


def openssl_cipher_name(name: str) -> str | None:
    """The OpenSSL name of a TLS 1.2 cipher suite named as Java (IANA) names it, or ``name``
    itself when it is OpenSSL's already; None for one not translated."""
    if not name.startswith("TLS_"):
        return name
    m = re.fullmatch(r"TLS_(\w+?)_WITH_(\w+?)_(SHA|SHA256|SHA384)", name)
    if m is None or m.group(1) not in _KX or m.group(2) not in _BULK:
        return None
    kx, bulk, mac = _KX[m.group(1)], _BULK[m.group(2)], m.group(3)
    if bulk == "CHACHA20-POLY1305":
        return kx + bulk
    return f"{kx}{bulk}-{mac}"


def _cipher_suites(ctx: ssl.SSLContext, suites: list[str], where: str) -> None:
    tls12 = [s for s in suites if s not in _TLS13_SUITES]
    if not tls12:
        # Python's ssl cannot narrow TLS 1.3's suites (all of them are strong).
        return
    names = []
    for suite in tls12:
        name = openssl_cipher_name(suite)
        if name is None:
            raise ConfigError(f"Unsupported cipher suite {suite} in ssl.cipher.suites on {where}")
        names.append(name)
    try:
        ctx.set_ciphers(":".join(names))
    except ssl.SSLError:
        raise ConfigError(
            f"None of the cipher suites {','.join(suites)} in ssl.cipher.suites on {where} is "
            f"supported"
        ) from None


def _password(value: Any) -> str | None:
    return None if value is None else str(value)


def _keystore(ctx: ssl.SSLContext, get: Callable[[str], Any], where: str) -> tuple[str, str]:
    """Load the listener's key store into ``ctx``: the store's alias (a PEM store's is
    Kafka's ``kafka``) and the key and chain as PEM."""
    kind = str(get("ssl.keystore.type") or "JKS").upper()
    path = get("ssl.keystore.location")
    password = _password(get("ssl.keystore.password"))
    key_password = _password(get("ssl.key.password"))
    key = get("ssl.keystore.key")
    chain = get("ssl.keystore.certificate.chain")
    # The same checks, in the same order, as Kafka's DefaultSslEngineFactory.createKeystore.
    if key is not None:
        if kind != "PEM":
            raise ConfigError(
                f"SSL private key can be specified only for PEM, but key store type is {kind}."
            )
        if chain is None:
            raise ConfigError(
                "SSL private key is specified, but certificate chain is not specified."
            )
        if path is not None:
            raise ConfigError("Both SSL key store location and separate private key are specified.")
        if password is not None:
            raise ConfigError(
                "SSL key store password cannot be specified with PEM format, only key password "
                "may be specified."
            )
        text = f"{key}\n{chain}\n"
        _load_pem(ctx, text, key_password, "the PEM key store configs")
        return PEM_ALIAS, text
    if chain is not None:
        raise ConfigError("SSL certificate chain is specified, but private key is not specified")
    if path is None:
        raise ConfigError(
            f"{where} serves TLS but has no key store: set ssl.keystore.location (or "
            f"ssl.keystore.key and ssl.keystore.certificate.chain)"
        )
    if kind == "PEM":
        if password is not None:
            raise ConfigError(
                "SSL key store password cannot be specified with PEM format, only key password "
                "may be specified"
            )
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"Failed to load PEM SSL keystore {path}: {e}") from None
        _load_pem(ctx, text, key_password, f"PEM SSL keystore {path}")
        return PEM_ALIAS, text
    if kind == "JKS":
        raise ConfigError(
            _JKS.format(path=path, stem=Path(path).with_suffix(""), key="ssl.keystore.type")
        )
    if password is None:
        raise ConfigError("SSL key store is specified, but key store password is not specified.")
    if kind != "PKCS12":
        raise ConfigError(f"Failed to load SSL keystore {path} of type {kind}: unknown type")
    alias, pem = _pkcs12_key_and_chain(path, password, key_password)
    _load_pem(ctx, pem, None, f"SSL keystore {path} of type PKCS12")
    return alias, pem


def _load_pem(ctx: ssl.SSLContext, text: str, password: str | None, what: str) -> None:
    """Load a private key and its certificate chain, both in ``text`` (PEM), into ``ctx``."""
    if "PRIVATE KEY-----" not in text:
        raise ConfigError(f"Failed to load {what}: Private key not provided")
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise ConfigError(
            f"Failed to load {what}: At least one certificate expected, but none found"
        )
    if "ENCRYPTED PRIVATE KEY" in text and password is None:
        raise ConfigError(
            f"Failed to load {what}: the private key is encrypted and ssl.key.password is not set"
        )
    with _secret_file(text.encode()) as file:
        try:
            # A callable, so that OpenSSL never prompts on the terminal for a key's password.
            ctx.load_cert_chain(file, file, password=lambda: password or "")
        except (ssl.SSLError, OSError, ValueError) as e:
            raise ConfigError(f"Failed to load {what}: {e}") from None


@contextlib.contextmanager
def _secret_file(data: bytes) -> Iterator[str]:
    """A path OpenSSL can read ``data`` from for the time of the block: an anonymous
    in-memory file where Linux has them (nothing reaches the disk), else a private temporary
    file."""
    memfd = getattr(os, "memfd_create", None)
    if memfd is not None:
        fd = memfd("kgroup-tls", 0)
        try:
            os.write(fd, data)
            path = f"/proc/self/fd/{fd}"
            if os.path.exists(path):
                yield path
                return
        finally:
            os.close(fd)
    with tempfile.TemporaryDirectory(prefix="kgroup-tls-") as folder:
        path = os.path.join(folder, "store.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path


def _cryptography(what: str) -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:
        raise ConfigError(
            f"{what} is PKCS12, which kgroup reads with the cryptography package: install it "
            f"(pip install 'kgroup[tls]'), or use PEM files"
        ) from None
    return serialization, pkcs12


def _pkcs12_key_and_chain(path: str, password: str, key_password: str | None) -> tuple[str, str]:
    """A PKCS#12 key store's alias (its key entry's friendly name, as Java's) and its key and
    chain as PEM."""
    serialization, pkcs12 = _cryptography(f"The key store {path}")
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ConfigError(f"Failed to load SSL keystore {path} of type PKCS12: {e}") from None
    store = None
    problem: Exception | None = None
    # Java reads the key with ssl.key.password when set, else with the store's password.
    for pw in dict.fromkeys(p for p in (password, key_password) if p is not None):
        try:
            store = pkcs12.load_pkcs12(data, pw.encode())
            break
        except ValueError as e:
            problem = e
    if store is None:
        raise ConfigError(f"Failed to load SSL keystore {path} of type PKCS12: {problem}")
    if store.key is None or store.cert is None:
        raise ConfigError(
            f"Failed to load SSL keystore {path} of type PKCS12: it holds no private key entry"
        )
    pem = store.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    certs = [store.cert.certificate] + [c.certificate for c in store.additional_certs]
    alias = (store.cert.friendly_name or b"1").decode(errors="replace")
    return alias, (
        pem + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)
    ).decode()


def _truststore(ctx: ssl.SSLContext, get: Callable[[str], Any]) -> None:
    kind = str(get("ssl.truststore.type") or "JKS").upper()
    path = get("ssl.truststore.location")
    password = _password(get("ssl.truststore.password"))
    certs = get("ssl.truststore.certificates")
    # Kafka's DefaultSslEngineFactory.createTruststore, in its order.
    if certs is not None:
        if kind != "PEM":
            raise ConfigError(
                f"SSL trust store certs can be specified only for PEM, but trust store type is "
                f"{kind}."
            )
        if path is not None:
            raise ConfigError(
                "Both SSL trust store location and separate trust certificates are specified."
            )
        if password is not None:
            raise ConfigError("SSL trust store password cannot be specified for PEM format.")
        _load_trusted(ctx, str(certs), "the PEM trust store configs")
        return
    if kind == "PEM" and path is not None:
        if password is not None:
            raise ConfigError("SSL trust store password cannot be specified for PEM format.")
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"Failed to load PEM SSL keystore {path}: {e}") from None
        _load_trusted(ctx, text, f"PEM SSL truststore {path}")
        return
    if path is None and password is not None:
        raise ConfigError(
            "SSL trust store is not specified, but trust store password is specified."
        )
    if path is None:
        # Java's default trust store (the JVM's CA certificates): here the system's.
        ctx.load_default_certs(ssl.Purpose.CLIENT_AUTH)
        return
    if kind == "JKS":
        raise ConfigError(
            _JKS.format(path=path, stem=Path(path).with_suffix(""), key="ssl.truststore.type")
        )
    if kind != "PKCS12":
        raise ConfigError(f"Failed to load SSL keystore {path} of type {kind}: unknown type")
    serialization, pkcs12 = _cryptography(f"The trust store {path}")
    try:
        store = pkcs12.load_pkcs12(
            Path(path).read_bytes(), password.encode() if password is not None else None
        )
    except (OSError, ValueError) as e:
        raise ConfigError(f"Failed to load SSL keystore {path} of type PKCS12: {e}") from None
    found = ([store.cert] if store.cert is not None else []) + list(store.additional_certs)
    pems = "".join(c.certificate.public_bytes(serialization.Encoding.PEM).decode() for c in found)
    _load_trusted(ctx, pems, f"SSL truststore {path} of type PKCS12")


def _load_trusted(ctx: ssl.SSLContext, pem: str, what: str) -> None:
    if "-----BEGIN CERTIFICATE-----" not in pem:
        raise ConfigError(
            f"Failed to load {what}: At least one certificate expected, but none found"
        )
    try:
        ctx.load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError) as e:
        raise ConfigError(f"Failed to load {what}: {e}") from None


# -- the TLS layer of a connection ---------------------------------------------------------

#: HANDSHAKE_TIMEOUT_S is how long a client has to finish its TLS handshake.
HANDSHAKE_TIMEOUT_S = 60.0
#: RECEIVE_BUFFER is the size of a TLS connection's buffer for what the socket gives.
RECEIVE_BUFFER = 256 * 1024
#: WRITE_PIECE is how much of a response is encrypted at a time (16 TLS records).
WRITE_PIECE = 256 * 1024
_WANT = (ssl.SSLWantReadError, ssl.SSLWantWriteError)


class TlsProtocol(asyncio.BufferedProtocol):
    """TlsProtocol is the TLS layer of one connection of a TLS listener: it runs the handshake
    over the raw TCP transport, then hands the connection (a :class:`Connection`) a transport
    of its own that encrypts what it writes and gives it what the client sent, decrypted,
    through its ``get_buffer``/``buffer_updated``.

    The event loops' own TLS transports would do that too, but when a handshake fails (a client
    certificate that is missing or not trusted, a PLAINTEXT client) they close the connection
    without sending the TLS alert OpenSSL wrote: Kafka sends it, and Kafka's clients tell a
    refused certificate (Java's SslAuthenticationException, librdkafka's "alert bad
    certificate") from a broken connection by it. Not thread-safe: it lives on the broker's
    event loop."""

    def __init__(self, context: ssl.SSLContext, app: Connection) -> None:
        self._context = context
        self._app = app
        self._raw: asyncio.Transport | None = None
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._sslobj: ssl.SSLObject | None = None
        self._transport: _TlsTransport | None = None
        self._handshaking = True
        self._reading_paused = False
        self._closed = False
        self._timeout: asyncio.TimerHandle | None = None
        self.peer = "?"
        #: _received is where the event loop reads the client's bytes: the event loop's read
        #: buffer, shared by its connections (buffer_updated copies what came into the TLS
        #: object at once), so that an idle TLS connection holds no buffer of its own.
        self._received = app.state.limits.read_buffer.view

    # -- the raw transport's protocol --------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._raw = raw = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self._sslobj = self._context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._timeout = asyncio.get_running_loop().call_later(
            HANDSHAKE_TIMEOUT_S, self._handshake_timed_out
        )
        assert raw is not None

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._received

    def buffer_updated(self, nbytes: int) -> None:
        self._incoming.write(self._received[:nbytes])
        if self._handshaking:
            self._handshake()
        if not self._handshaking and not self._reading_paused:
            self._read()

    def eof_received(self) -> bool | None:
        self._incoming.write_eof()
        return False  # close

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        if self._timeout is not None:
            self._timeout.cancel()
        if self._transport is not None:
            self._app.connection_lost(exc)
        else:
            self._app.never_served()

    def pause_writing(self) -> None:
        if self._transport is not None:
            self._app.pause_writing()

    def resume_writing(self) -> None:
        if self._transport is not None:
            self._app.resume_writing()

    # -- TLS -------------------------------------------------------------------------------

    def _handshake(self) -> None:
        assert self._sslobj is not None
        try:
            self._sslobj.do_handshake()
        except _WANT:
            self._flush()
            return
        except (ssl.SSLError, OSError) as e:
            # The alert OpenSSL wrote goes out before the close, as Kafka's does.
            log.info("Failed authentication with %s (SSL handshake failed: %s)", self.peer, e)
            self._abandon()
            return
        self._handshaking = False
        if self._timeout is not None:
            self._timeout.cancel()
            self._timeout = None
        self._flush()
        self._transport = _TlsTransport(self)
        self._app.connection_made(self._transport)

    def _handshake_timed_out(self) -> None:
        if self._handshaking and not self._closed:
            log.info("Closing %s: no TLS handshake within %.0f s", self.peer, HANDSHAKE_TIMEOUT_S)
            self._abandon()

    def _abandon(self) -> None:
        """Send what is pending (an alert) and close."""
        self._flush()
        self._closed = True
        if self._raw is not None:
            self._raw.close()

    def _read(self) -> None:
        """Hand the connection what was received, decrypted, while it reads: each buffer it
        offers is filled with as many TLS records as there are before it is told."""
        sslobj = self._sslobj
        assert sslobj is not None
        app = self._app
        incoming = self._incoming
        # OpenSSL gives one TLS record per read, and a client's records are often small
        # (librdkafka writes one per buffer it holds, a couple of KB): this inner loop turns
        # once per record, so it does as little as it can. ssl.SSLObject's read and pending
        # are Python wrappers of its _ssl object's; with a buffer, read returns how much it
        # put there.
        raw_ssl = getattr(sslobj, "_sslobj", sslobj)
        read = cast("Callable[[int, memoryview], int]", raw_ssl.read)
        pending = raw_ssl.pending
        while not self._reading_paused and not self._closed:
            buf = app.get_buffer(-1)
            size = len(buf)
            got = 0
            more = True
            end: BaseException | None = None
            try:
                while got < size:
                    n = read(size - got, buf[got:] if got else buf)
                    if n == 0:
                        end = ssl.SSLZeroReturnError()
                        break
                    got += n
                    if not incoming.pending and not pending():
                        more = False  # all read: no need to catch OpenSSL's SSLWantReadError
                        break
            except _WANT:
                more = False
            except (ssl.SSLError, OSError) as e:
                end = e
            if got:
                app.buffer_updated(got)
            if end is not None:
                if isinstance(end, ssl.SSLZeroReturnError):
                    self._close()  # the client's close_notify (or EOF): it is done
                else:
                    log.info("Closing %s: %s", self.peer, end)
                    self._abandon()
                return
            if not more:
                break
        # A TLS 1.3 key update or session ticket may have written something.
        if self._outgoing.pending:
            self._flush()

    def _flush(self) -> None:
        if self._outgoing.pending and self._raw is not None and not self._raw.is_closing():
            self._raw.write(self._outgoing.read())

    # -- the connection's transport --------------------------------------------------------

    def _write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closed:
            return
        assert self._sslobj is not None
        if len(data) <= WRITE_PIECE:
            # Most responses: one piece, in as few steps as can be (a memory BIO takes all).
            try:
                self._sslobj.write(data)
            except (ssl.SSLError, OSError) as e:
                log.info("Closing %s: %s", self.peer, e)
                self._abandon()
                return
            raw = self._raw
            if raw is not None and not raw.is_closing():
                raw.write(self._outgoing.read())
            return
        view = memoryview(data)
        # A large response (a Fetch's records) is encrypted and handed on a piece at a time:
        # the encrypted copy never holds more than a piece, and stays in the CPU's cache.
        while view:
            try:
                n = self._sslobj.write(view[:WRITE_PIECE])
            except (ssl.SSLError, OSError) as e:
                log.info("Closing %s: %s", self.peer, e)
                self._abandon()
                return
            view = view[n:]
            self._flush()

    def _pause_reading(self) -> None:
        if not self._reading_paused:
            self._reading_paused = True
            if self._raw is not None and not self._closed:
                self._raw.pause_reading()

    def _resume_reading(self) -> None:
        if self._reading_paused:
            self._reading_paused = False
            if self._raw is not None and not self._closed:
                self._raw.resume_reading()
                # What was received before the pause is still in the BIO (or in OpenSSL).
                asyncio.get_running_loop().call_soon(self._read_pending)

    def _read_pending(self) -> None:
        if not self._reading_paused and not self._closed and not self._handshaking:
            self._read()

    def _close(self) -> None:
        """Close after what was written: a close_notify, then the TCP connection."""
        if self._closed:
            return
        self._closed = True
        if self._sslobj is not None:
            with contextlib.suppress(ssl.SSLError, OSError):
                self._sslobj.unwrap()
        self._flush()
        if self._raw is not None:
            self._raw.close()


class _TlsTransport(asyncio.Transport):
    """The transport a connection of a TLS listener writes to: TlsProtocol's, over the raw
    one."""

    def __init__(self, tls: TlsProtocol) -> None:
        super().__init__()
        self._tls = tls
        # A write goes straight to the TLS layer (one Python call less per response).
        self.write = tls._write  # type: ignore[method-assign]

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        tls = self._tls
        if name == "ssl_object":
            return tls._sslobj
        if name == "sslcontext":
            return tls._context
        if name == "peercert":
            return tls._sslobj.getpeercert() if tls._sslobj is not None else default
        if name == "cipher":
            return tls._sslobj.cipher() if tls._sslobj is not None else default
        assert tls._raw is not None
        return tls._raw.get_extra_info(name, default)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._tls._write(data)

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self._tls._write(data)

    def pause_reading(self) -> None:
        self._tls._pause_reading()

    def resume_reading(self) -> None:
        self._tls._resume_reading()

    def is_reading(self) -> bool:
        return not self._tls._reading_paused

    def close(self) -> None:
        self._tls._close()

    def abort(self) -> None:
        self._tls._closed = True
        if self._tls._raw is not None:
            self._tls._raw.abort()

    def is_closing(self) -> bool:
        return self._tls._closed

    def get_write_buffer_size(self) -> int:
        assert self._tls._raw is not None
        return self._tls._raw.get_write_buffer_size()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        assert self._tls._raw is not None
        self._tls._raw.set_write_buffer_limits(high, low)

    def can_write_eof(self) -> bool:
        return False
