"""The network side: one asyncio protocol per client connection.

A connection reads frames (an INT32 size, then the request), decodes each in Rust and hands it
to the handler module of its api (``kgroup.broker.handlers``). The group coordinator's apis
skip that: their raw frame goes to the Rust coordinator (``GroupHost.handle_frame``), which
decodes it once into its typed message and writes the response frame. Handlers may finish at once or
later (a Fetch long poll, an acks=all Produce waiting for its fsync, a JoinGroup parked until
its rebalance completes); responses always go back in request order, as Kafka's clients
require (with an authorizer, ``authorizer.class.name``, the group apis are decoded here as any
other, for their handlers to check them: ``kgroup.broker.coordinated``). A handler answers
with a body to encode, or with a whole response frame (``bytes``,
which the group coordinator writes itself), now or through an awaitable. What Kafka's broker
does with a bad request is done here, from the error's kind: an ApiVersions request of a
version the broker does not speak is answered with a v0 UNSUPPORTED_VERSION body, and any
other unknown api key or version, a frame above ``socket.request.max.bytes`` or a request that
does not decode closes that connection only (Kafka's ``InvalidRequestException``), with a log
line. Bytes after a request's body are ignored, as Kafka's parser ignores them (librdkafka
sends some). While a test's fault is armed (``kgroup.broker.faults``: one attribute read per
request otherwise), each request is offered to it first, on either path; it may answer it
(an error, late), close the connection, or hold every connection (a pause).

On a SASL listener (SASL_PLAINTEXT, SASL_SSL) a connection's frames go to its authenticator
(``kgroup.broker.sasl``) until the client has authenticated, and again while it
re-authenticates (KIP-368); frames above ``sasl.server.max.receive.size`` are refused until
then. Its principal (``conn.principal``) is then ``User:<name>``; a request after the session
expired closes the connection.

A Fetch response's record batches are not copied through Python when ``kgroup.fetch.sendfile``
is on (the default): the handler answers with FileSlices of the segment files, the response is
encoded around them (``protocol.encode_response_segments``) and ``output.Output`` sends them
with ``os.sendfile``, in order with everything else on the connection. A partition's records
below ``kgroup.fetch.sendfile.min.bytes`` (128 KB) are read straight into the response instead,
which costs less for them. On a TLS listener (SSL, SASL_SSL) the transport is the event
loop's TLS one and every response is copied through it (no sendfile); the connection's
principal comes from the client's certificate once the handshake is done
(``kgroup.broker.principals``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import inspect
import logging
import socket
import time
from typing import TYPE_CHECKING, Any, cast

from kgroup import errors, protocol
from kgroup.broker import principals
from kgroup.broker.context import RequestContext
from kgroup.broker.handlers import HANDLERS, api_versions
from kgroup.broker.listeners import Listener
from kgroup.broker.output import Output
from kgroup.broker.quotas import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE
from kgroup.broker.sasl import Authenticator
from kgroup.group import GROUP_API_KEYS
from kgroup.log import FileSlice

if TYPE_CHECKING:
    from kgroup.broker.state import BrokerState

__all__ = ["Connection"]

log = logging.getLogger("kgroup.broker")

_API_VERSIONS = int(protocol.ApiKey.API_VERSIONS)
_FETCH = int(protocol.ApiKey.FETCH)
_PRODUCE = int(protocol.ApiKey.PRODUCE)
_SASL_HANDSHAKE = int(protocol.ApiKey.SASL_HANDSHAKE)
#: _GROUP_VERSIONS are the versions the broker serves of each api whose raw frame goes to the
#: group coordinator.
_GROUP_VERSIONS: dict[int, tuple[int, int]] = {
    k: HANDLERS[k].VERSIONS for k in GROUP_API_KEYS if k in HANDLERS
}
#: ANONYMOUS is the principal of a client that has not authenticated (Kafka's
#: KafkaPrincipal.ANONYMOUS).
ANONYMOUS = "User:ANONYMOUS"
#: SCRATCH is the size of a connection's read buffer: frames that fit are read many at a time.
SCRATCH = 256 * 1024


class _Slot:
    """_Slot holds a response until every response before it was written."""

    __slots__ = ("frame", "ready", "throttle")

    def __init__(self) -> None:
        #: frame is the response: bytes, or a Fetch response's segments (bytes and FileSlices).
        self.frame: bytes | list[bytes | FileSlice] | None = None
        self.ready = False
        #: throttle is the request's quota throttle in ms (None: no quota is set).
        self.throttle: int | None = None


class Connection(asyncio.BufferedProtocol):
    """Connection serves one client. Not thread-safe: it lives on the broker's event loop."""

    def __init__(self, state: BrokerState, listener: Listener) -> None:
        self.state = state
        #: listener is the listener this connection came in on.
        self.listener = listener
        #: principal is who the client is, as Kafka's principal string: ``User:ANONYMOUS``
        #: until TLS or SASL says otherwise.
        self.principal = ANONYMOUS
        self.transport: asyncio.Transport | None = None
        self.peer = "?"
        #: client_host is the peer's address as Kafka shows it in DescribeGroups: ``/1.2.3.4``.
        self.client_host = ""
        #: client_address is the peer's IP address (ACLs match hosts on it).
        self.client_address = ""
        self._scratch = bytearray(SCRATCH)
        self._scratch_view = memoryview(self._scratch)
        self._start = 0
        self._end = 0
        self._frame: bytearray | None = None
        self._frame_view = memoryview(b"")
        self._got = 0
        self._slots: collections.deque[_Slot] = collections.deque()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._max_frame = int(state.config.get("socket.request.max.bytes"))
        self._max_in_flight = int(state.config.get("queued.max.requests"))
        self._paused = False
        self._closed = False
        # No zero-copy through TLS: the records must be encrypted on their way out (Kafka's
        # SslTransportLayer copies them too).
        self._sendfile = state.fetch_sendfile and not listener.uses_ssl
        self._inline_below = int(state.config.get("kgroup.fetch.sendfile.min.bytes"))
        self._output: Output | None = None
        #: corked: a read's requests are being handled; their answers wait for its end.
        self._corked = False
        self._faults = state.faults
        #: _group_frames: the group apis' raw frames go straight to the group coordinator;
        #: with an authorizer they are decoded here, for their handlers to check them first.
        self._group_frames = _GROUP_VERSIONS if state.authorizer is None else {}
        #: held: the broker is paused (``Faults.pause``): nothing is read or answered.
        self._held = False
        #: _muted_until: the loop time until which a quota throttle stops reading (0: none).
        self._muted_until = 0.0
        #: auth authenticates the client on a SASL listener (``kgroup.broker.sasl``); None on
        #: the others. Until it is done, frames go to it, and none may be larger than
        #: ``sasl.server.max.receive.size``.
        self.auth: Authenticator | None = None
        self._auth_delay = 0.0
        sasl = state.sasl.get(listener.name) if listener.uses_sasl else None
        if sasl is not None:
            self.auth = Authenticator(
                sasl, self._respond_now, self._auth_failed, self._auth_api_versions
            )
            self._auth_delay = sasl.failed_delay_ms / 1000
            self._max_frame = min(self._max_frame, sasl.max_receive_size)

    # -- asyncio.BufferedProtocol ---------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (asyncio's, or uvloop's, which is not an asyncio.Transport).
        self.transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self.client_host = f"/{peer[0]}" if peer else ""
        self.client_address = peer[0] if peer else ""
        if self.listener.uses_ssl and not self._authenticate_tls():
            return
        # Kafka's acceptor turns Nagle's algorithm off. asyncio's loop does it only for sockets
        # made with IPPROTO_TCP, which accepted ones are not (their proto is 0): without it a
        # response written in pieces waits for the client's delayed ACK.
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._output = Output(self.transport, self.state.send_stats, self._broken, self._sendfile)
        self.state.connections.add(self)
        if self._faults.paused:
            self.hold()

    def _authenticate_tls(self) -> bool:
        """Take the principal from the client's certificate (the handshake is done when a TLS
        transport calls connection_made); False, and the connection closed, when
        ``ssl.principal.mapping.rules`` has no rule for it (Kafka fails the authentication)."""
        assert self.transport is not None
        rules = self.state.config.for_listener(self.listener.name, "ssl.principal.mapping.rules")
        try:
            who = principals.principal(
                self.transport.get_extra_info("ssl_object"), principals.principal_mapper(rules)
            )
        except principals.NoMatchingRule as e:
            log.info("Failed authentication with %s (SSL principal mapping: %s)", self.peer, e)
            self._closed = True
            self.transport.close()
            return False
        if who is not None:
            self.principal = who
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self.state.connections.discard(self)
        if self._output is not None:
            self._output.clear()
        for t in self._tasks:
            t.cancel()

    def pause_writing(self) -> None:
        if self._output is not None:
            self._output.paused = True

    def resume_writing(self) -> None:
        if self._output is not None:
            self._output.paused = False
            if not self._closed:
                self._output.pump()

    # Frames are read with as few copies as the kernel allows: small ones into a scratch
    # buffer (many per read), a large one straight into a buffer of its own size.

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._frame is not None:
            return self._frame_view[self._got :]
        if self._end == len(self._scratch):
            self._compact()
        return self._scratch_view[self._end :]

    def buffer_updated(self, nbytes: int) -> None:
        if self._frame is not None:
            self._got += nbytes
            if self._got == len(self._frame):
                frame, self._frame = self._frame, None
                self._frame_view.release()
                self._request(frame)
            return
        self._end += nbytes
        # The answers to the requests of one read go out together, in one write (a client that
        # pipelines heartbeats or small produces gets one send, not one per answer).
        self._corked = True
        try:
            self._read_frames()
        finally:
            self._corked = False
            self._flush()

    def _read_frames(self) -> None:
        scratch = self._scratch
        while not self._closed:
            start = self._start
            avail = self._end - start
            if avail < 4:
                break
            try:
                size = protocol.frame_size(scratch[start : start + 4], self._max_frame)
            except errors.DecodeError as e:
                self.close_for(e)
                return
            if avail - 4 >= size:
                self._start = start + 4 + size
                self._request(bytes(self._scratch_view[start + 4 : self._start]))
                continue
            if size + 4 > len(scratch):
                # Too large for the scratch buffer: read the rest straight into its own.
                self._frame = bytearray(size)
                self._frame_view = memoryview(self._frame)
                self._got = avail - 4
                self._frame_view[: self._got] = self._scratch_view[start + 4 : self._end]
                self._start = self._end = 0
            break
        if self._start == self._end:
            self._start = self._end = 0

    def _compact(self) -> None:
        """Move what is left unread to the front of the scratch buffer."""
        n = self._end - self._start
        self._scratch_view[:n] = self._scratch_view[self._start : self._end]
        self._start, self._end = 0, n

    # -- requests -------------------------------------------------------------------------

    def _request(self, frame: bytes | bytearray) -> None:
        auth = self.auth
        api_key = int.from_bytes(frame[0:2], "big", signed=True) if len(frame) >= 4 else None
        if api_key is not None and (auth is None or not auth.raw_tokens):
            self.state.requests[api_key] += 1
        if auth is not None and self._authenticating(auth, frame):
            return
        if api_key is not None:
            if self._faults.armed and self._faults.intercept(self, api_key, frame):
                return
            versions = self._group_frames.get(api_key)
            if versions is not None and (
                versions[0] <= int.from_bytes(frame[2:4], "big", signed=True) <= versions[1]
            ):
                self._group_request(frame if type(frame) is bytes else bytes(frame))
                return
        try:
            request = protocol.decode_request(frame, strict=False)
        except errors.UnsupportedApiVersion as e:
            if e.api_key == _API_VERSIONS:
                # Kafka answers any ApiVersions version: v0, UNSUPPORTED_VERSION, its ranges.
                header = protocol.decode_request_header(frame)
                self._respond_now(
                    protocol.encode_response(
                        header, api_versions.unsupported_body(self.state.config), version=0
                    )
                )
                return
            self.close_for(e)
            return
        except errors.DecodeError as e:
            self.close_for(e)
            return
        module = HANDLERS.get(request.api_key)
        if module is None or not (module.VERSIONS[0] <= request.api_version <= module.VERSIONS[1]):
            self.close_for(
                errors.UnsupportedApiVersion(
                    f"Received request api key {request.api_key} with version "
                    f"{request.api_version} which is not enabled",
                    api_key=request.api_key,
                    api_version=request.api_version,
                )
            )
            return
        ctx = RequestContext(self.state, request, self)
        quotas = self.state.quotas.active
        started = time.perf_counter() if quotas else 0.0
        try:
            result = module.handle(ctx)
        except Exception as e:  # a handler's bug must not take the broker down
            self._failed(request, e)
            return
        throttle = self._charge(request, len(frame), started) if quotas else None
        if result is None:
            if throttle:
                self._mute(throttle)
            return  # no response (Produce with acks=0)
        slot = _Slot()
        slot.throttle = throttle
        self._slots.append(slot)
        if inspect.isawaitable(result):
            self._await(result, slot, request)
        else:
            self._fill(slot, request, result)

    def _authenticating(self, auth: Authenticator, frame: bytes | bytearray) -> bool:
        """Whether SASL took ``frame``: before authentication (or while re-authenticating)
        every frame; after it a SaslHandshake that starts re-authentication; and any request
        once the session expired closes the connection (Kafka's "Disconnecting expired
        channel")."""
        if auth.authenticating:
            was = auth.principal
            auth.receive(bytes(frame))
            if not auth.authenticating and not self._closed:
                self._authenticated(auth, was)
            return True
        now = time.monotonic()
        if len(frame) >= 2 and int.from_bytes(frame[0:2], "big", signed=True) == _SASL_HANDSHAKE:
            if auth.maybe_reauthenticate(bytes(frame), now):
                self._max_frame = min(self._max_frame, auth.settings.max_receive_size)
                if not auth.authenticating and not self._closed:
                    self._authenticated(auth, auth.principal)
                return True
        if auth.expired(now):
            auth.settings.counts["expired"] += 1
            log.info("Disconnecting expired SASL session of %s (%s)", self.peer, self.principal)
            self.close()
            return True
        return False

    def _authenticated(self, auth: Authenticator, was: str | None) -> None:
        assert auth.principal is not None
        self.principal = auth.principal
        self._max_frame = int(self.state.config.get("socket.request.max.bytes"))
        if was is None:
            log.debug("%s authenticated as %s with %s", self.peer, self.principal, auth.mechanism)

    def _auth_failed(self, why: str, answer: bytes | None, authentication: bool) -> None:
        """SASL failed: send ``answer`` (if any) and close; a failed authentication after
        ``connection.failed.authentication.delay.ms``, reading nothing meanwhile, as Kafka's
        Selector delays it (a password guesser gets fewer tries)."""
        log.info("Failed authentication with %s (%s)", self.peer, why)
        delay = self._auth_delay if authentication else 0.0
        if delay <= 0:
            if answer is not None:
                self._respond_now(answer)
            self.close()
            return
        if self.transport is not None:
            self.transport.pause_reading()
        asyncio.get_running_loop().call_later(delay, self._auth_failure_done, answer)

    def _auth_failure_done(self, answer: bytes | None) -> None:
        if self._closed:
            return
        if answer is not None:
            self._respond_now(answer)
        self.close()

    def _auth_api_versions(self, request: protocol.Request | None) -> Any:
        """ApiVersions before authentication: the broker's answer (None: the request's version
        is unknown, the v0 UNSUPPORTED_VERSION body)."""
        if request is None:
            return api_versions.unsupported_body(self.state.config)
        return api_versions.handle(RequestContext(self.state, request, self))

    def _group_request(self, frame: bytes) -> None:
        """A request of a group api: its raw frame to the group coordinator, which answers with
        a whole response frame, now or through a future (a parked JoinGroup or SyncGroup, a
        commit waiting for its append)."""
        try:
            result = self.state.groups.handle_frame(frame, self.client_host)
        except errors.DecodeError as e:
            self.close_for(e)
            return
        except Exception as e:  # a bug must not take the broker down
            self._failed(protocol.decode_request_header(frame), e)
            return
        slot = _Slot()
        self._slots.append(slot)
        if type(result) is bytes:
            slot.frame = result
            slot.ready = True
            self._flush()
            return
        self._await(result, slot, protocol.decode_request_header(frame))

    def _await(self, result: Any, slot: _Slot, request: protocol.RequestHeader) -> None:
        """Fill `slot` once `result` (an awaitable response) is done."""
        task = asyncio.ensure_future(result)
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._finished, slot=slot, request=request))
        if len(self._tasks) >= self._max_in_flight and not self._paused:
            self._paused = True
            assert self.transport is not None
            self.transport.pause_reading()

    def _finished(
        self, task: asyncio.Future[Any], *, slot: _Slot, request: protocol.RequestHeader
    ) -> None:
        self._tasks.discard(task)
        if (
            self._paused
            and len(self._tasks) < self._max_in_flight // 2
            and not self._closed
            and not self.state.stopping
            and not self._held
            and not self._muted_until
        ):
            self._paused = False
            assert self.transport is not None
            self.transport.resume_reading()
        if task.cancelled() or self._closed:
            return
        e = task.exception()
        if e is not None:
            self._failed(request, e)
            return
        self._fill(slot, request, task.result())

    def _charge(self, request: protocol.Request, size: int, started: float) -> int:
        """Count a request against its client's quotas: its bytes for a Produce, the time its
        handler took (Kafka's request time, as a percentage of one thread); the throttle in
        ms, the larger of the two."""
        quotas = self.state.quotas
        client = request.client_id or ""
        seconds = time.perf_counter() - started
        throttle = quotas.record(REQUEST_PERCENTAGE, self.principal, client, seconds * 100)
        if request.api_key == _PRODUCE:
            throttle = max(
                throttle, quotas.record(PRODUCER_BYTE_RATE, self.principal, client, size)
            )
        return throttle

    def _throttle_fetch(self, request: protocol.RequestHeader, slot: _Slot, body: Any) -> Any:
        """Count a Fetch response's records against the consumer byte rate. Over it, the
        answer carries no records (they are not counted) and the throttle time, as Kafka's
        throttled fetch response."""
        size = sum(
            len(p.get("records") or b"")
            for t in body.get("responses", ())
            for p in t.get("partitions", ())
        )
        quotas = self.state.quotas
        client = request.client_id or ""
        throttle = quotas.record(CONSUMER_BYTE_RATE, self.principal, client, size)
        if throttle > 0:
            quotas.unrecord(CONSUMER_BYTE_RATE, self.principal, client, size)
            body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": []}
        slot.throttle = max(slot.throttle or 0, throttle)
        return body

    def _fill(self, slot: _Slot, request: protocol.RequestHeader, body: Any) -> None:
        if slot.throttle is not None and isinstance(body, dict):
            if request.api_key == _FETCH:
                body = self._throttle_fetch(request, slot, body)
            if slot.throttle and "throttle_time_ms" in body:
                body["throttle_time_ms"] = slot.throttle
        try:
            if body is None or type(body) is bytes:
                # bytes: a whole frame already (the group coordinator writes its own).
                slot.frame = body
            elif self._sendfile and request.api_key == _FETCH:
                segments = protocol.encode_response_segments(
                    request, body, inline_below=self._inline_below
                )
                first = segments[0]
                # Records all inlined (small fetches): one frame, as any other response.
                slot.frame = first if len(segments) == 1 and type(first) is bytes else segments
            else:
                slot.frame = protocol.encode_response(request, body)
        except errors.KGroupError as e:
            self._failed(request, e)
            return
        slot.ready = True
        self._flush()

    def _flush(self) -> None:
        """Write the answers that are next in order (all at once: one write for a run of
        whole frames); while a read's requests are being handled, wait for its end."""
        if self._corked or self._held:
            return
        slots = self._slots
        output = self._output
        frames: list[bytes] = []
        while slots and slots[0].ready:
            slot = slots.popleft()
            frame = slot.frame
            if slot.throttle:
                self._mute(slot.throttle)
            if frame is None or output is None or self._closed:
                continue
            if type(frame) is bytes:
                frames.append(frame)
                continue
            if frames:
                output.write_many(frames)
                frames = []
            output.write_segments(cast("list[bytes | FileSlice]", frame))
        if frames and output is not None and not self._closed:
            output.write_many(frames)

    def _respond_now(self, frame: bytes) -> None:
        slot = _Slot()
        slot.frame, slot.ready = frame, True
        self._slots.append(slot)
        self._flush()

    def _failed(self, request: protocol.RequestHeader, e: BaseException) -> None:
        log.error(
            "Error handling %s v%d from %s (correlation id %d); closing the connection",
            request.api_name,
            request.api_version,
            self.peer,
            request.correlation_id,
            exc_info=e,
        )
        self.close()

    def answer_later(self, request: protocol.RequestHeader, answer: Any) -> None:
        """Answer ``request`` with what the awaitable ``answer`` gives (a body, a whole frame,
        or None for no answer), in this connection's order (the fault engine's answers)."""
        slot = _Slot()
        self._slots.append(slot)
        self._await(answer, slot, request)

    def _mute(self, ms: int) -> None:
        """Read nothing from this client for ``ms`` (its quota throttle, KIP-219): its answer
        still goes out now."""
        loop = asyncio.get_running_loop()
        until = loop.time() + ms / 1000
        if until <= self._muted_until:
            return
        self._muted_until = until
        if self.transport is not None and not self._closed:
            self.transport.pause_reading()
        loop.call_at(until, self._unmute)

    def _unmute(self) -> None:
        if asyncio.get_running_loop().time() < self._muted_until or self._closed:
            return
        self._muted_until = 0.0
        if self.transport is not None and not (self._paused or self._held or self.state.stopping):
            self.transport.resume_reading()

    def hold(self) -> None:
        """Read nothing and answer nothing until :meth:`release` (``Faults.pause``)."""
        if self._closed or self._held:
            return
        self._held = True
        if self.transport is not None:
            self.transport.pause_reading()

    def release(self) -> None:
        """Serve again after :meth:`hold`: read what waits, send the answers held."""
        if not self._held:
            return
        self._held = False
        if self._closed:
            return
        if (
            self.transport is not None
            and not self._paused
            and not self.state.stopping
            and not self._muted_until
        ):
            self.transport.resume_reading()
        self._flush()

    def stop_reading(self) -> None:
        """Read no more requests (the broker is stopping); those in flight still get answers."""
        if self.transport is not None and not self._closed:
            self._paused = True
            self.transport.pause_reading()

    def close_for(self, e: Exception) -> None:
        """Close this connection because of a bad request, as Kafka's broker does, with a log
        line naming the client and the reason."""
        log.info("Closing socket for %s because of error: %s", self.peer, e)
        self.close()

    def _broken(self, why: str) -> None:
        """The response being sent cannot be finished (output.Output said why): close."""
        self.close()

    def close(self) -> None:
        if not self._closed:
            if self._corked:
                # The answers already made for this read go out before the close.
                self._corked = False
                self._flush()
            self._closed = True
            if self._output is not None:
                self._output.clear()
            if self.transport is not None:
                self.transport.close()

    @property
    def in_flight(self) -> int:
        """The responses not yet answered or not yet handed to the transport."""
        return len(self._slots) + (self._output.pending if self._output is not None else 0)
