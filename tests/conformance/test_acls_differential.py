"""ACLs on both brokers: the same ACL changes and the same requests to Apache Kafka with its
StandardAuthorizer and to kgroup's broker, answers compared (the acceptance test of issue 24's
authorisation part): CreateAcls, DescribeAcls, DeleteAcls and their refusals; Produce, Fetch,
ListOffsets and Metadata; the group apis and offsets; topic admin and configs; transactions;
authorized operations; and what a principal without DESCRIBE on the cluster may see.

Both brokers run with ``allow.everyone.if.no.acl.found=true`` and no super user. The
sequence's client is ``User:ANONYMOUS`` (PLAINTEXT), and so is Kafka's own broker talking to
its controller, which needs CLUSTER_ACTION on the cluster once the cluster has ACLs (the first
ACLs created grant it). An ACL for another principal (``User:alice``) on a resource is what
takes it away from ANONYMOUS. :func:`test_principals` runs steps as SASL PLAIN users too
(``support.acls``); ``test_acls_strict_differential.py`` runs with no default allow.

Kafka applies an ACL change on its broker when its metadata log reaches it, a little after
CreateAcls or DeleteAcls answers: :func:`acls_settled` asks DescribeAcls until both agree.
The module's steps build on one another (the last takes DESCRIBE on the cluster away)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from support.acls import (
    ALLOW,
    ANON,
    ANY,
    CLUSTER_DENIED,
    DENY,
    GROUP_DENIED,
    LITERAL,
    MATCH,
    NOW,
    OTHER,
    PREFIXED,
    SASL_USERS,
    TOPIC_DENIED,
    TXN_DENIED,
    Op,
    PlainWire,
    T,
    acl_filter,
    acls_settled,
    as_user,
    binding,
    canonical,
    commit_body,
    create_acls,
    fetch,
    kafka_with_sasl,
    kgroup_has_sasl,
    kgroup_with_sasl,
    metadata,
    produce,
    refused,
    sasl_address,
    sasl_addresses,
)
from support.apache_kafka import KafkaCluster
from support.differential import (
    NO_ID,
    Differential,
    Peer,
    create_topic,
    new_name,
    wait_for_coordinator,
)
from support.kafka_tools import Transcript, compare, unique

from kgroup.acl import CLUSTER_NAME, AclPermissionType
from kgroup.broker import Broker
from kgroup.broker.authorizer import STANDARD_AUTHORIZER
from kgroup.cli import acls as acls_cli
from kgroup.cli import build_parser
from kgroup.protocol import ApiKey
from kgroup.protocol.records import Record, encode_batch

pytestmark = pytest.mark.network

CONFIG = {
    "authorizer.class.name": STANDARD_AUTHORIZER,
    "allow.everyone.if.no.acl.found": "true",
    "group.initial.rebalance.delay.ms": 0,
    "num.partitions": 1,
}


@pytest.fixture(scope="module")
def acl_kafka() -> Iterator[KafkaCluster]:
    with kafka_with_sasl(CONFIG) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def acl_kgroup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with kgroup_with_sasl(tmp_path_factory.mktemp("acls-differential"), CONFIG) as b:
        yield b


@pytest.fixture(scope="module")
def names() -> dict[str, str]:
    """The resources of the module's sequence, named once for both brokers."""
    return {
        "ok": new_name("acl-ok"),
        "ro": new_name("acl-ro"),
        "hidden": new_name("acl-hidden"),
        "pre": new_name("acl-pre"),
        "group_ok": new_name("acl-g-ok"),
        "group_denied": new_name("acl-g-denied"),
        "txn_ok": new_name("acl-tx-ok"),
        "txn_ro": new_name("acl-tx-ro"),
        "txn_denied": new_name("acl-tx-denied"),
    }


@pytest.fixture(scope="module")
def d(acl_kgroup: Broker, acl_kafka: KafkaCluster) -> Iterator[Differential]:
    for bootstrap in (acl_kgroup.bootstrap_servers, acl_kafka.bootstrap):
        wait_for_coordinator(bootstrap)
    with Differential(acl_kgroup.bootstrap_servers, acl_kafka.bootstrap) as diff:
        diff.rewrite = lambda _p, body: canonical(body)
        yield diff


