"""kgroup's own broker for tests: embedded in a thread, or as a separate process that a test
can kill -9 and start again on the same data; and a raw wire client that speaks requests by
hand (for what real clients never send: bad frames, old versions, garbage)."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from kgroup import protocol
from kgroup.broker import Broker

from .ports import free_port, wait_for_port
from .wire import read_frame


@contextlib.contextmanager
def run_broker(
    data_dir: str | Path | None = None, config: Mapping[str, Any] | None = None
) -> Iterator[Broker]:
    """An embedded broker on a free 127.0.0.1 port, its data in ``data_dir`` (a temporary
    folder when None); stopped cleanly on exit."""
    with contextlib.ExitStack() as stack:
        if data_dir is None:
            data_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="kgroup-broker-"))
        values = {k: v for k, v in (config or {}).items()}
        with Broker(data_dir, port=0, config=values) as broker:
            yield broker


class BrokerProcess:
    """A broker in a process of its own (``python -m kgroup.cli broker``) on a fixed free port,
    so that a test can kill -9 it and start it again on the same data."""

    def __init__(self, data_dir: str | Path, config: Mapping[str, Any] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.port = free_port()
        self.config = dict(config or {})
        self.proc: subprocess.Popen[bytes] | None = None
        #: preexec runs in the child before the broker starts (limits, signal dispositions).
        self.preexec: Callable[[], None] | None = None
        fd, log = tempfile.mkstemp(prefix="kgroup-broker-", suffix=".log")
        os.close(fd)
        self.log = Path(log)
        self._fds: list[int] = []

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> BrokerProcess:
        props = self.data_dir.with_name(self.data_dir.name + ".properties")
        props.write_text("".join(f"{k}={v}\n" for k, v in self.config.items()))
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kgroup.cli",
                "broker",
                "--listen",
                self.bootstrap,
                "--data-dir",
                str(self.data_dir),
                "--config",
                str(props),
            ],
            stdout=subprocess.DEVNULL,
            stderr=self._log_file(),
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
            preexec_fn=self.preexec,
        )
        self._close_fds()
        wait_for_port(self.port, 60, self.proc)
        return self

    def _log_file(self) -> int:
        # The child gets its own descriptor of the log; ours is closed at once.
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        self._fds.append(fd)
        return fd

    def _close_fds(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    def kill9(self) -> None:
        """Kill the broker without warning, as a crash would."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> int:
        """SIGTERM, as an operator would, and wait for the clean stop; the exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.terminate()
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Wire:
    """Wire is a raw client: one socket, requests encoded by hand, answers decoded."""

    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        host, _, port = bootstrap.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout)
        self._ids = itertools.count(1)

    def request(
        self, api_key: int, version: int, body: Mapping[str, Any], client_id: str = "wire"
    ) -> protocol.Response:
        """Send one request and read its answer."""
        cid = next(self._ids)
        self.sock.sendall(protocol.encode_request(api_key, version, cid, client_id, body))
        response = protocol.decode_response(api_key, version, read_frame(self.sock))
        assert response.correlation_id == cid
        return response

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def closed_by_peer(self, timeout: float = 5.0) -> bool:
        """Whether the broker closes the connection (within ``timeout``)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
