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
import ctypes
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
from kgroup.broker.limits import CARRY_MAX, QuotaSlot
from kgroup.broker.listeners import Listener
from kgroup.broker.output import Output
from kgroup.broker.quotas import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE
from kgroup.broker.sasl import Authenticator
from kgroup.group import GROUP_API_KEYS
from kgroup.log import FileSlice

if TYPE_CHECKING:
    from kgroup.broker.state import BrokerState

__all__ = ["OUTPUT_MAX", "Connection"]

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
#: _GROUP_VERSIONS_UNSHARED: the same without KIP-932's ShareGroupHeartbeat and
#: ShareGroupDescribe, whose handlers answer UNSUPPORTED_VERSION while share groups are off.
_GROUP_VERSIONS_UNSHARED: dict[int, tuple[int, int]] = {
    k: v for k, v in _GROUP_VERSIONS.items() if getattr(HANDLERS[k], "PROTOCOL", None) != "share"
}
#: _THROTTLE_FROM: for each group api, the first version whose response body starts with
#: throttle_time_ms (the coordinator writes whole frames; a quota's throttle is put in after).
_THROTTLE_FROM: dict[int, int] = {
    d["api_key"]: int(d["fields"][0]["versions"].rstrip("+"))
    for d in protocol.definitions()
    if d["type"] == "response"
    and d["api_key"] in _GROUP_VERSIONS
    and d["fields"]
    and d["fields"][0]["name"] == "throttle_time_ms"
}
#: ANONYMOUS is the principal of a client that has not authenticated (Kafka's
#: KafkaPrincipal.ANONYMOUS).
ANONYMOUS = "User:ANONYMOUS"
#: _resize grows a bytearray in place (realloc, no zeroed copy): a large frame's buffer as its
#: bytes arrive.
_resize = ctypes.pythonapi.PyByteArray_Resize
_resize.argtypes = [ctypes.py_object, ctypes.c_ssize_t]
_resize.restype = ctypes.c_int


#: TURN_REQUESTS is how many requests of one read a connection has handled in a row before the
#: others' reads get their turn; past them, it gets BACKLOG_TURN_REQUESTS a turn until what it
#: had sent is handled. A client that pipelines a few requests (librdkafka sends a Metadata and
#: a JoinGroup together) has them handled back to back, as they came; a flood of pipelined
#: ApiVersions delays another client by about one request a turn per connection, as Kafka's
#: processor, which takes one request per connection at a time. (One a turn for every read put
#: the JoinGroup of a client's pair behind another client's, which Kafka answers first:
#: librdkafka's 0118 at a rebalance delay of 0. Eight a turn throughout let a flood on four
#: connections hold the loop 32 requests long: bench_abuse's wire produce p99 4.7x idle.)
TURN_REQUESTS = 4
BACKLOG_TURN_REQUESTS = 1
#: OUTPUT_MAX: a connection whose transport holds more than this many bytes of responses not
#: yet taken by the kernel (a client that sends and does not read) is not read until they are.
OUTPUT_MAX = 1024 * 1024


def _with_throttle(request: protocol.RequestHeader, frame: bytes, ms: int) -> bytes:
    """A group coordinator's response frame with ``ms`` as its throttle_time_ms, where its
    version has one (the body's first field, after the header)."""
    since = _THROTTLE_FROM.get(request.api_key)
    if since is None or request.api_version < since:
        return frame
    at = 8  # the frame's size, the correlation id
    if protocol.response_header_version(request.api_key, request.api_version) >= 1:
        if frame[8] != 0:
            return frame  # header tagged fields: none is ever written; leave it be
        at = 9
    return frame[:at] + ms.to_bytes(4, "big", signed=True) + frame[at + 4 :]


class _Slot:
    """_Slot holds a response until every response before it was written."""

    __slots__ = ("cost", "frame", "ready", "throttle")

    def __init__(self, cost: int = 0) -> None:
        #: frame is the response: bytes, or a Fetch response's segments (bytes and FileSlices).
        self.frame: bytes | list[bytes | FileSlice] | None = None
        self.ready = False
        #: cost is the request's size, counted in queued.max.request.bytes until answered.
        self.cost = cost
        #: throttle is the request's quota throttle in ms (None: no quota is set).
        self.throttle: int | None = None


