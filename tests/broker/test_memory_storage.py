"""The broker on memory storage (``kgroup.log.storage=memory``): every file of the broker, the
log engine's and its own (meta.properties, topics.json, producer ids, group configs), lives in
an in-process memory filesystem. Real clients produce, consume and commit as on disk; nothing
is written to the disk; a broker restarted on a kept memory root finds its topics, records
and committed offsets; an injected write fault is a KAFKA_STORAGE_ERROR as on disk; the root
is freed when the broker stops."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.kgroup_broker import Wire
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

from kgroup.broker import Broker
from kgroup.log import (
    clear_faults,
    drop_memory_root,
    file_exists,
    inject_fault,
    is_dir,
    is_memory,
    list_dir,
    make_dirs,
    memory_root,
    memory_used,
    read_file,
    read_text,
    remove_file,
    remove_tree,
    write_atomically,
)
from kgroup.protocol import ApiKey

MEMORY = {"kgroup.log.storage": "memory", "group.initial.rebalance.delay.ms": 0}


def consume_and_commit(bootstrap: str, topic: str, group: str, n: int) -> list[bytes]:
    """``n`` records read by a member of ``group``, whose offsets it then commits."""
    from confluent_kafka import Consumer

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    got: list[bytes] = []
    try:
        c.subscribe([topic])
        for _ in range(100):
            for m in c.consume(n - len(got), 0.5):
                assert m.error() is None, m.error()
                got.append(m.value() or b"")
            if len(got) >= n:
                break
        c.commit(asynchronous=False)
    finally:
        c.close()
    return got


def committed(bootstrap: str, topic: str, group: str) -> int:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (tp,) = c.committed([TopicPartition(topic, 0)], timeout=30)
        return int(tp.offset)
    finally:
        c.close()


@pytest.fixture
def faults() -> Iterator[None]:
    clear_faults()
    yield
    clear_faults()


@pytest.mark.parametrize("storage", ["disk", "memory"])
def test_the_file_helpers_behave_alike_on_disk_and_in_memory(tmp_path: Path, storage: str) -> None:
    """kgroup.log's file helpers, which the broker's Python side uses for its own files, give
    the same answers and the same OSError classes on either storage."""
    root = tmp_path / "d"
    if storage == "memory":
        assert memory_root(root) == root
    try:
        make_dirs(root / "a" / "b")
        make_dirs(root / "a")
        write_atomically(root / "a" / "state", "one")
        write_atomically(root / "a" / "state", "two")
        write_atomically(root / "bin", b"\x00\x01", sync=False)
        assert read_text(root / "a" / "state") == "two"
        assert read_file(root / "bin") == b"\x00\x01"
        assert list_dir(root) == ["a", "bin"] and list_dir(root / "a") == ["b", "state"]
        assert is_dir(root / "a") and not is_dir(root / "bin") and file_exists(root / "bin")
        with pytest.raises(FileNotFoundError):
            read_file(root / "missing")
        with pytest.raises(FileNotFoundError):
            list_dir(root / "missing")
        with pytest.raises(FileNotFoundError):
            write_atomically(root / "missing" / "x", "y")
        remove_file(root / "bin")
        remove_tree(root / "a")
        assert list_dir(root) == []
        with pytest.raises(FileNotFoundError):
            remove_tree(root / "a")
        assert root.exists() == (storage == "disk")
        assert (memory_used(root) is not None) == (storage == "memory")
    finally:
        drop_memory_root(root)


@pytest.mark.network
def test_clients_work_on_memory_storage_and_a_kept_root_survives_a_restart(
    tmp_path: Path,
) -> None:
    """confluent-kafka produces, a group member consumes and commits; the data folder never
    appears on disk; Fetch copies records (no sendfile). Stopped with
    ``kgroup.log.storage.keep``, a new broker on the same log.dirs finds the topic, its records
    and the group's committed offset; stopped without, the root is freed."""
    data = tmp_path / "data"
    config: dict[str, Any] = {**MEMORY, "kgroup.log.storage.keep": "true"}
    with Broker(data, port=0, config=config) as broker:
        assert broker.state is not None and not broker.state.fetch_sendfile
        bootstrap = broker.bootstrap_servers
        topic = create_topic(bootstrap)
        sender = Sender(bootstrap)
        assert sender.send(topic, values(200, 100, "a")) == (200, 0)
        got = consume_and_commit(bootstrap, topic, "g1", 200)
        assert sorted(got) == sorted(values(200, 100, "a"))
        assert broker.state.send_stats.sendfile_calls == 0
        assert file_exists(data / f"{topic}-0") and file_exists(data / "topics.json")
        assert is_memory(data)
    assert not data.exists() and not tmp_path.joinpath("kgroup-data").exists()
    assert is_memory(data), "kept"
    restarted = {**MEMORY, "kgroup.log.storage.keep": "false"}
    with Broker(data, port=0, config=restarted) as broker:
        bootstrap = broker.bootstrap_servers
        found = read_all(bootstrap, topic)
        assert sorted(found) == sorted(values(200, 100, "a"))
        assert committed(bootstrap, topic, "g1") == 200
        # It takes more, and the group goes on from its offset.
        assert Sender(bootstrap).send(topic, values(10, 100, "b")) == (10, 0)
        assert sorted(consume_and_commit(bootstrap, topic, "g1", 10)) == values(10, 100, "b")
    assert not is_memory(data) and not file_exists(data / "topics.json")
    assert not data.exists()


