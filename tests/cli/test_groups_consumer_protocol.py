"""kgroup's AdminClient and ``kgroup groups`` on KIP-848 consumer groups, on kgroup's broker and
Apache Kafka 4.4 (tests/conftest.py's ``kafka``), with three groups of static confluent-kafka
members on one 4-partition topic and the ``range`` assignors: a consumer group of two members
(``group.protocol=consumer``), a consumer group of one such member (with a rack) and one classic
member, and a classic group of one member.

The AdminClient describes the consumer groups with ConsumerGroupDescribe (type, epochs, assignor,
each member's epoch, rack, assignment, target assignment and protocol) and the classic one with
DescribeGroups after ConsumerGroupDescribe's GROUP_ID_NOT_FOUND, the same on both brokers; it
lists groups by type. ``kgroup groups list`` with ``--type`` and ``--state``, ``describe
--state``, ``--members`` (UPGRADED for the mixed group) and ``--offsets``, with and without
``--verbose``, print exactly what Kafka's own kafka-consumer-groups.sh (ConsumerGroupCommand)
prints against the same broker. A broker that does not serve ConsumerGroupDescribe (kgroup's with
the classic protocol only) is asked with DescribeGroups.

Kafka's defaults make its members heartbeat every 5 s, so Kafka's groups take a few heartbeats
to settle (some 15 s); kgroup's broker runs with support.consumer_protocol.FAST."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from support.apache_kafka import run_tool
from support.consumer_protocol import CLASSIC, FAST
from support.kafka_tools import GROUPS
from support.kgroup_broker import run_broker

from kgroup.cli import main
from kgroup.client import AdminClient, ConsumerGroupType, NewTopic, TopicPartition

pytestmark = pytest.mark.network

PARTITIONS = 4
#: RECORDS is the number of records in each partition.
RECORDS = 2


@dataclass
class Groups:
    """The groups of one broker: ``consumer`` (members ``a`` and ``b``, on ``topic`` and
    ``other``), ``mixed`` (``m`` of the consumer protocol and ``n`` a classic member) and
    ``classic`` (member ``k``), both on ``topic``; ``prefix`` starts every name. Each group has
    committed every record of its topics."""

    name: str
    bootstrap: str
    prefix: str
    topic: str
    other: str
    consumer: str
    classic: str
    mixed: str

    @property
    def topics(self) -> list[str]:
        return [self.topic, self.other]


def _consumer(bootstrap: str, group: str, client: str, **config: Any) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "broker.address.family": "v4",
            "group.id": group,
            "client.id": client,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **config,
        }
    )


def _owned(c: Consumer) -> list[tuple[str, int]]:
    return sorted((tp.topic, tp.partition) for tp in c.assignment())


def _tps(topics: list[str], partitions: range) -> list[tuple[str, int]]:
    return sorted((t, p) for t in topics for p in partitions)


def _committed(admin: AdminClient, group: str) -> list[tuple[str, int, int]]:
    found = admin.list_consumer_group_offsets(group, request_timeout=10)[group].result()
    return sorted((tp.topic, tp.partition, tp.offset) for tp in found)


def _settled(admin: AdminClient, group: str) -> bool:
    """Whether ``group`` is Stable with every member at the target assignment epoch."""
    d = admin.describe_consumer_groups([group], request_timeout=10)[group].result()
    return d.state == "Stable" and all(
        m.member_epoch == d.target_assignment_epoch == d.group_epoch for m in d.members
    )


def _poll_until(consumers: list[Consumer], done: Any, timeout: float, what: str) -> None:
    """Poll every consumer (serving its rebalances, committing each record it reads) until
    ``done()``, checked twice a second."""
    deadline = time.monotonic() + timeout
    next_check = 0.0
    while True:
        for c in consumers:
            m = c.poll(0.05)
            if m is not None and not m.error():
                with contextlib.suppress(KafkaException):  # moved away meanwhile: read again
                    c.commit(message=m, asynchronous=False)
        now = time.monotonic()
        if now >= next_check:
            if done():
                return
            next_check = now + 0.5
        assert now < deadline, f"no {what} in {timeout:g} s"


@contextlib.contextmanager
def _groups(name: str, bootstrap: str) -> Iterator[Groups]:
    prefix = f"cg848-{uuid.uuid4().hex[:8]}"
    g = Groups(
        name,
        bootstrap,
        prefix,
        f"{prefix}-t",
        f"{prefix}-s",
        f"{prefix}-consumer",
        f"{prefix}-classic",
        f"{prefix}-mixed",
    )
    timeout = 60 if name == "kafka" else 20
    members: list[Consumer] = []
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        for f in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in g.topics]).values():
            f.result(30)
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        for t in g.topics:
            for p in range(PARTITIONS):
                for i in range(RECORDS):
                    producer.produce(t, b"%d" % i, partition=p)
        assert producer.flush(30) == 0
        try:
            # Static members: the range assignor orders them by instance id (Kafka's
            # RangeAssignor), so the first gets partitions 0-1 of each topic and the second 2-3
            # on both brokers.
            consumer = {"group.protocol": "consumer", "group.remote.assignor": "range"}
            classic = {"group.protocol": "classic", **CLASSIC}
            a = _consumer(bootstrap, g.consumer, "a", **consumer, **{"group.instance.id": "i-a"})
            m = _consumer(
                bootstrap,
                g.mixed,
                "m",
                **consumer,
                **{"group.instance.id": "i-m", "client.rack": "r1"},
            )
            k = _consumer(bootstrap, g.classic, "k", **classic)
            members += [a, m, k]
            a.subscribe(g.topics)
            m.subscribe([g.topic])
            k.subscribe([g.topic])
            whole = range(PARTITIONS)
            _poll_until(
                members,
                lambda: (
                    _owned(a) == _tps(g.topics, whole)
                    and _owned(m) == _owned(k) == _tps([g.topic], whole)
                ),
                timeout,
                "first assignments",
            )
            b = _consumer(bootstrap, g.consumer, "b", **consumer, **{"group.instance.id": "i-b"})
            # a classic member joining a consumer group: the group stays a consumer group
            n = _consumer(bootstrap, g.mixed, "n", **classic, **{"group.instance.id": "i-n"})
            members += [b, n]
            b.subscribe(g.topics)
            n.subscribe([g.topic])
            every = {
                group: [(t, p, RECORDS) for t, p in _tps(topics, whole)]
                for group, topics in (
                    (g.consumer, g.topics),
                    (g.mixed, [g.topic]),
                    (g.classic, [g.topic]),
                )
            }
            _poll_until(
                members,
                lambda: (
                    _owned(a) == _tps(g.topics, range(2))
                    and _owned(b) == _tps(g.topics, range(2, 4))
                    and _owned(m) == _tps([g.topic], range(2))
                    and _owned(n) == _tps([g.topic], range(2, 4))
                    and all(_settled(admin, group) for group in every)
                    and all(_committed(admin, group) == want for group, want in every.items())
                ),
                timeout,
                "settled groups, every record committed",
            )
            yield g
        finally:
            for c in members:
                c.close()


@pytest.fixture(scope="module")
def kgroup_groups(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Groups]:
    with run_broker(tmp_path_factory.mktemp("groups848"), FAST) as broker:
        with _groups("kgroup", broker.bootstrap_servers) as g:
            yield g


@pytest.fixture(scope="module")
def kafka_groups(kafka: Any) -> Iterator[Groups]:
    with _groups("kafka", kafka.bootstrap) as g:
        yield g


def _members(d: Any) -> list[tuple[Any, ...]]:
    """A description's members as comparable rows, by client id."""

    def parts(tps: Any) -> list[tuple[str, int]] | None:
        return None if tps is None else sorted((tp.topic, tp.partition) for tp in tps)

    return sorted(
        (
            m.client_id,
            m.group_instance_id,
            m.rack_id,
            m.host,
            m.member_epoch,
            parts(m.assignment),
            parts(m.target_assignment),
            m.upgraded,
        )
        for m in d.members
    )