class Connection(asyncio.BufferedProtocol):
    """Connection serves one client. Not thread-safe: it lives on the broker's event loop.

    It holds memory for what its client sent and the broker has not yet answered: between
    reads, only the unfinished part of a frame (see ``kgroup.broker.limits``). ``listener`` is
    the listener it came in on; ``slot`` its place in the connection quotas, given back when it
    closes (None: not counted)."""

    def __init__(
        self, state: BrokerState, listener: Listener, slot: QuotaSlot | None = None
    ) -> None:
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
        self._slot = slot
        limits = state.limits
        self._limits = limits
        self._request_bytes = limits.request_bytes
        self._reader = limits.read_buffer
        #: _carry is the start of an unfinished frame (at most CARRY_MAX bytes), put back at
        #: the front of the read buffer for the next read.
        self._carry = b""
        #: _frame is a large unfinished frame's own buffer, grown as its bytes arrive up to its
        #: size, _frame_size; _got bytes of it arrived.
        self._frame: bytearray | None = None
        self._frame_view = memoryview(b"")
        self._frame_size = 0
        self._got = 0
        #: _held_bytes is what this connection's unfinished frame counts in the queued bytes.
        self._held_bytes = 0
        self._slots: collections.deque[_Slot] = collections.deque()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._max_frame = int(state.config.get("socket.request.max.bytes"))
        self._max_in_flight = int(state.config.get("queued.max.requests"))
        #: Reading stops for any of: too many requests in flight (_full), the broker stopping
        #: (_stopped), a fault's pause (_paused_by_fault), too many responses unsent
        #: (_backlogged), a quota throttle (_muted_until) or the broker's queued bytes past
        #: their limit.
        self._full = False
        self._stopped = False
        self._backlogged = False
        #: _turn_deferred: requests left from a turn wait for reading to resume.
        self._turn_deferred = False
        #: _waiting_turn: requests read are left for the next turn.
        self._waiting_turn = False
        #: _turn: how many requests this turn may handle (TURN_REQUESTS for a new read).
        self._turn = TURN_REQUESTS
        self._reading = True
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
        self._group_frames = (
            {}
            if state.authorizer is not None
            else _GROUP_VERSIONS
            if api_versions.share_enabled(state.config)
            else _GROUP_VERSIONS_UNSHARED
        )
        #: held: the broker is paused (``Faults.pause``): nothing is read or answered.
        self._paused_by_fault = False
        #: active_at is when this connection last read or wrote (time.monotonic).
        self.active_at = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
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
        self._loop = asyncio.get_running_loop()
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
        self.touch(time.monotonic())
        if self._faults.paused:
            self.hold()
        elif self._request_bytes.exhausted:
            # Soon: uvloop starts reading after connection_made returns, whatever it was told.
            self._loop.call_soon(self.update_reading)

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
        # Kafka's ShareSessionCache.ClientConnectionDisconnectListener: the sessions this
        # connection opened end, and their members' records are released.
        self.state.shares.connection_closed(self)
        self._limits.lru.pop(self, None)
        if self._output is not None:
            self._output.clear()
            # The Output calls back into this connection: without the cycle, the connection's
            # memory is freed now rather than at the next full collection (after a burst of
            # closes that may be long in coming).
            self._output = None
        if getattr(self.transport, "_read_ready_cb", None) is not None:
            # asyncio's socket transport keeps a bound method of itself, a cycle that only a
            # full collection frees (uvloop's has none): the transport is done, break it.
            self.transport._read_ready_cb = None  # type: ignore[union-attr]
        for t in self._tasks:
            t.cancel()
        self._release_frame()
        cost = 0
        for slot in self._slots:
            cost += slot.cost
            slot.cost = 0
        self._slots.clear()
        if cost:
            self._request_bytes.give(cost)
        if self._slot is not None:
            self._slot.release()
        if self._loop is not None:
            self._limits.trimmer.closed(self._loop)

    def never_served(self) -> None:
        """The connection ended before it was made (its TLS handshake failed): its place in the
        connection quotas goes back."""
        if self._slot is not None:
            self._slot.release()

    def pause_writing(self) -> None:
        if self._output is not None:
            self._output.paused = True

    def resume_writing(self) -> None:
        if self._output is not None:
            self._output.paused = False
            if not self._closed:
                self._output.pump()
                if self._backlogged:
                    self._backlogged = False
                    self.update_reading()

    # Reads land in the event loop's read buffer (many frames at a time); whole frames are
    # copied out of it and an unfinished one's start is carried to the next read. A frame
    # larger than CARRY_MAX gets a buffer of its own, read into straight and grown as its
    # bytes arrive (twice what arrived, up to its size): memory follows what the client sent,
    # never what a frame claims.

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._frame is not None:
            if self._got == len(self._frame):
                self._grow()
            return self._frame_view[self._got :]
        carry = self._carry
        view = self._reader.view
        if not carry:
            return view
        n = len(carry)
        view[:n] = carry
        return view[n:]

    def buffer_updated(self, nbytes: int) -> None:
        self.touch(time.monotonic())
        if self._frame is not None:
            self._got += nbytes
            if self._got == self._frame_size:
                frame = self._frame
                self._frame = None
                self._frame_view.release()
                # Its bytes now count as a request's, in _request.
                self._request_bytes.give(self._held_bytes)
                self._held_bytes = 0
                if self._loop is not None:
                    self._limits.trimmer.freed(self._loop, len(frame))
                self._request(frame)
                if self._request_bytes.exhausted:
                    self.update_reading()
            return
        end = len(self._carry) + nbytes
        if self._carry:
            self._request_bytes.give(self._held_bytes)
            self._held_bytes = 0
            self._carry = b""
        # The answers to the requests of one read go out together, in one write (a client that
        # pipelines heartbeats or small produces gets one send, not one per answer).
        self._corked = True
        try:
            self._read_frames(end)
        finally:
            self._corked = False
            self._flush()

    def _read_frames(self, end: int) -> None:
        data = self._reader.data
        view = self._reader.view
        start = 0
        turn = self._turn
        while not self._closed:
            avail = end - start
            if avail < 4:
                break
            if not turn:
                # This connection's turn is over: the rest waits for the next iteration of the
                # event loop, after the other connections' reads.
                self._waiting_turn = True
                self.update_reading()
                assert self._loop is not None
                self._loop.call_soon(self._next_turn)
                break
            try:
                size = protocol.frame_size(data[start : start + 4], self._max_frame)
            except errors.DecodeError as e:
                self.close_for(e)
                return
            if avail - 4 >= size:
                start += 4 + size
                turn -= 1
                self._request(bytes(view[start - size : start]))
                continue
            if avail > CARRY_MAX:
                # A large frame: on into a buffer of its own.
                got = avail - 4
                cap = min(size, 2 * got)
                frame = bytearray(cap)
                frame[:got] = view[start + 4 : end]
                self._frame = frame
                self._frame_view = memoryview(frame)
                self._frame_size = size
                self._got = got
                self._held_bytes = cap
                self._request_bytes.take(cap)
                return
            break
        if start < end and not self._closed:
            self._carry = bytes(view[start:end])
            self._held_bytes = end - start
            self._request_bytes.take(self._held_bytes)

    def _next_turn(self) -> None:
        """Handle the requests left over from this connection's last turn; while reading is
        stopped for another reason (the client does not read its answers, a quota throttle,
        a pause), they wait for reading to resume."""
        self._waiting_turn = False
        if self._closed:
            return
        if self._backlogged or self._muted_until or self._paused_by_fault or self._stopped:
            self._turn_deferred = True
            self.update_reading()
            return
        carry = self._carry
        if carry:
            self._reader.view[: len(carry)] = carry
            self._turn = BACKLOG_TURN_REQUESTS
            try:
                self.buffer_updated(0)
            finally:
                self._turn = TURN_REQUESTS
        self.update_reading()

    def _grow(self) -> None:
        """Make room for more of the large frame: twice what arrived, at most its size."""
        frame = self._frame
        assert frame is not None
        old = len(frame)
        new = min(self._frame_size, 2 * old)
        self._frame_view.release()
        try:
            if _resize(frame, new) != 0:
                raise MemoryError(f"cannot grow a frame's buffer to {new} bytes")
        except BufferError:
            # A view of it is still held (the TLS layer's last buffer, until its next read):
            # the frame moves to a larger buffer.
            grown = bytearray(new)
            grown[:old] = frame
            self._frame = frame = grown
        self._frame_view = memoryview(frame)
        self._held_bytes += new - old
        self._request_bytes.take(new - old)

    def _release_frame(self) -> None:
        """Drop the unfinished frame (the connection closed)."""
        if self._frame is not None:
            self._frame_view.release()
            self._frame = None
        self._carry = b""
        if self._held_bytes:
            self._request_bytes.give(self._held_bytes)
            self._held_bytes = 0

    # -- reading and idleness ---------------------------------------------------------------

    def touch(self, now: float) -> None:
        """This connection was active at ``now``: last in the idle order."""
        self.active_at = now
        lru = self._limits.lru
        if self in lru:
            lru.move_to_end(self)
        elif not self._closed:
            lru[self] = None

    def close_excess(self) -> None:
        """Close: the inter-broker listener took a connection past max.connections, and this
        one is the least recently active of another listener's (Kafka's
        closeExcessConnections)."""
        log.info("Closing connection from %s: the broker is past max.connections", self.peer)
        self.close()

    def close_idle(self) -> None:
        """Close: idle for connections.max.idle.ms (Kafka's Selector closes it quietly)."""
        log.debug("Closing idle connection from %s", self.peer)
        self.close()

    def update_reading(self) -> None:
        """Read, or stop reading, as the reasons to stop say."""
        if self._closed or self.transport is None:
            return
        want = not (
            self._full
            or self._stopped
            or self._paused_by_fault
            or self._backlogged
            or self._muted_until
            or self._waiting_turn
            # A frame being read into its own buffer is read to its end, as Kafka's selector
            # reads on a channel whose receive has its memory (KafkaChannel.isInMutableState).
            or (self._request_bytes.exhausted and self._frame is None)
        )
        if want != self._reading:
            self._reading = want
            if want:
                self.transport.resume_reading()
            else:
                self.transport.pause_reading()
        if want and self._turn_deferred:
            self._turn_deferred = False
            self._waiting_turn = True
            assert self._loop is not None
            self._loop.call_soon(self._next_turn)

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
        if ctx.mutations is not None and throttle is not None:
            # Kafka's sendResponseMaybeThrottleWithControllerQuota: the larger of the two.
            throttle = max(throttle, ctx.mutations.throttle_ms())
        if result is None:
            if throttle:
                self._mute(throttle)
            return  # no response (Produce with acks=0)
        slot = _Slot(len(frame))
        self._request_bytes.take(slot.cost)
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
        quotas = self.state.quotas.active
        started = time.perf_counter() if quotas else 0.0
        try:
            result = self.state.groups.handle_frame(frame, self.client_host)
        except errors.DecodeError as e:
            self.close_for(e)
            return
        except Exception as e:  # a bug must not take the broker down
            self._failed(protocol.decode_request_header(frame), e)
            return
        slot = _Slot(len(frame))
        header = None
        if quotas:
            # Its handler's time against request_percentage, as any other api's.
            header = protocol.decode_request_header(frame)
            slot.throttle = self.state.quotas.record(
                REQUEST_PERCENTAGE,
                self.principal,
                header.client_id or "",
                (time.perf_counter() - started) * 100,
            )
        self._request_bytes.take(slot.cost)
        self._slots.append(slot)
        if type(result) is bytes:
            if slot.throttle:
                assert header is not None
                result = _with_throttle(header, result, slot.throttle)
            slot.frame = result
            slot.ready = True
            self._flush()
            return
        self._await(result, slot, header or protocol.decode_request_header(frame))

    def _await(self, result: Any, slot: _Slot, request: protocol.RequestHeader) -> None:
        """Fill `slot` once `result` (an awaitable response) is done."""
        task = asyncio.ensure_future(result)
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._finished, slot=slot, request=request))
        if len(self._tasks) >= self._max_in_flight and not self._full:
            self._full = True
            self.update_reading()

    def _finished(
        self, task: asyncio.Future[Any], *, slot: _Slot, request: protocol.RequestHeader
    ) -> None:
        self._tasks.discard(task)
        if self._full and len(self._tasks) < self._max_in_flight // 2:
            self._full = False
            self.update_reading()
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
        elif slot.throttle and type(body) is bytes:
            body = _with_throttle(request, body, slot.throttle)
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
        if self._corked or self._paused_by_fault:
            return
        slots = self._slots
        output = self._output
        frames: list[bytes] = []
        cost = 0
        while slots and slots[0].ready:
            slot = slots.popleft()
            cost += slot.cost
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
        if cost:
            self._request_bytes.give(cost)
            if (
                output is not None
                and output.paused
                and not self._backlogged
                and self.transport is not None
                and self.transport.get_write_buffer_size() > OUTPUT_MAX
            ):
                # The client sends and does not read: read no more of it until it catches up.
                self._backlogged = True
                self.update_reading()

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
        first = not self._muted_until
        self._muted_until = until
        self.update_reading()
        if first:
            loop.call_at(until, self._unmute)

    def _unmute(self) -> None:
        if self._closed or not self._muted_until:
            return
        loop = asyncio.get_running_loop()
        if loop.time() < self._muted_until:
            # Early (asyncio runs a timer up to its clock resolution ahead), or a longer
            # throttle came since: wait for the end of the latest one.
            loop.call_at(self._muted_until, self._unmute)
            return
        self._muted_until = 0.0
        self.update_reading()

    def hold(self) -> None:
        """Read nothing and answer nothing until :meth:`release` (``Faults.pause``)."""
        if self._closed or self._paused_by_fault:
            return
        self._paused_by_fault = True
        self.update_reading()

    def release(self) -> None:
        """Serve again after :meth:`hold`: read what waits, send the answers held."""
        if not self._paused_by_fault:
            return
        self._paused_by_fault = False
        if self._closed:
            return
        self.update_reading()
        self._flush()

    def stop_reading(self) -> None:
        """Read no more requests (the broker is stopping); those in flight still get answers."""
        self._stopped = True
        self.update_reading()

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
    def busy(self) -> bool:
        """Whether requests are in flight or responses on their way out (not idleness)."""
        if self._slots or self._tasks:
            return True
        if self._output is not None and self._output.pending:
            return True
        return self.transport is not None and self.transport.get_write_buffer_size() > 0

    @property
    def in_flight(self) -> int:
        """The responses not yet answered or not yet handed to the transport."""
        return len(self._slots) + (self._output.pending if self._output is not None else 0)