def test_setup_and_acl_apis(d: Differential, names: dict[str, str]) -> None:
    """Topics first (CREATE on the cluster is every principal's until the cluster has ACLs),
    then the ACLs of the sequence, refusals included, listed and filtered."""
    for key in ("ok", "ro", "hidden"):
        create_topic(d, name=names[key])
    create_topic(d, name=names["pre"] + "-a")
    n = names
    d.request(
        ApiKey.CREATE_ACLS,
        3,
        {
            "creations": [
                # The cluster: CLUSTER_ACTION (Kafka's broker needs it) and ALTER (ACL changes).
                binding(T.CLUSTER, CLUSTER_NAME, Op.CLUSTER_ACTION),
                binding(T.CLUSTER, CLUSTER_NAME, Op.ALTER),
                binding(T.TOPIC, n["ro"], Op.WRITE, DENY),
                binding(T.TOPIC, n["hidden"], Op.ALL, principal=OTHER),
                binding(T.TOPIC, n["pre"], Op.READ, pattern=PREFIXED),
                binding(T.TOPIC, n["pre"] + "c", Op.CREATE, pattern=PREFIXED),
                binding(T.GROUP, n["group_denied"], Op.READ, principal=OTHER),
                binding(T.TRANSACTIONAL_ID, n["txn_ro"], Op.DESCRIBE),
                binding(T.TRANSACTIONAL_ID, n["txn_denied"], Op.WRITE, principal=OTHER),
                # Refused, each with Kafka's message (compared by presence).
                binding(T.CLUSTER, "other-cluster", Op.ALTER),
                binding(T.TOPIC, "", Op.READ),
                binding(T.TOPIC, "x", Op.READ, principal="alice"),
            ]
        },
    )
    acls_settled(d)
    # A binding with ANY or MATCH in it: Kafka cannot build it, the whole request fails.
    for bad in (
        binding(T.TOPIC, "x", Op.READ, pattern=MATCH),
        binding(T.TOPIC, "x", Op.ANY),
        binding(T.ANY, "x", Op.READ),
        binding(T.TOPIC, "x", Op.READ, permission=int(AclPermissionType.ANY)),
    ):
        d.request(ApiKey.CREATE_ACLS, 3, {"creations": [binding(T.TOPIC, "y", Op.READ), bad]})
    # Filters: by resource with MATCH (literal, wildcard and prefixes that apply), ANY
    # pattern, by principal, by operation, nothing.
    d.request(ApiKey.DESCRIBE_ACLS, 3, acl_filter(T.TOPIC, n["pre"] + "-a", MATCH))
    d.request(ApiKey.DESCRIBE_ACLS, 3, acl_filter(T.TOPIC, n["pre"], ANY))
    d.request(ApiKey.DESCRIBE_ACLS, 3, acl_filter(principal=OTHER))
    d.request(ApiKey.DESCRIBE_ACLS, 3, acl_filter(T.CLUSTER, op=Op.ALTER))
    d.request(ApiKey.DESCRIBE_ACLS, 3, acl_filter(T.GROUP, "nothing", LITERAL))
    d.request(ApiKey.DESCRIBE_ACLS, 2, acl_filter(T.TOPIC, n["ro"], LITERAL))
    # DeleteAcls: a filter that matches nothing, one that matches, then the same again.
    scratch = binding(T.TOPIC, "scratch", Op.DESCRIBE, principal="User:bob", host="10.0.0.1")
    create_acls(d, scratch)
    d.request(
        ApiKey.DELETE_ACLS,
        3,
        {
            "filters": [
                acl_filter(T.TOPIC, "scratch", LITERAL, "User:nobody"),
                acl_filter(T.TOPIC, "scratch", ANY),
                acl_filter(T.TOPIC, "scratch", MATCH),
            ]
        },
    )
    acls_settled(d)


