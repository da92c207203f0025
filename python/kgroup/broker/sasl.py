"""SASL authentication on SASL_PLAINTEXT and SASL_SSL listeners, as Kafka's
SaslServerAuthenticator does it.

A connection on a SASL listener starts unauthenticated; its :class:`Authenticator` serves what
comes before authentication, and the broker's handlers see nothing until it is done::

    state HANDSHAKE_OR_VERSIONS: the first request.
      action: ApiVersions is answered (transition: HANDSHAKE); SaslHandshake below.
    state HANDSHAKE: only SaslHandshake.
      action: an enabled mechanism is answered with NONE and the enabled list (transition:
        AUTHENTICATE); any other with UNSUPPORTED_SASL_MECHANISM and the list, then the
        connection is closed (transition: FAILED).
    state AUTHENTICATE: the SASL exchange. After SaslHandshake v1 each token comes in a
      SaslAuthenticate request (another request: ILLEGAL_SASL_STATE, close); after v0 tokens
      are raw, size-prefixed, without a request header, and so are the answers.
      action: the mechanism's server takes the token; a failure answers SaslAuthenticate with
        SASL_AUTHENTICATION_FAILED and its message, then closes (transition: FAILED); the
        last token sets the principal ``User:<name>`` (transition: COMPLETE).
    state COMPLETE: requests go to the broker's handlers.
    state FAILED: the connection is closed.

Any other request before authentication closes the connection without an answer (Kafka's
InvalidRequestException "Unexpected Kafka request of type ... during SASL handshake"), and so
does a second ApiVersions.

KIP-368 re-authentication: with ``connections.max.reauth.ms`` above 0 (or an OAUTHBEARER token
that expires) a session has a lifetime, given to the client in SaslAuthenticate v1+. A
SaslHandshake on an authenticated connection with a lifetime starts re-authentication (at most
once a second), which runs the same exchange while the answers to earlier requests still go
out in order; it must keep the mechanism (another one: the connection is closed at the next
token) and the principal ("Cannot change principals during re-authentication ..."). Once a
session has expired, any request other than such a SaslHandshake closes the connection.

Mechanisms: PLAIN (users in the JAAS options ``user_<name>="<password>"``), SCRAM-SHA-256 and
SCRAM-SHA-512 (credentials from ``kgroup.broker.scram``), OAUTHBEARER (unsecured JWTs, Kafka's
default OAuthBearerUnsecuredValidatorCallbackHandler). Each enabled mechanism needs its JAAS
config, ``listener.name.<listener>.<mechanism lower>.sasl.jaas.config``, as a Kafka broker
does (``sasl.jaas.config`` alone is a client's setting).
"""

from __future__ import annotations

import base64
import binascii
import collections
import dataclasses
import hashlib
import hmac
import json
import logging
import re
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kgroup import errors, protocol
from kgroup.broker.config import ConfigError
from kgroup.broker.scram import MECHANISMS as SCRAM_MECHANISMS
from kgroup.broker.scram import MIN_ITERATIONS

if TYPE_CHECKING:
    from kgroup.broker.config import BrokerConfig
    from kgroup.broker.listeners import Listener
    from kgroup.broker.scram import ScramCredential, ScramCredentials

__all__ = [
    "MECHANISMS",
    "Authenticator",
    "JaasModule",
    "ListenerSasl",
    "parse_jaas",
    "sasl_listeners",
]

log = logging.getLogger("kgroup.broker")

#: MECHANISMS are the SASL mechanisms kgroup's broker serves.
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")

_API_VERSIONS = int(protocol.ApiKey.API_VERSIONS)
_SASL_HANDSHAKE = int(protocol.ApiKey.SASL_HANDSHAKE)
_SASL_AUTHENTICATE = int(protocol.ApiKey.SASL_AUTHENTICATE)


# -- JAAS configuration -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class JaasModule:
    """JaasModule is one login module entry of a JAAS config: its class, control flag and
    options."""

    login_module: str
    flag: str
    options: dict[str, str]


_FLAGS = ("required", "requisite", "sufficient", "optional")


