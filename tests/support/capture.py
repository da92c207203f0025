"""Drive the real clients (confluent-kafka, kafka-python, aiokafka) through their produce,
consume-in-a-group, transactional produce, admin and SASL flows against
:class:`fake_broker.FakeBroker`, and collect the request frames they send.

Each client runs under three advertised version tables (eras): kgroup's full ranges (Kafka
3.9's, with KIP-848's apis as Kafka 4.x has them: confluent-kafka then also runs a
``group.protocol=consumer`` member), the highest non-flexible versions, and old brokers' low
versions, so that the fixtures hold old, non-flexible and flexible versions of each API.

The committed fixtures are ``tests/protocol/fixtures/<client>/<Api>-v<N>-<i>.bin``; to rewrite
them, run this module from the repository's root::

    .venv/bin/python -m tests.support.capture --write

or, to add the fixtures of the apis and versions a client has none of yet (after kgroup learns
a new api, or a flow a new call) and leave the committed ones as they are::

    .venv/bin/python -m tests.support.capture --write --missing
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kgroup import protocol

from .fake_broker import FIRST_TRANSACTIONAL_PRODUCER_ID, SERVED, Captured, FakeBroker

FIXTURES = Path(__file__).parents[1] / "protocol" / "fixtures"
TOPIC = "kgroup-fixture"
GROUP = "kgroup-fixture-group"
TRANSACTIONAL_ID = "kgroup-fixture-txn"
# Settings under the same names in kafka-python and aiokafka: the group consumer's, and SASL
# PLAIN's (the fake broker accepts any credentials).
GROUP_CONSUMER = {
    "group_id": GROUP,
    "auto_offset_reset": "earliest",
    "enable_auto_commit": False,
    "heartbeat_interval_ms": 100,
    "session_timeout_ms": 6000,
}
SASL_PLAIN = {
    "security_protocol": "SASL_PLAINTEXT",
    "sasl_mechanism": "PLAIN",
    "sasl_plain_username": "user",
    "sasl_plain_password": "secret",
}

# The eras: version caps per api key on top of kgroup's own ranges.
NON_FLEXIBLE = {
    0: 8,
    1: 11,
    2: 5,
    3: 8,
    8: 7,
    9: 5,
    10: 2,
    11: 5,
    12: 3,
    13: 3,
    14: 3,
    15: 4,
    16: 2,
    17: 1,
    18: 2,
    19: 4,
    20: 3,
    21: 1,
    22: 1,
    23: 3,
    24: 2,
    25: 2,
    26: 2,
    27: 0,
    28: 2,
    32: 3,
    33: 1,
    36: 1,
    37: 1,
    42: 1,
    44: 0,
    47: 0,
}
# Roughly Kafka 0.11 to 1.0: message format v2 and transactions (all v0) exist, nothing is
# flexible.
OLD = {
    0: 3,
    1: 5,
    2: 2,
    3: 4,
    8: 3,
    9: 3,
    10: 1,
    11: 2,
    12: 1,
    13: 1,
    14: 1,
    15: 1,
    16: 1,
    17: 1,
    18: 1,
    19: 2,
    20: 1,
    21: 0,
    22: 0,
    23: 0,
    24: 0,
    25: 0,
    26: 0,
    27: 0,
    28: 0,
    32: 0,
    33: 0,
    36: 0,
    37: 0,
    42: 0,
    47: 0,
}
# Kafka 0.10.0: message format v1, SASL tokens unframed after SaslHandshake v0; no
# idempotence or transactions, SaslAuthenticate, DescribeConfigs, DeleteGroups or OffsetDelete yet.
ANCIENT = {
    0: 2,
    1: 2,
    2: 0,
    3: 1,
    8: 2,
    9: 1,
    10: 0,
    11: 0,
    12: 0,
    13: 0,
    14: 0,
    15: 0,
    16: 0,
    17: 0,
    18: 0,
    19: 0,
    20: 0,
}
ERAS: dict[str, dict[int, int] | None] = {
    "3.9": None,
    "non-flexible": NON_FLEXIBLE,
    "old": OLD,
    "ancient": ANCIENT,
}


def era_versions(caps: dict[int, int] | None) -> dict[int, tuple[int, int]]:
    full = dict(SERVED)
    if caps is None:
        return full
    return {k: (lo, min(hi, caps[k])) for k, (lo, hi) in full.items() if k in caps}


def speaks(era: str, key: int) -> bool:
    """Whether the fake broker advertises the api in this era (the admin flows skip it if not)."""
    return key in era_versions(ERAS[era])


def wait_until(cond: Callable[[], bool], timeout: float, step: Callable[[], None]) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        step()
        if cond():
            return True
    return False


# -- confluent-kafka (librdkafka) -----------------------------------------------------------


def run_confluent(bootstrap: str, era: str) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        NewPartitions,
        NewTopic,
    )

    common = {"bootstrap.servers": bootstrap, "broker.address.family": "v4"}
    modern = era != "ancient"
    p = Producer({**common, "enable.idempotence": modern, "linger.ms": 0})
    p.produce(TOPIC, key=b"k", value=b"v")
    if p.flush(15) != 0:
        raise AssertionError("confluent-kafka producer did not deliver")

    c = Consumer(
        {
            **common,
            "group.id": GROUP,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "heartbeat.interval.ms": 100,
            "session.timeout.ms": 6000,
        }
    )
    c.subscribe([TOPIC])
    if not wait_until(lambda: bool(c.assignment()), 20, lambda: c.poll(0.1)):
        raise AssertionError("confluent-kafka consumer got no assignment")
    for _ in range(5):
        c.poll(0.1)
    if speaks(era, 23):
        # A position with a leader epoch is validated with OffsetForLeaderEpoch (KIP-320)
        # before fetching resumes.
        c.seek(TopicPartition(TOPIC, 0, 1, leader_epoch=0))
        for _ in range(5):
            c.poll(0.1)
    c.commit(offsets=[TopicPartition(TOPIC, 0, 1)], asynchronous=False)
    if speaks(era, 24):
        run_confluent_transactions(common, c)
    c.close()

    a = AdminClient(common)
    if speaks(era, 68):
        run_confluent_consumer_protocol(common, a)
    for f in a.create_topics([NewTopic(TOPIC + "-new", 3, 1)]).values():
        f.result(15)
    for f in a.delete_topics([TOPIC + "-new"]).values():
        f.result(15)
    a.list_consumer_groups().result(15)
    for f in a.describe_consumer_groups([GROUP]).values():
        f.result(15)
    if modern:
        for f in a.describe_configs([ConfigResource("topic", TOPIC)]).values():
            f.result(15)
        for f in a.delete_consumer_groups([GROUP]).values():
            f.result(15)
    if speaks(era, 37):
        for f in a.create_partitions([NewPartitions(TOPIC, 4)]).values():
            f.result(15)
    if speaks(era, 21):
        for f in a.delete_records([TopicPartition(TOPIC, 0, 1)]).values():
            f.result(15)
    if speaks(era, 33):
        # Deprecated in librdkafka in favour of incremental_alter_configs, but still sent.
        resource = ConfigResource("topic", TOPIC, {"retention.ms": "1000"})
        for f in a.alter_configs([resource]).values():
            f.result(15)
    if speaks(era, 44):
        entry = ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)
        resource = ConfigResource("topic", TOPIC, incremental_configs=[entry])
        for f in a.incremental_alter_configs([resource]).values():
            f.result(15)
    if speaks(era, 60):
        a.describe_cluster().result(15)
    if speaks(era, 30):
        run_confluent_acls_and_scram(a)

    s = Producer(
        {
            **common,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "PLAIN",
            "sasl.username": "user",
            "sasl.password": "secret",
        }
    )
    s.list_topics(TOPIC, timeout=15)


def run_confluent_acls_and_scram(a: Any) -> None:
    """ACLs (CreateAcls, DescribeAcls, DeleteAcls) and DescribeUserScramCredentials through
    confluent-kafka's admin client."""
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    acl = AclBinding(ResourceType.TOPIC, TOPIC, ResourcePatternType.LITERAL, "User:alice", "*",
                     AclOperation.READ, AclPermissionType.ALLOW)  # fmt: skip
    for f in a.create_acls([acl]).values():
        f.result(15)
    match = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                             AclOperation.ANY, AclPermissionType.ANY)  # fmt: skip
    a.describe_acls(match).result(15)
    for f in a.delete_acls([match]).values():
        f.result(15)
    # Not AlterUserScramCredentials: librdkafka 2.16 sends a byte after its body (which Kafka,
    # and kgroup's broker, ignore), so its frame cannot be a round-trip fixture.
    for f in a.describe_user_scram_credentials(["alice"]).values():
        f.result(15)


