"""ShareFetch and ShareAcknowledge side by side: the same raw sequence against Apache Kafka 4.4
(share groups on by default) and kgroup (``group.share.enable``, on by default too), the answers
compared; and a Java ``KafkaShareConsumer`` (``support/java_share/kgroup/ShareConsume.java``)
beside both.

Kafka serves a share partition only once its group coordinator initialized it, which takes a
member joining with ShareGroupHeartbeat and a second heartbeat carrying the assignment (§2.4):
on both brokers the sequence starts with that join. Acknowledgements go as
ShareAcknowledge before the fetch that should see them: Kafka applies a ShareFetch's
piggybacked acknowledgements and its fetch concurrently, so what that fetch sees is a race."""

from __future__ import annotations

import base64
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.apache_kafka import KafkaCluster, classpath, compiled, java, run_kafka
from support.kgroup_broker import Wire, run_broker
from support.share_capture import SOURCE_DIR
from support.share_wire import (
    ACCEPT,
    REJECT,
    RELEASE,
    create,
    produce,
    set_group_config,
    share_ack,
    share_fetch,
    topics,
)

from kgroup.protocol import ApiKey

#: CONFIG: both brokers' configs. The lower lock-duration minimum lets a group set 1 s locks.
CONFIG = {"group.share.min.record.lock.duration.ms": 1000, "num.partitions": 1}


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaCluster]:
    with run_kafka(1, CONFIG) as cluster:
        yield cluster


def kgroup_config() -> dict[str, str]:
    return {"group.share.enable": "true", **{k: str(v) for k, v in CONFIG.items()}}