def _described(g: Groups) -> dict[str, Any]:
    """The AdminClient's descriptions and listings of ``g``'s groups, with the topic and the
    groups' names made the same on every broker."""
    with AdminClient({"bootstrap.servers": g.bootstrap}) as admin:
        kinds = {"consumer": g.consumer, "mixed": g.mixed, "classic": g.classic}
        found = admin.describe_consumer_groups(list(kinds.values()), request_timeout=10)
        out: dict[str, Any] = {}
        for kind, group in kinds.items():
            d = found[group].result()
            assert d.group_id == group and d.coordinator.port == int(g.bootstrap.split(":")[1])
            out[kind] = (
                d.type,
                d.state,
                d.partition_assignor,
                d.protocol_type,
                d.is_simple_consumer_group,
                d.group_epoch,
                d.target_assignment_epoch,
                _members(d),
            )
        for types in (None, ["consumer"], [ConsumerGroupType.CLASSIC], ["Consumer", "classic"]):
            listed = admin.list_consumer_groups(types=types, request_timeout=10).result()
            assert listed.errors == []
            out[f"listed {types}"] = sorted(
                (x.group_id, x.type, x.state, x.protocol_type)
                for x in listed.valid
                if x.group_id.startswith(g.prefix)
            )
    text = repr(out).replace(g.prefix, "PREFIX")
    return {"text": text, **out}


