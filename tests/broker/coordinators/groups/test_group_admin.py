"""confluent-kafka's AdminClient on groups hosted by kgroup's broker: groups listed (with a
state filter) and described while a real consumer group runs, offsets listed and altered,
groups deleted only when Empty. The answers are Kafka's."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaException
from confluent_kafka import TopicPartition as TP
from confluent_kafka.admin import AdminClient
from support.consumers import CkMember, create_topic, produce, wait_for
from support.groups import commit
from support.kgroup_broker import Wire

from kgroup.broker import Broker

pytestmark = pytest.mark.network


def _error(future) -> str:
    with pytest.raises(KafkaException) as e:
        future.result(30)
    return e.value.args[0].name()


def _offsets(admin: AdminClient, group: str) -> dict[tuple[str, int], int]:
    request = [ConsumerGroupTopicPartitions(group)]
    result = admin.list_consumer_group_offsets(request)[group].result(30)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions}


def test_admin_lists_describes_alters_and_deletes_groups(broker: Broker) -> None:
    bootstrap = broker.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = create_topic(bootstrap, 4)
    produce(bootstrap, topic, [f"v{i}".encode() for i in range(40)], partitions=4)
    active, simple = f"active-{uuid.uuid4().hex[:6]}", f"simple-{uuid.uuid4().hex[:6]}"
    seen: list[bytes] = []
    member = CkMember(bootstrap, topic, active, seen, **{"client.id": "admin-test-member"})
    member.start()
    try:
        wait_for(lambda: len(seen) == 40 and len(member.assigned) == 4, 30, "the member")
        # A simple group: offsets committed with no member (generation -1), as tools do.
        with Wire(bootstrap) as w:
            w.request(10, 3, {"key": simple, "key_type": 0})
            assert commit(w, simple, {(topic, 0): 7, (topic, 3): 9}) == {
                (topic, 0): 0,
                (topic, 3): 0,
            }

        listed = admin.list_consumer_groups().result(30)
        assert listed.errors == []
        states = {g.group_id: g.state for g in listed.valid}
        assert states[active] == ConsumerGroupState.STABLE
        assert states[simple] == ConsumerGroupState.EMPTY
        only_stable = admin.list_consumer_groups(states={ConsumerGroupState.STABLE}).result(30)
        ids = {g.group_id for g in only_stable.valid}
        assert active in ids and simple not in ids

        descriptions = admin.describe_consumer_groups([active, simple])
        d = descriptions[active].result(30)
        assert (d.state, d.partition_assignor, d.is_simple_consumer_group) == (
            ConsumerGroupState.STABLE,
            "range",
            False,
        )
        assert d.coordinator.id == 1
        [m] = d.members
        assert (m.client_id, m.host) == ("admin-test-member", "/127.0.0.1")
        assert sorted(tp.partition for tp in m.assignment.topic_partitions) == [0, 1, 2, 3]
        s = descriptions[simple].result(30)
        assert (s.state, s.members, s.is_simple_consumer_group) == (
            ConsumerGroupState.EMPTY,
            [],
            True,
        )

        # Every record was committed after it was processed: 10 per partition.
        assert _offsets(admin, active) == {(topic, p): 10 for p in range(4)}
        assert _offsets(admin, simple) == {(topic, 0): 7, (topic, 3): 9}

        # Altering offsets is a commit without a member: refused while the group has members.
        request = [ConsumerGroupTopicPartitions(active, [TP(topic, 0, 1)])]
        refused = admin.alter_consumer_group_offsets(request)[active].result(30)
        assert [tp.error.name() for tp in refused.topic_partitions] == ["UNKNOWN_MEMBER_ID"]
        request = [ConsumerGroupTopicPartitions(simple, [TP(topic, 0, 2), TP(topic, 1, 5)])]
        altered = admin.alter_consumer_group_offsets(request)[simple].result(30)
        assert sorted((tp.partition, tp.offset, tp.error) for tp in altered.topic_partitions) == [
            (0, 2, None),
            (1, 5, None),
        ]
        assert _offsets(admin, simple) == {(topic, 0): 2, (topic, 1): 5, (topic, 3): 9}

        deleted = admin.delete_consumer_groups([active, simple, "never-was"])
        assert _error(deleted[active]) == "NON_EMPTY_GROUP"
        assert _error(deleted["never-was"]) == "GROUP_ID_NOT_FOUND"
        deleted[simple].result(30)
    finally:
        member.stop.set()
        member.join(30)
    assert member.errors == []
    assert admin.describe_consumer_groups([simple])[simple].result(30).state == (
        ConsumerGroupState.DEAD
    )
    assert _offsets(admin, simple) == {}
    # The member closed: its group is Empty with its offsets, and can go now.
    wait_for(
        lambda: (
            admin.describe_consumer_groups([active])[active].result(30).state
            == ConsumerGroupState.EMPTY
        ),
        10,
        "the group to be Empty",
    )
    admin.delete_consumer_groups([active])[active].result(30)
    assert _offsets(admin, active) == {}
