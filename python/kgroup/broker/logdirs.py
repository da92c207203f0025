"""Log directories: the folders of ``log.dirs``, how full they are, and what failed in them.

Kafka's ``LogManager`` keeps its partitions in one or more log directories and its
``LogDirFailureChannel`` hears of every I/O error in them. kgroup does the same for one node,
with its own policy for what follows a failure (``docs/storage-failures.md``):

- A write that fails (a full disk, a read-only filesystem, a file made unwritable) fails the
  request that made it with KAFKA_STORAGE_ERROR and leaves the log as it was before the call;
  the directory is *in error* until writes to it succeed for a whole summary period with no
  failure, and serves on meanwhile.
- A failed fsync, or a failed write whose partial batch could not be cut back, takes that
  partition's log offline until the broker restarts (its recovery then checks everything
  after the last good fsync): it answers KAFKA_STORAGE_ERROR to produce and fetch alike.

Said aloud: the first failure of each kind (the OS error: ENOSPC, EROFS, EIO...) in a
directory logs an ERROR naming the directory, the partition, what was being done and the
cause; while failures persist a WARNING sums them up every ``kgroup.log.dir.failure.summary.ms``
(with the writes that succeeded meanwhile: a nearly full disk fails big batches and takes
small ones, and that logs one line a period, not one per flip); a period with successful
writes and no failure ends the episode, logged as writes succeeding again. DescribeLogDirs reports a
directory in error with KAFKA_STORAGE_ERROR, beside its partitions' sizes and its space.

With ``kgroup.log.storage=memory`` the directories are memory roots (``kgroup.log.memory_root``):
:func:`open_memory_storage` registers them when the broker starts, and :func:`close_memory_storage`
frees them when it stops (unless ``kgroup.log.storage.keep``). A memory directory's space is the
bytes its files hold plus the memory the machine could still give them (``MemAvailable``).
"""

from __future__ import annotations

import errno as errno_codes
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kgroup import errors
from kgroup.broker.config import BrokerConfig
from kgroup.log import drop_memory_root, memory_root, memory_used

__all__ = ["DirFailure", "LogDir", "LogDirs", "close_memory_storage", "open_memory_storage"]

log = logging.getLogger("kgroup.broker")


@dataclass
class DirFailure:
    """DirFailure is one kind of failure in a directory since its last success."""

    kind: str
    cause: str
    partition: str
    first: float
    count: int = 0
    #: reported is the count the last summary saw.
    reported: int = 0


@dataclass(eq=False)
class LogDir:
    """LogDir is one folder of ``log.dirs``."""

    path: Path
    #: id is the directory's ``directory.id`` (its meta.properties), as Kafka's KRaft brokers
    #: give each log directory.
    id: str = ""
    #: failures are the kinds of failure seen since the last successful write, by kind.
    failures: dict[str, DirFailure] = field(default_factory=dict)
    #: offline_logs counts this directory's logs taken offline (until the broker restarts).
    offline_logs: int = 0
    #: successes counts the writes that succeeded in the current period while failures were
    #: being counted; last_success and last_failure are when the latest of each was (monotonic).
    successes: int = 0
    last_success: float = 0.0
    last_failure: float = 0.0

    @property
    def in_error(self) -> bool:
        """Whether the directory's last write failed, or one of its logs is offline."""
        return bool(self.failures) or self.offline_logs > 0

    def error(self) -> str | None:
        """What is wrong with the directory, in a line, or None."""
        parts = [f"{f.kind}: {f.cause} ({f.count}x)" for f in self.failures.values()]
        if self.offline_logs:
            parts.append(f"{self.offline_logs} log(s) offline until restart")
        return "; ".join(parts) or None

    def space(self) -> tuple[int, int]:
        """(total bytes, usable bytes) of the directory's filesystem; (-1, -1) if unknown,
        as DescribeLogDirs v4 reports them. For a memory directory: usable is the memory the
        machine still has available, total that plus what the directory's files hold."""
        used = memory_used(self.path)
        if used is not None:
            free = available_memory()
            return (used + free, free) if free >= 0 else (-1, -1)
        try:
            st = os.statvfs(self.path)
        except OSError:
            return -1, -1
        return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


