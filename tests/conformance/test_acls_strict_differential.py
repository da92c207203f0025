"""ACLs with no default allow on both brokers: ``allow.everyone.if.no.acl.found=false``, the
PLAINTEXT principal (``User:ANONYMOUS``: the sequence's admin connection, and Kafka's own
broker and controller) in ``super.users``, and the clients SASL PLAIN users (``User:alice``,
``User:bob``) who may do only what an ACL allows. The same ACL changes and requests on Kafka
and on kgroup's broker, answers compared: produce, fetch, metadata, groups and offsets, topic
admin, transactions and the idempotent producer, and the ACL apis refused to a user without
cluster permissions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.acls import (
    CLUSTER_DENIED,
    GROUP_DENIED,
    PREFIXED,
    TOPIC_DENIED,
    TXN_DENIED,
    Op,
    T,
    acl_filter,
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
    sasl_addresses,
)
from support.apache_kafka import KafkaCluster
from support.differential import (
    Differential,
    Peer,
    create_topic,
    new_name,
    wait_for_coordinator,
)

from kgroup.acl import CLUSTER_NAME
from kgroup.broker import Broker
from kgroup.broker.authorizer import STANDARD_AUTHORIZER
from kgroup.protocol import ApiKey

pytestmark = [
    pytest.mark.network,
    pytest.mark.skipif(not kgroup_has_sasl(), reason="kgroup's broker serves no SASL"),
]

CONFIG = {
    "authorizer.class.name": STANDARD_AUTHORIZER,
    "allow.everyone.if.no.acl.found": "false",
    "super.users": "User:ANONYMOUS",
    "group.initial.rebalance.delay.ms": 0,
    "num.partitions": 1,
}


@pytest.fixture(scope="module")
def strict_kafka() -> Iterator[KafkaCluster]:
    with kafka_with_sasl(CONFIG) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def strict_kgroup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with kgroup_with_sasl(tmp_path_factory.mktemp("acls-strict"), CONFIG) as b:
        yield b


@pytest.fixture(scope="module")
def d(strict_kgroup: Broker, strict_kafka: KafkaCluster) -> Iterator[Differential]:
    # Both group coordinators loaded, asked by the super user.
    for bootstrap in (strict_kgroup.bootstrap_servers, strict_kafka.bootstrap):
        wait_for_coordinator(bootstrap)
    with Differential(strict_kgroup.bootstrap_servers, strict_kafka.bootstrap) as diff:
        diff.rewrite = lambda _p, body: canonical(body)
        sasl = sasl_addresses(strict_kgroup, strict_kafka)
        for user in ("alice", "bob"):
            as_user(diff, user, sasl)
        yield diff


def test_no_acl_no_access(d: Differential) -> None:
    """A topic, a group and transactional ids with ACLs for alice only, one topic with none."""
    t, bare = new_name("strict-t"), new_name("strict-bare")
    group, txn = new_name("strict-g"), new_name("strict-tx")
    for name in (t, bare):
        create_topic(d, name=name)  # as the super user
    create_acls(
        d,
        binding(T.TOPIC, t, Op.WRITE, principal="User:alice"),
        binding(T.TOPIC, t, Op.READ, principal="User:alice"),
        binding(T.GROUP, "strict-g", Op.READ, principal="User:alice", pattern=PREFIXED),
        binding(T.TRANSACTIONAL_ID, txn, Op.WRITE, principal="User:alice"),
    )
    produce(d, t, conn="alice", expect=refused(0))
    produce(d, t, conn="bob", expect=refused(TOPIC_DENIED))
    # No ACL at all: refused too, where the default allowed it.
    produce(d, bare, conn="alice", expect=refused(TOPIC_DENIED))
    fetch(d, t, conn="alice", expect=refused(0))
    fetch(d, t, conn="bob", expect=refused(TOPIC_DENIED))
    # Metadata: by name refused; a listing leaves out what the user may not describe.
    metadata(d, t, bare, conn="bob", expect=refused(TOPIC_DENIED))
    mine = {t, bare}

    def only_mine(_p: Peer, body: dict[str, Any]) -> dict[str, Any]:
        body["topics"] = [x for x in body["topics"] if x["name"] in mine]
        return body

    d.rewrite = only_mine
    try:
        for user, seen in (("alice", {t}), ("bob", set())):
            metadata(d, conn=user, expect=lambda b, s=seen: {x.name for x in b.topics} & mine == s)
    finally:
        d.rewrite = lambda _p, body: canonical(body)
    # Groups: READ on the group by prefix, for alice only.
    d.request(
        ApiKey.FIND_COORDINATOR,
        4,
        {"key_type": 0, "coordinator_keys": [group]},
        conn="bob",
        expect=refused(GROUP_DENIED),
    )
    d.request(ApiKey.OFFSET_COMMIT, 8, commit_body(group, t), conn="alice", expect=refused(0))
    d.request(
        ApiKey.OFFSET_COMMIT, 8, commit_body(group, t), conn="bob", expect=refused(GROUP_DENIED)
    )
    d.request(
        ApiKey.OFFSET_FETCH,
        8,
        {"groups": [{"group_id": group, "topics": None}], "require_stable": False},
        conn="alice",
        expect=refused(0),
    )
    # Topic admin: no CREATE anywhere.
    d.request(
        ApiKey.CREATE_TOPICS,
        7,
        {
            "topics": [
                {
                    "name": new_name("strict-new"),
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "assignments": [],
                    "configs": [],
                }
            ],
            "timeout_ms": 10_000,
            "validate_only": True,
        },
        conn="alice",
        expect=refused(TOPIC_DENIED),
    )
    # Transactions and the idempotent producer (WRITE on some topic: alice has one).
    init = {"transaction_timeout_ms": 60_000, "producer_id": -1, "producer_epoch": -1}
    d.request(
        ApiKey.INIT_PRODUCER_ID,
        4,
        {"transactional_id": txn, **init},
        conn="bob",
        expect=refused(TXN_DENIED),
    )
    d.eventually(
        ApiKey.INIT_PRODUCER_ID,
        4,
        {"transactional_id": None, **init},
        conn="alice",
        ignore=["producer_id"],
        timeout=30,
    )
    d.request(
        ApiKey.INIT_PRODUCER_ID,
        4,
        {"transactional_id": None, **init},
        conn="bob",
        expect=refused(CLUSTER_DENIED),
    )
    # The ACL apis and the cluster's operations: nothing for a user without cluster ACLs.
    d.request(ApiKey.DESCRIBE_ACLS, 3, acl_filter(), conn="alice", expect=refused(CLUSTER_DENIED))
    d.request(
        ApiKey.CREATE_ACLS,
        3,
        {"creations": [binding(T.TOPIC, t, Op.ALL, principal="User:bob")]},
        conn="bob",
        expect=refused(CLUSTER_DENIED),
    )
    d.request(
        ApiKey.DESCRIBE_CLUSTER,
        1,
        {"include_cluster_authorized_operations": True},
        conn="alice",
        expect=lambda b: b.cluster_authorized_operations == 0,
    )
    # Given DESCRIBE on the cluster, alice sees the ACLs.
    create_acls(d, binding(T.CLUSTER, CLUSTER_NAME, Op.DESCRIBE, principal="User:alice"))
    d.request(ApiKey.DESCRIBE_ACLS, 3, acl_filter(principal="User:alice"), conn="alice")
