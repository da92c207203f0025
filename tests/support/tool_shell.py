"""Kafka's tools run in long-lived JVMs (``tests/support/java/kgroup/ToolShell.java``), a pool of
them, one per tool running at the same time: a tool's own JVM start is most of its time
(1-2 s), and the Kafka-backed tests run hundreds of them. A tool runs there as its script runs
it: its ``main`` with the arguments, stdin given, stdout and stderr captured, Kafka's ``Exit``
giving the exit status (and parking the thread that called it, as if the JVM had stopped
there). ``KGROUP_TOOL_SHELL=0`` runs every tool in a JVM of its own instead.

A tool that outlives its timeout kills its shell (the next tool starts another)."""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import threading
import time

from .apache_kafka import FAST_JVM, TOOLS_LOG4J, classpath, java
from .java_scenarios import build_dir

MAIN = "kgroup.ToolShell"

_idle: list[ToolShell] = []
_all: list[ToolShell] = []
_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get("KGROUP_TOOL_SHELL", "1") != "0"


class ToolShell:
    """One ToolShell JVM and the pipe to it; not shared between threads."""

    def __init__(self) -> None:
        build = build_dir()
        self.proc = subprocess.Popen(
            [
                java(),
                "-Xmx512m",
                *FAST_JVM,
                "-Xlog:disable",
                "-Xlog:all=warning:stderr",
                f"-XX:SharedArchiveFile={build / 'scenarios.jsa'}",
                f"-Dlog4j2.configurationFile={TOOLS_LOG4J}",
                "-cp",
                classpath(build / "scenarios.jar"),
                MAIN,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._buf = b""

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(
        self, main_class: str, args: list[str], input: str | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        request = {"main": main_class, "args": args, "input": input}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        fd = self.proc.stdout.fileno()
        # poll, not select: the suite's process may hold more than FD_SETSIZE (1024) files.
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise subprocess.TimeoutExpired([main_class, *args], timeout)
            if poller.poll(left * 1000):
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    self.close()
                    raise RuntimeError(f"the tool shell died running {main_class} {args}")
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        answer = json.loads(line)
        return subprocess.CompletedProcess(
            [main_class, *args], answer["rc"], answer["stdout"], answer["stderr"]
        )

    def close(self) -> None:
        if self.alive:
            self.proc.kill()
        self.proc.wait(10)


def run_in_shell(
    main_class: str, args: list[str], input: str | None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run one tool in an idle shell of the pool (a new one if none is idle)."""
    with _lock:
        shell = _idle.pop() if _idle else None
    if shell is None or not shell.alive:
        shell = ToolShell()
        with _lock:
            _all.append(shell)
    try:
        return shell.run(main_class, args, input, timeout)
    finally:
        if shell.alive:
            with _lock:
                _idle.append(shell)


@atexit.register
def _close_all() -> None:
    with _lock:
        for shell in _all:
            shell.close()
