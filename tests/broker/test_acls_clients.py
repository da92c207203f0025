"""ACLs on kgroup's broker with real clients: confluent-kafka's producer, consumer and admin
client, kgroup's AdminClient and ``kgroup acls``, against a broker with Kafka's
StandardAuthorizer (``allow.everyone.if.no.acl.found`` false, no super user): each api refuses
with the error Kafka gives when an ACL is missing (TOPIC_, GROUP_, TRANSACTIONAL_ID_ and
CLUSTER_AUTHORIZATION_FAILED), and works once the ACL is there. Every client is
``User:ANONYMOUS`` (no SASL yet); the ACLs the admin client needs are in ``acls.json`` before
the broker starts."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicCollection
from confluent_kafka.admin import (
    AclBinding as CkAclBinding,
)
from confluent_kafka.admin import (
    AclBindingFilter as CkAclBindingFilter,
)
from confluent_kafka.admin import (
    AclOperation as CkOp,
)
from confluent_kafka.admin import (
    AclPermissionType as CkPerm,
)
from confluent_kafka.admin import (
    AdminClient as CkAdmin,
)
from confluent_kafka.admin import (
    ConfigResource as CkConfigResource,
)
from confluent_kafka.admin import (
    ResourcePatternType as CkPattern,
)
from confluent_kafka.admin import (
    ResourceType as CkType,
)
from support import tls as client_tls
from support.certs import Certs
from support.kgroup_broker import Wire, run_broker

from kgroup import errors
from kgroup.acl import (
    CLUSTER_NAME,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)
from kgroup.broker import Broker
from kgroup.broker.authorizer import STANDARD_AUTHORIZER
from kgroup.broker.config import ConfigError
from kgroup.cli import acls, build_parser
from kgroup.cli import main as kgroup_main
from kgroup.client import AdminClient, NewTopic
from kgroup.protocol import ApiKey

ANON = "User:ANONYMOUS"
ALLOW = AclPermissionType.ALLOW
CONFIG = {
    "authorizer.class.name": STANDARD_AUTHORIZER,
    "allow.everyone.if.no.acl.found": "false",
    "group.initial.rebalance.delay.ms": 0,
}
#: SEEDED: what the admin clients need, written to acls.json before the broker starts.
SEEDED = [
    AclBinding(ResourceType.CLUSTER, CLUSTER_NAME, 3, ANON, "*", AclOperation.ALTER, ALLOW),
    AclBinding(ResourceType.CLUSTER, CLUSTER_NAME, 3, ANON, "*", AclOperation.CREATE, ALLOW),
]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    data = tmp_path_factory.mktemp("acls")
    (data / "acls.json").write_text(json.dumps({"acls": [b.to_dict() for b in SEEDED]}))
    with run_broker(data, CONFIG) as b:
        yield b


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def allow(b: Broker, restype: ResourceType, res: str, *ops: AclOperation) -> None:
    """Grant User:ANONYMOUS ``ops`` on a literal resource, through kgroup's AdminClient."""
    with AdminClient({"bootstrap.servers": b.bootstrap_servers}) as admin:
        bindings = [AclBinding(restype, res, 3, ANON, "*", op, ALLOW) for op in ops]
        for f in admin.create_acls(bindings).values():
            f.result(10)


def topic(b: Broker) -> str:
    t = name("t")
    with AdminClient({"bootstrap.servers": b.bootstrap_servers}) as admin:
        admin.create_topics([NewTopic(t, 1)])[t].result(10)
    return t


def code_of(e: BaseException) -> int:
    assert isinstance(e, KafkaException), e
    return int(e.args[0].code())


