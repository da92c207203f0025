"""kgroup.testing from asyncio code (``async with Broker()``), its faults as aiokafka sees them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition

from kgroup.testing import Broker

pytestmark = pytest.mark.network


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 30))


def producer(broker: Broker, **conf: Any) -> AIOKafkaProducer:
    return AIOKafkaProducer(
        bootstrap_servers=broker.bootstrap_servers, acks="all", retry_backoff_ms=50, **conf
    )


def consumer(broker: Broker, group: str, *topics: str) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(
        *topics,
        bootstrap_servers=broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=100,
        fetch_max_wait_ms=50,
        retry_backoff_ms=50,
    )


async def consume(c: AIOKafkaConsumer, count: int) -> list[bytes]:
    out: list[bytes] = []
    while len(out) < count:
        for records in (await c.getmany(timeout_ms=100)).values():
            out += [r.value for r in records]
    return out


async def eventually(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "waited too long"
        await asyncio.sleep(0.02)


def test_async_broker_and_an_idempotent_producer_retrying_a_timeout() -> None:
    # Kafka: REQUEST_TIMED_OUT after the append; the retry with the same sequence is a
    # duplicate the broker does not write again.
    async def test() -> None:
        async with Broker() as broker:
            assert broker.running
            broker.create_topic("t")
            p = producer(broker, enable_idempotence=True)
            await p.start()
            try:
                broker.fail("produce", "REQUEST_TIMED_OUT", handled=True, topic="t")
                batch = [await p.send("t", value=b"%d" % i) for i in range(5)]
                await asyncio.gather(*batch)
                assert broker.faults() == []
            finally:
                await p.stop()
            assert [r.value for r in broker.records("t")] == [b"%d" % i for i in range(5)]
        assert not broker.running

    run(test)


def test_consumer_follows_a_moving_coordinator() -> None:
    async def test() -> None:
        async with Broker() as broker:
            broker.create_topic("t")
            p = producer(broker)
            c = consumer(broker, "g", "t")
            await p.start()
            await c.start()
            try:
                for i in range(5):
                    await p.send_and_wait("t", value=b"%d" % i)
                assert await consume(c, 5) == [b"%d" % i for i in range(5)]
                await c.commit()
                broker.move_coordinator(seconds=0.5)  # every group's
                for i in range(5, 10):
                    await p.send_and_wait("t", value=b"%d" % i)
                assert await consume(c, 5) == [b"%d" % i for i in range(5, 10)]
                deadline = time.monotonic() + 10
                while True:
                    try:
                        await c.commit()
                        break
                    except Exception:
                        assert time.monotonic() < deadline
                        await asyncio.sleep(0.1)
                assert broker.committed("g")[("t", 0)].offset == 10
                await eventually(lambda: broker.faults() == [])
                assert await c.committed(TopicPartition("t", 0)) == 10
            finally:
                await c.stop()
                await p.stop()

    run(test)


def test_paused_broker_makes_the_producer_wait() -> None:
    async def test() -> None:
        async with Broker() as broker:
            broker.create_topic("t")
            p = producer(broker, enable_idempotence=True)
            await p.start()
            try:
                await p.send_and_wait("t", value=b"before")
                broker.pause()
                sent = asyncio.ensure_future(p.send_and_wait("t", value=b"during"))
                done, _ = await asyncio.wait([sent], timeout=0.7)
                assert not done
                broker.resume()
                await asyncio.wait_for(sent, 10)
            finally:
                await p.stop()
            assert [r.value for r in broker.records("t")] == [b"before", b"during"]

    run(test)


def test_latency_on_every_api_is_observed() -> None:
    async def test() -> None:
        async with Broker() as broker:
            broker.create_topic("t")
            p = producer(broker)
            await p.start()
            try:
                await p.send_and_wait("t", value=b"warm")
                fault = broker.delay(0.8)
                start = time.monotonic()
                await p.send_and_wait("t", value=b"slow")
                assert time.monotonic() - start >= 0.8
                fault.remove()
                start = time.monotonic()
                await p.send_and_wait("t", value=b"quick")
                assert time.monotonic() - start < 0.6
            finally:
                await p.stop()

    run(test)


def test_expired_member_rejoins() -> None:
    async def test() -> None:
        async with Broker() as broker:
            broker.create_topic("t", partitions=2)
            c = consumer(broker, "g", "t")
            await c.start()
            try:
                await eventually(
                    lambda: (g := broker.group("g")) is not None and g.state == "Stable"
                )
                before = broker.group("g")
                assert before is not None
                [old] = [m.member_id for m in before.members]
                broker.expire_member("g", old)

                def rejoined() -> bool:
                    g = broker.group("g")
                    return (
                        g is not None
                        and g.state == "Stable"
                        and [m.member_id for m in g.members] not in ([], [old])
                    )

                async def poll_until_rejoined() -> None:
                    while not rejoined():
                        await c.getmany(timeout_ms=50)

                await asyncio.wait_for(poll_until_rejoined(), 15)
                after = broker.group("g")
                assert after is not None and after.generation > before.generation
                assert c.assignment() == {TopicPartition("t", 0), TopicPartition("t", 1)}
            finally:
                await c.stop()

    run(test)


def test_consumer_retries_find_coordinator_and_fetch_errors() -> None:
    # Kafka: COORDINATOR_NOT_AVAILABLE from FindCoordinator and NOT_LEADER_OR_FOLLOWER from
    # Fetch are retriable: the consumer looks again, then reads everything once.
    async def test() -> None:
        async with Broker() as broker:
            broker.create_topic("t")
            p = producer(broker)
            await p.start()
            try:
                for i in range(3):
                    await p.send_and_wait("t", value=b"%d" % i)
            finally:
                await p.stop()
            broker.fail("find_coordinator", "COORDINATOR_NOT_AVAILABLE", group="g", times=2)
            broker.fail("fetch", "NOT_LEADER_OR_FOLLOWER", topic="t", times=2)
            c = consumer(broker, "g", "t")
            await c.start()
            try:
                assert await asyncio.wait_for(consume(c, 3), 10) == [b"0", b"1", b"2"]
                assert broker.faults() == []
            finally:
                await c.stop()

    run(test)
