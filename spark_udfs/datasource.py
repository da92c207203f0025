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
import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

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
    "ADMISSION_CONTROL",
    "FORMAT",
    "KafkaDataSource",
    "KafkaReader",
    "KafkaStreamReader",
    "KafkaStreamWriter",
    "KafkaWriter",
    "RangePartition",
    "WriteReport",
    "check_stream_options",
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


def read_partition(opts: ReadOptions, partition: InputPartition) -> Iterator[pa.RecordBatch]:
    """The records of one planned partition. A plan with no range (a pattern that matches no
    topic) reaches here as Spark's own ``InputPartition(None)``, which PySpark substitutes for
    an empty list: it reads nothing. A range is read by its fields rather than its class, so
    that a RangePartition pickled by value (a data source class registered from a reloaded
    module) reads as well."""
    if getattr(partition, "value", None) is None:
        return
    p = cast(RangePartition, partition)
    yield from read_range(opts, p.topic, p.partition, p.start, p.end)


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
    consumer = Consumer(consumer_config(opts))
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


def consumer_config(opts: ReadOptions) -> dict[str, Any]:
    """A task's Consumer settings: the ``kafka.*`` options, ``group.id`` as
    :class:`~spark_udfs.options.ReadOptions` says, and never a commit (Spark's
    kafkaParamsForExecutors). The consumer reads by ``assign`` from planned offsets, so the
    group is never joined nor its offsets fetched."""
    config: dict[str, Any] = dict(opts.kafka)
    config.setdefault("enable.partition.eof", "false")
    config["group.id"] = opts.group_id
    config["enable.auto.commit"] = "false"
    return config


def _log_start(opts: ReadOptions, topic: str, partition: int) -> int:
    with Planner(opts) as planner:
        return planner.watermarks([(topic, partition)])[(topic, partition)][0]


class KafkaReader(DataSourceReader):
    """The batch reader: offset ranges planned on the driver, one per Spark partition."""

    def __init__(self, opts: ReadOptions) -> None:
        self.opts = opts
        with Planner(opts) as planner:
            ranges = planner.batch_ranges()
        self.ranges = split_ranges(ranges, opts.min_partitions, opts.max_records_per_partition)

    def partitions(self) -> Sequence[InputPartition]:
        return [RangePartition(r.topic, r.partition, r.start, r.end) for r in self.ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        yield from read_partition(self.opts, partition)


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


try:  # Spark 4.2+: admission control and Trigger.AvailableNow for Python sources
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadLimit,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )
except ImportError:  # Spark 4.0/4.1: latestOffset() takes no arguments, every trigger reads all
    ReadAllAvailable = ReadLimit = ReadMaxRows = None  # type: ignore[assignment,misc]

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stand-in so that the reader's bases stay the same on older Sparks."""


try:
    from pyspark.sql.streaming.datasource import ReadMinRows
except ImportError:
    ReadMinRows = None  # type: ignore[assignment,misc]


class TriggerDelay:
    """Spark's KafkaMicroBatchStream.delayBatch, for ``minOffsetsPerTrigger`` and
    ``maxTriggerDelay``: a trigger is held back while fewer than ``min_offsets`` new offsets
    (summed over partitions, a new partition counted from 0) are available, until
    ``max_delay_ms`` passed since the last trigger that went ahead; the first trigger goes
    ahead. ``clock`` gives ms on a monotonic clock. Not thread-safe (Spark asks one trigger at a
    time)."""

    def __init__(
        self, min_offsets: int, max_delay_ms: int, clock: Callable[[], float] | None = None
    ) -> None:
        self.min_offsets, self.max_delay_ms = min_offsets, max_delay_ms
        self.clock = clock or (lambda: time.monotonic() * 1000)
        self.last: float | None = None

    def holds(self, start: dict[tuple[str, int], int], latest: dict[tuple[str, int], int]) -> bool:
        now = self.clock()
        if self.last is None or now - self.last >= self.max_delay_ms:
            self.last = now
            return False
        if sum(off - start.get(k, 0) for k, off in latest.items()) < self.min_offsets:
            return True
        self.last = now
        return False

    def went(self) -> None:
        """went records a trigger that went ahead without asking :meth:`holds`: the delay
        counts from it."""
        self.last = self.clock()