def _jaas_tokens(text: str) -> list[tuple[str, str | None]]:
    """``text`` as Java's StreamTokenizer reads it for Kafka's JaasConfig: (kind, value) with
    kind ``word``, ``quoted``, ``number`` (no string value: Kafka refuses it as a value) or the
    character of an ordinary one (``=``, ``;``). Comments ``//`` and ``/* */`` are skipped."""
    out: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c <= " ":
            i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == "/":
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif c in "\"'":
            j, buf = i + 1, []
            while j < n and text[j] != c and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n:
                    j += 1
                    buf.append({"n": "\n", "t": "\t", "r": "\r"}.get(text[j], text[j]))
                else:
                    buf.append(text[j])
                j += 1
            out.append(("quoted", "".join(buf)))
            i = j + 1
        elif c.isdigit() or c in ".-":
            j = i + 1
            while j < n and (text[j].isdigit() or text[j] == "."):
                j += 1
            out.append(("number", None))
            i = j
        elif c.isalpha() or c in "_$" or ord(c) >= 160:
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "._-$" or ord(text[j]) >= 160):
                j += 1
            out.append(("word", text[i:j]))
            i = j
        else:
            out.append((c, None))
            i += 1
    return out


def parse_jaas(text: str) -> list[JaasModule]:
    """The login modules of a JAAS config string
    (``org.apache...PlainLoginModule required user_alice="secret";``), as Kafka's JaasConfig
    parses ``sasl.jaas.config``; ConfigError with Kafka's message if it cannot."""
    tokens = _jaas_tokens(text)
    modules: list[JaasModule] = []
    i = 0

    def value(k: int) -> str | None:
        return tokens[k][1] if k < len(tokens) else None

    while i < len(tokens):
        module = value(i) or ""
        i += 1
        if i >= len(tokens):
            raise ConfigError("Login module control flag not specified in JAAS config")
        flag = value(i)
        if flag is None:
            raise ConfigError("Login module control flag is not available in the JAAS config")
        if flag.lower() not in _FLAGS:
            raise ConfigError(f"Invalid login module control flag '{flag}' in JAAS config")
        i += 1
        options: dict[str, str] = {}
        while i < len(tokens) and tokens[i][0] != ";":
            key = value(i)
            if i + 2 >= len(tokens) or tokens[i + 1][0] != "=" or value(i + 2) is None:
                raise ConfigError(f"Value not specified for key '{key}' in JAAS config")
            options[str(key)] = str(value(i + 2))
            i += 3
        if i >= len(tokens):
            raise ConfigError("JAAS config entry not terminated by semi-colon")
        i += 1
        modules.append(JaasModule(module, flag.lower(), options))
    if not modules:
        raise ConfigError("Login module not specified in JAAS config")
    return modules


# -- listener settings --------------------------------------------------------------------


def _java_string_hash(text: str) -> int:
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def java_hash_set_order(items: list[str]) -> list[str]:
    """``items`` in the order Java's ``new ArrayList<>(new HashSet<>(items))`` gives them: the
    order SaslHandshake lists a Kafka broker's enabled mechanisms in (SaslServerAuthenticator
    copies sasl.enabled.mechanisms through a HashSet). By bucket (the spread String.hashCode
    modulo the table size), then in insertion order within a bucket."""
    unique = list(dict.fromkeys(items))
    size = 16
    while size < int(len(unique) / 0.75) + 1:
        size *= 2

    def bucket(item: str) -> int:
        h = _java_string_hash(item)
        return (h ^ (h >> 16)) & (size - 1)

    return sorted(unique, key=bucket)  # stable: insertion order within a bucket


@dataclasses.dataclass
class ListenerSasl:
    """ListenerSasl is one SASL listener's settings: its enabled mechanisms (in the order
    a Kafka broker's SaslHandshake lists them: see ``java_hash_set_order``), each one's JAAS
    options and session lifetime (``connections.max.reauth.ms``, 0: none), the largest
    frame taken before authentication, and the SCRAM credentials."""

    listener: str
    mechanisms: list[str]
    options: dict[str, dict[str, str]]
    max_reauth_ms: dict[str, int]
    max_receive_size: int
    scram: ScramCredentials
    #: counts are what happened on the listener: ``authenticated``, ``reauthenticated``,
    #: ``failed``, ``expired`` (connections closed because their session ended).
    counts: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)


