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


def _minor_faults(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def test_produce_frames_reuse_the_heap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Megabyte produce frames come from memory the broker already has: with glibc's initial
    malloc thresholds each was mapped afresh (or the heap shrunk under it when it was freed),
    and the next one faulted its pages in again: about four page faults for every page
    produced, and four times the CPU (bench_broker). The broker sets the thresholds
    (limits.MMAP_THRESHOLD)."""
    import confluent_kafka

    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    with BrokerProcess(tmp_path / "data") as broker:
        assert broker.proc is not None
        pid = broker.proc.pid
        conf = {"bootstrap.servers": broker.bootstrap, "linger.ms": 5, "batch.size": 1_000_000}
        producer = confluent_kafka.Producer({**conf, "acks": "1", "compression.type": "none"})
        value = bytes(1000)

        def produce(n: int) -> None:
            for _ in range(n):
                while True:
                    try:
                        producer.produce("frames", value)
                        break
                    except BufferError:
                        producer.poll(0.01)
            assert producer.flush(30) == 0

        produce(5_000)  # the topic is created, the broker's buffers made
        before = _minor_faults(pid)
        produce(40_000)
        pages = 40_000 * 1000 // 4096
        faults = _minor_faults(pid) - before
        # Measured: under 100 for 40 MB; with glibc's initial thresholds about 4 per page.
        assert faults < pages // 4, (faults, pages)
