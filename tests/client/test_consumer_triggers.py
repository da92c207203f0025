"""What makes a kgroup Consumer rejoin or leave its group, as Java's does: partitions added to
a subscribed topic, a new topic matching a subscribed pattern, an application that stops
calling poll() for longer than max.poll.interval.ms (the member leaves; its next poll() joins
again), and a second static member with the same group.instance.id fencing the first."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from support.consumers import create_topic, wait_for

from kgroup import AdminClient, Consumer, NewPartitions, NewTopic
from kgroup.broker import Broker
from kgroup.errors import FencedInstanceId

pytestmark = pytest.mark.network


def _consumer(broker: Broker, group: str, **extra: Any) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 300,
            "metadata.max.age.ms": 500,
            **extra,
        }
    )


def _poll_until(c: Consumer, condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {c.assignment()}")
        c.poll(0.1)


def test_the_group_rejoins_when_a_subscribed_topic_gains_partitions(broker: Broker) -> None:
    topic, group = create_topic(broker.bootstrap_servers, 4), f"grow-{uuid.uuid4().hex[:6]}"
    c = _consumer(broker, group)
    try:
        c.subscribe([topic])
        _poll_until(c, lambda: len(c.assignment()) == 4, 20, "4 partitions")
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        admin.create_partitions([NewPartitions(topic, 6)])[topic].result(30)
        admin.close()
        _poll_until(c, lambda: len(c.assignment()) == 6, 20, "6 partitions")
    finally:
        c.close()


def test_a_new_topic_matching_the_pattern_is_assigned(broker: Broker) -> None:
    prefix = f"pat{uuid.uuid4().hex[:6]}"
    first = f"{prefix}-a"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic(first, 2, 1)])[first].result(30)
    c = _consumer(broker, f"pattern-{prefix}")
    try:
        c.subscribe([f"^{prefix}-.*"])
        _poll_until(c, lambda: {tp.topic for tp in c.assignment()} == {first}, 20, "the first")
        second = f"{prefix}-b"
        admin.create_topics([NewTopic(second, 2, 1)])[second].result(30)
        _poll_until(
            c, lambda: {tp.topic for tp in c.assignment()} == {first, second}, 20, "both topics"
        )
        assert len(c.assignment()) == 4
    finally:
        c.close()
        admin.close()


def test_a_member_that_stops_polling_leaves_and_its_next_poll_rejoins(broker: Broker) -> None:
    topic, group = create_topic(broker.bootstrap_servers, 2), f"stall-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})

    def members() -> int:
        d = admin.describe_consumer_groups([group])[group].result(10)
        return len(d.members)

    c = _consumer(broker, group, **{"max.poll.interval.ms": 1500})
    try:
        c.subscribe([topic])
        _poll_until(c, lambda: len(c.assignment()) == 2, 20, "the assignment")
        assert members() == 1
        # The application stalls: the heartbeat thread leaves the group once
        # max.poll.interval.ms has passed without a poll(), as Java's consumer does.
        wait_for(lambda: members() == 0, 15, "the stalled member to leave")
        _poll_until(c, lambda: len(c.assignment()) == 2 and members() == 1, 20, "a rejoin")
    finally:
        c.close()
        admin.close()


def test_a_second_static_member_with_the_same_instance_id_fences_the_first(
    broker: Broker,
) -> None:
    topic, group = create_topic(broker.bootstrap_servers, 2), f"fence-{uuid.uuid4().hex[:6]}"
    first = _consumer(broker, group, **{"group.instance.id": "i1"})
    second = _consumer(broker, group, **{"group.instance.id": "i1"})
    try:
        first.subscribe([topic])
        _poll_until(first, lambda: len(first.assignment()) == 2, 20, "the first's assignment")
        second.subscribe([topic])
        _poll_until(second, lambda: len(second.assignment()) == 2, 20, "the second's assignment")
        # KIP-345: the coordinator replaced the first member; its next heartbeat or commit is
        # answered FENCED_INSTANCE_ID, which is fatal: poll() raises it.
        with pytest.raises(FencedInstanceId):
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                first.poll(0.1)
    finally:
        second.close()
        first.close()


def test_enable_partition_eof_reports_each_end_once_after_the_records(broker: Broker) -> None:
    # librdkafka's _PARTITION_EOF: a Message whose error() says the partition's end was
    # reached, after the partition's last record, once per end reached.
    from support.consumers import produce

    from kgroup import TopicPartition
    from kgroup.client.types import PartitionEOF

    topic = create_topic(broker.bootstrap_servers, 1)
    produce(broker.bootstrap_servers, topic, [b"a", b"b"], 1)
    c = _consumer(broker, f"eof-{uuid.uuid4().hex[:6]}", **{"enable.partition.eof": True})
    seen: list[Any] = []
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(seen) < 3:
            m = c.poll(0.2)
            if m is not None:
                seen.append(m)
        more = [m for m in (c.poll(0.2) for _ in range(5)) if m is not None]
        produce(broker.bootstrap_servers, topic, [b"c"], 1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(more) < 2:
            m = c.poll(0.2)
            if m is not None:
                more.append(m)
    finally:
        c.close()
    assert [m.value() for m in seen[:2]] == [b"a", b"b"]
    assert isinstance(seen[2].error(), PartitionEOF) and seen[2].offset() == 2
    assert more[0].value() == b"c"
    assert isinstance(more[1].error(), PartitionEOF) and more[1].offset() == 3
