"""The kgroup data source: Spark's Kafka source and sink over kgroup's clients, on a local
Spark against kgroup's broker and tansu."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
import math
import tempfile
import time
import uuid

import pytest
from pyspark.sql import functions as F
from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)
from support.consumers import wait_for
from support.kgroup_broker import Wire, run_broker

import kgroup
import spark_udfs
from kgroup.protocol import ApiKey
from kgroup.protocol.records import decode_batches
from spark_udfs import datasource
from spark_udfs.datasource import ADMISSION_CONTROL, check_stream_options, source_schema
from spark_udfs.frame import repartition_by_kafka_key
from spark_udfs.options import parse_read_options

pytestmark = [pytest.mark.network, pytest.mark.slow]

_names = itertools.count()

HEADERS = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)


@pytest.fixture(scope="module")
def broker():
    with run_broker() as b:
        yield b.bootstrap_servers


@pytest.fixture(scope="module", params=["kgroup", "tansu", "kafka"])
def servers(request, broker):
    if request.param == "kgroup":
        return broker
    return request.getfixturevalue(request.param).bootstrap


@pytest.fixture(scope="module")
def kspark(spark):
    spark_udfs.register(spark)
    return spark


def new_topic(servers: str, partitions: int) -> str:
    name = f"spark-ds-{next(_names)}-{time.monotonic_ns()}"
    admin = kgroup.AdminClient({"bootstrap.servers": servers})
    try:
        # No retention by time: tests write records stamped in 1970, which the session broker's
        # retention check (every five minutes) would otherwise delete under them.
        topic = kgroup.NewTopic(name, partitions, 1, config={"retention.ms": "-1"})
        admin.create_topics([topic])[name].result(30)
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
        bytes(r.value): r  # bytearray before Spark 4.1
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
    # A start after the end fails the read, in Spark's words, rather than reading nothing:
    # by offsets, and by timestamps (the start's first record after the end's).
    for options in (
        {
            "startingOffsets": json.dumps({topic: {"0": 12, "1": -2}}),
            "endingOffsets": json.dumps({topic: {"0": 8, "1": -1}}),
        },
        {"startingTimestamp": "1030000", "endingTimestamp": "1010000"},
    ):
        with pytest.raises(Exception, match=r"Beginning offset \d+ is after the ending offset"):
            read(kspark, broker, topic, **options).collect()


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
        ({**bs, "subscribe": "t", "maxRecordsPerPartition": "0"}, "must be a positive integer"),
        ({**bs, "subscribe": "t", "maxTriggerDelay": "soon"}, "'maxTriggerDelay'"),
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
    # maxOffsetsPerTrigger needs Spark's admission control (4.2+); without it an availableNow
    # run is one batch (Spark's fallback for sources without admission control).
    limit = {"maxOffsetsPerTrigger": "70"} if ADMISSION_CONTROL else {}
    with tempfile.TemporaryDirectory() as d:

        def run_once() -> None:
            q = (
                kspark.readStream.format("kgroup")
                .option("kafka.bootstrap.servers", broker)
                .option("subscribe", topic)
                .option("startingOffsets", "earliest")
                .options(**limit)
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
        batches = [b["numInputRows"] for b in q.recentProgress if b["numInputRows"]]
        if ADMISSION_CONTROL:
            assert len(batches) >= 300 // 70  # admission control cut the backlog
            assert all(n <= 70 for n in batches)
        else:
            assert batches == [300]
        produce(300, 450)
        run_once()  # restarts from the checkpoint
        p.close()
        got = kspark.read.parquet(f"{d}/out").collect()
    values = sorted(int(r.value) for r in got)
    assert values == list(range(450))  # each record exactly once
    assert len({(r.partition, r.offset) for r in got}) == 450


@pytest.mark.skipif(ADMISSION_CONTROL, reason="Spark 4.2+ gives Python sources admission control")
def test_max_offsets_per_trigger_before_spark_4_2_fails_the_query_at_start(kspark, broker):
    topic = new_topic(broker, 1)
    with tempfile.TemporaryDirectory() as d:
        with pytest.raises(Exception, match=r"'maxOffsetsPerTrigger' needs Spark 4\.2 or later"):
            q = (
                kspark.readStream.format("kgroup")
                .option("kafka.bootstrap.servers", broker)
                .option("subscribe", topic)
                .option("maxOffsetsPerTrigger", "70")
                .load()
                .writeStream.format("parquet")
                .option("path", f"{d}/out")
                .option("checkpointLocation", f"{d}/ck")
                .trigger(availableNow=True)
                .start()
            )
            q.awaitTermination(120)
            raise AssertionError(f"the query ended with {q.exception()!r}")


def test_max_offsets_per_trigger_is_checked_against_admission_control(monkeypatch):
    # The Spark 4.0/4.1 side runs for real in `make test-spark-compat`; here, either side.
    options = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}
    options["maxOffsetsPerTrigger"] = "7"
    opts = parse_read_options(CaseInsensitiveDict(options), batch=False)  # as Spark passes them
    monkeypatch.setattr(datasource, "ADMISSION_CONTROL", False)
    with pytest.raises(ValueError, match=r"needs Spark 4\.2 or later .*; this is Spark 4\."):
        check_stream_options(opts)
    check_stream_options(dataclasses.replace(opts, max_offsets_per_trigger=None))
    monkeypatch.setattr(datasource, "ADMISSION_CONTROL", True)
    check_stream_options(opts)


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


def test_max_records_per_partition_splits_ranges_and_reads_each_record_once(kspark, servers):
    topic = new_topic(servers, 2)
    p = kgroup.Producer({"bootstrap.servers": servers})
    for i in range(35):
        p.produce(topic, value=b"%d" % i, partition=0 if i < 25 else 1)
    assert p.flush(30) == 0
    p.close()
    ends = json.dumps({topic: {"0": 25, "1": 10}})  # tansu's ListOffsets latest: see above
    df = read(kspark, servers, topic, maxRecordsPerPartition="4", endingOffsets=ends)
    assert df.rdd.getNumPartitions() == math.ceil(25 / 4) + math.ceil(10 / 4)
    tasks = (
        df.groupBy(F.spark_partition_id().alias("task"))
        .agg(
            F.count("*").alias("n"),
            F.countDistinct("partition").alias("kafka_partitions"),
            (F.max("offset") - F.min("offset") + 1).alias("span"),
        )
        .collect()
    )
    assert len(tasks) == 10
    for t in tasks:  # each task reads at most 4 consecutive offsets of one Kafka partition
        assert t.n <= 4 and t.kafka_partitions == 1 and t.span == t.n
    offs = sorted((r.partition, r.offset) for r in df.collect())
    assert offs == [(0, o) for o in range(25)] + [(1, o) for o in range(10)]


def test_group_id_options_never_make_a_group_on_the_broker(kspark, broker):
    topic = new_topic(broker, 1)
    p = kgroup.Producer({"bootstrap.servers": broker})
    for i in range(10):
        p.produce(topic, value=b"%d" % i)
    assert p.flush(30) == 0
    p.close()
    group = f"mine-{time.monotonic_ns()}"
    # Spark 3.x+ takes kafka.group.id (with a caution in its log), and groupIdPrefix only names
    # the group id it makes up; kgroup's tasks read by assign and never commit.
    assert read(kspark, broker, topic, **{"kafka.group.id": group}).count() == 10
    assert read(kspark, broker, topic, groupIdPrefix=group).count() == 10
    admin = kgroup.AdminClient({"bootstrap.servers": broker})
    try:
        listed = admin.list_consumer_groups().result(30)
    finally:
        admin.close()
    assert not [g for g in listed.valid if g.group_id.startswith(group)]


def test_offsets_by_timestamp_options(kspark, broker):
    servers = broker
    topic = new_topic(servers, 2)
    p = kgroup.Producer({"bootstrap.servers": servers})
    for i in range(20):
        # Partition 0: offset o at 1,000,000 + 2o s; partition 1: o at 1,001,000 + 2o s, up
        # to 1,009,000.
        if i < 10 or i % 2 == 0:
            p.produce(topic, value=b"%d" % i, partition=i % 2, timestamp=1_000_000 + i * 1000)
    assert p.flush(30) == 0
    p.close()
    ends = {topic: {"0": 10, "1": 5}}
    # endingOffsetsByTimestamp: partition 0 ends at its first record at or after 1,006,000,
    # partition 1 (no record that late) at its end.
    df = read(
        kspark,
        servers,
        topic,
        startingOffsetsByTimestamp=json.dumps({topic: {"0": 1_002_000, "1": 1_003_000}}),
        endingOffsetsByTimestamp=json.dumps({topic: {"0": 1_006_000, "1": 1_050_000}}),
    )
    got = sorted((r.partition, r.offset) for r in df.collect())
    assert got == [(0, 1), (0, 2), (1, 1), (1, 2), (1, 3), (1, 4)]
    # A starting timestamp after partition 1's last record: an error by default, the latest
    # offset with startingOffsetsByTimestampStrategy=latest (Spark's).
    late = json.dumps({topic: {"0": 1_012_000, "1": 1_012_000}})
    with pytest.raises(Exception, match="No offset matched"):
        read(kspark, servers, topic, startingOffsetsByTimestamp=late).collect()
    df = read(
        kspark,
        servers,
        topic,
        startingOffsetsByTimestamp=late,
        startingOffsetsByTimestampStrategy="latest",
        endingOffsets=json.dumps(ends),
    )
    got = sorted((r.partition, r.offset) for r in df.collect())
    assert got == [(0, o) for o in range(6, 10)]


def _progress_offsets(value) -> int:
    """The sum of a progress's source offsets (JSON text or None)."""
    if not value:
        return 0
    obj = json.loads(value) if isinstance(value, str) else value
    return sum(int(o) for parts in obj.values() for o in parts.values())


