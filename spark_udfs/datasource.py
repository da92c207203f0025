"""datasource: Spark reads and writes Kafka through kgroup, with nothing but pip.

``spark.read.format("kgroup")`` and ``df.write.format("kgroup")`` take the options and give the
schemas of Spark's own Kafka source and sink (Structured Streaming + Kafka Integration Guide);
the format is ``kgroup`` because Spark's JVM reserves ``kafka``. Register it with
:func:`spark_udfs.register` (or ``spark.dataSource.register(KafkaDataSource)``); where Spark
looks for installed ``pyspark_*`` modules, ``pyspark_kgroup`` makes it found with no call.

The driver plans offset ranges with kgroup's AdminClient (:mod:`spark_udfs.offsets`); each
Spark task reads one range with kgroup's Consumer (``assign`` + ``consume_arrow``) and yields
Arrow record batches, cut at the range's end: no Python object per record. Writes go through
one idempotent kgroup Producer per task (``produce_arrow``): rows without a partition land
where Java's producer puts their key (murmur2), or librdkafka's with ``kafka.partitioner``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from spark_udfs.offsets import Planner, Range, split_ranges
from spark_udfs.options import (
    ReadOptions,
    WriteOptions,
    parse_read_options,
    parse_write_options,
)

__all__ = [
    "FORMAT",
    "KafkaDataSource",
    "KafkaReader",
    "KafkaStreamReader",
    "KafkaWriter",
    "RangePartition",
    "WriteReport",
    "read_range",
    "source_schema",
]

FORMAT = "kgroup"

HEADERS_TYPE = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)

# The Arrow form of Spark's Kafka schema, as Spark's Arrow-to-row conversion wants it:
# TimestampType is microseconds in UTC.
_ARROW_HEADERS = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))
_ARROW_FIELDS = [
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", pa.timestamp("us", tz="UTC")),
    pa.field("timestampType", pa.int32()),
]


def source_schema(include_headers: bool = False) -> StructType:
    """Spark's Kafka source schema (and ``headers`` with includeHeaders)."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", HEADERS_TYPE))
    return StructType(fields)


def _arrow_schema(include_headers: bool) -> pa.Schema:
    fields = list(_ARROW_FIELDS)
    if include_headers:
        fields.append(pa.field("headers", _ARROW_HEADERS))
    return pa.schema(fields)


class RangePartition(InputPartition):
    """One Spark input partition: offsets ``[start, end)`` of one topic partition."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end = topic, partition, start, end


def _to_spark(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """consume_arrow's batch in Spark's types: timestamps as µs UTC, headers kept or not."""
    cols = []
    for f in schema:
        col = batch.column(f.name)
        if not col.type.equals(f.type):
            col = col.cast(f.type)
        cols.append(col)
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def read_range(
    opts: ReadOptions,
    topic: str,
    partition: int,
    start: int,
    end: int,
    *,
    max_records: int = 50_000,
) -> Iterator[pa.RecordBatch]:
    """The records of ``[start, end)`` of one partition as Arrow batches of Spark's Kafka
    schema, read by one kgroup Consumer. Offsets missing inside the range (compaction,
    transaction markers) are skipped; records before ``start`` that retention removed fail
    with failOnDataLoss, as Spark's source does."""
    if end <= start:
        return
    from kgroup import Consumer, TopicPartition

    schema = _arrow_schema(opts.include_headers)
    config: dict[str, Any] = dict(opts.kafka)
    config.setdefault("enable.partition.eof", "false")
    consumer = Consumer(config)
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        position = start
        deadline = time.monotonic() + opts.poll_timeout_ms / 1000
        first = True
        while position < end:
            batch = consumer.consume_arrow(min(max_records, end - position), 1.0)
            n = batch.num_rows
            if n == 0:
                # Nothing came: done when the consumer's position passed the end (a gap of
                # compacted records or markers), else keep waiting until pollTimeoutMs.
                pos = consumer.position([TopicPartition(topic, partition)])[0].offset
                if pos >= end:
                    return
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"Cannot fetch record for offset {position} in "
                        f"{opts.poll_timeout_ms} milliseconds ({topic}-{partition})"
                    )
                continue
            deadline = time.monotonic() + opts.poll_timeout_ms / 1000
            offsets = batch.column("offset")
            first_offset = offsets[0].as_py()
            if first and first_offset > start and opts.fail_on_data_loss:
                # The records asked for are gone: the log now starts later than the plan.
                low = _log_start(opts, topic, partition)
                if low > start:
                    raise RuntimeError(
                        f"Cannot fetch offset {start} ({topic}-{partition}): the log starts at "
                        f"{low}. Some data may have been lost because they are not available "
                        f'in Kafka any more; set the source option "failOnDataLoss" to '
                        f'"false" to skip it.'
                    )
            first = False
            last = offsets[n - 1].as_py()
            if last >= end:
                import pyarrow.compute as pc

                keep = int(pc.sum(pc.less(offsets, end)).as_py() or 0)
                batch = batch.slice(0, keep)
                if keep:
                    yield _to_spark(batch, schema)
                return
            yield _to_spark(batch, schema)
            position = last + 1
    finally:
        consumer.close()


