"""One connection's responses on their way out, in order: bytes through the transport, and the
record batches of a Fetch response straight from their segment files with ``os.sendfile``, as
Kafka's broker sends them (``FileRecords.writeTo``, ``FileChannel.transferTo``).

A Fetch response comes as segments (``protocol.encode_response_segments``): bytes, and the
FileSlices its records are. A FileSlice goes out with ``os.sendfile`` on the transport's socket,
which only keeps the stream in order while the transport holds nothing unsent: its bytes would
pass what waits there. So the transport's high-water mark is set to 0, which makes it call
``pause_writing`` whenever it holds anything, and ``resume_writing`` once it has handed
everything to the kernel. When the kernel takes only part of a FileSlice (the socket's buffer
is full: a slow or distant client), the next few kilobytes go through the transport as a copy:
that is the doorbell, which the transport sends when the socket drains, then calls
``resume_writing``, and sendfile carries on from there. One mechanism for both event loops:
uvloop has no ``loop.sendfile``, and asyncio's refuses while the transport holds data.

A FileSlice keeps its segment file open and its bytes unchanged while it lives, so retention,
compaction or a topic's deletion meanwhile changes nothing on the wire. A sendfile that fails
for another reason than a full socket or a gone peer (a file system that cannot sendfile)
turns sendfile off for the connection, and the rest is copied.
"""

from __future__ import annotations

import collections
import errno
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from kgroup.log import FileSlice

if TYPE_CHECKING:
    import asyncio

__all__ = ["DOORBELL", "Output", "SendStats"]

log = logging.getLogger("kgroup.broker")

#: DOORBELL is how much of a FileSlice is copied through the transport when the socket is full.
DOORBELL = 4096

_GONE = {errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN, errno.ESHUTDOWN, errno.EBADF}


class SendStats:
    """SendStats counts what Fetch responses sent by sendfile and what they copied, for the
    whole broker. Read on the event loop only."""

    __slots__ = ("copied_bytes", "partial", "sendfile_bytes", "sendfile_calls")

    def __init__(self) -> None:
        #: sendfile_calls and sendfile_bytes: calls to os.sendfile and the bytes they sent.
        self.sendfile_calls = 0
        self.sendfile_bytes = 0
        #: partial counts the times the kernel took part of a FileSlice (a full socket).
        self.partial = 0
        #: copied_bytes are FileSlice bytes copied through the transport (doorbells, and
        #: everything on a connection whose sendfile failed).
        self.copied_bytes = 0

    def __repr__(self) -> str:
        return (
            f"SendStats(sendfile_calls={self.sendfile_calls}, "
            f"sendfile_bytes={self.sendfile_bytes}, partial={self.partial}, "
            f"copied_bytes={self.copied_bytes})"
        )


class Output:
    """Output writes one connection's frames in order. Not thread-safe: it lives on the
    connection's event loop. It calls ``close(reason)`` when the stream cannot go on (the peer
    is gone, a segment file is shorter than its slice), having dropped what was queued."""

    __slots__ = ("_close", "_fd", "_queue", "_sendfile", "_sent", "_stats", "_transport", "paused")

    def __init__(
        self,
        transport: asyncio.Transport,
        stats: SendStats,
        close: Callable[[str], None],
        sendfile: bool,
    ) -> None:
        self._transport = transport
        self._stats = stats
        self._close = close
        self._queue: collections.deque[bytes | FileSlice] = collections.deque()
        #: _sent is how much of the FileSlice at the head of the queue is sent.
        self._sent = 0
        sock = transport.get_extra_info("socket")
        self._fd = sock.fileno() if sock is not None else -1
        self._sendfile = sendfile and self._fd >= 0
        #: paused mirrors the transport's pause_writing / resume_writing.
        self.paused = False
        if self._sendfile:
            transport.set_write_buffer_limits(high=0, low=0)

    @property
    def pending(self) -> int:
        """The segments not yet handed to the transport or the kernel."""
        return len(self._queue)

    def write(self, frame: bytes) -> None:
        if self._queue:
            self._queue.append(frame)
        else:
            self._transport.write(frame)

    def write_many(self, frames: list[bytes]) -> None:
        """Write whole frames, in one send when nothing is queued."""
        if self._queue:
            self._queue.extend(frames)
        elif len(frames) == 1:
            self._transport.write(frames[0])
        else:
            self._transport.write(b"".join(frames))

    def write_segments(self, segments: list[bytes | FileSlice]) -> None:
        self._queue.extend(segments)
        self.pump()

    def clear(self) -> None:
        """Drop what is left (the connection is closed): the FileSlices' files close."""
        self._queue.clear()
        self._sent = 0

    def pump(self) -> None:
        """Write queued segments until the queue is empty or a FileSlice must wait for the
        transport to drain (``resume_writing`` calls pump again)."""
        queue = self._queue
        transport = self._transport
        stats = self._stats
        while queue:
            item = queue[0]
            if type(item) is bytes:
                queue.popleft()
                transport.write(item)
                continue
            assert isinstance(item, FileSlice)
            left = item.length - self._sent
            if not self._sendfile:
                if not self._copy(item, left):
                    return
                continue
            if transport.get_write_buffer_size():
                if self.paused:
                    return
                # The transport holds bytes yet did not pause (its high-water mark was changed
                # elsewhere): copying keeps the order.
                if not self._copy(item, left):
                    return
                continue
            try:
                n = os.sendfile(self._fd, item.fileno(), item.position + self._sent, left)
            except BlockingIOError:
                n = 0
            except OSError as e:
                if e.errno in _GONE:
                    self._fail(f"the client went away during a response ({e})", quiet=True)
                    return
                log.warning(
                    "sendfile failed (%s); copying fetched records on this connection instead", e
                )
                self._sendfile = False
                continue
            else:
                if n == 0:
                    self._fail(f"segment file {item.path} ends inside the slice being sent")
                    return
                stats.sendfile_calls += 1
                stats.sendfile_bytes += n
            if n == left:
                queue.popleft()
                self._sent = 0
                continue
            # The socket is full: ring the doorbell (a little, copied) and wait for the drain.
            self._sent += n
            stats.partial += 1
            if not self._copy(item, min(left - n, DOORBELL)):
                return
            if self.paused:
                return

    def _copy(self, item: FileSlice, n: int) -> bool:
        """Copy the next ``n`` bytes of the FileSlice at the head of the queue to the
        transport; False when the stream cannot go on."""
        try:
            data = os.pread(item.fileno(), n, item.position + self._sent)
        except OSError as e:
            self._fail(f"reading segment file {item.path} to send it: {e}")
            return False
        if len(data) != n:
            self._fail(f"segment file {item.path} ends inside the slice being sent")
            return False
        self._transport.write(data)
        self._stats.copied_bytes += n
        self._sent += n
        if self._sent == item.length:
            self._queue.popleft()
            self._sent = 0
        return True

    def _fail(self, why: str, quiet: bool = False) -> None:
        self.clear()
        if not quiet:
            log.error("%s; closing the connection", why)
        self._close(why)