def available_memory() -> int:
    """The memory the machine can still give (Linux's MemAvailable, in bytes); -1 if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return -1


def open_memory_storage(config: BrokerConfig) -> list[Path]:
    """With ``kgroup.log.storage=memory``: register the broker's log directories as memory
    roots (kept with their files if already registered, as after a stop with
    ``kgroup.log.storage.keep``) and return them; when neither ``log.dirs`` nor ``log.dir`` is
    set, a fresh root becomes ``log.dirs``. Nothing for disk storage."""
    if config.get("kgroup.log.storage") != "memory":
        return []
    if not config.explicit.get("log.dirs") and not config.explicit.get("log.dir"):
        config.explicit["log.dirs"] = str(memory_root())
    return [memory_root(d) for d in config.data_dirs]


def close_memory_storage(config: BrokerConfig, roots: list[Path]) -> None:
    """Free the memory roots :func:`open_memory_storage` registered, unless
    ``kgroup.log.storage.keep`` is set."""
    if config.get("kgroup.log.storage.keep"):
        return
    for root in roots:
        drop_memory_root(root)


def failure_kind(error: BaseException) -> str:
    """The kind of a storage failure: its OS error's name (ENOSPC), else its class."""
    n = getattr(error, "os_errno", None)
    if n is None and isinstance(error, OSError):
        n = error.errno
    if n is not None:
        return errno_codes.errorcode.get(n, f"errno {n}")
    return type(error).__name__


class LogDirs:
    """LogDirs is the broker's log directories and their failure channel."""

    def __init__(self, paths: list[Path]) -> None:
        if not paths:
            raise errors.InvalidArgument("log.dirs names no folder")
        self.dirs = [LogDir(p) for p in paths]

    def __iter__(self) -> Iterator[LogDir]:
        return iter(self.dirs)

    def __len__(self) -> int:
        return len(self.dirs)

    @property
    def metadata_dir(self) -> LogDir:
        """The first directory: it holds topics.json (Kafka's metadata.log.dir default)."""
        return self.dirs[0]

    def by_id(self, dir_id: str) -> LogDir | None:
        return next((d for d in self.dirs if d.id == dir_id), None)

    # -- the failure channel ---------------------------------------------------------------

    def failed(self, d: LogDir, partition: str, what: str, error: BaseException) -> None:
        """A storage operation on ``partition`` in ``d`` failed: the first failure of its kind
        since the directory last worked is logged as an ERROR, later ones are counted."""
        kind = failure_kind(error)
        now = time.monotonic()
        f = d.failures.get(kind)
        if f is None:
            f = d.failures[kind] = DirFailure(kind, str(error), partition, now)
            log.error(
                "Error in log dir %s while %s %s: %s [%s]. Requests that need it answer "
                "KAFKA_STORAGE_ERROR until a write there succeeds again",
                d.path,
                what,
                partition,
                error,
                kind,
            )
        f.count += 1
        f.cause = str(error)
        f.partition = partition
        d.last_failure = now

    def went_offline(self, d: LogDir, partition: str, why: str, error: BaseException) -> None:
        """A log of ``d`` went offline (a failed fsync): logged once, counted until restart."""
        d.offline_logs += 1
        log.error(
            "Log %s in dir %s is offline until the broker restarts: %s [%s]. Nothing written "
            "to it since its last good fsync is acknowledged as durable; recovery at the next "
            "start checks it",
            partition,
            d.path,
            why,
            failure_kind(error),
        )

    def succeeded(self, d: LogDir) -> None:
        """A write to ``d`` succeeded (one comparison when it has no failures)."""
        if d.failures:
            d.successes += 1
            d.last_success = time.monotonic()

    def summarize(self) -> None:
        """Once a period (kgroup.log.dir.failure.summary.ms): a WARNING for each kind of
        failure that went on in it; a directory with no failure in the period whose latest
        write succeeded is over its episode, which is logged."""
        now = time.monotonic()
        for d in self.dirs:
            if not d.failures:
                continue
            fresh = [f for f in d.failures.values() if f.count > f.reported]
            for f in fresh:
                log.warning(
                    "Log dir %s is still failing: %d %s failure(s) in %.1f s, %d in the last "
                    "period (and %d successful writes), the latest while writing %s: %s",
                    d.path,
                    f.count,
                    f.kind,
                    now - f.first,
                    f.count - f.reported,
                    d.successes,
                    f.partition,
                    f.cause,
                )
                f.reported = f.count
            if not fresh and d.last_success > d.last_failure:
                summary = ", ".join(f"{f.count} {f.kind}" for f in d.failures.values())
                first = min(f.first for f in d.failures.values())
                d.failures.clear()
                log.info(
                    "Writes to log dir %s succeed again after %s failure(s) over %.1f s",
                    d.path,
                    summary,
                    now - first,
                )
            d.successes = 0
