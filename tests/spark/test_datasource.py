"""The kgroup data source: Spark's Kafka source and sink over kgroup's clients, on a local
Spark against kgroup's broker and tansu."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import tempfile
import time

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)
from support.kgroup_broker import run_broker

import kgroup
import spark_udfs
from spark_udfs.datasource import source_schema

pytestmark = [pytest.mark.network, pytest.mark.slow]

_names = itertools.count()

HEADERS = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)


@pytest.fixture(scope="module")
def broker():
    with run_broker() as b:
        yield b.bootstrap_servers


@pytest.fixture(scope="module", params=["kgroup", "tansu"])
def servers(request, broker):
    if request.param == "kgroup":
        return broker
    return request.getfixturevalue("tansu").bootstrap


@pytest.fixture(scope="module")
def kspark(spark):
    spark_udfs.register(spark)
    return spark


def new_topic(servers: str, partitions: int) -> str:
    name = f"spark-ds-{next(_names)}-{time.monotonic_ns()}"
    admin = kgroup.AdminClient({"bootstrap.servers": servers})
    try:
        admin.create_topics([kgroup.NewTopic(name, partitions, 1)])[name].result(30)
    finally:
        admin.close()
    return name


def read(spark, servers: str, topic: str, **options: str):
    r = spark.read.format("kgroup").option("kafka.bootstrap.servers", servers)
    r = r.option("subscribe", topic)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def keyed_frame(spark, n: int, parts: int = 3):
    return spark.range(n, numPartitions=parts).select(
        F.concat(F.lit("key-"), F.col("id").cast("string")).alias("key"),
        F.concat(F.lit("value-"), F.col("id").cast("string")).cast("binary").alias("value"),
    )


def test_batch_write_then_read_every_row_where_java_puts_it(kspark, servers):
    topic = new_topic(servers, 4)
    n = 3000
    before = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=2)
    with tempfile.TemporaryDirectory() as d:
        keyed_frame(kspark, n).write.format("kgroup").mode("append").option(
            "kafka.bootstrap.servers", servers
        ).option("topic", topic).option("kgroup.commitReport", f"{d}/report.json").save()
        with open(f"{d}/report.json") as f:
            got_report = json.load(f)
    after = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=2)
    # The driver's commit reports rows per partition.
    report = {(topic, int(p)): v for p, v in got_report["rows"][topic].items()}
    assert sum(report.values()) == n

    # tansu 0.6 answers ListOffsets latest with the last batch's base offset + 1: read it to
    # the ends the commit reported instead.
    ends = {topic: {str(p): n for (_, p), n in report.items()}}
    df = read(kspark, servers, topic, endingOffsets=json.dumps(ends))
    assert df.schema == source_schema(False)
    rows = df.collect()
    assert len(rows) == n
    got = {r.key.decode(): r for r in rows}
    assert len(got) == n
    per_partition: dict[int, list[int]] = {}
    for i in range(n):
        r = got[f"key-{i}"]
        assert r.value == f"value-{i}".encode()
        assert r.topic == topic
        assert r.partition == kgroup.partition_for_key(f"key-{i}", 4)
        assert r.timestampType == 0
        ts = r.timestamp.replace(tzinfo=dt.UTC)
        assert before <= ts <= after
        per_partition.setdefault(r.partition, []).append(r.offset)
    for p, offs in per_partition.items():
        assert sorted(offs) == list(range(len(offs)))  # every offset once, from 0
        assert report[(topic, p)] == len(offs)


def test_headers_partition_column_and_topic_column(kspark, servers):
    topic = new_topic(servers, 3)
    schema = StructType(
        [
            StructField("topic", StringType()),
            StructField("key", BinaryType()),
            StructField("value", StringType()),
            StructField("partition", IntegerType()),
            StructField("headers", HEADERS),
        ]
    )
    rows = [
        (topic, b"k1", "v1", 2, [("h1", b"x"), ("h2", None)]),
        (topic, None, "v2", 0, None),
        (topic, b"k3", "v3", None, [("h3", b"\x00\xff")]),
    ]
    kspark.createDataFrame(rows, schema).write.format("kgroup").mode("append").option(
        "kafka.bootstrap.servers", servers
    ).save()
    got = {
        r.value: r
        for r in read(
            kspark, servers, topic, includeHeaders="true", startingOffsets="earliest"
        ).collect()
    }
    assert set(got) == {b"v1", b"v2", b"v3"}
    assert got[b"v1"].partition == 2 and got[b"v2"].partition == 0
    assert got[b"v3"].partition == kgroup.partition_for_key(b"k3", 3)
    assert [(h.key, h.value) for h in got[b"v1"].headers] == [("h1", b"x"), ("h2", None)]
    assert not got[b"v2"].headers
    assert [(h.key, h.value) for h in got[b"v3"].headers] == [("h3", b"\x00\xff")]


def test_headers_of_many_rows_go_through_arrow(kspark, broker):
    # 50,000 rows with headers: the sink hands them to produce_arrow (one Python produce() per
    # row before headers reached the Arrow path).
    topic = new_topic(broker, 2)
    n = 50_000
    header = F.struct(
        F.lit("id").alias("key"), F.col("id").cast("string").cast("binary").alias("value")
    )
    df = kspark.range(n, numPartitions=2).select(
        F.col("id").cast("string").alias("key"),
        F.col("id").cast("string").alias("value"),
        F.when(F.col("id") % 10 == 0, F.lit(None))
        .otherwise(
            F.array(
                header.alias("h"),
                F.struct(F.lit("n").alias("key"), F.lit(None).cast("binary").alias("value")),
            )
        )
        .cast(HEADERS)
        .alias("headers"),
    )
    df.write.format("kgroup").mode("append").option("kafka.bootstrap.servers", broker).option(
        "topic", topic
    ).save()
    back = read(kspark, broker, topic, includeHeaders="true")
    wrong = back.where(
        F.when(
            F.col("value").cast("string").cast("long") % 10 == 0, F.col("headers").isNotNull()
        ).otherwise(
            (F.size("headers") != 2)
            | (F.col("headers")[0]["key"] != "id")
            | (F.col("headers")[0]["value"] != F.col("value"))
            | (F.col("headers")[1]["key"] != "n")
            | F.col("headers")[1]["value"].isNotNull()
        )
    )
    assert back.count() == n
    assert wrong.count() == 0


def test_offsets_timestamps_and_min_partitions(kspark, broker):
    topic = new_topic(broker, 2)
    p = kgroup.Producer({"bootstrap.servers": broker})
    for i in range(40):
        p.produce(topic, value=b"%d" % i, partition=i % 2, timestamp=1_000_000 + i * 1000)
    p.flush()
    p.close()
    df = read(
        kspark,
        broker,
        topic,
        startingOffsets=json.dumps({topic: {"0": 5, "1": -2}}),
        endingOffsets=json.dumps({topic: {"0": -1, "1": 10}}),
        minPartitions="5",
    )
    assert df.rdd.getNumPartitions() == 5
    offs = sorted((r.partition, r.offset) for r in df.collect())
    assert offs == [(0, o) for o in range(5, 20)] + [(1, o) for o in range(10)]
    # Timestamps are Kafka's (CreateTime as the producer set it) and select offsets.
    df = read(kspark, broker, topic, startingTimestamp="1010000", endingTimestamp="1030000")
    got = sorted((r.partition, r.offset, r.timestamp) for r in df.collect())
    assert [(p, o) for p, o, _ in got] == [(0, o) for o in range(5, 15)] + [
        (1, o) for o in range(5, 15)
    ]
    assert got[0][2] == dt.datetime(1970, 1, 1, 0, 16, 50)  # 1,010,000 ms in UTC


def test_bad_options_fail_before_any_job(kspark, broker):
    def load(**options: str):
        r = kspark.read.format("kgroup")
        for k, v in options.items():
            r = r.option(k, v)
        return r.load()

    bs = {"kafka.bootstrap.servers": broker}
    cases = [
        ({"subscribe": "t"}, "kafka.bootstrap.servers' must be specified"),
        ({**bs}, "One of the following options must be specified"),
        ({**bs, "subscribe": "t", "assign": '{"t":[0]}'}, "Only one of the following options"),
        ({**bs, "subscribe": "t", "kafka.group.id": "g"}, "'group.id' is not supported"),
        ({**bs, "subscribe": "t", "kafka.auto.offset.reset": "x"}, "'auto.offset.reset'"),
        ({**bs, "subscribe": "t", "startingOffsets": "latest"}, "can't be latest for batch"),
        ({**bs, "subscribe": "t", "kafka.fetch.max.bytess": "1"}, "fetch.max.bytess"),
        ({**bs, "subscribe": "t", "subscrib": "x"}, "unknown option 'subscrib'"),
    ]
    for options, message in cases:
        start = time.monotonic()
        with pytest.raises(Exception, match=message):
            load(**options).collect()
        assert time.monotonic() - start < 30

    def save(df, **options: str):
        w = df.write.format("kgroup").mode("append")
        for k, v in options.items():
            w = w.option(k, v)
        w.save()

    good = kspark.createDataFrame([("k", "v")], "key string, value string")
    cases = [
        (good, {"topic": "t"}, "kafka.bootstrap.servers' must be specified"),
        (good, {**bs}, "topic option required"),
        (kspark.createDataFrame([("k",)], "key string"), {**bs, "topic": "t"}, "'value' not found"),
        (
            kspark.createDataFrame([(1, "v")], "key int, value string"),
            {**bs, "topic": "t"},
            "key attribute type must be a string or binary",
        ),
        (good, {**bs, "topic": "t", "kafka.partitioner": "md5"}, "kafka.partitioner"),
        (good, {**bs, "topic": "t", "topc": "t"}, "unknown option 'topc'"),
    ]
    for df, options, message in cases:
        with pytest.raises(Exception, match=message):
            save(df, **options)


def test_stream_available_now_with_max_offsets_exactly_once_across_restart(kspark, broker):
    topic = new_topic(broker, 3)
    p = kgroup.Producer({"bootstrap.servers": broker})

    def produce(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            p.produce(topic, key=b"k%d" % i, value=b"%d" % i)
        p.flush()

    produce(0, 300)
    with tempfile.TemporaryDirectory() as d:

        def run_once() -> None:
            q = (
                kspark.readStream.format("kgroup")
                .option("kafka.bootstrap.servers", broker)
                .option("subscribe", topic)
                .option("startingOffsets", "earliest")
                .option("maxOffsetsPerTrigger", "70")
                .load()
                .select("value", "partition", "offset")
                .writeStream.format("parquet")
                .option("path", f"{d}/out")
                .option("checkpointLocation", f"{d}/ck")
                .trigger(availableNow=True)
                .start()
            )
            q.awaitTermination(120)
            assert q.exception() is None
            return q

        q = run_once()
        batches = [b for b in q.recentProgress if b["numInputRows"]]
        assert len(batches) >= 300 // 70  # admission control cut the backlog
        assert all(b["numInputRows"] <= 70 for b in batches)
        produce(300, 450)
        run_once()  # restarts from the checkpoint
        p.close()
        got = kspark.read.parquet(f"{d}/out").collect()
    values = sorted(int(r.value) for r in got)
    assert values == list(range(450))  # each record exactly once
    assert len({(r.partition, r.offset) for r in got}) == 450


def test_stream_write_lands_every_row(kspark, broker):
    topic = new_topic(broker, 2)
    with tempfile.TemporaryDirectory() as d:
        src = kspark.range(500, numPartitions=2).selectExpr(
            "cast(id as string) as key", "cast(id as string) as value"
        )
        src.write.parquet(f"{d}/in")
        q = (
            kspark.readStream.schema("key string, value string")
            .parquet(f"{d}/in")
            .writeStream.format("kgroup")
            .option("kafka.bootstrap.servers", broker)
            .option("topic", topic)
            .option("checkpointLocation", f"{d}/ck")
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination(120)
        assert q.exception() is None
    rows = read(kspark, broker, topic).collect()
    assert sorted(int(r.value) for r in rows) == list(range(500))
    for r in rows:
        assert r.partition == kgroup.partition_for_key(r.key, 2)


def test_long_and_int_columns_of_the_schema():
    s = source_schema(True)
    assert [f.dataType for f in s.fields][3:5] == [IntegerType(), LongType()]
    assert s.fields[-1].dataType == HEADERS
