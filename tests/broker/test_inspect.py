"""The broker's inspection and group actions (``kgroup.broker.inspect``) with real clients on an
embedded broker: what they report is what the clients did, in Kafka's terms.

- Records produced by confluent-kafka and aiokafka (idempotent) and kafka-python (not) read
  back exactly: offsets, keys, values, headers, timestamps, producer id, epoch and sequences.
- Transactions (confluent-kafka): aborted records and those above the last stable offset are
  absent with ``committed_only`` as from a read_committed consumer; an open transaction is
  listed, Ongoing, with its partition, and its producer shows its first offset.
- A classic group of two confluent-kafka consumers: Stable, its generation, the members with
  their decoded subscriptions and assignments, their committed offsets.
- A consumer-protocol group (KIP-848, ``group.protocol=consumer``): its epochs and assignment.
- expire_member (on a confluent-kafka or a kafka-python member): in a classic group the other
  member takes every partition in the next generation, and the expired member's client,
  answered UNKNOWN_MEMBER_ID at its next heartbeat (Kafka's session expiry,
  GroupCoordinatorTest.testSessionTimeout), joins again as a new member; in a consumer group
  the member is fenced and joins again at a new epoch.

The broker runs in a thread: every inspection runs on its event loop (:func:`on_loop`).
"""

from __future__ import annotations

import asyncio
import pickle
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from support.consumer_protocol import FAST
from support.kgroup_broker import run_broker

from kgroup import protocol
from kgroup.broker import Broker, inspect

pytestmark = pytest.mark.network

ck = pytest.importorskip("confluent_kafka")
admin_module = pytest.importorskip("confluent_kafka.admin")

T = TypeVar("T")

TOPIC_PARTITIONS = 4
HEARTBEAT_API_KEY = 12


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("inspect"), FAST) as b:
        yield b


