"""Kafka's Java clients on kgroup's broker, beside Apache Kafka: each scenario of the Java program
(``tests/support/java/kgroup/Scenarios.java``) runs against both brokers at once and must give
the same result, ids, times and host names normalised away by the program itself.

The scenarios check Kafka's promises themselves too (nothing lost, nothing consumed twice with
synchronous commits, one owner per partition at a time, static members back without a
rebalance), so that a result equal on both brokers is also a right one.
"""

from __future__ import annotations

import concurrent.futures
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from support import java_scenarios
from support.apache_kafka import KafkaCluster, run_kafka
from support.kgroup_broker import run_broker

from kgroup.broker import Broker

pytestmark = pytest.mark.network

#: Both brokers make new topics with one partition unless told otherwise, as the session's
#: Apache Kafka does; groups form at once.
FAST_GROUPS = {"group.initial.rebalance.delay.ms": 0, "num.partitions": 1}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("java"), FAST_GROUPS) as b:
        yield b


def on_both(
    scenario: str, kafka: KafkaCluster, kgroup_bootstrap: str, **opts: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario's result on Apache Kafka and on kgroup's broker, run side by side (each in
    its own topic and group)."""
    name = f"{scenario}-{uuid.uuid4().hex[:8]}"
    opts = {"topic": name, "group": name, **opts}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        on_kafka = pool.submit(java_scenarios.run, scenario, kafka.bootstrap, **opts)
        on_kgroup = pool.submit(java_scenarios.run, scenario, kgroup_bootstrap, **opts)
        return on_kafka.result(), on_kgroup.result()


def test_idempotent_producer_acknowledges_each_record_once_in_order(
    kafka: KafkaCluster, broker: Broker
) -> None:
    ref, got = on_both("produce", kafka, broker.bootstrap_servers, records=5000, partitions=3)
    assert got == ref
    assert got["errors"] == []
    assert got["acknowledged_once"] == got["read_back"] == 5000
    assert got["acknowledged_in_send_order"] and got["offsets_contiguous_from_zero"]
    assert got["read_back_as_sent"]


def check_group(result: dict[str, Any]) -> None:
    assert result["problems"] == []
    assert result["committed"] == result["produced"]
    assert result["committed_twice"] == result["delivered_twice"] == 0
    assert result["committed_out_of_order"] == 0
    assert result["commit_failures"] == []


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "cooperative-sticky"])
def test_group_members_join_close_and_are_killed(
    kafka: KafkaCluster, broker: Broker, assignor: str
) -> None:
    ref, got = on_both("group", kafka, broker.bootstrap_servers, assignor=assignor, session=6000)
    if assignor == "cooperative-sticky":
        # How many generations a cooperative rebalance takes is a race on either broker: a
        # member that revoked partitions rejoins at once, and a member whose SyncGroup comes
        # after that rejoin is answered REBALANCE_IN_PROGRESS and misses the generation. Seen
        # once in some hundred runs, on kgroup's side one generation earlier than on Kafka's,
        # with the same assignments in every phase. The phases, counts and overlaps are
        # compared; the log of generations only for the eager assignors.
        assert {k: v for k, v in got.items() if k != "rebalances"} == {
            k: v for k, v in ref.items() if k != "rebalances"
        }
        assert got["rebalances"] and ref["rebalances"]
    else:
        assert got == ref
    check_group(got)
    assert [p["step"] for p in got["phases"]] == [
        "A joined",
        "B joined",
        "C joined",
        "B closed",
        "C killed",
    ]
    assert got["phases"][-1]["taken_over_after_session_timeout"]


def test_static_members_come_back_without_a_rebalance(kafka: KafkaCluster, broker: Broker) -> None:
    ref, got = on_both("static", kafka, broker.bootstrap_servers, assignor="range")
    assert got == ref
    check_group(got)
    assert got["rebalance_events_after_restarts"] == 0
    for r in got["restarts"]:
        assert r["same_partitions_back"], r
        assert r["same_generation"], r
        assert r["assigned_events"] == 1, r


def test_admin_client(kafka: KafkaCluster, broker: Broker) -> None:
    ref, got = on_both("admin", kafka, broker.bootstrap_servers)
    # message.max.bytes is a dynamic broker config on both (read_only false).
    assert got["describe_broker_configs"]["message.max.bytes"]["read_only"] is False
    assert got == ref
    assert got["describe_unknown_group"] == {"error": "GroupIdNotFoundException"}
    assert got["delete_group_while_active"] == {"error": "GroupNotEmptyException"}
    assert got["alter_offsets_while_active"] == {"error": "UnknownMemberIdException"}
    assert got["describe_topic_by_id"] == got["describe_topic"]
    assert "WRITE" not in got["describe_cluster_operations"]


@pytest.fixture(scope="module")
def kafka_default_delay() -> Iterator[KafkaCluster]:
    """Apache Kafka with its default initial rebalance delay (3 s)."""
    with run_kafka(1, {"num.partitions": 1}) as cluster:
        yield cluster


def test_members_started_together_form_one_generation_with_the_initial_delay(
    kafka_default_delay: KafkaCluster, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with run_broker(tmp_path_factory.mktemp("delay"), {"num.partitions": 1}) as b:
        ref, got = on_both("together", kafka_default_delay, b.bootstrap_servers, members=3)
    assert got == ref
    check_group(got)
    # The delay, re-armed by each member that joins, holds the first rebalance until all three
    # are in: one generation, each member assigned once.
    assert got["generations"] == {"A": [1], "B": [1], "C": [1]}


#: KIP-848's consumer-protocol timings on both brokers: Kafka's defaults (45 s sessions, 5 s
#: heartbeats, and minimums as large) lowered so that members heartbeat every 200 ms and a
#: rebalance takes a few of them. A restarted static member's JVM must be back within the
#: session, however loaded the machine: 8 s.
CONSUMER_PROTOCOL = {
    **FAST_GROUPS,
    "group.consumer.min.heartbeat.interval.ms": 50,
    "group.consumer.heartbeat.interval.ms": 200,
    "group.consumer.min.session.timeout.ms": 1000,
    "group.consumer.session.timeout.ms": 8000,
}
#: Both brokers compute a consumer group's target assignment at most once per
#: group.consumer.assignment.interval.ms (1 s by default, Kafka 4.3+): at 0 they compute it at
#: every group epoch bump, so that the scenario's members get their partitions at the same
#: epochs on both, whatever the timing of their heartbeats.
ASSIGNS_AT_ONCE = {
    "group.consumer.min.assignment.interval.ms": 0,
    "group.consumer.assignment.interval.ms": 0,
}


@pytest.fixture(scope="module")
def kafka_consumer_protocol() -> Iterator[KafkaCluster]:
    with run_kafka(1, {**CONSUMER_PROTOCOL, **ASSIGNS_AT_ONCE}) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def consumer_protocol_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    config = {**CONSUMER_PROTOCOL, **ASSIGNS_AT_ONCE}
    with run_broker(tmp_path_factory.mktemp("java-consumer"), config) as b:
        yield b


def test_consumer_protocol_group(
    kafka_consumer_protocol: KafkaCluster, consumer_protocol_broker: Broker
) -> None:
    ref, got = on_both(
        "consumer", kafka_consumer_protocol, consumer_protocol_broker.bootstrap_servers
    )
    assert got == ref
    check_group(got)
    steps = [d["step"] for d in got["described"]]
    assert steps == [
        "A joined",
        "B joined",
        "B closed",
        "S joined",
        "S closed",
        "S back",
        "all left",
    ]
    # The uniform assignor balances: 6 partitions, one member then two.
    assert got["shapes"] == [[6], [3, 3], [6], [3, 3], [3, 3], [3, 3], []]
    assert got["static_restart"] == {
        "same_partitions_back": True,
        "same_group_epoch": True,
        "others_rebalanced": 0,
    }
    assert got["delete_group_while_active"] == {"error": "GroupNotEmptyException"}
    assert got["alter_offsets_while_active"] == {"error": "UnknownMemberIdException"}
    assert got["delete_empty_group"] is None
    # Every record committed, each partition at its end, read back by Admin before and after
    # the group emptied.
    ends = {"offset": got["produced"] // 6, "metadata": "", "leader_epoch_set": True}
    assert list(got["committed_offsets"].values()) == [ends] * 6
    assert got["committed_offsets_after"] == got["committed_offsets"]
    # The group epoch moves once per join and leave, never for the static member's return;
    # the last step is the static member's session running out after everyone closed.
    described = [(d["group"]["state"], d["group"]["group_epoch"]) for d in got["described"]]
    assert described == [
        ("Stable", 2),
        ("Stable", 3),
        ("Stable", 4),
        ("Stable", 5),
        ("Reconciling", 5),
        ("Stable", 5),
        ("Empty", 7),
    ]
    assert got["described"][-1]["group"]["target_assignment_epoch"] == 7