def member_id() -> str:
    """A member id as both clients make it: a random UUID in URL-safe base64, 22 characters."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def join_kafka(w: Wire, group: str, member: str, topic: str) -> None:
    """Join the share group and heartbeat until the partition is assigned (initialized), on
    either broker."""
    w.request(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})
    body: dict[str, Any] = {
        "group_id": group,
        "member_id": member,
        "member_epoch": 0,
        "rack_id": None,
        "subscribed_topic_names": [topic],
    }
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r = w.request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body).body
        if r.error_code in (14, 15, 16):
            # __consumer_offsets is being made and loaded (FindCoordinator created it).
            time.sleep(0.5)
            continue
        assert r.error_code == 0, r
        if r.assignment is not None and r.assignment.topic_partitions:
            return
        body = {**body, "member_epoch": r.member_epoch, "subscribed_topic_names": None}
        time.sleep(0.5)
    raise AssertionError("no assignment")


def observe(body: Any) -> Any:
    """What is compared of an answer: the error codes, the acquired ranges per partition, and
    whether records came (not their bytes: timestamps and leader epochs differ)."""
    out: dict[str, Any] = {"error_code": body.error_code}
    if hasattr(body, "acquisition_lock_timeout_ms") and body.error_code == 0:
        out["lock_ms"] = body.acquisition_lock_timeout_ms
    parts = []
    for t in body.responses:
        for p in t.partitions:
            entry: dict[str, Any] = {"partition": p.partition_index, "error_code": p.error_code}
            if hasattr(p, "acquired_records"):
                entry["acknowledge_error_code"] = p.acknowledge_error_code
                entry["acquired"] = [
                    (a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records
                ]
                entry["has_records"] = bool(p.records)
            parts.append(entry)
    out["partitions"] = parts
    return out


def scenario(bootstrap: str, join: Callable[[Wire, str, str, str], None] | None) -> list[Any]:
    group, topic = "share-diff", "share-diff-t"
    a, b = member_id(), member_id()
    seen: list[Any] = []
    with Wire(bootstrap) as w:
        tid = create(w, topic)
        set_group_config(w, group, "share.auto.offset.reset", "earliest")
        produce(w, topic, [b"a", b"b", b"c"])
        if join is not None:
            join(w, group, a, topic)
        part = topics(tid, {0: []})

        def fetch(member: str, epoch: int, parts: list[dict], **kw: Any) -> None:
            seen.append(observe(share_fetch(w, member, epoch, parts, group=group, **kw)))

        def ack(member: str, epoch: int, parts: list[dict]) -> None:
            seen.append(observe(share_ack(w, member, epoch, parts, group=group)))

        # Session errors first (§6 item 9).
        fetch(a, 0, topics(tid, {0: [(0, 0, [ACCEPT])]}))
        fetch(a, 3, part)
        ack(a, 0, [])
        ack(a, 1, [])
        # Open: all three records, count 1.
        fetch(a, 0, part, max_wait_ms=5000)
        fetch(a, 7, [])
        # Release all: redelivered with count 2 (§6 item 12).
        ack(a, 1, topics(tid, {0: [(0, 2, [RELEASE])]}))
        fetch(a, 2, [], max_wait_ms=5000)
        # Accept 0, reject 1, release 2; then acknowledgements of what is not held (§6 13-14).
        ack(a, 3, topics(tid, {0: [(0, 0, [ACCEPT]), (1, 2, [REJECT, RELEASE])]}))
        ack(a, 4, topics(tid, {0: [(1, 1, [ACCEPT])]}))
        ack(a, 5, topics(tid, {0: [(2, 2, [ACCEPT])]}))
        ack(a, 6, topics(tid, {0: [(2, 1, [ACCEPT])]}))
        fetch(a, 7, [], max_wait_ms=5000)
        # Nothing new: an incremental answer lists nothing.
        fetch(a, 8, [], max_wait_ms=0)
        # Another member without a session.
        ack(b, 1, [])
        # Close with ShareAcknowledge -1: offset 2 is released, its delivery counted (4.2+).
        ack(a, -1, [])
        fetch(a, 9, [])
        fetch(a, 0, part, max_wait_ms=5000)
        fetch(a, -1, topics(tid, {0: [(2, 2, [ACCEPT])]}))
    return seen


def test_share_fetch_sequence_as_kafka_answers(kafka: KafkaCluster) -> None:
    want = scenario(kafka.bootstrap, join_kafka)
    with run_broker(config=kgroup_config()) as b:
        got = scenario(b.bootstrap_servers, join_kafka)
    for i, (g, k) in enumerate(zip(got, want, strict=True)):
        assert g == k, (i, g, k)


def timing_scenario(
    bootstrap: str, join: Callable[[Wire, str, str, str], None] | None
) -> list[Any]:
    """Lock expiry, the delivery limit and a dropped connection, with 1 s locks and a limit of
    2 deliveries set as the group's configs."""
    group, topic = "share-diff-timing", "share-diff-timing-t"
    a, b = member_id(), member_id()
    seen: list[Any] = []
    with Wire(bootstrap) as w:
        tid = create(w, topic)
        set_group_config(w, group, "share.auto.offset.reset", "earliest")
        set_group_config(w, group, "share.record.lock.duration.ms", "1000")
        set_group_config(w, group, "share.delivery.count.limit", "2")
        produce(w, topic, [b"a", b"b"])
        if join is not None:
            join(w, group, a, topic)
        part = topics(tid, {0: []})

        def fetch(wire: Wire, member: str, epoch: int, parts: list[dict], **kw: Any) -> Any:
            body = share_fetch(wire, member, epoch, parts, group=group, **kw)
            seen.append(observe(body))
            return body

        fetch(w, a, 0, part, max_wait_ms=5000)
        # The locks end after 1 s: the records come back with count 2 (§6 item 15).
        time.sleep(1.5)
        fetch(w, a, 1, [], max_wait_ms=5000)
        # Released at the limit of 2: archived, never delivered again (§6 item 12).
        seen.append(observe(share_ack(w, a, 2, topics(tid, {0: [(0, 1, [RELEASE])]}), group)))
        fetch(w, a, 3, [], max_wait_ms=200)
        produce(w, topic, [b"c"])
        # Another member on its own connection takes the new record, and drops the connection
        # without closing its session: the record is released at once (§6 item 17).
        other = Wire(bootstrap)
        fetch(other, b, 0, part, max_wait_ms=5000)
        other.sock.close()
        deadline = time.monotonic() + 10
        epoch = 4
        while True:
            body = fetch(w, a, epoch, [], max_wait_ms=500)
            epoch += 1
            if body.responses or time.monotonic() > deadline:
                break
            seen.pop()
    return seen


