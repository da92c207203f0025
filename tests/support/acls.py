"""ACLs on two brokers at once (``tests/conformance/test_acls*_differential.py``): Apache Kafka
and kgroup's broker each with Kafka's StandardAuthorizer and a SASL_PLAINTEXT listener beside
the PLAINTEXT one, the steps a sequence sends (bindings, filters, produce, fetch, metadata,
commits) and the checks that pin a refusal as one.

Connections are principals: ``main`` is PLAINTEXT (``User:ANONYMOUS``); a connection named
after a user of :data:`SASL_USERS` authenticates with SASL PLAIN as that user
(:func:`as_user`)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from kgroup.acl import AclOperation, AclPermissionType, ResourceType
from kgroup.broker import Broker
from kgroup.broker.config import BROKER_CONFIGS
from kgroup.protocol import ApiKey
from kgroup.protocol.records import Record, encode_batch

from .apache_kafka import KafkaCluster
from .differential import NO_ID, Differential, Peer
from .kgroup_broker import Wire, run_broker
from .ports import free_port

PRINCIPALS = {"main": "User:ANONYMOUS", "alice": "User:alice", "bob": "User:bob"}
ANON = PRINCIPALS["main"]
OTHER = "User:alice"
#: SASL_USERS are the PLAIN users both brokers know (PlainLoginModule's user_<name> entries).
SASL_USERS = {"alice": "alice-secret", "bob": "bob-secret"}
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{u}="{pw}"' for u, pw in SASL_USERS.items())
    + ";"
)
SASL_CONFIG = {
    "sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
}


def kgroup_has_sasl() -> bool:
    """Whether this kgroup's broker serves SASL (issue 24's SASL part, merged separately)."""
    return "sasl.enabled.mechanisms" in BROKER_CONFIGS


Op = AclOperation
T = ResourceType
ALLOW, DENY = int(AclPermissionType.ALLOW), int(AclPermissionType.DENY)
LITERAL, PREFIXED, MATCH, ANY = 3, 4, 2, 1
NOW = int(time.time() * 1000)


def sasl_address(cluster: KafkaCluster) -> str:
    """The ``host:port`` of Kafka's SASL_PLAINTEXT listener."""
    for listener in cluster.nodes[0].config["advertised.listeners"].split(","):
        if listener.startswith("SASL_PLAINTEXT://"):
            return listener.split("//")[1]
    raise KeyError("SASL_PLAINTEXT")


class PlainWire(Wire):
    """PlainWire is a raw client authenticated with SASL PLAIN (SaslHandshake v1, then
    SaslAuthenticate v2 with ``\\0user\\0password``), as Kafka's clients authenticate."""

    def __init__(self, bootstrap: str, user: str, password: str) -> None:
        super().__init__(bootstrap)
        r = self.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert r.body.error_code == 0, r.body
        token = f"\0{user}\0{password}".encode()
        r = self.request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": token})
        assert r.body.error_code == 0, r.body


def as_user(d: Differential, conn: str, sasl: tuple[str, str]) -> None:
    """Open connection ``conn`` on both brokers as the SASL user of that name (``sasl``: each
    broker's SASL_PLAINTEXT address, kgroup's first)."""
    for peer, address in zip(d.peers, sasl, strict=True):
        if conn not in peer.conns:
            peer.conns[conn] = PlainWire(address, conn, SASL_USERS[conn])


def codes(body: Any) -> set[int]:
    """Every error code of an answer, at any depth."""
    out: set[int] = set()

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k in ("error_code", "partition_error_code") and isinstance(x, int):
                    out.add(x)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(body.to_dict() if hasattr(body, "to_dict") else body)
    return out


def refused(*wanted: int) -> Any:
    """An ``expect`` that kgroup's answer carries each of ``wanted``: the refusals compared are
    refusals indeed, not two brokers agreeing to allow."""
    return lambda body: set(wanted) <= codes(body)


TOPIC_DENIED, GROUP_DENIED, CLUSTER_DENIED, TXN_DENIED = 29, 30, 31, 53


def canonical(v: Any) -> Any:
    """ACL lists in one order: Kafka answers DescribeAcls from a hash map."""
    if isinstance(v, dict):
        out = {k: canonical(x) for k, x in v.items()}
        for key in ("resources", "acls", "matching_acls"):
            if isinstance(out.get(key), list):
                out[key] = sorted(out[key], key=lambda x: json.dumps(x, sort_keys=True))
        return out
    if isinstance(v, list):
        return [canonical(x) for x in v]
    return v