def test_acls_seeded_listed_and_managed_by_confluent_kafka(broker: Broker) -> None:
    admin = CkAdmin({"bootstrap.servers": broker.bootstrap_servers})
    everything = CkAclBindingFilter(
        CkType.ANY, None, CkPattern.ANY, None, None, CkOp.ANY, CkPerm.ANY
    )
    listed = admin.describe_acls(everything).result(10)
    assert {(b.restype, b.name, b.operation) for b in listed} >= {
        (CkType.BROKER, CLUSTER_NAME, CkOp.ALTER),
        (CkType.BROKER, CLUSTER_NAME, CkOp.CREATE),
    }
    mine = CkAclBinding(
        CkType.TOPIC, "ck-", CkPattern.PREFIXED, "User:carol", "10.1.1.1", CkOp.READ, CkPerm.DENY
    )
    for f in admin.create_acls([mine]).values():
        assert f.result(10) is None
    flt = CkAclBindingFilter(
        CkType.TOPIC, "ck-orders", CkPattern.MATCH, None, None, CkOp.ANY, CkPerm.ANY
    )
    assert admin.describe_acls(flt).result(10) == [mine]
    deleted = admin.delete_acls([flt])
    assert [f.result(10) for f in deleted.values()] == [[mine]]
    assert admin.describe_acls(flt).result(10) == []


def test_create_acls_refuses_what_kafka_refuses(broker: Broker) -> None:
    with AdminClient({"bootstrap.servers": broker.bootstrap_servers}) as admin:
        # Kafka's AclApis and AclControlManager.validateNewAcl: INVALID_REQUEST each.
        bad = [
            AclBinding(ResourceType.CLUSTER, "c", 3, ANON, "*", AclOperation.ALTER, ALLOW),
            AclBinding(ResourceType.TOPIC, "t", 3, "ANONYMOUS", "*", AclOperation.READ, ALLOW),
        ]
        for f in admin.create_acls(bad).values():
            with pytest.raises(errors.InvalidRequest):
                f.result(10)
        # A pattern Kafka cannot even build (MATCH): the whole request fails.
        ok = AclBinding(ResourceType.TOPIC, "t", 3, ANON, "*", AclOperation.READ, ALLOW)
        match = AclBinding(ResourceType.TOPIC, "t", 2, ANON, "*", AclOperation.READ, ALLOW)
        for f in admin.create_acls([ok, match]).values():
            with pytest.raises(errors.UnknownServerError):
                f.result(10)


def test_produce_needs_write_and_describe(broker: Broker) -> None:
    t = topic(broker)
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "message.timeout.ms": 5000})
    got: list[KafkaError | None] = []
    p.produce(t, b"v", on_delivery=lambda err, msg: got.append(err))
    p.flush(10)
    assert got[0] is not None and got[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    allow(broker, ResourceType.TOPIC, t, AclOperation.WRITE)
    got.clear()
    # A new producer: librdkafka keeps a topic's authorization error until its next metadata.
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "message.timeout.ms": 5000})
    p.produce(t, b"v", on_delivery=lambda err, msg: got.append(err))
    p.flush(10)
    assert got == [None]


def test_transactional_id_needs_write(broker: Broker) -> None:
    t = topic(broker)
    allow(broker, ResourceType.TOPIC, t, AclOperation.WRITE)
    txn = name("tx")
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": txn})
    with pytest.raises(KafkaException) as e:
        p.init_transactions(10)
    assert code_of(e.value) == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    allow(broker, ResourceType.TRANSACTIONAL_ID, txn, AclOperation.WRITE)
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": txn})
    p.init_transactions(10)
    p.begin_transaction()
    p.produce(t, b"v")
    p.commit_transaction(10)


def consume_error(c: Consumer, seconds: float = 10) -> KafkaError:
    for _ in range(int(seconds * 5)):
        m = c.poll(0.2)
        if m is not None and m.error() is not None:
            return m.error()
    raise AssertionError("no error")


def test_consumer_needs_group_read_then_topic_read(broker: Broker) -> None:
    t = topic(broker)
    group = name("g")
    conf = {
        "bootstrap.servers": broker.bootstrap_servers,
        "group.id": group,
        "auto.offset.reset": "earliest",
    }
    allow(broker, ResourceType.TOPIC, t, AclOperation.DESCRIBE)
    c = Consumer(conf)
    try:
        c.subscribe([t])
        assert consume_error(c).code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    finally:
        c.close()
    allow(broker, ResourceType.GROUP, group, AclOperation.READ)
    c = Consumer(conf)
    try:
        c.subscribe([t])
        assert consume_error(c).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        c.close()


