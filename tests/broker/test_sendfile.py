"""Fetch responses sent with sendfile, on both event loops, with a raw client: a reader slower
than the broker (its socket's receive buffer 4 KB, so the kernel takes each FileSlice in parts)
still gets every byte in order; pipelined requests are answered in order around responses
waiting to be sent; a topic deleted, or a segment removed by retention, while its records are
on their way changes nothing on the wire; a client that goes away mid-response harms no one.
Every test checks that the path it means was taken (partial sends, a response still queued).
Whole clients through the same path are in test_clients.py."""

from __future__ import annotations

import logging
import os
import socket
import struct
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.kgroup_broker import Wire
from support.wire import read_exactly

from kgroup import errors, protocol
from kgroup.broker import Broker
from kgroup.protocol import ApiKey
from kgroup.protocol.records import decode_batches, encode_batch

BATCH = 256 * 1024


@pytest.fixture(scope="module", params=["uvloop", "asyncio"])
def broker(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[Broker]:
    # Every partition's records through sendfile (none inlined), retention checked often.
    config = {"kgroup.fetch.sendfile.min.bytes": 0, "log.retention.check.interval.ms": 100}
    data = tmp_path_factory.mktemp(f"sendfile-{request.param}")
    with Broker(data, port=0, config=config, event_loop=request.param) as b:
        yield b


def create(w: Wire, partitions: int = 1, configs: dict[str, str] | None = None) -> str:
    name = f"sendfile-{uuid.uuid4().hex[:8]}"
    body = {
        "topics": [
            {
                "name": name,
                "num_partitions": partitions,
                "replication_factor": 1,
                "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
            }
        ],
        "timeout_ms": 5000,
    }
    assert w.request(ApiKey.CREATE_TOPICS, 5, body).body.topics[0].error_code == 0
    return name


def produce(w: Wire, topic: str, partition: int, batches: int, size: int = BATCH) -> list[bytes]:
    """``batches`` batches of one random record of ``size`` bytes each; the values."""
    values = []
    for _ in range(batches):
        value = os.urandom(size)
        body = {
            "acks": 1,
            "timeout_ms": 5000,
            "topic_data": [
                {
                    "name": topic,
                    "partition_data": [
                        {
                            "index": partition,
                            "records": encode_batch([(0, int(time.time() * 1000), None, value)]),
                        }
                    ],
                }
            ],
        }
        r = w.request(ApiKey.PRODUCE, 9, body).body.responses[0].partition_responses[0]
        assert r.error_code == 0
        values.append(value)
    return values


def fetch_body(topic: str, parts: dict[int, int], max_bytes: int = 64 << 20) -> dict[str, Any]:
    return {
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": max_bytes,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {"partition": p, "fetch_offset": o, "partition_max_bytes": max_bytes}
                    for p, o in parts.items()
                ],
            }
        ],
    }


def reference(b: Broker, topic: str, partition: int, offset: int) -> bytes:
    """What the log holds for a fetch at ``offset``, read into memory (not through sendfile)."""
    assert b.state is not None
    lg = b.state.topics.by_name[topic].partitions[partition].log
    return lg.read(offset, 64 << 20, lg.log_end_offset, True)


