"""orders-service: reads orders from one topic, prices them, and writes one priced order per
input to another, keyed by customer (so that a customer's orders stay in order downstream).

At least once, without duplicates on the way out: the producer is idempotent (a produce the
broker wrote but whose answer was lost is retried without a second copy), and the consumer's
offsets are committed only after the batch's output was acknowledged (a restart reprocesses,
never skips).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer

__all__ = ["OrdersService", "price"]

#: PRICES are the unit prices the service knows, in cents.
PRICES: Mapping[str, int] = {"apple": 50, "pear": 70, "fig": 120}


def price(order: Mapping[str, Any]) -> dict[str, Any]:
    """An order (``{"id", "customer", "item", "quantity"}``) with its total, in cents; an
    unknown item is priced 0 and flagged."""
    unit = PRICES.get(order["item"])
    return {
        "id": order["id"],
        "customer": order["customer"],
        "item": order["item"],
        "quantity": order["quantity"],
        "total_cents": (unit or 0) * int(order["quantity"]),
        "unknown_item": unit is None,
    }


@dataclass
class Stats:
    consumed: int = 0
    produced: int = 0
    commits: int = 0


class OrdersService:
    """OrdersService consumes ``source`` in the group ``group_id`` and writes ``sink``;
    ``consumer_config`` adds to (or overrides) its consumer's settings."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        group_id: str = "orders-service",
        source: str = "orders",
        sink: str = "priced-orders",
        consumer_config: Mapping[str, Any] | None = None,
    ) -> None:
        self.source, self.sink = source, sink
        common = {"bootstrap.servers": bootstrap_servers}
        self.consumer = Consumer(
            {
                **common,
                "group.id": group_id,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                **dict(consumer_config or {}),
            }
        )
        self.producer = Producer({**common, "enable.idempotence": True, "linger.ms": 5})
        self.stats = Stats()
        self.consumer.subscribe([source])

    def step(self, timeout: float = 0.5, batch: int = 100) -> int:
        """Process what one poll brings; returns how many orders it priced."""
        messages = self.consumer.consume(batch, timeout)
        orders = []
        for m in messages:
            if m.error():
                raise KafkaException(m.error())
            orders.append(json.loads(m.value()))
        if not orders:
            return 0
        self.stats.consumed += len(orders)
        failures: list[Any] = []
        for order in orders:
            priced = price(order)
            self.producer.produce(
                self.sink,
                key=str(priced["customer"]).encode(),
                value=json.dumps(priced).encode(),
                on_delivery=lambda err, _msg: failures.append(err) if err else None,
            )
        # Offsets move only once the output is acknowledged: at least once, never a skip.
        if self.producer.flush(30) or failures:
            raise RuntimeError(f"the output was not acknowledged: {failures}")
        self.stats.produced += len(orders)
        self.consumer.commit(asynchronous=False)
        self.stats.commits += 1
        return len(orders)

    def run_until(self, consumed: int, timeout: float = 30.0) -> Stats:
        """Process until ``consumed`` orders were seen in total (or raise TimeoutError)."""
        deadline = time.monotonic() + timeout
        while self.stats.consumed < consumed:
            if time.monotonic() > deadline:
                raise TimeoutError(f"consumed {self.stats.consumed} of {consumed} orders")
            self.step()
        return self.stats

    def close(self) -> None:
        self.consumer.close()
        self.producer.flush(10)
