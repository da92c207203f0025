"""The broker's answers on the wire, request by request, with a raw client: versions, errors,
bad input. What real clients do is in test_clients.py."""

from __future__ import annotations

import asyncio
import socket
import struct
import time
import uuid

import pytest
from support.kgroup_broker import Wire
from support.wire import read_frame

from kgroup import errors, protocol
from kgroup.broker import Broker
from kgroup.broker.handlers import HANDLERS
from kgroup.client.connection import Connection
from kgroup.protocol import ApiKey
from kgroup.protocol.records import decode_batches, encode_batch


def test_api_versions_lists_every_handler_at_every_version(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        for version in range(0, 5):
            body = {"client_software_name": "kgroup-test", "client_software_version": "1.0"}
            r = w.request(ApiKey.API_VERSIONS, version, body if version >= 3 else {})
            assert r.body.error_code == 0
            ranges = {k.api_key: (k.min_version, k.max_version) for k in r.body.api_keys}
            # Share groups' handlers too: group.share.enable is on by default (tests/share/).
            assert ranges == {k: m.VERSIONS for k, m in HANDLERS.items()}
            # Every advertised version is one the codec speaks (Kafka 3.9's range).
            for key, (lo, hi) in ranges.items():
                assert protocol.API_VERSIONS[key][0] <= lo <= hi <= protocol.API_VERSIONS[key][1]


#: SHARE_APIS are KIP-932's client-facing apis, which the codec declares (Kafka 4.2's).
SHARE_APIS = {
    ApiKey.SHARE_GROUP_HEARTBEAT,
    ApiKey.SHARE_GROUP_DESCRIBE,
    ApiKey.SHARE_FETCH,
    ApiKey.SHARE_ACKNOWLEDGE,
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
    ApiKey.ALTER_SHARE_GROUP_OFFSETS,
    ApiKey.DELETE_SHARE_GROUP_OFFSETS,
}
#: SHARE_OFFSET_APIS are those the broker has no handler for yet.
SHARE_OFFSET_APIS = {
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
    ApiKey.ALTER_SHARE_GROUP_OFFSETS,
    ApiKey.DELETE_SHARE_GROUP_OFFSETS,
}


def test_share_group_offset_apis_are_not_advertised(broker: Broker) -> None:
    """Share groups are on by default (``group.share.enable``, as Kafka 4.2+'s
    ``share.version=1``): 76-79 are advertised at Kafka 4.4's versions. The share group offset
    apis (90-92) have no handler yet, so ApiVersions leaves them out and kgroup's own client
    does not take them as supported; one sent anyway closes the connection, kgroup's answer to
    any api it has no handler for."""
    assert {int(k) for k in SHARE_APIS} <= set(protocol.API_VERSIONS)
    assert SHARE_APIS & set(HANDLERS) == SHARE_APIS - SHARE_OFFSET_APIS
    with Wire(broker.bootstrap_servers) as w:
        for version in range(0, 5):
            body = {"client_software_name": "kgroup-test", "client_software_version": "1.0"}
            r = w.request(ApiKey.API_VERSIONS, version, body if version >= 3 else {})
            ranges = {k.api_key: (k.min_version, k.max_version) for k in r.body.api_keys}
            assert {k: v for k, v in ranges.items() if k in SHARE_APIS} == {
                76: (1, 1),
                77: (1, 1),
                78: (1, 2),
                79: (1, 2),
            }, version

    async def negotiate() -> None:
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        conn = Connection(host, int(port), node_id=-1, client_id="t", request_timeout_ms=5000)
        await conn.open(5)
        try:
            assert conn.supports(ApiKey.SHARE_GROUP_HEARTBEAT)
            for key in SHARE_OFFSET_APIS:
                assert not conn.supports(key), key
                with pytest.raises(errors.UnsupportedVersion):
                    conn.version(key)
        finally:
            conn.close()

    asyncio.run(negotiate())
    with Wire(broker.bootstrap_servers) as w:
        body = {"groups": [{"group_id": "g", "topics": None}]}
        w.send(protocol.encode_request(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 0, 5, "c", body))
        assert w.closed_by_peer()


def test_an_unknown_api_versions_version_gets_a_v0_answer(broker: Broker) -> None:
    # As Kafka: UNSUPPORTED_VERSION in a v0 body, with the ranges, so the client can retry.
    with Wire(broker.bootstrap_servers) as w:
        frame = struct.pack(">hhi", 18, 9, 77) + struct.pack(">h", 1) + b"c" + b"\x00"
        w.send(struct.pack(">i", len(frame)) + frame)
        from support.wire import read_frame

        r = protocol.decode_response(18, 0, read_frame(w.sock))
        assert (r.correlation_id, r.body.error_code) == (77, errors.UnsupportedVersion.code)
        # Every handler's api.
        assert {k.api_key for k in r.body.api_keys} == set(HANDLERS)
        # The connection stays open.
        assert w.request(ApiKey.API_VERSIONS, 0, {}).body.error_code == 0


def test_kip511_names_are_checked(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        body = {"client_software_name": "-bad name", "client_software_version": "1"}
        r = w.request(ApiKey.API_VERSIONS, 3, body)
        assert r.body.error_code == errors.InvalidRequest.code


@pytest.mark.parametrize(
    ("frame", "why"),
    [
        (struct.pack(">hhi", 1234, 0, 1) + struct.pack(">h", -1), "unknown api key"),
        (struct.pack(">hhi", 3, 99, 1) + struct.pack(">h", -1), "unsupported version"),
        (struct.pack(">hhi", 3, 1, 1) + struct.pack(">h", -1) + b"\xff\xff\xff", "garbage body"),
        (b"\x00", "short header"),
    ],
)
def test_bad_requests_close_only_their_connection(broker: Broker, frame: bytes, why: str) -> None:
    # Kafka closes the connection (InvalidRequestException); the broker serves everyone else.
    with Wire(broker.bootstrap_servers) as bad, Wire(broker.bootstrap_servers) as good:
        bad.send(struct.pack(">i", len(frame)) + frame)
        assert bad.closed_by_peer(), why
        assert good.request(ApiKey.METADATA, 1, {"topics": []}).body.brokers


def test_pipelined_answers_come_in_one_send_and_precede_a_close(broker: Broker) -> None:
    """Requests read together are answered together, in order; a bad request among them
    closes the connection only after the answers to those before it, as Kafka, which handles a
    connection's requests one at a time, answers them."""

    frames = [protocol.encode_request(ApiKey.METADATA, 1, i, "w", {"topics": []}) for i in (1, 2)]
    frames.append(protocol.encode_request(ApiKey.API_VERSIONS, 0, 3, "w", {}))
    bad = struct.pack(">hhi", 1234, 0, 4) + struct.pack(">h", -1)
    with Wire(broker.bootstrap_servers) as w:
        w.send(b"".join(frames) + struct.pack(">i", len(bad)) + bad)
        answers = [read_frame(w.sock) for _ in frames]
        assert [struct.unpack(">i", a[:4])[0] for a in answers] == [1, 2, 3]
        assert w.closed_by_peer()


def test_frames_above_the_limit_and_negative_sizes_close(broker: Broker) -> None:
    for prefix in (struct.pack(">i", 200 * 1024 * 1024), struct.pack(">i", -5)):
        with Wire(broker.bootstrap_servers) as w:
            w.send(prefix)
            assert w.closed_by_peer()


def test_authorized_operations_are_kafkas_supported_operations(broker: Broker) -> None:
    # Kafka 4.4's AclEntry.supportedOperations, as Java's Admin reads them without an
    # authorizer (tests/java): a cluster has no WRITE.
    cluster = {"CREATE": 5, "ALTER": 7, "DESCRIBE": 8, "CLUSTER_ACTION": 9}
    cluster |= {"DESCRIBE_CONFIGS": 10, "ALTER_CONFIGS": 11, "IDEMPOTENT_WRITE": 12}
    with Wire(broker.bootstrap_servers) as w:
        r = w.request(ApiKey.DESCRIBE_CLUSTER, 0, {"include_cluster_authorized_operations": True})
    assert r.body.cluster_authorized_operations == sum(1 << op for op in cluster.values())


def test_metadata_creates_topics_and_names_them_by_id(broker: Broker) -> None:
    with Wire(broker.bootstrap_servers) as w:
        name = f"wire-{uuid.uuid4().hex[:8]}"
        r = w.request(ApiKey.METADATA, 12, {"topics": [{"name": name}]})
        (t,) = r.body.topics
        assert (t.error_code, t.name, len(t.partitions)) == (0, name, 1)
        assert t.partitions[0].leader_epoch == 0 and t.partitions[0].isr_nodes == [1]
        by_id = w.request(ApiKey.METADATA, 12, {"topics": [{"topic_id": t.topic_id, "name": None}]})
        assert by_id.body.topics[0].name == name
        # Java's Admin (describeTopics by id) leaves the name at its default "", not null: the
        # id set is what says the topic is asked for by id (Kafka's handleTopicMetadataRequest).
        by_id = w.request(ApiKey.METADATA, 12, {"topics": [{"topic_id": t.topic_id, "name": ""}]})
        assert (by_id.body.topics[0].name, by_id.body.topics[0].topic_id) == (name, t.topic_id)
        unknown = w.request(
            ApiKey.METADATA, 12, {"topics": [{"topic_id": uuid.uuid4(), "name": None}]}
        )
        assert unknown.body.topics[0].error_code == errors.UnknownTopicId.code
        no_auto = w.request(
            ApiKey.METADATA,
            4,
            {"topics": [{"name": name + "-x"}], "allow_auto_topic_creation": False},
        )
        assert no_auto.body.topics[0].error_code == errors.UnknownTopicOrPartition.code
        bad = w.request(ApiKey.METADATA, 4, {"topics": [{"name": "bad name!"}]})
        assert bad.body.topics[0].error_code == errors.InvalidTopicException.code


def test_produce_fetch_and_list_offsets_on_the_wire(broker: Broker) -> None:
    name = f"wire-{uuid.uuid4().hex[:8]}"
    with Wire(broker.bootstrap_servers) as w:
        w.request(ApiKey.METADATA, 12, {"topics": [{"name": name}]})
        batch = encode_batch([(0, 1000, b"k", b"v0"), (1, 1001, None, b"v1")])
        produce = {
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [{"name": name, "partition_data": [{"index": 0, "records": batch}]}],
        }
        for expected in (0, 2):
            r = w.request(ApiKey.PRODUCE, 9, produce)
            p = r.body.responses[0].partition_responses[0]
            assert (p.error_code, p.base_offset) == (0, expected)
        fetch = {
            "max_wait_ms": 0,
            "min_bytes": 1,
            "topics": [
                {
                    "topic": name,
                    "partitions": [
                        {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
                    ],
                }
            ],
        }
        f = w.request(ApiKey.FETCH, 11, fetch).body.responses[0].partitions[0]
        assert (f.error_code, f.high_watermark, f.last_stable_offset) == (0, 4, 4)
        batches = decode_batches(f.records)
        assert [r.offset for b in batches for r in b.records] == [0, 1, 2, 3]
        assert [b.partition_leader_epoch for b in batches] == [0, 0]
        lo = {
            "replica_id": -1,
            "topics": [{"name": name, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
        }
        assert w.request(ApiKey.LIST_OFFSETS, 7, lo).body.topics[0].partitions[0].offset == 4
        lo["topics"][0]["partitions"][0]["timestamp"] = -2
        assert w.request(ApiKey.LIST_OFFSETS, 7, lo).body.topics[0].partitions[0].offset == 0
        lo["topics"][0]["partitions"][0]["timestamp"] = 1001
        assert w.request(ApiKey.LIST_OFFSETS, 7, lo).body.topics[0].partitions[0].offset == 1
        fetch["topics"][0]["partitions"][0]["fetch_offset"] = 99
        f = w.request(ApiKey.FETCH, 11, fetch).body.responses[0].partitions[0]
        assert f.error_code == errors.OffsetOutOfRange.code


def test_produce_errors_are_per_partition(broker: Broker) -> None:
    name = f"wire-{uuid.uuid4().hex[:8]}"
    with Wire(broker.bootstrap_servers) as w:
        w.request(ApiKey.METADATA, 12, {"topics": [{"name": name}]})
        good = encode_batch([(0, 1000, b"k", b"v")])
        bad_crc = bytearray(good)
        bad_crc[-1] ^= 0xFF
        two = good + good
        produce = {
            "acks": 1,
            "timeout_ms": 5000,
            "topic_data": [
                {
                    "name": name,
                    "partition_data": [
                        {"index": 0, "records": bytes(bad_crc)},
                        {"index": 5, "records": good},
                    ],
                },
                {"name": "no-such-topic", "partition_data": [{"index": 0, "records": good}]},
            ],
        }
        r = w.request(ApiKey.PRODUCE, 9, produce).body.responses
        assert r[0].partition_responses[0].error_code == errors.CorruptMessage.code
        assert r[0].partition_responses[1].error_code == errors.UnknownTopicOrPartition.code
        assert r[1].partition_responses[0].error_code == errors.UnknownTopicOrPartition.code
        produce["topic_data"] = [{"name": name, "partition_data": [{"index": 0, "records": two}]}]
        r = w.request(ApiKey.PRODUCE, 9, produce).body.responses
        assert r[0].partition_responses[0].error_code == errors.InvalidRecord.code
        produce["acks"] = 2
        produce["topic_data"] = [{"name": name, "partition_data": [{"index": 0, "records": good}]}]
        r = w.request(ApiKey.PRODUCE, 9, produce).body.responses
        assert r[0].partition_responses[0].error_code == errors.InvalidRequiredAcks.code


def test_bytes_after_a_body_are_ignored_as_kafka_ignores_them(broker: Broker) -> None:
    # librdkafka's Metadata v12 for all topics carries three bytes after its body; Kafka's
    # parser never looks at them, so neither does the broker.
    frame = protocol.encode_request(ApiKey.METADATA, 12, 5, "c", {"topics": None})
    with pytest.raises(errors.MalformedMessage, match="left over"):
        protocol.decode_request(frame[4:] + b"\x01\x00\x00")
    assert protocol.decode_request(frame[4:] + b"\x01\x00\x00", strict=False).body.topics is None
    with Wire(broker.bootstrap_servers) as w:
        body = frame[4:] + b"\x01\x00\x00"
        w.send(struct.pack(">i", len(body)) + body)
        from support.wire import read_frame

        assert protocol.decode_response(3, 12, read_frame(w.sock)).correlation_id == 5


def test_garbage_on_one_connection_does_not_disturb_a_producer(broker: Broker) -> None:
    """While one client sends garbage, huge frames and unknown versions, over and over, a
    second produces without an error and loses nothing."""
    import threading

    from confluent_kafka import Producer

    name = f"wire-{uuid.uuid4().hex[:8]}"
    with Wire(broker.bootstrap_servers) as w:
        w.request(ApiKey.METADATA, 12, {"topics": [{"name": name}]})
    stop = threading.Event()
    closed = [0]

    def hammer() -> None:
        bad = [
            struct.pack(">i", 200 * 1024 * 1024),
            struct.pack(">i", 10) + b"\xff" * 10,
            struct.pack(">i", 10) + struct.pack(">hhi", 3, 99, 1) + b"\xff\xff",
            struct.pack(">i", 8) + struct.pack(">hhi", 777, 0, 1),
        ]
        i = 0
        while not stop.is_set():
            with Wire(broker.bootstrap_servers) as g:
                g.send(bad[i % len(bad)])
                closed[0] += g.closed_by_peer(2)
            i += 1

    t = threading.Thread(target=hammer)
    t.start()
    errors_seen: list[str] = []
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all", "linger.ms": 1})
    try:
        for i in range(3000):
            p.produce(
                name,
                str(i).encode(),
                partition=0,
                on_delivery=lambda e, m: errors_seen.append(str(e)) if e else None,
            )
            if i % 100 == 0:
                p.flush(10)
        assert p.flush(30) == 0
    finally:
        stop.set()
        t.join(10)
    assert not errors_seen and closed[0] >= 4
    lo = {
        "replica_id": -1,
        "topics": [{"name": name, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
    }
    with Wire(broker.bootstrap_servers) as w:
        assert w.request(ApiKey.LIST_OFFSETS, 7, lo).body.topics[0].partitions[0].offset == 3000


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_connections_have_nagle_off(tmp_path, loop: str) -> None:
    # As Kafka's acceptor sets them. asyncio's loop leaves accepted sockets with Nagle on (their
    # proto is 0), and a response written in pieces then waits for the client's delayed ACK.
    with Broker(tmp_path, port=0, event_loop=loop) as b, Wire(b.bootstrap_servers) as w:
        assert w.request(ApiKey.API_VERSIONS, 0, {}).body.error_code == 0
        assert b.state is not None
        (conn,) = b.state.connections
        assert conn.transport is not None
        sock = conn.transport.get_extra_info("socket")
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_a_waiting_fetch_wakes_for_a_produce_read_with_it() -> None:
    """A Fetch that finds nothing waits from the moment it is read: a Produce read in the same
    turn of the event loop (here: both sent while the broker is paused) wakes it at once, as
    Kafka's purgatory completes a delayed fetch on the append, not at its max_wait_ms."""
    import kgroup.testing

    with kgroup.testing.Broker() as b:
        b.create_topic("t")
        fetch = {
            "max_wait_ms": 20_000,
            "min_bytes": 1,
            "topics": [
                {
                    "topic": "t",
                    "partitions": [
                        {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
                    ],
                }
            ],
        }
        batch = encode_batch([(0, 1000, b"k", b"v0")])
        produce = {
            "acks": 1,
            "timeout_ms": 5000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}],
        }
        with Wire(b.bootstrap_servers) as f, Wire(b.bootstrap_servers) as p:
            for _ in range(3):
                with b.paused():
                    f.send(protocol.encode_request(ApiKey.FETCH, 11, 1, "f", fetch))
                    p.send(protocol.encode_request(ApiKey.PRODUCE, 9, 1, "p", produce))
                    time.sleep(0.1)
                f.sock.settimeout(5)
                answer = protocol.decode_response(ApiKey.FETCH, 11, read_frame(f.sock))
                got = answer.body.responses[0].partitions[0]
                assert got.error_code == 0 and got.records
                offset = protocol.decode_response(ApiKey.PRODUCE, 9, read_frame(p.sock))
                base = offset.body.responses[0].partition_responses[0].base_offset
                fetch["topics"][0]["partitions"][0]["fetch_offset"] = base + 1