def on_loop(broker: Broker, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(broker.state, *args, **kwargs)`` run on the broker's event loop; its answer."""
    assert broker.state is not None and broker._loop is not None

    async def call() -> T:
        assert broker.state is not None
        return fn(broker.state, *args, **kwargs)

    return asyncio.run_coroutine_threadsafe(call(), broker._loop).result(10)


def new_topic(broker: Broker, partitions: int = TOPIC_PARTITIONS) -> str:
    name = f"inspect-{uuid.uuid4().hex[:8]}"
    admin = admin_module.AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([admin_module.NewTopic(name, partitions, 1)])[name].result(10)
    return name


def wait_until(
    condition: Callable[[], bool],
    what: str,
    *,
    timeout: float = 20.0,
    poll: list[Any] | None = None,
    state: Callable[[], object] = str,
) -> None:
    """Wait until ``condition()``, polling the consumers of ``poll`` meanwhile (their rebalance
    callbacks run in poll)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {state()}")
        for c in poll or []:
            c.poll(0.02)
        if not poll:
            time.sleep(0.05)


# -- records ---------------------------------------------------------------------------------


def test_records_read_back_exactly(broker: Broker) -> None:
    topic = new_topic(broker, 3)
    bootstrap = broker.bootstrap_servers
    sent: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]], int]] = []
    offsets: list[int] = []

    def delivered(err: Any, msg: Any) -> None:
        assert err is None, err
        offsets.append(msg.offset())

    p = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    base_ts = 1_700_000_000_000
    for i in range(5):
        key = None if i == 3 else f"k{i}".encode()
        value = None if i == 4 else f"v{i}".encode()
        headers = [("h", f"x{i}".encode()), ("empty", None)] if i % 2 == 0 else []
        p.produce(
            topic,
            value=value,
            key=key,
            partition=0,
            headers=headers or None,
            timestamp=base_ts + i,
            on_delivery=delivered,
        )
        sent.append((0, key, value, headers, base_ts + i))
    assert p.flush(10) == 0

    from kafka import KafkaProducer

    kp = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False)
    kp.send(
        topic,
        value=b"plain",
        key=b"kp",
        partition=1,
        headers=[("a", b"1")],
        timestamp_ms=base_ts + 10,
    ).get(10)
    kp.close()

    from aiokafka import AIOKafkaProducer

    async def aio() -> None:
        ap = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
        await ap.start()
        try:
            for i in range(2):
                await ap.send_and_wait(
                    topic,
                    f"a{i}".encode(),
                    partition=2,
                    headers=[("i", bytes([i]))],
                    timestamp_ms=base_ts + 20 + i,
                )
        finally:
            await ap.stop()

    asyncio.run(aio())

    got = on_loop(broker, inspect.records, topic)
    assert [(r.partition, r.offset) for r in got] == [(0, o) for o in range(5)] + [
        (1, 0),
        (2, 0),
        (2, 1),
    ]
    assert sorted(offsets) == list(range(5))
    for r, (partition, key, value, headers, ts) in zip(got[:5], sent, strict=True):
        assert (r.topic, r.partition, r.key, r.value, r.headers) == (
            topic,
            partition,
            key,
            value,
            headers,
        )
        assert (r.timestamp, r.timestamp_type) == (ts, 0)
        assert not r.transactional
    # The idempotent producer: one producer id, epoch 0, sequences from 0 (Kafka's
    # DefaultRecord: the batch's base sequence plus the offset delta).
    pids = {r.producer_id for r in got[:5]}
    assert len(pids) == 1 and pids.pop() >= 0
    assert [(r.producer_epoch, r.sequence) for r in got[:5]] == [(0, i) for i in range(5)]
    [producer] = on_loop(broker, inspect.producers, topic, 0)
    assert (producer.producer_id, producer.producer_epoch) == (got[0].producer_id, 0)
    assert (producer.last_sequence, producer.current_txn_start_offset) == (4, -1)
    # aiokafka, idempotent, one batch per send: a producer of its own, sequences 0 and 1.
    a0, a1 = got[6:]
    assert [(r.value, r.headers, r.timestamp) for r in (a0, a1)] == [
        (b"a0", [("i", b"\x00")], base_ts + 20),
        (b"a1", [("i", b"\x01")], base_ts + 21),
    ]
    assert a0.producer_id == a1.producer_id not in (-1, got[0].producer_id)
    assert [(r.producer_epoch, r.sequence) for r in (a0, a1)] == [(0, 0), (0, 1)]
    # kafka-python without idempotence: no producer, no sequence.
    last = got[5]
    assert (last.key, last.value, last.headers) == (b"kp", b"plain", [("a", b"1")])
    assert (last.producer_id, last.producer_epoch, last.sequence) == (-1, -1, -1)
    assert on_loop(broker, inspect.producers, topic, 1) == []

    assert on_loop(broker, inspect.records, topic, 1) == [last]
    assert pickle.loads(pickle.dumps(got)) == got
    with pytest.raises(Exception) as e:
        on_loop(broker, inspect.records, topic, 3)
    assert type(e.value).__name__ == "UnknownTopicOrPartition"


def transactional_producer(bootstrap: str, txn: str) -> Any:
    p = ck.Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": txn,
            "linger.ms": 5,
            "transaction.timeout.ms": 60_000,
        }
    )
    p.init_transactions(10)
    return p


def test_aborted_and_open_transactions(broker: Broker) -> None:
    topic = new_topic(broker, 1)
    bootstrap = broker.bootstrap_servers
    ended, open_id = f"txn-{uuid.uuid4().hex[:6]}", f"txn-{uuid.uuid4().hex[:6]}"
    a = transactional_producer(bootstrap, ended)
    a.begin_transaction()
    for v in (b"c0", b"c1", b"c2"):
        a.produce(topic, v, partition=0)
    a.commit_transaction(10)
    a.begin_transaction()
    for v in (b"a0", b"a1"):
        a.produce(topic, v, partition=0)
    a.flush(10)
    a.abort_transaction(10)
    b = transactional_producer(bootstrap, open_id)
    b.begin_transaction()
    b.produce(topic, b"open", partition=0)
    assert b.flush(10) == 0
    try:
        every = on_loop(broker, inspect.records, topic, 0)
        assert [r.value for r in every] == [b"c0", b"c1", b"c2", b"a0", b"a1", b"open"]
        assert all(r.transactional for r in every)
        # Offsets skip the markers: c0-c2 at 0-2, COMMIT at 3, a0-a1 at 4-5, ABORT at 6.
        assert [r.offset for r in every] == [0, 1, 2, 4, 5, 7]
        committed = on_loop(broker, inspect.records, topic, 0, committed_only=True)
        assert [r.value for r in committed] == [b"c0", b"c1", b"c2"]

        txns = {t.transactional_id: t for t in on_loop(broker, inspect.transactions)}
        t = txns[open_id]
        assert (t.state, t.partitions) == ("Ongoing", [(topic, 0)])
        assert (t.producer_id, t.producer_epoch) == (
            every[-1].producer_id,
            every[-1].producer_epoch,
        )
        assert t.timeout_ms == 60_000 and t.start_time_ms > 0
        assert txns[ended].state == "CompleteAbort"
        assert txns[ended].partitions == []
        producers = {p.producer_id: p for p in on_loop(broker, inspect.producers, topic, 0)}
        assert producers[t.producer_id].current_txn_start_offset == 7
        assert producers[every[0].producer_id].current_txn_start_offset == -1
    finally:
        b.abort_transaction(10)
    # Once aborted, the open transaction's record is left out too, and nothing holds the LSO.
    assert [r.value for r in on_loop(broker, inspect.records, topic, 0, committed_only=True)] == [
        b"c0",
        b"c1",
        b"c2",
    ]


# -- classic groups --------------------------------------------------------------------------


def classic_consumer(bootstrap: str, group: str, client_id: str, **extra: Any) -> Any:
    return ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "broker.address.family": "v4",
            "group.id": group,
            "client.id": client_id,
            "partition.assignment.strategy": "range",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 100,
            **extra,
        }
    )


def assigned(info: inspect.GroupInfo | None) -> list[tuple[str, list[int]]]:
    """Each member's client id and partitions, sorted by client id."""
    if info is None:
        return []
    return sorted(
        (m.client_id, sorted(p for ps in m.assignment.values() for p in ps)) for m in info.members
    )


def is_stable(info: inspect.GroupInfo | None, n: int) -> bool:
    """Whether the group is Stable with ``n`` members sharing every partition."""
    return (
        info is not None
        and info.state == "Stable"
        and len(info.members) == n
        and sorted(p for _, ps in assigned(info) for p in ps) == list(range(TOPIC_PARTITIONS))
    )


def stable_with(broker: Broker, group: str, n: int) -> Callable[[], bool]:
    return lambda: is_stable(on_loop(broker, inspect.group, group), n)


def test_classic_group_members_assignments_and_offsets(broker: Broker) -> None:
    topic = new_topic(broker)
    group = f"classic-{uuid.uuid4().hex[:6]}"
    bootstrap = broker.bootstrap_servers
    consumers = [classic_consumer(bootstrap, group, c) for c in ("a", "b")]
    try:
        for c in consumers:
            c.subscribe([topic])
        wait_until(
            stable_with(broker, group, 2),
            "a Stable group of two",
            poll=consumers,
            state=lambda: on_loop(broker, inspect.group, group),
        )
        info = on_loop(broker, inspect.group, group)
        assert info is not None
        assert (info.type, info.protocol_type, info.protocol) == ("classic", "consumer", "range")
        assert info.generation >= 1 and info.assignment_epoch == -1
        # range over 4 partitions: the first member (by member id) takes 0-1, the other 2-3.
        assert sorted(ps for _, ps in assigned(info)) == [[0, 1], [2, 3]]
        for m in info.members:
            assert m.subscription == [topic]
            assert m.client_host == "/127.0.0.1"
            assert m.group_instance_id is None and m.member_epoch == -1
            assert list(m.assignment) == [topic]
        # What each client was given is what the coordinator holds for it.
        wait_until(lambda: all(c.assignment() for c in consumers), "both assigned", poll=consumers)
        by_client = dict(assigned(info))
        for c, cid in zip(consumers, ("a", "b"), strict=True):
            assert sorted(tp.partition for tp in c.assignment()) == by_client[cid]
        assert group in on_loop(broker, inspect.groups)
        # Plain data: what a broker in another process sends over a pipe.
        assert pickle.loads(pickle.dumps(info)) == info

        consumers[0].commit(
            offsets=[ck.TopicPartition(topic, 0, 5), ck.TopicPartition(topic, 1, 7)],
            asynchronous=False,
        )
        offsets = on_loop(broker, inspect.committed, group)
        assert offsets == {
            (topic, 0): inspect.Committed(offset=5, metadata="", leader_epoch=-1),
            (topic, 1): inspect.Committed(offset=7, metadata="", leader_epoch=-1),
        }
        assert on_loop(broker, inspect.committed, "no-such-group") == {}
        assert on_loop(broker, inspect.group, "no-such-group") is None
    finally:
        for c in consumers:
            c.close()


def expire_after_heartbeat(broker: Broker, group: str, member_id: str) -> Callable[[], bool]:
    """Expire ``member_id`` on the loop right after its next Heartbeat is answered: its client
    then hears of it at its following heartbeat, a heartbeat interval later, which leaves the
    other members that long to rebalance without it. Returns whether it happened."""
    state = broker.state
    assert state is not None
    host = state.groups
    done: list[BaseException | None] = []

    def handle_frame(frame: bytes, client_host: str) -> Any:
        answer = original(frame, client_host)
        if not done and int.from_bytes(frame[:2], "big") == HEARTBEAT_API_KEY:
            request = protocol.decode_request(frame)
            if request.body["member_id"] == member_id:
                del host.handle_frame  # type: ignore[method-assign]
                try:
                    inspect.expire_member(state, group, member_id)
                    done.append(None)
                except Exception as e:  # the member's session ended before: the test's to say
                    done.append(e)
        return answer

    def happened() -> bool:
        if done and done[0] is not None:
            raise AssertionError(f"expire_member failed: {done[0]!r}")
        return bool(done)

    original = host.handle_frame
    host.handle_frame = handle_frame  # type: ignore[method-assign]
    return happened


class GroupClient:
    """GroupClient is a classic group member of confluent-kafka (``kind="confluent"``: the
    test's loop polls it) or kafka-python (``kind="kafka-python"``: polled in a thread of its
    own, as a blocking join of one member must not keep another from rejoining), subscribed to
    ``topic`` with the range assignor."""

    def __init__(
        self,
        kind: str,
        bootstrap: str,
        group: str,
        topic: str,
        client_id: str,
        session_ms: int,
        heartbeat_ms: int,
    ) -> None:
        self.kind = kind
        self._assigned: list[int] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if kind == "confluent":
            self.consumer: Any = classic_consumer(
                bootstrap,
                group,
                client_id,
                **{"session.timeout.ms": session_ms, "heartbeat.interval.ms": heartbeat_ms},
            )
            self.consumer.subscribe([topic])
            return
        from kafka import KafkaConsumer
        from kafka.coordinator.assignors.range import RangePartitionAssignor

        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=client_id,
            partition_assignment_strategy=[RangePartitionAssignor],
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=session_ms,
            heartbeat_interval_ms=heartbeat_ms,
        )
        # The topic's metadata first: a leader that joins without it assigns nothing and
        # joins again when it comes, which kafka-python 3.0 does not always follow with
        # heartbeats.
        assert self.consumer.partitions_for_topic(topic)
        self.consumer.subscribe([topic])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.consumer.poll(timeout_ms=50)
            self._assigned = sorted(tp.partition for tp in self.consumer.assignment())

    def poll(self, timeout: float) -> None:
        if self._thread is None:
            self.consumer.poll(timeout)
        else:
            time.sleep(timeout)

    def partitions(self) -> list[int]:
        if self._thread is None:
            return sorted(tp.partition for tp in self.consumer.assignment())
        return self._assigned

    def close(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(30)
        self.consumer.close()


@pytest.mark.parametrize("kind", ["confluent", "kafka-python"])
def test_expire_member_in_a_classic_group(broker: Broker, kind: str) -> None:
    topic = new_topic(broker)
    group = f"expire-{uuid.uuid4().hex[:6]}"
    bootstrap = broker.bootstrap_servers
    # The other member is librdkafka's whatever the expired one's client: kafka-python 3.0's
    # member was seen to stall (no heartbeat, no rejoin) when a heartbeat's
    # REBALANCE_IN_PROGRESS crossed its own leader SyncGroup, whatever the broker.
    other = GroupClient("confluent", bootstrap, group, topic, "other", 6000, 100)
    # The expired member heartbeats every 2 s: the other one rebalances without it first.
    victim = GroupClient(kind, bootstrap, group, topic, "victim", 10_000, 2000)
    consumers = [other, victim]
    try:
        wait_until(
            stable_with(broker, group, 2),
            "a Stable group of two",
            poll=consumers,
            state=lambda: on_loop(broker, inspect.group, group),
        )
        before = on_loop(broker, inspect.group, group)
        assert before is not None
        [old_id] = [m.member_id for m in before.members if m.client_id == "victim"]

        expired = expire_after_heartbeat(broker, group, old_id)
        wait_until(expired, "the victim's heartbeat", poll=consumers)
        after = on_loop(broker, inspect.group, group)
        assert after is not None and old_id not in [m.member_id for m in after.members]
        assert "other" in [m.client_id for m in after.members]

        # The other member takes every partition in the next generation. Checked with
        # confluent-kafka only: kafka-python's expired member was seen to hear of its expiry
        # at once now and then (not a heartbeat interval later) and to join again within the
        # same rebalance, which then never has the other member alone.
        if kind != "confluent":
            taken = before
        else:
            wait_until(
                lambda: (
                    assigned(on_loop(broker, inspect.group, group)) == [("other", [0, 1, 2, 3])]
                    and other.partitions() == [0, 1, 2, 3]
                ),
                "the other member holding everything",
                timeout=10,
                poll=consumers,
                state=lambda: (on_loop(broker, inspect.group, group), other.partitions()),
            )
            taken = on_loop(broker, inspect.group, group)
            assert taken is not None and taken.generation > before.generation

        # The victim's client hears UNKNOWN_MEMBER_ID, joins again as a new member, and the
        # partitions are split again.
        def rejoined() -> bool:
            info = on_loop(broker, inspect.group, group)
            return (
                is_stable(info, 2)
                and info is not None
                and any(m.client_id == "victim" and m.member_id != old_id for m in info.members)
            )

        wait_until(
            rejoined,
            "the victim back as a new member",
            timeout=20,
            poll=consumers,
            state=lambda: on_loop(broker, inspect.group, group),
        )
        final = on_loop(broker, inspect.group, group)
        assert final is not None and final.generation > taken.generation
        wait_until(
            lambda: len(victim.partitions()) == 2,
            "the victim's new assignment",
            poll=consumers,
            state=victim.partitions,
        )
    finally:
        for c in consumers:
            c.close()


def test_expire_member_errors(broker: Broker) -> None:
    with pytest.raises(Exception) as e:
        on_loop(broker, inspect.expire_member, "no-such-group")
    assert type(e.value).__name__ == "GroupIdNotFound"


# -- consumer groups (KIP-848) ---------------------------------------------------------------


def test_consumer_protocol_group_and_expiry(broker: Broker) -> None:
    topic = new_topic(broker)
    group = f"kip848-{uuid.uuid4().hex[:6]}"
    c = ck.Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "broker.address.family": "v4",
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": "modern",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        c.subscribe([topic])
        wait_until(
            stable_with(broker, group, 1),
            "a Stable consumer group",
            poll=[c],
            state=lambda: on_loop(broker, inspect.group, group),
        )
        info = on_loop(broker, inspect.group, group)
        assert info is not None
        assert (info.type, info.protocol_type, info.protocol) == ("consumer", "consumer", "uniform")
        assert info.generation >= 1 and info.assignment_epoch == info.generation
        [m] = info.members
        assert (m.client_id, m.client_host, m.subscription) == ("modern", "/127.0.0.1", [topic])
        assert m.member_epoch == info.generation
        assert m.assignment == m.target_assignment == {topic: [0, 1, 2, 3]}

        # Fenced: its next heartbeat is answered UNKNOWN_MEMBER_ID and it joins again (KIP-848:
        # the same member id at epoch 0), at a higher epoch.
        on_loop(broker, inspect.expire_member, group, m.member_id)
        fenced = on_loop(broker, inspect.group, group)
        assert fenced is not None and fenced.members == []
        assert fenced.generation == info.generation + 1

        def back() -> bool:
            now = on_loop(broker, inspect.group, group)
            return (
                is_stable(now, 1)
                and now is not None
                and now.members[0].member_epoch > info.generation
            )

        wait_until(
            back, "the member back", poll=[c], state=lambda: on_loop(broker, inspect.group, group)
        )
    finally:
        c.close()