def _jaas_for(config: BrokerConfig, listener: Listener, mechanism: str) -> dict[str, str]:
    """The options of ``mechanism``'s login module on ``listener``: from
    ``listener.name.<l>.<mechanism>.sasl.jaas.config``, required as Kafka's
    JaasContext.loadServerContext requires it (kgroup has no static JAAS file)."""
    raw = config.for_listener(listener.name, f"{mechanism.lower()}.sasl.jaas.config")
    if raw is None:
        name = listener.name.lower()
        raise ConfigError(
            f"Could not find a 'KafkaServer' or '{name}.KafkaServer' entry in the JAAS "
            f"configuration: set listener.name.{name}.{mechanism.lower()}.sasl.jaas.config "
            f"for the {mechanism} mechanism"
        )
    modules = parse_jaas(str(raw))
    if len(modules) != 1:
        raise ConfigError(
            f"JAAS config property contains {len(modules)} login modules, should be 1 module"
        )
    return modules[0].options


def sasl_listeners(
    config: BrokerConfig, listeners: list[Listener], scram: ScramCredentials
) -> dict[str, ListenerSasl]:
    """The settings of each SASL listener, by listener name; ConfigError (at start) for
    what the broker cannot serve: only GSSAPI enabled (Kafka's default; kgroup has no
    Kerberos), a mechanism kgroup does not know, a missing or malformed JAAS config."""
    out: dict[str, ListenerSasl] = {}
    for lst in listeners:
        if not lst.uses_sasl:
            continue
        enabled = [str(m).strip() for m in config.for_listener(lst.name, "sasl.enabled.mechanisms")]
        enabled = [m for m in enabled if m]
        served = [m for m in enabled if m != "GSSAPI"]
        if not served:
            raise ConfigError(
                f"Listener {lst.name} uses {lst.security_protocol} but sasl.enabled.mechanisms "
                f"is {','.join(enabled) or 'empty'}: kgroup has no GSSAPI (Kerberos); enable "
                f"one or more of {', '.join(MECHANISMS)}"
            )
        unknown = [m for m in served if m not in MECHANISMS]
        if unknown:
            raise ConfigError(
                f"Unsupported SASL mechanism {unknown[0]} in sasl.enabled.mechanisms: kgroup "
                f"serves {', '.join(MECHANISMS)}"
            )
        if "GSSAPI" in enabled:
            log.warning(
                "sasl.enabled.mechanisms on listener %s names GSSAPI, which kgroup does not "
                "serve: it is not offered",
                lst.name,
            )
        options = {m: _jaas_for(config, lst, m) for m in served}
        reauth: dict[str, int] = {}
        for m in served:
            own = config.for_listener(lst.name, f"{m.lower()}.connections.max.reauth.ms")
            value = (
                own
                if own is not None
                else config.for_listener(lst.name, "connections.max.reauth.ms")
            )
            reauth[m] = int(value or 0)
        if "OAUTHBEARER" in options:
            _oauth_settings(options["OAUTHBEARER"])  # refuse bad options at start
        out[lst.name] = ListenerSasl(
            listener=lst.name,
            mechanisms=java_hash_set_order(served),
            options=options,
            max_reauth_ms=reauth,
            max_receive_size=int(config.for_listener(lst.name, "sasl.server.max.receive.size")),
            scram=scram,
        )
    return out


# -- mechanisms ---------------------------------------------------------------------------


class AuthenticationFailed(Exception):
    """The client failed to authenticate; its message goes to the client as it is (Kafka's
    SaslAuthenticationException)."""


class SaslError(Exception):
    """The exchange failed; the client is told only that its credentials were invalid, never
    why (Kafka's SaslException: the reason may tell whether the user exists)."""


class _Mechanism:
    """One SASL server exchange (Java's SaslServer)."""

    name = ""
    complete = False
    #: authorization_id is the authenticated user, once complete.
    authorization_id = ""
    #: credential_expiry_ms is when the credential expires (epoch ms; OAUTHBEARER tokens), or
    #: None.
    credential_expiry_ms: int | None = None

    def evaluate(self, token: bytes) -> bytes:
        raise NotImplementedError


class _Plain(_Mechanism):
    """SASL/PLAIN (RFC 4616) against the JAAS options ``user_<name>``, as Kafka's
    PlainSaslServer with its PlainServerCallbackHandler."""

    name = "PLAIN"

    def __init__(self, options: dict[str, str]) -> None:
        self._options = options

    def evaluate(self, token: bytes) -> bytes:
        parts = token.decode("utf-8", "replace").split("\x00", 3)
        if len(parts) != 3:
            raise AuthenticationFailed(
                f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(parts), 4)}"
            )
        authzid, user, password = parts
        if not user:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        expected = self._options.get(f"user_{user}")
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is "
                "different from username"
            )
        self.authorization_id = user
        self.complete = True
        return b""