def test_lock_expiry_limit_and_disconnect_as_kafka_answers(kafka: KafkaCluster) -> None:
    want = timing_scenario(kafka.bootstrap, join_kafka)
    with run_broker(config=kgroup_config()) as b:
        got = timing_scenario(b.bootstrap_servers, join_kafka)
    for i, (g, k) in enumerate(zip(got, want, strict=True)):
        assert g == k, (i, g, k)


def read_committed_scenario(
    bootstrap: str, join: Callable[[Wire, str, str, str], None] | None
) -> list[Any]:
    """share.isolation.level=read_committed: an aborted transaction's records are not
    acquired (archived), a committed one's are; an open one stops the read."""
    from support.transactions import produce as txn_produce
    from support.transactions import transactional_producer

    group, topic = "share-diff-rc", "share-diff-rc-t"
    a = member_id()
    seen: list[Any] = []
    with Wire(bootstrap) as w:
        tid = create(w, topic)
        set_group_config(w, group, "share.auto.offset.reset", "earliest")
        set_group_config(w, group, "share.isolation.level", "read_committed")
        produce(w, topic, [b"plain"])
        with transactional_producer(bootstrap, "share-rc") as p:
            p.begin_transaction()
            txn_produce(p, topic, 0, [b"x", b"y"])
            p.abort_transaction(10)
            p.begin_transaction()
            txn_produce(p, topic, 0, [b"z"])
            p.commit_transaction(10)
            p.begin_transaction()
            txn_produce(p, topic, 0, [b"open"])
            if join is not None:
                join(w, group, a, topic)
            part = topics(tid, {0: []})
            seen.append(observe(share_fetch(w, a, 0, part, group=group, max_wait_ms=5000)))
            p.commit_transaction(10)
        # Kafka writes the commit markers after it answers EndTxn.
        time.sleep(1)
        seen.append(observe(share_fetch(w, a, 1, [], group=group, max_wait_ms=5000)))
    return seen


def test_read_committed_as_kafka_answers(kafka: KafkaCluster) -> None:
    want = read_committed_scenario(kafka.bootstrap, join_kafka)
    with run_broker(config=kgroup_config()) as b:
        got = read_committed_scenario(b.bootstrap_servers, join_kafka)
    for i, (g, k) in enumerate(zip(got, want, strict=True)):
        assert g == k, (i, g, k)


def java_share_consume(bootstrap: str, topic: str, group: str) -> list[str]:
    """Run ShareConsume against ``bootstrap``: its output lines."""
    build = compiled("share-consume", [SOURCE_DIR / "kgroup" / "ShareConsume.java"], SOURCE_DIR)
    main = [java(), "-Xmx256m", "-cp", classpath(build / "classes"), "kgroup.ShareConsume"]
    got = subprocess.run(
        [*main, bootstrap, topic, group],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, got.stdout + got.stderr
    return got.stdout.splitlines()


def test_java_share_consumer_as_with_kafka(kafka: KafkaCluster) -> None:
    # Kafka's KafkaShareConsumer in explicit mode: every record delivered once but offset 0,
    # released once and accepted at its second delivery; the group Stable with its member,
    # then Empty once it closed.
    want = java_share_consume(kafka.bootstrap, "java-share", "java-share-g")
    with run_broker(config=kgroup_config()) as b:
        got = java_share_consume(b.bootstrap_servers, "java-share", "java-share-g")
    assert got == want
    assert want[:2] == ["delivered 0 2", "delivered 1 1"]
