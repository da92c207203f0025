"""The share session cache (kgroup.broker.share.sessions) against Kafka 4.2's rules: its
SharePartitionManagerTest / ShareSessionCacheTest cases (epochs, not found, limit, full and
incremental responses, release on disconnect)."""

from __future__ import annotations

import uuid

import pytest

from kgroup import errors
from kgroup.broker.share.sessions import FINAL_EPOCH, SessionCache, next_epoch

T = uuid.uuid4()
A, B, C = (T, 0), (T, 1), (T, 2)


def test_next_epoch_wraps_and_final_stays() -> None:
    # ShareRequestMetadata.nextEpoch.
    assert next_epoch(0) == 1 and next_epoch(7) == 8
    assert next_epoch(2**31 - 1) == 1
    assert next_epoch(-1) == -1


def test_open_then_incremental_epochs() -> None:
    cache = SessionCache(10)
    s = cache.open("g", "m", [A], "conn")
    assert s.epoch == 1 and list(s.partitions) == [A]
    # SharePartitionManagerTest.testNewContext: the wrong epoch, then the right one.
    with pytest.raises(errors.InvalidShareSessionEpoch):
        cache.fetch("g", "m", 2)
    assert cache.fetch("g", "m", 1, added=[B]) is s and s.epoch == 2
    with pytest.raises(errors.InvalidShareSessionEpoch):
        cache.fetch("g", "m", 1)
    cache.fetch("g", "m", 2, forgotten=[A])
    assert list(s.partitions) == [B] and s.epoch == 3
    with pytest.raises(errors.ShareSessionNotFound):
        cache.fetch("g", "other", 1)
    with pytest.raises(errors.ShareSessionNotFound):
        cache.fetch("g", "other", FINAL_EPOCH)


def test_epoch_wraps_to_one() -> None:
    cache = SessionCache(10)
    s = cache.open("g", "m", [A], "conn")
    s.epoch = 2**31 - 1
    cache.fetch("g", "m", 2**31 - 1)
    assert s.epoch == 1


def test_initial_fetch_with_acknowledgements_is_invalid_request() -> None:
    with pytest.raises(errors.InvalidRequest):
        SessionCache(10).open("g", "m", [A], "conn", acknowledgements=True)


def test_reopen_replaces_the_session() -> None:
    cache = SessionCache(1)
    cache.open("g", "m", [A, B], "conn")
    # The member's own old session does not count against the limit.
    s = cache.open("g", "m", [C], "conn2")
    assert list(s.partitions) == [C] and s.epoch == 1 and len(cache) == 1


def test_limit_reached() -> None:
    cache = SessionCache(2)
    cache.open("g", "m1", [A], "c1")
    cache.open("g2", "m1", [A], "c1")
    with pytest.raises(errors.ShareSessionLimitReached):
        cache.open("g", "m3", [A], "c3")
    cache.remove("g", "m1")
    cache.open("g", "m3", [A], "c3")


def test_acknowledge_epochs() -> None:
    # SharePartitionManager.acknowledgeSessionUpdate.
    cache = SessionCache(10)
    with pytest.raises(errors.InvalidShareSessionEpoch):
        cache.acknowledge("g", "m", 0)
    with pytest.raises(errors.ShareSessionNotFound):
        cache.acknowledge("g", "m", 1)
    s = cache.open("g", "m", [A], "conn")
    with pytest.raises(errors.InvalidShareSessionEpoch):
        cache.acknowledge("g", "m", 0)
    with pytest.raises(errors.InvalidShareSessionEpoch):
        cache.acknowledge("g", "m", 5)
    cache.acknowledge("g", "m", 1)
    assert s.epoch == 2
    # Final: checked, not moved.
    cache.acknowledge("g", "m", FINAL_EPOCH)
    assert s.epoch == 2 and cache.get("g", "m") is s


def test_incremental_response_lists_new_data_and_errors() -> None:
    cache = SessionCache(10)
    s = cache.open("g", "m", [A, B], "conn")
    cache.fetch("g", "m", 1, added=[C])
    # CachedSharePartition.maybeUpdateResponseData: nothing new, not listed; new partition
    # listed once; records always; an error, and once more after it cleared.
    assert not s.must_respond(A, False, 0)
    assert s.must_respond(C, False, 0)
    assert not s.must_respond(C, False, 0)
    assert s.must_respond(A, True, 0)
    assert s.must_respond(B, False, 3)
    assert s.must_respond(B, False, 0)
    assert not s.must_respond(B, False, 0)
    # A partition with records moves to the end of the session's order.
    assert list(s.partitions) == [B, C, A]


def test_disconnect_removes_the_sessions_the_connection_opened() -> None:
    # ShareSessionCache.ClientConnectionDisconnectListener.
    cache = SessionCache(10)
    cache.open("g", "m1", [A], "c1")
    cache.open("g", "m2", [A], "c1")
    cache.open("g", "m3", [A], "c2")
    gone = cache.disconnected("c1")
    assert sorted(s.member for s in gone) == ["m1", "m2"]
    assert len(cache) == 1 and cache.disconnected("c1") == []


def test_reopened_elsewhere_survives_the_old_connection() -> None:
    # Kafka marks the old connection's entry stale when the session is replaced.
    cache = SessionCache(10)
    cache.open("g", "m", [A], "old")
    cache.open("g", "m", [A], "new")
    assert cache.disconnected("old") == []
    assert cache.get("g", "m") is not None
    assert [s.member for s in cache.disconnected("new")] == ["m"]