def run_confluent_transactions(common: dict, consumer: Any) -> None:
    """A transaction that produces and sends the consumer's offsets with its group metadata
    (TxnOffsetCommit), committed; then one that produces, aborted."""
    from confluent_kafka import Producer, TopicPartition

    t = Producer({**common, "transactional.id": TRANSACTIONAL_ID, "linger.ms": 0})
    t.init_transactions(15)
    t.begin_transaction()
    t.produce(TOPIC, key=b"k", value=b"committed")
    offsets = [TopicPartition(TOPIC, 0, 1)]
    t.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 15)
    t.commit_transaction(15)
    t.begin_transaction()
    t.produce(TOPIC, key=b"k", value=b"aborted")
    # Delivered before the abort, which would otherwise purge it unsent.
    if t.flush(15) != 0:
        raise AssertionError("confluent-kafka transactional producer did not deliver")
    t.abort_transaction(15)


def run_confluent_consumer_protocol(common: dict, admin: Any) -> None:
    """KIP-848 (``group.protocol=consumer``, ConsumerGroupHeartbeat v1): join, consume, commit
    (OffsetCommit with the member epoch), describe the group (ConsumerGroupDescribe) and leave."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            **common,
            "group.id": GROUP + "-848",
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    c.subscribe([TOPIC])
    if not wait_until(lambda: bool(c.assignment()), 20, lambda: c.poll(0.1)):
        raise AssertionError("confluent-kafka consumer-protocol member got no assignment")
    for _ in range(5):
        c.poll(0.1)
    c.commit(offsets=[TopicPartition(TOPIC, 0, 1)], asynchronous=False)
    for f in admin.describe_consumer_groups([GROUP + "-848"]).values():
        f.result(15)
    c.close()


# -- kafka-python -----------------------------------------------------------------------------


def run_kafka_python(bootstrap: str, era: str) -> None:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import AbortTransactionSpec, ConfigResource, ConfigResourceType, NewTopic
    from kafka.structs import OffsetAndMetadata

    modern = era != "ancient"
    p = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=modern)
    p.send(TOPIC, key=b"k", value=b"v").get(15)
    p.close()

    c = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, **GROUP_CONSUMER)
    # The subscribed topic's metadata before the first join: kafka-python 3.0.12 may otherwise
    # hang without an assignment (see support.kafka_python_member).
    c.topics()
    if not wait_until(lambda: bool(c.assignment()), 20, lambda: c.poll(100)):
        raise AssertionError("kafka-python consumer got no assignment")
    for _ in range(3):
        c.poll(100)
    c.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(1, "", -1)})
    if speaks(era, 24):
        t = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=TRANSACTIONAL_ID)
        t.init_transactions()
        t.begin_transaction()
        t.send(TOPIC, key=b"k", value=b"committed").get(15)
        offsets = {TopicPartition(TOPIC, 0): OffsetAndMetadata(1, "", -1)}
        t.send_offsets_to_transaction(offsets, c.group_metadata())
        t.commit_transaction()
        t.begin_transaction()
        t.send(TOPIC, key=b"k", value=b"aborted").get(15)
        t.abort_transaction()
        t.close()
    c.close()

    a = KafkaAdminClient(bootstrap_servers=bootstrap)
    a.create_topics([NewTopic(TOPIC + "-new", 3, 1)])
    a.delete_topics([TOPIC + "-new"])
    a.list_groups()
    a.describe_groups([GROUP])
    # Fetching all of a group's offsets (null topics) needs OffsetFetch v2.
    a.list_group_offsets({GROUP: None if modern else [TopicPartition(TOPIC, 0)]})
    if modern:
        a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC)])
        a.delete_group_offsets(GROUP, [TopicPartition(TOPIC, 0)])
        a.delete_groups([GROUP])
    if speaks(era, 37):
        a.create_partitions({TOPIC: 4})
    if speaks(era, 21):
        a.delete_records({TopicPartition(TOPIC, 0): 1})
    for key, incremental in [(33, False), (44, True)]:
        if speaks(era, key):
            resource = ConfigResource(ConfigResourceType.TOPIC, TOPIC, {"retention.ms": "1000"})
            a.alter_configs([resource], raise_on_unknown=False, incremental=incremental)
    if speaks(era, 60):
        a.describe_cluster()
    if speaks(era, 61):
        a.describe_producers([TopicPartition(TOPIC, 0)])
    if speaks(era, 35):
        a.describe_log_dirs()
        a.describe_log_dirs({TOPIC: [0]})
    if speaks(era, 74):
        a.list_config_resources()
        a.list_config_resources(["GROUP", "TOPIC"])
    # The transactional producer above is the fake broker's first, at epoch 0.
    pid = FIRST_TRANSACTIONAL_PRODUCER_ID
    if speaks(era, 66):
        a.list_transactions()
        a.list_transactions(state_filters=["CompleteAbort"], producer_id_filters=[pid])
    if speaks(era, 65):
        a.describe_transactions([TRANSACTIONAL_ID])
    if speaks(era, 27):
        # An administrative abort (KIP-664's abortTransaction): WriteTxnMarkers to the
        # partition's leader.
        a.abort_transaction(AbortTransactionSpec(TopicPartition(TOPIC, 0), pid, 0))
    a.close()

    s = KafkaProducer(bootstrap_servers=bootstrap, **SASL_PLAIN)
    s.partitions_for(TOPIC)
    s.close()


# -- aiokafka -------------------------------------------------------------------------------


async def _aiokafka(bootstrap: str, era: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic, RecordsToDelete
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
    from aiokafka.structs import OffsetAndMetadata

    modern = era != "ancient"
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=modern)
    await p.start()
    try:
        await p.send_and_wait(TOPIC, key=b"k", value=b"v")
    finally:
        await p.stop()

    c = AIOKafkaConsumer(TOPIC, bootstrap_servers=bootstrap, **GROUP_CONSUMER)
    await c.start()
    try:
        deadline = time.monotonic() + 20
        while not c.assignment() and time.monotonic() < deadline:
            await c.getmany(timeout_ms=100)
        if not c.assignment():
            raise AssertionError("aiokafka consumer got no assignment")
        for _ in range(3):
            await c.getmany(timeout_ms=100)
        await c.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(1, "")})
    finally:
        await c.stop()

    if speaks(era, 24):
        # aiokafka sends offsets to a transaction by group id alone (TxnOffsetCommit without
        # the member's generation).
        t = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=TRANSACTIONAL_ID)
        await t.start()
        try:
            async with t.transaction():
                await t.send_and_wait(TOPIC, key=b"k", value=b"committed")
                offsets = {TopicPartition(TOPIC, 0): OffsetAndMetadata(1, "")}
                await t.send_offsets_to_transaction(offsets, GROUP)
            await t.begin_transaction()
            await t.send_and_wait(TOPIC, key=b"k", value=b"aborted")
            await t.abort_transaction()
        finally:
            await t.stop()

    a = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await a.start()
    try:
        await a.create_topics([NewTopic(TOPIC + "-new", 3, 1)])
        await a.delete_topics([TOPIC + "-new"])
        if modern:
            await a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC)])
        await a.list_consumer_groups()
        await a.describe_consumer_groups([GROUP])
        parts = None if modern else [TopicPartition(TOPIC, 0)]
        await a.list_consumer_group_offsets(GROUP, partitions=parts)
        if speaks(era, 37):
            await a.create_partitions({TOPIC: NewPartitions(4)})
        if speaks(era, 21):
            await a.delete_records({TopicPartition(TOPIC, 0): RecordsToDelete(1)})
        if speaks(era, 33):
            resource = ConfigResource(ConfigResourceType.TOPIC, TOPIC, {"retention.ms": "1000"})
            await a.alter_configs([resource])
    finally:
        await a.close()

    s = AIOKafkaProducer(bootstrap_servers=bootstrap, **SASL_PLAIN)
    await s.start()
    try:
        await s.partitions_for(TOPIC)
    finally:
        await s.stop()


def run_aiokafka(bootstrap: str, era: str) -> None:
    asyncio.run(_aiokafka(bootstrap, era))


CLIENTS: dict[str, Callable[[str, str], None]] = {
    "confluent_kafka": run_confluent,
    "kafka_python": run_kafka_python,
    "aiokafka": run_aiokafka,
}


def capture(client: str, era: str) -> tuple[list[Captured], list[str]]:
    """Run one client in one era; return the frames it sent and the broker's errors."""
    broker = FakeBroker(versions=era_versions(ERAS[era]), label=f"{client}/{era}")
    with broker.serve():
        CLIENTS[client](f"127.0.0.1:{broker.port}", era)
    return broker.frames, broker.errors


