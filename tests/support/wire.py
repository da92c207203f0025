"""Kafka's wire format in tests: size-prefixed frames read off a socket, a decoded request
encoded again, and the version ranges of Kafka's message specs."""

from __future__ import annotations

import socket

from kgroup import protocol


def read_exactly(sock: socket.socket, n: int) -> bytes:
    """``n`` bytes from ``sock``; EOFError when the peer closes the connection first."""
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return bytes(buf)


def read_frame(sock: socket.socket) -> bytes:
    """One frame from ``sock``, without its 4-byte size prefix."""
    return read_exactly(sock, protocol.frame_size(read_exactly(sock, 4)))


def reencode(request: protocol.Request) -> bytes:
    """``request`` encoded again from what was decoded, size prefix included."""
    return protocol.encode_request(
        request.api_key,
        request.api_version,
        request.correlation_id,
        request.client_id,
        request.body,
        tagged_fields=request.tagged_fields,
    )


def in_versions(versions: str, v: int) -> bool:
    """Whether version ``v`` is in a spec's range: ``"none"``, ``"3+"``, ``"0-2"`` or ``"4"``."""
    if versions == "none":
        return False
    if versions.endswith("+"):
        return v >= int(versions[:-1])
    lo, _, hi = versions.partition("-")
    return int(lo) <= v <= int(hi or lo)
