"""kgroup's assignors inside kafka-python: the plug-in contract with kafka-python's own
objects, and a real consumer group on the tansu broker."""

from __future__ import annotations

import threading
import time

import pytest
from kafka.coordinator.assignors.abstract import RebalanceProtocol as KafkaRebalanceProtocol
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from bench.kafka_python_peer import cluster, member, partitions
from kgroup.adapters.kafka_python_assignors import (
    CooperativeStickyAssignor,
    RangePartitionAssignor,
    RoundRobinPartitionAssignor,
    StickyPartitionAssignor,
)
from kgroup.assignors import Assignment
from kgroup.assignors.consumer_protocol import decode_subscription, encode_assignment


def join(assignors: dict[str, object], topics: list[str]) -> list:
    """JoinGroup members as the coordinator returns them: each member's metadata bytes, then
    decoded by kafka-python the way its leader does."""
    return [member(m, bytes(a.metadata(set(topics)).encode())) for m, a in assignors.items()]


def test_names_and_protocols_match_kafka():
    assert [c.name for c in (RangePartitionAssignor, RoundRobinPartitionAssignor)] == [
        "range",
        "roundrobin",
    ]
    assert StickyPartitionAssignor.name == "sticky"
    assert CooperativeStickyAssignor().supported_protocols() == [
        KafkaRebalanceProtocol.COOPERATIVE,
        KafkaRebalanceProtocol.EAGER,
    ]
    assert RangePartitionAssignor().supported_protocols() == [KafkaRebalanceProtocol.EAGER]


def test_subscription_bytes_are_javas():
    a = CooperativeStickyAssignor(client_rack="rack-a")
    raw = bytes(a.metadata({"topic1", "topic0"}).encode())
    sub = decode_subscription(raw)
    assert (sub.topics, sub.generation_id, sub.rack_id) == (("topic0", "topic1"), -1, "rack-a")
    assert sub.user_data == b"\xff\xff\xff\xff"  # Java's generation -1 before any assignment
    assert raw[:2] == b"\x00\x03"


@pytest.mark.parametrize(
    "kind",
    [RangePartitionAssignor, RoundRobinPartitionAssignor, CooperativeStickyAssignor],
)
def test_leader_assigns_like_kgroup_and_writes_javas_bytes(kind):
    topics = {"a": 5, "b": 3}
    group = {f"m{i}": kind() for i in range(3)}
    leader = group["m0"]
    out = leader.assign(cluster(topics), join(group, list(topics)))
    assert set(out) == set(group)
    seen = []
    for assignment in out.values():
        assert isinstance(assignment, ConsumerProtocolAssignment)
        parts = partitions(assignment)
        seen += parts
        # The bytes kafka-python sends equal kgroup's encoder, which equals Java's.
        assert bytes(assignment.encode()) == encode_assignment(Assignment(parts, user_data=None))
    assert sorted(seen) == sorted((t, p) for t, n in topics.items() for p in range(n))


def test_cooperative_rounds_through_kafka_python_objects():
    topics = {"t": 6}
    group = {"c0": CooperativeStickyAssignor(), "c1": CooperativeStickyAssignor()}
    leader = group["c0"]
    out = leader.assign(cluster(topics), join(group, ["t"]))
    for m, a in out.items():
        group[m].on_assignment(a, 1)
    group["c2"] = CooperativeStickyAssignor()
    # c2 joins: the owners keep what they keep, nothing moves straight to c2 this round.
    before = {m: set(out[m].partitions()) for m in ("c0", "c1")}
    out = leader.assign(cluster(topics), join(group, ["t"]))
    assert out["c2"].partitions() == []
    for m in ("c0", "c1"):
        assert set(out[m].partitions()) <= before[m]
        assert len(out[m].partitions()) == 2
        group[m].on_assignment(out[m], 2)
    group["c2"].on_assignment(out["c2"], 2)
    # Follow-up round: the revoked partitions go to c2.
    out = leader.assign(cluster(topics), join(group, ["t"]))
    assert len(out["c2"].partitions()) == 2
    assert sorted(tp for a in out.values() for tp in a.partitions()) == sorted(
        tp for ps in before.values() for tp in ps
    )


def test_eager_sticky_sends_previous_assignment_in_user_data():
    a = StickyPartitionAssignor()
    assert a.metadata({"t"}).user_data is None  # null before the first assignment, as in Java
    a.on_assignment(
        ConsumerProtocolAssignment(version=3, assigned_partitions=[("t", [0, 1])], user_data=None),
        3,
    )
    raw = bytes(a.metadata({"t"}).encode())
    assert (
        decode_subscription(raw).user_data.hex() == "0000000100017400000002000000000000000100000003"
    )


def _consume(consumer, stop: threading.Event) -> None:
    while not stop.is_set():
        consumer.poll(timeout_ms=50)


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("peer", ["tansu", "kafka"])
def test_real_consumer_group_on_another_broker(request, peer):
    from kafka import KafkaAdminClient, KafkaConsumer
    from kafka.admin import NewTopic

    server = request.getfixturevalue(peer)
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
    admin.create_topics([NewTopic("kgroup-assign", 6, 1)])
    admin.close()

    def consumer():
        return KafkaConsumer(
            "kgroup-assign",
            bootstrap_servers=server.bootstrap,
            group_id="kgroup-assign-group",
            partition_assignment_strategy=[CooperativeStickyAssignor],
            session_timeout_ms=10000,
            heartbeat_interval_ms=300,
            max_poll_interval_ms=20000,
        )

    def wait_for(consumers, sizes, timeout=40.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = [{(tp.topic, tp.partition) for tp in c.assignment()} for c in consumers]
            if sorted(len(g) for g in got) == sizes and len(set().union(*got)) == 6:
                return got
            time.sleep(0.1)
        raise AssertionError(f"no stable assignment: {got}")

    stop = threading.Event()
    consumers = [consumer(), consumer()]
    threads = [threading.Thread(target=_consume, args=(c, stop), daemon=True) for c in consumers]
    try:
        for t in threads:
            t.start()
        first = wait_for(consumers, [3, 3])
        consumers.append(consumer())
        threads.append(threading.Thread(target=_consume, args=(consumers[-1], stop), daemon=True))
        threads[-1].start()
        second = wait_for(consumers, [2, 2, 2])
        # Sticky and cooperative: the first two members kept 2 of their 3 partitions each.
        assert second[0] <= first[0] and second[1] <= first[1]
    finally:
        stop.set()
        for t in threads:
            t.join(5)
        for c in consumers:
            c.close()
