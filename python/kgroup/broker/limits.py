"""The broker's limits on its clients, as Kafka's ``SocketServer`` and ``Selector`` keep them.

- ``max.connections`` (broker-wide; ``listener.name.<l>.max.connections`` for one listener):
  past it the broker stops accepting, as Kafka's acceptor blocks in
  ``ConnectionQuotas.waitForConnectionSlot``; new connections wait in the kernel's backlog
  until one closes.
- ``max.connections.per.ip`` and ``max.connections.per.ip.overrides`` (``host:count,...``): a
  connection past its address's limit is accepted and closed at once, with Kafka's log line
  (``TooManyConnectionsException``).
- ``connections.max.idle.ms``: a connection that read and wrote nothing for that long, and has
  no request in flight, is closed (Kafka's ``Selector`` idle expiry).
- ``queued.max.request.bytes`` (-1: no limit): the bytes of requests read but not yet answered,
  and of frames begun but not finished, across the broker; past it no connection is read until
  they fall back under 90% of it (Kafka's ``MemoryPool``: the selector reads nothing while the
  pool is out of memory). Kafka reserves a frame's claimed size as soon as its size is read;
  kgroup counts what arrived, so a frame that claims 100 MB and sends six bytes holds six.

Memory per connection follows what it sent: one read buffer per event loop
(:class:`ReadBuffer`) takes every connection's reads, whole frames are copied out of it, and
only the unfinished part of a frame stays with its connection (a copy, or past
``CARRY_MAX`` a buffer of its own grown as its bytes arrive). Memory freed when connections
close goes back to the OS: glibc keeps freed heap memory for the next ``malloc``, so after a
burst of closes (or large frames) the broker calls ``malloc_trim`` (:class:`Trimmer`).
"""

from __future__ import annotations

import collections
import ctypes
import ctypes.util
import errno
import logging
import os
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kgroup.broker.config import parse_ip_overrides
from kgroup.broker.quotas import Rate

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.config import BrokerConfig

__all__ = [
    "CARRY_MAX",
    "READ_BUFFER",
    "Acceptor",
    "ConnectionQuotas",
    "Limits",
    "QuotaSlot",
    "ReadBuffer",
    "RequestBytes",
    "Trimmer",
]

log = logging.getLogger("kgroup.broker")

#: READ_BUFFER is the size of an event loop's read buffer: the frames that fit are read many at
#: a time, by every connection in turn.
READ_BUFFER = 256 * 1024
#: CARRY_MAX is the most of an unfinished frame a connection carries as a copy between reads;
#: past it the frame is read into a buffer of its own.
CARRY_MAX = 64 * 1024
#: ACCEPT_BATCH is how many connections one wake of the acceptor takes from the backlog.
ACCEPT_BATCH = 128
#: TRIM_CLOSES and TRIM_BYTES: malloc_trim runs once this many connections closed, or this many
#: bytes of large frames were freed, since the last trim (at most once per TRIM_INTERVAL_S).
TRIM_CLOSES = 64
TRIM_BYTES = 16 * 1024 * 1024
TRIM_INTERVAL_S = 1.0
#: MMAP_THRESHOLD and TOP_KEEP are the malloc thresholds the broker sets (glibc's
#: M_MMAP_THRESHOLD and M_TRIM_THRESHOLD): blocks up to 32 MiB come from the heap, and up to
#: 64 MiB free at its top is kept for the next ones. They are where glibc's own adaptive
#: thresholds end up after its first large free; before that, with its defaults (128 KiB),
#: each produce frame of a megabyte was mapped or the heap shrunk under it as it was freed,
#: and the next one faulted its pages in afresh: 190,000 page faults and four times the CPU
#: for 200 MB produced (bench_broker, bench_tls). The trimmer still gives memory back after
#: bursts.
MMAP_THRESHOLD = 32 * 1024 * 1024
TOP_KEEP = 64 * 1024 * 1024
#: _MALLOC_ENV are the environment variables with which a user sets glibc's thresholds
#: themselves: where one is set the broker leaves them alone.
_MALLOC_ENV = ("GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
#: RESUME_FRACTION: reading resumes once the queued request bytes fall below this share of
#: queued.max.request.bytes (so that the limit is not crossed and recrossed by every answer).
RESUME_FRACTION = 0.9
_ACCEPT_RETRY_S = 1.0
#: IP_RATES_MAX: the most addresses whose connection creation rate is kept at once.
IP_RATES_MAX = 10_000
_FD_EXHAUSTED = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


def _resolve(host: str) -> str:
    """A host of the overrides as the address connections come from (Kafka resolves each with
    ``InetAddress.getByName``); unresolvable: as written."""
    try:
        return str(socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)[0][4][0])
    except (OSError, IndexError):
        return host