def test_admin_client_describes_consumer_and_classic_groups_alike_on_kgroup_and_kafka(
    kgroup_groups: Groups, kafka_groups: Groups
) -> None:
    mine = _described(kgroup_groups)
    kind, state, assignor, protocol_type, simple, epoch, target_epoch, members = mine["consumer"]
    assert (kind, state, assignor, protocol_type, simple) == (
        ConsumerGroupType.CONSUMER,
        "Stable",
        "range",
        "consumer",
        False,
    )
    # the group's epoch: 1 for a new group (Kafka 4.3+), one bump for each member's join; both
    # members reconciled to it
    assert epoch == target_epoch == 3
    t, both = kgroup_groups.topic, kgroup_groups.topics
    first, second = _tps(both, range(2)), _tps(both, range(2, 4))
    assert members == [
        ("a", "i-a", None, "/127.0.0.1", epoch, first, first, True),
        ("b", "i-b", None, "/127.0.0.1", epoch, second, second, True),
    ]
    # a consumer group with a classic member (MemberType 0: not upgraded)
    kind, state, assignor, _, _, epoch, target_epoch, members = mine["mixed"]
    assert (kind, state, assignor, epoch, target_epoch) == (
        ConsumerGroupType.CONSUMER,
        "Stable",
        "range",
        3,
        3,
    )
    assert members == [
        ("m", "i-m", "r1", "/127.0.0.1", epoch, [(t, 0), (t, 1)], [(t, 0), (t, 1)], True),
        ("n", "i-n", None, "/127.0.0.1", epoch, [(t, 2), (t, 3)], [(t, 2), (t, 3)], False),
    ]
    kind, state, assignor, protocol_type, simple, epoch, target_epoch, members = mine["classic"]
    assert (kind, state, assignor, protocol_type, simple, epoch, target_epoch) == (
        ConsumerGroupType.CLASSIC,
        "Stable",
        "range",
        "consumer",
        False,
        None,
        None,
    )
    whole = [(t, p) for p in range(PARTITIONS)]
    assert members == [("k", None, None, "/127.0.0.1", None, whole, None, None)]
    g = kgroup_groups
    consumer = [(x, "consumer", "Stable", "consumer") for x in (g.consumer, g.mixed)]
    classic = [(g.classic, "classic", "Stable", "consumer")]
    assert mine["listed None"] == classic + consumer
    assert mine["listed ['consumer']"] == consumer
    assert mine["listed [<ConsumerGroupType.CLASSIC: 'classic'>]"] == classic
    assert mine["listed ['Consumer', 'classic']"] == classic + consumer
    assert mine["text"] == _described(kafka_groups)["text"]


