"""kgroup's Consumer alone (assign) against kgroup's broker and tansu: it reads what
confluent-kafka's Producer wrote, with every compression type, keys, values, headers and
timestamps intact; positions, commits, seeks, pauses, watermarks and offsets by time behave as
confluent-kafka's; closing leaves no thread behind."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from support.consumers import create_topic

from kgroup import Consumer, InvalidArgument
from kgroup.broker import Broker
from kgroup.client.types import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_INVALID,
    ClientClosed,
    TopicPartition,
)
from kgroup.errors import OffsetOutOfRange

pytestmark = pytest.mark.network

BASE_TS = 1_700_000_000_000


def produce_records(bootstrap: str, topic: str, n: int, compression: str = "none") -> list[tuple]:
    """n records on partition 0 with keys, headers and increasing create times; what was sent."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "compression.type": compression, "linger.ms": 20})
    sent = []
    for i in range(n):
        key = None if i % 7 == 0 else f"k{i}".encode()
        value = b"x" * (i % 50) + f"v{i}".encode()
        headers = [("h", f"{i}".encode()), ("empty", None)] if i % 3 == 0 else None
        p.produce(topic, value=value, key=key, partition=0, timestamp=BASE_TS + i, headers=headers)
        sent.append((key, value, headers or [], BASE_TS + i))
    assert p.flush(30) == 0
    return sent


def consumer(bootstrap: str, **config) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest", **config})


def read(c: Consumer, n: int, timeout: float = 20) -> list:
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None:
            assert m.error() is None, m.error()
            out.append(m)
    return out


def check_records(got: list, sent: list[tuple]) -> None:
    assert len(got) == len(sent)
    for i, (m, (key, value, headers, ts)) in enumerate(zip(got, sent, strict=True)):
        assert (m.offset(), m.key(), m.value(), m.timestamp()) == (i, key, value, (1, ts))
        assert list(m.headers() or []) == [tuple(h) for h in headers]


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_assign_reads_what_confluent_produced(broker: Broker, compression: str) -> None:
    topic = create_topic(broker.bootstrap_servers, 1)
    sent = produce_records(broker.bootstrap_servers, topic, 300, compression)
    with consumer(broker.bootstrap_servers) as c:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        check_records(read(c, 300), sent)
        assert c.poll(0.2) is None
        assert c.position([TopicPartition(topic, 0)])[0].offset == 300


@pytest.mark.parametrize("peer", ["tansu", "kafka"])
def test_assign_reads_from_another_broker(request: pytest.FixtureRequest, peer: str) -> None:
    server = request.getfixturevalue(peer)
    topic = server.create_topic(1)
    sent = produce_records(server.bootstrap, topic, 200, "zstd")
    with consumer(server.bootstrap) as c:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        check_records(read(c, 200), sent)
        if peer == "kafka":  # (tansu 0.6 answers ListOffsets latest with 1 here)
            assert c.get_watermark_offsets(TopicPartition(topic, 0)) == (0, 200)


def test_commit_committed_position_and_seek(broker: Broker) -> None:
    bs = broker.bootstrap_servers
    topic = create_topic(bs, 2)
    produce_records(bs, topic, 50)
    group = f"g-{uuid.uuid4().hex[:6]}"
    tp = TopicPartition(topic, 0)
    with consumer(bs, **{"group.id": group, "enable.auto.commit": False}) as c:
        c.assign([tp, TopicPartition(topic, 1)])
        assert c.assignment() == [tp, TopicPartition(topic, 1)]
        msgs = read(c, 10)
        assert [m.offset() for m in msgs] == list(range(10))
        assert c.position([tp])[0].offset == 10
        assert c.committed([tp])[0].offset == OFFSET_INVALID
        done = c.commit(asynchronous=False)
        # Java commits every position (the empty partition 1 at 0 too)
        assert [(x.partition, x.offset) for x in done] == [(0, 10), (1, 0)]
        assert c.committed([tp], timeout=10)[0].offset == 10
        c.commit(message=msgs[4], asynchronous=False)
        assert c.committed([tp])[0].offset == 5
        c.commit(offsets=[TopicPartition(topic, 0, 7)], asynchronous=False)
        assert c.committed([tp])[0].offset == 7
        c.seek(TopicPartition(topic, 0, 42))
        assert c.position([tp])[0].offset == 42
        assert [m.offset() for m in read(c, 3)] == [42, 43, 44]
        c.seek(TopicPartition(topic, 0, OFFSET_BEGINNING))
        assert read(c, 1)[0].offset() == 0
    # A new consumer of the group starts at the committed offset.
    with consumer(bs, **{"group.id": group}) as c:
        c.assign([TopicPartition(topic, 0)])
        assert read(c, 1)[0].offset() == 7