# RFC 5802's message grammar, as Kafka's ScramMessages matches it.
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_B64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?:m={_VALUE},)?n=(?P<name>{_SASLNAME}),"
    rf"r=(?P<nonce>{_PRINTABLE})(?P<ext>{_EXTENSIONS})"
)
_CLIENT_FINAL = re.compile(
    rf"(?P<bare>c=(?P<channel>{_B64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS}),p=(?P<proof>{_B64})"
)


def _scram_username(sasl_name: str) -> str:
    """A SCRAM saslname as the user name: ``=2C`` is a comma, ``=3D`` an equals sign."""
    name = sasl_name.replace("=2C", ",")
    if "=" in name.replace("=3D", ""):
        raise SaslError(f"Invalid username: {sasl_name}")
    return name.replace("=3D", "=")


class _Scram(_Mechanism):
    """SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677), server side, as Kafka's
    ScramSaslServer: channel binding 'n' only, extensions ignored (``tokenauth``, delegation
    tokens, kgroup has none: refused)."""

    def __init__(self, name: str, credentials: ScramCredentials) -> None:
        self.name = name
        self._algo = SCRAM_MECHANISMS[name][0]
        self._credentials = credentials
        self._state = "first"
        self._cred: ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""

    def evaluate(self, token: bytes) -> bytes:
        try:
            return self._evaluate(token)
        except (SaslError, AuthenticationFailed):
            self._state = "failed"
            self._cred = None
            raise

    def _evaluate(self, token: bytes) -> bytes:
        message = token.decode("utf-8", "replace")
        if self._state == "first":
            m = _CLIENT_FIRST.fullmatch(message)
            if m is None:
                raise SaslError(f"Invalid SCRAM client first message format: {message}")
            extensions = dict(kv.split("=", 1) for kv in m.group("ext")[1:].split(",") if kv)
            user = _scram_username(m.group("name"))
            if extensions.get("tokenauth", "").lower() == "true":
                raise SaslError(f"Token Authentication failed: Invalid tokenId : {user}")
            cred = self._credentials.get(user, self.name)
            if cred is None:
                raise SaslError("Authentication failed: Invalid user credentials")
            authzid = m.group("authzid") or ""
            if authzid and authzid != user:
                raise AuthenticationFailed(
                    "Authentication failed: Client requested an authorization id that is "
                    "different from username"
                )
            if cred.iterations < MIN_ITERATIONS:
                raise SaslError(
                    f"Iterations {cred.iterations} is less than the minimum {MIN_ITERATIONS} "
                    f"for {self.name}"
                )
            self.authorization_id = user
            self._cred = cred
            # Kafka's server nonce: 130 random bits in base 36.
            self._nonce = m.group("nonce") + _base36(secrets.randbits(130))
            # The bare message is what follows the GS2 header ("n,[a=authzid],").
            self._client_first_bare = message.split(",", 2)[2]
            salt = base64.b64encode(cred.salt).decode()
            self._server_first = f"r={self._nonce},s={salt},i={cred.iterations}"
            self._state = "final"
            return self._server_first.encode()
        if self._state == "final":
            m = _CLIENT_FINAL.fullmatch(message)
            if m is None:
                raise SaslError(f"Invalid SCRAM client final message format: {message}")
            if m.group("nonce") != self._nonce:
                raise SaslError("Invalid client nonce in the final client message.")
            assert self._cred is not None
            auth_message = f"{self._client_first_bare},{self._server_first},{m.group('bare')}"
            signature = hmac.digest(self._cred.stored_key, auth_message.encode(), self._algo)
            proof = base64.b64decode(m.group("proof"))
            if len(proof) != len(signature):
                raise SaslError("Invalid client credentials")
            client_key = bytes(a ^ b for a, b in zip(signature, proof, strict=True))
            if not hmac.compare_digest(
                hashlib.new(self._algo, client_key).digest(), self._cred.stored_key
            ):
                raise SaslError("Invalid client credentials")
            server_sig = hmac.digest(self._cred.server_key, auth_message.encode(), self._algo)
            self._cred = None
            self._state = "complete"
            self.complete = True
            return b"v=" + base64.b64encode(server_sig)
        raise errors.IllegalSaslState(f"Unexpected challenge in Sasl server state {self._state}")


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(digits[r])
    return "".join(reversed(out)) or "0"