def distinct(frames: list[Captured], per_version: int = 3) -> list[Captured]:
    """Up to ``per_version`` different frames per (api key, version), in arrival order."""
    seen: dict[tuple[int, int], list[bytes]] = {}
    out = []
    for f in frames:
        kept = seen.setdefault((f.api_key, f.api_version), [])
        if len(kept) < per_version and f.frame not in kept:
            kept.append(f.frame)
            out.append(f)
    return out


def fixture_files() -> list[Path]:
    """The committed fixtures, sorted by client and name."""
    return sorted(FIXTURES.glob("*/*.bin"))


def fixture_name(f: Captured, index: int) -> str:
    return f"{protocol.API_NAMES[f.api_key]}-v{f.api_version}-{index}.bin"


def fixture_key(path: Path) -> tuple[int, int]:
    """The api key and version a fixture's name states."""
    api, version, _ = path.stem.split("-")
    keys = {name: key for key, name in protocol.API_NAMES.items()}
    return keys[api], int(version[1:])


def write_fixtures(missing: bool = False) -> None:
    """Capture every client in every era and write its fixtures: all of them afresh, or with
    ``missing`` only those of (api key, version) pairs the client has no fixture of yet."""
    for client in CLIENTS:
        folder = FIXTURES / client
        folder.mkdir(parents=True, exist_ok=True)
        committed = {fixture_key(old) for old in folder.glob("*.bin")} if missing else set()
        if not missing:
            for old in folder.glob("*.bin"):
                old.unlink()
        counts: dict[tuple[int, int], int] = {}
        for era in ERAS:
            frames, errors = capture(client, era)
            if errors:
                raise SystemExit(f"{client}/{era}: {errors}")
            for f in distinct(frames):
                key = (f.api_key, f.api_version)
                if key in committed or counts.get(key, 0) >= 3:
                    continue
                counts[key] = counts.get(key, 0) + 1
                (folder / fixture_name(f, counts[key])).write_bytes(f.frame)
        print(client, sorted(counts))


if __name__ == "__main__":
    if "--write" not in sys.argv:
        raise SystemExit("usage: python -m tests.support.capture --write [--missing]")
    write_fixtures(missing="--missing" in sys.argv)
