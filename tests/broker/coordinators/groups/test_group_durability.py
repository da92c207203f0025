"""Groups survive the broker: killed with kill -9 while members commit, then started again on
the same data, the broker replays ``__consumer_offsets`` and every acknowledged commit, every
group, its generation and its members are back. The broker runs as a process of its own
(``kgroup broker``)."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import AdminClient
from support.consumers import CkMember, create_topic, produce, wait_for
from support.groups import commit, fetch_offsets, join_body
from support.kgroup_broker import BrokerProcess, Wire, run_broker

from kgroup import errors, protocol
from kgroup.group import Append, Coordinator, Respond, partition_for
from kgroup.log import Log
from kgroup.protocol import ApiKey

pytestmark = pytest.mark.network

CONFIG = {"group.initial.rebalance.delay.ms": 0}
#: TRANSIENT are what librdkafka reports while its broker is down; nothing else may appear.
TRANSIENT = ("_TRANSPORT", "_ALL_BROKERS_DOWN", "Connection refused", "Disconnected")


def _offsets_after_restart(bootstrap: str, group: str) -> dict[tuple[str, int], tuple[int, str]]:
    """A group's offsets, asked until the broker has loaded its partition of
    __consumer_offsets (COORDINATOR_LOAD_IN_PROGRESS meanwhile, as Kafka answers)."""
    deadline = time.monotonic() + 30
    with Wire(bootstrap) as w:
        while True:
            w.request(ApiKey.FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
            error, offsets = fetch_offsets(w, group)
            if error == 0:
                return offsets
            assert error == errors.CoordinatorLoadInProgress.code
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_every_acknowledged_commit_survives_kill9(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", CONFIG).start()
    try:
        topic = create_topic(broker.bootstrap, 4)
        groups = [f"dur-{i}-{uuid.uuid4().hex[:6]}" for i in range(8)]
        acked = dict.fromkeys(groups, 0)
        sent = dict.fromkeys(groups, 0)
        stop = threading.Event()
        started = threading.Barrier(len(groups) + 1)

        def committer(group: str) -> None:
            # A simple group's commits (generation -1), each one waiting for its answer.
            with Wire(broker.bootstrap) as w:
                w.request(ApiKey.FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
                started.wait()
                try:
                    while not stop.is_set():
                        sent[group] += 1
                        n = sent[group]
                        assert commit(w, group, {(topic, n % 4): n}, metadata=f"m{n}") == {
                            (topic, n % 4): 0
                        }
                        acked[group] = n
                except (OSError, EOFError):
                    pass  # the broker was killed

        threads = [threading.Thread(target=committer, args=(g,), daemon=True) for g in groups]
        for t in threads:
            t.start()
        started.wait()
        began = time.monotonic()
        time.sleep(1.5)
        broker.kill9()
        elapsed = time.monotonic() - began
        stop.set()
        for t in threads:
            t.join(10)
        total = sum(acked.values())
        print(f"\n{total} commits acknowledged in {elapsed:.2f} s ({total / elapsed:.0f}/s)")
        assert min(acked.values()) > 10

        broker.start()
        for group in groups:
            offsets = _offsets_after_restart(broker.bootstrap, group)
            a, s = acked[group], sent[group]
            for p in range(4):
                # The last acknowledged commit of each partition, or the one in flight at the
                # kill (never acknowledged, so it may or may not have reached the disk).
                allowed = {max(n for n in range(1, a + 1) if n % 4 == p)}
                if s > a and s % 4 == p:
                    allowed.add(s)
                offset, metadata = offsets[(topic, p)]
                assert offset in allowed, (group, p, offset, allowed)
                assert metadata == f"m{offset}"
    finally:
        broker.stop()


def test_a_group_and_its_offsets_are_back_after_kill9(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", CONFIG).start()
    bootstrap = broker.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        topic = create_topic(bootstrap, 4)
        group = f"back-{uuid.uuid4().hex[:6]}"
        produce(bootstrap, topic, [f"a{i}".encode() for i in range(100)], partitions=4)
        seen: list[bytes] = []
        member = CkMember(bootstrap, topic, group, seen)
        member.start()
        try:
            wait_for(lambda: len(seen) == 100 and len(member.assigned) == 4, 30, "100 records")
            [before] = admin.describe_consumer_groups([group])[group].result(30).members

            broker.kill9()
            broker.start()

            # The member carries on in the generation it had: same member id, same assignment,
            # no new assignment (on_assign) and no record twice.
            produce(bootstrap, topic, [f"b{i}".encode() for i in range(100)], partitions=4)
            wait_for(lambda: len(seen) == 200, 30, "the next 100 records", lambda: len(seen))
            d = admin.describe_consumer_groups([group])[group].result(30)
            [after] = d.members
            assert d.state == ConsumerGroupState.STABLE
            assert (after.member_id, after.host) == (before.member_id, before.host)
            assert after.assignment.topic_partitions == before.assignment.topic_partitions
            assert member.rebalances == 1
            assert len(set(seen)) == 200
        finally:
            member.stop.set()
            member.join(30)
        assert [e for e in member.errors if not any(t in e for t in TRANSIENT)] == []

        # The member has left; kill -9 again: a new consumer of the group resumes from its
        # committed offsets, and reads exactly what came after them.
        broker.kill9()
        broker.start()
        produce(bootstrap, topic, [f"c{i}".encode() for i in range(40)], partitions=4)
        resumed: list[bytes] = []
        again = CkMember(bootstrap, topic, group, resumed)
        again.start()
        try:
            wait_for(lambda: len(resumed) >= 40, 30, "the last 40 records", lambda: len(resumed))
            time.sleep(0.5)  # anything consumed twice would arrive now
        finally:
            again.stop.set()
            again.join(30)
        assert sorted(resumed) == sorted(f"c{i}".encode() for i in range(40))
        assert again.errors == []
    finally:
        broker.stop()


def _commit_batches(group: str, topic: str, n: int) -> list[bytes]:
    """The record batches a coordinator writes for ``n`` commits of a simple group (commit i
    puts offset i on partition i % 4), made by a coordinator of our own."""
    coordinator = Coordinator({"offsets.topic.num.partitions": 50})
    batches = []
    for i in range(1, n + 1):
        body = {
            "group_id": group,
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "group_instance_id": None,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {"partition_index": i % 4, "committed_offset": i, "committed_metadata": ""}
                    ],
                }
            ],
        }
        frame = protocol.encode_request(ApiKey.OFFSET_COMMIT, 7, i, "loader", body)
        [append] = coordinator.handle(i, i, protocol.decode_request(frame[4:]))
        assert isinstance(append, Append)
        batches.append(append.records)
        [answer] = coordinator.appended(i, append.token, 0)
        assert isinstance(answer, Respond)
    return batches


def test_a_long_offsets_log_loads_in_chunks_answering_load_in_progress(tmp_path: Path) -> None:
    # 20,000 batches in one partition of __consumer_offsets, over many segments, read back one
    # batch per read (offsets.load.buffer.size=1): the load takes long enough to be seen.
    group, n = f"long-{uuid.uuid4().hex[:6]}", 20_000
    with run_broker(tmp_path, CONFIG) as b, Wire(b.bootstrap_servers) as w:
        topic = create_topic(b.bootstrap_servers, 4)
        w.request(ApiKey.FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
    folder = tmp_path / f"__consumer_offsets-{partition_for(group)}"
    lg = Log(folder, {"cleanup.policy": ["compact"], "segment.bytes": 64 * 1024})
    for batch in _commit_batches(group, topic, n):
        lg.append(batch, int(time.time() * 1000))
    lg.close()
    assert len(list(folder.glob("*.log"))) > 10

    with run_broker(tmp_path, CONFIG | {"offsets.load.buffer.size": 1}) as b:
        with Wire(b.bootstrap_servers) as w:
            w.request(ApiKey.FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
            assert fetch_offsets(w, group)[0] == errors.CoordinatorLoadInProgress.code
            r = w.request(ApiKey.JOIN_GROUP, 5, join_body(group, topics=[topic]))
            assert r.body.error_code == errors.CoordinatorLoadInProgress.code
        offsets = _offsets_after_restart(b.bootstrap_servers, group)
    assert offsets == {
        (topic, p): (max(i for i in range(1, n + 1) if i % 4 == p), "") for p in range(4)
    }


@pytest.mark.parametrize("flush_messages", [None, 1])
def test_a_commit_is_answered_once_written_and_fsynced_first_under_flush_messages_1(
    flush_messages: int | None,
) -> None:
    """Kafka acknowledges a commit once its records are in the log (with one replica, no
    fsync): it survives a kill -9 of the broker (the kill tests above), not a power loss. The
    log flush settings decide the fsync: log.flush.interval.messages=1 makes every commit wait
    for its own (shared) fsync."""
    config = dict(CONFIG)
    if flush_messages is not None:
        config["log.flush.interval.messages"] = flush_messages
    with run_broker(None, config) as broker, Wire(broker.bootstrap_servers) as w:
        topic = create_topic(broker.bootstrap_servers, 1)
        group = f"flush-{uuid.uuid4().hex[:8]}"
        w.request(ApiKey.FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
        assert broker.state is not None
        offsets = broker.state.topics.by_name["__consumer_offsets"]
        lg = offsets.partitions[partition_for(group)].log
        for i in range(5):
            assert commit(w, group, {(topic, 0): i + 1}) == {(topic, 0): 0}
            synced = lg.recovery_point >= lg.log_end_offset
            assert synced == (flush_messages == 1), (i, lg.recovery_point, lg.log_end_offset)
