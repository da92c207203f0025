"""Brokers of this module's own, started fresh with group.max.size=2 (Apache Kafka reads it
only at start): NOT_COORDINATOR before the group coordinator exists, the only way to reach it
on one node, and a group refusing its third member."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.apache_kafka import run_kafka
from support.differential import BROKER_CONFIG, Differential, Members, wait_for_coordinator
from support.kgroup_broker import run_broker

pytestmark = pytest.mark.network

SMALL = {**BROKER_CONFIG, "group.max.size": 2}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Differential]:
    with (
        run_kafka(1, SMALL, heap="512m") as kafka,
        run_broker(tmp_path_factory.mktemp("max-size"), SMALL) as kgroup,
        Differential(kgroup.bootstrap_servers, kafka.bootstrap) as d,
    ):
        yield d


def test_not_coordinator_before_the_offsets_topic(fresh: Differential) -> None:
    # Runs first in the module: no FindCoordinator has created __consumer_offsets yet.
    g = Members(fresh)
    answer = g.new_member("m1")
    assert answer.body.error_code == 16  # NOT_COORDINATOR
    g.heartbeat("m1", gen=1)
    g.commit(None, {("t", 0): 1})
    g.fetch_offsets()


@pytest.fixture
def small_groups(fresh: Differential) -> Differential:
    for p in fresh.peers:
        wait_for_coordinator(p.bootstrap)
    return fresh


def test_a_third_member_is_refused(small_groups: Differential) -> None:
    g = Members(small_groups)
    d = small_groups
    g.new_member("m1")
    g.join("m1")
    g.joined("m1")
    g.sync("m1", ["m1"])
    d.receive("m1")
    g.new_member("m2")
    g.join("m2")
    d.parked("m2")
    g.join("m1")
    for conn, answer in d.settle().items():
        assert answer is not None
        g.joined(conn, answer)
    g.sync("m1", ["m1", "m2"])
    g.sync("m2")
    d.settle()
    # The third: refused with GROUP_MAX_SIZE_REACHED, the group stays as it was.
    # Already its first join, before any member id (KIP-394) is handed out.
    answer = g.new_member("m3")
    assert answer.body.error_code == 81  # GROUP_MAX_SIZE_REACHED
    g.heartbeat("m1")
    g.describe()
    # A static member over the limit.
    g.new_member("s1", instance="i1")
    g.describe()
