"""Client quotas enforced as Apache Kafka enforces them (its ClientQuotaManager), side by side
on the raw wire: a Produce over its client's byte rate is written and answered with the
throttle time, (rate - bound) / bound of the measured window, and the broker reads nothing more
from that connection meanwhile (KIP-219); a Fetch over its rate is answered with the throttle
time and no records. Each test uses its own client id; its quotas are removed at the end (the
Apache Kafka is shared by the session)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from support.kgroup_broker import Wire

from kgroup.broker import Broker
from kgroup.broker.quotas import Quotas, Rate
from kgroup.protocol import ApiKey
from kgroup.protocol.records import encode_batch

pytestmark = [pytest.mark.network]

#: The rate bound in bytes/s, and a record that takes one request just over ten seconds of it
#: (Kafka measures over at least ten one-second windows): a throttle of about 300 ms.
BOUND = 10_000
VALUE = 103_000
#: SETTLE is how long a new quota takes to apply: Kafka's brokers read it from the metadata
#: log (kgroup's applies it at once).
SETTLE = 1.5


def alter(w: Wire, client: str, key: str, value: float | None) -> None:
    body = {
        "entries": [
            {
                "entity": [{"entity_type": "client-id", "entity_name": client}],
                "ops": [{"key": key, "value": value or 0.0, "remove": value is None}],
            }
        ],
        "validate_only": False,
    }
    r = w.request(ApiKey.ALTER_CLIENT_QUOTAS, 1, body)
    assert r.body.entries[0].error_code == 0, r.body.entries[0].error_message


@pytest.fixture(params=["kafka", "kgroup"])
def bootstrap(request: pytest.FixtureRequest, broker: Broker) -> str:
    if request.param == "kgroup":
        return broker.bootstrap_servers
    return request.getfixturevalue("kafka").bootstrap


@pytest.fixture
def client(bootstrap: str) -> Iterator[str]:
    name = f"quota-{uuid.uuid4().hex[:8]}"
    yield name
    with Wire(bootstrap) as w:
        for key in ("producer_byte_rate", "consumer_byte_rate"):
            alter(w, name, key, None)


def create(w: Wire) -> str:
    name = f"quota-{uuid.uuid4().hex[:8]}"
    body = {
        "topics": [{"name": name, "num_partitions": 1, "replication_factor": 1, "configs": []}],
        "timeout_ms": 10000,
    }
    assert w.request(ApiKey.CREATE_TOPICS, 5, body).body.topics[0].error_code == 0
    return name


def produce_body(topic: str, value: bytes) -> dict[str, Any]:
    records = encode_batch([(0, int(time.time() * 1000), None, value)])
    return {
        "acks": 1,
        "timeout_ms": 10000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }


def fetch_body(topic: str) -> dict[str, Any]:
    part = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
    return {
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "topics": [{"topic": topic, "partitions": [part]}],
    }


def test_produce_over_its_rate_is_written_throttled_and_muted(bootstrap: str, client: str) -> None:
    with Wire(bootstrap, timeout=30) as w:
        topic = create(w)
        alter(w, client, "producer_byte_rate", BOUND)
        time.sleep(SETTLE)
        r = w.request(ApiKey.PRODUCE, 9, produce_body(topic, os.urandom(VALUE)), client)
        part = r.body.responses[0].partition_responses[0]
        assert part.error_code == 0 and part.base_offset == 0
        throttle = r.body.throttle_time_ms
        assert 250 <= throttle <= 400, throttle
        # Muted: the next request is read only once the throttle is over.
        start = time.monotonic()
        w.request(ApiKey.API_VERSIONS, 3, {"client_software_name": "t",
                                           "client_software_version": "1"}, client)  # fmt: skip
        waited = (time.monotonic() - start) * 1000
        assert waited >= throttle - 60, (waited, throttle)
        # Within its rate again (the window has grown to ten and a half seconds), a small
        # produce is not throttled.
        time.sleep(0.5)
        r = w.request(ApiKey.PRODUCE, 9, produce_body(topic, b"x"), client)
        assert r.body.throttle_time_ms == 0


def test_fetch_over_its_rate_gets_no_records_and_the_throttle(bootstrap: str, client: str) -> None:
    with Wire(bootstrap, timeout=30) as w:
        topic = create(w)
        w.request(ApiKey.PRODUCE, 9, produce_body(topic, os.urandom(VALUE)), "writer")
        alter(w, client, "consumer_byte_rate", BOUND)
        time.sleep(SETTLE)
        r = w.request(ApiKey.FETCH, 12, fetch_body(topic), client)
        assert r.body.error_code == 0
        assert 250 <= r.body.throttle_time_ms <= 400, r.body.throttle_time_ms
        assert [t.partitions for t in r.body.responses] in ([], [[]])
        # The records were not counted: a second and a half later (a window of 10.5 s) the same
        # fetch is within the rate, and served. Counted, it would be twice over.
        time.sleep(1.5)
        r = w.request(ApiKey.FETCH, 12, fetch_body(topic), client)
        assert r.body.throttle_time_ms == 0
        assert [len(p.records) for t in r.body.responses for p in t.partitions] == [
            len(produce_body(topic, bytes(VALUE))["topic_data"][0]["partition_data"][0]["records"])
        ]


def test_rate_counts_at_least_all_but_one_window() -> None:
    # Kafka's Rate: 11 samples of 1 s; with less than 10 s elapsed it divides by 10 s.
    rate = Rate(1000, 11)
    rate.record(5000, 0)
    assert rate.measure(0) == 500
    assert rate.window_size(0) == 10_000
    for t in range(1, 15):
        rate.record(1000, t * 1000)
    # Samples older than 11 s are gone: the eleven from 4 s on, over the 10.5 s since 4 s.
    assert rate.measure(14_500) == pytest.approx(11 * 1000 / 10.5)


def test_a_sample_expires_by_its_last_event_and_is_cleared_to_now() -> None:
    # Kafka 4.1's SampledStat: a sample whose last event is samples x window old is reset to
    # now (start and value), and the rate divides by the time since the oldest start. Two
    # windows of 1 s: an event at 0, then 29 at 1.5 s; at 2 s the first sample expires, and the
    # window is 0.5 s padded to one whole window: 1.5 s (the connection rate test beside Kafka
    # waits 500 ms for it where a sample kept a window longer would wait 50).
    rate = Rate(1000, 2)
    rate.record(1, 0)
    for _ in range(29):
        rate.record(1, 1500)
    assert rate.window_size(1999) == 1999
    assert rate.window_size(2000) == 1500
    assert rate.measure(2000) == pytest.approx(29 / 1.5)
    # A sample with events until lately is kept, though it started long ago (overlapping).
    rate = Rate(1000, 2)
    for t in range(0, 900, 100):
        rate.record(1, t)
    rate.record(1, 2500)
    assert rate.window_size(2700) == 2700


def test_quotas_resolve_at_the_most_specific_level(tmp_path) -> None:
    q = Quotas(tmp_path)

    def set_(entity: tuple[tuple[str, str | None], ...], value: float) -> None:
        assert q.alter([(entity, [("producer_byte_rate", value, False)])], False)[0][1] is None

    set_((("client-id", None),), 1)
    set_((("user", "alice"),), 2)
    set_((("client-id", "c1"), ("user", "alice")), 3)
    assert q._resolve("producer_byte_rate", "bob", "c9") == (("", "c9"), 1)
    assert q._resolve("producer_byte_rate", "alice", "c9") == (("alice", ""), 2)
    assert q._resolve("producer_byte_rate", "alice", "c1") == (("alice", "c1"), 3)
    assert q._resolve("consumer_byte_rate", "alice", "c1") is None
    # Kept across a restart.
    assert Quotas(tmp_path).values == q.values


def test_group_requests_count_against_request_percentage(bootstrap: str, client: str) -> None:
    # The group apis' time counts against request_percentage too (kgroup's coordinator writes
    # their whole answers: the throttle is put in them after), and a throttled answer mutes the
    # connection. A tiny quota: some Heartbeat is throttled soon, on both brokers.
    with Wire(bootstrap, timeout=30) as w:
        alter(w, client, "request_percentage", 0.001)
        time.sleep(SETTLE)
        body = {
            "group_id": f"quota-{uuid.uuid4().hex[:8]}",
            "generation_id": 1,
            "member_id": "nobody",
            "group_instance_id": None,
        }
        throttle = 0
        for _ in range(2000):
            r = w.request(ApiKey.HEARTBEAT, 4, body, client)
            assert r.body.error_code != 0  # no such member
            throttle = r.body.throttle_time_ms
            if throttle:
                break
        alter(w, client, "request_percentage", None)
        assert throttle > 0