def test_stream_min_offsets_per_trigger_holds_batches_back(kspark, broker):
    topic = new_topic(broker, 2)
    p = kgroup.Producer({"bootstrap.servers": broker})

    def produce(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            p.produce(topic, value=b"%d" % i, partition=i % 2)
        assert p.flush(30) == 0

    def start(d: str, name: str, **options: str):
        r = (
            kspark.readStream.format("kgroup")
            .option("kafka.bootstrap.servers", broker)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
        )
        for k, v in options.items():
            r = r.option(k, v)
        return (
            r.load()
            .select("value")
            .writeStream.format("memory")
            .queryName(name)
            .option("checkpointLocation", f"{d}/{name}")
            .start()
        )

    # Rows of each batch with data, by query and batch id, as polled: recentProgress keeps the
    # last 100 triggers only, a second or two of triggers without data.
    seen: dict[tuple[str, int], int] = {}

    def batches(q) -> list[int]:
        for b in q.recentProgress:
            if b["numInputRows"]:
                seen[(q.name, b["batchId"])] = b["numInputRows"]
        return [n for (name, _), n in sorted(seen.items()) if name == q.name]

    def saw(q, n: int, since: float) -> bool:
        if ADMISSION_CONTROL:  # Spark 4.2+: the progress shows the latest offsets the reader saw
            return any(
                _progress_offsets(b["sources"][0]["latestOffset"]) >= n for b in q.recentProgress
            )
        # Spark 4.0/4.1 show only what the reader admitted: a trigger that began after the
        # records were written saw them.
        return any(
            dt.datetime.fromisoformat(b["timestamp"]).timestamp() > since for b in q.recentProgress
        )

    # Progress for triggers without data at once (Spark's default reports them every 10 s).
    kspark.conf.set("spark.sql.streaming.noDataProgressEventInterval", "0")
    try:
        with tempfile.TemporaryDirectory() as d:
            q = start(d, "min_offsets", minOffsetsPerTrigger="50", maxTriggerDelay="10m")
            try:
                # The first trigger always goes ahead (Spark's lastTriggerMillis starts at 0).
                wait_for(lambda: bool(q.recentProgress), 60, "a first trigger", lambda: q.status)
                produce(0, 20)
                produced = time.time()
                # A trigger saw the 20 records and held them back: fewer than 50.
                wait_for(
                    lambda: saw(q, 20, produced),
                    60,
                    "a trigger that saw 20 records",
                    lambda: q.lastProgress,
                )
                assert batches(q) == []
                produce(20, 50)
                wait_for(lambda: sum(batches(q)) == 50, 60, "50 rows", lambda: q.recentProgress)
                assert batches(q) == [50]  # one batch, once 50 were there
                assert q.exception() is None
            finally:
                q.stop()
            # maxTriggerDelay: 5 records, far under minOffsetsPerTrigger, go after 1.5 s.
            t0 = time.monotonic()
            q = start(d, "max_delay", minOffsetsPerTrigger="1000", maxTriggerDelay="1500ms")
            try:
                wait_for(lambda: sum(batches(q)) == 50, 60, "the backlog", lambda: q.recentProgress)
                produce(50, 55)
                wait_for(lambda: sum(batches(q)) == 55, 60, "5 more rows", lambda: q.recentProgress)
                # The first trigger reads the backlog; the 5 come no sooner than the delay after.
                assert batches(q) == [50, 5]
                assert time.monotonic() - t0 >= 1.5
            finally:
                q.stop()
            rows = kspark.sql("select value from max_delay").collect()
            assert sorted(int(r.value) for r in rows) == list(range(55))
    finally:
        kspark.conf.unset("spark.sql.streaming.noDataProgressEventInterval")
        p.close()


def stored_batches(servers: str, topic: str, partition: int) -> list:
    """Every record batch of one partition as the broker stores it, fetched raw (Fetch v11)."""
    out: list = []
    offset = 0
    with Wire(servers) as w:
        while True:
            part = {"partition": partition, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
            body = {
                "replica_id": -1,
                "max_wait_ms": 500,  # tansu answers nothing with 0; data answers at once
                "min_bytes": 1,
                "topics": [{"topic": topic, "partitions": [part]}],
            }
            f = w.request(ApiKey.FETCH, 11, body).body.responses[0].partitions[0]
            assert f.error_code == 0, f
            batches = decode_batches(f.records) if f.records else []
            if not batches:
                return out
            out.extend(batches)
            offset = batches[-1].base_offset + batches[-1].last_offset_delta + 1
            if offset >= f.high_watermark:
                return out


def test_repartition_by_kafka_key_then_write_gives_one_kafka_partition_per_task(kspark, servers):
    # Each Spark task has its own idempotent producer, so the producer id of a stored batch
    # names the task that wrote it: every Kafka partition holds one producer id, and no
    # producer id is in two partitions.
    n_parts, n = 4, 4000
    topic = new_topic(servers, n_parts)
    df = repartition_by_kafka_key(keyed_frame(kspark, n, parts=3), "key", n_parts)
    with tempfile.TemporaryDirectory() as d:
        df.write.format("kgroup").mode("append").option("kafka.bootstrap.servers", servers).option(
            "topic", topic
        ).option("kgroup.commitReport", f"{d}/report.json").save()
        with open(f"{d}/report.json") as f:
            report = json.load(f)
    pids: dict[int, set[int]] = {}
    counts: dict[int, int] = {}
    for p in range(n_parts):
        batches = stored_batches(servers, topic, p)
        pids[p] = {b.producer_id for b in batches}
        counts[p] = sum(len(b.records) for b in batches)
        assert all(
            kgroup.partition_for_key(r.key, n_parts) == p for b in batches for r in b.records
        )
    assert sum(counts.values()) == n
    assert all(len(ids) == 1 and -1 not in ids for ids in pids.values()), pids
    assert len(set().union(*pids.values())) == n_parts, pids
    # The commit report says the same per task: task i wrote Kafka partition i only.
    tasks = report["tasks"]
    assert len(tasks) == n_parts
    for i, rows in enumerate(tasks):
        assert rows == {topic: {str(i): counts[i]}}


def test_transactional_write_and_read_committed(kspark, broker):
    """kgroup.transactionalIdPrefix: each task's rows in one transaction, committed when the
    task ends; a task that fails leaves nothing a read_committed reader sees, and its retry
    (the same transactional id) writes its rows once. kafka.isolation.level=read_committed
    reads only committed rows and stops at an open transaction."""
    topic = new_topic(broker, 2)
    df = kspark.range(0, 200, numPartitions=2).select(
        F.col("id").cast("string").alias("key"), F.col("id").cast("string").alias("value")
    )
    prefix = f"spark-txn-{time.monotonic_ns()}"
    (
        df.write.format("kgroup")
        .option("kafka.bootstrap.servers", broker)
        .option("topic", topic)
        .option("kgroup.transactionalIdPrefix", prefix)
        .mode("append")
        .save()
    )

    # A job whose task fails after it produced: its transaction is aborted.
    def boom(it):
        for row in it:
            if row.value == "9":
                raise RuntimeError("task failed on purpose")
            yield row

    failing = kspark.createDataFrame(df.rdd.mapPartitions(boom), df.schema).coalesce(1)
    with pytest.raises(Exception, match="task failed on purpose"):
        (
            failing.write.format("kgroup")
            .option("kafka.bootstrap.servers", broker)
            .option("topic", topic)
            .option("kgroup.transactionalIdPrefix", prefix + "-f")
            .mode("append")
            .save()
        )
    # An open transaction in the way: read_committed stops before it.
    p = kgroup.Producer({"bootstrap.servers": broker, "transactional.id": prefix + "-open"})
    p.init_transactions()
    p.begin_transaction()
    p.produce(topic, b"open", partition=0)
    p.flush()
    try:
        committed = (
            read(kspark, broker, topic, **{"kafka.isolation.level": "read_committed"})
            .select(F.col("value").cast("string").alias("v"))
            .collect()
        )
        everything = read(kspark, broker, topic).select(F.col("value").cast("string")).collect()
    finally:
        p.abort_transaction()
        p.close()
    assert sorted(int(r.v) for r in committed) == list(range(200))
    # read_uncommitted sees the failed task's rows and the open one too.
    assert len(everything) > 200


def test_a_pattern_that_matches_no_topic_reads_nothing(kspark, broker):
    # Spark's planner hands a reader that planned no partition one InputPartition(None).
    df = (
        kspark.read.format("kgroup")
        .option("kafka.bootstrap.servers", broker)
        .option("subscribePattern", f"nothing-{uuid.uuid4().hex}-.*")
        .load()
    )
    assert df.collect() == []