# OAUTHBEARER's client initial response (RFC 7628), as Kafka's
# OAuthBearerClientInitialResponse matches it.
_OAUTH_KV = r"(?:[A-Za-z]+=[\x21-\x7e \t\r\n]+\x01)*"
_OAUTH_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_OAUTH_KV})\x01", re.DOTALL
)
_OAUTH_AUTH = re.compile(r"(?P<scheme>\w+)[ ]+(?P<token>[-_~+/.a-zA-Z0-9]+=*)")


@dataclasses.dataclass(frozen=True)
class _OAuthSettings:
    principal_claim: str
    scope_claim: str
    required_scope: list[str]
    clock_skew_ms: int


def _oauth_settings(options: dict[str, str]) -> _OAuthSettings:
    """The unsecured validator's options (OAuthBearerUnsecuredValidatorCallbackHandler)."""
    skew_raw = options.get("unsecuredValidatorAllowableClockSkewMs", "").strip()
    try:
        skew = int(skew_raw) if skew_raw else 0
    except ValueError as e:
        raise ConfigError(f'For input string: "{skew_raw}"') from e
    if skew < 0:
        raise ConfigError(f"Allowable clock skew millis must not be negative: {skew_raw}")
    return _OAuthSettings(
        principal_claim=options.get("unsecuredValidatorPrincipalClaimName", "").strip() or "sub",
        scope_claim=options.get("unsecuredValidatorScopeClaimName", "").strip() or "scope",
        required_scope=options.get("unsecuredValidatorRequiredScope", "").split(),
        clock_skew_ms=skew,
    )


class _InvalidToken(Exception):
    """The token does not validate; ``scope`` is the required scope it lacks, if that is why."""

    def __init__(self, message: str, scope: str | None = None) -> None:
        super().__init__(message)
        self.scope = scope


def _jwt_part(part: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError) as e:
        raise _InvalidToken("malformed Base64 URL encoded value") from e
    try:
        value = json.loads(raw)
    except ValueError as e:
        raise _InvalidToken("malformed JSON") from e
    if not isinstance(value, dict):
        raise _InvalidToken("malformed JSON")
    return value


def _number(claims: dict[str, Any], name: str) -> float | None:
    v = claims.get(name)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _InvalidToken(f"The '{name}' claim was not of type Number: {type(v).__name__}")
    return float(v)


def validate_unsecured_jwt(token: str, settings: _OAuthSettings, now_ms: int) -> tuple[str, int]:
    """Validate an unsecured JWS (``alg`` none, no signature) as Kafka's default validator:
    the principal claim, ``iat`` and ``exp`` within the allowed clock skew, ``exp`` after
    ``iat``, the required scope. Returns (principal, expiry in epoch ms)."""
    if ".." in token:
        raise _InvalidToken("Malformed compact serialization contains '..'")
    parts = token.split(".")
    if len(parts) != 3:
        raise _InvalidToken(
            "Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded "
            "values"
        )
    header, claims = _jwt_part(parts[0]), _jwt_part(parts[1])
    if header.get("alg") != "none":
        raise _InvalidToken("Unsecured JWS must have 'none' for an algorithm")
    if parts[2]:
        raise _InvalidToken("Unsecured JWS must not contain a digital signature")
    scope_value = claims.get(settings.scope_claim)
    if isinstance(scope_value, str):
        scope = {scope_value.strip()} if scope_value.strip() else set()
    elif isinstance(scope_value, list):
        scope = {str(s).strip() for s in scope_value if str(s).strip()}
    elif scope_value is None:
        scope = set()
    else:
        raise _InvalidToken(f"The '{settings.scope_claim}' claim was not of type List")
    exp = _number(claims, "exp")
    if exp is None:
        raise _InvalidToken("No expiration time in JWT")
    principal = claims.get(settings.principal_claim)
    if principal is not None and not isinstance(principal, str):
        raise _InvalidToken(f"The '{settings.principal_claim}' claim was not of type String")
    if not principal or not principal.strip():
        raise _InvalidToken(f"No principal name in JWT claim: {settings.principal_claim}")
    iat = _number(claims, "iat")
    exp_ms = round(exp * 1000)
    skew = settings.clock_skew_ms
    if iat is not None and round(iat * 1000) > now_ms + skew:
        raise _InvalidToken("The Issued At value was after the indicated time plus skew")
    if now_ms - skew >= exp_ms:
        raise _InvalidToken("The indicated time is past the Expiration Time value")
    if iat is not None and exp_ms <= round(iat * 1000):
        raise _InvalidToken("The Expiration Time was not after the Issued At time")
    for required in settings.required_scope:
        if required not in scope:
            raise _InvalidToken(
                f"The provided scope was missing a required scope ({required})",
                "[" + ", ".join(settings.required_scope) + "]",
            )
    return principal, exp_ms