@pytest.mark.network
def test_a_broker_without_folders_makes_its_own_memory_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No log.dirs nor log.dir: a fresh memory root (not ./kgroup-data), freed at stop.
    DescribeLogDirs' space of a memory folder: what its files hold plus the available
    memory. A deleted topic's folder is renamed ``-delete`` and removed after
    log.segment.delete.delay.ms, as on disk, and its memory given back."""
    monkeypatch.chdir(tmp_path)
    config = {**MEMORY, "log.segment.delete.delay.ms": 200}
    with Broker(port=0, config=config) as broker:
        root = broker.config.data_dir
        assert str(root).startswith("/kgroup-memory/") and is_memory(root)
        topic = create_topic(broker.bootstrap_servers)
        assert Sender(broker.bootstrap_servers).send(topic, values(50, 1000, "a")) == (50, 0)
        assert broker.state is not None
        total, usable = broker.state.topics.log_dirs.metadata_dir.space()
        assert usable > 0 and total >= usable + 50_000
        held = memory_used(root)
        assert held is not None and held > 50_000
        delete_topic(broker.bootstrap_servers, topic)
        assert any(n.startswith(f"{topic}-0.") and n.endswith("-delete") for n in list_dir(root))
        wait_for(lambda: not any(n.startswith(topic) for n in list_dir(root)), 5, "the purge")
        assert (memory_used(root) or 0) < held - 50_000
    assert not is_memory(root) and not file_exists(root)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.network
def test_a_write_fault_on_a_memory_partition_is_a_storage_error(faults: None) -> None:
    """The log's fault hook applies to memory files as to disk ones: a failed write answers
    KAFKA_STORAGE_ERROR, leaves the log as it was, and the next produce is taken."""
    root = None
    try:
        with Broker(port=0, config=MEMORY) as broker:
            root = broker.config.data_dir
            bootstrap = broker.bootstrap_servers
            topic = create_topic(bootstrap, 2)
            sender = Sender(bootstrap)
            assert sender.send(topic, values(5, 100, "a"), 0) == (5, 0)
            inject_fault("write", f"{root}/{topic}-0/", errno.ENOSPC, times=1)
            assert sender.send(topic, values(1, 100, "b"), 0) == (0, 1)
            assert set(sender.errors) == {STORAGE_ERROR}
            assert sender.send(topic, values(5, 100, "c"), 0) == (5, 0)
            assert sender.send(topic, values(5, 100, "d"), 1) == (5, 0)
            with Wire(bootstrap) as w:
                r = w.request(ApiKey.FETCH, 4, fetch_body(topic, {0: 0}))
            (p,) = r.body.responses[0].partitions
            assert p.error_code == 0 and p.high_watermark == 10
    finally:
        if root is not None:
            drop_memory_root(root)