def _log_start(opts: ReadOptions, topic: str, partition: int) -> int:
    with Planner(opts) as planner:
        return planner.watermarks([(topic, partition)])[(topic, partition)][0]


class KafkaReader(DataSourceReader):
    """The batch reader: offset ranges planned on the driver, one per Spark partition."""

    def __init__(self, opts: ReadOptions) -> None:
        self.opts = opts
        with Planner(opts) as planner:
            ranges = planner.batch_ranges()
        self.ranges = split_ranges(ranges, opts.min_partitions)

    def partitions(self) -> Sequence[InputPartition]:
        return [RangePartition(r.topic, r.partition, r.start, r.end) for r in self.ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        assert isinstance(partition, RangePartition)
        p = partition
        yield from read_range(self.opts, p.topic, p.partition, p.start, p.end)


def offsets_json(offsets: dict[tuple[str, int], int]) -> dict[str, dict[str, int]]:
    """Spark's checkpoint form of offsets: ``{"topic": {"partition": offset}}``."""
    out: dict[str, dict[str, int]] = {}
    for (t, p), off in sorted(offsets.items()):
        out.setdefault(t, {})[str(p)] = off
    return out


def offsets_of(obj: dict[str, Any]) -> dict[tuple[str, int], int]:
    """The inverse of :func:`offsets_json` (also taking a JSON string)."""
    if isinstance(obj, str):
        obj = json.loads(obj)
    return {(t, int(p)): int(o) for t, ps in obj.items() for p, o in ps.items()}


class KafkaStreamReader(DataSourceStreamReader):
    """The streaming reader: offsets as Spark's Kafka source checkpoints them; placeholder,
    filled in below."""

    def __init__(self, opts: ReadOptions) -> None:
        self.opts = opts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        assert isinstance(partition, RangePartition)
        p = partition
        yield from read_range(self.opts, p.topic, p.partition, p.start, p.end)


@dataclasses.dataclass
class WriteReport(WriterCommitMessage):
    """One task's rows written, per (topic, partition)."""

    rows: dict[tuple[str, int], int]


class KafkaWriter(DataSourceArrowWriter):
    """The batch writer (filled in below)."""

    def __init__(self, opts: WriteOptions, schema: StructType) -> None:
        self.opts = opts
        self.schema = schema

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteReport:  # type: ignore[override]
        raise NotImplementedError


class KafkaDataSource(DataSource):
    """The ``kgroup`` data source: Spark's Kafka source and sink over kgroup's clients."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        # Spark asks for the schema in load(): bad options fail there, before any job.
        return source_schema(parse_read_options(self.options, batch=None).include_headers)

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaReader(parse_read_options(self.options, batch=True))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(parse_read_options(self.options, batch=False))

    def writer(self, schema: StructType, overwrite: bool) -> KafkaWriter:
        return KafkaWriter(parse_write_options(self.options), schema)
