"""ShareFetch (78) and ShareAcknowledge (79) on the wire against an in-process kgroup broker
with ``group.share.enable``, raw frames: what Kafka 4.2's KafkaApis.handleShareFetchRequest /
handleShareAcknowledgeRequest, SharePartitionManager and SharePartition answer (reference
kafka-kip932-share-groups.md §1.4-1.9, §3, §6 items 9-17).

The same kind of sequence runs against Apache Kafka 4.4 beside kgroup in
test_share_fetch_vs_kafka.py (there Kafka's member joins with ShareGroupHeartbeat first)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from support.kgroup_broker import Wire, run_broker
from support.share_wire import (
    ACCEPT,
    MEMBER_A,
    MEMBER_B,
    RELEASE,
    create,
    produce,
    set_group_config,
    share_ack,
    share_fetch,
    share_fetch_body,
    topics,
)

from kgroup import errors, protocol
from kgroup.broker import Broker
from kgroup.protocol import ApiKey
from kgroup.protocol.records import decode_batches, encode_batch


@contextlib.contextmanager
def share_broker(**config: Any) -> Iterator[Broker]:
    values = {"group.share.enable": "true", **config}
    with run_broker(config=values) as b:
        yield b


def acquired(body: Any) -> list[tuple[int, int, int]]:
    assert body.error_code == 0, body.error_code
    return [
        (a.first_offset, a.last_offset, a.delivery_count)
        for t in body.responses
        for p in t.partitions
        for a in p.acquired_records
    ]


def partition(body: Any) -> Any:
    [t] = body.responses
    [p] = t.partitions
    return p


def test_off_unsupported_version_and_not_advertised() -> None:
    # Kafka 4.2 with share groups off answers UNSUPPORTED_VERSION (KafkaApis,
    # isShareGroupProtocolEnabled); kgroup also leaves them out of ApiVersions then.
    off = {"group.share.enable": "false"}
    with run_broker(config=off) as broker, Wire(broker.bootstrap_servers) as w:
        keys = {k.api_key for k in w.request(ApiKey.API_VERSIONS, 3, _api_versions()).body.api_keys}
        assert not {76, 77, 78, 79} & keys
        tid = create(w, "off")
        r = share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))
        assert r.error_code == errors.UnsupportedVersion.code and r.responses == []
        assert share_ack(w, MEMBER_A, 1, []).error_code == errors.UnsupportedVersion.code


def _api_versions() -> dict[str, str]:
    return {"client_software_name": "kgroup-test", "client_software_version": "1.0"}


def test_on_by_default_they_are_advertised_at_kafka_4_2_versions() -> None:
    # Kafka 4.2+ formats a new cluster with share.version=1: share groups on.
    with run_broker() as b, Wire(b.bootstrap_servers) as w:
        body = w.request(ApiKey.API_VERSIONS, 3, _api_versions()).body
        ranges = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
        assert ranges[78] == (1, 2) and ranges[79] == (1, 2)
        assert ranges[76] == (1, 1) and ranges[77] == (1, 1)


def test_acquire_from_latest_then_new_records_whole_batches() -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        produce(w, "t", [b"old"] * 3)
        # share.auto.offset.reset defaults to latest: what was there is not delivered.
        r = share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))
        assert r.acquisition_lock_timeout_ms == 30000
        p = partition(r)
        assert (p.error_code, p.records, list(p.acquired_records)) == (0, b"", [])
        produce(w, "t", [b"x"] * 10)
        # One log batch of 10 with MaxRecords 3: acquired whole (§6 item 11).
        r = share_fetch(w, MEMBER_A, 1, [], max_records=3, batch_size=3)
        assert acquired(r) == [(3, 12, 1)]
        recs = [rec.offset for bt in decode_batches(partition(r).records) for rec in bt.records]
        assert recs == list(range(3, 13))


def test_single_record_batches_stop_at_max_records_and_slice_records() -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "earliest")
        produce(w, "t", [b"%d" % i for i in range(10)], batches=10)
        r = share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}), max_records=3, batch_size=3)
        assert acquired(r) == [(0, 2, 1)]
        # Only the log batches that cover the acquired range.
        offsets = [rec.offset for bt in decode_batches(partition(r).records) for rec in bt.records]
        assert offsets == [0, 1, 2]
        # Another member gets the next ones.
        with Wire(b.bootstrap_servers) as w2:
            r = share_fetch(w2, MEMBER_B, 0, topics(tid, {0: []}), max_records=4)
            assert acquired(r) == [(3, 6, 1)]


def test_release_redelivers_and_the_delivery_limit_archives() -> None:
    with share_broker(**{"group.share.delivery.count.limit": "2"}) as b:
        with Wire(b.bootstrap_servers) as w:
            tid = create(w, "t")
            set_group_config(w, "g", "share.auto.offset.reset", "earliest")
            produce(w, "t", [b"a", b"b", b"c"])
            assert acquired(share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))) == [(0, 2, 1)]
            # Release (2) piggybacked: redelivered in the same request, count 2 (§6 item 12).
            r = share_fetch(w, MEMBER_A, 1, topics(tid, {0: [(0, 2, [RELEASE])]}))
            assert partition(r).acknowledge_error_code == 0
            assert acquired(r) == [(0, 2, 2)]
            # At the limit a release archives: nothing comes back.
            r = share_fetch(w, MEMBER_A, 2, topics(tid, {0: [(0, 2, [RELEASE])]}))
            assert partition(r).acknowledge_error_code == 0
            assert acquired(r) == []
            produce(w, "t", [b"d"])
            assert acquired(share_fetch(w, MEMBER_A, 3, [])) == [(3, 3, 1)]
        h = next(iter(b.state.shares.partitions.values()))
        assert h.share.start_offset == 3
        # Every change went through the one persist point.
        assert h.persisted.start_offset == 3 and b.state.shares.persisted_updates >= 2


def test_lock_expiry_redelivers_and_wakes_a_waiting_fetch() -> None:
    with share_broker(
        **{
            "group.share.record.lock.duration.ms": "1000",
            "group.share.min.record.lock.duration.ms": "1000",
        }
    ) as b:
        with Wire(b.bootstrap_servers) as wa, Wire(b.bootstrap_servers) as wb:
            tid = create(wa, "t")
            set_group_config(wa, "g", "share.auto.offset.reset", "earliest")
            produce(wa, "t", [b"a", b"b"])
            r = share_fetch(wa, MEMBER_A, 0, topics(tid, {0: []}))
            assert r.acquisition_lock_timeout_ms == 1000
            assert acquired(r) == [(0, 1, 1)]
            # B parks (all records are held by A); A's locks end after 1 s and wake it.
            started = time.monotonic()
            r = share_fetch(wb, MEMBER_B, 0, topics(tid, {0: []}), max_wait_ms=8000)
            took = time.monotonic() - started
            assert acquired(r) == [(0, 1, 2)]
            assert 0.5 < took < 5
            # A's acknowledgement of what it no longer holds: INVALID_RECORD_STATE.
            r = share_fetch(wa, MEMBER_A, 1, topics(tid, {0: [(0, 1, [ACCEPT])]}))
            assert partition(r).acknowledge_error_code == errors.InvalidRecordState.code


def test_acknowledgements_via_share_acknowledge() -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "earliest")
        produce(w, "t", [b"%d" % i for i in range(6)])
        assert acquired(share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))) == [(0, 5, 1)]
        # Accept 0-2; reject 3, release 4, accept 5 (per-offset types) (§6 item 13).
        r = share_ack(w, MEMBER_A, 1, topics(tid, {0: [(0, 2, [ACCEPT]), (3, 5, [3, 2, 1])]}))
        assert r.error_code == 0 and partition(r).error_code == 0
        h = next(iter(b.state.shares.partitions.values()))
        assert h.share.start_offset == 4
        # Acknowledged already: INVALID_RECORD_STATE; below the start offset: ignored; a bad
        # batch is INVALID_REQUEST for its partition (§6 item 14, SharePartition.acknowledge).
        r = share_ack(w, MEMBER_A, 2, topics(tid, {0: [(5, 5, [ACCEPT])]}))
        assert partition(r).error_code == errors.InvalidRecordState.code
        r = share_ack(w, MEMBER_A, 3, topics(tid, {0: [(0, 0, [ACCEPT])]}))
        assert partition(r).error_code == 0
        r = share_ack(w, MEMBER_A, 4, topics(tid, {0: [(5, 4, [ACCEPT])]}))
        assert partition(r).error_code == errors.InvalidRequest.code
        r = share_ack(w, MEMBER_A, 5, topics(tid, {0: [(4, 4, [5])]}))
        assert partition(r).error_code == errors.InvalidRequest.code
        # An unknown topic id.
        r = share_ack(w, MEMBER_A, 6, topics(uuid.uuid4(), {0: [(0, 0, [ACCEPT])]}))
        assert partition(r).error_code == errors.UnknownTopicId.code
        # Released 4 comes back with count 2.
        assert acquired(share_fetch(w, MEMBER_A, 7, [])) == [(4, 4, 2)]
        # Another member's records: INVALID_RECORD_STATE.
        with Wire(b.bootstrap_servers) as w2:
            share_fetch(w2, MEMBER_B, 0, topics(tid, {0: []}))
            r = share_ack(w2, MEMBER_B, 1, topics(tid, {0: [(4, 4, [ACCEPT])]}))
            assert partition(r).error_code == errors.InvalidRecordState.code
            r = share_fetch(w2, MEMBER_B, 2, topics(tid, {0: [(4, 4, [ACCEPT])]}))
            assert partition(r).acknowledge_error_code == errors.InvalidRecordState.code


def test_session_epochs_and_errors() -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        # §6 item 9 and SharePartitionManager.newContext / acknowledgeSessionUpdate.
        r = share_fetch(w, MEMBER_A, 0, topics(tid, {0: [(0, 0, [ACCEPT])]}))
        assert (r.error_code, r.responses) == (errors.InvalidRequest.code, [])
        r = share_fetch(w, MEMBER_A, 3, topics(tid, {0: []}))
        assert (r.error_code, r.responses) == (errors.ShareSessionNotFound.code, [])
        assert share_fetch(w, MEMBER_A, -1, []).error_code == errors.ShareSessionNotFound.code
        assert share_ack(w, MEMBER_A, 1, []).error_code == errors.ShareSessionNotFound.code
        assert share_ack(w, MEMBER_A, 0, []).error_code == errors.InvalidShareSessionEpoch.code
        assert acquired(share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))) == []
        r = share_fetch(w, MEMBER_A, 2, [])
        assert (r.error_code, r.responses) == (errors.InvalidShareSessionEpoch.code, [])
        assert share_ack(w, MEMBER_A, 0, []).error_code == errors.InvalidShareSessionEpoch.code
        # Incremental: nothing new, no partitions listed.
        r = share_fetch(w, MEMBER_A, 1, [])
        assert (r.error_code, r.responses) == (0, [])
        assert share_ack(w, MEMBER_A, 2, []).error_code == 0
        assert share_fetch(w, MEMBER_A, 3, []).error_code == 0
        # Empty or too long member ids (KafkaApis.isMemberIdValid).
        for bad in ("", "x" * 37):
            assert share_fetch(w, bad, 0, []).error_code == errors.InvalidRequest.code
        # Close, then the session is gone.
        assert share_fetch(w, MEMBER_A, -1, []).error_code == 0
        assert share_fetch(w, MEMBER_A, 4, []).error_code == errors.ShareSessionNotFound.code


def test_incremental_sessions_add_and_forget_partitions() -> None:
    with share_broker(**{"num.partitions": "2"}) as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        r = share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))
        assert [p.partition_index for p in r.responses[0].partitions] == [0]
        # A new partition is listed once (CachedSharePartition.requiresUpdateInResponse).
        r = share_fetch(w, MEMBER_A, 1, topics(tid, {1: []}))
        assert [p.partition_index for p in r.responses[0].partitions] == [1]
        assert share_fetch(w, MEMBER_A, 2, []).responses == []
        session = b.state.shares.sessions.get("g", MEMBER_A)
        assert session is not None and list(session.partitions) == [(tid, 0), (tid, 1)]
        forget = [{"topic_id": tid, "partitions": [0]}]
        assert share_fetch(w, MEMBER_A, 3, [], forgotten=forget).error_code == 0
        assert list(session.partitions) == [(tid, 1)]


def test_session_limit_reached_after_max_wait() -> None:
    with share_broker(**{"group.share.max.share.sessions": "1"}) as b:
        with Wire(b.bootstrap_servers) as w:
            tid = create(w, "t")
            assert share_fetch(w, MEMBER_A, 0, topics(tid, {0: []})).error_code == 0
            started = time.monotonic()
            r = share_fetch(w, MEMBER_B, 0, topics(tid, {0: []}), max_wait_ms=300)
            assert r.error_code == errors.ShareSessionLimitReached.code
            assert time.monotonic() - started >= 0.25
            # The member's own session is replaced, not refused.
            assert share_fetch(w, MEMBER_A, 0, topics(tid, {0: []})).error_code == 0


def test_close_with_epoch_minus_one_acknowledges_then_releases() -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "earliest")
        produce(w, "t", [b"a", b"b", b"c"], batches=3)
        assert acquired(share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))) == [(0, 2, 1)]
        # ShareAcknowledge at -1 (what both clients send on close): accept 0, the rest released
        # with the delivery counted (4.2, KAFKA-19972).
        r = share_ack(w, MEMBER_A, -1, topics(tid, {0: [(0, 0, [ACCEPT])]}))
        assert r.error_code == 0 and partition(r).error_code == 0
        assert b.state.shares.sessions.get("g", MEMBER_A) is None
        r = share_fetch(w, MEMBER_B, 0, topics(tid, {0: []}))
        assert acquired(r) == [(1, 2, 2)]
        # ShareFetch at -1: acknowledges, fetches nothing, closes.
        r = share_fetch(w, MEMBER_B, -1, topics(tid, {0: [(1, 1, [ACCEPT])]}))
        assert partition(r).acknowledge_error_code == 0
        assert list(partition(r).acquired_records) == []
        r = share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))
        assert acquired(r) == [(2, 2, 3)]


def test_a_closed_connection_releases_its_members_records() -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "earliest")
        produce(w, "t", [b"a", b"b"])
        other = Wire(b.bootstrap_servers)
        assert acquired(share_fetch(other, MEMBER_A, 0, topics(tid, {0: []}))) == [(0, 1, 1)]
        other.sock.shutdown(socket.SHUT_RDWR)
        other.sock.close()
        # §6 item 17: released at once, not after the lock duration.
        deadline = time.monotonic() + 5
        while b.state.shares.sessions.get("g", MEMBER_A) is not None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert acquired(share_fetch(w, MEMBER_B, 0, topics(tid, {0: []}))) == [(0, 1, 2)]


def test_a_parked_fetch_is_woken_by_a_produce() -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w, Wire(b.bootstrap_servers) as p:
        tid = create(w, "t")
        assert acquired(share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))) == []
        out: dict[str, Any] = {}

        def fetch() -> None:
            started = time.monotonic()
            out["body"] = share_fetch(w, MEMBER_A, 1, [], max_wait_ms=10_000)
            out["took"] = time.monotonic() - started

        t = threading.Thread(target=fetch)
        t.start()
        time.sleep(0.3)
        produce(p, "t", [b"new"])
        t.join(10)
        assert acquired(out["body"]) == [(0, 0, 1)]
        assert 0.2 < out["took"] < 5
        # Parked with nothing to give, the answer comes at MaxWaitMs, empty.
        started = time.monotonic()
        r = share_fetch(w, MEMBER_A, 2, [], max_wait_ms=300)
        assert (r.error_code, r.responses) == (0, [])
        assert time.monotonic() - started >= 0.25


@pytest.mark.parametrize("version", [1, 2])
def test_both_versions_frame_round_trip(version: int) -> None:
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        body = share_fetch_body(MEMBER_A, 0, topics(tid, {0: []}))
        r = w.request(ApiKey.SHARE_FETCH, version, body).body
        assert r.error_code == 0
        ack = {"group_id": "g", "member_id": MEMBER_A, "share_session_epoch": 1, "topics": []}
        r = w.request(ApiKey.SHARE_ACKNOWLEDGE, version, ack).body
        assert r.error_code == 0
        if version == 2:
            assert r.acquisition_lock_timeout_ms == 30000
        # A v2 renew with non-zero limits: INVALID_REQUEST (KIP-1222).
        if version == 2:
            body = share_fetch_body(MEMBER_A, 2, [])
            body["is_renew_ack"] = True
            r = w.request(ApiKey.SHARE_FETCH, 2, body).body
            assert r.error_code == errors.InvalidRequest.code
    assert protocol.API_VERSIONS[78][1] >= version


def test_auto_offset_reset_by_duration_starts_at_the_first_recent_record() -> None:
    # ShareFetchUtils.offsetForTimestamp: the first offset with a timestamp at or after now
    # minus the duration (§3.3).
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "by_duration:PT1H")
        produce(w, "t", [b"old", b"old"])  # timestamp 1000: 1970
        now = int(time.time() * 1000)
        batch = encode_batch([(0, now, None, b"new"), (1, now, None, b"new")])
        body = {
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}],
        }
        assert w.request(ApiKey.PRODUCE, 9, body).body.responses[0].partition_responses[0]
        assert acquired(share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))) == [(2, 3, 1)]


def test_min_bytes_waits_for_enough_then_max_wait_takes_what_there_is() -> None:
    # DelayedShareFetch: below MinBytes nothing is acquired until MaxWaitMs ends.
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "earliest")
        produce(w, "t", [b"small"])
        body = share_fetch_body(MEMBER_A, 0, topics(tid, {0: []}), max_wait_ms=400)
        body["min_bytes"] = 100_000
        started = time.monotonic()
        r = w.request(ApiKey.SHARE_FETCH, 1, body).body
        assert time.monotonic() - started >= 0.35
        assert acquired(r) == [(0, 0, 1)]


def test_a_changed_group_lock_duration_applies_to_the_next_acquisition() -> None:
    # Kafka reads share.record.lock.duration.ms at each acquisition
    # (ShareFetchUtils.recordLockDurationMsOrDefault).
    with share_broker() as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "earliest")
        produce(w, "t", [b"a"])
        r = share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))
        assert r.acquisition_lock_timeout_ms == 30000 and acquired(r) == [(0, 0, 1)]
        set_group_config(w, "g", "share.record.lock.duration.ms", "20000")
        produce(w, "t", [b"b"])
        started = int(time.time() * 1000)
        r = share_fetch(w, MEMBER_A, 1, [])
        assert r.acquisition_lock_timeout_ms == 20000 and acquired(r) == [(1, 1, 1)]
        h = next(iter(b.state.shares.partitions.values()))
        deadline = h.share.record(1)[3]
        assert started + 19_000 <= deadline <= started + 21_000
        assert h.share.record(0)[3] > deadline


def test_renew_acknowledgements_restart_locks_v2() -> None:
    # KIP-1222 (Kafka 4.2, v2): type 4 with IsRenewAck keeps the records and restarts their
    # locks; a renewing ShareFetch fetches nothing; type 4 without IsRenewAck, or in v1, is
    # INVALID_REQUEST for the partition.
    config = {
        "group.share.record.lock.duration.ms": "1000",
        "group.share.min.record.lock.duration.ms": "1000",
    }
    with share_broker(**config) as b, Wire(b.bootstrap_servers) as w:
        tid = create(w, "t")
        set_group_config(w, "g", "share.auto.offset.reset", "earliest")
        produce(w, "t", [b"a", b"b"])
        assert acquired(share_fetch(w, MEMBER_A, 0, topics(tid, {0: []}))) == [(0, 1, 1)]
        h = next(iter(b.state.shares.partitions.values()))
        first_deadline = h.share.next_deadline
        renew = {
            "group_id": "g",
            "member_id": MEMBER_A,
            "share_session_epoch": 1,
            "is_renew_ack": False,
            "topics": topics(tid, {0: [(0, 0, [4])]}),
        }
        r = w.request(ApiKey.SHARE_ACKNOWLEDGE, 2, renew).body
        assert partition(r).error_code == errors.InvalidRequest.code
        time.sleep(0.3)
        renew["is_renew_ack"] = True
        renew["share_session_epoch"] = 2
        r = w.request(ApiKey.SHARE_ACKNOWLEDGE, 2, renew).body
        assert (r.error_code, partition(r).error_code, r.acquisition_lock_timeout_ms) == (
            0,
            0,
            1000,
        )
        assert h.share.record(0)[3] > first_deadline
        body = share_fetch_body(MEMBER_A, 3, topics(tid, {0: [(1, 1, [4])]}))
        body.update(max_wait_ms=0, min_bytes=0, max_bytes=0, max_records=0, is_renew_ack=True)
        r = w.request(ApiKey.SHARE_FETCH, 2, body).body
        assert r.error_code == 0
        assert (
            partition(r).acknowledge_error_code == 0 and list(partition(r).acquired_records) == []
        )
        # Offset 1's lock was renewed by the fetch; both outlive the first deadline.
        time.sleep(max(0, (first_deadline - time.time() * 1000) / 1000) + 0.1)
        assert h.share.record(0)[1:3] == (1, MEMBER_A) and h.share.record(1)[2] == MEMBER_A