class _OAuthBearer(_Mechanism):
    """OAUTHBEARER (RFC 7628) with unsecured JWTs, as Kafka's OAuthBearerSaslServer with its
    default validator: a token that does not validate is answered with the JSON error
    challenge (``{"status":"invalid_token"}``); the client's ``%x01`` after it fails the
    exchange with that JSON as the message."""

    name = "OAUTHBEARER"

    def __init__(self, options: dict[str, str]) -> None:
        self._settings = _oauth_settings(options)
        self._error: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        if token == b"\x01" and self._error is not None:
            raise AuthenticationFailed(self._error)
        self._error = None
        message = token.decode("utf-8", "replace")
        m = _OAUTH_FIRST.fullmatch(message)
        if m is None:
            raise SaslError("Invalid OAUTHBEARER client first message")
        props: dict[str, str] = {}
        for kv in m.group("kvpairs").split("\x01"):
            if kv:
                k, _, v = kv.partition("=")
                props[k] = v
        auth = props.pop("auth", None)
        if auth is None:
            raise SaslError("Invalid OAUTHBEARER client first message: 'auth' not specified")
        am = _OAUTH_AUTH.fullmatch(auth)
        if am is None:
            raise SaslError("Invalid OAUTHBEARER client first message: invalid 'auth' format")
        if am.group("scheme").lower() != "bearer":
            raise SaslError(
                f"Invalid scheme in OAUTHBEARER client first message: {am.group('scheme')}"
            )
        try:
            principal, expiry = validate_unsecured_jwt(
                am.group("token"), self._settings, int(time.time() * 1000)
            )
        except _InvalidToken as e:
            log.debug("OAUTHBEARER token refused: %s", e)
            status = "insufficient_scope" if e.scope is not None else "invalid_token"
            error = f'{{"status":"{status}"'
            if e.scope is not None:
                error += f', "scope":"{e.scope}"'
            self._error = error + "}"
            return self._error.encode()
        authzid = m.group("authzid") or ""
        if authzid and authzid != principal:
            raise AuthenticationFailed(
                f"Authentication failed: Client requested an authorization id ({authzid}) that "
                f"is different from the token's principal name ({principal})"
            )
        self.authorization_id = principal
        self.credential_expiry_ms = expiry
        self.complete = True
        return b""


def _mechanism(name: str, settings: ListenerSasl) -> _Mechanism:
    if name == "PLAIN":
        return _Plain(settings.options[name])
    if name in SCRAM_MECHANISMS:
        return _Scram(name, settings.scram)
    return _OAuthBearer(settings.options[name])


# -- the connection's state machine -------------------------------------------------------

HANDSHAKE_OR_VERSIONS = "HANDSHAKE_OR_VERSIONS_REQUEST"
HANDSHAKE = "HANDSHAKE_REQUEST"
AUTHENTICATE = "AUTHENTICATE"
REAUTH_BAD_MECHANISM = "REAUTH_BAD_MECHANISM"
COMPLETE = "COMPLETE"
FAILED = "FAILED"

#: MIN_REAUTH_INTERVAL: a connection re-authenticates at most once a second (Kafka's
#: KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS); a SaslHandshake sooner is an ordinary
#: request (ILLEGAL_SASL_STATE).
MIN_REAUTH_INTERVAL = 1.0


