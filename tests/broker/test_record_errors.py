"""Per-record errors in Produce responses (KIP-467): a batch whose records fail validation is
refused whole, each failing record named by its index with Kafka's reason (`record_errors`,
Produce v8+) and the failure summed up in `error_message`. The same raw requests go to Apache
Kafka and to kgroup's broker, and the answers are compared field by field; librdkafka (0011's
sub-test) then fails the keyless record with INVALID_RECORD and its batch-mates with its own
_INVALID_DIFFERENT_RECORD."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from support.kgroup_broker import Wire

from kgroup import errors
from kgroup.broker import Broker
from kgroup.protocol import ApiKey
from kgroup.protocol.records import encode_batch

HOUR_MS = 3_600_000
# Both brokers get the same topic configs, so that the bounds of a timestamp error read alike.
TOPIC_CONFIG = {
    "cleanup.policy": "compact",
    "message.timestamp.before.max.ms": str(HOUR_MS),
    "message.timestamp.after.max.ms": str(HOUR_MS),
}


def _create(bootstrap: str, name: str, config: dict[str, str]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(name, 1, 1, config=config)]).values():
        f.result(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        md = admin.list_topics(name, timeout=10).topics.get(name)
        if md is not None and md.error is None and md.partitions[0].leader >= 0:
            return
        time.sleep(0.1)
    raise TimeoutError(f"{name} has no leader")


def _cases(now: int) -> dict[str, tuple[int, bytes]]:
    """Each case's partition and record set."""
    good = encode_batch([(0, now, b"k", b"v")])
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 0xFF
    return {
        # 0011's case: keyless records among keyed ones, on a compacted topic.
        "keyless": (
            0,
            encode_batch(
                [
                    (0, now, b"k0", b"v0"),
                    (1, now, None, b"v1"),
                    (2, now, b"k2", b"v2"),
                    (3, now, None, b"v3"),
                ]
            ),
        ),
        # Five failures: the summary shows the first three.
        "five": (0, encode_batch([(i, now, None if i != 2 else b"k", b"v") for i in range(6)])),
        "zstd": (
            0,
            encode_batch([(0, now, None, b"v0"), (1, now, b"k1", b"v1")], compression="zstd"),
        ),
        # A timestamp error anywhere makes the whole INVALID_TIMESTAMP.
        "timestamp": (0, encode_batch([(0, 1000, b"k0", b"v0"), (1, now, None, b"v1")])),
        # Failures that are not a record's: no record errors, no message.
        "crc": (0, bytes(bad_crc)),
        "two batches": (0, good + good),
        "no such partition": (5, good),
        "good": (0, good),
    }


def _answers(bootstrap: str, name: str) -> dict[tuple[str, int], str]:
    _create(bootstrap, name, TOPIC_CONFIG)
    out = {}
    with Wire(bootstrap) as w:
        for case, (index, records) in _cases(int(time.time() * 1000)).items():
            for version in (7, 8, 9, 11):
                partition = {"index": index, "records": records}
                produce = {
                    "acks": -1,
                    "timeout_ms": 5000,
                    "topic_data": [{"name": name, "partition_data": [partition]}],
                }
                body = w.request(ApiKey.PRODUCE, version, produce).body
                p = body.responses[0].partition_responses[0]
                # Times in a timestamp error's bounds differ between the two runs.
                out[case, version] = re.sub(r"\[\d+, \d+\]", "[T, T]", repr(p))
    return out


def test_record_errors_are_kafkas(broker: Broker, kafka: Any) -> None:
    name = f"rec-errors-{uuid.uuid4().hex[:8]}"
    ours = _answers(broker.bootstrap_servers, name)
    theirs = _answers(kafka.bootstrap, name)
    for key in theirs:
        assert ours[key] == theirs[key], key
    keyless = ours["keyless", 9]
    assert f"'error_code': {errors.InvalidRecord.code}" in keyless
    assert "'batch_index': 1" in keyless and "'batch_index': 3" in keyless
    assert "record_errors" not in ours["keyless", 7]
    assert f"'error_code': {errors.InvalidTimestamp.code}" in ours["timestamp", 9]


def test_librdkafka_fails_the_keyless_record_and_its_batch_mates(broker: Broker) -> None:
    # librdkafka's 0011 test_message_single_partition_record_fail(0).
    name = f"rec-errors-{uuid.uuid4().hex[:8]}"
    _create(broker.bootstrap_servers, name, {"cleanup.policy": "compact"})
    got: list[int] = []
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 100})
    for i in range(20):
        key = None if i % 10 == 0 else f"k{i}".encode()
        p.produce(name, b"v", key, partition=0, on_delivery=lambda e, m: got.append(e.code()))
    assert p.flush(15) == 0
    assert got.count(KafkaError.INVALID_RECORD) == 2
    assert got.count(KafkaError._INVALID_DIFFERENT_RECORD) == 18


@pytest.mark.parametrize("keyed", [True, False])
def test_a_batch_of_good_records_is_appended(broker: Broker, keyed: bool) -> None:
    name = f"rec-errors-{uuid.uuid4().hex[:8]}"
    _create(
        broker.bootstrap_servers, name, {"cleanup.policy": "delete" if not keyed else "compact"}
    )
    batch = encode_batch([(0, int(time.time() * 1000), b"k" if keyed else None, b"v")])
    produce = {
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [{"name": name, "partition_data": [{"index": 0, "records": batch}]}],
    }
    with Wire(broker.bootstrap_servers) as w:
        p = w.request(ApiKey.PRODUCE, 9, produce).body.responses[0].partition_responses[0]
    assert (p.error_code, p.base_offset, p.record_errors, p.error_message) == (0, 0, [], None)
