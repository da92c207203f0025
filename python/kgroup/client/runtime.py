"""Runtime: the background thread a client's network side runs in.

Each client (Consumer, Producer, AdminClient) owns one daemon thread running an asyncio event
loop (uvloop where installed). The application's thread never touches sockets: it hands work
to the loop with :meth:`Runtime.submit` / :meth:`Runtime.call` and reads queues the loop fills.
:meth:`Runtime.close` cancels every task the client started, closes the loop and joins the
thread, so nothing outlives ``close()``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_ids = itertools.count(1)


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:  # win32, or not installed: asyncio's own loop works the same
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class Runtime:
    """Runtime is one client's event loop thread. Thread-safe: any thread may submit work."""

    def __init__(self, name: str) -> None:
        self.loop = _new_loop()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        started = threading.Event()

        def main() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.call_soon(started.set)
            self.loop.run_forever()

        self.thread = threading.Thread(target=main, name=f"kgroup-{name}-{next(_ids)}", daemon=True)
        self.thread.start()
        started.wait()

    @property
    def closed(self) -> bool:
        return self._closed

    def in_loop(self) -> bool:
        return threading.current_thread() is self.thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the loop as a task the runtime tracks; returns a thread-safe future."""
        if self._closed:
            coro.close()
            raise RuntimeError("the client is closed")
        return asyncio.run_coroutine_threadsafe(self._track(coro), self.loop)

    async def _track(self, coro: Awaitable[T]) -> T:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            return await coro
        finally:
            self._tasks.discard(task)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """From inside the loop: start a background task that close() cancels."""
        task = self.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result from another thread.

        A timeout cancels the coroutine and raises :class:`TimeoutError`.
        """
        if self.in_loop():
            coro.close()
            raise RuntimeError("Runtime.call from the client's own thread would deadlock")
        fut = self.submit(coro)
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise TimeoutError(f"timed out after {timeout} s") from None

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the loop soon; a no-op once closed."""
        if not self._closed:
            try:
                self.loop.call_soon_threadsafe(fn, *args)
            except RuntimeError:  # the loop closed meanwhile
                pass

    def close(self, timeout: float = 10.0) -> None:
        """Cancel every task, stop the loop and join its thread. Idempotent."""
        if self._closed:
            return
        self._closed = True

        async def shutdown() -> None:
            tasks = [t for t in self._tasks if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self.thread.is_alive() and not self.in_loop():
            fut = asyncio.run_coroutine_threadsafe(shutdown(), self.loop)
            try:
                fut.result(timeout)
            except Exception:
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout)
        if not self.loop.is_running():
            self.loop.close()
