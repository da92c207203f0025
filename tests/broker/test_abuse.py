"""The broker's limits on its clients (issue 24) and its behaviour under abuse.

The limits are Kafka's, with Kafka's config names: ``max.connections`` (the acceptor stops
accepting), ``max.connections.per.ip`` with its overrides (a connection past them is closed at
once), ``connections.max.idle.ms`` (Kafka's Selector closes idle connections),
``queued.max.request.bytes`` (Kafka's MemoryPool: nothing is read while it is used up), and
``socket.request.max.bytes``. Then issue 24's abuse acceptance, scaled down
(``KGROUP_ABUSE_CONNECTIONS``, 2,000 by default; bench/bench_abuse.py runs 10,000): held
connections, stalled partial frames, frames claiming huge sizes, random bytes after a valid
ApiVersions and an ApiVersions flood, beside a real producer and consumer, with the broker in a
child process so that its own memory is measured.
"""

from __future__ import annotations

import os
import socket
import struct
import time

import pytest
from support.abuse import (
    FloodProcess,
    answered_in,
    api_versions_request,
    open_claiming,
    open_held,
    open_stalled,
    probe,
    quantile,
    raise_fd_limit,
    random_after_handshake,
    rss_mb,
)

from kgroup import protocol
from kgroup.broker.config import BrokerConfig, ConfigError
from kgroup.broker.limits import CARRY_MAX
from kgroup.testing import Broker

N = int(os.environ.get("KGROUP_ABUSE_CONNECTIONS", 2000))
#: PER_CONNECTION is what one open connection may cost the broker at most (measured: about
#: 5.7 KiB with asyncio's loop or uvloop, the Connection, its transport and the event loop's
#: bookkeeping): the memory bounds below are stated with it.
PER_CONNECTION = 12 * 1024


def _answers(host: str, port: int, timeout: float, source: str = "127.0.0.1") -> bool:
    """Whether a new connection gets an ApiVersions answer within ``timeout`` seconds."""
    try:
        with socket.socket() as s:
            s.bind((source, 0))
            s.settimeout(timeout)
            s.connect((host, port))
            s.sendall(api_versions_request())
            head = s.recv(4)
            return len(head) == 4
    except OSError:
        return False


def _closed_by_peer(s: socket.socket, timeout: float) -> bool:
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(65536):
                return True
    except TimeoutError:
        return False
    except OSError:
        return True


def _address(broker: Broker) -> tuple[str, int]:
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    return host, int(port)


# -- configuration -----------------------------------------------------------------------------


def test_limit_configs_have_kafkas_defaults() -> None:
    # Kafka's SocketServerConfigs defaults.
    c = BrokerConfig({})
    assert c.get("max.connections") == 2**31 - 1
    assert c.get("max.connections.per.ip") == 2**31 - 1
    assert c.get("max.connections.per.ip.overrides") == ""
    assert c.get("connections.max.idle.ms") == 600_000
    assert c.get("queued.max.request.bytes") == -1
    assert c.get("socket.request.max.bytes") == 104_857_600


def test_limit_configs_are_validated_as_kafka_does() -> None:
    # Kafka's KafkaConfig.validateValues and the ConfigDef validators.
    with pytest.raises(ConfigError, match=r"queued\.max\.request\.bytes must be larger"):
        BrokerConfig({"queued.max.request.bytes": 1000})
    BrokerConfig({"queued.max.request.bytes": 104_857_600})
    with pytest.raises(ConfigError, match="can be set to zero only if"):
        BrokerConfig({"max.connections.per.ip": 0})
    BrokerConfig({"max.connections.per.ip": 0, "max.connections.per.ip.overrides": "h:1"})
    with pytest.raises(ConfigError, match=r"max\.connections\.per\.ip\.overrides"):
        BrokerConfig({"max.connections.per.ip.overrides": "127.0.0.1"})
    with pytest.raises(ConfigError, match="at least 0"):
        BrokerConfig({"max.connections": -1})
    c = BrokerConfig({"listener.name.plaintext.max.connections": "7"})
    assert c.for_listener("PLAINTEXT", "max.connections") == 7
    assert c.for_listener("OTHER", "max.connections") == 2**31 - 1


