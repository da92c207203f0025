"""RecordingProxy: a TCP proxy on loopback that passes every byte between clients and one
broker unchanged and records each request frame with the response frame that answered it.

A broker advertising the proxy's address (``advertised.listeners``) keeps every client, and its
own inter-broker calls, on the proxy, so the record holds whole real conversations. Frames are
the bytes after the size prefix; a response is matched to its request by correlation id on
the same connection. Meant for plaintext connections without SASL.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass

from .ports import free_port


@dataclass(frozen=True)
class Exchange:
    """One request frame and the response frame that answered it (None: no answer seen)."""

    api_key: int
    api_version: int
    request: bytes
    response: bytes | None


class _Frames:
    """Frames split from a byte stream that arrives in pieces."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        out = []
        while len(self._buf) >= 4:
            size = int.from_bytes(self._buf[:4], "big", signed=True)
            if size < 0 or len(self._buf) < 4 + size:
                break
            out.append(bytes(self._buf[4 : 4 + size]))
            del self._buf[: 4 + size]
        return out


class RecordingProxy:
    """Listens on 127.0.0.1 (``port``); forwards each connection to ``target``, which may be
    set after the proxy starts (before the first client connects). ``exchanges()`` is what it
    recorded so far: the answered requests in the order of their answers, then those still
    waiting."""

    def __init__(self, target: tuple[str, int] | None = None) -> None:
        self.port = free_port()
        self.target = target
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []
        self._pending: dict[tuple[int, int], tuple[int, int, bytes]] = {}
        self._sockets: list[socket.socket] = []
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._closed = threading.Event()
        self._conns = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def exchanges(self) -> list[Exchange]:
        with self._lock:
            waiting = [Exchange(k, v, req, None) for k, v, req in self._pending.values()]
            return self._exchanges + waiting

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            assert self.target is not None, "RecordingProxy: no target yet"
            try:
                upstream = socket.create_connection(self.target, 10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += 1
                conn = self._conns
                self._sockets += [client, upstream]
            threading.Thread(
                target=self._pump, args=(client, upstream, conn, True), daemon=True
            ).start()
            threading.Thread(
                target=self._pump, args=(upstream, client, conn, False), daemon=True
            ).start()

    def _pump(self, src: socket.socket, dst: socket.socket, conn: int, requests: bool) -> None:
        frames = _Frames()
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                for frame in frames.feed(data):
                    self._saw(conn, frame, requests)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _saw(self, conn: int, frame: bytes, request: bool) -> None:
        with self._lock:
            if request:
                key = int.from_bytes(frame[0:2], "big", signed=True)
                version = int.from_bytes(frame[2:4], "big", signed=True)
                cid = int.from_bytes(frame[4:8], "big", signed=True)
                self._pending[(conn, cid)] = (key, version, frame)
            else:
                cid = int.from_bytes(frame[0:4], "big", signed=True)
                found = self._pending.pop((conn, cid), None)
                if found is not None:
                    key, version, req = found
                    self._exchanges.append(Exchange(key, version, req, frame))

    def close(self) -> None:
        self._closed.set()
        self._server.close()
        with self._lock:
            sockets = list(self._sockets)
        for s in sockets:
            s.close()

    def __enter__(self) -> RecordingProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