def test_admin_calls_refused(broker: Broker) -> None:
    t = topic(broker)
    hidden = topic(broker)
    allow(broker, ResourceType.TOPIC, t, AclOperation.DESCRIBE)
    admin = CkAdmin({"bootstrap.servers": broker.bootstrap_servers})
    # Metadata leaves out the topics the principal may not describe.
    listed = admin.list_topics(timeout=10).topics
    assert t in listed and hidden not in listed
    # DescribeConfigs: the broker's needs DESCRIBE_CONFIGS on the cluster; a topic's on it.
    res = CkConfigResource(CkConfigResource.Type.BROKER, "1")
    with pytest.raises(KafkaException) as e:
        admin.describe_configs([res])[res].result(10)
    assert code_of(e.value) == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    res = CkConfigResource(CkConfigResource.Type.TOPIC, t)
    with pytest.raises(KafkaException) as e:
        admin.describe_configs([res])[res].result(10)
    assert code_of(e.value) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # DeleteTopics: a topic the principal may not describe is refused before it is looked up.
    with pytest.raises(KafkaException) as e:
        admin.delete_topics([hidden])[hidden].result(10)
    assert code_of(e.value) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    g = name("g")
    with pytest.raises(KafkaException) as e:
        admin.describe_consumer_groups([g])[g].result(10)
    assert code_of(e.value) == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_authorized_operations(broker: Broker) -> None:
    t = topic(broker)
    allow(broker, ResourceType.TOPIC, t, AclOperation.READ, AclOperation.ALTER_CONFIGS)
    admin = CkAdmin({"bootstrap.servers": broker.bootstrap_servers})
    cluster = admin.describe_cluster(include_authorized_operations=True).result(10)
    # The seeded ALTER and CREATE; ALTER implies DESCRIBE.
    assert set(cluster.authorized_operations) == {CkOp.ALTER, CkOp.CREATE, CkOp.DESCRIBE}
    [f] = admin.describe_topics(TopicCollection([t]), include_authorized_operations=True).values()
    assert set(f.result(10).authorized_operations) == {
        CkOp.READ,
        CkOp.DESCRIBE,
        CkOp.ALTER_CONFIGS,
        CkOp.DESCRIBE_CONFIGS,
    }


def test_kgroup_acls_tool(broker: Broker) -> None:
    bs = ["--bootstrap-server", broker.bootstrap_servers]
    t = name("tool")
    parser = build_parser("acls")
    out = io.StringIO()
    argv = ["acls", *bs, "--add", "--allow-principal", "User:dan", "--consumer"]
    assert acls.run(parser.parse_args([*argv, "--topic", t, "--group", "g1"]), out) == 0
    # Kafka's AclCommand.addAcls, its stray spaces included.
    assert out.getvalue().startswith(
        f"Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name={t}, "
        "patternType=LITERAL)`: \n \t(principal=User:dan, host=*, operation=READ, "
        "permissionType=ALLOW)\n\t(principal=User:dan, host=*, operation=DESCRIBE, "
        "permissionType=ALLOW)\n\n"
    )
    assert kgroup_main(["acls", *bs, "--list", "--group", "g1"]) == 0
    out = io.StringIO()
    args = parser.parse_args(["acls", *bs, "--list", "--topic", t])
    assert acls.run(args, out) == 0
    # Kafka's AclCommand.printResourceAcls.
    assert out.getvalue() == (
        f"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name={t}, "
        "patternType=LITERAL)`:\n"
        "\t(principal=User:dan, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:dan, host=*, operation=DESCRIBE, permissionType=ALLOW)\n\n"
    )
    args = parser.parse_args(["acls", *bs, "--remove", "--force", "--topic", t])
    assert acls.run(args, io.StringIO()) == 0
    with AdminClient({"bootstrap.servers": broker.bootstrap_servers}) as admin:
        flt = AclBindingFilter(ResourceType.TOPIC, t, ResourcePatternType.ANY, None, None, 1, 1)
        assert admin.describe_acls(flt).result(10) == []


