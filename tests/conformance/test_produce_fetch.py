"""Produce, Fetch, ListOffsets, DeleteRecords, OffsetForLeaderEpoch and InitProducerId on both
brokers: valid and invalid batches (bad CRC, garbage, old magic, sizes over max.message.bytes,
timestamps outside message.timestamp.{before,after}.max.ms, LogAppendTime), fetches in and out
of range, and offsets by time."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from support.differential import Differential, Peer, create_topic, wait_until

from kgroup.protocol import ApiKey
from kgroup.protocol.records import Record, encode_batch

pytestmark = pytest.mark.network

NOW = int(time.time() * 1000)
HOUR = 3_600_000


def batch(n: int = 3, ts: int = NOW, first: int = 0, **kw: Any) -> bytes:
    records = [
        Record(first + i, ts + i, f"k{i}".encode(), f"v{i}".encode(), (("h", b"x"),))
        for i in range(n)
    ]
    return encode_batch(records, base_offset=first, **kw)


def produce(
    d: Differential,
    topic: str,
    records: bytes,
    partition: int = 0,
    acks: int = -1,
    ignore: tuple[str, ...] = (),
) -> Any:
    return d.request(
        ApiKey.PRODUCE,
        11,
        {
            "transactional_id": None,
            "acks": acks,
            "timeout_ms": 5000,
            "topic_data": [
                {"name": topic, "partition_data": [{"index": partition, "records": records}]}
            ],
        },
        ignore=ignore,
    )


def fetch_body(
    topic: str,
    offset: int,
    max_bytes: int = 1 << 20,
    partition: int = 0,
    wait_ms: int = 0,
    session_epoch: int = -1,
) -> Any:
    def body(p: Peer) -> dict[str, Any]:
        return {
            "replica_id": -1,
            "max_wait_ms": wait_ms,
            "min_bytes": 1,
            "max_bytes": max_bytes,
            "isolation_level": 0,
            "session_id": p.get("session", 0) if session_epoch > 0 else 0,
            "session_epoch": session_epoch,
            "topics": [
                {
                    "topic_id": p.get(f"topic_id:{topic}", uuid.UUID(int=1)),
                    "partitions": [
                        {
                            "partition": partition,
                            "current_leader_epoch": -1,
                            "fetch_offset": offset,
                            "last_fetched_epoch": -1,
                            "log_start_offset": -1,
                            "partition_max_bytes": max_bytes,
                        }
                    ],
                }
            ],
            "forgotten_topics_data": [],
            "rack_id": "",
        }

    return body


def fetch(d: Differential, topic: str, offset: int, **kw: Any) -> Any:
    return d.request(ApiKey.FETCH, 17, fetch_body(topic, offset, **kw))


def list_offsets(
    d: Differential, topic: str, *timestamps: int, partition: int = 0, ignore: tuple = ()
) -> Any:
    # One request per timestamp: Kafka refuses a partition twice in one request.
    for ts in timestamps:
        d.request(
            ApiKey.LIST_OFFSETS,
            9,
            {
                "replica_id": -1,
                "isolation_level": 0,
                "topics": [
                    {
                        "name": topic,
                        "partitions": [
                            {
                                "partition_index": partition,
                                "current_leader_epoch": -1,
                                "timestamp": ts,
                            }
                        ],
                    }
                ],
            },
            ignore=ignore,
        )


def test_produce_and_fetch(diff: Differential) -> None:
    topic = create_topic(diff, 2)
    produce(diff, topic, batch(3))
    produce(diff, topic, batch(2, compression="gzip"), acks=1)
    produce(diff, topic, batch(1), partition=1)
    fetch(diff, topic, 0)
    fetch(diff, topic, 3)
    fetch(diff, topic, 4)  # inside the second batch: the whole batch comes back
    fetch(diff, topic, 5)  # at the end
    fetch(diff, topic, 5, wait_ms=200)  # at the end, waiting for records that do not come
    fetch(diff, topic, 6)  # past the end
    fetch(diff, topic, -1)
    fetch(diff, topic, 0, max_bytes=10)  # smaller than a batch: the first batch anyway
    fetch(diff, topic, 0, partition=7)
    fetch(diff, "unknown-topic", 0)
    # Earliest, latest, max timestamp, earliest local (KIP-405), earliest pending upload
    # (KIP-1005), and by time.
    list_offsets(diff, topic, -2, -1, -3, -4, -5, NOW, NOW + 1, NOW + 3, NOW + HOUR, 0)
    list_offsets(diff, topic, -1, partition=9)
    # Fetch sessions (KIP-227): kgroup opens none, answering session id 0 as the protocol
    # allows (docs/kafka-differences.md); a session neither knows is FETCH_SESSION_ID_NOT_FOUND.
    diff.request(
        ApiKey.FETCH,
        17,
        fetch_body(topic, 0, session_epoch=0),
        ignore=["session_id"],
        expect=lambda b: b.session_id == 0,
    )
    diff.each(lambda p: p.vars.__setitem__("session", 12345))
    diff.request(ApiKey.FETCH, 17, fetch_body(topic, 5, session_epoch=1))
    list_offsets(diff, "nope-" + uuid.uuid4().hex[:6], -1)


def test_produce_errors(diff: Differential) -> None:
    topic = create_topic(diff, 1, configs={"max.message.bytes": "2000"})
    produce(diff, topic, batch(), acks=2)
    produce(diff, topic, batch(), partition=3)
    produce(diff, "nope-" + uuid.uuid4().hex[:6], batch())
    bad = bytearray(batch())
    bad[-1] ^= 0xFF  # the CRC covers it
    produce(diff, topic, bytes(bad))
    produce(diff, topic, b"\x00" * 70)
    produce(diff, topic, batch()[:-5])
    produce(diff, topic, encode_batch([Record(0, NOW, b"k", b"v")], magic=1))
    # A batch-level INVALID_RECORD (a base offset other than 0): no message, as in Kafka.
    produce(diff, topic, batch(first=5))
    big = encode_batch([Record(0, NOW, None, b"x" * 3000)])
    produce(diff, topic, big)
    produce(diff, topic, encode_batch([Record(0, NOW, None, b"x" * 3000)], compression="gzip"))
    produce(diff, topic, b"")
    list_offsets(diff, topic, -1)


def test_timestamps(diff: Differential) -> None:
    bounded = create_topic(
        diff,
        configs={
            "message.timestamp.before.max.ms": str(HOUR),
            "message.timestamp.after.max.ms": str(HOUR),
        },
    )
    produce(diff, bounded, batch(2, ts=NOW - 2 * HOUR))
    produce(diff, bounded, batch(2, ts=NOW + 2 * HOUR))
    produce(diff, bounded, batch(2))
    list_offsets(diff, bounded, -1, -3)
    appended = create_topic(diff, configs={"message.timestamp.type": "LogAppendTime"})
    produce(diff, appended, batch(2, ts=NOW - 10 * HOUR))
    fetch(diff, appended, 0)
    # By time: LogAppendTime's stamps are the broker's own, so ask relative to now.
    list_offsets(
        diff,
        appended,
        -2,
        -1,
        -3,
        NOW - 10 * HOUR,
        int(time.time() * 1000) + HOUR,
        ignore=("timestamp",),
    )


def test_compacted_topic_refuses_keyless_records(diff: Differential) -> None:
    topic = create_topic(diff, configs={"cleanup.policy": "compact"})
    keyless = encode_batch([Record(0, NOW, b"k", b"v"), Record(1, NOW, None, b"v")])
    produce(diff, topic, keyless)
    produce(diff, topic, encode_batch([Record(0, NOW, b"k", b"v")]))


def test_delete_records_and_leader_epochs(diff: Differential) -> None:
    topic = create_topic(diff)
    produce(diff, topic, batch(5))

    def delete(offset: int, partition: int = 0) -> Any:
        return diff.request(
            ApiKey.DELETE_RECORDS,
            2,
            {
                "topics": [
                    {
                        "name": topic,
                        "partitions": [{"partition_index": partition, "offset": offset}],
                    }
                ],
                "timeout_ms": 5000,
            },
        )

    delete(2)
    delete(1)
    delete(9)
    delete(-1)
    delete(0, partition=4)
    list_offsets(diff, topic, -2, -1)
    fetch(diff, topic, 0)
    fetch(diff, topic, 2)
    for epoch in (0, 1, -1):
        diff.request(
            ApiKey.OFFSET_FOR_LEADER_EPOCH,
            4,
            {
                "replica_id": -1,
                "topics": [
                    {
                        "topic": topic,
                        "partitions": [
                            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": epoch}
                        ],
                    }
                ],
            },
        )


def test_idempotent_produce(diff: Differential) -> None:
    topic = create_topic(diff)
    body = {
        "transactional_id": None,
        "transaction_timeout_ms": 60_000,
        "producer_id": -1,
        "producer_epoch": -1,
    }
    # A fresh Kafka answers COORDINATOR_LOAD_IN_PROGRESS until its controller has handed it a
    # block of producer ids.
    for p in diff.peers:
        wait_until(
            lambda p=p: (
                p.conn("main").request(ApiKey.INIT_PRODUCER_ID, 5, body).body.error_code == 0
            )
        )
    answer = diff.request(ApiKey.INIT_PRODUCER_ID, 5, body)
    diff.keep("pid", answer, lambda b: (b.producer_id, b.producer_epoch))

    def send(seq: int, n: int = 2) -> Any:
        return diff.request(
            ApiKey.PRODUCE,
            11,
            lambda p: {
                "transactional_id": None,
                "acks": -1,
                "timeout_ms": 5000,
                "topic_data": [
                    {
                        "name": topic,
                        "partition_data": [
                            {
                                "index": 0,
                                "records": batch(
                                    n,
                                    producer_id=p["pid"][0],
                                    producer_epoch=p["pid"][1],
                                    base_sequence=seq,
                                ),
                            }
                        ],
                    }
                ],
            },
        )

    send(0)
    send(2)
    send(2)  # a duplicate: answered with the first write's offset
    send(7)  # a gap
    fetch(diff, topic, 0)
