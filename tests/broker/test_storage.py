"""The broker when its disk fails or fills (issue 19): a full tmpfs, an ext4 volume the kernel
remounts read-only, a folder made unwritable, and failures raised from the log by the fault
hook (a failed fsync above all). Each gives Kafka's error code in a bounded time, the broker's
log says what happened, and nothing acknowledged is lost across a restart. Deleted topics,
retention and compaction give their space back within the delete delay plus a second, and open
files stay flat over many create-fill-delete cycles. Policy: ``docs/storage-failures.md``."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.kgroup_broker import BrokerProcess, Wire, run_broker
from support.small_fs import ext4, free_bytes, tmpfs
from support.storage import (
    STORAGE_ERROR,
    Sender,
    create_topic,
    delete_topic,
    fetch_body,
    read_all,
    values,
    wait_for,
)

from kgroup.log import clear_faults, inject_fault
from kgroup.protocol import ApiKey

pytestmark = pytest.mark.network


# -- a full disk ---------------------------------------------------------------------------


def test_a_full_disk_answers_storage_errors_says_so_and_loses_nothing(tmp_path: Path) -> None:
    """Issue 19's scenario: 10 KB records into a 40 MB tmpfs with retries off. The full disk
    answers KAFKA_STORAGE_ERROR; the broker logs an ERROR naming the folder, the partition and
    ENOSPC at the first failure, a summary while they go on, and says when writes succeed
    again; after kill -9 every acknowledged record is there."""
    with tmpfs(40) as fs:
        data = fs / "data"
        broker = BrokerProcess(data, {"kgroup.log.dir.failure.summary.ms": 500}).start()
        try:
            topic = create_topic(broker.bootstrap)
            # Leave about 6 MB: the test fills them, not 40 MB.
            filler = fs / "filler"
            with open(filler, "wb") as f:
                f.write(b"\0" * max(0, free_bytes(fs) - (6 << 20)))
            sender = Sender(broker.bootstrap)
            started = time.monotonic()
            acked, failed = sender.send(topic, values(1000, 10_000, "a"))
            took = time.monotonic() - started
            assert acked > 100 and failed > 0, (acked, failed)
            assert set(sender.errors) == {STORAGE_ERROR}
            assert took < 30
            out = broker.output()
            first = next(line for line in out.splitlines() if "ERROR" in line and "ENOSPC" in line)
            assert str(data) in first and f"{topic}-0" in first, first
            assert "No space left on device" in first
            # Still failing: a WARNING sums it up.
            time.sleep(0.6)
            assert sender.send(topic, values(1000, 10_000, "b"))[1] > 0
            wait_for(lambda: "is still failing" in broker.output(), 5, "a summary of the failures")
            # Space back: produce goes on, and the log says so.
            filler.unlink()
            assert sender.send(topic, values(50, 10_000, "c")) == (50, 0)
            wait_for(lambda: "succeed again" in broker.output(), 5, "the recovery logged")
            # One ERROR for the episode, however often big batches failed and small ones fit.
            errors = [x for x in broker.output().splitlines() if " ERROR " in x]
            assert len(errors) == 1, errors
            broker.kill9()
            broker.start()
            found = read_all(broker.bootstrap, topic)
            assert {v: found.get(v) for v in sender.acked} == sender.acked
            assert len(found) == len(sender.acked)
        finally:
            broker.stop()


# -- a volume gone read-only -------------------------------------------------------------------


def test_a_volume_gone_read_only_fails_writes_and_keeps_what_was_fsynced(tmp_path: Path) -> None:
    """ext4 remounts itself read-only (as on a disk error): produce answers KAFKA_STORAGE_ERROR
    within seconds and the log names EROFS; the records acknowledged before (acks=all with
    kgroup.acks.all.fsync: on disk) are all there after a repair and a restart."""
    with ext4(64) as fs:
        data = fs.mount / "data"
        config = {"kgroup.acks.all.fsync": "true", "kgroup.log.dir.failure.summary.ms": 500}
        broker = BrokerProcess(data, config).start()
        try:
            topic = create_topic(broker.bootstrap, 2)
            sender = Sender(broker.bootstrap)
            assert sender.send(topic, values(200, 1000, "a"), 0) == (200, 0)
            assert sender.send(topic, values(200, 1000, "b"), 1) == (200, 0)
            fs.fail()
            started = time.monotonic()
            acked, failed = sender.send(topic, values(20, 1000, "c"), 0)
            assert (acked, failed) == (0, 20)
            assert set(sender.errors) == {STORAGE_ERROR}
            assert time.monotonic() - started < 10
            wait_for(
                lambda: "EROFS" in broker.output() and str(data) in broker.output(),
                5,
                "the read-only volume logged",
            )
            # Reads of what was written go on.
            assert len(read_all(broker.bootstrap, topic, 2)) == 400
            broker.stop()
            fs.detach()
            fs.attach()
            broker.start()
            found = read_all(broker.bootstrap, topic, 2)
            assert {v: found.get(v) for v in sender.acked} == sender.acked
            # The volume is whole again: produce goes on where the log ended.
            assert sender.send(topic, values(10, 1000, "d"), 0) == (10, 0)
        finally:
            broker.stop()


# -- a folder made unwritable -----------------------------------------------------------------


def test_an_unwritable_folder_fails_the_roll_then_serves_on(tmp_path: Path) -> None:
    """The partition's folder made immutable (chattr +i: even root cannot create files in it):
    the append that needs a new segment fails with KAFKA_STORAGE_ERROR, the log names EPERM,
    and once the folder is writable again produce goes on; nothing acknowledged is lost."""
    with tmpfs(64) as fs:
        data = fs / "data"
        broker = BrokerProcess(data).start()
        folder: Path | None = None
        try:
            topic = create_topic(broker.bootstrap, 1, {"segment.bytes": "100000"})
            folder = data / f"{topic}-0"
            sender = Sender(broker.bootstrap, **{"batch.size": 16384})
            assert sender.send(topic, values(50, 1000, "a")) == (50, 0)
            subprocess.run(["chattr", "+i", str(folder)], check=True)
            _, failed = sender.send(topic, values(100, 1000, "b"))
            assert failed > 0 and set(sender.errors) == {STORAGE_ERROR}
            wait_for(lambda: "EPERM" in broker.output(), 5, "the failed roll logged")
            subprocess.run(["chattr", "-i", str(folder)], check=True)
            assert sender.send(topic, values(100, 1000, "c")) == (100, 0)
            broker.kill9()
            broker.start()
            found = read_all(broker.bootstrap, topic)
            assert {v: found.get(v) for v in sender.acked} == sender.acked
        finally:
            if folder is not None:
                subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
            broker.stop()


# -- injected faults ---------------------------------------------------------------------------


@pytest.fixture
def faults() -> Iterator[None]:
    clear_faults()
    yield
    clear_faults()


def test_a_failed_fsync_fails_what_it_covered_and_the_partition_stays_offline(
    tmp_path: Path, faults: None, caplog: pytest.LogCaptureFixture
) -> None:
    """With acks=all answered once fsynced, a failed fsync fails the produces it covered and
    takes that partition offline until the broker restarts, even though the next fsync would
    succeed; the other partition serves on. After a restart recovery checks the partition and
    every acknowledged record is there."""
    caplog.set_level(logging.INFO, logger="kgroup.broker")
    data = tmp_path / "data"
    config = {"kgroup.acks.all.fsync": "true"}
    with run_broker(data, config) as broker:
        bootstrap = broker.bootstrap_servers
        topic = create_topic(bootstrap, 2)
        sender = Sender(bootstrap)
        assert sender.send(topic, values(20, 100, "a"), 0) == (20, 0)
        inject_fault("sync", f"/{topic}-0/", errno.EIO, times=1)
        started = time.monotonic()
        assert sender.send(topic, values(5, 100, "b"), 0) == (0, 5)
        assert time.monotonic() - started < 5
        # Offline: the fault is spent, and still nothing more is taken, nor read.
        assert sender.send(topic, values(5, 100, "c"), 0) == (0, 5)
        assert set(sender.errors) == {STORAGE_ERROR}
        assert sender.send(topic, values(20, 100, "d"), 1) == (20, 0)
        offline = [r for r in caplog.records if "offline until the broker restarts" in r.message]
        assert len(offline) == 1 and f"{topic}-0" in offline[0].message
        assert offline[0].levelno == logging.ERROR
        # Fetch too (librdkafka retries it unseen: asked on the wire).
        with Wire(bootstrap) as w:
            r = w.request(ApiKey.FETCH, 4, fetch_body(topic, {0: 0, 1: 0}))
        codes = {p.partition_index: p.error_code for p in r.body.responses[0].partitions}
        assert codes == {0: STORAGE_ERROR, 1: 0}
    assert any("not closed cleanly" in r.message for r in caplog.records)
    with run_broker(data, config) as broker:
        found = read_all(broker.bootstrap_servers, topic, 2)
        assert {v: found.get(v) for v in sender.acked} == sender.acked
        sender = Sender(broker.bootstrap_servers)
        assert sender.send(topic, values(5, 100, "e"), 0) == (5, 0)
    assert any("Recovered" in r.message and f"{topic}-0" in r.message for r in caplog.records)


# -- space given back --------------------------------------------------------------------------


def _used(fs: Path) -> int:
    st = os.statvfs(fs)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def test_a_deleted_topics_space_is_back_within_the_delay_and_a_second() -> None:
    delay = 2.0
    with tmpfs(64) as fs:
        data = fs / "data"
        broker = BrokerProcess(data, {"log.segment.delete.delay.ms": int(delay * 1000)}).start()
        try:
            topic = create_topic(broker.bootstrap, 2)
            base = _used(fs)
            sender = Sender(broker.bootstrap, acks="1")
            sender.send(topic, values(1000, 10_000, "a"), 0)
            sender.send(topic, values(1000, 10_000, "b"), 1)
            assert _used(fs) - base > 19 << 20
            delete_topic(broker.bootstrap, topic)
            deleted = time.monotonic()
            # Renamed for deletion, kept for the delay.
            assert not (data / f"{topic}-0").exists()
            assert len(list(data.glob(f"{topic}-0.*-delete"))) == 1
            time.sleep(delay / 2)
            assert _used(fs) - base > 19 << 20
            wait_for(lambda: _used(fs) - base < 1 << 20, delay + 1.0, "the space given back")
            assert time.monotonic() - deleted < delay + 1.0
            assert not list(data.glob("*-delete"))
            # No file of the topic stays open.
            assert not [t for t in _open_files(broker) if topic in t], (
                "files of the deleted topic still open"
            )
        finally:
            broker.stop()


def _open_files(broker: BrokerProcess) -> list[str]:
    assert broker.proc is not None
    fds = Path(f"/proc/{broker.proc.pid}/fd")
    out = []
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):
            out.append(os.readlink(fd))
    return out


def test_retention_and_compaction_give_space_back_within_the_delay_and_a_second() -> None:
    delay = 1.0
    with tmpfs(64) as fs:
        data = fs / "data"
        broker = BrokerProcess(
            data,
            {
                "log.retention.check.interval.ms": 300,
                "log.cleaner.backoff.ms": 300,
            },
        ).start()
        try:
            base = _used(fs)
            sized = create_topic(
                broker.bootstrap,
                1,
                {
                    "segment.bytes": str(1 << 20),
                    "retention.bytes": str(2 << 20),
                    "file.delete.delay.ms": str(int(delay * 1000)),
                },
            )
            sender = Sender(broker.bootstrap, acks="1")
            sender.send(sized, values(1500, 10_000, "a"))
            # Retention runs every 0.3 s; its segments wait 1 s renamed, then go.
            wait_for(
                lambda: _used(fs) - base < 4 << 20, 0.3 + delay + 1.0 + 1.0, "retention's space"
            )
            compacted = create_topic(
                broker.bootstrap,
                1,
                {
                    "cleanup.policy": "compact",
                    "segment.bytes": str(1 << 20),
                    "min.cleanable.dirty.ratio": "0.01",
                    "file.delete.delay.ms": str(int(delay * 1000)),
                },
            )
            from confluent_kafka import Producer

            p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
            for i in range(1500):
                p.produce(compacted, b"x" * 10_000, key=f"k{i % 10}".encode())
                if i % 100 == 0:
                    p.poll(0)
            assert p.flush(30) == 0
            # The dirty segments are cleaned at the next cleaner pass (0.3 s), their
            # replaced files removed after the delay.
            wait_for(
                lambda: _used(fs) - base < 6 << 20,
                0.3 + delay + 1.0 + 2.0,
                "compaction's space",
            )
        finally:
            broker.stop()


def test_open_files_stay_flat_over_create_fill_delete_cycles() -> None:
    with tmpfs(128) as fs:
        broker = BrokerProcess(fs / "data", {"log.segment.delete.delay.ms": 200}).start()
        try:
            sender = Sender(broker.bootstrap, acks="1")
            counts = []
            for cycle in range(30):
                topic = create_topic(broker.bootstrap, 2, {"segment.bytes": "100000"})
                sender.send(topic, values(150, 2000, f"c{cycle}"), 0)
                sender.send(topic, values(150, 2000, f"c{cycle}"), 1)
                delete_topic(broker.bootstrap, topic)
                time.sleep(0.05)
                counts.append(len(_open_files(broker)))
            time.sleep(1.0)
            final = len(_open_files(broker))
            # Each cycle rolled several segments of each partition: had their files stayed
            # open, the count would have grown by dozens a cycle.
            assert final <= counts[0] + 4, (counts, final)
            assert max(counts) <= counts[0] + 8, counts
            assert not list((fs / "data").glob("*-delete"))
        finally:
            broker.stop()


# -- several log directories -------------------------------------------------------------------


def test_partitions_spread_over_log_dirs_and_a_failing_one_leaves_the_others_serving(
    tmp_path: Path, faults: None, caplog: pytest.LogCaptureFixture
) -> None:
    """log.dirs with two folders: partitions spread two and two; writes failing in one folder
    fail its partitions' produces only; DescribeLogDirs and ``kgroup log-dirs`` name the
    folder in error beside the other's disk use; after a restart every partition is found
    where it was and every acknowledged record is there."""
    import io

    from kgroup.cli import main as kgroup_main
    from kgroup.client import AdminClient
    from kgroup.errors import KafkaStorageError

    caplog.set_level(logging.INFO, logger="kgroup.broker")
    a, b = tmp_path / "a", tmp_path / "b"
    with run_broker(f"{a},{b}", {"kgroup.log.dir.failure.summary.ms": 200}) as broker:
        bootstrap = broker.bootstrap_servers
        topic = create_topic(bootstrap, 4)
        where = {p: a if (a / f"{topic}-{p}").is_dir() else b for p in range(4)}
        assert sorted(str(d) for d in where.values()) == sorted([str(a)] * 2 + [str(b)] * 2)
        metas = [(d / "meta.properties").read_text() for d in (a, b)]
        ids = [m.split("directory.id=")[1].split()[0] for m in metas]
        clusters = {m.split("cluster.id=")[1].split()[0] for m in metas}
        assert len(set(ids)) == 2 and len(clusters) == 1
        sender = Sender(bootstrap)
        for p in range(4):
            assert sender.send(topic, values(10, 100, f"a{p}"), p) == (10, 0)
        inject_fault("write", f"{a}/", errno.ENOSPC)
        for p in range(4):
            outcome = sender.send(topic, values(5, 100, f"b{p}"), p)
            assert outcome == ((0, 5) if where[p] == a else (5, 0)), (p, outcome)
        assert any(
            r.levelno == logging.ERROR and str(a) in r.message and "ENOSPC" in r.message
            for r in caplog.records
        )
        with AdminClient({"bootstrap.servers": bootstrap}) as admin:
            (dirs,) = [f.result(30) for f in admin.describe_log_dirs().values()]
        assert isinstance(dirs[str(a)].error, KafkaStorageError)
        assert dirs[str(b)].error is None
        for p in range(4):
            assert (topic, p) in [(tp.topic, tp.partition) for tp in dirs[str(where[p])].replicas]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert kgroup_main(["log-dirs", "--bootstrap-server", bootstrap]) == 0
        text = out.getvalue()
        lines = text.splitlines()
        head_a = next(line for line in lines if f"\t{a}\t" in line)
        head_b = next(line for line in lines if f"\t{b}\t" in line)
        assert "error: KAFKA_STORAGE_ERROR" in head_a and "error: none" in head_b
        assert f"Topic: {topic}\tPartitions: 2" in text
        clear_faults()
        for p in range(4):
            assert sender.send(topic, values(5, 100, f"c{p}"), p) == (5, 0)
        # The episode ends after a period with no failure.
        wait_for(
            lambda: any("succeed again" in r.message for r in caplog.records), 2, "the recovery"
        )
        with AdminClient({"bootstrap.servers": bootstrap}) as admin:
            (dirs,) = [f.result(30) for f in admin.describe_log_dirs().values()]
        assert dirs[str(a)].error is None
    with run_broker(f"{a},{b}") as broker:
        for p in range(4):
            assert (where[p] / f"{topic}-{p}").is_dir()
        found = read_all(broker.bootstrap_servers, topic, 4)
        assert {v: found.get(v) for v in sender.acked} == sender.acked


def test_kafkas_default_delete_delay_keeps_a_deleted_topics_folder_a_minute(
    tmp_path: Path,
) -> None:
    """With Kafka's defaults (log.segment.delete.delay.ms and file.delete.delay.ms 60 s) a
    deleted topic's folders are renamed and kept: still there a second later, and described
    as 60 s."""
    from kgroup.client import AdminClient, ConfigResource
    from kgroup.client.admin import ResourceType

    data = tmp_path / "data"
    with run_broker(data) as broker:
        bootstrap = broker.bootstrap_servers
        topic = create_topic(bootstrap, 2)
        with AdminClient({"bootstrap.servers": bootstrap}) as admin:
            r = ConfigResource(ResourceType.TOPIC, topic)
            entries = admin.describe_configs([r])[r].result(30)
        assert entries["file.delete.delay.ms"].value == "60000"
        Sender(bootstrap).send(topic, values(10, 100, "a"), 1)
        delete_topic(bootstrap, topic)
        time.sleep(1.0)
        doomed = sorted(data.glob(f"{topic}-*.*-delete"))
        assert len(doomed) == 2
        assert broker.state is not None
        due = sorted(t for t, _ in broker.state.topics.doomed)
        assert len(due) == 2
        assert 58_000 < due[0] - time.time() * 1000 <= 60_000
