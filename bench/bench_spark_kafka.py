"""Spark into and out of Kafka with nothing but pip: the ``kgroup`` data source beside the best
a Spark user can write today without the JVM connector.

Rows: ``KGROUP_BENCH_SPARK_ROWS`` (default 10,000,000) of a 16-character key and a 100-byte
value, generated and cached inside Spark, local[2]; kgroup's broker in a process of its own
(bench/servers.py), topics of 4 partitions.

- write: ``df.write.format("kgroup")`` (one idempotent kgroup Producer per task,
  ``produce_arrow``) beside ``mapInArrow`` calling confluent-kafka's ``Producer.produce`` per
  row (librdkafka, linger.ms=5, acks=all as the sink), flushed at the end of each task;
- read: ``spark.read.format("kgroup")`` (one offset range per Kafka partition, Arrow batches from
  ``consume_arrow``) beside ``mapInArrow`` over one row per Kafka partition calling
  confluent-kafka's ``Consumer.consume`` and building the same columns (key, value, partition,
  offset, timestamp) as Arrow arrays. Both are forced by ``sum(length(value))``.

Targets (issue 13): the data source at least 2x faster than each baseline. A summary with the
ratios prints at the end.

Run: ``KGROUP_BENCH_SPARK_ROWS=1000000 .venv/bin/python -m pytest bench/bench_spark_kafka.py
-o python_files='bench_*.py' --benchmark-only -s``.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from collections.abc import Iterator

import pyarrow as pa
import pytest

import kgroup

ROWS = int(os.environ.get("KGROUP_BENCH_SPARK_ROWS", 10_000_000))
PARTITIONS = 4
WRITE = f"spark write to kafka: {ROWS:,} rows of 100-byte values, local[2]"
READ = f"spark read from kafka: {ROWS:,} rows of 100-byte values, local[2]"

_results: dict[str, float] = {}
_topics = itertools.count()


@pytest.fixture(scope="module")
def broker() -> Iterator[str]:
    from bench import servers

    with tempfile.TemporaryDirectory(prefix="kgroup-bench-spark-") as d:
        with servers.kgroup(f"{d}/data") as s:
            yield s.bootstrap


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    import spark_udfs
    from spark_udfs.session import get_session

    session = get_session(
        "local[2]",
        app_name="kgroup-bench-kafka",
        progress=False,
        conf={"spark.driver.memory": "4g", "spark.sql.shuffle.partitions": "2"},
        log_level="ERROR",
    )
    spark_udfs.register(session)
    yield session
    session.catalog.clearCache()
    session.stop()


@pytest.fixture(scope="module")
def rows(spark):
    """ROWS rows: ``key`` 16 hex characters, ``value`` 100 bytes; cached, in 2 partitions."""
    from pyspark.sql import functions as F

    h = F.lpad(F.hex(F.xxhash64("id")), 16, "0")
    df = (
        spark.range(ROWS, numPartitions=2)
        .select(h.alias("key"), F.rpad(h, 100, "x").cast("binary").alias("value"))
        .cache()
    )
    assert df.count() == ROWS
    yield df
    df.unpersist()


def new_topic(bootstrap: str) -> str:
    name = f"bench-spark-{next(_topics)}-{time.monotonic_ns()}"
    admin = kgroup.AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.create_topics([kgroup.NewTopic(name, PARTITIONS, 1)])[name].result(30)
    finally:
        admin.close()
    return name


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    admin = kgroup.AdminClient({"bootstrap.servers": bootstrap})
    try:
        marks = admin.watermarks([(topic, p) for p in range(PARTITIONS)])
    finally:
        admin.close()
    return {tp.partition: hi for tp, hi in ((tp, v[1]) for tp, v in marks.items())}


def run(benchmark, name: str, fn, *, group: str, rounds: int = 3, baseline: bool = False):
    benchmark.group = group
    benchmark.extra_info["items"] = ROWS
    if baseline:
        benchmark.extra_info["baseline"] = True
    result = benchmark.pedantic(fn, rounds=rounds, iterations=1)
    _results[name] = benchmark.stats.stats.median
    return result


# -- write ---------------------------------------------------------------------------------------


def test_write_kgroup_datasource(benchmark, spark, rows, broker):
    topics = []

    def go():
        topic = new_topic(broker)
        topics.append(topic)
        rows.write.format("kgroup").mode("append").option("kafka.bootstrap.servers", broker).option(
            "topic", topic
        ).save()

    run(benchmark, "write: kgroup data source", go, group=WRITE)
    ends = end_offsets(broker, topics[-1])
    assert sum(ends.values()) == ROWS
    want = kgroup.partition_for_key("0" * 16, PARTITIONS)
    assert want in ends


def test_write_map_in_arrow_confluent_kafka(benchmark, spark, rows, broker):
    def writer(bootstrap: str, topic: str):
        def fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            import confluent_kafka

            p = confluent_kafka.Producer(
                {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"}
            )
            n = 0
            for b in batches:
                keys = b.column("key").to_pylist()
                values = b.column("value").to_pylist()
                for k, v in zip(keys, values, strict=True):
                    while True:
                        try:
                            p.produce(topic, value=v, key=k)
                            break
                        except BufferError:
                            p.poll(0.01)
                n += len(keys)
                p.poll(0)
            assert p.flush(120) == 0
            yield pa.RecordBatch.from_pydict({"n": pa.array([n], pa.int64())})

        return fn

    topics = []

    def go():
        topic = new_topic(broker)
        topics.append(topic)
        got = rows.mapInArrow(writer(broker, topic), "n long").groupBy().sum("n").collect()
        assert got[0][0] == ROWS

    run(
        benchmark,
        "write: mapInArrow + confluent-kafka produce per row",
        go,
        group=WRITE,
        baseline=True,
    )
    assert sum(end_offsets(broker, topics[-1]).values()) == ROWS


# -- read ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def filled(spark, rows, broker) -> str:
    topic = new_topic(broker)
    rows.write.format("kgroup").mode("append").option("kafka.bootstrap.servers", broker).option(
        "topic", topic
    ).save()
    assert sum(end_offsets(broker, topic).values()) == ROWS
    return topic


def _force(df) -> int:
    from pyspark.sql import functions as F

    return df.select(F.count("*"), F.sum(F.length("value"))).collect()[0][0]


def test_read_kgroup_datasource(benchmark, spark, broker, filled):
    def go():
        df = (
            spark.read.format("kgroup")
            .option("kafka.bootstrap.servers", broker)
            .option("subscribe", filled)
            .load()
        )
        assert _force(df) == ROWS

    run(benchmark, "read: kgroup data source", go, group=READ)


def test_read_map_in_arrow_confluent_kafka(benchmark, spark, broker, filled):
    ends = end_offsets(broker, filled)

    def reader(bootstrap: str):
        def fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            import confluent_kafka

            for b in batches:
                for topic, part, end in zip(
                    b.column("topic").to_pylist(),
                    b.column("partition").to_pylist(),
                    b.column("end").to_pylist(),
                    strict=True,
                ):
                    c = confluent_kafka.Consumer(
                        {
                            "bootstrap.servers": bootstrap,
                            "group.id": "bench-unused",
                            "enable.auto.commit": False,
                        }
                    )
                    c.assign([confluent_kafka.TopicPartition(topic, part, 0)])
                    pos = 0
                    while pos < end:
                        # Ask for no more than is left, so that the last call returns as
                        # soon as the partition's end is there (no timeout spent waiting).
                        msgs = c.consume(min(10000, end - pos), 5.0)
                        keys, values, offsets, stamps = [], [], [], []
                        for m in msgs:
                            if m.error() is not None or m.offset() >= end:
                                continue
                            keys.append(m.key())
                            values.append(m.value())
                            offsets.append(m.offset())
                            stamps.append(m.timestamp()[1])
                        if not msgs:
                            continue
                        pos = msgs[-1].offset() + 1
                        n = len(keys)
                        yield pa.RecordBatch.from_pydict(
                            {
                                "key": pa.array(keys, pa.binary()),
                                "value": pa.array(values, pa.binary()),
                                "topic": pa.array([topic] * n, pa.string()),
                                "partition": pa.array([part] * n, pa.int32()),
                                "offset": pa.array(offsets, pa.int64()),
                                "timestamp": pa.array(stamps, pa.timestamp("ms")).cast(
                                    pa.timestamp("us", tz="UTC")
                                ),
                            }
                        )
                    c.close()

        return fn

    schema = (
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp"
    )

    def go():
        plan = spark.createDataFrame(
            [(filled, p, ends[p]) for p in range(PARTITIONS)],
            "topic string, partition int, end long",
        ).repartition(PARTITIONS)
        assert _force(plan.mapInArrow(reader(broker), schema)) == ROWS

    run(benchmark, "read: mapInArrow + confluent-kafka consume", go, group=READ, baseline=True)


def test_summary():
    """Prints the ratios (run with -s to see them)."""
    pairs = [
        (
            "write",
            "write: mapInArrow + confluent-kafka produce per row",
            "write: kgroup data source",
        ),
        ("read", "read: mapInArrow + confluent-kafka consume", "read: kgroup data source"),
    ]
    print(f"\nspark <-> kafka, {ROWS:,} rows of 100-byte values, local[2] (median seconds)")
    for what, base, ours in pairs:
        if base in _results and ours in _results:
            b, o = _results[base], _results[ours]
            print(f"  {what}: kgroup {o:.2f} s, baseline {b:.2f} s: {b / o:.2f}x (target >= 2x)")