# ADMISSION_CONTROL is true where Spark gives Python stream readers its admission control
# (latestOffset(start, limit), Spark 4.2+): only there can maxOffsetsPerTrigger work.
ADMISSION_CONTROL = ReadMaxRows is not None


def check_stream_options(opts: ReadOptions) -> None:
    """check_stream_options refuses what this Spark cannot do for a streaming read:
    maxOffsetsPerTrigger before Spark 4.2. Spark 4.0/4.1 ask a Python reader for its latest
    offsets without the batch's start, so a reader cannot cap a run's first batch (a restart's
    backlog), and under trigger(availableNow=True) it is asked once and runs one batch."""
    if opts.max_offsets_per_trigger is not None and not ADMISSION_CONTROL:
        import pyspark

        raise ValueError(
            "option 'maxOffsetsPerTrigger' needs Spark 4.2 or later (admission control for "
            f"Python data sources); this is Spark {pyspark.__version__}: leave it out, and "
            "each trigger reads every available offset"
        )


def rate_limit(
    start: dict[tuple[str, int], int], latest: dict[tuple[str, int], int], limit: int
) -> dict[tuple[str, int], int]:
    """Spark's KafkaMicroBatchStream.rateLimit: ``limit`` offsets shared among partitions in
    proportion to what each has available (a share below one rounds up, others down)."""
    sizes = {k: latest[k] - start.get(k, latest[k]) for k in latest}
    total = sum(v for v in sizes.values() if v > 0)
    if total <= limit:
        return dict(latest)
    out = {}
    for k, end in latest.items():
        begin = start.get(k, end)
        size = sizes[k]
        if size <= 0:
            out[k] = end
            continue
        share = limit * (size / total)
        step = math.ceil(share) if share < 1 else math.floor(share)
        out[k] = min(end, begin + step)
    return out


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The streaming reader. Offsets are Spark's Kafka checkpoint form
    ``{"topic": {"partition": offset}}``. Admission as Spark's KafkaMicroBatchStream:
    ``minOffsetsPerTrigger`` holds a trigger back (see :class:`TriggerDelay`), then
    ``maxOffsetsPerTrigger`` caps it (:func:`rate_limit`); Spark's ``ReadAllAvailable``
    (``Trigger.Once``) lifts both. Spark 4.2+ asks through admission control
    (``latestOffset(start, limit)``); on 4.0/4.1 ``maxOffsetsPerTrigger`` is refused (see
    :func:`check_stream_options`) and the reader holds triggers back itself.
    ``trigger(availableNow=True)`` stops at the offsets of its start and is never held back by
    ``minOffsetsPerTrigger`` (a held trigger would end the query with records left, the case
    pyspark's ReadMinRows leaves to the source). Partitions that appear later are read from
    their start."""

    def __init__(self, opts: ReadOptions) -> None:
        check_stream_options(opts)
        self.opts = opts
        self._planner = Planner(opts)
        self._target: dict[tuple[str, int], int] | None = None
        self._last: dict[tuple[str, int], int] | None = None
        self._available: dict[tuple[str, int], int] | None = None
        n = opts.min_offsets_per_trigger
        self._delay = TriggerDelay(n, opts.max_trigger_delay_ms) if n is not None else None

    def _marks(self) -> tuple[list[tuple[str, int]], dict[tuple[str, int], tuple[int, int]]]:
        keys = self._planner.partitions()
        return keys, self._planner.watermarks(keys)

    def initialOffset(self) -> dict:
        keys, marks = self._marks()
        start = self._planner.resolve(self.opts.starting, keys, marks, starting=True)
        return offsets_json(start)

    def getDefaultReadLimit(self) -> Any:
        # Spark's Python sources have no CompositeReadLimit: the limit tells ReadAllAvailable
        # from "apply the options", and latestOffset applies both of them from the options.
        o = self.opts
        if o.min_offsets_per_trigger is not None and ReadMinRows is not None:
            return ReadMinRows(o.min_offsets_per_trigger)
        if o.max_offsets_per_trigger is not None and ReadMaxRows is not None:
            return ReadMaxRows(o.max_offsets_per_trigger)
        return ReadAllAvailable() if ReadAllAvailable is not None else None

    def prepareForTriggerAvailableNow(self) -> None:
        keys, marks = self._marks()
        self._target = {k: marks[k][1] for k in keys}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        if self._target is not None:
            latest = dict(self._target)
        else:
            keys, marks = self._marks()
            latest = {k: marks[k][1] for k in keys}
        self._available = dict(latest)
        if start is None:  # Spark 4.0/4.1: no admission control from the engine
            # The batch starts where this reader's last answer ended (Spark runs a batch up to
            # each answer that moved). A run's first trigger has no such start: see below.
            begin = self._last
            limited = True
        else:
            begin = offsets_of(start)
            limited = not (
                ReadAllAvailable is not None
                and isinstance(limit, ReadAllAvailable)
                and not isinstance(self.getDefaultReadLimit(), ReadAllAvailable)
            )
        if begin is not None:
            for k, off in begin.items():
                latest.setdefault(k, off)
            if limited:
                latest = self._admit(begin, latest)
        elif self._delay is not None:
            # Spark 4.0/4.1, a run's first trigger: it goes ahead with every available offset,
            # as a first trigger does on 4.2+, and maxTriggerDelay counts from it.
            self._delay.went()
        self._last = latest
        return offsets_json(latest)

    def _admit(
        self, begin: dict[tuple[str, int], int], latest: dict[tuple[str, int], int]
    ) -> dict[tuple[str, int], int]:
        """The end of the next batch: ``begin`` while minOffsetsPerTrigger holds the trigger
        back (never under availableNow), else ``latest`` capped by maxOffsetsPerTrigger."""
        if self._delay is not None and self._target is None and self._delay.holds(begin, latest):
            return dict(begin)
        n = self.opts.max_offsets_per_trigger
        return rate_limit(begin, latest, n) if n is not None else latest

    def reportLatestOffset(self) -> dict | None:
        """The latest offsets the last trigger saw (Spark 4.2+ shows them in the query's
        progress as the source's ``latestOffset``)."""
        return offsets_json(self._available) if self._available else None

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin, stop = offsets_of(start), offsets_of(end)
        keys = sorted(stop)
        marks = self._planner.watermarks(keys)
        ranges = []
        for k in keys:
            s = begin.get(k, marks[k][0])  # a partition new since the last batch
            s = self._planner.check_start(k, s, marks[k][0])
            ranges.append(Range(k[0], k[1], s, max(stop[k], s)))
        return [
            RangePartition(r.topic, r.partition, r.start, r.end)
            for r in split_ranges(
                ranges, self.opts.min_partitions, self.opts.max_records_per_partition
            )
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        yield from read_partition(self.opts, partition)

    def commit(self, end: dict) -> None:
        pass

    def stop(self) -> None:
        self._planner.close()


@dataclasses.dataclass
class WriteReport(WriterCommitMessage):
    """One task's rows written, per (topic, partition): where the producer placed them (its
    partitioner's choice for rows without a partition, null keys included)."""

    rows: dict[tuple[str, int], int]


def check_sink_schema(schema: StructType, opts: WriteOptions) -> None:
    """The sink's columns checked as Spark's KafkaWriter.validateQuery does, in its words."""
    fields = {f.name.lower(): f.dataType for f in schema.fields}
    if "value" not in fields:
        raise ValueError("Required attribute 'value' not found")
    if not isinstance(fields["value"], StringType | BinaryType):
        raise ValueError("value attribute type must be a string or binary")
    if "key" in fields and not isinstance(fields["key"], StringType | BinaryType):
        raise ValueError("key attribute type must be a string or binary")
    if opts.topic is None:
        if "topic" not in fields:
            raise ValueError(
                "topic option required when no 'topic' attribute is present. Use the topic "
                "option for setting a topic."
            )
    if "topic" in fields and not isinstance(fields["topic"], StringType):
        raise ValueError("Topic type must be a string")
    if "partition" in fields and not isinstance(fields["partition"], IntegerType):
        raise ValueError("partition attribute type must be an int")
    if "headers" in fields and fields["headers"] != HEADERS_TYPE:
        raise ValueError("headers attribute type must be array<struct<key:string,value:binary>>")


def _column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    for i, f in enumerate(batch.schema):
        if f.name.lower() == name:
            return batch.column(i)
    return None


class _TaskProducer:
    """One task's idempotent producer and its bookkeeping; with
    ``kgroup.transactionalIdPrefix``, a transactional one that writes the task's rows in one
    transaction, committed by :meth:`finish` and aborted by :meth:`fail`."""

    def __init__(self, opts: WriteOptions) -> None:
        from kgroup import Producer

        # Batches of librdkafka's default size (1 MB, not Java's 16 KB): a task writes in bulk,
        # and the broker's work is per batch. The user's kafka.* settings win.
        config: dict[str, Any] = {
            "enable.idempotence": "true",
            "acks": "all",
            "linger.ms": "5",
            "batch.size": "1000000",
            **opts.kafka,
            "partitioner": opts.partitioner,
        }
        self.transactional = opts.transactional_id_prefix is not None
        if self.transactional:
            config["transactional.id"] = f"{opts.transactional_id_prefix}-{_task_partition()}"
        self.producer = Producer(config)
        self.buffer_memory = int(self.producer.config["buffer.memory"])
        self.topics: set[str] = set()
        if self.transactional:
            # Fences an earlier attempt of this task and aborts what it left open.
            self.producer.init_transactions()
            self.producer.begin_transaction()

    def throttle(self, row_bytes: float) -> None:
        # produce_arrow refuses rows beyond buffer.memory: wait while half of it is queued.
        while len(self.producer) * row_bytes > self.buffer_memory / 2:
            self.producer.poll(0.005)

    def produce(self, topic: str, batch: pa.RecordBatch) -> None:
        """Every row of ``batch`` to ``topic`` through produce_arrow, headers included."""
        n = batch.num_rows
        if n == 0:
            return
        keys = _column(batch, "key")
        parts = _column(batch, "partition")
        headers = _column(batch, "headers")
        self.topics.add(topic)
        cols = {"value": _column(batch, "value")}
        if keys is not None:
            cols["key"] = keys
        if parts is not None:
            cols["partition"] = parts
        if headers is not None and headers.null_count < n:
            cols["headers"] = headers
        data = pa.RecordBatch.from_pydict(cols)
        self.throttle(max(data.nbytes / n, 1.0) + 70)
        self.producer.produce_arrow(
            topic,
            data,
            key="key" if keys is not None else None,
            partition="partition" if parts is not None else None,
            headers="headers" if "headers" in cols else None,
        )

    def finish(self) -> WriteReport:
        """Flush, and fail the task when any record was not delivered (Spark then retries the
        task: at-least-once, as Spark's own sink)."""
        try:
            left = self.producer.flush(None)
            failed = self.producer.failed_without_report
            if left or failed:
                err = self.producer.last_error_without_report
                if self.transactional:
                    self.producer.abort_transaction()
                raise RuntimeError(
                    f"kgroup sink: {failed + left} records were not delivered to Kafka "
                    f"(last error: {err!r})"
                )
            if self.transactional:
                self.producer.commit_transaction()
            return WriteReport(
                {
                    (t, p): n
                    for t in self.topics
                    for p, n in enumerate(self.producer.appended(t))
                    if n
                }
            )
        finally:
            self.producer.close()

    def fail(self) -> None:
        """The task failed: its open transaction is aborted (best effort: an attempt that
        cannot reach the broker leaves it to the transaction timeout, or to the task's next
        attempt, which fences it), and the producer closed at once."""
        try:
            if self.transactional:
                self.producer.abort_transaction(10)
        except Exception:  # the task's own error is the one to report
            pass
        finally:
            self.producer.close(0)


def _task_partition() -> int:
    """The Spark partition id of the running task (0 outside Spark)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx.partitionId() if ctx is not None else 0


def write_batches(opts: WriteOptions, iterator: Iterator[pa.RecordBatch]) -> WriteReport:
    """A task's rows to Kafka (the batch and streaming writers' shared body)."""
    import pyarrow.compute as pc

    task = _TaskProducer(opts)
    try:
        for batch in iterator:
            if opts.topic is not None:
                task.produce(opts.topic, batch)
                continue
            topics = _column(batch, "topic")
            assert topics is not None
            if topics.null_count:
                raise ValueError(
                    "null topic present in the data. Use the topic option for setting a topic."
                )
            uniq = pc.unique(topics).to_pylist()
            if len(uniq) == 1:
                task.produce(uniq[0], batch)
                continue
            for t in uniq:
                task.produce(t, batch.filter(pc.equal(topics, t)))
    except BaseException:
        task.fail()
        raise
    return task.finish()


def _merge(messages: Sequence[WriterCommitMessage | None]) -> dict[tuple[str, int], int]:
    total: dict[tuple[str, int], int] = {}
    for m in messages:
        if isinstance(m, WriteReport):
            for k, v in m.rows.items():
                total[k] = total.get(k, 0) + v
    return total


class KafkaWriter(DataSourceArrowWriter):
    """The batch writer: one idempotent producer per task; :meth:`commit` logs the rows
    written per (topic, partition), and writes them (and each task's) to the
    ``kgroup.commitReport`` file."""

    def __init__(self, opts: WriteOptions, schema: StructType) -> None:
        check_sink_schema(schema, opts)
        self.opts = opts

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteReport:  # type: ignore[override]
        return write_batches(self.opts, iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:  # type: ignore[override]
        _log_commit(messages, self.opts)


try:  # Spark 4.1+: the streaming writer may take Arrow batches
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as _StreamWriterBase

    _STREAM_ARROW = True
except ImportError:  # Spark 4.0: rows
    from pyspark.sql.datasource import DataSourceStreamWriter as _StreamWriterBase

    _STREAM_ARROW = False


class KafkaStreamWriter(_StreamWriterBase):  # type: ignore[misc,valid-type]
    """The streaming writer: each micro-batch's tasks write as the batch writer's do
    (at-least-once: a batch that is run again is written again, as with Spark's sink)."""

    def __init__(self, opts: WriteOptions, schema: StructType) -> None:
        check_sink_schema(schema, opts)
        self.opts = opts
        self.schema = schema

    def write(self, iterator: Iterator[Any]) -> WriteReport:  # type: ignore[override]
        if not _STREAM_ARROW:
            names = self.schema.fieldNames()
            arrow = _ARROW_SINK(self.schema)
            rows = list(iterator)
            cols = {n: [r[n] for r in rows] for n in names}
            iterator = iter([pa.RecordBatch.from_pydict(cols, schema=arrow)] if rows else [])
        return write_batches(self.opts, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        _log_commit(messages, self.opts, batchId)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        pass


def _ARROW_SINK(schema: StructType) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema)


def _log_commit(
    messages: Sequence[WriterCommitMessage | None], opts: WriteOptions, batch_id: int | None = None
) -> None:
    """Log the rows written per (topic, partition); with ``kgroup.commitReport``, write them to
    that file as ``{"batch": id, "rows": {topic: {partition: rows}}, "tasks": [...]}``, where
    ``tasks`` holds each task's own rows in the same form, in Spark's partition order."""
    import logging

    total = _merge(messages)
    if opts.report_path:
        tasks = [offsets_json(m.rows) if isinstance(m, WriteReport) else None for m in messages]
        report = {"batch": batch_id, "rows": offsets_json(total), "tasks": tasks}
        with open(opts.report_path, "w", encoding="utf-8") as f:
            json.dump(report, f)

    rows = sum(total.values())
    where = ", ".join(f"{t}-{p}: {n}" for (t, p), n in sorted(total.items()))
    tail = "" if batch_id is None else f" (batch {batch_id})"
    logging.getLogger("spark_udfs.datasource").info(
        "kgroup sink wrote %d rows%s: %s", rows, tail, where
    )


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

    def streamWriter(self, schema: StructType, overwrite: bool) -> KafkaStreamWriter:
        return KafkaStreamWriter(parse_write_options(self.options), schema)
