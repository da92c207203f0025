"""connection: one TCP connection from a client to one broker.

A :class:`Connection` speaks Kafka's framed protocol with kgroup's codec: it negotiates the
versions with ApiVersions when it opens (KIP-35; a broker that does not know our ApiVersions
version answers v0 with its ranges, and we ask again at a version both know), pipelines requests
(many in flight, answered in order), and matches responses by correlation id. A request that
gets no answer within its timeout closes the connection, as Java's NetworkClient does, and every
request in flight fails with :class:`~kgroup.errors.NetworkException` (retriable). Runs on the
client's event loop only.

With a :class:`~kgroup.client.security.Security` that asks for it, the connection speaks TLS
from its first byte, and authenticates with SASL after ApiVersions, as Java's
SaslClientAuthenticator does: SaslHandshake v1, then the mechanism's tokens in SaslAuthenticate
requests. When the broker's answer gives the session a lifetime (KIP-368), the connection
authenticates again before it ends, at a random 85-95% of it as Java's client does; requests
sent meanwhile wait and go out, in order, once it has.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import socket
import ssl
import struct
from typing import TYPE_CHECKING, Any

from kgroup._native import __version__
from kgroup.client.security import SslAuthenticationFailed
from kgroup.errors import (
    DecodeError,
    IllegalSaslState,
    KafkaError,
    NetworkException,
    RequestTimedOut,
    UnsupportedSaslMechanism,
    UnsupportedVersion,
    error_for_code,
)
from kgroup.protocol import API_NAMES, API_VERSIONS, ApiKey, decode_response, encode_request

if TYPE_CHECKING:
    from kgroup.client.security import Security

__all__ = ["Connection", "choose_version"]

_SIZE = struct.Struct(">i")
_SASL_APIS = (ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE)
#: _CLIENT_THROTTLES are the response versions from which the client, not the broker, holds
#: back after a throttle_time_ms (KIP-219: the broker answers at once and then mutes the
#: connection; the client sends nothing more to that broker until the time is over), by api
#: key: Java's AbstractResponse.shouldClientThrottle of each response in Kafka 4.1 (of the apis
#: kgroup speaks). An api not named here is never throttled by the client.
_CLIENT_THROTTLES: dict[int, int] = {
    ApiKey.PRODUCE: 6,
    ApiKey.FETCH: 8,
    ApiKey.LIST_OFFSETS: 3,
    ApiKey.METADATA: 6,
    ApiKey.OFFSET_COMMIT: 4,
    ApiKey.OFFSET_FETCH: 4,
    ApiKey.FIND_COORDINATOR: 2,
    ApiKey.JOIN_GROUP: 3,
    ApiKey.HEARTBEAT: 2,
    ApiKey.LEAVE_GROUP: 2,
    ApiKey.SYNC_GROUP: 2,
    ApiKey.DESCRIBE_GROUPS: 2,
    ApiKey.LIST_GROUPS: 2,
    ApiKey.API_VERSIONS: 2,
    ApiKey.CREATE_TOPICS: 3,
    ApiKey.DELETE_TOPICS: 2,
    ApiKey.DELETE_RECORDS: 1,
    ApiKey.INIT_PRODUCER_ID: 1,
    ApiKey.ADD_PARTITIONS_TO_TXN: 1,
    ApiKey.ADD_OFFSETS_TO_TXN: 1,
    ApiKey.END_TXN: 1,
    ApiKey.TXN_OFFSET_COMMIT: 1,
    ApiKey.DESCRIBE_ACLS: 1,
    ApiKey.CREATE_ACLS: 1,
    ApiKey.DELETE_ACLS: 1,
    ApiKey.DESCRIBE_CONFIGS: 2,
    ApiKey.ALTER_CONFIGS: 1,
    ApiKey.DESCRIBE_LOG_DIRS: 1,
    ApiKey.CREATE_PARTITIONS: 1,
    ApiKey.DELETE_GROUPS: 1,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: 0,
    ApiKey.OFFSET_DELETE: 0,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: 0,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: 0,
}
_ids = itertools.count(1)


def choose_version(api_key: int, broker: tuple[int, int] | None, highest: int | None = None) -> int:
    """The highest version of ``api_key`` that kgroup's codec and the broker both speak (and at
    most ``highest``). Raises :class:`UnsupportedVersion` when there is none."""
    ours = API_VERSIONS[api_key]
    lo, hi = ours
    if broker is not None:
        lo, hi = max(lo, broker[0]), min(hi, broker[1])
    if highest is not None:
        hi = min(hi, highest)
    if hi < lo:
        raise UnsupportedVersion(
            f"{API_NAMES.get(api_key, api_key)}: the broker serves versions {broker}, "
            f"kgroup speaks {ours}"
        )
    return hi


class Connection:
    """Connection is an open, version-negotiated connection to one broker. Not thread-safe:
    use it from the client's event loop."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        node_id: int,
        client_id: str,
        request_timeout_ms: int,
        security: Security | None = None,
    ) -> None:
        self.host, self.port, self.node_id = host, port, node_id
        self.security = security
        #: authentications completed on this connection (the first one, then re-authentications)
        self.authentications = 0
        #: the broker's session lifetime from the last SaslAuthenticate answer, in ms (0: none)
        self.session_lifetime_ms = 0
        # Frames held back while the connection re-authenticates or the broker's throttle
        # lasts (None: neither).
        self._held: list[bytes] | None = None
        self._reauthenticating = False
        #: throttled_until is when the broker's last throttle ends (the event loop's time).
        self.throttled_until = 0.0
        self._throttle_timer: asyncio.TimerHandle | None = None
        self._reauth_timer: asyncio.TimerHandle | None = None
        self.client_id = client_id
        self.request_timeout = request_timeout_ms / 1000.0
        self.versions: dict[int, tuple[int, int]] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, tuple[int, int, asyncio.Future[Any]]] = {}
        self._corr = itertools.count(next(_ids) * 1000)
        self._read_task: asyncio.Task[None] | None = None
        self._reauth_task: asyncio.Task[None] | None = None
        self._closed = False
        self.error: BaseException | None = None

    def __repr__(self) -> str:
        return f"Connection(node {self.node_id}, {self.host}:{self.port})"

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    async def open(self, timeout: float) -> None:
        """Connect (TLS handshake included), negotiate versions and authenticate. Raises
        NetworkException when the broker cannot be reached, SslAuthenticationFailed when the
        TLS handshake fails, and the broker's SASL error (SaslAuthenticationFailed,
        UnsupportedSaslMechanism, IllegalSaslState) when it refuses the credentials."""
        sec = self.security
        tls: dict[str, Any] = {}
        if sec is not None and sec.ssl_context is not None:
            tls = {
                "ssl": sec.ssl_context,
                "server_hostname": self.host,
                "ssl_handshake_timeout": max(timeout, 0.001),
            }
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, limit=1 << 20, **tls), timeout
            )
        except ssl.SSLError as e:
            self._closed = True
            detail = (
                f"certificate verify failed: {e.verify_message}"
                if isinstance(e, ssl.SSLCertVerificationError)
                else (e.reason or str(e))
            )
            raise SslAuthenticationFailed(
                f"TLS handshake with {self.host}:{self.port} failed: {detail}"
            ) from None
        except (ConnectionResetError, ConnectionAbortedError) as e:
            self._closed = True
            if not tls:
                raise NetworkException(f"cannot connect to {self.host}:{self.port}: {e}") from None
            # Java's client: a handshake the peer drops is an SslAuthenticationException.
            raise SslAuthenticationFailed(
                f"TLS handshake with {self.host}:{self.port} failed: the broker closed the "
                "connection (does this port speak TLS?)"
            ) from None
        except (TimeoutError, OSError) as e:
            self._closed = True
            # (an exception is always true: its text may be empty, as a timeout's is)
            why = str(e) or ("timed out" if isinstance(e, TimeoutError) else type(e).__name__)
            over = " over TLS" if tls else ""
            raise NetworkException(
                f"cannot connect to {self.host}:{self.port}{over}: {why}"
            ) from None
        self._reader, self._writer = reader, writer
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop())
        try:
            await self._negotiate()
            if sec is not None and sec.sasl:
                await self._authenticate()
        except BaseException as e:
            self.close(e if isinstance(e, KafkaError) else None)
            raise

    async def _authenticate(self) -> None:
        """One SASL exchange: SaslHandshake, then SaslAuthenticate until the mechanism is
        done. Raises the Kafka error the broker answered (SASL_AUTHENTICATION_FAILED with its
        message, UNSUPPORTED_SASL_MECHANISM with the ones it offers)."""
        sec = self.security
        assert sec is not None and sec.sasl_mechanism is not None
        mech = await sec.mechanism()
        resp = await self.request(
            ApiKey.SASL_HANDSHAKE, {"mechanism": mech.name}, version=self._sasl_version()
        )
        code = resp["error_code"]
        if code == UnsupportedSaslMechanism.code:
            raise UnsupportedSaslMechanism(
                f"{self}: the broker does not enable SASL mechanism {mech.name} "
                f"(it enables {', '.join(resp['mechanisms']) or 'none'})"
            )
        if code:
            cls = error_for_code(code) or IllegalSaslState
            raise cls(f"{self}: SaslHandshake failed: {cls.name}")
        token: bytes | None = mech.first()
        lifetime = 0
        while token is not None:
            resp = await self.request(ApiKey.SASL_AUTHENTICATE, {"auth_bytes": token})
            if resp["error_code"]:
                cls = error_for_code(resp["error_code"]) or IllegalSaslState
                raise cls(
                    f"{self}: {mech.name} authentication failed: "
                    f"{resp['error_message'] or cls.message}"
                )
            lifetime = int(resp.get("session_lifetime_ms", 0) or 0)
            token = mech.respond(bytes(resp["auth_bytes"] or b""))
        self.authentications += 1
        self.session_lifetime_ms = lifetime
        if lifetime > 0:
            # KIP-368: Java's client re-authenticates at a random 85-95% of the session.
            delay = lifetime / 1000.0 * random.uniform(0.85, 0.95)
            self._reauth_timer = asyncio.get_running_loop().call_later(delay, self._start_reauth)

    def _sasl_version(self) -> int:
        # v1: the tokens then travel in SaslAuthenticate requests (v0 sent them unframed).
        if not self.supports(ApiKey.SASL_AUTHENTICATE):
            raise UnsupportedVersion(f"{self}: the broker does not serve SaslAuthenticate")
        return self.version(ApiKey.SASL_HANDSHAKE, 1)

    def _start_reauth(self) -> None:
        self._reauth_timer = None
        if self._closed:
            return
        self._reauthenticating = True
        if self._held is None:
            self._held = []
        task = asyncio.get_running_loop().create_task(self._reauthenticate())
        self._reauth_task = task

    async def _reauthenticate(self) -> None:
        try:
            await self._authenticate()
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self.close(e if isinstance(e, KafkaError) else NetworkException(str(e)))
            return
        self._reauthenticating = False
        self._release()

    def _throttle(self, ms: int) -> None:
        """The broker throttled this client for ``ms``: hold what is sent until then (Java's
        NetworkClient: ClusterConnectionStates.throttle, the node not ready meanwhile)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + ms / 1000
        if until <= self.throttled_until:
            return
        self.throttled_until = until
        if self._held is None:
            self._held = []
        if self._throttle_timer is not None:
            self._throttle_timer.cancel()
        self._throttle_timer = loop.call_at(until, self._release)

    def _release(self) -> None:
        """Send what was held, unless a re-authentication or a throttle still holds it."""
        if self._reauthenticating or self._held is None:
            return
        if self.throttled_until > asyncio.get_running_loop().time():
            return
        self._throttle_timer = None
        held, self._held = self._held, None
        if self._writer is not None and not self._closed:
            for frame in held:
                self._writer.write(frame)

    async def _negotiate(self) -> None:
        version = API_VERSIONS[ApiKey.API_VERSIONS][1]
        body = {
            "client_software_name": "kgroup",
            "client_software_version": __version__.replace("+", "-"),
        }
        for _ in range(3):
            try:
                resp = await self.request(ApiKey.API_VERSIONS, body, version=version)
            except DecodeError:
                # A broker that does not speak our version answers with a v0 body.
                version = 0
                continue
            if resp["error_code"] == UnsupportedVersion.code:
                theirs = {
                    k["api_key"]: (k["min_version"], k["max_version"]) for k in resp["api_keys"]
                }
                rng = theirs.get(ApiKey.API_VERSIONS, (0, 0))
                version = choose_version(ApiKey.API_VERSIONS, rng)
                continue
            if resp["error_code"]:
                raise KafkaError(f"ApiVersions failed with error {resp['error_code']}")
            self.versions = {
                k["api_key"]: (k["min_version"], k["max_version"]) for k in resp["api_keys"]
            }
            return
        raise UnsupportedVersion(f"{self}: no ApiVersions version in common")

    def version(self, api_key: int, highest: int | None = None) -> int:
        """The version to send ``api_key`` at on this connection."""
        return choose_version(
            api_key, self.versions.get(api_key, (-1, -2)) if self.versions else None, highest
        )

    def supports(self, api_key: int) -> bool:
        try:
            self.version(api_key)
        except UnsupportedVersion:
            return False
        return True

    def send(
        self, api_key: int, body: Any, *, version: int | None = None, expect_response: bool = True
    ) -> asyncio.Future[Any]:
        """Write one request now; the future resolves to the response body (a StructView).

        With ``expect_response=False`` (Produce with acks=0) the future resolves at once to None.
        """
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        if self._closed or self._writer is None:
            fut.set_exception(self.error or NetworkException(f"{self} is closed"))
            return fut
        v = self.version(api_key) if version is None else version
        corr = next(self._corr) & 0x7FFFFFFF
        frame = encode_request(api_key, v, corr, self.client_id, body)
        if expect_response:
            self._pending[corr] = (api_key, v, fut)
        else:
            fut.set_result(None)
        if self._held is not None and api_key not in _SASL_APIS:
            self._held.append(frame)
        else:
            self._writer.write(frame)
        return fut

    async def request(
        self, api_key: int, body: Any, *, version: int | None = None, timeout: float | None = None
    ) -> Any:
        """Send one request and wait for its answer (at most ``timeout`` s, default
        request.timeout.ms); a timeout closes the connection and raises RequestTimedOut."""
        return await self.answer(api_key, self.send(api_key, body, version=version), timeout)

    async def answer(
        self, api_key: int, fut: asyncio.Future[Any], timeout: float | None = None
    ) -> Any:
        """answer waits for the answer to a request :meth:`send` wrote (``fut``), as
        :meth:`request` does: a caller that must write in order writes with send() while it
        holds its turn, and waits here after."""
        writer = self._writer
        if writer is not None and writer.transport.get_write_buffer_size() > (1 << 20):
            await writer.drain()
        try:
            return await asyncio.wait_for(
                asyncio.shield(fut), self.request_timeout if timeout is None else timeout
            )
        except TimeoutError:
            err = RequestTimedOut(f"{API_NAMES.get(api_key, api_key)} to {self} timed out")
            self.close(err)
            raise err from None

    async def _read_loop(self) -> None:
        assert self._reader is not None
        reader = self._reader
        err: BaseException
        try:
            while True:
                size = _SIZE.unpack(await reader.readexactly(4))[0]
                if size < 4:
                    raise DecodeError(f"{self}: frame of {size} bytes")
                frame = await reader.readexactly(size)
                corr = _SIZE.unpack_from(frame)[0]
                entry = self._pending.pop(corr, None)
                if entry is None:
                    raise DecodeError(f"{self}: answer to unknown correlation id {corr}")
                api_key, version, fut = entry
                if fut.done():
                    continue
                try:
                    body = decode_response(api_key, version, frame).body
                except DecodeError as e:
                    fut.set_exception(e)
                    continue
                if version >= _CLIENT_THROTTLES.get(api_key, 1 << 15):
                    throttle = body.get("throttle_time_ms") or 0
                    if throttle > 0:
                        self._throttle(throttle)
                fut.set_result(body)
        except ssl.SSLError as e:
            # TLS 1.3: a broker that refuses our certificate says so after the handshake.
            err = SslAuthenticationFailed(f"{self}: TLS failed: {e.reason or e}")
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as e:
            err = NetworkException(f"{self}: connection lost ({type(e).__name__})")
        except DecodeError as e:
            err = NetworkException(str(e))
        except asyncio.CancelledError:
            err = NetworkException(f"{self} is closed")
            self.close(err)
            raise
        self.close(err)

    def close(self, error: BaseException | None = None) -> None:
        """Close the socket; every request in flight fails with ``error``."""
        if self._closed:
            return
        self._closed = True
        self.error = error or NetworkException(f"{self} is closed")
        for _, _, fut in self._pending.values():
            if not fut.done():
                fut.set_exception(self.error)
                fut.exception()  # retrieved: nobody may be waiting for it any more
        self._pending.clear()
        self._held = None
        if self._throttle_timer is not None:
            self._throttle_timer.cancel()
            self._throttle_timer = None
        if self._reauth_timer is not None:
            self._reauth_timer.cancel()
            self._reauth_timer = None
        task = self._reauth_task
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()
        if self._writer is not None:
            self._writer.close()
        if self._read_task is not None and self._read_task is not asyncio.current_task():
            self._read_task.cancel()