def binding(
    restype: ResourceType,
    name: str,
    op: AclOperation,
    permission: int = ALLOW,
    principal: str = ANON,
    pattern: int = LITERAL,
    host: str = "*",
) -> dict[str, Any]:
    return {
        "resource_type": int(restype),
        "resource_name": name,
        "resource_pattern_type": pattern,
        "principal": principal,
        "host": host,
        "operation": int(op),
        "permission_type": permission,
    }


def acl_filter(
    restype: int = T.ANY,
    name: str | None = None,
    pattern: int = ANY,
    principal: str | None = None,
    op: int = Op.ANY,
    permission: int = AclPermissionType.ANY,
) -> dict[str, Any]:
    return {
        "resource_type_filter": int(restype),
        "resource_name_filter": name,
        "pattern_type_filter": pattern,
        "principal_filter": principal,
        "host_filter": None,
        "operation": int(op),
        "permission_type": int(permission),
    }


def create_acls(d: Differential, *bindings: dict[str, Any]) -> None:
    d.request(ApiKey.CREATE_ACLS, 3, {"creations": list(bindings)})
    acls_settled(d)


def acls_settled(d: Differential) -> None:
    """DescribeAcls of everything until both brokers agree: Kafka's broker has the change."""
    d.eventually(ApiKey.DESCRIBE_ACLS, 3, acl_filter(), timeout=15)


def batch(n: int = 2) -> bytes:
    return encode_batch([Record(i, NOW + i, b"k", b"v", ()) for i in range(n)])


def produce(
    d: Differential,
    topic: str,
    txn: str | None = None,
    records: Any = None,
    expect: Any = None,
    conn: str = "main",
) -> Any:
    def body(p: Peer) -> dict[str, Any]:
        return {
            "transactional_id": txn,
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [
                {
                    "name": topic,
                    "partition_data": [{"index": 0, "records": records(p) if records else batch()}],
                }
            ],
        }

    return d.request(ApiKey.PRODUCE, 9, body, conn=conn, expect=expect)


def fetch(d: Differential, topic: str, expect: Any = None, conn: str = "main") -> Any:
    body = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": 0,
                        "current_leader_epoch": -1,
                        "fetch_offset": 0,
                        "log_start_offset": -1,
                        "partition_max_bytes": 1 << 20,
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    return d.request(ApiKey.FETCH, 12, body, conn=conn, expect=expect)


def metadata(
    d: Differential,
    *topics: str,
    auto_create: bool = False,
    ops: bool = True,
    conn: str = "main",
    expect: Any = None,
) -> Any:
    return d.request(
        ApiKey.METADATA,
        10,
        {
            "topics": [{"name": t, "topic_id": NO_ID} for t in topics] if topics else None,
            "allow_auto_topic_creation": auto_create,
            "include_cluster_authorized_operations": ops,
            "include_topic_authorized_operations": ops,
        },
        conn=conn,
        expect=expect,
    )


def commit_body(group: str, *topics: str) -> dict[str, Any]:
    return {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [
            {
                "name": t,
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": 1,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "m",
                    }
                ],
            }
            for t in topics
        ],
    }


@contextlib.contextmanager
def kafka_with_sasl(config: Mapping[str, Any]) -> Iterator[KafkaCluster]:
    """Kafka with a SASL_PLAINTEXT listener (PLAIN, :data:`SASL_USERS`) beside its PLAINTEXT one;
    its broker and controller keep talking PLAINTEXT, as User:ANONYMOUS."""
    cluster = KafkaCluster(1, config)
    node = cluster.nodes[0]
    sasl = f"SASL_PLAINTEXT://127.0.0.1:{free_port()}"
    node.config["listeners"] += "," + sasl
    node.config["advertised.listeners"] += "," + sasl
    node.config["listener.security.protocol.map"] += ",SASL_PLAINTEXT:SASL_PLAINTEXT"
    node.config.update(SASL_CONFIG)
    with cluster:
        yield cluster


@contextlib.contextmanager
def kgroup_with_sasl(data: Path, config: Mapping[str, Any]) -> Iterator[Broker]:
    """kgroup's broker with the same listeners (SASL_PLAINTEXT once it serves SASL)."""
    values: dict[str, Any] = dict(config)
    if kgroup_has_sasl():
        values["listeners"] = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"
        values.update(SASL_CONFIG)
    with run_broker(data, values) as b:
        yield b


def sasl_addresses(kgroup: Broker, kafka: KafkaCluster) -> tuple[str, str]:
    """Each broker's SASL_PLAINTEXT address, kgroup's first (as :func:`as_user` takes them)."""
    return kgroup.address("SASL_PLAINTEXT"), sasl_address(kafka)
