"""The null-key partitioners, driven as Kafka's producer drives them. Expected behaviour from
Kafka's DefaultPartitioner (2.3), StickyPartitionCache(Test) (2.4-3.2) and
BuiltInPartitioner(Test) / RecordAccumulator (3.3+)."""

from collections import Counter

import pytest

import kgroup
from kgroup import BuiltInPartitioner, RoundRobinPartitioner, StickyPartitionCache


def test_round_robin_cycles_available_partitions_per_topic() -> None:
    p = RoundRobinPartitioner(start=0)  # Kafka 3.x RoundRobinPartitioner starts at 0
    got = [p.partition("t", 6, available=[0, 2, 4]) for _ in range(6)]
    assert got == [0, 2, 4, 0, 2, 4]
    assert p.partition("other", 6) == 0
    assert p.partition("t", 6) == 0  # counter 6 % 6 partitions, all available now


def test_round_robin_random_start_is_seeded() -> None:
    a = [RoundRobinPartitioner(seed=11).partition("t", 100) for _ in range(3)]
    assert len(set(a)) == 1  # same seed, same start
    starts = {RoundRobinPartitioner(seed=s).partition("t", 100) for s in range(20)}
    assert len(starts) > 5  # Kafka <= 2.3 starts each topic's counter at a random int


def test_keys_always_hash_with_murmur2() -> None:
    for p in (RoundRobinPartitioner(seed=1), StickyPartitionCache(seed=1)):
        assert p.partition("t", 1000, key=b"abc") == 107
    assert BuiltInPartitioner(1000, seed=1).partition(b"abc") == 107


def test_sticky_cache_changes_only_on_new_batch_for_current_partition() -> None:
    c = StickyPartitionCache(seed=3)
    first = c.partition("t", 5)
    assert all(c.partition("t", 5) == first for _ in range(50))
    nxt = c.next_partition("t", first, 5)
    assert nxt != first  # with several available, the new choice always differs
    assert c.next_partition("t", first, 5) == nxt  # a stale prev partition does not move it
    assert c.partition("t", 5) == nxt
    # One available partition: it is always that one.
    assert c.next_partition("u", -1, 5, available=[3]) == 3
    # Over many batches every available partition gets used, and only those.
    seen = Counter()
    cur = c.partition("v", 8, available=[1, 3, 5])
    for _ in range(3000):
        cur = c.next_partition("v", cur, 8, available=[1, 3, 5])
        seen[cur] += 1
    assert set(seen) == {1, 3, 5}
    assert min(seen.values()) > 800


def test_builtin_switches_by_bytes_kafka_3_4_rule() -> None:
    p = BuiltInPartitioner(50, batch_size=1000, seed=5)
    first = p.partition()
    assert p.update_partition_info(700) is False
    assert p.produced_bytes == 700
    assert p.partition() == first
    assert p.update_partition_info(400, enable_switch=False) is False  # 1100 but batch not full
    assert p.update_partition_info(500, enable_switch=False) is False  # 1600
    assert p.update_partition_info(400, enable_switch=False) is True  # 2000 >= 2 * batch.size
    assert p.produced_bytes == 0


def test_builtin_batch_size_zero_is_one() -> None:
    p = BuiltInPartitioner(10, batch_size=0, seed=1)  # KAFKA-14303
    p.partition()
    assert p.update_partition_info(1) is True


def test_builtin_uniform_choice_is_uniform() -> None:
    p = BuiltInPartitioner(4, batch_size=1, seed=9)
    seen = Counter()
    for _ in range(8000):
        seen[p.partition()] += 1
        p.update_partition_info(1)
    assert set(seen) == {0, 1, 2, 3}
    assert min(seen.values()) > 1800


def test_builtin_adaptive_weights_follow_queue_sizes() -> None:
    p = BuiltInPartitioner(3, batch_size=1, seed=2)
    # BuiltInPartitioner's own example: queues 0 3 1 -> inverted 4 1 3 -> CFT 4 5 8.
    p.update_load_stats([0, 3, 1])
    assert p.load_weights == [(0, 4), (1, 5), (2, 8)]
    seen = Counter()
    p.partition()
    for _ in range(16000):
        p.update_partition_info(1)
        seen[p.partition()] += 1
    assert 7600 < seen[0] < 8400 and 1700 < seen[1] < 2300 and 5600 < seen[2] < 6400
    # Equal queues: back to uniform; a partition without a queue yet: uniform too.
    p.update_load_stats([2, 2, 2])
    assert p.load_weights is None
    p.update_load_stats([0, None, 5])
    assert p.load_weights is None


def test_builtin_excludes_leaderless_and_slow_nodes() -> None:
    p = BuiltInPartitioner(4, batch_size=1, availability_timeout_ms=100, seed=4)
    p.update_load_stats(
        [1, 1, 1, 1], leaders=[10, None, 11, 12], node_unready_ms={12: 150, 11: 100}
    )
    # Partition 1 has no leader; node 12 is over the timeout (node 11 is not: > is strict).
    assert p.load_weights == [(0, 1), (2, 2)]
    p.partition()
    for _ in range(200):
        p.update_partition_info(1)
        assert p.partition() in (0, 2)


def test_builtin_adaptive_off_and_ignore_keys() -> None:
    p = BuiltInPartitioner(3, adaptive_partitioning=False, seed=1)
    p.update_load_stats([0, 9, 9])
    assert p.load_weights is None
    q = BuiltInPartitioner(1000, ignore_keys=True, seed=1)
    sticky = q.partition()
    assert q.partition(b"abc") == sticky


def test_builtin_metadata_update_drops_vanished_sticky_partition() -> None:
    p = BuiltInPartitioner(10, available=[9], seed=1)
    assert p.partition() == 9
    p.update_metadata(4)
    assert p.num_partitions == 4
    assert 0 <= p.partition() < 4


def test_partitioners_reject_bad_metadata() -> None:
    with pytest.raises(ValueError):
        BuiltInPartitioner(0)
    with pytest.raises(ValueError):
        BuiltInPartitioner(3, batch_size=-1)
    with pytest.raises(ValueError):
        BuiltInPartitioner(3, availability_timeout_ms=-5)
    with pytest.raises(ValueError, match="available partition 7"):
        StickyPartitionCache().partition("t", 3, available=[7])
    with pytest.raises(ValueError, match="queue_sizes"):
        BuiltInPartitioner(3).update_load_stats([1, 2])
    with pytest.raises(kgroup.KGroupError):
        RoundRobinPartitioner().partition("t", -2)


def test_seeded_runs_repeat() -> None:
    def run(seed: int) -> list[int]:
        p = BuiltInPartitioner(20, batch_size=10, seed=seed)
        out = []
        for _ in range(100):
            out.append(p.partition())
            p.update_partition_info(7)
        return out

    assert run(1) == run(1)
    assert run(1) != run(2)
