"""What kgroup's TLS layer costs to receive, alone (issue 24): no sockets, no other process, so
the figure holds still on a busy machine where bench_tls.py's move by 2x.

A client SSLObject encrypts 1 MB frames in TLS records of ``--record`` bytes (librdkafka's are
a couple of KB: it writes one record per buffer segment it holds). kgroup's ``TlsProtocol``
receives the stream in socket-sized pieces and hands it, decrypted, to an app that takes 1 MB
frames, as ``Connection`` takes a large Produce. Beside it, the least a Python broker on the
``ssl`` module can do with the same stream: one ``SSLObject.read`` into a fixed buffer per
record, nothing else. Both in CPU seconds per GB; OpenSSL's AES-GCM alone is
``openssl speed -evp aes-256-gcm -bytes N``.

    python bench/bench_tls_layer.py [--record 2048] [--mb 256]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import ssl
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support import tls as client_tls  # noqa: E402
from support.certs import Certs  # noqa: E402

from bench.report import load_average  # noqa: E402
from kgroup.broker import tls  # noqa: E402
from kgroup.broker.config import BrokerConfig  # noqa: E402
from kgroup.broker.limits import ReadBuffer  # noqa: E402
from kgroup.broker.listeners import parse_listeners  # noqa: E402

FRAME = 1 << 20
#: PIECE is how much one socket read gives (loopback, a busy client), about.
PIECE = 64 * 1024


class _Raw:
    """The raw transport under the TLS layer: keeps what the layer writes (the handshake)."""

    def __init__(self) -> None:
        self.out: list[bytes] = []

    def write(self, data: Any) -> None:
        self.out.append(bytes(data))

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default

    def close(self) -> None:
        pass


class _App:
    """Takes what the layer decrypted into 1 MB frames, as Connection takes a large request."""

    def __init__(self) -> None:
        self.frame = memoryview(bytearray(FRAME))
        self.got = self.total = 0
        # The TLS layer reads into the event loop's shared read buffer (the broker's Limits).
        self.state = types.SimpleNamespace(limits=types.SimpleNamespace(read_buffer=ReadBuffer()))

    def connection_made(self, transport: Any) -> None:
        pass

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.frame[self.got :]

    def buffer_updated(self, nbytes: int) -> None:
        self.got += nbytes
        self.total += nbytes
        if self.got == FRAME:
            self.got = 0

    def connection_lost(self, exc: Exception | None) -> None:
        pass


def _pair(certs: Certs) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    config = BrokerConfig(
        {"listeners": "SSL://127.0.0.1:0", **client_tls.broker_ssl(certs, encrypted=False)}
    )
    server = tls.server_context(config, parse_listeners(config)[0])
    return server, client_tls.python_context(certs)


def _client(ctx: ssl.SSLContext) -> tuple[ssl.SSLObject, ssl.MemoryBIO, ssl.MemoryBIO]:
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    return ctx.wrap_bio(incoming, outgoing, server_hostname="localhost"), incoming, outgoing


def _records(client: ssl.SSLObject, out: ssl.MemoryBIO, mb: int, record: int) -> bytes:
    payload = os.urandom(FRAME)
    wire = []
    for _ in range(mb):
        for i in range(0, FRAME, record):
            client.write(payload[i : i + record])
        wire.append(out.read())
    return b"".join(wire)


async def layer(certs: Certs, mb: int, record: int) -> float:
    """TlsProtocol's CPU seconds per GB received."""
    server_ctx, client_ctx = _pair(certs)
    client, c_in, c_out = _client(client_ctx)
    app, raw = _App(), _Raw()
    proto = tls.TlsProtocol(server_ctx, app)  # type: ignore[arg-type]
    proto.connection_made(raw)  # type: ignore[arg-type]

    def feed(data: bytes) -> None:
        view = memoryview(data)
        for i in range(0, len(view), PIECE):
            piece = view[i : i + PIECE]
            buf = proto.get_buffer(-1)
            buf[: len(piece)] = piece
            proto.buffer_updated(len(piece))

    for _ in range(10):
        try:
            client.do_handshake()
            break
        except ssl.SSLWantReadError:
            feed(c_out.read())
            for d in raw.out:
                c_in.write(d)
            raw.out.clear()
    feed(c_out.read())
    stream = _records(client, c_out, mb, record)
    start = time.process_time()
    feed(stream)
    elapsed = time.process_time() - start
    assert app.total == mb * FRAME, app.total
    return elapsed / mb * 1024


def bare(certs: Certs, mb: int, record: int) -> float:
    """The least Python can do: one SSLObject.read per record into a fixed buffer."""
    server_ctx, client_ctx = _pair(certs)
    client, c_in, c_out = _client(client_ctx)
    s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    server = server_ctx.wrap_bio(s_in, s_out, server_side=True)
    for _ in range(10):
        for obj in (client, server):
            try:
                obj.do_handshake()
            except ssl.SSLWantReadError:
                pass
        s_in.write(c_out.read())
        c_in.write(s_out.read())
    stream = _records(client, c_out, mb, record)
    buf = memoryview(bytearray(FRAME))
    read = server._sslobj.read  # type: ignore[attr-defined]
    got = 0
    start = time.process_time()
    view = memoryview(stream)
    for i in range(0, len(view), PIECE):
        s_in.write(view[i : i + PIECE])
        try:
            while True:
                got += read(FRAME, buf)
        except ssl.SSLWantReadError:
            pass
    elapsed = time.process_time() - start
    assert got == mb * FRAME, got
    return elapsed / mb * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", type=int, action="append", help="TLS record size (bytes)")
    parser.add_argument("--mb", type=int, default=256, help="MB received per measurement")
    args = parser.parse_args(argv)
    print(load_average(), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-tls-layer-") as tmp:
        certs = Certs(Path(tmp))
        for record in args.record or [2048, 16384]:
            ours = asyncio.run(layer(certs, args.mb, record))
            least = bare(certs, args.mb, record)
            print(
                f"{record:>6} B records: TlsProtocol {ours:.3f} cpu-s/GB, bare SSLObject.read "
                f"{least:.3f} cpu-s/GB ({ours / least:.2f}x)"
            )
    print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
