"""The kgroup data source's options without a Spark session: offset ranges split as Spark's
KafkaOffsetRangeCalculator (minPartitions, maxRecordsPerPartition), minOffsetsPerTrigger's
hold-back clock, the streaming reader's admission (against a planner that answers from a dict),
the driver's retries (fetchOffset.*), and the group id the tasks' consumers carry."""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_udfs.datasource import (
    ADMISSION_CONTROL,
    KafkaStreamReader,
    TriggerDelay,
    consumer_config,
    offsets_json,
    offsets_of,
)
from spark_udfs.offsets import Planner, Range, split_ranges
from spark_udfs.options import CUSTOM_GROUP_ID_WARNING, ReadOptions, time_ms
from spark_udfs.options import parse_read_options as _parse

BS = {"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t"}


def parse_read_options(options: dict[str, str], batch: bool | None) -> ReadOptions:
    """As Spark hands the options over: keys lower-cased."""
    return _parse({k.lower(): v for k, v in options.items()}, batch=batch)


ranges_st = st.lists(
    st.tuples(st.integers(0, 1000), st.integers(0, 300)), min_size=1, max_size=8
).map(lambda xs: [Range("t", i, s, s + n) for i, (s, n) in enumerate(xs)])


def covered(out: list[Range]) -> dict[int, list[int]]:
    got: dict[int, list[int]] = {}
    for r in out:
        assert r.size > 0
        got.setdefault(r.partition, []).extend(range(r.start, r.end))
    return got


@settings(max_examples=300, deadline=None)
@given(ranges_st, st.integers(1, 50))
def test_max_records_per_partition_gives_ceil_parts_of_at_most_n(ranges, n) -> None:
    out = split_ranges(ranges, None, n)
    for r in ranges:
        mine = [p for p in out if p.partition == r.partition]
        assert len(mine) == math.ceil(r.size / n)
        assert all(p.size <= n for p in mine)
        # Even parts, as Spark's integer division cuts them.
        assert not mine or max(p.size for p in mine) - min(p.size for p in mine) <= 1
    assert covered(out) == {r.partition: list(range(r.start, r.end)) for r in ranges if r.size}


@settings(max_examples=300, deadline=None)
@given(ranges_st, st.none() | st.integers(1, 60), st.none() | st.integers(1, 60))
def test_split_ranges_reads_every_offset_once_in_order(ranges, min_parts, max_records) -> None:
    out = split_ranges(ranges, min_parts, max_records)
    assert covered(out) == {r.partition: list(range(r.start, r.end)) for r in ranges if r.size}
    if max_records is not None:
        assert all(p.size <= max_records for p in out)
    if min_parts is not None:
        # minPartitions only adds parts: never fewer than without it.
        assert len(out) >= len(split_ranges(ranges, None, max_records))


def test_min_partitions_leaves_small_ranges_whole() -> None:
    # SPARK-36576: a range whose share is one part stays whole and the parts left go to the
    # large ranges in proportion. 1000 records beside four of 10, minPartitions 8: the small
    # ones take a part each, the large one the four left (with the old proportional split it
    # would have taken round(1000/1040*8) = 8).
    small = [Range("t", p, 0, 10) for p in range(1, 5)]
    out = split_ranges([Range("t", 0, 0, 1000), *small], 8)
    assert [r for r in out if r.partition == 0] == [
        Range("t", 0, 0, 250),
        Range("t", 0, 250, 500),
        Range("t", 0, 500, 750),
        Range("t", 0, 750, 1000),
    ]
    assert [r for r in out if r.partition != 0] == small


