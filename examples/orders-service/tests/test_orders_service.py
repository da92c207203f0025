"""orders-service's tests: a real Kafka broker per test (the ``kgroup_broker`` fixture of
kgroup.testing, which ``pip install kgroup`` registers with pytest), the service's own clients
unchanged, and the failures a Kafka cluster has, injected where the test needs them."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Producer

from orders_service import OrdersService, price

ITEMS = ["apple", "pear", "fig"]


def send_orders(bootstrap: str, first: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(first, first + count):
        order = {"id": i, "customer": f"c{i % 7}", "item": ITEMS[i % 3], "quantity": 1 + i % 4}
        producer.produce("orders", key=order["customer"].encode(), value=json.dumps(order))
    assert producer.flush(10) == 0


def priced_ids(broker) -> list[int]:
    """The ids of the priced orders, read from the broker itself (not through a consumer)."""
    return sorted(json.loads(r.value)["id"] for r in broker.records("priced-orders"))


@pytest.fixture
def broker(kgroup_broker):
    kgroup_broker.create_topic("orders", partitions=3)
    kgroup_broker.create_topic("priced-orders", partitions=3)
    return kgroup_broker


def service(broker) -> OrdersService:
    # Short timeouts keep failure tests quick; the service's own code is unchanged.
    return OrdersService(
        broker.bootstrap_servers,
        consumer_config={"session.timeout.ms": 6000, "heartbeat.interval.ms": 500},
    )


def test_price() -> None:
    order = {"id": 1, "customer": "c1", "item": "fig", "quantity": 3}
    assert price(order)["total_cents"] == 360
    assert price({**order, "item": "kiwi"})["unknown_item"]


def test_every_order_is_priced_once(broker) -> None:
    send_orders(broker.bootstrap_servers, 0, 60)
    svc = service(broker)
    try:
        svc.run_until(60)
    finally:
        svc.close()
    assert priced_ids(broker) == list(range(60))
    # A customer's orders keep their order: one partition per customer, ids ascending.
    by_customer: dict[str, list[int]] = {}
    for r in broker.records("priced-orders"):
        by_customer.setdefault(r.key.decode(), []).append(json.loads(r.value)["id"])
    assert all(ids == sorted(ids) for ids in by_customer.values())
    # Everything consumed is committed: a restart would start after the last order.
    committed = broker.committed("orders-service")
    ends = broker.end_offsets("orders")
    assert {p: committed[("orders", p)].offset for p in ends} == ends


def test_lost_produce_answers_make_no_duplicates(broker) -> None:
    """The broker writes the service's output but the answers time out (as when a Kafka
    leader's acks=all wait times out): the idempotent producer retries, and the broker
    recognises the retries as duplicates."""
    broker.fail("produce", "REQUEST_TIMED_OUT", topic="priced-orders", times=3, handled=True)
    send_orders(broker.bootstrap_servers, 0, 30)
    svc = service(broker)
    try:
        svc.run_until(30)
    finally:
        svc.close()
    assert priced_ids(broker) == list(range(30))


def test_coordinator_failover_loses_nothing(broker) -> None:
    """The group coordinator moves away and comes back in the middle of the work: the
    service's consumer finds it again and goes on from its committed offsets."""
    send_orders(broker.bootstrap_servers, 0, 20)
    svc = service(broker)
    try:
        svc.run_until(20)
        broker.move_coordinator("orders-service", seconds=0.5)
        send_orders(broker.bootstrap_servers, 20, 20)
        svc.run_until(40)
    finally:
        svc.close()
    # At least once: nothing lost; a reprocessed batch would show as a duplicate id.
    assert sorted(set(priced_ids(broker))) == list(range(40))
    group = broker.group("orders-service")
    assert group is not None and group.state == "Empty"


@pytest.mark.kgroup_broker(process=True)
def test_broker_crash_keeps_acknowledged_orders(broker) -> None:
    """The broker dies (kill -9) and comes back on its data: every acknowledged order is
    there, and the service goes on where its committed offsets say."""
    send_orders(broker.bootstrap_servers, 0, 20)
    svc = service(broker)
    try:
        svc.run_until(20)
        broker.kill()
        broker.restart()
        send_orders(broker.bootstrap_servers, 20, 20)
        svc.run_until(40)
    finally:
        svc.close()
    assert sorted(set(priced_ids(broker))) == list(range(40))
