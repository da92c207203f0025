"""kgroup's Consumer with ``group.protocol=consumer`` (KIP-848, kgroup.client.consumer_membership)
against kgroup's broker: one member takes every partition; two split them (``uniform``) without a
partition owned by both at once and consume every record once, committing after each; a member that
closes gives its partitions back and its commits reach the next member; a kgroup member and a
confluent-kafka member share a group; the members carry on after the broker is killed -9 and
restarted; a fatal heartbeat error (UNSUPPORTED_ASSIGNOR) is raised from poll(). The same client
against Apache Kafka 4.4 (tests/support/apache_kafka.py) when its jars are at hand. On kgroup's
broker and Kafka 4.4 both (``peer``): a static member restarting within its session gets its
partitions back; a commit with a stale member epoch is sent again after the next heartbeat; a ``^``
pattern is resolved by the broker and follows new topics, and one the broker cannot compile is
raised from poll().

The broker's consumer-protocol timings are lowered (support.consumer_protocol.FAST),
so that members heartbeat every 100 ms."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pytest
from support.consumer_protocol import (
    FAST,
    PARTITIONS,
    Member,
    group_name,
    poll_all,
    quiet,
    split_then_take_back,
    values,
)
from support.consumers import create_topic, produce
from support.kgroup_broker import BrokerProcess, run_broker

from kgroup import AdminClient, Consumer, NewTopic
from kgroup.broker import Broker
from kgroup.client.consumer_membership import combine_patterns, new_member_id
from kgroup.errors import (
    InvalidArgument,
    InvalidRegularExpression,
    UnsupportedAssignor,
    UnsupportedVersion,
)

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("kip848-client"), FAST) as b:
        yield b


class Peer(NamedTuple):
    name: str  # "kgroup" or "kafka"
    bootstrap: str


@pytest.fixture(params=["kgroup", pytest.param("kafka", marks=pytest.mark.slow)])
def peer(request: pytest.FixtureRequest) -> Peer:
    """kgroup's broker, then Apache Kafka 4.4."""
    if request.param == "kafka":
        return Peer("kafka", request.getfixturevalue("kafka"))
    return Peer("kgroup", request.getfixturevalue("broker").bootstrap_servers)


# -- without a broker --------------------------------------------------------------------------


def test_member_id_is_a_uuid_in_kafkas_base64url_form() -> None:
    ids = {new_member_id() for _ in range(100)}
    assert len(ids) == 100
    for i in ids:
        assert len(i) == 22 and "=" not in i and "+" not in i and "/" not in i


@pytest.mark.parametrize(
    ("key", "instead"),
    [
        ("session.timeout.ms", "group.consumer.session.timeout.ms"),
        ("heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms"),
        ("partition.assignment.strategy", "group.remote.assignor"),
    ],
)
def test_broker_side_settings_are_refused_as_confluent_kafka_does(key: str, instead: str) -> None:
    from confluent_kafka import Consumer as CkConsumer
    from confluent_kafka import KafkaException

    value = "range" if key == "partition.assignment.strategy" else 6000
    conf = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g", key: value}
    # confluent-kafka 2.16: _INVALID_ARG "... is not supported for group.protocol=consumer".
    with pytest.raises(KafkaException, match=r"not supported for `group\.protocol=consumer`"):
        CkConsumer({**conf, "group.protocol": "consumer"})
    with pytest.raises(InvalidArgument, match=rf"^{key} cannot be set .*{instead}"):
        Consumer({**conf, "group.protocol": "consumer"})
    Consumer(conf).close()  # classic keeps them


def test_every_broker_side_setting_given_is_named_as_java_does() -> None:
    conf = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500, "group.protocol": "consumer"}
    with pytest.raises(
        InvalidArgument, match=r"^session\.timeout\.ms, heartbeat\.interval\.ms cannot be set"
    ):
        Consumer({"bootstrap.servers": "127.0.0.1:1", "group.id": "g", **conf})


def test_patterns_go_to_the_broker_as_librdkafka_combines_them() -> None:
    # Several: librdkafka's rd_kafka_topic_partition_list_combine_regexes, each ^ entry as it
    # is, in parentheses, joined by |. One alone goes as it is, as Java sends its
    # SubscriptionPattern (librdkafka parenthesizes it: the same full match).
    assert combine_patterns(["^a.*", "t", "^b[0-9]"]) == "(^a.*)|(^b[0-9])"
    assert combine_patterns(["t", "^a.*"]) == "^a.*"
    assert combine_patterns(["t"]) is None


