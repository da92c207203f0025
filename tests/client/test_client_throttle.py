"""kgroup's client honours a broker's throttle as Java's NetworkClient does (KIP-219): after a
response whose throttle_time_ms is set, at a version from which the client throttles, it sends
nothing more to that broker until the time is over, and then sends what it held, in order.

Seen from the wire: a relay between the client and a real broker (kgroup's and Apache Kafka
4.4) records when each request reaches it."""

from __future__ import annotations

import asyncio
import struct
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from support.kgroup_broker import Wire

from kgroup.broker import Broker
from kgroup.client.connection import Connection
from kgroup.protocol import ApiKey, decode_response
from kgroup.protocol.records import encode_batch

pytestmark = pytest.mark.network

#: A byte-rate bound and a record that takes one request just over ten seconds of it (Kafka
#: measures over at least ten one-second windows): a throttle of about 300 ms.
BOUND = 10_000
VALUE = 103_000


@pytest.fixture(params=["kgroup", "kafka"])
def bootstrap(request: pytest.FixtureRequest, broker: Broker) -> str:
    if request.param == "kgroup":
        return broker.bootstrap_servers
    return str(request.getfixturevalue("kafka").bootstrap)


@pytest.fixture
def client_id(bootstrap: str) -> Iterator[str]:
    name = f"throttled-{uuid.uuid4().hex[:8]}"
    _quota(bootstrap, name, BOUND)
    time.sleep(1.5)  # Kafka's brokers take a quota from the metadata log
    yield name
    _quota(bootstrap, name, None)


def _quota(bootstrap: str, client: str, value: float | None) -> None:
    body = {
        "entries": [
            {
                "entity": [{"entity_type": "client-id", "entity_name": client}],
                "ops": [
                    {"key": "producer_byte_rate", "value": value or 0.0, "remove": value is None}
                ],
            }
        ],
        "validate_only": False,
    }
    with Wire(bootstrap) as w:
        r = w.request(ApiKey.ALTER_CLIENT_QUOTAS, 1, body)
    assert r.body.entries[0].error_code == 0, r.body.entries[0].error_message


class Relay:
    """A TCP relay to one broker that notes when each request reaches it and when each
    response leaves it, with the response's throttle_time_ms."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        #: events: (monotonic time, "request" or "response", api key, throttle_time_ms)
        self.events: list[tuple[float, str, int, int]] = []
        self._apis: dict[int, tuple[int, int]] = {}
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection(*self.target)
        await asyncio.gather(
            self._pump(reader, up_w, "request"), self._pump(up_r, writer, "response")
        )

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, kind: str
    ) -> None:
        try:
            while True:
                head = await reader.readexactly(4)
                frame = await reader.readexactly(struct.unpack(">i", head)[0])
                if kind == "request":
                    api, version, corr = struct.unpack(">hhi", frame[:8])
                    self._apis[corr] = (api, version)
                    self.events.append((time.monotonic(), kind, api, 0))
                else:
                    corr = struct.unpack(">i", frame[:4])[0]
                    api, version = self._apis[corr]
                    body = decode_response(api, version, frame).body
                    throttle = body.get("throttle_time_ms") or 0
                    self.events.append((time.monotonic(), kind, api, throttle))
                writer.write(head + frame)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def _produce_body(topic: str) -> dict[str, Any]:
    batch = encode_batch([(0, int(time.time() * 1000), None, b"x" * VALUE)])
    return {
        "acks": 1,
        "timeout_ms": 10_000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
    }


async def _run(bootstrap: str, client_id: str) -> list[tuple[float, str, int, int]]:
    relay = Relay(bootstrap)
    port = await relay.start()
    conn = Connection("127.0.0.1", port, node_id=1, client_id=client_id, request_timeout_ms=30_000)
    await conn.open(10)
    topic = f"throttle-{uuid.uuid4().hex[:8]}"
    created = await conn.request(
        ApiKey.CREATE_TOPICS,
        {
            "topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1}],
            "timeout_ms": 10_000,
        },
        version=5,
    )
    assert created["topics"][0]["error_code"] == 0
    while True:
        meta = await conn.request(ApiKey.METADATA, {"topics": [{"name": topic}]}, version=9)
        if meta["topics"][0]["error_code"] == 0 and meta["topics"][0]["partitions"]:
            break
        await asyncio.sleep(0.1)
    fut = conn.send(ApiKey.PRODUCE, _produce_body(topic), version=9)
    await conn.answer(ApiKey.PRODUCE, fut)
    # Sent at once: held by the client until the throttle is over.
    await conn.request(ApiKey.METADATA, {"topics": [{"name": topic}]}, version=9)
    conn.close()
    assert relay.server is not None
    relay.server.close()
    return relay.events


def test_the_client_holds_requests_while_the_broker_throttles_it(
    bootstrap: str, client_id: str
) -> None:
    events = asyncio.run(_run(bootstrap, client_id))
    throttled = [
        (i, t, ms)
        for i, (t, kind, api, ms) in enumerate(events)
        if kind == "response" and api == ApiKey.PRODUCE and ms > 0
    ]
    assert throttled, events
    for i, at, ms in throttled:
        following = [t for t, kind, _, _ in events[i + 1 :] if kind == "request"]
        assert following, events
        # The next request waited for the throttle (less the relay's own delays).
        assert following[0] - at >= ms / 1000 - 0.02, (ms, following[0] - at)