class Authenticator:
    """Authenticator is one SASL connection's authentication (see the module doc). The
    connection gives it every frame while :attr:`authenticating`; it answers through
    ``respond`` (a whole frame, in the connection's order), closes through ``close``, and
    serves ApiVersions through ``api_versions`` (the broker's handler)."""

    def __init__(
        self,
        settings: ListenerSasl,
        respond: Callable[[bytes], None],
        close: Callable[[str], None],
        api_versions: Callable[[protocol.Request | None], Any],
    ) -> None:
        self.settings = settings
        self._respond = respond
        self._close = close
        self._api_versions = api_versions
        self.state = HANDSHAKE_OR_VERSIONS
        #: raw: SaslHandshake v0 was used: tokens travel without request headers.
        self.raw = False
        self.mechanism = ""
        self._server: _Mechanism | None = None
        #: principal is the authenticated principal (``User:<name>``), once complete.
        self.principal: str | None = None
        #: expires_at is when the session expires (time.monotonic), or None: never.
        self.expires_at: float | None = None
        self._reauth_started = 0.0
        self._previous: tuple[str, str] | None = (
            None  # (mechanism, principal) when re-authenticating
        )
        self._bad_mechanism_message = ""

    @property
    def authenticating(self) -> bool:
        """Whether frames go to the authenticator (before authentication, or re-authenticating)."""
        return self.state not in (COMPLETE, FAILED)

    @property
    def raw_tokens(self) -> bool:
        """Whether the next frame is a raw SASL token (after SaslHandshake v0), not a request."""
        return self.raw and self.state == AUTHENTICATE

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now > self.expires_at

    def maybe_reauthenticate(self, frame: bytes, now: float) -> bool:
        """A SaslHandshake on the authenticated connection: start re-authentication with it if
        the session has a lifetime and the last one started over a second ago (Kafka's
        KafkaChannel.maybeBeginServerReauthentication); False: it is an ordinary request."""
        if self.expires_at is None or self.principal is None:
            return False
        if self._reauth_started and now - self._reauth_started < MIN_REAUTH_INTERVAL:
            return False
        self._reauth_started = now
        self._previous = (self.mechanism, self.principal)
        self._server = None
        self.state = HANDSHAKE
        self.receive(frame)
        return True

    def _what(self) -> str:
        return "re-authentication" if self._previous else "authentication"

    def _fail(self, why: str, frame: bytes | None = None) -> None:
        self.state = FAILED
        self.settings.counts["failed"] += 1
        if frame is not None:
            self._respond(frame)
        self._close(why)

    def receive(self, frame: bytes) -> None:
        """Serve one frame received while authenticating."""
        if self.state == REAUTH_BAD_MECHANISM:
            self._fail(self._bad_mechanism_message)
            return
        if self.state == AUTHENTICATE and self.raw:
            self._token(frame, None)
            return
        try:
            header = protocol.decode_request_header(frame)
        except errors.DecodeError as e:
            self._fail(f"Invalid request, not a Kafka request during SASL {self._what()}: {e}")
            return
        api = header.api_key
        if self.state == AUTHENTICATE:
            if api != _SASL_AUTHENTICATE:
                name = protocol.API_NAMES.get(api, str(api))
                message = f"Unexpected Kafka request of type {name} during SASL authentication."
                answer = None
                if api == _SASL_HANDSHAKE:
                    answer = protocol.encode_response(
                        header, {"error_code": errors.IllegalSaslState.code, "mechanisms": []}
                    )
                self._fail(message, answer)
                return
            try:
                request = protocol.decode_request(frame, strict=False)
            except errors.DecodeError as e:
                self._fail(str(e))
                return
            self._token(bytes(request.body.auth_bytes), request)
            return
        if api not in (_API_VERSIONS, _SASL_HANDSHAKE):
            name = protocol.API_NAMES.get(api, str(api))
            self._fail(f"Unexpected Kafka request of type {name} during SASL handshake.")
            return
        if api == _API_VERSIONS:
            if self.state != HANDSHAKE_OR_VERSIONS:
                self._fail(
                    f"Unexpected ApiVersions request received during SASL {self._what()} "
                    f"state {self.state}"
                )
                return
            self.state = HANDSHAKE
            self._api_versions_frame(frame, header)
            return
        try:
            request = protocol.decode_request(frame, strict=False)
        except errors.DecodeError as e:
            self._fail(str(e))
            return
        self._handshake(request)

    def _api_versions_frame(self, frame: bytes, header: protocol.RequestHeader) -> None:
        try:
            request = protocol.decode_request(frame, strict=False)
        except errors.UnsupportedApiVersion:
            # As the broker answers it: v0, UNSUPPORTED_VERSION, the ranges; the client retries.
            self.state = HANDSHAKE_OR_VERSIONS
            self._respond(protocol.encode_response(header, self._api_versions(None), version=0))
            return
        except errors.DecodeError as e:
            self._fail(str(e))
            return
        answer = self._api_versions(request)
        if answer.get("error_code"):
            # Refused (INVALID_REQUEST): Kafka lets the client send ApiVersions again.
            self.state = HANDSHAKE_OR_VERSIONS
        self._respond(protocol.encode_response(request, answer))

    def _handshake(self, request: protocol.Request) -> None:
        mechanism = str(request.body.mechanism)
        enabled = self.settings.mechanisms
        self.raw = request.api_version == 0
        if mechanism not in enabled:
            answer = protocol.encode_response(
                request,
                {"error_code": errors.UnsupportedSaslMechanism.code, "mechanisms": enabled},
            )
            self._fail(f"Unsupported SASL mechanism {mechanism}", answer)
            return
        self._respond(protocol.encode_response(request, {"error_code": 0, "mechanisms": enabled}))
        if self._previous is not None and mechanism != self._previous[0]:
            self._bad_mechanism_message = (
                f"SASL mechanism '{mechanism}' requested by client is not supported for "
                f"re-authentication of mechanism '{self._previous[0]}'"
            )
            self.state = REAUTH_BAD_MECHANISM
            return
        self.mechanism = mechanism
        self._server = _mechanism(mechanism, self.settings)
        self.state = AUTHENTICATE

    def _token(self, token: bytes, request: protocol.Request | None) -> None:
        server = self._server
        assert server is not None
        try:
            answer = server.evaluate(token)
            lifetime_ms = 0
            if server.complete:
                principal = f"User:{server.authorization_id}"
                if self._previous is not None and principal != self._previous[1]:
                    old, new = self._previous[1], principal
                    raise AuthenticationFailed(
                        "Cannot change principals during re-authentication from "
                        f"{old.replace(':', '.', 1)}: {new.replace(':', '.', 1)}"
                    )
                lifetime_ms = self._session_lifetime(server)
        except AuthenticationFailed as e:
            self._token_failed(str(e), request)
            return
        except SaslError as e:
            log.debug("SASL %s %s failed: %s", self.mechanism, self._what(), e)
            self._token_failed(
                f"Authentication failed during {self._what()} due to invalid credentials with "
                f"SASL mechanism {self.mechanism}",
                request,
            )
            return
        except errors.IllegalSaslState as e:
            self._fail(str(e))
            return
        if request is None:
            self._respond(len(answer).to_bytes(4, "big") + answer)
        else:
            self._respond(
                protocol.encode_response(
                    request,
                    {
                        "error_code": 0,
                        "error_message": "",  # Kafka leaves it at its default, "", not null
                        "auth_bytes": answer,
                        "session_lifetime_ms": lifetime_ms,
                    },
                )
            )
        if server.complete:
            self.settings.counts["reauthenticated" if self._previous else "authenticated"] += 1
            self.principal = f"User:{server.authorization_id}"
            self.state = COMPLETE
            self._previous = None
            self._server = None

    def _token_failed(self, message: str, request: protocol.Request | None) -> None:
        answer = None
        if request is not None:
            answer = protocol.encode_response(
                request,
                {
                    "error_code": errors.SaslAuthenticationFailed.code,
                    "error_message": message,
                    "auth_bytes": b"",
                },
            )
        self._fail(f"SASL {self.mechanism} {self._what()} failed: {message}", answer)

    def _session_lifetime(self, server: _Mechanism) -> int:
        """The session's lifetime in ms (0: none) and its expiry, as Kafka's
        calcCompletionTimesAndReturnSessionLifetimeMs: connections.max.reauth.ms, capped by
        when the credential expires."""
        now_ms = int(time.time() * 1000)
        max_reauth = self.settings.max_reauth_ms.get(self.mechanism, 0)
        expiry = server.credential_expiry_ms
        if expiry is None and max_reauth <= 0:
            self.expires_at = None
            return 0
        if expiry is None:
            lifetime = max(0, max_reauth)
        elif max_reauth <= 0:
            lifetime = max(0, expiry - now_ms)
        else:
            lifetime = max(0, min(expiry - now_ms, max_reauth))
        self.expires_at = time.monotonic() + lifetime / 1000
        return lifetime