def test_group_protocol_defaults_to_classic() -> None:
    from kgroup.client.membership import Membership

    c = Consumer({"bootstrap.servers": "127.0.0.1:1", "group.id": "g"})
    try:
        assert isinstance(c._membership, Membership)
    finally:
        c.close()


# -- against kgroup's broker -------------------------------------------------------------------


def test_one_member_takes_every_partition_and_consumes_every_record(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = create_topic(bootstrap, PARTITIONS)
    sent = values("one", 200)
    produce(bootstrap, topic, sent, PARTITIONS)
    members: list[Member] = []
    a = Member(bootstrap, topic, group_name(), members)
    try:
        poll_all(members, lambda: len(a.seen) >= len(sent), "every record")
        assert a.owned == set(range(PARTITIONS))
        assert sorted(a.seen) == sorted(sent)
        meta = a.consumer.consumer_group_metadata()
        assert meta.generation_id > 0, "the member epoch is the generation"
        assert meta.member_id == a.consumer.memberid() and len(meta.member_id) == 22
    finally:
        a.close()


def test_committed_offsets_reach_the_next_member(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = create_topic(bootstrap, PARTITIONS)
    group = group_name()
    first = values("early", 100)
    produce(bootstrap, topic, first, PARTITIONS)
    members: list[Member] = []
    a = Member(bootstrap, topic, group, members)
    poll_all(members, lambda: len(a.seen) >= 100, "the first records")
    a.close()
    second = values("late", 100)
    produce(bootstrap, topic, second, PARTITIONS)
    b = Member(bootstrap, topic, group, members)
    try:
        poll_all(members, lambda: len(b.seen) >= 100, "the records after the commits")
        quiet([b])
        assert sorted(b.seen) == sorted(second), "b starts where a committed"
    finally:
        b.close()


def test_a_kgroup_and_a_confluent_member_split_a_group(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = create_topic(bootstrap, PARTITIONS)
    group = group_name()
    sent = values("mixed", 300)
    produce(bootstrap, topic, sent, PARTITIONS)
    members: list[Member] = []
    try:
        kg = Member(bootstrap, topic, group, members)
        ck = Member(bootstrap, topic, group, members, kind="confluent")
        poll_all(members, lambda: len(kg.owned) == 2 and len(ck.owned) == 2, "a 2/2 split")
        poll_all(members, lambda: len(kg.seen) + len(ck.seen) >= 300, "every record")
        quiet(members)
        assert sorted(kg.seen + ck.seen) == sorted(sent)
        ck.close()
        poll_all(members, lambda: len(kg.owned) == PARTITIONS, "kgroup taking everything")
    finally:
        for m in list(members):
            m.close()


def test_members_carry_on_after_the_broker_is_killed(tmp_path: Any) -> None:
    proc = BrokerProcess(tmp_path / "data", {**FAST, "group.consumer.session.timeout.ms": 20_000})
    proc.start()
    members: list[Member] = []
    try:
        bootstrap = proc.bootstrap
        topic = create_topic(bootstrap, PARTITIONS)
        group = group_name()
        first = values("before", 200)
        produce(bootstrap, topic, first, PARTITIONS)
        a = Member(bootstrap, topic, group, members)
        b = Member(bootstrap, topic, group, members)
        poll_all(
            members,
            lambda: len(a.owned) == 2 and len(b.owned) == 2 and len(a.seen + b.seen) >= 200,
            "a stable 2/2 group that consumed everything",
        )
        proc.kill9()
        proc.start()
        second = values("after", 100)
        produce(bootstrap, topic, second, PARTITIONS)
        poll_all(members, lambda: len(a.seen + b.seen) >= 300, "the records after the restart")
        quiet(members)
        assert sorted(a.seen + b.seen) == sorted(first + second), "every record exactly once"
        assert len(a.owned) == 2 and len(b.owned) == 2
    finally:
        for m in list(members):
            m.close()
        proc.stop()


def test_a_fenced_member_loses_its_partitions_and_rejoins_with_its_id(broker: Broker) -> None:
    """Heartbeats held back past the session (3 s): the broker drops the member, the next
    heartbeat is UNKNOWN_MEMBER_ID, the partitions are lost (on_lost) and the member joins
    again at epoch 0 with the same member id, consuming on from the committed offsets."""
    bootstrap = broker.bootstrap_servers
    topic = create_topic(bootstrap, PARTITIONS)
    sent = values("fenced", 100)
    produce(bootstrap, topic, sent, PARTITIONS)
    members: list[Member] = []
    a = Member(bootstrap, topic, group_name(), members)
    lost: list[int] = []
    a.subscribe(on_lost=lambda c, ps: (lost.extend(tp.partition for tp in ps), a._revoked(c, ps)))
    try:
        poll_all(members, lambda: len(a.seen) >= 100, "every record")
        m = a.consumer._membership
        member_id, epoch = m.member_id, m.generation
        original = m._heartbeat

        async def stalled() -> None:
            import asyncio

            del m._heartbeat
            await asyncio.sleep(4.5)
            await original()

        m._heartbeat = stalled
        poll_all(members, lambda: sorted(lost) == list(range(PARTITIONS)), "the loss", 20)
        poll_all(members, lambda: len(a.owned) == PARTITIONS, "the partitions again", 20)
        assert m.member_id == member_id
        assert a.consumer.consumer_group_metadata().generation_id > epoch
        more = values("again", 40)
        produce(bootstrap, topic, more, PARTITIONS)
        poll_all(members, lambda: len(a.seen) >= 140, "the records after the rejoin")
        quiet(members)
        assert sorted(a.seen) == sorted(sent + more)
    finally:
        a.close()


def test_no_poll_for_max_poll_interval_leaves_and_the_next_poll_rejoins(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = create_topic(bootstrap, PARTITIONS)
    group = group_name()
    members: list[Member] = []
    a = Member(bootstrap, topic, group, members, **{"max.poll.interval.ms": 1500})
    b = Member(bootstrap, topic, group, members)
    try:
        poll_all(members, lambda: len(a.owned) == 2 and len(b.owned) == 2, "a 2/2 split")
        deadline = time.monotonic() + 3
        # Only b polls: a leaves the group and b takes everything. a's on_lost runs at its next
        # poll(), so until then the test does not count a's partitions as owned.
        members.remove(a)
        poll_all([b], lambda: time.monotonic() > deadline and len(b.owned) == PARTITIONS, "b")
        members.append(a)
        poll_all(members, lambda: len(a.owned) == 2 and len(b.owned) == 2, "a back in")
    finally:
        for m in list(members):
            m.close()


def test_unsupported_assignor_is_raised_from_poll(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    topic = create_topic(bootstrap, PARTITIONS)
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group_name(),
            "group.protocol": "consumer",
            "group.remote.assignor": "nonexistent",
        }
    )
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 15
        with pytest.raises(UnsupportedAssignor):
            while time.monotonic() < deadline:
                c.poll(0.1)
        with pytest.raises(UnsupportedAssignor):
            c.poll(0.1)  # it stays raised
    finally:
        c.close()


def test_a_broker_without_the_consumer_protocol_is_fatal(tmp_path: Any) -> None:
    """Java's "The cluster does not support the new CONSUMER group protocol": the broker does
    not advertise ConsumerGroupHeartbeat, poll() raises UNSUPPORTED_VERSION."""
    config = {**FAST, "group.coordinator.rebalance.protocols": "classic"}
    with run_broker(tmp_path, config) as b:
        bootstrap = b.bootstrap_servers
        c = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group_name(), "group.protocol": "consumer"}
        )
        try:
            c.subscribe([create_topic(bootstrap, 1)])
            deadline = time.monotonic() + 15
            with pytest.raises(UnsupportedVersion):
                while time.monotonic() < deadline:
                    c.poll(0.1)
        finally:
            c.close()


# -- Apache Kafka 4.4 --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from support import apache_kafka

    try:
        apache_kafka.java()
        apache_kafka.lib_dir()
    except Exception as e:  # no Java or no jars: nothing to compare with
        pytest.skip(f"Apache Kafka is not at hand: {e}")
    config = {
        "group.consumer.min.heartbeat.interval.ms": 100,
        "group.consumer.heartbeat.interval.ms": 200,
        "group.consumer.min.session.timeout.ms": 3000,
        "group.consumer.session.timeout.ms": 6000,
        "group.initial.rebalance.delay.ms": 0,
        "num.partitions": PARTITIONS,
    }
    with apache_kafka.KafkaCluster(1, config, home=tmp_path_factory.mktemp("kafka")) as c:
        yield c.bootstrap


# -- on both brokers (``peer``) ----------------------------------------------------------------


def test_two_members_split_exactly_once_then_one_takes_everything_back(peer: Peer) -> None:
    split_then_take_back(
        peer.bootstrap,
        "kgroup",
        timeout=60 if peer.name == "kafka" else 30,
        **{"group.remote.assignor": "uniform"},
    )


def test_a_static_member_restarting_within_its_session_gets_its_partitions_back(
    peer: Peer,
) -> None:
    """Kafka's static membership under KIP-848: close() sends epoch -2 (a static leave, the
    partitions stay the instance's for its session), the restarted consumer joins with epoch 0,
    a new member id and the same ``group.instance.id``, and gets the same partitions; the other
    member's partitions never move, and every record is consumed once."""
    bootstrap = peer.bootstrap
    topic = create_topic(bootstrap, PARTITIONS)
    group = group_name()
    first = values("static", 100)
    produce(bootstrap, topic, first, PARTITIONS)
    members: list[Member] = []
    try:
        a = Member(bootstrap, topic, group, members, **{"group.instance.id": "a"})
        b = Member(bootstrap, topic, group, members, **{"group.instance.id": "b"})
        poll_all(
            members,
            lambda: len(a.owned) == 2 and len(b.owned) == 2 and len(a.seen + b.seen) >= 100,
            "a 2/2 split that consumed everything",
            60,
        )
        a_owned, b_owned, a_id = set(a.owned), set(b.owned), a.consumer.memberid()
        a.close()
        second = values("away", 100)
        produce(bootstrap, topic, second, PARTITIONS)
        quiet([b], 1.5)
        assert b.owned == b_owned, "b was given the partitions of a static member that left"
        again = Member(bootstrap, topic, group, members, **{"group.instance.id": "a"})
        poll_all(
            members,
            lambda: again.owned == a_owned and len(a.seen + b.seen + again.seen) >= 200,
            "the restarted member with its partitions and the records since",
            60,
        )
        quiet(members)
        assert again.consumer.memberid() != a_id, "a new consumer, a new member id"
        assert again.owned == a_owned and b.owned == b_owned
        got = sorted(a.seen + b.seen + again.seen)
        assert got == sorted(first + second), "every record exactly once"
    finally:
        for m in list(members):
            m.close()


def test_a_commit_at_an_older_epoch_is_accepted_for_partitions_still_held(peer: Peer) -> None:
    """A commit stamped with the member epoch the client holds while the broker has already
    moved the member on (a reconciliation: b joins and takes two of a's partitions). The
    heartbeat answer that brings a its new epoch is held back on the client for 200 ms, and
    a commit of the partitions a keeps goes out meanwhile with the old epoch: both brokers
    accept it at once, as Kafka 4.3+ does (KIP-1251: a's partitions were assigned at that epoch
    or before). (Against Kafka 4.2 it would be STALE_MEMBER_EPOCH, which the client sends again
    with the epoch of the next heartbeat.) After both members close, a new member reads only
    the records produced since: nothing lost, nothing consumed twice."""
    import asyncio

    from kgroup.protocol import ApiKey

    bootstrap = peer.bootstrap
    topic = create_topic(bootstrap, PARTITIONS)
    group = group_name()
    first = values("stale", 200)
    produce(bootstrap, topic, first, PARTITIONS)
    members: list[Member] = []
    a = Member(bootstrap, topic, group, members)
    stale: list[int] = []  # member epochs of the OffsetCommits answered STALE_MEMBER_EPOCH
    held: list[Any] = []  # the commit made while an epoch change was held back
    try:
        poll_all(members, lambda: len(a.seen) >= 200, "a consuming everything", 60)
        m = a.consumer._membership
        original = m.coordinator_request

        async def interposed(api: int, body: Any, **kwargs: Any) -> Any:
            resp = await original(api, body, **kwargs)
            if api == ApiKey.OFFSET_COMMIT:
                codes = {p["error_code"] for t in resp["topics"] for p in t["partitions"]}
                if 113 in codes:
                    stale.append(m.generation)
            elif (
                api == ApiKey.CONSUMER_GROUP_HEARTBEAT
                and not resp["error_code"]
                and 0 < m.generation < resp["member_epoch"]
                and not held
            ):
                # The broker has moved a to a new epoch; the client has not applied it yet.
                target = resp.get("assignment")
                keep_ids = (
                    {tp["topic_id"]: set(tp["partitions"]) for tp in target["topic_partitions"]}
                    if target is not None
                    else {tid: set(ps) for tid, ps in (m._target or {}).items()}
                )
                kept = [(t, p) for t, p in m.owned if p in keep_ids.get(m._ids.get(t), ())]
                assert kept, (m.owned, keep_ids)
                held.append(m.spawn(m.commit(m.positions(kept))))
                await asyncio.sleep(0.2)
            return resp

        m.coordinator_request = interposed
        b = Member(bootstrap, topic, group, members)
        poll_all(members, lambda: len(a.owned) == 2 and len(b.owned) == 2, "a 2/2 split", 60)
        poll_all(members, lambda: bool(held) and held[0].done(), "the held commit", 30)
        committed = held[0].result()
        assert committed and all(off >= 0 for off in committed.values())
        assert stale == [], "a still-assigned partition's older epoch is accepted"
        second = values("more", 100)
        produce(bootstrap, topic, second, PARTITIONS)
        poll_all(members, lambda: len(a.seen + b.seen) >= 300, "every record", 60)
        quiet(members)
        assert sorted(a.seen + b.seen) == sorted(first + second), "every record exactly once"
    finally:
        for x in list(members):
            x.close()
    later = values("later", 60)
    produce(bootstrap, topic, later, PARTITIONS)
    c = Member(bootstrap, topic, group, members)
    try:
        poll_all(members, lambda: len(c.seen) >= 60, "the records after the commits", 60)
        quiet(members)
        assert sorted(c.seen) == sorted(later), "c starts where a and b committed"
    finally:
        c.close()


def describe_members(bootstrap: str, group: str) -> list[dict[str, Any]]:
    """The members of ``group`` as ConsumerGroupDescribe (v0, on a raw connection to the one
    broker, the coordinator) answers: what the broker holds of each member's subscription."""
    import socket

    from support.wire import read_frame

    from kgroup import protocol

    host, port = bootstrap.rsplit(":", 1)
    body = {"group_ids": [group], "include_authorized_operations": False}
    with socket.create_connection((host, int(port)), 10) as s:
        s.sendall(protocol.encode_request(69, 0, 1, "kgroup-test", body))
        answer = protocol.decode_response(69, 0, read_frame(s)).body
    (described,) = answer["groups"]
    assert described["error_code"] == 0, described
    return list(described["members"])


def test_a_pattern_is_resolved_by_the_broker_and_follows_new_topics(peer: Peer) -> None:
    """A ``^`` subscription goes to the broker as SubscribedTopicRegex (Java's
    ``subscribe(SubscriptionPattern)``, librdkafka's ``^`` topics), with no names: the broker
    matches it against whole topic names, assigns the matching topics, and a topic created
    after subscribe() reaches the member through the broker's assignment (Kafka re-resolves a
    group's regexes at most every 10 s), its records consumed."""
    bootstrap = peer.bootstrap
    prefix = f"rx{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def create(name: str, partitions: int) -> None:
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)

    create(f"{prefix}-a", 2)
    create(f"other-{prefix}-a", 1)  # a search would match it; a full match does not
    group = group_name()
    pattern = f"^{prefix}-.*"
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
        }
    )
    seen: list[tuple[str, bytes]] = []

    def until(what: str, done: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, f"{what}: {c.assignment()}"
            m = c.poll(0.1)
            if m is not None and m.error() is None:
                seen.append((m.topic(), m.value()))

    def assigned() -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in c.assignment()}

    try:
        c.subscribe([pattern])
        until(
            "the matching topic", lambda: assigned() == {(f"{prefix}-a", 0), (f"{prefix}-a", 1)}, 60
        )
        (member,) = describe_members(bootstrap, group)
        assert member["subscribed_topic_regex"] == pattern
        assert member["subscribed_topic_names"] == []
        create(f"{prefix}-b", 1)
        produce(bootstrap, f"{prefix}-b", values("new", 10), 1)
        until("the topic created after subscribe()", lambda: (f"{prefix}-b", 0) in assigned(), 60)
        until("its records", lambda: sum(t == f"{prefix}-b" for t, _ in seen) >= 10, 30)
        assert assigned() == {(f"{prefix}-a", 0), (f"{prefix}-a", 1), (f"{prefix}-b", 0)}
    finally:
        c.close()


def test_an_invalid_pattern_is_raised_from_poll(peer: Peer) -> None:
    """A pattern the broker's RE2 cannot compile: the heartbeat is answered
    INVALID_REGULAR_EXPRESSION, fatal as in Java's consumer (an InvalidRegularExpression from
    poll()). A lookahead is valid for Python's re, so this is the broker's verdict, not a
    check of the client's."""
    c = Consumer(
        {
            "bootstrap.servers": peer.bootstrap,
            "group.id": group_name(),
            "group.protocol": "consumer",
        }
    )
    try:
        c.subscribe(["^(?!internal).*"])
        deadline = time.monotonic() + 30
        with pytest.raises(InvalidRegularExpression):
            while time.monotonic() < deadline:
                c.poll(0.1)
        with pytest.raises(InvalidRegularExpression):
            c.poll(0.1)  # it stays raised
    finally:
        c.close()
