"""confluent-kafka's ShareConsumer (librdkafka's share consumer, KIP-932) against kgroup's
broker: it joins the share group with ShareGroupHeartbeat, is assigned the partition once its
share state is initialized, fetches with ShareFetch and acknowledges, as it does against Kafka
4.2+ (share groups on by default). librdkafka's own share consumer tests (0171, passing against
kgroup) cover more; these pin the path through the installed client."""

from __future__ import annotations

import time
from typing import Any

import pytest
from support.kgroup_broker import Wire, run_broker
from support.share_wire import create, produce, set_group_config

ck = pytest.importorskip("confluent_kafka")
if not hasattr(ck, "ShareConsumer"):
    pytest.skip("this confluent-kafka has no ShareConsumer", allow_module_level=True)


#: FAST: members heartbeat every 500 ms, so the partition (assigned one heartbeat after the
#: join, once its share state is initialized) comes soon.
FAST = {"group.share.min.heartbeat.interval.ms": 500, "group.share.heartbeat.interval.ms": 500}


def consumer(bootstrap: str, **conf: Any) -> Any:
    return ck.ShareConsumer(
        {"bootstrap.servers": bootstrap, "group.id": "g", "socket.timeout.ms": 5000, **conf}
    )


def poll_until(c: Any, want: int, seconds: float = 20) -> list[Any]:
    got: list[Any] = []
    deadline = time.monotonic() + seconds
    while len(got) < want and time.monotonic() < deadline:
        for m in c.poll(0.5):
            assert m.error() is None, m.error()
            got.append(m)
    return got


def test_share_consumer_receives_every_record_once() -> None:
    with run_broker(config=FAST) as b, Wire(b.bootstrap_servers) as w:
        create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "earliest")
        produce(w, "t", [b"v%d" % i for i in range(20)])
        c = consumer(b.bootstrap_servers)
        try:
            c.subscribe(["t"])
            got = poll_until(c, 20)
            assert sorted(m.offset() for m in got) == list(range(20))
            assert {m.value() for m in got} == {b"v%d" % i for i in range(20)}
            assert {m.delivery_count() for m in got} == {1}
            c.commit_sync(10)
        finally:
            c.close()


def test_released_record_is_delivered_again_with_its_count() -> None:
    # Kafka's SharePartition: a RELEASE makes the record available again; its next delivery
    # counts 2.
    with run_broker(config=FAST) as b, Wire(b.bootstrap_servers) as w:
        create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "earliest")
        produce(w, "t", [b"a", b"b"])
        c = consumer(b.bootstrap_servers, **{"share.acknowledgement.mode": "explicit"})
        try:
            c.subscribe(["t"])
            first = poll_until(c, 2)
            assert [m.offset() for m in first] == [0, 1]
            c.acknowledge(first[0], ck.AcknowledgeType.ACCEPT)
            c.acknowledge(first[1], ck.AcknowledgeType.RELEASE)
            c.commit_sync(10)
            again = poll_until(c, 1)
            assert [(m.offset(), m.delivery_count()) for m in again] == [(1, 2)]
            c.acknowledge(again[0], ck.AcknowledgeType.ACCEPT)
            c.commit_sync(10)
        finally:
            c.close()
