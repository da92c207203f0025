"""Helpers of the kgroup.testing kit's own tests (tests/testing/): polling for a condition, and
confluent-kafka clients set up to be quick against a one-broker test cluster and quiet (their
logs go to Python's logging, which pytest captures)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, TypeVar

T = TypeVar("T")

RDKAFKA_LOG = logging.getLogger("librdkafka")

PLUGIN = "kgroup.testing.pytest_plugin"


def plugin_args() -> list[str]:
    """``-p`` for the kit's pytest plugin where the environment has not registered its pytest11
    entry point (loading it twice is an error). Asked at each run: an install may register it
    meanwhile."""
    names = {ep.value for ep in entry_points(group="pytest11")}
    return [] if PLUGIN in names else ["-p", PLUGIN]


def wait_until(predicate: Callable[[], T], timeout: float = 10.0, what: str = "the condition") -> T:
    """The first true value of ``predicate()``, polled every 20 ms for ``timeout`` seconds;
    AssertionError when it stays false."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(0.02)


def rdkafka_conf(bootstrap: str, conf: dict[str, Any] | None = None) -> dict[str, Any]:
    """A confluent-kafka configuration for ``bootstrap`` with short backoffs (librdkafka's
    defaults are made for a cluster over a network), overridden by ``conf``."""
    base: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "logger": RDKAFKA_LOG,
        "retry.backoff.ms": 50,
        "retry.backoff.max.ms": 200,
        "reconnect.backoff.ms": 20,
        "reconnect.backoff.max.ms": 200,
        "topic.metadata.refresh.fast.interval.ms": 50,
    }
    base.update(conf or {})
    return base


def rdkafka_consumer_conf(
    bootstrap: str, group: str, conf: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A confluent-kafka consumer of ``group``: from the earliest offset, no automatic
    commits, short fetch waits and heartbeats."""
    return rdkafka_conf(
        bootstrap,
        {
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 100,
            "fetch.wait.max.ms": 50,
            **(conf or {}),
        },
    )


class Deliveries:
    """Deliveries collects a confluent-kafka (or kgroup) producer's delivery reports:
    ``on_delivery=deliveries``."""

    def __init__(self) -> None:
        self.ok: list[tuple[int, int, bytes]] = []
        self.failed: list[Any] = []
        self.times: list[float] = []

    def __call__(self, err: Any, msg: Any) -> None:
        self.times.append(time.monotonic())
        if err is None:
            self.ok.append((msg.partition(), msg.offset(), msg.value()))
        else:
            self.failed.append(err)

    @property
    def values(self) -> list[bytes]:
        return [v for _, _, v in self.ok]


def poll_values(consumer: Any, count: int, timeout: float = 10.0) -> list[bytes]:
    """The values of the next ``count`` messages of a confluent-kafka-style consumer (errors
    left out: a fault's transient errors are the client's to handle)."""
    out: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"consumed {len(out)} of {count} messages in {timeout} s")
        msg = consumer.poll(0.1)
        if msg is None or msg.error() is not None:
            continue
        out.append(msg.value())
    return out


def poll_until(
    consumer: Any, done: Callable[[], bool], timeout: float = 10.0, what: str = "the condition"
) -> list[bytes]:
    """Poll a confluent-kafka-style consumer until ``done()``; the values it consumed
    meanwhile."""
    out: list[bytes] = []
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        msg = consumer.poll(0.05)
        if msg is not None and msg.error() is None:
            out.append(msg.value())
    return out
