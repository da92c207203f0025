"""connection: one TCP connection from a client to one broker.

A :class:`Connection` speaks Kafka's framed protocol with kgroup's codec: it negotiates the
versions with ApiVersions when it opens (KIP-35; a broker that does not know our ApiVersions
version answers v0 with its ranges, and we ask again at a version both know), authenticates with
SASL if configured (``kgroup.client.sasl``), pipelines requests
(many in flight, answered in order), and matches responses by correlation id. A request that
gets no answer within its timeout closes the connection, as Java's NetworkClient does, and every
request in flight fails with :class:`~kgroup.errors.NetworkException` (retriable). Runs on the
client's event loop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import struct
from typing import Any

from kgroup._native import __version__
from kgroup.client.sasl import SaslSettings, authenticate
from kgroup.errors import (
    DecodeError,
    KafkaError,
    NetworkException,
    RequestTimedOut,
    UnsupportedVersion,
)
from kgroup.protocol import API_NAMES, API_VERSIONS, ApiKey, decode_response, encode_request

__all__ = ["Connection", "choose_version"]

_SIZE = struct.Struct(">i")
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
        sasl: SaslSettings | None = None,
    ) -> None:
        self.host, self.port, self.node_id = host, port, node_id
        #: sasl: authenticate with it once versions are negotiated (None: no SASL).
        self.sasl = sasl
        self.client_id = client_id
        self.request_timeout = request_timeout_ms / 1000.0
        self.versions: dict[int, tuple[int, int]] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, tuple[int, int, asyncio.Future[Any]]] = {}
        self._corr = itertools.count(next(_ids) * 1000)
        self._read_task: asyncio.Task[None] | None = None
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
        """Connect and negotiate versions; raises NetworkException on failure."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, limit=1 << 20), timeout
            )
        except (TimeoutError, OSError) as e:
            self._closed = True
            raise NetworkException(
                f"cannot connect to {self.host}:{self.port}: {e or 'timed out'}"
            ) from None
        self._reader, self._writer = reader, writer
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop())
        try:
            await self._negotiate()
            if self.sasl is not None:
                await authenticate(self, self.sasl)
        except BaseException:
            self.close()
            raise

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
                    fut.set_result(decode_response(api_key, version, frame).body)
                except DecodeError as e:
                    fut.set_exception(e)
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
        if self._writer is not None:
            self._writer.close()
        if self._read_task is not None and self._read_task is not asyncio.current_task():
            self._read_task.cancel()