def _kgroup(capsys: pytest.CaptureFixture[str], bootstrap: str, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    status = main(["groups", *argv, "--bootstrap-server", bootstrap])
    return status, capsys.readouterr().out


def _listed(prefix: str, stdout: str) -> list[str]:
    """A listing's header and its lines of ``prefix``'s groups, sorted (each tool lists in the
    order the broker answers, and the broker lists other tests' groups too)."""
    lines = stdout.splitlines()
    if lines and lines[0].startswith("GROUP "):
        return lines[:1] + sorted(line for line in lines[1:] if line.startswith(prefix))
    return sorted(line for line in lines if line.startswith(prefix))


@pytest.mark.parametrize("name", ["kgroup", "kafka"])
def test_groups_tool_prints_what_kafka_consumer_groups_prints(
    capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, name: str
) -> None:
    g: Groups = request.getfixturevalue(f"{name}_groups")
    c, m, k = g.consumer, g.mixed, g.classic
    # (kgroup groups ..., kafka-consumer-groups.sh ...)
    cases = [
        (["list"], ["--list"]),
        (["list", "--type"], ["--list", "--type"]),
        (["list", "--type", "consumer"], ["--list", "--type", "consumer"]),
        (["list", "--type", "classic", "--state"], ["--list", "--type", "classic", "--state"]),
        (["list", "--state", "stable"], ["--list", "--state", "stable"]),
        (["list", "--state", "Stable", "--type", "Consumer,classic"],
         ["--list", "--state", "Stable", "--type", "Consumer,classic"]),
        (["describe", c, "--state"], ["--describe", "--group", c, "--state"]),
        (["describe", c, "--state", "--verbose"],
         ["--describe", "--group", c, "--state", "--verbose"]),
        (["describe", c, "--members"], ["--describe", "--group", c, "--members"]),
        (["describe", c, "--members", "--verbose"],
         ["--describe", "--group", c, "--members", "--verbose"]),
        (["describe", c, "--offsets", "--verbose"],
         ["--describe", "--group", c, "--offsets", "--verbose"]),
        (["describe", m, "--members", "--verbose"],
         ["--describe", "--group", m, "--members", "--verbose"]),
        (["describe", m, "--members"], ["--describe", "--group", m, "--members"]),
        (["describe", m, "--state", "--verbose"],
         ["--describe", "--group", m, "--state", "--verbose"]),
        (["describe", k, "--state", "--verbose"],
         ["--describe", "--group", k, "--state", "--verbose"]),
        (["describe", k, "--offsets", "--verbose"],
         ["--describe", "--group", k, "--offsets", "--verbose"]),
        (["describe", m], ["--describe", "--group", m]),
        (["describe", k, "--members", "--verbose"],
         ["--describe", "--group", k, "--members", "--verbose"]),
    ]  # fmt: skip
    for mine, kafkas in cases:
        status, out = _kgroup(capsys, g.bootstrap, *mine)
        want = run_tool(GROUPS, "--bootstrap-server", g.bootstrap, *kafkas)
        if mine[0] == "list":
            got, expected = _listed(g.prefix, out), _listed(g.prefix, want.stdout)
            assert any(line.startswith(g.prefix) for line in expected)
        else:
            got, expected = out.splitlines(), want.stdout.splitlines()
        assert (status, got) == (0, expected), f"kgroup groups {' '.join(mine)}"


def test_a_broker_without_consumer_group_describe_is_asked_with_describe_groups(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    # Without the consumer protocol kgroup's broker does not advertise ConsumerGroupDescribe
    # (tests/broker/test_consumer_protocol.py): Java's Admin then uses DescribeGroups alone.
    config = {**FAST, "group.coordinator.rebalance.protocols": "classic"}
    with run_broker(tmp_path, config) as broker:
        bootstrap = broker.bootstrap_servers
        topic, group, simple = "t", "classic-only", "offsets-only"
        k = _consumer(bootstrap, group, "k", **{"group.protocol": "classic", **CLASSIC})
        try:
            with AdminClient({"bootstrap.servers": bootstrap}) as admin:
                admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
                committed = admin.alter_consumer_group_offsets(
                    simple, [TopicPartition(topic, 0, 5)]
                )
                for f in committed.values():
                    f.result(10)
                k.subscribe([topic])
                _poll_until(
                    [k],
                    lambda: _owned(k) == _tps([topic], range(PARTITIONS)),
                    20,
                    "assignment of k",
                )
                found = admin.describe_consumer_groups([group, simple, "none"], request_timeout=10)
                d, s, none = (found[x].result() for x in (group, simple, "none"))
            assert (d.type, d.state, d.partition_assignor, d.group_epoch) == (
                ConsumerGroupType.CLASSIC,
                "Stable",
                "range",
                None,
            )
            [member] = d.members
            assert (member.client_id, member.member_epoch, member.target_assignment) == (
                "k",
                None,
                None,
            )
            assert sorted(tp.partition for tp in member.assignment.topic_partitions) == [0, 1, 2, 3]
            assert (s.type, s.state, s.is_simple_consumer_group, s.members) == (
                ConsumerGroupType.CLASSIC,
                "Empty",
                True,
                [],
            )
            assert (none.state, none.members) == ("Dead", [])
            status, out = _kgroup(capsys, bootstrap, "describe", group, "--state", "--verbose")
            assert status == 0
            assert out.splitlines()[2].split()[-3:] == ["-", "-", "1"]
        finally:
            k.close()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--type", "share"], "Invalid types list 'share'. Valid types are: Classic, Consumer"),
        (["--state", "stable,Rebalancing"], "Invalid state list 'stable,Rebalancing'."),
    ],
)
def test_list_refuses_filters_kafka_refuses(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    # Kafka's groupStatesFromString / consumerGroupTypesFromString: the states of consumer
    # groups, the types classic and consumer; checked before the cluster is asked.
    assert main(["groups", "list", *argv, "--bootstrap-server", "127.0.0.1:1"]) == 2
    assert message in capsys.readouterr().err