# -- the connection limits -----------------------------------------------------------------------


def test_max_connections_stops_accepting_until_one_closes() -> None:
    # Kafka's SocketServerTest.testMaxConnections shape: past max.connections the acceptor
    # blocks (ConnectionQuotas.waitForConnectionSlot); the connection waits in the backlog and
    # is served once another closes.
    with Broker(config={"max.connections": 5}) as broker:
        host, port = _address(broker)
        crowd = open_held(host, port, 5, source="127.0.0.1")
        try:
            waiting = socket.create_connection((host, port), timeout=5)
            waiting.sendall(api_versions_request())
            waiting.settimeout(0.5)
            with pytest.raises(TimeoutError):
                waiting.recv(4)
            crowd.sockets.pop().close()
            waiting.settimeout(5)
            assert len(waiting.recv(4)) == 4
            waiting.close()
        finally:
            crowd.close()


def test_listener_max_connections_prefix() -> None:
    # listener.name.<listener>.max.connections (Kafka's listener-prefixed config).
    with Broker(config={"listener.name.plaintext.max.connections": 3}) as broker:
        host, port = _address(broker)
        crowd = open_held(host, port, 3, source="127.0.0.1")
        try:
            assert not _answers(host, port, 0.5)
            crowd.sockets.pop().close()
            assert _answers(host, port, 5)
        finally:
            crowd.close()


def test_max_connections_per_ip_and_overrides() -> None:
    # Kafka's SocketServerTest.testMaxConnectionsPerIp and testMaxConnectionsPerIpOverrides:
    # the connection past its address's limit is accepted and closed at once.
    config = {"max.connections.per.ip": 3, "max.connections.per.ip.overrides": "127.0.0.2:6"}
    with Broker(config=config) as broker:
        host, port = _address(broker)
        default = open_held(host, port, 3, source="127.0.0.1")
        overridden = open_held(host, port, 6, source="127.0.0.2")
        try:
            extra = open_held(host, port, 1, source="127.0.0.1")
            assert _closed_by_peer(extra.sockets[0], 5)
            extra.close()
            extra = open_held(host, port, 1, source="127.0.0.2")
            assert _closed_by_peer(extra.sockets[0], 5)
            extra.close()
            # Another address is not affected, and each connection counted is served.
            assert _answers(host, port, 5, source="127.0.0.3")
            overridden.sockets[0].sendall(api_versions_request())
            overridden.sockets[0].settimeout(5)
            assert len(overridden.sockets[0].recv(4)) == 4
            # Closing one frees its address's slot.
            default.sockets.pop().close()
            time.sleep(0.2)
            again = open_held(host, port, 1, source="127.0.0.1")
            again.sockets[0].sendall(api_versions_request())
            again.sockets[0].settimeout(5)
            assert len(again.sockets[0].recv(4)) == 4
            again.close()
        finally:
            default.close()
            overridden.close()


def test_idle_connections_are_closed() -> None:
    # Kafka's SocketServerTest.testIdleConnection / SelectorTest.testCloseOldestConnection: a
    # connection silent for connections.max.idle.ms is closed; an active one is not.
    with Broker(config={"connections.max.idle.ms": 400}) as broker:
        host, port = _address(broker)
        silent = socket.create_connection((host, port), timeout=5)
        active = socket.create_connection((host, port), timeout=5)
        started = time.monotonic()
        try:
            for i in range(8):
                active.sendall(api_versions_request(i))
                active.settimeout(5)
                assert len(active.recv(65536)) > 0
                time.sleep(0.15)
            assert _closed_by_peer(silent, 5)
            assert time.monotonic() - started >= 0.35
            active.sendall(api_versions_request(99))
            assert len(active.recv(65536)) > 0
        finally:
            silent.close()
            active.close()