class ConnectionQuotas:
    """ConnectionQuotas counts the open connections by address and by listener, says whether
    one more may be accepted, and measures the rate new ones come at, against
    ``max.connection.creation.rate`` (broker-wide and per listener) and the IP quotas'
    ``connection_creation_rate`` (Kafka's ``ConnectionQuotas``). Event loop only."""

    def __init__(self, config: BrokerConfig) -> None:
        self._config = config
        self.total = 0
        self.by_ip: collections.Counter[str] = collections.Counter()
        self.by_listener: collections.Counter[str] = collections.Counter()
        #: _waiting are the acceptors that stopped accepting for want of a slot.
        self._waiting: list[Acceptor] = []
        window_s = int(config.get("quota.window.size.seconds"))
        self._window_ms = window_s * 1000
        self._samples = int(config.get("quota.window.num"))
        #: max_throttle_ms caps a connection's delay at one quota window, as Kafka's.
        self.max_throttle_ms = self._window_ms
        self._broker_rate = Rate(self._window_ms, self._samples)
        self._listener_rates: dict[str, Rate] = {}
        self._ip_rates: dict[str, Rate] = {}
        #: ip_rate_quota gives an address's connection_creation_rate quota, None for none
        #: (the broker sets it to its client quotas' ``ip_connection_rate``).
        self.ip_rate_quota: Callable[[str], float | None] = lambda ip: None
        #: protected is the inter-broker listener when it is protected (see :meth:`protect`).
        self.protected: str | None = None
        #: on_excess closes connections of other listeners when the protected one took the
        #: broker past max.connections (Limits sets it).
        self.on_excess: Callable[[], None] = lambda: None
        self.reconfigure()

    def reconfigure(self) -> None:
        """Read the limits again (a dynamic broker config changed them); acceptors waiting for
        a slot accept again if one is now free (Kafka's ``notifyAll``)."""
        config = self._config
        self.max_connections = int(config.get("max.connections"))
        self.max_per_ip = int(config.get("max.connections.per.ip"))
        self.per_ip_overrides = {
            _resolve(h): n
            for h, n in parse_ip_overrides(config.get("max.connections.per.ip.overrides")).items()
        }
        self.max_creation_rate = int(config.get("max.connection.creation.rate"))
        self._listener_max: dict[str, int] = {}
        self._listener_rate_max: dict[str, int] = {}
        self._wake()

    def listener_max(self, listener: str) -> int:
        """A listener's limit: ``listener.name.<listener>.max.connections``, else
        ``max.connections`` (Kafka reads the listener's configs with its prefix first)."""
        got = self._listener_max.get(listener)
        if got is None:
            got = int(self._config.for_listener(listener, "max.connections"))
            self._listener_max[listener] = got
        return got

    def listener_rate_max(self, listener: str) -> int:
        """``listener.name.<listener>.max.connection.creation.rate``, else the broker's."""
        got = self._listener_rate_max.get(listener)
        if got is None:
            got = int(self._config.for_listener(listener, "max.connection.creation.rate"))
            self._listener_rate_max[listener] = got
        return got

    # -- connection creation rates ------------------------------------------------------------

    def _throttle(self, rate: Rate, bound: float, now_ms: float) -> int:
        """Count one connection in ``rate``; the delay in ms that brings it back to ``bound``
        (Kafka's ``QuotaUtils.boundedThrottleTime``), 0 within it."""
        rate.record(1.0, now_ms)
        return min(rate.throttle_ms(bound, now_ms), self.max_throttle_ms)

    def _listener_rate(self, listener: str) -> Rate:
        rate = self._listener_rates.get(listener)
        if rate is None:
            rate = self._listener_rates[listener] = Rate(self._window_ms, self._samples)
        return rate

    def record_connection(self, listener: str, now_ms: float) -> int:
        """Count a connection just accepted on ``listener`` against the broker's and the
        listener's creation rates (the protected listener's against its own only); how long
        the acceptor waits before it goes on, in ms (Kafka's acceptor waits, that connection
        in hand, and takes no other meanwhile)."""
        broker = 0
        if listener != self.protected:
            broker = self._throttle(self._broker_rate, self.max_creation_rate, now_ms)
        rate = self._listener_rate(listener)
        return max(broker, self._throttle(rate, self.listener_rate_max(listener), now_ms))

    def record_ip(self, listener: str, ip: str, now_ms: float) -> int:
        """Count a connection from ``ip`` against its connection_creation_rate quota, if it
        has one; past it, the delay before the connection is closed unserved, in ms (and the
        connection is not counted anywhere: Kafka's ``ConnectionThrottledException``)."""
        bound = self.ip_rate_quota(ip)
        if bound is None:
            return 0
        rate = self._ip_rates.get(ip)
        if rate is None:
            if len(self._ip_rates) >= IP_RATES_MAX:
                self._forget_quiet_ips(now_ms)
            rate = self._ip_rates[ip] = Rate(self._window_ms, self._samples)
        delay = self._throttle(rate, bound, now_ms)
        if delay:
            rate.record(-1.0, now_ms)
            if listener != self.protected:
                self._broker_rate.record(-1.0, now_ms)
            self._listener_rate(listener).record(-1.0, now_ms)
        return delay

    def _forget_quiet_ips(self, now_ms: float) -> None:
        """Drop the rates of addresses with nothing in their windows (Kafka expires an IP's
        sensor after an hour without connections); all of them if every one is busy."""
        quiet = [ip for ip, r in self._ip_rates.items() if not r.measure(now_ms)]
        for ip in quiet or list(self._ip_rates):
            del self._ip_rates[ip]

    def protect(self, listeners: list[str]) -> None:
        """Know the broker's listeners: with more than one, the inter-broker listener is
        protected (Kafka's ConnectionQuotas.protectedListener): the broker-wide
        max.connections and max.connection.creation.rate do not hold it back, and a connection
        it takes past max.connections closes the least recently active one of another
        listener."""
        name = self._config.inter_broker_listener
        found = [lst for lst in listeners if lst.upper() == name]
        self.protected = found[0] if len(listeners) > 1 and found else None

    def slot_available(self, listener: str) -> bool:
        """Whether a connection may be accepted on ``listener`` now."""
        if self.by_listener[listener] >= self.listener_max(listener):
            return False
        if listener == self.protected:
            return True
        return self.total < self.max_connections

    @property
    def excess(self) -> int:
        """How many connections are open past max.connections (the protected listener's)."""
        return max(0, self.total - self.max_connections)

    def ip_limit(self, ip: str) -> int:
        return self.per_ip_overrides.get(ip, self.max_per_ip)

    def inc(self, listener: str, ip: str) -> bool:
        """Count a connection just accepted; False when its address is past its limit (the
        caller closes it, and the count is not kept)."""
        if self.by_ip[ip] >= self.ip_limit(ip):
            if not self.by_ip[ip]:
                del self.by_ip[ip]
            return False
        self.by_ip[ip] += 1
        self.by_listener[listener] += 1
        self.total += 1
        if listener == self.protected and self.total > self.max_connections:
            self.on_excess()
        return True

    def dec(self, listener: str, ip: str) -> None:
        """A counted connection closed: an acceptor waiting for a slot accepts again."""
        n = self.by_ip[ip] - 1
        if n > 0:
            self.by_ip[ip] = n
        else:
            del self.by_ip[ip]
        self.by_listener[listener] -= 1
        self.total -= 1
        self._wake()

    def _wake(self) -> None:
        if self._waiting:
            waiting = [a for a in self._waiting if self.slot_available(a.listener)]
            for a in waiting:
                self._waiting.remove(a)
                a.resume()

    def wait_for_slot(self, acceptor: Acceptor) -> None:
        if acceptor not in self._waiting:
            self._waiting.append(acceptor)

    def forget(self, acceptor: Acceptor) -> None:
        if acceptor in self._waiting:
            self._waiting.remove(acceptor)


