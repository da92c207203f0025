"""Waiting for records: a Fetch or ShareFetch that has too little to answer parks on its
partitions' ``waiters`` (a list of futures each partition keeps) until an append wakes it or
its MaxWaitMs passes. Event loop only."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = ["waiting_on", "wake_or_expire"]


def waiting_on(partitions: Iterable[Any]) -> asyncio.Future[None]:
    """A future on ``partitions``' waiters, done at their next append."""
    fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    for p in partitions:
        p.waiters.append(fut)
    return fut


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


async def wake_or_expire(
    partitions: list[Any], fut: asyncio.Future[None] | None, left: float
) -> None:
    """Wait until an append to ``partitions`` wakes ``fut`` (made here when None; a fetch
    registers it before its handler returns, so that a produce read in the same turn wakes it)
    or ``left`` seconds pass; the future is then off the partitions' waiters. A timer, not
    asyncio.wait_for: woken, the fetch answers one turn of the event loop sooner (wait_for
    passes the wake through a future of its own)."""
    if fut is None:
        fut = waiting_on(partitions)
    timer = asyncio.get_running_loop().call_later(left, _expire, fut)
    try:
        await fut
    finally:
        timer.cancel()
        for p in partitions:
            try:
                p.waiters.remove(fut)
            except ValueError:
                pass
