"""kgroup.protocol beside kafka-python's own protocol classes, on the same bytes, in one run.

Three large responses, each decoded and encoded (bodies only: no header, no size prefix):

- Metadata v12: 1,000 topics of 10 partitions (3 replicas), 3 brokers.
- JoinGroup v9 to the leader of a group of 1,000 members (consumer-protocol subscriptions).
- Fetch v12: 100 partitions of one topic, each carrying the same ~10 KB record batch built
  with kafka-python's record builder (about 1 MB of records); records stay opaque bytes.

kgroup decodes a whole frame into a Rust value tree and returns a view over it; the
``-plain`` groups also turn the whole view into plain dicts and lists (``to_dict()``), the
equivalent of kafka-python's fully built objects. Encoding starts from plain dicts.

The ``-response`` groups encode what the broker sends: ``protocol.encode_response``, the whole
frame (size prefix, response header, body) from the plain values a handler returns, beside
kafka-python encoding the body alone.

    make build && .venv/bin/python -m pytest bench/bench_protocol.py --benchmark-only \\
        --benchmark-columns=min,median,mean,rounds --benchmark-sort=name
"""

from __future__ import annotations

import uuid

import pytest
from kafka.protocol.consumer import FetchResponse
from kafka.protocol.consumer.group import JoinGroupResponse
from kafka.protocol.metadata import MetadataResponse
from kafka.record.memory_records import MemoryRecordsBuilder

from kgroup import protocol


def metadata_body() -> dict:
    brokers = [
        {"node_id": i, "host": f"broker-{i}.kafka.internal", "port": 9092, "rack": f"rack-{i}"}
        for i in range(3)
    ]
    topics = [
        {
            "error_code": 0,
            "name": f"orders.events.topic-{t:04d}",
            "topic_id": uuid.UUID(int=(t + 1) * 0x1000_0000_0000_0001),
            "is_internal": False,
            "partitions": [
                {
                    "error_code": 0,
                    "partition_index": p,
                    "leader_id": p % 3,
                    "leader_epoch": 7,
                    "replica_nodes": [p % 3, (p + 1) % 3, (p + 2) % 3],
                    "isr_nodes": [p % 3, (p + 1) % 3, (p + 2) % 3],
                    "offline_replicas": [],
                }
                for p in range(10)
            ],
            "topic_authorized_operations": -2147483648,
        }
        for t in range(1000)
    ]
    return {
        "throttle_time_ms": 0,
        "brokers": brokers,
        "cluster_id": "kgroup-bench-cluster",
        "controller_id": 1,
        "topics": topics,
    }


def subscription(i: int) -> bytes:
    # ConsumerProtocolSubscription v1: topics ["orders", "payments"], user data, no owned
    # partitions.
    topics = b"\x00\x00\x00\x02" + b"\x00\x06orders" + b"\x00\x08payments"
    user = f"member-{i}".encode()
    return b"\x00\x01" + topics + len(user).to_bytes(4, "big") + user + b"\x00\x00\x00\x00"


def join_body() -> dict:
    members = [
        {
            "member_id": f"consumer-{i}-{uuid.UUID(int=i + 1)}",
            "group_instance_id": None,
            "metadata": subscription(i),
        }
        for i in range(1000)
    ]
    leader = members[0]["member_id"]
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "generation_id": 42,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "leader": leader,
        "skip_assignment": False,
        "member_id": leader,
        "members": members,
    }


def record_batch() -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i in range(100):
        builder.append(
            timestamp=1_700_000_000_000 + i, key=b"key-%d" % i, value=b"v" * 80, headers=[]
        )
    builder.close()
    return bytes(builder.buffer())


def fetch_body() -> dict:
    batch = record_batch()
    partitions = [
        {
            "partition_index": p,
            "error_code": 0,
            "high_watermark": 100_000,
            "last_stable_offset": 100_000,
            "log_start_offset": 0,
            "aborted_transactions": [],
            "preferred_read_replica": -1,
            "records": batch,
        }
        for p in range(100)
    ]
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 0,
        "responses": [{"topic": "orders", "partitions": partitions}],
    }


class Case:
    """One response: its body as plain values, its bytes, and kafka-python's object for it."""

    def __init__(self, api_key: int, version: int, body: dict, kp_class) -> None:
        self.api_key, self.version, self.body, self.kp_class = api_key, version, body, kp_class
        self.data = protocol.encode_body(api_key, version, body, request=False)
        self.kp_obj = kp_class.decode(self.data, version=version)
        self.kp_obj._header = None  # a decoded kafka-python message has no header slot set
        # Both libraries write the same bytes and read the same values.
        assert self.kp_obj.encode(version=version) == self.data
        decoded = protocol.decode_body(api_key, version, self.data, request=False)
        assert protocol.encode_body(api_key, version, decoded, request=False) == self.data
        # The request this answers, as a broker holds it: its header.
        self.header = protocol.RequestHeader(api_key, version, 7, "bench")
        frame = protocol.encode_response(self.header, body)
        assert frame.endswith(self.data)

    def kg_decode(self):
        return protocol.decode_body(self.api_key, self.version, self.data, request=False)

    def kg_decode_plain(self):
        return self.kg_decode().to_dict()

    def kg_encode(self):
        return protocol.encode_body(self.api_key, self.version, self.body, request=False)

    def kg_encode_response(self):
        return protocol.encode_response(self.header, self.body)

    def kp_decode(self):
        return self.kp_class.decode(self.data, version=self.version)

    def kp_encode(self):
        return self.kp_obj.encode(version=self.version)


CASES = {
    "metadata": lambda: Case(3, 12, metadata_body(), MetadataResponse),
    "join_group": lambda: Case(11, 9, join_body(), JoinGroupResponse),
    "fetch": lambda: Case(1, 12, fetch_body(), FetchResponse),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request) -> Case:
    c = CASES[request.param]()
    c.name = request.param
    return c


def _run(benchmark, case: Case, group: str, fn) -> None:
    benchmark.group = f"{case.name}-{group}"
    benchmark.extra_info["bytes"] = len(case.data)
    benchmark(fn)


@pytest.mark.parametrize("impl", ["kgroup", "kafka-python"])
def test_decode(benchmark, case: Case, impl: str) -> None:
    _run(benchmark, case, "decode", case.kg_decode if impl == "kgroup" else case.kp_decode)


@pytest.mark.parametrize("impl", ["kgroup", "kafka-python"])
def test_decode_plain(benchmark, case: Case, impl: str) -> None:
    # kafka-python's decode already builds every object; kgroup's builds plain dicts here.
    fn = case.kg_decode_plain if impl == "kgroup" else case.kp_decode
    _run(benchmark, case, "decode-plain", fn)


@pytest.mark.parametrize("impl", ["kgroup", "kafka-python"])
def test_encode(benchmark, case: Case, impl: str) -> None:
    _run(benchmark, case, "encode", case.kg_encode if impl == "kgroup" else case.kp_encode)


@pytest.mark.parametrize("impl", ["kgroup", "kafka-python"])
def test_encode_response(benchmark, case: Case, impl: str) -> None:
    fn = case.kg_encode_response if impl == "kgroup" else case.kp_encode
    _run(benchmark, case, "encode-response", fn)
