"""Spark into and out of Kafka: the ``kgroup`` data source beside Spark's own JVM Kafka connector
and beside the best a Spark user can write with nothing but pip, against Apache Kafka and
kgroup's broker, in one run.

Rows: ``KGROUP_BENCH_SPARK_ROWS`` (default 200,000; 10,000,000 for the real figures, see
bench/README.md) of a 16-character key and a 100-byte value, generated and cached inside Spark,
local[2] (both Python workers started and importing kgroup and confluent-kafka before anything
is timed); topics of 4 partitions; on each broker the rows are first written once through the
data source, untimed (what the reads read, and the broker's warm-up). The brokers, one after
the other (``KGROUP_BENCH_SPARK_BROKERS``, default kafka,kgroup), each a process of its own on
127.0.0.1 (bench/servers.py): Apache Kafka 4.x (one KRaft node, data on disk, Kafka's JVM
flags, a heap of ``KGROUP_BENCH_KAFKA_HEAP`` (1g)) and kgroup's broker (data on disk). Each way
in and out is used with its own defaults:

- write: ``df.write.format("kgroup")`` (one idempotent kgroup Producer per task,
  ``produce_arrow``); ``df.write.format("kafka")``, Spark's JVM connector
  (spark-sql-kafka-0-10_2.13, bench/spark_connector.py: the jars for pyspark's version from
  Maven Central, given with spark.jars; its producer's defaults: idempotent, acks=all); and
  ``mapInArrow`` calling confluent-kafka's ``Producer.produce`` per row (librdkafka,
  linger.ms=5, acks=all), flushed at the end of each task;
- read: ``spark.read.format("kgroup")`` (one offset range per Kafka partition, Arrow batches from
  ``consume_arrow``); ``spark.read.format("kafka")`` from the earliest to the latest offsets; and
  ``mapInArrow`` over one row per Kafka partition calling confluent-kafka's ``Consumer.consume``
  and building the same columns (key, value, partition, offset, timestamp) as Arrow arrays. All
  are forced by ``count(*), sum(length(value))`` and every row is counted.

Targets: (issue 13) the data source at least 2x faster than the mapInArrow baseline; (issue 18)
ahead of Spark's JVM connector on write and on read, against Apache Kafka. The summary at the
end prints every median time, the ratios and the load average.

Run: ``KGROUP_BENCH_SPARK_ROWS=10000000 .venv/bin/python -m pytest bench/bench_spark_kafka.py
-o python_files='bench_*.py' -p no:cacheprovider --benchmark-only`` (``KGROUP_BENCH_SPARK_ROUNDS``,
default 3, rounds of each).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator

import pyarrow as pa
import pytest

import kgroup
from bench import servers, spark_connector
from bench.report import load_average, summary
from bench.servers import Server

ROWS = int(os.environ.get("KGROUP_BENCH_SPARK_ROWS", 200_000))
ROUNDS = int(os.environ.get("KGROUP_BENCH_SPARK_ROUNDS", 3))
BROKERS = [
    b.strip() for b in os.environ.get("KGROUP_BENCH_SPARK_BROKERS", "kafka,kgroup").split(",")
]
PARTITIONS = 4
BROKER_NAMES = {"kafka": "Apache Kafka", "kgroup": "kgroup's broker"}
DATASOURCE, CONNECTOR, BASELINE = (
    "kgroup data source",
    "Spark's JVM connector",
    "mapInArrow + confluent-kafka",
)

# Median seconds by (broker, "write" or "read", way).
_results: dict[tuple[str, str, str], float] = {}
_topics = itertools.count()


def _group(what: str, broker: str) -> str:
    way = "write to" if what == "write" else "read from"
    return f"spark {way} {BROKER_NAMES[broker]}: {ROWS:,} rows of 100-byte values, local[2]"


@pytest.fixture(scope="module", params=BROKERS)
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    with servers.start(request.param) as s:
        yield s


@pytest.fixture(scope="module")
def broker(server: Server) -> str:
    return server.bootstrap


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    import spark_udfs
    from spark_udfs.session import get_session

    session = get_session(
        "local[2]",
        app_name="kgroup-bench-kafka",
        progress=False,
        conf={
            "spark.driver.memory": "4g",
            "spark.sql.shuffle.partitions": "2",
            # Spark's JVM Kafka connector: read when the session's JVM starts.
            "spark.jars": ",".join(spark_connector.jars()),
        },
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

    # Start both Python workers (Spark reuses them) and import there what the Python ways
    # import, before anything is timed: a cold worker's start would land on whichever way
    # runs first, and the JVM connector needs none. (A function defined here: Spark pickles
    # it by value; one at module level would be looked up by a module name workers lack.)
    def warm(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import confluent_kafka  # noqa: F401

        import kgroup  # noqa: F401
        import spark_udfs.datasource  # noqa: F401

        n = sum(b.num_rows for b in batches)
        yield pa.RecordBatch.from_pydict({"n": pa.array([n], pa.int64())})

    assert df.mapInArrow(warm, "n long").groupBy().sum("n").collect()[0][0] == ROWS
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


def run(benchmark, server: Server, what: str, way: str, fn) -> None:
    benchmark.group = _group(what, server.name)
    benchmark.extra_info["items"] = ROWS
    if way == BASELINE:
        benchmark.extra_info["baseline"] = True
    benchmark.pedantic(fn, rounds=ROUNDS, iterations=1)
    _results[(server.name, what, way)] = benchmark.stats.stats.median


# -- the rows on the broker, before anything is timed --------------------------------------------


@pytest.fixture(scope="module")
def filled(spark, rows, broker) -> str:
    """A topic of ROWS rows written through the data source: what the reads read, and, as the
    first thing each broker takes, its warm-up (a JVM's JIT, a new broker's first topics)
    before any way is timed."""
    topic = new_topic(broker)
    rows.write.format("kgroup").mode("append").option("kafka.bootstrap.servers", broker).option(
        "topic", topic
    ).save()
    assert sum(end_offsets(broker, topic).values()) == ROWS
    return topic


# -- write ---------------------------------------------------------------------------------------


def test_write_kgroup_datasource(benchmark, spark, rows, server, broker, filled):
    topics = []

    def go():
        topic = new_topic(broker)
        topics.append(topic)
        rows.write.format("kgroup").mode("append").option("kafka.bootstrap.servers", broker).option(
            "topic", topic
        ).save()

    run(benchmark, server, "write", DATASOURCE, go)
    ends = end_offsets(broker, topics[-1])
    assert sum(ends.values()) == ROWS
    want = kgroup.partition_for_key("0" * 16, PARTITIONS)
    assert want in ends


def test_write_spark_kafka_connector(benchmark, spark, rows, server, broker, filled):
    topics = []

    def go():
        topic = new_topic(broker)
        topics.append(topic)
        rows.write.format("kafka").option("kafka.bootstrap.servers", broker).option(
            "topic", topic
        ).save()

    run(benchmark, server, "write", CONNECTOR, go)
    assert sum(end_offsets(broker, topics[-1]).values()) == ROWS


def test_write_map_in_arrow_confluent_kafka(benchmark, spark, rows, server, broker, filled):
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

    run(benchmark, server, "write", BASELINE, go)
    assert sum(end_offsets(broker, topics[-1]).values()) == ROWS


# -- read ----------------------------------------------------------------------------------------


def _force(df) -> int:
    from pyspark.sql import functions as F

    return df.select(F.count("*"), F.sum(F.length("value"))).collect()[0][0]


def test_read_kgroup_datasource(benchmark, spark, server, broker, filled):
    def go():
        df = (
            spark.read.format("kgroup")
            .option("kafka.bootstrap.servers", broker)
            .option("subscribe", filled)
            .load()
        )
        assert _force(df) == ROWS

    run(benchmark, server, "read", DATASOURCE, go)


def test_read_spark_kafka_connector(benchmark, spark, server, broker, filled):
    def go():
        df = (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", broker)
            .option("subscribe", filled)
            .option("startingOffsets", "earliest")
            .option("endingOffsets", "latest")
            .load()
        )
        assert _force(df) == ROWS

    run(benchmark, server, "read", CONNECTOR, go)


def test_read_map_in_arrow_confluent_kafka(benchmark, spark, server, broker, filled):
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

    run(benchmark, server, "read", BASELINE, go)


@summary("spark <-> kafka: the kgroup data source vs Spark's JVM connector vs mapInArrow")
def _summary() -> list[str]:
    if not _results:
        return []
    version, pyspark_version = spark_connector.connector_version()
    lines = [
        f"{ROWS:,} rows of 100-byte values, local[2], median of {ROUNDS} rounds, seconds "
        "(lower is better); ratios: the other's time over the data source's",
        f"Spark's connector spark-sql-kafka-0-10_2.13 {version} on pyspark {pyspark_version}",
    ]
    checks: list[tuple[str, bool]] = []
    for broker in BROKERS:
        for what in ("write", "read"):
            got = {w: t for (b, x, w), t in _results.items() if b == broker and x == what}
            if not got:
                continue
            ours = got.get(DATASOURCE)
            lines.append(f"  {what} on {BROKER_NAMES[broker]}:")
            for way, t in got.items():
                ratio = f"  data source {t / ours:5.2f}x" if ours and way != DATASOURCE else ""
                lines.append(f"    {way:<30} {t:8.2f} s {ROWS / t / 1e6:7.3f} M rows/s{ratio}")
            if ours and BASELINE in got:
                checks.append(
                    (f"{what} on {broker}: at least 2x mapInArrow", got[BASELINE] >= 2 * ours)
                )
            if ours and CONNECTOR in got and broker == "kafka":
                checks.append(
                    (f"{what} on Apache Kafka: ahead of Spark's connector", got[CONNECTOR] > ours)
                )
    for what, ok in checks:
        lines.append(f"  target: {what:<50} {'met' if ok else 'MISSED'}")
    lines.append(f"  at the end: {load_average()}")
    return lines