def test_without_an_authorizer_acl_apis_are_disabled(tmp_path: Path) -> None:
    # Kafka's AclApis without an authorizer: SECURITY_DISABLED (librdkafka's describe_acls
    # reads no top-level error: kgroup's AdminClient does).
    with run_broker(tmp_path) as b:
        admin = CkAdmin({"bootstrap.servers": b.bootstrap_servers})
        binding = CkAclBinding(
            CkType.TOPIC, "t", CkPattern.LITERAL, ANON, "*", CkOp.READ, CkPerm.ALLOW
        )
        [f] = admin.create_acls([binding]).values()
        with pytest.raises(KafkaException) as e:
            f.result(10)
        assert code_of(e.value) == KafkaError.SECURITY_DISABLED
        with AdminClient({"bootstrap.servers": b.bootstrap_servers}) as kg:
            flt = AclBindingFilter(
                ResourceType.ANY, None, ResourcePatternType.ANY, None, None, 1, 1
            )
            with pytest.raises(errors.SecurityDisabled):
                kg.describe_acls(flt).result(10)
            with pytest.raises(errors.SecurityDisabled):
                kg.delete_acls([flt])[flt].result(10)


def test_unknown_authorizer_refuses_to_start(tmp_path: Path) -> None:
    with (
        pytest.raises(ConfigError, match="StandardAuthorizer"),
        run_broker(tmp_path, {"authorizer.class.name": "com.example.MyAuthorizer"}),
    ):
        pass


def test_idempotent_producer_needs_idempotent_write_or_some_topic_write(tmp_path: Path) -> None:
    # Kafka's KafkaApis.handleInitProducerIdRequest: IDEMPOTENT_WRITE on the cluster, or WRITE
    # on some topic (Authorizer.authorizeByResourceType), else CLUSTER_AUTHORIZATION_FAILED.
    (tmp_path / "acls.json").write_text(json.dumps({"acls": [b.to_dict() for b in SEEDED]}))
    body = {
        "transactional_id": None,
        "transaction_timeout_ms": 60_000,
        "producer_id": -1,
        "producer_epoch": -1,
    }
    with run_broker(tmp_path, CONFIG) as b, Wire(b.bootstrap_servers) as w:
        r = w.request(ApiKey.INIT_PRODUCER_ID, 4, body)
        assert r.body.error_code == errors.ClusterAuthorizationFailed.code
        allow(b, ResourceType.TOPIC, name("any"), AclOperation.WRITE)
        r = w.request(ApiKey.INIT_PRODUCER_ID, 4, body)
        assert (r.body.error_code, r.body.producer_epoch) == (0, 0)


def test_tls_principals_under_acls(tmp_path: Path) -> None:
    # The principal of a client certificate (Kafka's DefaultKafkaPrincipalBuilder: User:<the
    # subject>) is what ACLs name: alice's certificate may write, bob's may not.
    certs = Certs(tmp_path / "certs")
    alice, bob = certs.client("alice", "kgroup"), certs.client("bob")
    config = {
        **CONFIG,
        "super.users": ANON,
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        **client_tls.broker_ssl(certs, "required"),
    }
    with run_broker(tmp_path / "data", config) as b:
        t = topic(b)
        principal = "User:" + alice.subject
        with AdminClient({"bootstrap.servers": b.bootstrap_servers}) as admin:
            write = AclBinding(ResourceType.TOPIC, t, 3, principal, "*", AclOperation.WRITE, ALLOW)
            admin.create_acls([write])[write].result(10)
        for who, want in ((alice, None), (bob, KafkaError.TOPIC_AUTHORIZATION_FAILED)):
            conf = {"bootstrap.servers": b.address("SSL"), "message.timeout.ms": 5000}
            p = Producer({**conf, **client_tls.confluent(certs, who)})
            got: list[KafkaError | None] = []
            p.produce(t, b"v", on_delivery=lambda err, msg, got=got: got.append(err))
            p.flush(10)
            assert [None if e is None else e.code() for e in got] == [want], who.subject
