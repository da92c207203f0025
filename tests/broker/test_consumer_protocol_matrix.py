"""KIP-848 consumer groups of real clients, each in a process of its own, on kgroup's broker:
members join in waves, one close()s and one dies by kill -9 while a 12-partition topic is produced
to; every record is consumed, none twice (synchronous commits). The online migration scenario is
in ``test_group_migration_online.py``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.consumer_protocol import FAST
from support.consumers import run_group
from support.kgroup_broker import run_broker

from kgroup.broker import Broker


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    # Sessions of 6 s, as the classic members' (support.consumers.SESSION_MS): a member of a
    # loaded machine keeps its partitions, and a killed one's move 6 s after its last beat.
    # Heartbeats every 500 ms, as theirs (HEARTBEAT_MS), not FAST's 100: librdkafka 2.16 times
    # a heartbeat out after one interval and sends the same request again, not a full one, so
    # an answer that carried a new assignment and came late (a broker sharing two loaded cores
    # with ten members) is lost, and the member holds its old partitions until its assignment
    # changes again, as it would on Kafka (rdkafka_request.c's FIXME on that timeout).
    config = {
        **FAST,
        "group.consumer.session.timeout.ms": 6000,
        "group.consumer.heartbeat.interval.ms": 500,
    }
    with run_broker(tmp_path_factory.mktemp("migration"), config) as b:
        yield b


@pytest.mark.slow
@pytest.mark.parametrize(
    "clients",
    [["confluent"], ["confluent", "kgroup"], ["kgroup"]],
    ids=["confluent", "mixed", "kgroup"],
)
def test_consumer_protocol_members_joining_closing_and_killed_consume_every_record_once(
    broker: Broker, clients: list[str]
) -> None:
    # 4 members, then 3 and 3 more: 10 on the 12-partition topic; then one close()s and one
    # dies by kill -9, its partitions moving at the broker's 6 s session timeout.
    run_group(broker.bootstrap_servers, clients, None, 4, [3, 3], protocol="consumer")
