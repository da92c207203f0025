"""Kafka's system-test scenarios (tests/kafkatest/tests/client/consumer_test.py) with
kafka-verifiable-producer and kafka-verifiable-consumer, on kgroup's broker and, where the
broker is not killed, on Apache Kafka too: a rolling bounce of consumers stopped cleanly, one
of consumers killed -9, static members bouncing, and kgroup's broker killed -9 under load.

Each checks what KT checks (support/verifiable.py: offsets continuous per consumer and
partition, commits never ahead of what was consumed, nothing consumed below the group's
commit), plus: after clean bounces no record was consumed twice, and every acknowledged record
was consumed (and, after the broker crash, is still in the log at its acknowledged offset).
Fewer rounds and shorter sessions than KT's (5 rounds, 10-60 s sessions), to stay short."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from support.kafka_tools import unique
from support.kgroup_broker import BrokerProcess
from support.verifiable import VerifiableConsumers, VerifiableProducer, rolling_bounce

from kgroup.broker import Broker

pytestmark = [pytest.mark.network, pytest.mark.slow]


def create_topic(bootstrap: str, partitions: int) -> str:
    name = unique("kt-verifiable")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)
    return name


@pytest.fixture(params=["kgroup", "kafka"])
def bootstrap(request: pytest.FixtureRequest, kgroup_broker: Broker) -> str:
    if request.param == "kafka":
        return request.getfixturevalue("kafka").bootstrap
    return kgroup_broker.bootstrap_servers


class Clients:
    """The producer and consumers of one scenario, killed at teardown whatever happened."""

    def __init__(self, bootstrap: str, topic: str, log_dir: Path) -> None:
        self.bootstrap, self.topic, self.log_dir = bootstrap, topic, log_dir
        self.producer: VerifiableProducer | None = None
        self.consumers: VerifiableConsumers | None = None

    def produce(self, **kwargs: object) -> VerifiableProducer:
        self.producer = VerifiableProducer(
            self.bootstrap,
            self.topic,
            self.log_dir / "producer.log",
            **kwargs,  # type: ignore[arg-type]
        )
        return self.producer

    def consume(self, n: int, **kwargs: object) -> VerifiableConsumers:
        self.consumers = VerifiableConsumers(
            self.bootstrap,
            self.topic,
            self.topic + "-group",
            n,
            self.log_dir,
            **kwargs,  # type: ignore[arg-type]
        )
        return self.consumers

    def finish(self) -> tuple[VerifiableProducer, VerifiableConsumers]:
        """Stop the producer, let the group read all it acknowledged, stop the group cleanly
        and check what KT checks; both, for the scenario's own asserts."""
        producer, consumers = self.producer, self.consumers
        assert producer is not None and consumers is not None
        producer.stop()
        consumers.await_position(producer.end_offsets())
        consumers.stop_all()
        consumers.check()
        assert producer.num_acked > 0
        assert consumers.missing(producer.acked) == [], "acknowledged records never consumed"
        return producer, consumers

    def close(self) -> None:
        if self.producer is not None and self.producer.proc.poll() is None:
            self.producer.proc.kill()
        if self.consumers is not None:
            self.consumers.kill_all()


@pytest.fixture
def clients(tmp_path: Path) -> Iterator[Callable[[str, str], Clients]]:
    made: list[Clients] = []

    def make(bootstrap: str, topic: str) -> Clients:
        made.append(Clients(bootstrap, topic, tmp_path))
        return made[-1]

    yield make
    for c in made:
        c.close()


def test_rolling_bounce_clean(bootstrap: str, clients: Callable[[str, str], Clients]) -> None:
    """KT's test_consumer_bounce (rolling, clean_shutdown): 3 consumers of a one-partition
    topic, each stopped with SIGTERM and started again in turn; no record consumed twice."""
    topic = create_topic(bootstrap, 1)
    c = clients(bootstrap, topic)
    producer = c.produce()
    producer.await_acked(200)
    consumers = c.consume(3)
    consumers.start()
    consumers.await_all_members()
    rolling_bounce(consumers, rounds=1)
    _, consumers = c.finish()
    assert consumers.current_position((topic, 0)) == consumers.total_consumed()


def test_rolling_bounce_hard(bootstrap: str, clients: Callable[[str, str], Clients]) -> None:
    """The hard variant (kill -9), which KT keeps in code: the killed member is expelled when
    its session ends; records may be consumed twice, never skipped."""
    topic = create_topic(bootstrap, 2)
    c = clients(bootstrap, topic)
    producer = c.produce()
    producer.await_acked(200)
    consumers = c.consume(2)
    consumers.start()
    consumers.await_all_members()
    rolling_bounce(consumers, rounds=1, clean_shutdown=False)
    _, consumers = c.finish()
    consumed = sum(consumers.current_position((topic, p)) or 0 for p in (0, 1))
    assert consumed <= consumers.total_consumed()


def test_static_members_bounce(bootstrap: str, clients: Callable[[str, str], Clients]) -> None:
    """KT's test_static_consumer_bounce_with_eager_assignment (rolling, static): members
    restarted within their session keep their instance ids and partitions, so the member
    kept alive sees no rebalance (no revocation) with the eager range assignor."""
    topic = create_topic(bootstrap, 3)
    c = clients(bootstrap, topic)
    producer = c.produce()
    producer.await_acked(200)
    consumers = c.consume(3, static_membership=True, session_timeout_ms=30000)
    consumers.start()
    consumers.await_all_members()
    # Every member has its final assignment once the group's last join is done.
    time.sleep(1)
    before = consumers.nodes[0].handler.revoked_count
    rolling_bounce(consumers, rounds=1, keep_alive=1)
    assert consumers.nodes[0].handler.revoked_count == before, "the live member was revoked"
    _, consumers = c.finish()
    assert sum(consumers.current_position((topic, p)) or 0 for p in range(3)) == (
        consumers.total_consumed()
    )


def test_broker_kill9_under_load(tmp_path: Path, clients: Callable[[str, str], Clients]) -> None:
    """kgroup's broker killed -9 while a producer (acks=all) and a group are busy, then
    started again on the same data: nothing acknowledged is lost, the group goes on where it
    committed, and KT's offset checks hold throughout."""
    with BrokerProcess(tmp_path / "data", {"group.initial.rebalance.delay.ms": 0}) as broker:
        topic = create_topic(broker.bootstrap, 2)
        c = clients(broker.bootstrap, topic)
        producer = c.produce()
        producer.await_acked(200)
        consumers = c.consume(2)
        consumers.start()
        consumers.await_all_members()
        consumers.await_consumed(100)

        broker.kill9()
        acked_before = producer.num_acked
        time.sleep(1)
        broker.start()

        producer.await_acked(200, timeout=90)
        consumers.await_consumed(200, timeout=90)
        producer, consumers = c.finish()
        assert producer.num_acked > acked_before

        # Every acknowledged record is in the log at its offset, with its value.
        ends = producer.end_offsets()
        reader = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": topic + "-check",
                "enable.auto.commit": False,
            }
        )
        reader.assign([TopicPartition(topic, p, 0) for p in ends])
        log: dict[tuple[int, int], str] = {}
        deadline = time.monotonic() + 30
        while sum(1 for _ in log) < sum(ends.values()) and time.monotonic() < deadline:
            for m in reader.consume(500, 1):
                if m.error() is None:
                    log[(m.partition(), m.offset())] = m.value().decode()
        reader.close()
        lost = [(p, o, v) for p, o, v in producer.acked if log.get((p, o)) != v]
        assert lost == [], f"{len(lost)} acknowledged records lost or changed: {lost[:5]}"
