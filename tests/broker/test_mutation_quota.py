"""The controller mutation quota's accounting (KIP-599), as Kafka's
ControllerMutationQuotaManager keeps it: a token bucket per (user, client id) that refills at
the quota's rate up to quota x controller.quota.window.num x controller.quota.window.size.seconds;
a strict quota (current request versions) refuses once the bucket is below zero and otherwise
lets one request overdraw it, a permissive one (old versions) takes everything and throttles.
Vectors follow Kafka's ControllerMutationQuotaTest and TokenBucketTest; the wire behaviour is
in tests/conformance/test_mutation_quota_differential.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgroup.broker.quotas import (
    CONTROLLER_MUTATION_RATE,
    UNBOUNDED,
    MutationQuota,
    Quotas,
    TokenBucket,
)


def _quotas(tmp_path: Path, entity: tuple[tuple[str, str | None], ...], rate: float) -> Quotas:
    q = Quotas(tmp_path)
    results = q.alter([(entity, [(CONTROLLER_MUTATION_RATE, rate, False)])], False)
    assert results[0][1] is None
    return q


def test_token_bucket_refills_at_its_rate_up_to_its_burst() -> None:
    # Kafka's TokenBucketTest.testRecord: quota 2/s, 2 samples of 1 s: a burst of 4.
    bucket = TokenBucket(4, 0)
    assert bucket.measure(2, 4, 0) == 4
    bucket.record(3, 2, 4, 0)
    assert bucket.measure(2, 4, 0) == 1
    bucket.record(3, 2, 4, 0)
    assert bucket.measure(2, 4, 0) == -2
    assert bucket.measure(2, 4, 1000) == 0
    assert bucket.measure(2, 4, 2000) == 2
    # Never above the burst, however long it waits.
    assert bucket.measure(2, 4, 60_000) == 4


def test_strict_quota_lets_one_burst_overdraw_then_refuses(tmp_path: Path) -> None:
    # Kafka's StrictControllerMutationQuotaTest: the check comes before the recording, so the
    # last mutations allowed may take the bucket below zero; after that each is refused with
    # the time the bucket takes to refill to zero, and the refusal takes nothing.
    q = _quotas(tmp_path, (("client-id", "c"),), 2.0)  # burst 2 x 11 x 1 s = 22
    quota = q.mutation_quota("User:ANONYMOUS", "c", strict=True, now_ms=0)
    assert quota.record(20, now_ms=0)
    assert quota.throttle_ms(now_ms=0) == 0
    assert quota.record(10, now_ms=0)  # 2 left: allowed, to -8
    assert quota.throttle_ms(now_ms=0) == 0  # a strict quota throttles only a refusal
    assert not quota.record(1, now_ms=1000)  # -6 after a second
    assert quota.throttle_ms(now_ms=1000) == 3000
    # The throttle counts down from when it was found (Kafka's throttleTime).
    assert quota.throttle_ms(now_ms=1500) == 2500
    assert quota.throttle_ms(now_ms=5000) == 0
    # The refusal took nothing: another request, once back at zero, is allowed.
    again = q.mutation_quota("User:ANONYMOUS", "c", strict=True)
    assert isinstance(again, MutationQuota)
    assert again.record(1, now_ms=4000)
    assert not again.record(1, now_ms=4000)
    assert again.throttle_ms(now_ms=4000) == 500


def test_permissive_quota_takes_everything_and_throttles(tmp_path: Path) -> None:
    # Kafka's PermissiveControllerMutationQuotaTest: every mutation is recorded; the throttle
    # is how long the bucket takes to come back to zero after the last overdraft.
    q = _quotas(tmp_path, (("client-id", "c"),), 2.0)
    quota = q.mutation_quota("User:ANONYMOUS", "c", strict=False, now_ms=0)
    assert quota.record(20, now_ms=0)
    assert quota.throttle_ms(now_ms=0) == 0
    assert quota.record(5, now_ms=0)  # -3
    assert quota.record(5, now_ms=0)  # -8
    assert quota.throttle_ms(now_ms=0) == 4000
    # A strict request after it is refused at once.
    strict = q.mutation_quota("User:ANONYMOUS", "c", strict=True)
    assert not strict.record(1, now_ms=1000)
    assert strict.throttle_ms(now_ms=1000) == 3000


def test_throttle_rounds_as_java(tmp_path: Path) -> None:
    # Kafka rounds -tokens / quota x 1000 with Math.round: halves up.
    q = _quotas(tmp_path, (("client-id", "c"),), 3.0)  # burst 33
    quota = q.mutation_quota("User:ANONYMOUS", "c", strict=False, now_ms=0)
    quota.record(34, now_ms=0)  # -1: 333.33 ms
    assert quota.throttle_ms(now_ms=0) == 333
    (tmp_path / "b").mkdir()
    q = _quotas(tmp_path / "b", (("client-id", "c"),), 1000.0)  # burst 11000
    quota = q.mutation_quota("User:ANONYMOUS", "c", strict=False, now_ms=0)
    quota.record(11002.5, now_ms=0)  # -2.5: 2.5 ms, up to 3 (Python's round gives 2)
    assert quota.throttle_ms(now_ms=0) == 3


def test_the_quota_resolves_per_user_and_client_id(tmp_path: Path) -> None:
    # The most specific entity that sets it applies; clients resolving to one entity share one
    # bucket (a default applies to each user or client id on its own).
    q = _quotas(tmp_path, (("client-id", None),), 1.0)
    q.alter([((("user", "alice"),), [(CONTROLLER_MUTATION_RATE, 100.0, False)])], False)
    a = q.mutation_quota("User:bob", "c1", strict=True, now_ms=0)
    assert a.record(12, now_ms=0) and not a.record(1, now_ms=0)
    b = q.mutation_quota("User:carol", "c1", strict=True, now_ms=0)  # same client id
    assert not b.record(1, now_ms=0)
    c = q.mutation_quota("User:bob", "c2", strict=True, now_ms=0)  # its own bucket
    assert c.record(12, now_ms=0)
    alice = q.mutation_quota("User:alice", "c1", strict=True, now_ms=0)
    assert alice.record(1000, now_ms=0) and alice.record(1, now_ms=0)


def test_no_quota_is_unbounded(tmp_path: Path) -> None:
    q = Quotas(tmp_path)
    assert q.mutation_quota("User:ANONYMOUS", "c", strict=True) is UNBOUNDED
    q.alter([((("client-id", "c"),), [("producer_byte_rate", 10.0, False)])], False)
    assert q.mutation_quota("User:ANONYMOUS", "c", strict=True) is UNBOUNDED
    assert UNBOUNDED.record(10**9) and UNBOUNDED.throttle_ms() == 0


def test_the_bucket_outlives_a_quota_change(tmp_path: Path) -> None:
    # Kafka updates a sensor's quota in place: what was taken stays taken.
    q = _quotas(tmp_path, (("client-id", "c"),), 1.0)  # burst 11
    assert q.mutation_quota("User:ANONYMOUS", "c", True, now_ms=0).record(11, now_ms=0)
    q.alter([((("client-id", "c"),), [(CONTROLLER_MUTATION_RATE, 2.0, False)])], False)
    quota = q.mutation_quota("User:ANONYMOUS", "c", strict=True, now_ms=0)
    assert quota.record(3, now_ms=1000)  # 2 refilled in a second at the new rate: to -1
    assert not quota.record(1, now_ms=1000)
    assert quota.throttle_ms(now_ms=1000) == 500


@pytest.mark.parametrize(("window_num", "window_s", "burst"), [(11, 1, 22), (2, 3, 12)])
def test_burst_is_the_quota_over_the_windows(
    tmp_path: Path, window_num: int, window_s: int, burst: int
) -> None:
    q = Quotas(tmp_path, mutation_window_seconds=window_s, mutation_samples=window_num)
    q.alter([((("client-id", "c"),), [(CONTROLLER_MUTATION_RATE, 2.0, False)])], False)
    quota = q.mutation_quota("User:ANONYMOUS", "c", strict=False, now_ms=0)
    quota.record(burst, now_ms=0)
    assert quota.throttle_ms(now_ms=0) == 0
    quota.record(1, now_ms=0)
    assert quota.throttle_ms(now_ms=0) == 500


def test_full_buckets_are_dropped_as_client_ids_churn(tmp_path: Path) -> None:
    # A default client-id quota gives each client id a bucket; those refilled to their burst
    # are swept once the dict has doubled (Kafka expires idle sensors), the others kept.
    q = _quotas(tmp_path, (("client-id", None),), 1.0)  # burst 11
    busy = q.mutation_quota("User:ANONYMOUS", "busy", strict=False, now_ms=0)
    busy.record(1000, now_ms=0)  # a long way below zero
    for i in range(1023):
        q.mutation_quota("User:ANONYMOUS", f"c{i}", strict=False, now_ms=0).record(1, now_ms=0)
    assert len(q._buckets) == 1024
    q.mutation_quota("User:ANONYMOUS", "new", strict=False, now_ms=2000)  # the others refilled
    assert set(q._buckets) == {("", "busy"), ("", "new")}
    again = q.mutation_quota("User:ANONYMOUS", "busy", strict=True, now_ms=2000)
    assert not again.record(1, now_ms=2000)  # its debt kept
