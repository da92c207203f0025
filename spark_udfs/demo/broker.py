"""broker: kgroup's broker in a process of its own, for the length of a ``with`` block.

:func:`background_broker` runs ``python -m kgroup.cli broker`` on 127.0.0.1, on a port the
system picks (read back from the broker's "started" line, so no other program can take it in
between), with its data in a folder of the caller's. Leaving the block stops it (SIGTERM, then
SIGKILL after 30 s) whatever ends the block: a failure, Ctrl-C, or SIGTERM once the caller
turns it into an exception (:func:`spark_udfs.demo.story.main` does). The broker runs in a
session of its own, so that Ctrl-C reaches the caller alone, which stops the broker after its
own clean-up; on Linux the broker also gets SIGTERM if the caller is killed outright.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BrokerProcess", "background_broker"]

# The broker's start line (kgroup.broker.Broker.start): "[KafkaServer id=0] started (kgroup
# 0.1.0) on PLAINTEXT://127.0.0.1:41234, data in ...": its first listener.
_STARTED = re.compile(r"\] started \(kgroup [^)]*\) on (?:\w+://)?([^\s,]+):(\d+)[, ]")


@dataclass(frozen=True)
class BrokerProcess:
    """BrokerProcess is a running broker: where clients connect, its process id, its log
    file (everything it wrote to standard error) and how long it took to start."""

    bootstrap: str
    pid: int
    log: Path
    started_in: float

    def log_tail(self, lines: int = 20) -> str:
        """log_tail is the last ``lines`` lines of the broker's log."""
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""


def _stop_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    # PR_SET_PDEATHSIG: the kernel sends SIGTERM to the broker when its parent dies, also of a
    # kill -9 that runs no clean-up.
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


class _LogReader(threading.Thread):
    """Copies the broker's standard error to its log file and notes the port it listens on."""

    def __init__(self, stream: object, log: Path) -> None:
        super().__init__(name="kgroup-broker-log", daemon=True)
        self.stream, self.log = stream, log
        self.address: str | None = None
        self.ready = threading.Event()

    def run(self) -> None:
        with open(self.log, "ab") as out:
            for line in self.stream:  # type: ignore[attr-defined]
                out.write(line)
                out.flush()
                if self.address is None:
                    m = _STARTED.search(line.decode(errors="replace"))
                    if m:
                        self.address = f"{m.group(1)}:{m.group(2)}"
                        self.ready.set()
        self.ready.set()  # the broker exited: whoever waits stops waiting


@contextlib.contextmanager
def background_broker(
    data_dir: str | os.PathLike[str],
    *,
    config: Mapping[str, object] | None = None,
    log: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
) -> Iterator[BrokerProcess]:
    """background_broker starts kgroup's broker on 127.0.0.1 with its data in ``data_dir``
    and ``config`` (Kafka's ``server.properties`` names) and yields it once it accepts
    connections; it is stopped when the block ends, however it ends. Its standard error goes
    to ``log`` (default: ``broker.log`` beside ``data_dir``). Raises RuntimeError when it
    exits or does not start within ``timeout`` seconds, with the end of its log."""
    data = Path(data_dir)
    data.mkdir(parents=True, exist_ok=True)
    log_path = Path(log) if log is not None else data.with_name("broker.log")
    props = data.with_name("broker.properties")
    props.write_text("".join(f"{k}={v}\n" for k, v in (config or {}).items()))
    argv = [sys.executable, "-m", "kgroup.cli", "broker", "--listen", "127.0.0.1:0"]
    argv += ["--data-dir", str(data), "--config", str(props)]
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_stop_with_parent if sys.platform == "linux" else None,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    reader = _LogReader(proc.stderr, log_path)
    reader.start()
    try:
        reader.ready.wait(timeout)
        if reader.address is None:
            why = f"exited with status {proc.poll()}" if proc.poll() is not None else "no start"
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-20:])
            raise RuntimeError(f"kgroup's broker did not start ({why} in {timeout:.0f} s):\n{tail}")
        yield BrokerProcess(reader.address, proc.pid, log_path, time.monotonic() - started)
    finally:
        _stop(proc)
        reader.join(10)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    # SIGTERM: the broker finishes the requests in flight, flushes its logs and exits.
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