def test_max_records_then_min_partitions() -> None:
    # maxRecordsPerPartition cuts first: 25 records in 7 parts of at most 4, 10 in 3.
    ranges = [Range("t", 0, 0, 25), Range("t", 1, 100, 110)]
    out = split_ranges(ranges, None, 4)
    assert [(r.partition, r.start, r.end) for r in out] == [
        (0, 0, 3),
        (0, 3, 6),
        (0, 6, 9),
        (0, 9, 13),
        (0, 13, 17),
        (0, 17, 21),
        (0, 21, 25),
        (1, 100, 103),
        (1, 103, 106),
        (1, 106, 110),
    ]
    # minPartitions is then a hint over those ten: 12 gives each a share of one part, so
    # nothing more is split; 40 splits them again.
    assert split_ranges(ranges, 12, 4) == out
    assert len(split_ranges(ranges, 40, 4)) >= 30


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000.0

    def __call__(self) -> float:
        return self.ms


def test_trigger_delay_holds_until_enough_offsets_or_the_delay() -> None:
    clock = Clock()
    gate = TriggerDelay(100, 60_000, clock)
    k = ("t", 0)
    # Spark's lastTriggerMillis starts at 0: the first trigger goes ahead.
    assert not gate.holds({k: 0}, {k: 5})
    clock.ms += 1000
    assert gate.holds({k: 5}, {k: 50})
    clock.ms += 1000
    assert not gate.holds({k: 5}, {k: 105})  # 100 new offsets: enough, and the clock restarts
    clock.ms += 59_999
    assert gate.holds({k: 105}, {k: 106})
    clock.ms += 1
    assert not gate.holds({k: 105}, {k: 106})  # maxTriggerDelay passed
    # A partition new since the start counts from offset 0, as Spark counts it.
    clock.ms += 1
    assert not gate.holds({k: 106}, {k: 106, ("t", 1): 100})


class FakePlanner:
    """Answers the stream reader's questions from ``self.ends`` (log start 0)."""

    def __init__(self, ends: dict[tuple[str, int], int]) -> None:
        self.ends = ends

    def partitions(self) -> list[tuple[str, int]]:
        return sorted(self.ends)

    def watermarks(self, keys: Any) -> dict[tuple[str, int], tuple[int, int]]:
        return {k: (0, self.ends[k]) for k in keys}

    def close(self) -> None:
        pass


def stream_reader(ends: dict[tuple[str, int], int], **options: str) -> KafkaStreamReader:
    reader = KafkaStreamReader(parse_read_options({**BS, **options}, batch=False))
    reader._planner = FakePlanner(ends)  # type: ignore[assignment]
    return reader


def test_stream_reader_admission_min_then_max() -> None:
    pytest.importorskip("pyspark.sql.streaming.datasource")
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMinRows

    k0, k1 = ("t", 0), ("t", 1)
    ends = {k0: 0, k1: 0}
    r = stream_reader(ends, minOffsetsPerTrigger="50", maxOffsetsPerTrigger="80")
    clock = Clock()
    assert r._delay is not None
    r._delay.clock = clock
    limit = r.getDefaultReadLimit()
    assert limit == ReadMinRows(50)
    start = offsets_json({k0: 0, k1: 0})
    assert offsets_of(r.latestOffset(start, limit)) == {k0: 0, k1: 0}  # first trigger
    ends.update({k0: 20, k1: 10})
    clock.ms += 10
    assert offsets_of(r.latestOffset(start, limit)) == {k0: 0, k1: 0}  # 30 < 50: held
    assert r.reportLatestOffset() == offsets_json({k0: 20, k1: 10})
    ends.update({k0: 100, k1: 100})
    clock.ms += 10
    # 200 available: admitted, then maxOffsetsPerTrigger shares 80 in proportion.
    assert offsets_of(r.latestOffset(start, limit)) == {k0: 40, k1: 40}
    # ReadAllAvailable (Trigger.Once) lifts both limits.
    ends.update({k0: 101, k1: 100})
    clock.ms += 10
    nxt = offsets_json({k0: 100, k1: 100})
    assert offsets_of(r.latestOffset(nxt, limit)) == {k0: 100, k1: 100}
    assert offsets_of(r.latestOffset(nxt, ReadAllAvailable())) == {k0: 101, k1: 100}


