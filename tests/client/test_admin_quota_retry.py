"""The AdminClient under a controller mutation quota (KIP-599), against a kgroup broker and
Apache Kafka: as Java's Admin (KafkaAdminClient.getCreateTopicsCall and its DeleteTopics and
CreatePartitions twins), a topic refused with THROTTLING_QUOTA_EXCEEDED is sent again once the
answer's throttle time is over, until the call's timeout; with ``retry_on_quota_violation``
False (Java's ``retryOnQuotaViolation(false)``), or past the timeout, its future fails with
ThrottlingQuotaExceeded carrying the throttle time.

Each test sets controller_mutation_rate = 2/s for its own client id: a bucket of 22 mutations
(11 windows of 1 s), which four topics of 8 partitions overdraw by 2 (one second's worth) on
their third: the fourth is refused."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from kgroup.broker import Broker
from kgroup.client import AdminClient, NewPartitions, NewTopic
from kgroup.client.admin import ClientQuotaAlteration, ClientQuotaEntity
from kgroup.errors import ThrottlingQuotaExceeded

pytestmark = [pytest.mark.network, pytest.mark.slow]

#: SETTLE: Kafka's controller applies a quota from the metadata log (kgroup's at once).
SETTLE = 1.5


@pytest.fixture(params=["kgroup", "kafka"])
def bootstrap(request: pytest.FixtureRequest, broker: Broker) -> str:
    if request.param == "kafka":
        return str(request.getfixturevalue("kafka").bootstrap)
    return broker.bootstrap_servers


@pytest.fixture
def admin(bootstrap: str) -> Iterator[AdminClient]:
    """An AdminClient with its own client id, limited to 2 mutations a second."""
    client_id = f"aq-{uuid.uuid4().hex[:8]}"
    entity = ClientQuotaEntity({"client-id": client_id})
    with AdminClient({"bootstrap.servers": bootstrap}) as setup:
        for f in setup.alter_client_quotas(
            [ClientQuotaAlteration(entity, {"controller_mutation_rate": 2.0})]
        ).values():
            f.result(10)
        time.sleep(SETTLE)
        with AdminClient({"bootstrap.servers": bootstrap, "client.id": client_id}) as a:
            yield a
        for f in setup.alter_client_quotas(
            [ClientQuotaAlteration(entity, {"controller_mutation_rate": None})]
        ).values():
            f.result(10)


def _topics(n: int, partitions: int) -> list[NewTopic]:
    tag = uuid.uuid4().hex[:8]
    return [NewTopic(f"aq-{tag}-{i}", partitions, 1) for i in range(n)]


def test_refused_topics_fail_without_retry(admin: AdminClient) -> None:
    topics = _topics(4, 8)
    futures = admin.create_topics(topics, retry_on_quota_violation=False)
    for t in topics[:3]:
        assert futures[t.topic].result(20) is None
    with pytest.raises(ThrottlingQuotaExceeded) as e:
        futures[topics[3].topic].result(20)
    assert e.value.code == 89
    assert 500 <= e.value.throttle_time_ms <= 1000, e.value.throttle_time_ms


def test_refused_topics_are_sent_again_after_the_throttle(admin: AdminClient) -> None:
    topics = _topics(4, 8)
    start = time.monotonic()
    futures = admin.create_topics(topics, request_timeout=20)
    for t in topics:
        assert futures[t.topic].result(25) is None
    # The fourth waited for the bucket to refill to zero, about a second.
    assert time.monotonic() - start >= 0.5


def test_past_the_timeout_the_quota_error_is_raised(admin: AdminClient) -> None:
    topics = _topics(4, 8)
    futures = admin.create_topics(topics, request_timeout=0.5)
    for t in topics[:3]:
        assert futures[t.topic].result(20) is None
    with pytest.raises(ThrottlingQuotaExceeded) as e:
        futures[topics[3].topic].result(20)
    assert e.value.throttle_time_ms > 0


def test_delete_topics_and_create_partitions_retry_too(admin: AdminClient, bootstrap: str) -> None:
    # Grow four topics by 8: the fourth grown is refused. Then delete that one, its partition
    # refused while the bucket is below zero, and sent again a second later.
    topics = _topics(4, 1)
    with AdminClient({"bootstrap.servers": bootstrap}) as setup:
        for f in setup.create_topics(topics).values():
            assert f.result(20) is None
    names = [t.topic for t in topics]
    grown = admin.create_partitions(
        [NewPartitions(n, 9) for n in names], retry_on_quota_violation=False
    )
    refused = []
    for n in names:
        try:
            grown[n].result(20)
        except ThrottlingQuotaExceeded as e:
            assert e.throttle_time_ms > 0
            refused.append(n)
    assert len(refused) == 1, refused
    start = time.monotonic()
    assert admin.delete_topics(refused, request_timeout=20)[refused[0]].result(25) is None
    assert time.monotonic() - start >= 0.5