def test_pause_resume_watermarks_and_offsets_for_times(broker: Broker) -> None:
    bs = broker.bootstrap_servers
    topic = create_topic(bs, 1)
    produce_records(bs, topic, 40)
    tp = TopicPartition(topic, 0)
    with consumer(bs) as c:
        assert c.get_watermark_offsets(tp, timeout=10) == (0, 40)
        assert c.offsets_for_times([TopicPartition(topic, 0, BASE_TS + 25)])[0].offset == 25
        assert c.offsets_for_times([TopicPartition(topic, 0, BASE_TS + 99)])[0].offset == OFFSET_END
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        assert len(read(c, 5)) == 5
        c.pause([tp])
        assert c.poll(0.5) is None
        c.resume([tp])
        assert [m.offset() for m in read(c, 35)] == list(range(5, 40))
        assert c.get_watermark_offsets(tp, cached=True) == (0, 40)
        md = c.list_topics(topic, timeout=10)
        assert list(md.topics[topic].partitions) == [0]
        assert md.topics[topic].partitions[0].leader in md.brokers


def test_consume_and_consume_arrow(broker: Broker) -> None:
    bs = broker.bootstrap_servers
    topic = create_topic(bs, 1)
    produce_records(bs, topic, 100)
    with consumer(bs) as c:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        got: list = []
        deadline = time.monotonic() + 20
        while len(got) < 60 and time.monotonic() < deadline:
            got += c.consume(60 - len(got), timeout=1)
        assert [m.offset() for m in got] == list(range(60))
        rows = 0
        while rows < 40 and time.monotonic() < deadline:
            batch = c.consume_arrow(max_records=1000, timeout=1)
            if rows == 0 and batch.num_rows:
                assert batch.column("offset")[0].as_py() == 60
            rows += batch.num_rows
        assert rows == 40
        assert c.position([TopicPartition(topic, 0)])[0].offset == 100


def test_offset_reset_latest_and_none(broker: Broker) -> None:
    bs = broker.bootstrap_servers
    topic = create_topic(bs, 1)
    produce_records(bs, topic, 10)
    with consumer(bs, **{"auto.offset.reset": "latest"}) as c:
        c.assign([TopicPartition(topic, 0)])
        assert c.poll(1.0) is None
        deadline = time.monotonic() + 10
        while c.position([TopicPartition(topic, 0)])[0].offset != 10:
            assert time.monotonic() < deadline
            c.poll(0.1)
    group = f"g-{uuid.uuid4().hex[:6]}"
    with consumer(bs, **{"auto.offset.reset": "none", "group.id": group}) as c:
        c.assign([TopicPartition(topic, 0)])
        m = c.poll(10)
        assert m is not None and isinstance(m.error(), OffsetOutOfRange)
        c.seek(TopicPartition(topic, 0, 3))
        assert read(c, 1)[0].offset() == 3


def test_unknown_config_key_is_named() -> None:
    with pytest.raises(InvalidArgument, match=r"sesion\.timeout\.ms"):
        Consumer({"bootstrap.servers": "127.0.0.1:9", "sesion.timeout.ms": 6000})


def test_close_leaves_no_thread_and_later_calls_raise(broker: Broker) -> None:
    topic = create_topic(broker.bootstrap_servers, 1)
    before = set(threading.enumerate())
    c = consumer(broker.bootstrap_servers, **{"group.id": f"g-{uuid.uuid4().hex[:6]}"})
    c.subscribe([topic])
    c.poll(1.0)
    c.close()
    c.close()  # idempotent
    assert set(threading.enumerate()) - before == set()
    with pytest.raises(ClientClosed):
        c.poll(0)
    with pytest.raises(RuntimeError):
        c.assignment()
