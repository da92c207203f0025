"""A loopback Kafka broker, just real enough for the real clients to go through their paces, that
records every request frame it receives.

It decodes each request with ``kgroup.protocol`` and answers with ``kgroup.protocol``, so a real
client that gets through its produce, consume, admin and SASL flows against it has also parsed
every response kgroup wrote. State is the minimum the flows need: topics exist as soon as they
are asked for, a group has one member (the one that joins), nothing is stored but each
transactional id's producer id, epoch, state and partitions, which the admin calls
(DescribeTransactions, ListTransactions) report.

``versions`` caps the ranges it advertises, so that one client can be walked through old,
non-flexible and flexible versions of each API.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgroup import protocol
from kgroup.errors import DecodeError
from kgroup.protocol import ApiKey

from .wire import in_versions, read_frame

_DEFS = {d["name"]: d for d in protocol.definitions()}


def prune(fields: list[dict[str, Any]], version: int, value: Any) -> Any:
    """Keep only the keys of ``value`` that exist at ``version``, recursively."""
    if not isinstance(value, dict):
        return value
    out = {}
    for f in fields:
        if f["name"] not in value or not in_versions(f["versions"], version):
            continue
        v = value[f["name"]]
        if f["fields"]:
            if isinstance(v, list):
                v = [prune(f["fields"], version, x) for x in v]
            elif isinstance(v, dict):
                v = prune(f["fields"], version, v)
        out[f["name"]] = v
    return out


def topic_id(name: str) -> uuid.UUID:
    """A stable, non-zero topic id per name."""
    return uuid.uuid5(uuid.NAMESPACE_URL, "kgroup-fake/" + name)


@dataclass
class Captured:
    client: str
    api_key: int
    api_version: int
    frame: bytes


#: SHARE_APIS are share groups' (KIP-932) apis: the codec declares them, but neither kgroup's
#: broker nor this one serves them yet.
SHARE_APIS = frozenset({76, 77, 78, 79, 90, 91, 92})
#: SERVED are the apis and versions the fake broker advertises by default: every api kgroup's
#: codec speaks but share groups', KIP-848's (ConsumerGroupHeartbeat, ConsumerGroupDescribe)
#: too, as Kafka 4.x does; a client uses them only with ``group.protocol=consumer``.
SERVED: dict[int, tuple[int, int]] = {
    k: v for k, v in protocol.API_VERSIONS.items() if k not in SHARE_APIS
}


#: IDEMPOTENT_PRODUCER_ID is the producer id of every non-transactional producer;
#: FIRST_TRANSACTIONAL_PRODUCER_ID that of the first transactional id, the next ones following.
IDEMPOTENT_PRODUCER_ID = 1000
FIRST_TRANSACTIONAL_PRODUCER_ID = 2000


@dataclass
class Transaction:
    """One transactional id as the fake coordinator keeps it: its producer id (one per id,
    from FIRST_TRANSACTIONAL_PRODUCER_ID on), the epoch, bumped by each InitProducerId as
    Kafka's coordinator does, and the transaction's state (Kafka's names: ``Empty``,
    ``Ongoing``, ``CompleteCommit``, ``CompleteAbort``) with the partitions added to it since
    it began."""

    producer_id: int
    timeout_ms: int
    producer_epoch: int = 0
    state: str = "Empty"
    start_ms: int = -1
    partitions: dict[str, set[int]] = field(default_factory=dict)


@dataclass
class FakeBroker:
    """Serve on 127.0.0.1 until stopped; ``frames`` collects every request frame received."""

    versions: Mapping[int, tuple[int, int]] = field(default_factory=lambda: dict(SERVED))
    partitions: int = 2
    port: int = 0
    frames: list[Captured] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    label: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    #: _members are the consumer-protocol (KIP-848) members by group: member id to epoch.
    _members: dict[str, dict[str, int]] = field(default_factory=dict)
    #: _subscribed are the topic names consumer-protocol members subscribed to, which Metadata
    #: then finds by id.
    _subscribed: set[str] = field(default_factory=set)
    #: _transactions are the transactional producers by transactional id (see ``Transaction``).
    _transactions: dict[str, Transaction] = field(default_factory=dict)
    _next_offset: int = 0
    _generation: int = 0

    # -- server -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def serve(self) -> Iterator[FakeBroker]:
        broker = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                broker._connection(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        server = Server(("127.0.0.1", 0), Handler)
        self.port = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.daemon = True
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)

    def _connection(self, sock: socket.socket) -> None:
        sock.settimeout(30)
        raw_sasl_next = False
        try:
            while True:
                frame = read_frame(sock)
                if raw_sasl_next:
                    # After SaslHandshake v0 the client sends its SASL token unframed by Kafka's
                    # header; the answer is an empty token.
                    raw_sasl_next = False
                    sock.sendall(b"\x00\x00\x00\x00")
                    continue
                header = protocol.decode_request_header(frame)
                with self._lock:
                    self.frames.append(
                        Captured(self.label, header.api_key, header.api_version, frame)
                    )
                out = self._answer(header, frame)
                if out is not None:
                    sock.sendall(out)
                if header.api_key == ApiKey.SASL_HANDSHAKE and header.api_version == 0:
                    raw_sasl_next = True
        except (OSError, TimeoutError, EOFError):
            return
        except Exception as e:  # recorded for the test to report, then the connection closes
            with self._lock:
                self.errors.append(f"{type(e).__name__}: {e}")

    def _answer(self, header: protocol.RequestHeader, frame: bytes) -> bytes | None:
        lo_hi = self.versions.get(header.api_key)
        supported = lo_hi is not None and lo_hi[0] <= header.api_version <= lo_hi[1]
        if header.api_key == ApiKey.API_VERSIONS and not supported:
            # Kafka answers an ApiVersions version it does not speak with a v0 body.
            body = {"error_code": 35, "api_keys": self._api_keys()}
            return protocol.encode_response(header, body, version=0)
        if not supported:
            raise AssertionError(
                f"client sent {header.api_name} v{header.api_version}, outside {lo_hi}"
            )
        try:
            request = protocol.decode_request(frame)
        except DecodeError as e:
            raise AssertionError(
                f"cannot decode {header.api_name} v{header.api_version}: {e}"
            ) from e
        handler = getattr(self, "_" + _snake(request.api_name))
        body = handler(request.body, request.api_version)
        if body is None:
            return None
        name = request.api_name + "Response"
        body = prune(_DEFS[name]["fields"], request.api_version, body)
        return protocol.encode_response(request, body)

    # -- answers ------------------------------------------------------------------------------

    def _api_keys(self) -> list[dict[str, int]]:
        return [
            {"api_key": k, "min_version": lo, "max_version": hi}
            for k, (lo, hi) in sorted(self.versions.items())
        ]

    def _broker(self) -> dict[str, Any]:
        return {"node_id": 0, "host": "127.0.0.1", "port": self.port, "rack": None}

    def _api_versions(self, body: dict, v: int) -> dict:
        return {"error_code": 0, "api_keys": self._api_keys(), "throttle_time_ms": 0}

    def _sasl_handshake(self, body: dict, v: int) -> dict:
        return {"error_code": 0, "mechanisms": ["PLAIN"]}

    def _sasl_authenticate(self, body: dict, v: int) -> dict:
        return {"error_code": 0, "error_message": None, "auth_bytes": b"", "session_lifetime_ms": 0}

    def _partitions(self) -> list[dict[str, Any]]:
        return [
            {
                "error_code": 0,
                "partition_index": p,
                "leader_id": 0,
                "leader_epoch": 0,
                "replica_nodes": [0],
                "isr_nodes": [0],
                "offline_replicas": [],
            }
            for p in range(self.partitions)
        ]

    def _metadata(self, body: dict, v: int) -> dict:
        requested = body.get("topics")
        # v10+ asks by topic id too (a KIP-848 member, for the topics of its assignment).
        with self._lock:
            by_id = {topic_id(n): n for n in self._subscribed}
        names = (
            ["kgroup-fixture"]
            if requested is None
            else [t["name"] or by_id.get(t.get("topic_id")) for t in requested]
        )
        topics = [
            {
                "error_code": 0,
                "name": n,
                "topic_id": topic_id(n),
                "is_internal": False,
                "partitions": self._partitions(),
            }
            for n in names
            if n is not None
        ]
        return {
            "throttle_time_ms": 0,
            "brokers": [self._broker()],
            "cluster_id": "kgroup-fake-cluster",
            "controller_id": 0,
            "topics": topics,
        }

    def _find_coordinator(self, body: dict, v: int) -> dict:
        # This broker coordinates every key: groups (key_type 0) and transactional ids (1).
        node = self._broker()
        keys = body.get("coordinator_keys") or [body.get("key", "")]
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "node_id": 0,
            "host": node["host"],
            "port": node["port"],
            "coordinators": [
                {
                    "key": k,
                    "node_id": 0,
                    "host": node["host"],
                    "port": node["port"],
                    "error_code": 0,
                }
                for k in keys
            ],
        }

    def _produce(self, body: dict, v: int) -> dict | None:
        if body["acks"] == 0:
            return None
        responses = []
        for t in body["topic_data"]:
            parts = []
            for p in t["partition_data"]:
                with self._lock:
                    base, self._next_offset = self._next_offset, self._next_offset + 1
                parts.append(
                    {
                        "index": p["index"],
                        "error_code": 0,
                        "base_offset": base,
                        "log_append_time_ms": -1,
                        "log_start_offset": 0,
                    }
                )
            responses.append({"name": t["name"], "partition_responses": parts})
        return {"responses": responses, "throttle_time_ms": 0}

    def _fetch(self, body: dict, v: int) -> dict:
        time.sleep(min(body["max_wait_ms"], 50) / 1000)
        responses = []
        for t in body["topics"]:
            parts = [
                {
                    "partition_index": p["partition"],
                    "error_code": 0,
                    "high_watermark": 0,
                    "last_stable_offset": 0,
                    "log_start_offset": 0,
                    "aborted_transactions": [],
                    "preferred_read_replica": -1,
                    "records": b"",
                }
                for p in t["partitions"]
            ]
            responses.append(
                {"topic": t.get("topic", ""), "topic_id": t.get("topic_id"), "partitions": parts}
            )
        for r in responses:
            if r["topic_id"] is None:
                del r["topic_id"]
        return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}

    def _list_offsets(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": t["name"],
                    "partitions": [
                        {
                            "partition_index": p["partition_index"],
                            "error_code": 0,
                            "old_style_offsets": [0],
                            "timestamp": -1,
                            "offset": 0,
                            "leader_epoch": 0,
                        }
                        for p in t["partitions"]
                    ],
                }
                for t in body["topics"]
            ],
        }

    def _join_group(self, body: dict, v: int) -> dict:
        member = body["member_id"]
        if not member:
            member = f"member-{uuid.uuid4()}"
            if v >= 4 and body.get("group_instance_id") is None:
                return {"error_code": 79, "member_id": member, "generation_id": -1, "leader": ""}
        with self._lock:
            self._generation += 1
            generation = self._generation
        proto = body["protocols"][0]
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "generation_id": generation,
            "protocol_type": body["protocol_type"],
            "protocol_name": proto["name"],
            "leader": member,
            "skip_assignment": False,
            "member_id": member,
            "members": [
                {
                    "member_id": member,
                    "group_instance_id": body.get("group_instance_id"),
                    "metadata": proto["metadata"],
                }
            ],
        }

    def _sync_group(self, body: dict, v: int) -> dict:
        mine = [a["assignment"] for a in body["assignments"] if a["member_id"] == body["member_id"]]
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "protocol_type": body.get("protocol_type"),
            "protocol_name": body.get("protocol_name"),
            "assignment": mine[0] if mine else b"",
        }

    def _heartbeat(self, body: dict, v: int) -> dict:
        return {"throttle_time_ms": 0, "error_code": 0}

    def _leave_group(self, body: dict, v: int) -> dict:
        members = body.get("members", [])
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "members": [
                {
                    "member_id": m["member_id"],
                    "group_instance_id": m.get("group_instance_id"),
                    "error_code": 0,
                }
                for m in members
            ],
        }

    def _offset_commit(self, body: dict, v: int) -> dict:
        return {"throttle_time_ms": 0, "topics": _no_errors(body["topics"])}

    def _offsets(self, topics: list[dict] | None, key: str) -> list[dict]:
        return [
            {
                "name": t["name"],
                "partitions": [
                    {
                        "partition_index": p,
                        "committed_offset": -1,
                        "committed_leader_epoch": -1,
                        "metadata": "",
                        "error_code": 0,
                    }
                    for p in t[key]
                ],
            }
            for t in topics or []
        ]

    def _offset_fetch(self, body: dict, v: int) -> dict:
        out: dict[str, Any] = {"throttle_time_ms": 0, "error_code": 0}
        if v >= 8:
            out["groups"] = [
                {
                    "group_id": g["group_id"],
                    "topics": self._offsets(g["topics"], "partition_indexes"),
                    "error_code": 0,
                }
                for g in body["groups"]
            ]
        else:
            out["topics"] = self._offsets(body["topics"], "partition_indexes")
        return out

    def _list_groups(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "groups": [
                {
                    "group_id": "kgroup-fixture-group",
                    "protocol_type": "consumer",
                    "group_state": "Empty",
                    "group_type": "classic",
                }
            ],
        }

    def _describe_groups(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "groups": [
                {
                    "error_code": 0,
                    "group_id": g,
                    "group_state": "Empty",
                    "protocol_type": "consumer",
                    "protocol_data": "",
                    "members": [],
                    "authorized_operations": -2147483648,
                }
                for g in body["groups"]
            ],
        }

    def _consumer_group_heartbeat(self, body: dict, v: int) -> dict:
        # KIP-848, one member's view: joining (epoch 0) it gets every partition of the topics
        # it subscribes to at epoch 1, later heartbeats keep its epoch and assignment (null:
        # unchanged), epoch -1 or -2 leaves.
        member, epoch = body["member_id"] or str(uuid.uuid4()), body["member_epoch"]
        with self._lock:
            members = self._members.setdefault(body["group_id"], {})
            self._subscribed.update(body["subscribed_topic_names"] or [])
            if epoch < 0:
                members.pop(member, None)
            elif epoch == 0:
                members[member] = epoch = 1
        assignment = None
        if body["member_epoch"] == 0:
            names = body["subscribed_topic_names"] or []
            parts = list(range(self.partitions))
            topics = [{"topic_id": topic_id(n), "partitions": parts} for n in names]
            assignment = {"topic_partitions": topics}
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "member_id": member,
            "member_epoch": epoch,
            "heartbeat_interval_ms": 0 if epoch < 0 else 100,
            "assignment": assignment,
        }

    def _consumer_group_describe(self, body: dict, v: int) -> dict:
        # A group without consumer-protocol members is a classic one (GROUP_ID_NOT_FOUND, on
        # which clients describe it with DescribeGroups); members are listed without partitions.
        groups = []
        for g in body["group_ids"]:
            with self._lock:
                members = dict(self._members.get(g, {}))
            none: dict[str, Any] = {"topic_partitions": []}
            groups.append(
                {
                    "error_code": 0 if members else 69,
                    "error_message": None if members else f"Group {g} is not a consumer group.",
                    "group_id": g,
                    "group_state": "Stable" if members else "Dead",
                    "group_epoch": 1 if members else -1,
                    "assignment_epoch": 1 if members else -1,
                    "assignor_name": "uniform",
                    "members": [
                        {
                            "member_id": m,
                            "instance_id": None,
                            "rack_id": None,
                            "member_epoch": e,
                            "client_id": "",
                            "client_host": "/127.0.0.1",
                            "subscribed_topic_names": [],
                            "subscribed_topic_regex": None,
                            "assignment": none,
                            "target_assignment": none,
                            "member_type": 1,
                        }
                        for m, e in members.items()
                    ],
                    "authorized_operations": -2147483648,
                }
            )
        return {"throttle_time_ms": 0, "groups": groups}

    def _delete_groups(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "results": [{"group_id": g, "error_code": 0} for g in body["groups_names"]],
        }

    def _offset_delete(self, body: dict, v: int) -> dict:
        return {"error_code": 0, "throttle_time_ms": 0, "topics": _no_errors(body["topics"])}

    def _create_topics(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": t["name"],
                    "topic_id": topic_id(t["name"]),
                    "error_code": 0,
                    "error_message": None,
                    "num_partitions": t["num_partitions"],
                    "replication_factor": t["replication_factor"],
                    "configs": [],
                }
                for t in body["topics"]
            ],
        }

    def _delete_topics(self, body: dict, v: int) -> dict:
        names = body.get("topic_names") or [t["name"] for t in body.get("topics", [])]
        return {
            "throttle_time_ms": 0,
            "responses": [
                {"name": n, "topic_id": topic_id(n or ""), "error_code": 0, "error_message": None}
                for n in names
            ],
        }

    def _describe_configs(self, body: dict, v: int) -> dict:
        results = []
        for r in body["resources"]:
            keys = r["configuration_keys"] or ["retention.ms"]
            results.append(
                {
                    "error_code": 0,
                    "error_message": None,
                    "resource_type": r["resource_type"],
                    "resource_name": r["resource_name"],
                    "configs": [
                        {
                            "name": k,
                            "value": "604800000",
                            "read_only": False,
                            "is_default": True,
                            "config_source": 5,
                            "is_sensitive": False,
                            "synonyms": [],
                            "config_type": 5,
                            "documentation": None,
                        }
                        for k in keys
                    ],
                }
            )
        return {"throttle_time_ms": 0, "results": results}

    def _init_producer_id(self, body: dict, v: int) -> dict:
        tid = body["transactional_id"]
        if tid is None:
            pid, epoch = IDEMPOTENT_PRODUCER_ID, 0
        else:
            # A transactional id keeps its producer id; each InitProducerId after the first
            # bumps the epoch (fencing the previous instance); an open transaction is dropped
            # (Kafka's coordinator would abort it first).
            with self._lock:
                txn = self._transactions.get(tid)
                if txn is None:
                    pid = FIRST_TRANSACTIONAL_PRODUCER_ID + len(self._transactions)
                    txn = Transaction(pid, body["transaction_timeout_ms"])
                    self._transactions[tid] = txn
                else:
                    txn.producer_epoch += 1
                    txn.state, txn.partitions, txn.start_ms = "Empty", {}, -1
                pid, epoch = txn.producer_id, txn.producer_epoch
        return {"throttle_time_ms": 0, "error_code": 0, "producer_id": pid, "producer_epoch": epoch}

    def _join_txn(self, tid: str, topics: list[dict]) -> None:
        """Add the partitions of ``topics`` (AddPartitionsToTxn's) to ``tid``'s transaction,
        beginning it if need be; an unknown transactional id is ignored (its requests are
        answered all the same)."""
        with self._lock:
            txn = self._transactions.get(tid)
            if txn is None:
                return
            if txn.state != "Ongoing":
                txn.state, txn.partitions, txn.start_ms = "Ongoing", {}, int(time.time() * 1000)
            for t in topics:
                txn.partitions.setdefault(t["name"], set()).update(t["partitions"])

    def _add_partitions_to_txn(self, body: dict, v: int) -> dict:
        def results(topics: list[dict]) -> list[dict]:
            return [
                {
                    "name": t["name"],
                    "results_by_partition": [
                        {"partition_index": p, "partition_error_code": 0} for p in t["partitions"]
                    ],
                }
                for t in topics
            ]

        if v <= 3:
            self._join_txn(body["v3_and_below_transactional_id"], body["v3_and_below_topics"])
            return {
                "throttle_time_ms": 0,
                "results_by_topic_v3_and_below": results(body["v3_and_below_topics"]),
            }
        # v4+ is the brokers' batched form (KIP-890): several transactions, verify_only ones
        # only asking whether their partitions are already in.
        for t in body["transactions"]:
            if not t["verify_only"]:
                self._join_txn(t["transactional_id"], t["topics"])
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "results_by_transaction": [
                {"transactional_id": t["transactional_id"], "topic_results": results(t["topics"])}
                for t in body["transactions"]
            ],
        }

    def _add_offsets_to_txn(self, body: dict, v: int) -> dict:
        # Kafka adds the group's __consumer_offsets partition; here the transaction begins.
        self._join_txn(body["transactional_id"], [])
        return {"throttle_time_ms": 0, "error_code": 0}

    def _txn_offset_commit(self, body: dict, v: int) -> dict:
        return {"throttle_time_ms": 0, "topics": _no_errors(body["topics"])}

    def _end_txn(self, body: dict, v: int) -> dict:
        with self._lock:
            txn = self._transactions.get(body["transactional_id"])
            if txn is not None:
                txn.state = "CompleteCommit" if body["committed"] else "CompleteAbort"
                txn.partitions, txn.start_ms = {}, -1
        return {"throttle_time_ms": 0, "error_code": 0}

    def _write_txn_markers(self, body: dict, v: int) -> dict:
        return {
            "markers": [
                {
                    "producer_id": m["producer_id"],
                    "topics": [
                        {
                            "name": t["name"],
                            "partitions": [
                                {"partition_index": p, "error_code": 0}
                                for p in t["partition_indexes"]
                            ],
                        }
                        for t in m["topics"]
                    ],
                }
                for m in body["markers"]
            ]
        }

    def _describe_transactions(self, body: dict, v: int) -> dict:
        states = []
        for tid in body["transactional_ids"]:
            with self._lock:
                txn = self._transactions.get(tid)
                parts = dict(txn.partitions) if txn is not None else {}
            if txn is None:
                # TRANSACTIONAL_ID_NOT_FOUND, as Kafka answers an id it has no state for.
                states.append(
                    {
                        "error_code": 105,
                        "transactional_id": tid,
                        "transaction_state": "",
                        "transaction_timeout_ms": 0,
                        "transaction_start_time_ms": -1,
                        "producer_id": -1,
                        "producer_epoch": -1,
                        "topics": [],
                    }
                )
                continue
            states.append(
                {
                    "error_code": 0,
                    "transactional_id": tid,
                    "transaction_state": txn.state,
                    "transaction_timeout_ms": txn.timeout_ms,
                    "transaction_start_time_ms": txn.start_ms,
                    "producer_id": txn.producer_id,
                    "producer_epoch": txn.producer_epoch,
                    "topics": [
                        {"topic": n, "partitions": sorted(ps)} for n, ps in sorted(parts.items())
                    ],
                }
            )
        return {"throttle_time_ms": 0, "transaction_states": states}

    def _list_transactions(self, body: dict, v: int) -> dict:
        # Kafka's filters: states (unknown state names are echoed back), producer ids, and
        # from v1 a minimum running time in ms (-1 or absent: any).
        states, pids = set(body["state_filters"]), set(body["producer_id_filters"])
        duration = body.get("duration_filter", -1)
        now = int(time.time() * 1000)
        with self._lock:
            rows = [
                (tid, t.producer_id, t.state, t.start_ms) for tid, t in self._transactions.items()
            ]
        listed = [
            {"transactional_id": tid, "producer_id": pid, "transaction_state": state}
            for tid, pid, state, start in rows
            if (not states or state in states)
            and (not pids or pid in pids)
            and (duration < 0 or (start >= 0 and now - start >= duration))
        ]
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "unknown_state_filters": sorted(states - TRANSACTION_STATES),
            "transaction_states": listed,
        }

    def _alter_configs(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "responses": [
                {
                    "error_code": 0,
                    "error_message": None,
                    "resource_type": r["resource_type"],
                    "resource_name": r["resource_name"],
                }
                for r in body["resources"]
            ],
        }

    _incremental_alter_configs = _alter_configs

    def _create_partitions(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "results": [
                {"name": t["name"], "error_code": 0, "error_message": None} for t in body["topics"]
            ],
        }

    def _delete_records(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": t["name"],
                    "partitions": [
                        {
                            "partition_index": p["partition_index"],
                            "low_watermark": max(p["offset"], 0),
                            "error_code": 0,
                        }
                        for p in t["partitions"]
                    ],
                }
                for t in body["topics"]
            ],
        }

    def _offset_for_leader_epoch(self, body: dict, v: int) -> dict:
        # Every epoch ends at the log end: no truncation for the consumer to detect.
        with self._lock:
            end = self._next_offset
        return {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "topic": t["topic"],
                    "partitions": [
                        {
                            "error_code": 0,
                            "partition": p["partition"],
                            "leader_epoch": p["leader_epoch"],
                            "end_offset": end,
                        }
                        for p in t["partitions"]
                    ],
                }
                for t in body["topics"]
            ],
        }

    def _create_acls(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "results": [{"error_code": 0, "error_message": None} for _ in body["creations"]],
        }

    def _describe_acls(self, body: dict, v: int) -> dict:
        return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "resources": []}

    def _delete_acls(self, body: dict, v: int) -> dict:
        return {
            "throttle_time_ms": 0,
            "filter_results": [
                {"error_code": 0, "error_message": None, "matching_acls": []}
                for _ in body["filters"]
            ],
        }

    def _describe_user_scram_credentials(self, body: dict, v: int) -> dict:
        users = [u["name"] for u in body.get("users") or []]
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "results": [
                {"user": u, "error_code": 0, "error_message": None, "credential_infos": []}
                for u in users
            ],
        }

    def _alter_user_scram_credentials(self, body: dict, v: int) -> dict:
        users = [u["name"] for u in body["deletions"]] + [u["name"] for u in body["upsertions"]]
        return {
            "throttle_time_ms": 0,
            "results": [
                {"user": u, "error_code": 0, "error_message": None} for u in dict.fromkeys(users)
            ],
        }

    def _describe_cluster(self, body: dict, v: int) -> dict:
        node = self._broker()
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "endpoint_type": body.get("endpoint_type", 1),
            "cluster_id": "kgroup-fake-cluster",
            "controller_id": 0,
            "brokers": [{"broker_id": 0, "host": node["host"], "port": node["port"], "rack": None}],
            "cluster_authorized_operations": -2147483648,
        }

    def _describe_log_dirs(self, body: dict, v: int) -> dict:
        topics = body.get("topics") or [{"topic": "kgroup-fixture", "partitions": [0]}]
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "results": [
                {
                    "error_code": 0,
                    "log_dir": "/var/lib/kgroup-fake",
                    "topics": [
                        {
                            "name": t["topic"],
                            "partitions": [
                                {
                                    "partition_index": p,
                                    "partition_size": 1024,
                                    "offset_lag": 0,
                                    "is_future_key": False,
                                }
                                for p in t["partitions"]
                            ],
                        }
                        for t in topics
                    ],
                    "total_bytes": 1 << 30,
                    "usable_bytes": 1 << 29,
                }
            ],
        }

    def _list_config_resources(self, body: dict, v: int) -> dict:
        resources = [{"resource_name": "kgroup-fixture", "resource_type": 2}]
        if v >= 1:
            resources.append({"resource_name": "1", "resource_type": 4})
        return {"throttle_time_ms": 0, "error_code": 0, "config_resources": resources}

    def _describe_producers(self, body: dict, v: int) -> dict:
        producer = {
            "producer_id": 1000,
            "producer_epoch": 0,
            "last_sequence": 0,
            "last_timestamp": -1,
            "coordinator_epoch": -1,
            "current_txn_start_offset": -1,
        }
        return {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": t["name"],
                    "partitions": [
                        {
                            "partition_index": p,
                            "error_code": 0,
                            "error_message": None,
                            "active_producers": [producer],
                        }
                        for p in t["partition_indexes"]
                    ],
                }
                for t in body["topics"]
            ],
        }


#: TRANSACTION_STATES are Kafka's transaction state names, as ListTransactions filters by them.
TRANSACTION_STATES = {
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
}


def _no_errors(topics: list[dict]) -> list[dict]:
    """Error code 0 for every partition of the request's topics (OffsetCommit, OffsetDelete,
    TxnOffsetCommit)."""
    return [
        {
            "name": t["name"],
            "partitions": [
                {"partition_index": p["partition_index"], "error_code": 0} for p in t["partitions"]
            ],
        }
        for t in topics
    ]


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