class QuotaSlot:
    """QuotaSlot is one accepted connection's place in the connection quotas, given back once
    (``release``) however the connection ends: closed, refused by its TLS handshake, or failed
    before it was served."""

    __slots__ = ("held", "ip", "listener", "quotas")

    def __init__(self, quotas: ConnectionQuotas, listener: str, ip: str) -> None:
        self.quotas = quotas
        self.listener = listener
        self.ip = ip
        self.held = True

    def release(self) -> None:
        if self.held:
            self.held = False
            self.quotas.dec(self.listener, self.ip)


class RequestBytes:
    """RequestBytes counts the bytes of requests read and not yet answered, and of frames
    begun, across the broker, against ``queued.max.request.bytes`` (Kafka's ``MemoryPool``).
    Past the limit every connection stops reading; under ``RESUME_FRACTION`` of it they read
    again. Event loop only."""

    __slots__ = ("_resume_below", "exhausted", "limit", "on_change", "peak", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.peak = 0
        self.exhausted = False
        self._resume_below = int(limit * RESUME_FRACTION)
        #: on_change is called when ``exhausted`` changes (the broker pauses or resumes reads).
        self.on_change: Callable[[], object] | None = None

    def take(self, n: int) -> None:
        used = self.used + n
        self.used = used
        if used > self.peak:
            self.peak = used
        if self.limit >= 0 and not self.exhausted and used >= self.limit:
            self.exhausted = True
            log.debug("Queued request bytes %d reached queued.max.request.bytes", used)
            if self.on_change is not None:
                self.on_change()

    def give(self, n: int) -> None:
        used = self.used - n
        self.used = used
        if self.exhausted and used < self._resume_below:
            self.exhausted = False
            if self.on_change is not None:
                self.on_change()


class ReadBuffer:
    """ReadBuffer is one event loop's read buffer, lent to a connection from ``get_buffer``
    to its ``buffer_updated`` (the event loop calls the two back to back): a connection keeps
    nothing in it between reads. Not thread-safe: one per event loop."""

    __slots__ = ("data", "view")

    def __init__(self, size: int = READ_BUFFER) -> None:
        self.data = bytearray(size)
        self.view = memoryview(self.data)


class _Libc:
    """glibc's malloc_trim and mallopt, where the C library has them."""

    trim: Callable[[int], int] | None = None
    tuned = False

    @staticmethod
    def _function(symbol: str, *argtypes: Any) -> Any:
        name = ctypes.util.find_library("c")
        try:
            fn: Any = getattr(ctypes.CDLL(name), symbol) if name else None
        except (OSError, AttributeError):
            return None
        fn.argtypes = list(argtypes)
        fn.restype = ctypes.c_int
        return fn

    @classmethod
    def load(cls) -> Callable[[int], int] | None:
        if cls.trim is None:
            cls.trim = cls._function("malloc_trim", ctypes.c_size_t) or (lambda pad: 0)
        return cls.trim

    @classmethod
    def tune(cls) -> None:
        """Set the process's malloc thresholds (MMAP_THRESHOLD, TOP_KEEP) once, unless the
        environment sets them."""
        if cls.tuned:
            return
        cls.tuned = True
        if any(os.environ.get(k) for k in _MALLOC_ENV):
            return
        mallopt = cls._function("mallopt", ctypes.c_int, ctypes.c_int)
        if mallopt is not None:
            mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
            mallopt(_M_TRIM_THRESHOLD, TOP_KEEP)


#: glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


class Trimmer:
    """Trimmer gives freed memory back to the OS after connections close or large frames are
    freed: glibc keeps what Python and the Rust core free for later ``malloc`` calls (most of
    it in the middle of the heap, which only ``malloc_trim`` releases). Event loop only.
    Making one sets the process's malloc thresholds (MMAP_THRESHOLD)."""

    __slots__ = ("_closes", "_freed", "_last", "_loop", "_scheduled", "trim_seconds", "trims")

    def __init__(self) -> None:
        self._closes = 0
        self._freed = 0
        self._last = 0.0
        self._scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        #: trims counts the trims made, trim_seconds the time they took.
        self.trims = 0
        self.trim_seconds = 0.0
        _Libc.tune()

    def closed(self, loop: asyncio.AbstractEventLoop) -> None:
        """A connection closed."""
        self._closes += 1
        if self._closes >= TRIM_CLOSES:
            self._schedule(loop)

    def freed(self, loop: asyncio.AbstractEventLoop, n: int) -> None:
        """A large frame's ``n`` bytes were freed."""
        self._freed += n
        if self._freed >= TRIM_BYTES:
            self._schedule(loop)

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._scheduled:
            return
        self._scheduled = True
        # After the burst: the trim waits for a quiet moment at most TRIM_INTERVAL_S apart.
        delay = max(0.05, self._last + TRIM_INTERVAL_S - time.monotonic())
        loop.call_later(delay, self.trim)

    def trim(self) -> None:
        self._scheduled = False
        self._closes = 0
        self._freed = 0
        self._last = time.monotonic()
        started = time.perf_counter()
        fn = _Libc.load()
        if fn is not None:
            fn(0)
        self.trims += 1
        self.trim_seconds += time.perf_counter() - started


class Limits:
    """Limits holds one broker's limits and what they count: the connection quotas, the
    queued request bytes, the idle connections in the order they were last active, the event
    loop's read buffer and the trimmer. Event loop only."""

    def __init__(self, config: BrokerConfig, listeners: list[str] | None = None) -> None:
        self.quotas = ConnectionQuotas(config)
        self.quotas.protect(listeners or [])
        self.quotas.on_excess = self.close_excess
        self.request_bytes = RequestBytes(int(config.get("queued.max.request.bytes")))
        #: idle_ms is connections.max.idle.ms (a negative value: never).
        self.idle_ms = int(config.get("connections.max.idle.ms"))
        #: lru holds the open connections, least recently active first.
        self.lru: collections.OrderedDict[Any, None] = collections.OrderedDict()
        self.read_buffer = ReadBuffer()
        #: acceptors are the listeners' acceptors (the Broker adds them).
        self.acceptors: list[Acceptor] = []
        self.trimmer = Trimmer()
        #: idle_closed counts the connections closed for being idle.
        self.idle_closed = 0

    def close_excess(self) -> None:
        """The protected listener took a connection past max.connections: close as many of
        the other listeners' connections, the least recently active first (Kafka's
        processors close their lowest priority channel while the broker is over)."""
        quotas = self.quotas
        excess = quotas.excess
        if not excess:
            return
        for conn in list(self.lru):
            if excess <= 0:
                break
            if conn.listener.name == quotas.protected:
                continue
            del self.lru[conn]
            excess -= 1
            conn.close_excess()

    def expire_idle(self, now: float) -> float:
        """Close the connections idle for connections.max.idle.ms (with no request in
        flight); the seconds until the next may expire."""
        if self.idle_ms < 0:
            return 3600.0
        limit = self.idle_ms / 1000
        lru = self.lru
        while lru:
            conn = next(iter(lru))
            idle = now - conn.active_at
            if idle < limit:
                return limit - idle
            if conn.busy:
                # Waiting on the broker (a long poll, a parked join) is not idleness.
                conn.touch(now)
                continue
            del lru[conn]
            self.idle_closed += 1
            conn.close_idle()
        return limit


class Acceptor:
    """Acceptor accepts one listener's connections, within the connection quotas: at
    ``max.connections`` it stops accepting until a connection closes (the kernel's backlog
    holds the next ones), and a connection past its address's ``max.connections.per.ip`` is
    closed at once. Event loop only."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        sock: socket.socket,
        listener: str,
        quotas: ConnectionQuotas,
        factory: Callable[[QuotaSlot], Any],
        backlog: int = 512,
        request_bytes: RequestBytes | None = None,
    ) -> None:
        self.loop = loop
        self.sock = sock
        self.listener = listener
        self.quotas = quotas
        self.factory = factory
        self._backlog = backlog
        self._request_bytes = request_bytes
        self._reading = False
        self._closed = False
        self._connecting: set[asyncio.Task[Any]] = set()
        #: refused counts connections closed at once for their address's limit.
        self.refused = 0
        #: _held is a connection accepted past the creation rate: the acceptor takes no other
        #: until its delay ends (``_throttled``) and a slot is free for it.
        self._held: tuple[socket.socket, str] | None = None
        self._throttled: asyncio.TimerHandle | None = None
        #: ip_throttled counts connections closed unserved past their address's creation
        #: rate; _closing holds them until their delay ends.
        self.ip_throttled = 0
        self._closing: dict[socket.socket, asyncio.TimerHandle] = {}

    def start(self) -> None:
        self.sock.setblocking(False)
        self.sock.listen(self._backlog)
        self._watch()

    def _watch(self) -> None:
        if not self._reading and not self._closed:
            self._reading = True
            self.loop.add_reader(self.sock.fileno(), self._accept)

    def _unwatch(self) -> None:
        if self._reading:
            self._reading = False
            self.loop.remove_reader(self.sock.fileno())

    def memory_changed(self) -> None:
        """The queued request bytes crossed their limit, one way or the other."""
        if self._request_bytes is not None and not self._request_bytes.exhausted:
            self.resume()

    def resume(self) -> None:
        """A slot freed: accept again (what waits in the backlog first)."""
        if not self._closed and not self._reading and self._throttled is None:
            self._watch()
            self.loop.call_soon(self._accept)

    def _throttle_ended(self) -> None:
        self._throttled = None
        self.resume()

    def _accept(self) -> None:
        quotas = self.quotas
        for _ in range(ACCEPT_BATCH):
            if self._closed or self._throttled is not None:
                return
            if not quotas.slot_available(self.listener):
                self._unwatch()
                quotas.wait_for_slot(self)
                return
            if self._held is not None:
                conn, ip = self._held
                self._held = None
                self._admit(conn, ip)
                continue
            if self._request_bytes is not None and self._request_bytes.exhausted:
                # Nothing is read while the queued bytes are past their limit: new connections
                # wait in the backlog meanwhile (Kafka accepts them and reads nothing; so the
                # client sees the same), which also keeps a new connection's first read from
                # slipping past the limit. memory_freed resumes.
                self._unwatch()
                return
            try:
                conn, addr = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                if e.errno in _FD_EXHAUSTED:
                    # Out of file descriptors: the backlog waits, as asyncio's server does.
                    log.error("Error while accepting connection: %s; retrying in 1 s", e)
                    self._unwatch()
                    self.loop.call_later(_ACCEPT_RETRY_S, self.resume)
                    return
                raise
            ip = addr[0] if isinstance(addr, tuple) else str(addr)
            delay = quotas.record_connection(self.listener, self.loop.time() * 1000)
            if delay:
                # Past max.connection.creation.rate: this connection waits, and the backlog
                # behind it, until the rate is back within it.
                log.debug("Delaying the connection from %s by %d ms (creation rate)", ip, delay)
                self._held = (conn, ip)
                self._unwatch()
                self._throttled = self.loop.call_later(delay / 1000, self._throttle_ended)
                return
            self._admit(conn, ip)

    def _admit(self, conn: socket.socket, ip: str) -> None:
        """Take a connection accepted within the rates: within its address's limits, it is
        served; else it is closed (at once, or after its address's throttle time)."""
        quotas = self.quotas
        delay = quotas.record_ip(self.listener, ip, self.loop.time() * 1000)
        if delay:
            # Kafka keeps such a connection open, unread, for the throttle time, then closes
            # it: a client that reconnects at once does not spin.
            self.ip_throttled += 1
            log.debug("Closing the connection from %s in %d ms (its creation rate)", ip, delay)
            self._closing[conn] = self.loop.call_later(delay / 1000, self._close_throttled, conn)
            return
        if not quotas.inc(self.listener, ip):
            self.refused += 1
            log.info(
                "Rejected connection from %s, address already has the configured maximum "
                "of %d connections.",
                ip,
                quotas.ip_limit(ip),
            )
            conn.close()
            return
        conn.setblocking(False)
        task = self.loop.create_task(self._connect(conn, QuotaSlot(quotas, self.listener, ip)))
        self._connecting.add(task)
        task.add_done_callback(self._connecting.discard)

    def _close_throttled(self, conn: socket.socket) -> None:
        self._closing.pop(conn, None)
        conn.close()

    async def _connect(self, conn: socket.socket, slot: QuotaSlot) -> None:
        try:
            await self.loop.connect_accepted_socket(lambda: self.factory(slot), conn)
        except Exception as e:  # the peer left before it was served
            log.debug("Connection from %s failed before it was served: %s", slot.ip, e)
            slot.release()
            conn.close()

    def close(self) -> None:
        """Stop accepting and close the listening socket."""
        if self._closed:
            return
        self._unwatch()
        self._closed = True
        self.quotas.forget(self)
        self.sock.close()
        for t in self._connecting:
            t.cancel()
        if self._throttled is not None:
            self._throttled.cancel()
            self._throttled = None
        if self._held is not None:
            self._held[0].close()
            self._held = None
        for conn, timer in list(self._closing.items()):
            timer.cancel()
            conn.close()
        self._closing.clear()

    async def wait_closed(self) -> None:
        return None
