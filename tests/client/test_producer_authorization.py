"""A record for a topic its client may not describe fails at once with
TOPIC_AUTHORIZATION_FAILED, as librdkafka fails it (and Java's send() throws
TopicAuthorizationException), instead of waiting out its delivery timeout; a permitted topic
beside it is delivered."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka
import pytest

from kgroup import AdminClient, NewTopic, Producer
from kgroup.acl import AclBinding
from kgroup.broker import Broker

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule required"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory):
    users = 'user_admin="admin-secret" user_bob="bob-secret";'
    config = {
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": f"{PLAIN} {users}",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin",
    }
    with Broker(tmp_path_factory.mktemp("producer-acl"), config=config) as b:
        with AdminClient(client(b, "admin")) as admin:
            for f in admin.create_topics([NewTopic("open", 1), NewTopic("closed", 1)]).values():
                f.result()
            acl = AclBinding("TOPIC", "open", "LITERAL", "User:bob", "*", "WRITE", "ALLOW")
            admin.create_acls([acl])[acl].result()
        yield b


def client(b: Broker, user: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": b.bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": user,
        "sasl.password": f"{user}-secret",
    }


@pytest.mark.parametrize("library", ["kgroup", "confluent"])
def test_a_record_for_a_topic_it_may_not_describe_fails_at_once(broker, library) -> None:
    make = Producer if library == "kgroup" else confluent_kafka.Producer
    producer = make(client(broker, "bob"))
    results: dict[str, Any] = {}
    for topic in ("open", "closed"):
        producer.produce(
            topic, b"v", on_delivery=lambda err, msg, t=topic: results.update({t: err})
        )
    start = time.monotonic()
    assert producer.flush(30) == 0
    assert time.monotonic() - start < 5  # not a delivery timeout
    assert results["open"] is None
    err = results["closed"]
    name = err.name if library == "kgroup" else err.name()
    assert name == "TOPIC_AUTHORIZATION_FAILED"
    if library == "kgroup":
        producer.close()