def test_stream_reader_without_admission_control_holds_triggers_itself() -> None:
    # Spark 4.0/4.1 call latestOffset() alone: the batch starts where the reader's last answer
    # ended, and a run's first trigger (no answer before it) goes ahead with all there is.
    k0, k1 = ("t", 0), ("t", 1)
    ends = {k0: 30, k1: 10}
    r = stream_reader(ends, minOffsetsPerTrigger="50", maxTriggerDelay="1m")
    clock = Clock()
    assert r._delay is not None
    r._delay.clock = clock
    assert offsets_of(r.latestOffset()) == {k0: 30, k1: 10}  # first trigger: the backlog
    # The first trigger started maxTriggerDelay's clock: 20 new offsets (< 50) are held back.
    ends.update({k0: 40, k1: 20})
    clock.ms += 10
    assert offsets_of(r.latestOffset()) == {k0: 30, k1: 10}
    ends.update({k0: 55, k1: 35})
    clock.ms += 10
    assert offsets_of(r.latestOffset()) == {k0: 55, k1: 35}  # 50 new: admitted
    ends.update({k0: 60, k1: 35})
    clock.ms += 10
    assert offsets_of(r.latestOffset()) == {k0: 55, k1: 35}  # 5 new: held
    clock.ms += 60_000
    assert offsets_of(r.latestOffset()) == {k0: 60, k1: 35}  # maxTriggerDelay passed
    # A restart is a new reader: its first trigger goes ahead, whatever the backlog.
    ends.update({k0: 61, k1: 36})
    r = stream_reader(ends, minOffsetsPerTrigger="50", maxTriggerDelay="1m")
    assert offsets_of(r.latestOffset()) == {k0: 61, k1: 36}


@pytest.mark.skipif(
    not ADMISSION_CONTROL, reason="Spark 4.0/4.1 refuse maxOffsetsPerTrigger (no admission control)"
)
def test_stream_reader_available_now_is_never_held_back() -> None:
    k = ("t", 0)
    r = stream_reader({k: 25}, minOffsetsPerTrigger="10", maxOffsetsPerTrigger="10")
    r.prepareForTriggerAvailableNow()
    r._planner.ends[k] = 500  # type: ignore[attr-defined]
    limit = r.getDefaultReadLimit()
    ends = []
    start = 0
    for _ in range(4):
        start = offsets_of(r.latestOffset(offsets_json({k: start}), limit))[k]
        ends.append(start)
    # The last 5 records (under minOffsetsPerTrigger) are read, not held back for ever.
    assert ends == [10, 20, 25, 25]


class FlakyAdmin:
    def __init__(self, log: list[str], fail: bool) -> None:
        self.log, self.fail = log, fail

    def watermarks(self, keys: Any, timeout: float, isolation_level: int = 0) -> dict:
        self.log.append("ask")
        if self.fail:
            raise ConnectionError("broker down")

        class TP:
            topic, partition = "t", 0

        return {TP(): (0, 7)}

    def close(self) -> None:
        self.log.append("close")


def test_planner_retries_fetch_offset_num_retries_times() -> None:
    log: list[str] = []
    made = iter([True, True, False])
    opts = parse_read_options(
        {**BS, "fetchOffset.numRetries": "3", "fetchOffset.retryIntervalMs": "30"}, batch=True
    )
    planner = Planner(opts, connect=lambda: FlakyAdmin(log, next(made)))
    t0 = time.monotonic()
    assert planner.watermarks([("t", 0)]) == {("t", 0): (0, 7)}
    assert time.monotonic() - t0 >= 0.06  # two waits of retryIntervalMs
    # A new AdminClient after each failure.
    assert log == ["ask", "close", "ask", "close", "ask"]

    log.clear()
    planner = Planner(
        parse_read_options(
            {**BS, "fetchOffset.numRetries": "2", "fetchOffset.retryIntervalMs": "0"},
            batch=True,
        ),
        connect=lambda: FlakyAdmin(log, True),
    )
    with pytest.raises(ConnectionError, match="broker down"):
        planner.watermarks([("t", 0)])
    assert log.count("ask") == 2


