"""``kgroup broker`` runs its process on the C library's allocator (``PYTHONMALLOC=malloc``),
re-executing itself once at start, unless ``PYTHONMALLOC`` chooses one; and gives the memory
of 5,000 connections back once they close."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.abuse import open_held, open_stalled, raise_fd_limit, rss_mb, settle
from support.kgroup_broker import BrokerProcess

pytestmark = pytest.mark.network


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(e.decode().split("=", 1) for e in raw if b"=" in e)


def test_the_broker_process_runs_on_the_c_allocator_and_gives_memory_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONMALLOC", raising=False)
    raise_fd_limit(8000)
    with BrokerProcess(tmp_path / "data") as broker:
        assert broker.proc is not None
        pid = broker.proc.pid
        # The same process (exec, not a child): its supervisor's signals still reach it.
        assert _environ(pid).get("PYTHONMALLOC") == "malloc"
        host, port = broker.bootstrap.rsplit(":", 1)
        time.sleep(0.5)
        idle = rss_mb(pid)
        for _ in range(2):
            crowds = [open_held(host, int(port), 2500), open_stalled(host, int(port), 2500)]
            settle(host, int(port))
            during = rss_mb(pid)
            for c in crowds:
                c.close()
            deadline = time.monotonic() + 10
            while rss_mb(pid) > idle + (during - idle) / 4 and time.monotonic() < deadline:
                time.sleep(0.2)
            after = rss_mb(pid)
            # Three quarters of the rise given back (measured: 6/7; on Python's allocator, 3/5).
            assert after <= idle + (during - idle) / 4, (idle, during, after)


def test_pythonmalloc_chooses_the_allocator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONMALLOC", "pymalloc")
    with BrokerProcess(tmp_path / "data") as broker:
        assert broker.proc is not None
        assert _environ(broker.proc.pid).get("PYTHONMALLOC") == "pymalloc"