def test_produce_fetch_list_offsets(d: Differential, names: dict[str, str]) -> None:
    n = names
    produce(d, n["ok"])
    produce(d, n["ro"], expect=refused(TOPIC_DENIED))  # DENY WRITE
    produce(d, n["hidden"], expect=refused(TOPIC_DENIED))  # another principal's ACL only
    produce(d, n["pre"] + "-a", expect=refused(TOPIC_DENIED))  # the prefix allows READ only
    produce(d, n["pre"] + "-missing", expect=refused(TOPIC_DENIED))  # before the lookup
    produce(d, new_name("acl-missing"))  # no ACL, allowed by default: unknown topic
    fetch(d, n["ok"])
    fetch(d, n["ro"])
    fetch(d, n["hidden"], expect=refused(TOPIC_DENIED))
    fetch(d, n["pre"] + "-a")
    for t in (n["ok"], n["hidden"]):
        d.request(
            ApiKey.LIST_OFFSETS,
            7,
            {
                "replica_id": -1,
                "isolation_level": 0,
                "topics": [
                    {
                        "name": t,
                        "partitions": [
                            {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}
                        ],
                    }
                ],
            },
        )


def test_metadata(d: Differential, names: dict[str, str]) -> None:
    n = names
    metadata(d, n["ok"], n["ro"], n["hidden"], n["pre"] + "-a")
    # Auto-creation: a name under the READ-only prefix needs CREATE, refused. (One without
    # ACLs is allowed by default: both create it, each answering as docs/kafka-differences.md
    # says, so that step is not compared.)
    metadata(d, n["pre"] + "-auto", auto_create=True)
    # Every topic: the hidden one left out (compared among this module's topics).
    mine = {n["ok"], n["ro"], n["hidden"], n["pre"] + "-a"}

    def only_mine(_p: Peer, body: dict[str, Any]) -> dict[str, Any]:
        body["topics"] = [t for t in body["topics"] if t["name"] in mine]
        return body

    d.rewrite = only_mine
    try:
        metadata(d)
    finally:
        d.rewrite = lambda _p, body: canonical(body)
    d.request(ApiKey.DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True})


def test_groups_and_offsets(d: Differential, names: dict[str, str]) -> None:
    n = names
    ok, denied = n["group_ok"], n["group_denied"]
    d.request(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [ok, denied]})
    join = {
        "group_id": denied,
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 10_000,
        "member_id": "",
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}],
        "reason": None,
    }
    d.request(ApiKey.JOIN_GROUP, 9, join, expect=refused(GROUP_DENIED))
    d.request(ApiKey.HEARTBEAT, 4, {"group_id": denied, "generation_id": 1, "member_id": "m"})
    d.request(
        ApiKey.SYNC_GROUP,
        5,
        {
            "group_id": denied,
            "generation_id": 1,
            "member_id": "m",
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocol_name": "range",
            "assignments": [],
        },
    )
    d.request(ApiKey.LEAVE_GROUP, 5, {"group_id": denied, "members": [{"member_id": "m"}]})
    # Commits: the group refused whole; a topic not readable refused alone.
    d.request(ApiKey.OFFSET_COMMIT, 8, commit_body(denied, n["ok"]), expect=refused(GROUP_DENIED))
    d.request(
        ApiKey.OFFSET_COMMIT,
        8,
        commit_body(ok, n["ok"], n["hidden"], n["pre"] + "-a"),
        expect=refused(0, TOPIC_DENIED),
    )
    d.request(ApiKey.OFFSET_COMMIT, 8, commit_body(ok, n["hidden"]))
    # Fetches: several groups (v8) with named topics and with every topic (the hidden one,
    # committed by no one, would not show anyway: the readable ones must).
    d.request(
        ApiKey.OFFSET_FETCH,
        8,
        {
            "groups": [
                {"group_id": denied, "topics": None},
                {
                    "group_id": ok,
                    "topics": [
                        {"name": t, "partition_indexes": [0]}
                        for t in (n["ok"], n["hidden"], n["pre"] + "-a")
                    ],
                },
            ],
            "require_stable": False,
        },
    )
    d.request(
        ApiKey.OFFSET_FETCH,
        8,
        {"groups": [{"group_id": ok, "topics": None}], "require_stable": False},
    )
    # v7: one group, a top-level error.
    d.request(ApiKey.OFFSET_FETCH, 7, {"group_id": denied, "topics": None, "require_stable": False})
    d.request(
        ApiKey.OFFSET_FETCH,
        7,
        {
            "group_id": ok,
            "topics": [{"name": t, "partition_indexes": [0]} for t in (n["ok"], n["hidden"])],
            "require_stable": False,
        },
    )
    d.request(
        ApiKey.DESCRIBE_GROUPS,
        5,
        {"groups": [ok, denied], "include_authorized_operations": True},
    )
    d.request(
        ApiKey.OFFSET_DELETE,
        0,
        {"group_id": denied, "topics": [{"name": n["ok"], "partitions": [{"partition_index": 0}]}]},
    )
    d.request(
        ApiKey.OFFSET_DELETE,
        0,
        {
            "group_id": ok,
            "topics": [
                {"name": t, "partitions": [{"partition_index": 0}]} for t in (n["ok"], n["hidden"])
            ],
        },
    )

    # KIP-848: READ on the group, DESCRIBE on every topic subscribed to by name.
    def heartbeat(group: str, *topics: str) -> dict[str, Any]:
        return {
            "group_id": group,
            "member_id": "",
            "member_epoch": 0,
            "instance_id": None,
            "rack_id": None,
            "rebalance_timeout_ms": 10_000,
            "subscribed_topic_names": list(topics),
            "server_assignor": None,
            "topic_partitions": [],
        }

    d.request(
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        0,
        heartbeat(denied, n["ok"]),
        expect=refused(GROUP_DENIED),
    )
    d.request(
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        0,
        heartbeat(new_name("acl-g-848"), n["ok"], n["hidden"]),
        expect=refused(TOPIC_DENIED),
    )
    d.request(
        ApiKey.CONSUMER_GROUP_DESCRIBE,
        0,
        {"group_ids": [denied, new_name("acl-g-none")], "include_authorized_operations": True},
        expect=refused(GROUP_DENIED),
    )
    d.request(ApiKey.DELETE_GROUPS, 2, {"groups_names": [denied, ok]}, expect=refused(GROUP_DENIED))


