"""CoordinatorRuntime with a coordinator of its own kind: what any coordinator gets from it
(appends, durability, load at start, timers, unload at stop), with no broker, no group and
none of kgroup.group's effect classes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kgroup import errors
from kgroup.broker.config import BrokerConfig
from kgroup.broker.coordinators.runtime import CoordinatorRuntime, InternalTopic
from kgroup.broker.state import Flusher
from kgroup.broker.topics import Topics, now_ms
from kgroup.log import clear_faults, inject_fault
from kgroup.protocol.records import decode_batches, encode_batch

TOPIC = "__things"


@dataclass(frozen=True)
class Respond:
    token: Any
    frame: bytes


@dataclass(frozen=True)
class Append:
    token: int
    partition: int
    records: bytes


@dataclass
class Things:
    """A coordinator that keeps values: ``put`` appends one record and answers once it is
    durable; ``park`` answers at the next deadline or NOT_COORDINATOR on unload."""

    deadline: int | None = None
    chunks: dict[int, list[bytes]] = field(default_factory=dict)
    parked: dict[int, list[int]] = field(default_factory=dict)
    fail_load: bool = False

    @property
    def next_deadline(self) -> int | None:
        return self.deadline

    def put(self, token: int, partition: int, value: bytes, key: bool = True) -> list[Append]:
        return [Append(token, partition, encode_batch([(0, 0, value if key else None, value)]))]

    def park(self, token: int, partition: int, at: int) -> list[Respond | Append]:
        self.parked.setdefault(partition, []).append(token)
        self.deadline = at
        return []

    def appended(self, now_ms: int, token: int, error_code: int = 0) -> Sequence[Respond]:
        return [Respond(token, b"appended %d" % error_code)]

    def tick(self, now_ms: int) -> Sequence[Respond]:
        if self.deadline is None or now_ms < self.deadline:
            return []
        self.deadline = None
        tokens = [t for p in sorted(self.parked) for t in self.parked.pop(p)]
        return [Respond(t, b"ticked") for t in tokens]

    def load(self, partition: int, batches: bytes, last: bool = True) -> Mapping[str, int]:
        if self.fail_load and batches:
            raise errors.DecodeError("not a thing")
        chunks = self.chunks.setdefault(partition, [])
        chunks.append(batches)
        values = [r for d in chunks for b in decode_batches(d) for r in b.records]
        return {"things": len(values) if last else 0}

    def unload(self, now_ms: int, partition: int) -> Sequence[Respond]:
        return [Respond(t, b"NOT_COORDINATOR") for t in self.parked.pop(partition, [])]


@dataclass
class Host:
    config: BrokerConfig
    topics: Topics
    flusher: Flusher


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    config = BrokerConfig({"log.dirs": str(tmp_path)})
    topics = Topics(config)
    topics.load()
    with concurrent.futures.ThreadPoolExecutor(1) as executor:
        yield Host(config, topics, Flusher(executor))
        topics.close()


def runtime(host: Host, things: Things, **configs: Any) -> CoordinatorRuntime:
    internal = InternalTopic(
        name=TOPIC,
        partitions=3,
        configs={"cleanup.policy": ["compact"], **configs},
        load_buffer=64,
        unit="thing",
        contents="things",
    )
    return CoordinatorRuntime(host, things, internal)


def request(rt: CoordinatorRuntime, call: Any, *args: Any) -> bytes | asyncio.Future[bytes]:
    token = rt.new_token()
    return rt.answer(token, call(token, *args))


def test_no_partition_is_served_before_the_topic_exists(host: Host) -> None:
    async def run() -> None:
        things = Things()
        rt = runtime(host, things)
        rt.start()
        assert rt.owned == set()
        topic = rt.internal_topic()
        assert (len(topic.partitions), topic.configs) == (3, {"cleanup.policy": ["compact"]})
        assert rt.owned == {0, 1, 2}
        assert things.chunks == {0: [b""], 1: [b""], 2: [b""]}
        rt.stop()

    asyncio.run(run())


def test_a_request_is_answered_once_its_record_is_written(host: Host) -> None:
    async def run() -> None:
        things = Things()
        rt = runtime(host, things)
        rt.internal_topic()
        rt.start()
        assert request(rt, things.put, 1, b"a") == b"appended 0"
        assert host.topics.by_name[TOPIC].partitions[1].log.log_end_offset == 1
        # A partition the topic lacks: UNKNOWN_TOPIC_OR_PARTITION, and nothing written.
        code = errors.UnknownTopicOrPartition.code
        assert request(rt, things.put, 7, b"b") == b"appended %d" % code
        rt.stop()

    asyncio.run(run())


def test_a_record_the_log_refuses_is_the_requests_error(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    async def run() -> None:
        things = Things()
        rt = runtime(host, things)
        rt.internal_topic()
        rt.start()
        # A compacted topic takes no record without a key: INVALID_RECORD, not the disk's.
        assert request(rt, things.put, 1, b"a", False) == b"appended %d" % errors.InvalidRecord.code
        assert not host.topics.by_name[TOPIC].partitions[1].dir.failures
        rt.stop()

    asyncio.run(run())
    assert any(
        r.levelno == logging.WARNING and "thing coordinator's records to __things-1" in r.message
        for r in caplog.records
    )


def test_a_failed_write_is_a_storage_error(host: Host) -> None:
    async def run() -> None:
        things = Things()
        rt = runtime(host, things)
        rt.internal_topic()
        rt.start()
        partition = host.topics.by_name[TOPIC].partitions[1]
        inject_fault("write", f"/{TOPIC}-1/", errno.ENOSPC, times=1)
        try:
            code = errors.KafkaStorageError.code
            assert request(rt, things.put, 1, b"a") == b"appended %d" % code
        finally:
            clear_faults()
        # Told to the log dir's failure channel, as is the next write, which succeeds.
        assert list(partition.dir.failures) == ["ENOSPC"]
        assert request(rt, things.put, 1, b"b") == b"appended 0"
        assert partition.dir.successes == 1
        rt.stop()

    asyncio.run(run())


def test_flush_messages_makes_the_answer_wait_for_the_fsync(host: Host) -> None:
    async def run() -> None:
        things = Things()
        rt = runtime(host, things, **{"flush.messages": 1})
        rt.internal_topic()
        rt.start()
        answer = request(rt, things.put, 0, b"a")
        assert isinstance(answer, asyncio.Future) and rt.waiting == 1
        assert await asyncio.wait_for(answer, 5) == b"appended 0"
        assert host.topics.by_name[TOPIC].partitions[0].log.unflushed_messages == 0
        rt.stop()

    asyncio.run(run())


def test_partitions_are_loaded_at_start_in_chunks(host: Host) -> None:
    async def run() -> None:
        first = Things()
        rt = runtime(host, first)
        rt.internal_topic()
        rt.start()
        for value in (b"a", b"b", b"c"):
            assert request(rt, first.put, 2, value) == b"appended 0"
        rt.stop()

        things = Things()
        rt = runtime(host, things)
        rt.start()
        assert rt.owned == {0, 1, 2} and rt.loading == {0, 1, 2}
        while rt.loading:
            await asyncio.sleep(0.01)
        # Each batch is 70 bytes and a read takes 64 (at least one batch): one per chunk, then
        # the last call.
        assert [len(c) for c in things.chunks[2]] == [0, 70, 70, 70, 0]
        assert things.chunks[0] == [b"", b""]
        rt.stop()

    asyncio.run(run())


def test_a_partition_that_fails_to_load_is_given_up(host: Host) -> None:
    async def run() -> None:
        first = Things()
        rt = runtime(host, first)
        rt.internal_topic()
        rt.start()
        assert request(rt, first.put, 1, b"a") == b"appended 0"
        rt.stop()

        rt = runtime(host, Things(fail_load=True))
        rt.start()
        while rt.loading:
            await asyncio.sleep(0.01)
        assert rt.owned == {0, 2}
        rt.stop()

    asyncio.run(run())


def test_the_timer_fires_at_the_next_deadline(host: Host) -> None:
    async def run() -> None:
        things = Things()
        rt = runtime(host, things)
        rt.internal_topic()
        rt.start()
        answer = request(rt, things.park, 0, now_ms() + 20)
        assert isinstance(answer, asyncio.Future)
        assert await asyncio.wait_for(answer, 5) == b"ticked"
        assert rt.waiting == 0
        rt.stop()

    asyncio.run(run())


def test_stop_answers_parked_requests(host: Host) -> None:
    async def run() -> None:
        things = Things()
        rt = runtime(host, things)
        rt.internal_topic()
        rt.start()
        answer = request(rt, things.park, 1, 2**62)
        assert isinstance(answer, asyncio.Future) and not answer.done()
        rt.stop()
        assert answer.result() == b"NOT_COORDINATOR"

    asyncio.run(run())
