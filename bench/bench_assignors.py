"""Assignor benchmarks on Java's large-test shapes (AbstractStickyAssignorTest), beside Java's
own timings (reference java-assignor-timings.txt, same machine kind) and kafka-python.

    .venv/bin/python -m pytest bench/bench_assignors.py --benchmark-only \\
        --benchmark-columns=min,median,max,rounds --benchmark-group-by=group

Shapes: topics t000.., consumers c0000..; "first" is a fresh assignment, "with ownership" the
next one, where consumers 1..N-1 report what they got with generation 1 and consumer 0 reports
nothing (as Java's timing harness does). Rounds are few: the large shapes build about a
million partitions each time. Java (first / with ownership), cooperative-sticky:
(a) uniform 500x2000, 2000 consumers: 0.13-0.41 s / 1.5-2.4 s (eager sticky 0.25-0.4 / 3.0-3.5,
range 0.8-1.5, roundrobin ~0.8); (b) the same with the last consumer on t000 only: ~6.5 s /
~6.5 s; (c) 100x500, 5000 consumers in two subscription halves: 81.9 s / 45.4 s.
"""

from __future__ import annotations

import pytest

from bench.kafka_python_peer import cluster, members
from kgroup.assignors import (
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
)

ROUNDS = 3


def shape(kind: str):
    topics_n, parts, consumers = (100, 500, 5000) if kind == "half" else (500, 2000, 2000)
    topics = [f"t{i:03d}" for i in range(topics_n)]
    ppt = dict.fromkeys(topics, parts)
    width = len(str(consumers - 1))
    half_a, half_b = topics[: topics_n // 2], topics[topics_n // 2 :]
    subs = {}
    for i in range(consumers):
        if kind == "nonequal" and i == consumers - 1:
            ts = topics[:1]
        elif kind == "half":
            ts = half_a if i % 4 == 0 else half_b
        else:
            ts = topics
        subs[f"c{i:0{width}d}"] = ts
    return ppt, subs


def subscriptions(kind: type, subs: dict[str, list[str]], previous=None):
    out = {}
    for i, (m, ts) in enumerate(subs.items()):
        if previous is None or i == 0:
            out[m] = kind.subscription(ts) if kind is not None else Subscription(ts)
        else:
            out[m] = kind.subscription(ts, previous[m], 1)
    return out


CASES = [
    ("a-uniform", "uniform"),
    ("b-nonequal", "nonequal"),
    ("c-half", "half"),
]


@pytest.mark.parametrize(("group", "kind"), CASES)
def test_cooperative_first(benchmark, group, kind):
    benchmark.group = f"{group} first assignment"
    ppt, topics = shape(kind)
    subs = subscriptions(CooperativeStickyAssignor, topics)
    out = benchmark.pedantic(
        lambda: CooperativeStickyAssignor().assign(ppt, subs), rounds=ROUNDS, iterations=1
    )
    assert sum(len(a) for a in out.values()) == sum(ppt.values())


@pytest.mark.parametrize(("group", "kind"), CASES)
def test_cooperative_with_ownership(benchmark, group, kind):
    benchmark.group = f"{group} with ownership"
    ppt, topics = shape(kind)
    first = CooperativeStickyAssignor().assign(
        ppt, subscriptions(CooperativeStickyAssignor, topics)
    )
    subs = subscriptions(CooperativeStickyAssignor, topics, first)
    del first
    out = benchmark.pedantic(
        lambda: CooperativeStickyAssignor().assign(ppt, subs), rounds=ROUNDS, iterations=1
    )
    assert sum(len(a) for a in out.values()) == sum(ppt.values())


def test_sticky_uniform(benchmark):
    benchmark.group = "a-uniform first assignment"
    ppt, topics = shape("uniform")
    subs = subscriptions(StickyAssignor, topics)
    benchmark.pedantic(lambda: StickyAssignor().assign(ppt, subs), rounds=ROUNDS, iterations=1)


def test_sticky_uniform_with_ownership(benchmark):
    benchmark.group = "a-uniform with ownership"
    ppt, topics = shape("uniform")
    first = StickyAssignor().assign(ppt, subscriptions(StickyAssignor, topics))
    subs = subscriptions(StickyAssignor, topics, first)
    del first
    benchmark.pedantic(lambda: StickyAssignor().assign(ppt, subs), rounds=ROUNDS, iterations=1)


@pytest.mark.parametrize("assignor", [RangeAssignor, RoundRobinAssignor], ids=lambda c: c.name)
def test_range_and_roundrobin_uniform(benchmark, assignor):
    benchmark.group = "a-uniform first assignment"
    ppt, topics = shape("uniform")
    subs = subscriptions(None, topics)
    benchmark.pedantic(lambda: assignor().assign(ppt, subs), rounds=ROUNDS, iterations=1)


# Beside kafka-python's StickyPartitionAssignor (pure Python), on a shape it finishes:
# 50 topics x 100 partitions, 200 consumers, all subscribed. kgroup is timed through its own
# API and through the kafka-python plug-in on the same kafka-python objects.

KP_TOPICS = {f"t{i:02d}": 100 for i in range(50)}
KP_MEMBERS = 200


@pytest.fixture(scope="module")
def kafka_python_group():
    subs = {f"c{i:03d}": Subscription(list(KP_TOPICS)) for i in range(KP_MEMBERS)}
    return cluster(KP_TOPICS), members(subs), subs


def test_kafka_python_sticky(benchmark, kafka_python_group):
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    benchmark.group = "d-kafka-python shape 50x100, 200 consumers"
    cl, ms, _ = kafka_python_group
    benchmark.pedantic(lambda: StickyPartitionAssignor().assign(cl, ms), rounds=1, iterations=1)


def test_kgroup_sticky_kafka_python_shape(benchmark, kafka_python_group):
    benchmark.group = "d-kafka-python shape 50x100, 200 consumers"
    _, _, subs = kafka_python_group
    benchmark.pedantic(lambda: StickyAssignor().assign(KP_TOPICS, subs), rounds=20, iterations=1)


def test_kgroup_plugin_in_kafka_python(benchmark, kafka_python_group):
    from kgroup.adapters.kafka_python_assignors import StickyPartitionAssignor

    benchmark.group = "d-kafka-python shape 50x100, 200 consumers"
    cl, ms, _ = kafka_python_group
    benchmark.pedantic(lambda: StickyPartitionAssignor().assign(cl, ms), rounds=20, iterations=1)