def slow_socket(b: Broker) -> socket.socket:
    """A connection whose receive buffer is 4 KB: the broker's sends outrun it."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    host, _, port = b.bootstrap_servers.rpartition(":")
    s.connect((host, int(port)))
    s.settimeout(30)
    return s


def send(s: socket.socket, cid: int, api: int, version: int, body: dict[str, Any]) -> None:
    s.sendall(protocol.encode_request(api, version, cid, "slow", body))


def read_response(
    s: socket.socket,
    api: int,
    version: int,
    slowly: int = 0,
    midway: Callable[[], None] | None = None,
) -> Any:
    """One response; the first ``slowly`` bytes 4 KB at a time with a pause between reads,
    then ``midway()``, then the rest."""
    size = protocol.frame_size(read_exactly(s, 4))
    got = bytearray()
    while len(got) < min(slowly, size):
        got += read_exactly(s, min(4096, size - len(got)))
        time.sleep(0.001)
    if midway is not None:
        midway()
    got += read_exactly(s, size - len(got))
    return protocol.decode_response(api, version, bytes(got))


def records_of(response: Any, partition: int = 0) -> bytes:
    (t,) = response.body.responses
    (p,) = [p for p in t.partitions if p.partition_index == partition]
    assert p.error_code == 0
    return p.records


def connection_of(b: Broker, s: socket.socket) -> Any:
    """The broker's side of ``s`` (the broker's thread accepts it in its own time)."""
    assert b.state is not None
    port = s.getsockname()[1]
    found: list[Any] = []

    def accepted() -> bool:
        assert b.state is not None
        found[:] = [c for c in list(b.state.connections) if c.peer.endswith(f":{port}")]
        return len(found) == 1

    wait_until(accepted)
    return found[0]


def wait_until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.network
@pytest.mark.parametrize("version", [4, 12])
def test_a_slow_reader_gets_every_byte_in_order(broker: Broker, version: int) -> None:
    assert broker.state is not None
    stats = broker.state.send_stats
    with Wire(broker.bootstrap_servers) as w:
        topic = create(w)
        values = produce(w, topic, 0, 24)  # 6 MB in one segment: one FileSlice
    expected = reference(broker, topic, 0, 0)
    partial, sent = stats.partial, stats.sendfile_bytes
    with slow_socket(broker) as s:
        send(s, 1, ApiKey.FETCH, version, fetch_body(topic, {0: 0}))
        r = read_response(s, ApiKey.FETCH, version, slowly=256 * 1024)
    assert r.correlation_id == 1
    records = records_of(r)
    assert records == expected
    assert [rec.value for b in decode_batches(records) for rec in b.records] == values
    # The kernel took the slice in parts: the doorbell path ran, and sendfile sent the bulk.
    assert stats.partial > partial
    assert stats.sendfile_bytes - sent > len(expected) // 2


@pytest.mark.network
def test_pipelined_requests_are_answered_in_order(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        topic = create(w, partitions=2)
        produce(w, topic, 0, 16)
        produce(w, topic, 1, 3, size=100)
    big, small = reference(broker, topic, 0, 0), reference(broker, topic, 1, 0)
    later = reference(broker, topic, 0, 8)
    requests: list[tuple[int, int, dict[str, Any]]] = [
        (ApiKey.FETCH, 12, fetch_body(topic, {0: 0})),
        (ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"}),
        (ApiKey.FETCH, 4, fetch_body(topic, {1: 0})),
        (ApiKey.METADATA, 1, {"topics": [{"name": topic}]}),
        (ApiKey.FETCH, 4, fetch_body(topic, {0: 8})),
        (ApiKey.FETCH, 13, fetch_body(topic, {0: 0, 1: 0})),
        (ApiKey.API_VERSIONS, 0, {}),
    ]
    assert broker.state is not None
    topic_id = broker.state.topics.by_name[topic].id
    requests[5][2]["topics"][0] |= {"topic_id": topic_id, "topic": ""}
    with slow_socket(broker) as s:
        for cid, (api, version, body) in enumerate(requests, 1):
            send(s, cid, api, version, body)
        # Wait until the answers are queued behind the first, which the socket cannot take.
        conn = connection_of(broker, s)
        wait_until(lambda: conn._output.pending > 1)
        answers = [read_response(s, api, v, slowly=64 * 1024) for api, v, _ in requests]
    assert [a.correlation_id for a in answers] == list(range(1, len(requests) + 1))
    assert records_of(answers[0]) == big
    assert answers[1].body.error_code == 0
    assert records_of(answers[2], 1) == small
    assert answers[3].body.topics[0].name == topic
    assert records_of(answers[4]) == later
    both = answers[5].body.responses[0].partitions
    # KIP-74: the first partition's records come whole; the second fits in what is left.
    assert both[0].records == big and both[1].records == small
    assert answers[6].body.error_code == 0


@pytest.mark.network
def test_a_topic_deleted_while_its_records_are_sent(broker: Broker) -> None:
    assert broker.state is not None
    with Wire(broker.bootstrap_servers) as w:
        topic = create(w)
        values = produce(w, topic, 0, 24)
        expected = reference(broker, topic, 0, 0)
        folder = broker.state.config.data_dir / f"{topic}-0"
        with slow_socket(broker) as s:

            def delete() -> None:
                conn = connection_of(broker, s)
                assert conn._output.pending > 0, "the response is no longer on its way"
                body = {"topic_names": [topic], "timeout_ms": 5000}
                r = w.request(ApiKey.DELETE_TOPICS, 3, body)
                assert r.body.responses[0].error_code == 0
                assert not folder.exists()

            send(s, 1, ApiKey.FETCH, 12, fetch_body(topic, {0: 0}))
            r = read_response(s, ApiKey.FETCH, 12, slowly=16 * 1024, midway=delete)
        # Served whole from the deleted files; the broker serves on.
        assert r.correlation_id == 1
        assert records_of(r) == expected
        assert [rec.value for b in decode_batches(records_of(r)) for rec in b.records] == values
        assert w.request(ApiKey.METADATA, 1, {"topics": []}).body.brokers


@pytest.mark.network
def test_a_segment_removed_by_retention_while_its_records_are_sent(broker: Broker) -> None:
    assert broker.state is not None
    with Wire(broker.bootstrap_servers) as w:
        topic = create(w, configs={"segment.bytes": str(4 << 20)})
        values = produce(w, topic, 0, 24)  # 6 MB: a full first segment, then the active one
        lg = broker.state.topics.by_name[topic].partitions[0].log
        assert lg.segment_count == 2
        expected = reference(broker, topic, 0, 0)
        first = sorted(p for p in lg.path.iterdir() if p.suffix == ".log")[0]
        with slow_socket(broker) as s:

            def retain() -> None:
                conn = connection_of(broker, s)
                assert conn._output.pending > 0, "the response is no longer on its way"
                body = {
                    "resources": [
                        {
                            "resource_type": 2,
                            "resource_name": topic,
                            "configs": [
                                {"name": "segment.bytes", "value": str(4 << 20)},
                                {"name": "retention.bytes", "value": "1"},
                            ],
                        }
                    ]
                }
                r = w.request(ApiKey.ALTER_CONFIGS, 1, body)
                assert r.body.responses[0].error_code == 0
                wait_until(lambda: lg.log_start_offset > 0 and not first.exists())

            send(s, 1, ApiKey.FETCH, 12, fetch_body(topic, {0: 0}))
            r = read_response(s, ApiKey.FETCH, 12, slowly=16 * 1024, midway=retain)
        assert records_of(r) == expected
        got = [rec.value for b in decode_batches(records_of(r)) for rec in b.records]
        assert got == values[: len(got)] and len(got) >= 8
        # The next fetch from offset 0 is out of range, as in Kafka.
        f = w.request(ApiKey.FETCH, 12, fetch_body(topic, {0: 0})).body.responses[0]
        assert f.partitions[0].error_code == errors.OffsetOutOfRange.code


@pytest.mark.network
@pytest.mark.parametrize("how", ["reset", "close"])
def test_a_client_gone_mid_response_harms_no_one(
    broker: Broker, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert broker.state is not None
    with Wire(broker.bootstrap_servers) as w:
        topic = create(w)
        produce(w, topic, 0, 24)
    expected = reference(broker, topic, 0, 0)
    caplog.set_level(logging.INFO, logger="kgroup.broker")
    s = slow_socket(broker)
    send(s, 1, ApiKey.FETCH, 12, fetch_body(topic, {0: 0}))
    read_exactly(s, 16 * 1024)
    conn = connection_of(broker, s)
    assert conn._output.pending > 0
    if how == "reset":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    # The broker notices, drops what was queued (closing its files), and serves everyone else.
    wait_until(lambda: conn not in broker.state.connections)
    assert conn.in_flight == 0
    with Wire(broker.bootstrap_servers) as w:
        r = w.request(ApiKey.FETCH, 12, fetch_body(topic, {0: 0}))
        assert records_of(r) == expected
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
