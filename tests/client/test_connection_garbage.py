"""A broker that answers with garbage: the client's connection fails with a clear, retriable
NetworkException (or the request's timeout), never a hang or a crash, and the client that
owns it still closes cleanly."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import threading
from collections.abc import Callable, Iterator

import pytest

from kgroup import AdminClient
from kgroup.client.connection import Connection
from kgroup.errors import KafkaError, KGroupError

pytestmark = pytest.mark.network


def _read_frame(conn: socket.socket) -> bytes:
    head = conn.recv(4, socket.MSG_WAITALL)
    if len(head) < 4:
        return b""
    return conn.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)


ANSWERS: dict[str, Callable[[bytes], bytes]] = {
    # random bytes under a valid size prefix
    "random body": lambda req: struct.pack(">i", 64) + os.urandom(64),
    # a well-framed answer to a correlation id nobody asked for
    "unknown correlation id": lambda req: struct.pack(">ii", 8, 0x7FFF0000) + b"\0" * 4,
    # the right correlation id, a body cut short
    "truncated body": lambda req: struct.pack(">i", 6) + req[4:8] + b"\0\0",
    # a size prefix below the header's own size
    "negative size": lambda req: struct.pack(">i", -5),
    # nothing at all: the connection closes
    "close": lambda req: b"",
}


@pytest.fixture(params=list(ANSWERS))
def garbage_broker(request: pytest.FixtureRequest) -> Iterator[int]:
    answer = ANSWERS[request.param]
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                req = _read_frame(conn)
                if req:
                    out = answer(req)
                    if out:
                        conn.sendall(out)
                        conn.recv(1)  # hold the connection until the client gives up

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield port
    stop.set()
    t.join(5)
    srv.close()


def test_a_connection_to_a_garbage_broker_fails_with_a_kafka_error(garbage_broker: int) -> None:
    async def go() -> None:
        c = Connection(
            "127.0.0.1", garbage_broker, node_id=-1, client_id="t", request_timeout_ms=2000
        )
        with pytest.raises(KafkaError):
            await asyncio.wait_for(c.open(2.0), 10)
        assert c.closed

    asyncio.run(go())


def test_an_admin_client_on_a_garbage_broker_errors_and_closes(garbage_broker: int) -> None:
    before = threading.active_count()
    admin = AdminClient(
        {
            "bootstrap.servers": f"127.0.0.1:{garbage_broker}",
            "request.timeout.ms": 1000,
            "socket.connection.setup.timeout.ms": 1000,
        }
    )
    with pytest.raises(KGroupError):
        admin.list_topics(timeout=1.5)
    admin.close()
    assert threading.active_count() <= before  # the client's thread is gone