def test_group_id_of_the_tasks_consumers(caplog: pytest.LogCaptureFixture) -> None:
    batch = parse_read_options(BS, batch=True)
    stream = parse_read_options(BS, batch=False)
    assert batch.group_id.startswith("spark-kafka-relation-")
    assert stream.group_id.startswith("spark-kafka-source-")
    assert batch.group_id.endswith("-executor")
    assert parse_read_options(BS, batch=True).group_id != batch.group_id  # one per query
    mine = parse_read_options({**BS, "groupIdPrefix": "team-a"}, batch=True)
    assert mine.group_id.startswith("team-a-")
    config = consumer_config(mine)
    assert config["group.id"] == mine.group_id and config["enable.auto.commit"] == "false"
    # kafka.group.id is allowed, as Spark 3.x+ allows it, with Spark's caution in the log.
    with caplog.at_level(logging.WARNING, logger="spark_udfs.options"):
        given_id = parse_read_options(
            {**BS, "kafka.group.id": "g1", "groupIdPrefix": "x"}, batch=True
        )
    assert given_id.group_id == "g1" and consumer_config(given_id)["group.id"] == "g1"
    assert CUSTOM_GROUP_ID_WARNING in caplog.text
    assert "groupIdPrefix will be ignored" in caplog.text


def test_option_values_checked_as_spark_checks_them(caplog: pytest.LogCaptureFixture) -> None:
    assert time_ms("15m", "maxTriggerDelay") == 900_000
    assert time_ms("500", "maxTriggerDelay") == 500
    assert time_ms(" 2s ", "maxTriggerDelay") == 2000
    assert time_ms("1h", "maxTriggerDelay") == 3_600_000
    opts = parse_read_options({**BS, "minOffsetsPerTrigger": "5"}, batch=False)
    assert (opts.min_offsets_per_trigger, opts.max_trigger_delay_ms) == (5, 900_000)
    bad = [
        ({"maxTriggerDelay": "soon"}, "'maxTriggerDelay': 'soon' is not a duration"),
        ({"maxTriggerDelay": "5 parsecs"}, "is not a duration"),
        (
            {"minOffsetsPerTrigger": "10", "maxOffsetsPerTrigger": "5"},
            r"minOffsetPerTrigger\(10\) is higher than the maxOffsetsPerTrigger\(5\)",
        ),
        ({"maxRecordsPerPartition": "0"}, "'maxrecordsperpartition', must be a positive"),
        ({"fetchOffset.numRetries": "-1"}, "'fetchoffset.numretries', must be a positive"),
        ({"fetchOffset.retryIntervalMs": "x"}, "'fetchOffset.retryIntervalMs'"),
    ]
    for options, message in bad:
        with pytest.raises(ValueError, match=message):
            parse_read_options({**BS, **options}, batch=False)
    with caplog.at_level(logging.WARNING, logger="spark_udfs.options"):
        parse_read_options({**BS, "maxTriggerDelay": "1m", "minOffsetsPerTrigger": "3"}, True)
    assert "minOffsetsPerTrigger option ignored in batch queries" in caplog.text
    assert "maxTriggerDelay option ignored in batch queries" in caplog.text


def test_security_options_reach_the_driver_and_the_tasks_unchanged() -> None:
    # Spark's Kafka source hands every kafka.* option to both sides; librdkafka's alias
    # (sasl.mechanisms) and Java's names (sasl.jaas.config, ssl.truststore.*) alike.
    security = {
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanisms": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
        'required username="u" password="p";',
        "kafka.ssl.truststore.type": "PEM",
        "kafka.ssl.truststore.location": "/etc/ca.pem",
    }
    opts = parse_read_options({**BS, **security}, batch=True)
    expected = {k[len("kafka.") :]: v for k, v in security.items()}
    assert expected.items() <= opts.admin_config().items()
    assert expected.items() <= consumer_config(opts).items()