def test_topic_admin_and_configs(d: Differential, names: dict[str, str]) -> None:
    n = names

    def create(name: str, expect: Any = None) -> None:
        d.request(
            ApiKey.CREATE_TOPICS,
            7,
            {
                "topics": [
                    {
                        "name": name,
                        "num_partitions": 1,
                        "replication_factor": 1,
                        "assignments": [],
                        "configs": [],
                    }
                ],
                "timeout_ms": 10_000,
                "validate_only": True,
            },
            ignore=["configs", "topic_id"],
            expect=expect,
        )

    create(n["pre"] + "-new")  # READ-only prefix: no CREATE
    # CREATE, but no DESCRIBE_CONFIGS: created, its configs hidden.
    create(n["pre"] + "c-new", lambda b: b.topics[0].topic_config_error_code == TOPIC_DENIED)
    create(n["hidden"])  # another principal's topic
    d.request(
        ApiKey.DELETE_TOPICS,
        6,
        {
            "topics": [
                {"name": t, "topic_id": NO_ID}
                for t in (n["hidden"], n["ro"], new_name("acl-missing"))
            ],
            "timeout_ms": 10_000,
        },
    )
    d.request(
        ApiKey.CREATE_PARTITIONS,
        3,
        {
            "topics": [
                {"name": t, "count": 2, "assignments": None} for t in (n["ro"], n["hidden"])
            ],
            "timeout_ms": 10_000,
            "validate_only": True,
        },
    )
    d.request(
        ApiKey.DELETE_RECORDS,
        2,
        {
            "topics": [
                {"name": t, "partitions": [{"partition_index": 0, "offset": 0}]}
                for t in (n["ro"], n["hidden"])
            ],
            "timeout_ms": 5000,
        },
    )
    d.request(
        ApiKey.DESCRIBE_CONFIGS,
        4,
        {
            "resources": [
                {"resource_type": 2, "resource_name": n["hidden"], "configuration_keys": None},
                {"resource_type": 4, "resource_name": "", "configuration_keys": None},
                {
                    "resource_type": 32,
                    "resource_name": n["group_denied"],
                    "configuration_keys": None,
                },
            ],
            "include_synonyms": False,
            "include_documentation": False,
        },
    )
    d.request(
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        1,
        {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": t,
                    "configs": [{"name": "retention.ms", "config_operation": 0, "value": "1000"}],
                }
                for t in (n["ro"], n["hidden"])
            ],
            "validate_only": True,
        },
    )
    d.request(ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": []}, ignore=["results"])
    d.request(
        ApiKey.DESCRIBE_PRODUCERS,
        0,
        {"topics": [{"name": t, "partition_indexes": [0]} for t in (n["ok"], n["hidden"])]},
    )


def init(d: Differential, txn: str | None, expect: Any = None) -> Any:
    body = {
        "transactional_id": txn,
        "transaction_timeout_ms": 60_000,
        "producer_id": -1,
        "producer_epoch": -1,
    }
    return d.request(ApiKey.INIT_PRODUCER_ID, 4, body, expect=expect)


def test_transactions(d: Differential, names: dict[str, str]) -> None:
    n = names
    # Kafka answers COORDINATOR_NOT_AVAILABLE while it creates __transaction_state (kgroup
    # creates it in the request: docs/kafka-differences.md); the refusal comes first on both.
    d.eventually(
        ApiKey.FIND_COORDINATOR,
        4,
        {"key_type": 1, "coordinator_keys": [n["txn_denied"], n["txn_ro"]]},
        timeout=30,
    )
    init(d, n["txn_denied"], expect=refused(TXN_DENIED))
    init(d, n["txn_ro"], expect=refused(TXN_DENIED))  # DESCRIBE only: no WRITE
    # Idempotent: no IDEMPOTENT_WRITE, but WRITE on some topic (by default). Kafka answers
    # COORDINATOR_LOAD_IN_PROGRESS until its broker has a block of producer ids.
    body = {
        "transactional_id": None,
        "transaction_timeout_ms": 60_000,
        "producer_id": -1,
        "producer_epoch": -1,
    }
    d.eventually(ApiKey.INIT_PRODUCER_ID, 4, body, ignore=["producer_id"], timeout=30)
    for api, version, body in (
        (
            ApiKey.ADD_PARTITIONS_TO_TXN,
            3,
            {
                "v3_and_below_transactional_id": n["txn_denied"],
                "v3_and_below_producer_id": 1,
                "v3_and_below_producer_epoch": 0,
                "v3_and_below_topics": [{"name": n["ok"], "partitions": [0]}],
            },
        ),
        (
            ApiKey.ADD_OFFSETS_TO_TXN,
            3,
            {
                "transactional_id": n["txn_denied"],
                "producer_id": 1,
                "producer_epoch": 0,
                "group_id": n["group_ok"],
            },
        ),
        (
            ApiKey.END_TXN,
            3,
            {
                "transactional_id": n["txn_denied"],
                "producer_id": 1,
                "producer_epoch": 0,
                "committed": True,
            },
        ),
        (
            ApiKey.TXN_OFFSET_COMMIT,
            3,
            {
                "transactional_id": n["txn_denied"],
                "group_id": n["group_ok"],
                "producer_id": 1,
                "producer_epoch": 0,
                "generation_id": -1,
                "member_id": "",
                "group_instance_id": None,
                "topics": [
                    {
                        "name": n["ok"],
                        "partitions": [
                            {
                                "partition_index": 0,
                                "committed_offset": 1,
                                "committed_leader_epoch": -1,
                                "committed_metadata": "",
                            }
                        ],
                    }
                ],
            },
        ),
        (
            ApiKey.DESCRIBE_TRANSACTIONS,
            0,
            {"transactional_ids": [n["txn_denied"]]},
        ),
    ):
        d.request(api, version, body)
    # A transaction the principal may run, on a topic it may not write: nothing is added.
    body = {
        "transactional_id": n["txn_ok"],
        "transaction_timeout_ms": 60_000,
        "producer_id": -1,
        "producer_epoch": -1,
    }
    # (Retried while Kafka's coordinator loads: each retry bumps the epoch.)
    a = d.eventually(
        ApiKey.INIT_PRODUCER_ID, 4, body, ignore=["producer_id", "producer_epoch"], timeout=30
    )
    d.keep("pid", a, lambda b: b.producer_id)
    d.keep("epoch", a, lambda b: b.producer_epoch)
    d.request(
        ApiKey.ADD_PARTITIONS_TO_TXN,
        3,
        lambda p: {
            "v3_and_below_transactional_id": n["txn_ok"],
            "v3_and_below_producer_id": p["pid"],
            "v3_and_below_producer_epoch": p["epoch"],
            "v3_and_below_topics": [
                {"name": n["ok"], "partitions": [0]},
                {"name": n["hidden"], "partitions": [0]},
            ],
        },
        expect=refused(TOPIC_DENIED, 55),
    )
    d.request(
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        {"transactional_ids": [n["txn_denied"], n["txn_ok"]]},
        ignore=["producer_epoch"],
        expect=refused(0, TXN_DENIED),
    )
    # ListTransactions lists only the ids the principal may describe.
    mine = {n["txn_ok"], n["txn_denied"]}

    def only_mine(_p: Peer, body: dict[str, Any]) -> dict[str, Any]:
        body["transaction_states"] = [
            t for t in body["transaction_states"] if t["transactional_id"] in mine
        ]
        return body

    listing = {"state_filters": [], "producer_id_filters": [], "duration_filter": -1}

    def listed(body: Any) -> set[str]:
        return {t.transactional_id for t in body.transaction_states} & mine

    d.rewrite = only_mine
    try:
        d.request(ApiKey.LIST_TRANSACTIONS, 1, listing, expect=lambda b: listed(b) == {n["txn_ok"]})
        d.rewrite = lambda _p, body: canonical(body)
        create_acls(d, binding(T.TRANSACTIONAL_ID, n["txn_ok"], Op.DESCRIBE, principal=OTHER))
        d.rewrite = only_mine
        d.request(ApiKey.LIST_TRANSACTIONS, 1, listing, expect=lambda b: listed(b) == set())
    finally:
        d.rewrite = lambda _p, body: canonical(body)
    # Produce with transactional records under an id the principal may not write.
    produce(d, n["ok"], txn=n["txn_denied"], records=lambda p: transactional_batch())


def transactional_batch() -> bytes:
    return encode_batch(
        [Record(0, NOW, b"k", b"v", ())], producer_id=1, producer_epoch=0, transactional=True
    )


ACL_COMMAND = "org.apache.kafka.tools.AclCommand"


def test_kafka_acls_tool(acl_kgroup: Broker, acl_kafka: KafkaCluster) -> None:
    """kafka-acls.sh on both brokers, transcripts compared; then ``kgroup acls`` against Kafka
    prints what kafka-acls.sh printed. (One entry per resource listed: Kafka's tool prints a
    hash set's order.)"""
    t = unique("kt-acls")
    steps = [
        ["--add", "--allow-principal", "User:tool", "--operation", "Read", "--topic", t],
        [
            "--add",
            "--deny-principal",
            "User:tool",
            "--deny-host",
            "10.0.0.9",
            "--operation",
            "Write",
            "--resource-pattern-type",
            "prefixed",
            "--topic",
            t[:-2],
        ],
        ["--list", "--resource-pattern-type", "literal", "--topic", t],
        ["--list", "--resource-pattern-type", "prefixed", "--topic", t[:-2]],
        ["--remove", "--force", "--topic", t],
        ["--list", "--resource-pattern-type", "match", "--topic", t],
        ["--list", "--principal", "User:tool", "--resource-pattern-type", "match", "--topic", t],
        ["--remove", "--force", "--resource-pattern-type", "prefixed", "--topic", t[:-2]],
        ["--list", "--resource-pattern-type", "match", "--topic", t],
    ]

    def scenario(tr: Transcript) -> None:
        for args in steps:
            tr.tool(ACL_COMMAND, *args)

    transcripts = compare(
        scenario, {"kafka": acl_kafka.bootstrap, "kgroup": acl_kgroup.bootstrap_servers}
    )
    # kgroup acls, the same steps against Kafka: the same lines.
    t2 = unique("kt-acls")
    ours = Transcript("kgroup acls", acl_kafka.bootstrap)
    parser = build_parser("acls")
    for args in steps:
        args = [a.replace(t[:-2], t2[:-2]) for a in args]
        out = io.StringIO()
        bs = ["--bootstrap-server", acl_kafka.bootstrap]
        code = acls_cli.run(parser.parse_args(["acls", *bs, *args]), out)
        ours.lines.append(f"$ AclCommand {' '.join(args)}".replace(t2[:-2], t[:-2]))
        ours.lines.append(f"exit {code}")
        # As a Transcript records a tool's lines (trailing blanks dropped).
        ours.lines += [
            ours._norm(line.replace(t2[:-2], t[:-2])) for line in out.getvalue().splitlines()
        ]
    assert ours.text() == transcripts["kafka"].text()


def test_principals(d: Differential, acl_kgroup: Broker, acl_kafka: KafkaCluster) -> None:
    """SASL PLAIN principals side by side: ACLs for User:alice, User:bob and every user
    (User:*), and the same requests as each."""
    # The harness's own check, on Kafka alone: its SASL listener takes alice.
    PlainWire(sasl_address(acl_kafka), "alice", SASL_USERS["alice"]).close()
    if not kgroup_has_sasl():
        pytest.skip("kgroup's broker serves no SASL yet (issue 24's SASL part)")
    sasl = sasl_addresses(acl_kgroup, acl_kafka)
    for user in SASL_USERS:
        as_user(d, user, sasl)
    t = new_name("acl-users")
    group = new_name("acl-users-g")
    create_topic(d, name=t)
    create_acls(
        d,
        binding(T.TOPIC, t, Op.WRITE, principal="User:alice"),
        binding(T.TOPIC, t, Op.READ, principal="User:*"),
        binding(T.TOPIC, t, Op.READ, DENY, principal="User:bob"),
        binding(T.GROUP, "acl-users-g", Op.READ, principal="User:alice", pattern=PREFIXED),
    )
    produce(d, t, conn="alice", expect=refused(0))
    produce(d, t, conn="bob", expect=refused(TOPIC_DENIED))
    fetch(d, t, conn="alice", expect=refused(0))
    fetch(d, t, conn="bob", expect=refused(TOPIC_DENIED))
    # READ for every user implies DESCRIBE, which bob's DENY of READ does not take away.
    metadata(d, t, conn="bob", expect=refused(0))
    d.request(ApiKey.OFFSET_COMMIT, 8, commit_body(group, t), conn="alice", expect=refused(0))
    d.request(
        ApiKey.OFFSET_COMMIT, 8, commit_body(group, t), conn="bob", expect=refused(GROUP_DENIED)
    )
    d.request(ApiKey.DESCRIBE_ACLS, 3, acl_filter(principal="User:*"))


def test_without_describe_on_the_cluster(d: Differential, names: dict[str, str]) -> None:
    """Last: ALTER on the cluster (which implies DESCRIBE) goes; ListGroups then shows only
    the groups the principal may describe, and the ACL apis refuse."""
    n = names
    later = new_name("acl-g-later")
    d.request(ApiKey.OFFSET_COMMIT, 8, commit_body(n["group_ok"], n["ok"]))
    # A group that exists, then is given to another principal: listed no more.
    d.request(ApiKey.OFFSET_COMMIT, 8, commit_body(later, n["ok"]), expect=refused(0))
    create_acls(d, binding(T.GROUP, later, Op.READ, principal=OTHER))
    d.request(
        ApiKey.DELETE_ACLS,
        3,
        {"filters": [acl_filter(T.CLUSTER, CLUSTER_NAME, LITERAL, ANON, Op.ALTER, ALLOW)]},
    )
    # Kafka's broker learns of it from its metadata log: until then ALTER still holds.
    d.eventually(ApiKey.DESCRIBE_ACLS, 3, acl_filter(), ignore=["error_message"], timeout=15)

    def mine(_p: Peer, body: dict[str, Any]) -> dict[str, Any]:
        wanted = {n["group_ok"], later}
        body["groups"] = [g for g in body["groups"] if g["group_id"] in wanted]
        return body

    d.rewrite = mine
    try:
        d.request(
            ApiKey.LIST_GROUPS,
            4,
            {"states_filter": []},
            expect=lambda b: (
                {g.group_id for g in b.groups} >= {n["group_ok"]}
                and n["group_denied"] not in {g.group_id for g in b.groups}
            ),
        )
    finally:
        d.rewrite = lambda _p, body: canonical(body)
    d.request(ApiKey.DESCRIBE_ACLS, 3, acl_filter(), expect=refused(CLUSTER_DENIED))
    d.request(
        ApiKey.CREATE_ACLS,
        3,
        {"creations": [binding(T.TOPIC, "x", Op.READ)]},
        expect=refused(CLUSTER_DENIED),
    )
    d.request(ApiKey.DELETE_ACLS, 3, {"filters": [acl_filter()]}, expect=refused(CLUSTER_DENIED))
    d.request(ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": []}, expect=refused(CLUSTER_DENIED))
    d.request(ApiKey.DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True})
