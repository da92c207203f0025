"""What survives: the broker killed with kill -9 under load, a torn tail written on purpose,
retention and compaction on real segments, a clean stop by SIGTERM. The broker runs as a
process of its own (``kgroup broker``), on the same data folder across restarts."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest
from support.kgroup_broker import BrokerProcess, run_broker

from kgroup.broker import Broker

pytestmark = pytest.mark.network


def _create(bootstrap: str, partitions: int, config: dict[str, str] | None = None) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"dur-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name].result(30)
    return name


def _consume_all(bootstrap: str, topic: str, partitions: int, expect: int, timeout: float = 60):
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "unused",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out = []
    eof: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and (len(out) < expect or len(eof) < partitions):
            for m in c.consume(1000, 0.5):
                if m.error() is None:
                    out.append((m.partition(), m.offset(), m.key(), m.value()))
                    eof.discard(m.partition())
                elif m.error().code() == m.error()._PARTITION_EOF:
                    eof.add(m.partition())
    finally:
        c.close()
    return out


def test_kill9_under_idempotent_acks_all_load_loses_and_repeats_nothing(tmp_path: Path) -> None:
    from confluent_kafka import Producer

    broker = BrokerProcess(tmp_path / "data").start()
    try:
        topic = _create(broker.bootstrap, 3)
        acked: dict[bytes, tuple[int, int]] = {}
        failed: list[str] = []
        p = Producer(
            {
                "bootstrap.servers": broker.bootstrap,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 2,
                "delivery.timeout.ms": 120_000,
                "reconnect.backoff.max.ms": 200,
            }
        )

        def delivered(err, msg) -> None:
            if err is None:
                acked[msg.value()] = (msg.partition(), msg.offset())
            else:
                failed.append(str(err))

        stop = threading.Event()
        sent = [0]

        def load() -> None:
            i = 0
            while not stop.is_set():
                try:
                    p.produce(
                        topic, f"v{i}".encode(), key=str(i % 50).encode(), on_delivery=delivered
                    )
                    i += 1
                except BufferError:
                    pass
                p.poll(0.0005)
            sent[0] = i

        t = threading.Thread(target=load)
        t.start()
        time.sleep(1.5)
        before = len(acked)
        broker.kill9()  # mid-stream: some batches written and acked, some written not acked
        time.sleep(0.5)
        broker.start()  # same port, same data: recovery, then the producer's retries
        time.sleep(1.5)
        stop.set()
        t.join(30)
        assert p.flush(60) == 0
        assert not failed, failed[:5]
        assert before > 100 and len(acked) == sent[0]
        got = _consume_all(broker.bootstrap, topic, 3, len(acked))
        values = [v for _, _, _, v in got]
        assert len(values) == len(set(values)), "a record is in the log twice"
        assert set(values) == set(acked), "an acknowledged record is missing"
        assert {v: (p_, o) for p_, o, _, v in got} == acked
        for part in range(3):
            offsets = sorted(o for p_, o, _, _ in got if p_ == part)
            assert offsets == list(range(len(offsets))), "offsets are not continuous"
    finally:
        broker.stop()
    assert "Recovered" in broker.output()


def test_a_torn_tail_is_cut_and_the_log_goes_on(tmp_path: Path) -> None:
    from confluent_kafka import Producer

    data = tmp_path / "data"
    broker = BrokerProcess(data).start()
    topic = _create(broker.bootstrap, 1)
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 0})
    for i in range(20):
        p.produce(topic, f"v{i}".encode(), partition=0)
        p.flush(10)
    broker.kill9()
    (segment,) = (data / f"{topic}-0").glob("*.log")
    size = segment.stat().st_size
    with open(segment, "ab") as f:  # half a batch, as a crash in the middle of a write leaves
        f.write(bytes(range(40)))
    broker.start()
    try:
        assert segment.stat().st_size == size
        p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all"})
        p.produce(topic, b"after", partition=0)
        assert p.flush(30) == 0
        got = _consume_all(broker.bootstrap, topic, 1, 21)
        assert [v for _, _, _, v in got] == [f"v{i}".encode() for i in range(20)] + [b"after"]
        assert [o for _, o, _, _ in got] == list(range(21))
    finally:
        broker.stop()
    assert "cut 40 bytes" in broker.output()


def test_retention_and_compaction_on_real_segments(tmp_path: Path) -> None:
    from confluent_kafka import Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    config = {"log.retention.check.interval.ms": 200, "log.cleaner.backoff.ms": 200}
    with BrokerProcess(tmp_path / "data", config) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        small = {"segment.bytes": "2000", "retention.bytes": "5000"}
        deleted = _create(broker.bootstrap, 1, small)
        compacted = _create(
            broker.bootstrap,
            1,
            {
                "segment.bytes": "2000",
                "cleanup.policy": "compact",
                "min.cleanable.dirty.ratio": "0.01",
                "delete.retention.ms": "0",
            },
        )
        p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        for i in range(200):
            p.produce(deleted, b"x" * 100, partition=0)
            p.produce(compacted, f"v{i}".encode(), key=f"k{i % 5}".encode(), partition=0)
            p.flush(10)
        p.produce(compacted, None, key=b"k0", partition=0)  # a tombstone
        p.flush(10)
        for _ in range(60):  # enough to roll past the tombstone's segment
            # One batch at a time: a batch above segment.bytes is RECORD_LIST_TOO_LARGE.
            p.produce(compacted, b"y" * 50, key=b"filler", partition=0)
            p.flush(10)
        assert p.flush(30) == 0
        tp = TopicPartition(deleted, 0)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            start = admin.list_offsets({tp: OffsetSpec.earliest()})[tp].result(10).offset
            if start > 0:
                break
            time.sleep(0.2)
        assert start > 0, "retention.bytes deleted no segment"
        time.sleep(3)  # the cleaner runs every 200 ms
        got = _consume_all(broker.bootstrap, compacted, 1, 1, timeout=20)
        latest: dict[bytes, bytes | None] = {}
        for _, _, k, v in got:
            latest[k] = v
        # Every key's latest value is there; older ones are gone; offsets only increase.
        assert latest[b"k1"] == b"v196" and latest[b"k4"] == b"v199"
        assert len([1 for _, _, k, _ in got if k == b"k1"]) == 1
        assert b"k0" not in latest or latest[b"k0"] is None
        offsets = [o for _, o, _, _ in got]
        assert offsets == sorted(offsets) and len(got) < 200 + 1 + 60
    assert "Cleaned" in broker.output() and "by retention" in broker.output()


def test_sigterm_stops_cleanly_and_restarts_without_recovery(tmp_path: Path) -> None:
    from confluent_kafka import Producer

    broker = BrokerProcess(tmp_path / "data").start()
    topic = _create(broker.bootstrap, 2)
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(100):
        p.produce(topic, str(i).encode(), partition=i % 2)
    assert p.flush(30) == 0
    assert broker.stop() == 0
    broker.start()
    try:
        assert len(_consume_all(broker.bootstrap, topic, 2, 100)) == 100
    finally:
        broker.stop()
    out = broker.output()
    assert "shut down completed" in out and "started" in out
    assert "Recovered" not in out


def test_a_full_disk_answers_kafka_storage_error_and_the_broker_goes_on(tmp_path: Path) -> None:
    """A write that the disk refuses (here: past RLIMIT_FSIZE, as a full disk refuses it) is
    answered with KAFKA_STORAGE_ERROR (retriable: clients retry it); the log stays as it was,
    and the broker keeps serving."""
    import resource
    import signal

    from support.kgroup_broker import Wire

    from kgroup.errors import KafkaStorageError
    from kgroup.protocol import ApiKey
    from kgroup.protocol.records import encode_batch

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    broker = BrokerProcess(tmp_path / "data")
    broker.preexec = limit
    broker.start()
    try:
        topic = _create(broker.bootstrap, 1)
        batch = encode_batch([(0, 1000, None, b"x" * 1000)])
        produce = {
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
        }
        codes = []
        with Wire(broker.bootstrap) as w:
            for _ in range(300):
                r = w.request(ApiKey.PRODUCE, 9, produce).body.responses[0]
                codes.append(r.partition_responses[0].error_code)
            ok = codes.count(0)
            assert 100 < ok < 300 and set(codes[ok:]) == {KafkaStorageError.code}
            assert codes[:ok] == [0] * ok  # nothing written after the first refusal
        got = _consume_all(broker.bootstrap, topic, 1, ok)
        assert [o for _, o, _, _ in got] == list(range(ok))  # the log is as it was
        assert broker.proc is not None and broker.proc.poll() is None
    finally:
        broker.stop()


def test_flush_messages_and_flush_ms_fsync_acks_1_data_and_the_default_leaves_it_to_the_os(
    broker,
) -> None:
    """acks=1 data is fsynced per the topic's flush.messages and flush.ms, as Kafka's log
    flushes; with the defaults (Long.MAX_VALUE) only the OS writes it back."""
    from confluent_kafka import Producer

    by_count = _create(broker.bootstrap_servers, 1, {"flush.messages": "4"})
    by_time = _create(broker.bootstrap_servers, 1, {"flush.ms": "200"})
    default = _create(broker.bootstrap_servers, 1)
    p = Producer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "acks": "1",
            "linger.ms": 0,
            "message.timeout.ms": 10000,
        }
    )

    def produce(topic: str, n: int) -> None:
        for i in range(n):
            p.produce(topic, b"v%d" % i)
            p.flush(10)

    def recovery_point(topic: str, at_least: int = 1 << 62, wait: float = 5.0) -> int:
        assert broker.state is not None
        lg = broker.state.topics.by_name[topic].partitions[0].log
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and lg.recovery_point < at_least:
            time.sleep(0.05)
        return lg.recovery_point

    produce(by_count, 3)
    produce(by_time, 3)
    produce(default, 3)
    assert recovery_point(by_time, 3) == 3
    # three messages are under flush.messages; the fourth flushes them all
    assert recovery_point(by_count, wait=0.3) == 0
    produce(by_count, 1)
    # the fourth is answered once fsynced, as Kafka flushes within the append
    assert recovery_point(by_count, wait=0) == 4
    assert recovery_point(default, wait=0.3) == 0


@pytest.mark.parametrize("fsync", [False, True])
def test_acks_all_is_answered_once_written_or_with_the_setting_once_fsynced(
    tmp_path: Path, fsync: bool
) -> None:
    """As Kafka's only replica, acks=all answers once the batch is written (librdkafka's 0055
    allows no more time than that); kgroup.acks.all.fsync=true answers once it is fsynced."""
    from confluent_kafka import Producer

    with run_broker(tmp_path, {"kgroup.acks.all.fsync": fsync}) as broker:
        topic = _create(broker.bootstrap_servers, 1)
        assert broker.state is not None
        lg = broker.state.topics.by_name[topic].partitions[0].log
        p = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all"})
        synced = []
        for _ in range(5):
            p.produce(topic, b"v", on_delivery=lambda e, m: synced.append(lg.recovery_point))
            p.flush(10)
        assert synced == ([1, 2, 3, 4, 5] if fsync else [0] * 5)
        assert broker.state.flusher.callbacks == (5 if fsync else 0)


def test_concurrent_acks_all_produces_share_fsyncs(tmp_path: Path) -> None:
    """Group commit, with kgroup.acks.all.fsync: acks=all produces arriving together share one
    flush round, so the rounds are fewer than the requests and throughput does not fall to one
    fsync per request."""
    with run_broker(tmp_path, {"kgroup.acks.all.fsync": True}) as broker:
        _share_fsyncs(broker)


def _share_fsyncs(broker: Broker) -> None:
    from confluent_kafka import Producer

    topic = _create(broker.bootstrap_servers, 1)
    assert broker.state is not None
    flusher = broker.state.flusher
    before = (flusher.flushes, flusher.callbacks)

    def produce(n: int) -> None:
        p = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all", "linger.ms": 0})
        for i in range(n):
            p.produce(topic, b"x" * 100)
            p.poll(0)
            if i % 4 == 3:
                p.flush(10)
        assert p.flush(10) == 0

    threads = [threading.Thread(target=produce, args=(200,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rounds = flusher.flushes - before[0]
    requests = flusher.callbacks - before[1]
    assert requests >= 8 * 200 / 4 / 2, requests  # librdkafka may batch a few together
    assert rounds < requests * 0.8, (rounds, requests)


@pytest.mark.slow
def test_first_retention_pass_30s_after_start(tmp_path: Path) -> None:
    """Kafka's LogManager runs its first retention pass 30 s after start
    (InitialTaskDelayMs), not one log.retention.check.interval.ms (5 min) later: records
    past retention.ms are gone within about 30 s of a start, the active segment with them."""
    from confluent_kafka import Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    started = time.monotonic()
    with BrokerProcess(tmp_path / "data") as broker:
        topic = _create(broker.bootstrap, 1)
        p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        old = int(time.time() * 1000) - 8 * 86_400_000  # past the default 7 days
        for i in range(5):
            p.produce(topic, b"old", partition=0, timestamp=old + i)
        assert p.flush(30) == 0
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        tp = TopicPartition(topic, 0)
        start = 0
        while time.monotonic() - started < 50 and start == 0:
            start = admin.list_offsets({tp: OffsetSpec.earliest()})[tp].result(10).offset
            time.sleep(0.5)
        assert start == 5, "no retention pass within 50 s of the start"
        assert time.monotonic() - started >= 25