def test_queued_max_request_bytes_stops_reading() -> None:
    # Kafka's MemoryPool (queued.max.request.bytes): while the bytes of requests read and not
    # answered, and of frames begun, fill it, nothing is read; once freed, reading resumes.
    limit = 1 << 20
    config = {"socket.request.max.bytes": limit, "queued.max.request.bytes": limit}
    with Broker(config=config) as broker:
        host, port = _address(broker)
        hog = socket.create_connection((host, port), timeout=5)
        hog.sendall(struct.pack(">i", limit) + os.urandom(limit - 1000))
        time.sleep(0.3)
        other = socket.create_connection((host, port), timeout=5)
        other.sendall(api_versions_request())
        other.settimeout(0.5)
        with pytest.raises(TimeoutError):
            other.recv(4)
        hog.close()
        other.settimeout(5)
        assert len(other.recv(4)) == 4
        other.close()


def test_frames_past_socket_request_max_bytes_close_the_connection() -> None:
    # Kafka's InvalidReceiveException: a frame larger than socket.request.max.bytes closes the
    # connection, before any of it is read.
    with Broker(config={"socket.request.max.bytes": 1 << 20}) as broker:
        host, port = _address(broker)
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(struct.pack(">i", (1 << 20) + 1) + b"\x00\x12")
            assert _closed_by_peer(s, 5)
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(struct.pack(">i", -5))
            assert _closed_by_peer(s, 5)
        assert _answers(host, port, 5)


def test_large_frame_read_in_pieces() -> None:
    # A frame past CARRY_MAX, sent a few bytes at a time, reads into a buffer grown as it
    # arrives; the request is answered as a whole one would be.
    with Broker() as broker:
        host, port = _address(broker)
        request = api_versions_request()
        # An ApiVersions padded past CARRY_MAX (bytes after the body are ignored, as Kafka does).
        size = len(request) - 4 + 3 * CARRY_MAX
        frame = struct.pack(">i", size) + request[4:] + bytes(3 * CARRY_MAX)
        with socket.create_connection((host, port), timeout=5) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for i in range(0, len(frame), 9000):
                s.sendall(frame[i : i + 9000])
            head = s.recv(4)
            assert len(head) == 4
            body = b""
            while len(body) < struct.unpack(">i", head)[0]:
                body += s.recv(65536)
            assert protocol.decode_response(18, 3, body).body["error_code"] == 0


# -- abuse ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def abused_config() -> dict[str, object]:
    return {
        "socket.request.max.bytes": 8 << 20,
        "queued.max.request.bytes": 32 << 20,
        "max.connections": N + 500,
    }


def test_abusers_leave_memory_bounded_and_clients_served(abused_config) -> None:
    """Issue 24's abuse acceptance, scaled: the bound is the idle broker's memory, plus
    PER_CONNECTION for each of max.connections, plus queued.max.request.bytes (frames begun
    and requests unanswered)."""
    raise_fd_limit(2 * N + 1000)
    with Broker(process=True, config=abused_config) as broker:
        host, port = _address(broker)
        pid = broker.pid
        with probe(broker.bootstrap_servers) as p:
            idle_produce, _, idle_fetch = p.run(150)
            idle_rss = rss_mb(pid)
            bound = (
                idle_rss
                + (int(abused_config["max.connections"]) * PER_CONNECTION) / 1e6
                + int(abused_config["queued.max.request.bytes"]) / 1e6
            )
            held = open_held(host, port, N // 2)
            stalled = open_stalled(host, port, N // 2)
            claiming = open_claiming(host, port, 20, (8 << 20) - 100, 3 * CARRY_MAX)
            huge = open_claiming(host, port, 20, 1 << 30, 10, source="127.0.0.7")
            try:
                with FloodProcess(host, port, connections=2, depth=32) as flood:
                    closed = random_after_handshake(host, port, 10)
                    busy_produce, _, busy_fetch = p.run(150)
                    during = rss_mb(pid)
                    flood.stop()
                assert flood.answered > 0
                assert closed == 10
                # Frames past socket.request.max.bytes: closed; the others held.
                assert huge.alive() == 0
                assert held.alive() == N // 2
                assert stalled.alive() == N // 2
                assert claiming.alive() == 20
            finally:
                for crowd in (held, stalled, claiming, huge):
                    crowd.close()
            assert during < bound, (during, bound)
            # Latency beside the abusers: the acceptance target is 2x the idle broker's p99
            # (bench/bench_abuse.py measures it); here, on a shared CI machine, 5x.
            idle_p99 = quantile(idle_produce, 0.99)
            busy_p99 = quantile(busy_produce, 0.99)
            assert busy_p99 < max(5 * idle_p99, 0.05), (idle_p99, busy_p99)
            assert quantile(busy_fetch, 0.99) < max(5 * quantile(idle_fetch, 0.99), 0.05)
            # Memory goes back once they leave (the trim follows the burst of closes).
            deadline = time.monotonic() + 10
            while rss_mb(pid) > idle_rss + (during - idle_rss) / 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            after = rss_mb(pid)
            print(
                f"RSS MB idle {idle_rss:.1f} during {during:.1f} after {after:.1f} bound "
                f"{bound:.1f}; p99 ms produce {idle_p99 * 1e3:.2f} -> {busy_p99 * 1e3:.2f}, "
                f"fetch {quantile(idle_fetch, 0.99) * 1e3:.2f} -> "
                f"{quantile(busy_fetch, 0.99) * 1e3:.2f}; flood {flood.answered} answers"
            )
            assert after <= idle_rss + (during - idle_rss) / 2, (idle_rss, during, after)
            produce, _, _ = p.run(20)
            assert len(produce) == 20


def test_a_client_that_does_not_read_stops_being_read() -> None:
    # Kafka's processor mutes a channel until its response is sent, so a client that pipelines
    # and never reads holds one answer in the broker. kgroup reads it until its unsent answers
    # pass OUTPUT_MAX, then waits for it to read; every request is answered in the end.
    from kgroup.broker import Broker as ServerBroker
    from kgroup.broker.server import OUTPUT_MAX

    with ServerBroker(port=0, config={"kgroup.log.storage": "memory"}) as broker:
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        request = api_versions_request()
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.setblocking(False)
            sent = 0
            out = b""
            burst = request * 256
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:
                out = out or burst
                try:
                    n = s.send(out)
                except BlockingIOError:
                    time.sleep(0.01)
                    continue
                out = out[n:]
                sent += n
            assert broker.state is not None
            (conn,) = list(broker.state.connections)
            assert conn._backlogged  # type: ignore[attr-defined]
            unsent = conn.transport.get_write_buffer_size()  # type: ignore[attr-defined]
            assert unsent < 2 * OUTPUT_MAX, unsent
            # Every whole request is answered once the client reads (a last one cut short is
            # not a request).
            whole = sent // len(request)
            s.setblocking(True)
            s.settimeout(10)
            answered = 0
            buf = b""
            while answered < whole:
                buf += s.recv(1 << 20)
                while len(buf) >= 4 and len(buf) - 4 >= struct.unpack(">i", buf[:4])[0]:
                    buf = buf[4 + struct.unpack(">i", buf[:4])[0] :]
                    answered += 1
            assert answered == whole


@pytest.mark.parametrize("event_loop", ["uvloop", "asyncio"])
def test_failed_tls_handshakes_give_their_connection_slot_back(tmp_path, event_loop: str) -> None:
    # A connection counts against max.connections from its accept (Kafka's
    # ConnectionQuotas.inc), so one whose TLS handshake fails must give its place back.
    from support import tls as client_tls
    from support.certs import Certs

    from kgroup.broker import Broker as ServerBroker

    certs = Certs(tmp_path / "certs")
    config = {
        "listeners": "SSL://127.0.0.1:0",
        "max.connections": 2,
        **client_tls.broker_ssl(certs, "none"),
    }
    with ServerBroker(tmp_path / "data", config=config, event_loop=event_loop) as broker:
        host, port = broker.address("SSL").rsplit(":", 1)
        for _ in range(5):
            # A PLAINTEXT client on the TLS port: the handshake fails, the broker closes.
            with socket.create_connection((host, int(port)), timeout=5) as s:
                s.sendall(api_versions_request())
                assert _closed_by_peer(s, 5)
        context = client_tls.python_context(certs)
        for _ in range(3):
            with (
                socket.create_connection((host, int(port)), timeout=5) as raw,
                context.wrap_socket(raw, server_hostname="localhost") as s,
            ):
                s.sendall(api_versions_request())
                assert len(s.recv(4)) == 4


# -- connection creation rates ---------------------------------------------------------------

#: RATE_WINDOW: quota windows of one second, two of them, so that a rate is measured over one
#: second from the start (Kafka's Rate counts at least quota.window.num - 1 whole windows).
RATE_WINDOW = {"quota.window.num": 2, "quota.window.size.seconds": 1}


def test_max_connection_creation_rate_delays_the_acceptor() -> None:
    # Kafka's ConnectionQuotas: past the rate the acceptor waits (the connection in hand, the
    # backlog behind it) for the delay that brings the rate back, at most one quota window;
    # no connection is refused for it. At 20 a second, 20 come at once, the next 20 within
    # about 1.5 s.
    with Broker(config={"max.connection.creation.rate": 20, **RATE_WINDOW}) as broker:
        host, port = _address(broker)
        took = answered_in(host, port, 40)
        assert 0.6 < took < 10, took


def test_listener_max_connection_creation_rate() -> None:
    config = {"listener.name.plaintext.max.connection.creation.rate": 20, **RATE_WINDOW}
    with Broker(config=config) as broker:
        host, port = _address(broker)
        assert 0.6 < answered_in(host, port, 40) < 10


def test_ip_connection_creation_rate_closes_past_it() -> None:
    # An IP quota (connection_creation_rate): past it a connection is accepted, kept unread
    # for the throttle time and closed (Kafka's ConnectionThrottledException); other addresses
    # and the default are not affected; removing the quota ends it.
    from kgroup.client.admin import AdminClient, ClientQuotaAlteration, ClientQuotaEntity

    with Broker(config=RATE_WINDOW) as broker:
        host, port = _address(broker)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        entity = ClientQuotaEntity({"ip": "127.0.0.4"})
        try:
            alter = ClientQuotaAlteration(entity, {"connection_creation_rate": 5})
            admin.alter_client_quotas([alter])[entity].result(15)
            assert answered_in(host, port, 5, source="127.0.0.4") < 5
            late = open_held(host, port, 1, source="127.0.0.4", first=api_versions_request())
            started = time.monotonic()
            assert _closed_by_peer(late.sockets[0], 5)
            # Closed after its throttle time ((6 - 5) / 5 of the one-second window), unanswered.
            assert time.monotonic() - started > 0.1
            late.close()
            assert _answers(host, port, 5, source="127.0.0.5")
            remove = ClientQuotaAlteration(entity, {"connection_creation_rate": None})
            admin.alter_client_quotas([remove])[entity].result(15)
            assert answered_in(host, port, 10, source="127.0.0.4") < 5
        finally:
            admin.close()


def test_connection_limits_change_at_once_when_altered() -> None:
    # max.connections and max.connection.creation.rate are dynamic broker configs in Kafka
    # (SocketServer's reconfigurable configs): a change applies to the next connection.
    from support.kgroup_broker import Wire

    from kgroup.protocol import ApiKey

    def alter(w: Wire, changes: dict[str, str | None]) -> None:
        body = {
            "resources": [
                {
                    "resource_type": 4,
                    "resource_name": "",
                    "configs": [
                        {"name": n, "config_operation": 0 if v is not None else 1, "value": v}
                        for n, v in changes.items()
                    ],
                }
            ],
            "validate_only": False,
        }
        r = w.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body).body.responses[0]
        assert r.error_code == 0, r.error_message

    with Broker(config=RATE_WINDOW) as broker:
        host, port = _address(broker)
        with Wire(broker.bootstrap_servers) as w:
            crowd = open_held(host, port, 2, source="127.0.0.1")
            try:
                alter(w, {"max.connections": "3"})  # the Wire and the crowd: 3
                assert not _answers(host, port, 0.5)
                alter(w, {"max.connections": None})
                assert _answers(host, port, 5)
                # The listener's own limit, set dynamically, wins over the broker's.
                alter(w, {"listener.name.plaintext.max.connections": "3"})
                assert not _answers(host, port, 0.5)
                alter(w, {"listener.name.plaintext.max.connections": None})
                assert _answers(host, port, 5)
            finally:
                crowd.close()
            alter(w, {"max.connection.creation.rate": "20"})
            assert 0.6 < answered_in(host, port, 40) < 10
            alter(w, {"max.connection.creation.rate": None})
