"""offsets: the driver's planning of what each Spark task reads, with kgroup's AdminClient.

A read is a list of :class:`Range` (one topic partition, offsets ``[start, end)``); the driver
resolves the subscription to partitions and the offset options to numbers (ListOffsets,
earliest, latest or by timestamp), retrying as ``fetchOffset.numRetries`` and
``fetchOffset.retryIntervalMs`` say, and splits ranges larger than ``maxRecordsPerPartition``
and large ranges when ``minPartitions`` asks for more Spark partitions than there are Kafka
partitions (as Spark's KafkaOffsetRangeCalculator).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from spark_udfs.options import EARLIEST, LATEST, OffsetSpec, ReadOptions

__all__ = ["Planner", "Range", "split_ranges"]

Key = tuple[str, int]


@dataclass(frozen=True)
class Range:
    """Offsets ``[start, end)`` of one topic partition."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return max(self.end - self.start, 0)


def _divide(r: Range, parts: int) -> list[Range]:
    """``r`` in ``parts`` consecutive ranges of sizes differing by at most one (the last ones
    take the rounding, as Spark's integer division does)."""
    out = []
    remaining, start = r.size, r.start
    for part in range(parts):
        this = remaining // (parts - part)
        remaining -= this
        end = min(start + this, r.end)
        if end > start:
            out.append(Range(r.topic, r.partition, start, end))
        start = end
    return out


def split_ranges(
    ranges: list[Range], min_partitions: int | None, max_records: int | None = None
) -> list[Range]:
    """Spark's KafkaOffsetRangeCalculator.getRanges. Empty ranges are dropped; with
    ``max_records`` (maxRecordsPerPartition) a range of ``size`` records becomes
    ``ceil(size / max_records)`` even parts; then, with ``min_partitions`` above the number of
    ranges, each range whose share ``round(size / total * min_partitions)`` is above one is
    divided in its share of the ranges left once those of share one stay whole (SPARK-36576).
    Every offset of every range lands in exactly one output range, in offset order."""
    ranges = [r for r in ranges if r.size > 0]
    if max_records is not None:
        ranges = [p for r in ranges for p in _divide(r, -(-r.size // max_records))]
    if min_partitions is None or min_partitions <= len(ranges):
        return ranges
    total = sum(r.size for r in ranges)

    def share(size: int, of: int, parts: int) -> int:
        # Scala's math.round: half up.
        return max(math.floor(size / of * parts + 0.5), 1)

    whole = {r for r in ranges if share(r.size, total, min_partitions) == 1}
    split_total = total - sum(r.size for r in whole)
    split_parts = max(min_partitions - len(whole), 1)
    out: list[Range] = []
    for r in ranges:
        if r in whole:
            out.append(r)
        else:
            out.extend(_divide(r, share(r.size, split_total, split_parts)))
    return out


T = TypeVar("T")

log = logging.getLogger("spark_udfs.offsets")


class Planner:
    """Planner answers the driver's questions about the cluster for one set of options; it
    opens its AdminClient on first use and closes it with :meth:`close`. Each question is
    asked up to ``fetchOffset.numRetries`` times, ``fetchOffset.retryIntervalMs`` apart, with a
    new AdminClient after a failure (Spark's KafkaOffsetReaderAdmin.withRetries); the last
    failure is raised."""

    def __init__(self, opts: ReadOptions, connect: Callable[[], Any] | None = None) -> None:
        self.opts = opts
        self._connect = connect
        self._admin: Any = None

    @property
    def admin(self) -> Any:
        if self._admin is None:
            if self._connect is not None:
                self._admin = self._connect()
            else:
                from kgroup import AdminClient

                self._admin = AdminClient(self.opts.admin_config())
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def __enter__(self) -> Planner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ask(self, question: Callable[[Any], T]) -> T:
        attempts = self.opts.fetch_offset_attempts
        for attempt in range(1, attempts + 1):
            try:
                return question(self.admin)
            except Exception as e:
                if attempt == attempts:
                    raise
                log.warning("Error in attempt %d getting Kafka offsets: %r", attempt, e)
                time.sleep(self.opts.fetch_offset_retry_interval_ms / 1000)
                try:
                    self.close()
                except Exception:  # a broken client may fail to close; a new one is made
                    self._admin = None
        raise AssertionError("unreachable")

    def partitions(self) -> list[Key]:
        """The topic partitions the subscription names now, sorted."""
        o = self.opts
        if o.strategy == "assign":
            return sorted(set(o.assign))
        md = self._ask(lambda admin: admin.list_topics(timeout=30))
        out: list[Key] = []
        if o.strategy == "subscribe":
            for t in o.topics:
                tm = md.topics.get(t)
                if tm is None or tm.error is not None:
                    continue
                out.extend((t, p) for p in tm.partitions)
        else:
            rx = re.compile(o.pattern)
            for t, tm in md.topics.items():
                if rx.fullmatch(t) and tm.error is None and not t.startswith("__"):
                    out.extend((t, p) for p in tm.partitions)
        return sorted(out)

    def list_offsets(self, specs: Mapping[Key, int | str]) -> dict[Key, int]:
        """ListOffsets for each partition (``earliest``, ``latest`` or a timestamp in ms);
        -1 where no record has a timestamp at or after the one asked."""
        if not specs:
            return {}
        from kgroup import TopicPartition

        def ask(admin: Any) -> dict[Key, int]:
            futures = admin.list_offsets(
                {TopicPartition(t, p): s for (t, p), s in specs.items()}, request_timeout=30
            )
            return {(tp.topic, tp.partition): f.result().offset for tp, f in futures.items()}

        return self._ask(ask)

    def watermarks(self, keys: Iterable[Key]) -> dict[Key, tuple[int, int]]:
        keys = list(keys)
        if not keys:
            return {}
        level = self.opts.isolation_level
        got = self._ask(lambda admin: admin.watermarks(keys, timeout=30, isolation_level=level))
        return {(tp.topic, tp.partition): v for tp, v in got.items()}

    def resolve(
        self,
        spec: OffsetSpec,
        keys: list[Key],
        marks: Mapping[Key, tuple[int, int]],
        *,
        starting: bool,
    ) -> dict[Key, int]:
        """Each partition's offset for ``spec``: a number, earliest/latest from ``marks``."""
        if spec.kind in ("earliest", "latest"):
            i = 0 if spec.kind == "earliest" else 1
            return {k: marks[k][i] for k in keys}
        if spec.kind == "offsets":
            missing = [k for k in keys if k not in spec.per_partition]
            if missing:
                which = "startingOffsets" if starting else "endingOffsets"
                raise ValueError(
                    f"If {which} contains specific offsets, you must specify all "
                    "TopicPartitions.\nUse -1 for latest, -2 for earliest.\n"
                    f"Specified: {sorted(spec.per_partition)} Assigned: {keys}"
                )
            out = {}
            for k in keys:
                off = spec.per_partition[k]
                out[k] = marks[k][0] if off == EARLIEST else marks[k][1] if off == LATEST else off
            return out
        if spec.kind == "timestamp":
            stamps = {k: spec.timestamp for k in keys}
        else:
            missing = [k for k in keys if k not in spec.per_partition]
            if missing:
                raise ValueError(
                    "If an OffsetsByTimestamp option is given, it must name every "
                    f"TopicPartition: missing {missing}"
                )
            stamps = {k: spec.per_partition[k] for k in keys}
        found = self.list_offsets(stamps)
        out = {}
        for k in keys:
            off = found.get(k, -1)
            if off < 0:
                # No record at or after the timestamp: an ending bound is the end; a starting
                # one fails unless startingOffsetsByTimestampStrategy is latest (Spark's).
                if starting and self.opts.timestamp_strategy == "error":
                    raise ValueError(
                        f"No offset matched from request of topic-partition {k[0]}-{k[1]} and "
                        f"timestamp {stamps[k]}."
                    )
                off = marks[k][1]
            out[k] = off
        return out

    def batch_ranges(self) -> list[Range]:
        """The batch read's ranges, before splitting."""
        o = self.opts
        keys = self.partitions()
        marks = self.watermarks(keys)
        start = self.resolve(o.starting, keys, marks, starting=True)
        end = self.resolve(o.ending, keys, marks, starting=False)
        out = []
        for k in keys:
            s, e = start[k], end[k]
            s = self.check_start(k, s, marks[k][0])
            if s > e:
                # Spark's source fails the read the same way (its task asserts it).
                raise ValueError(
                    f"Beginning offset {s} is after the ending offset {e} for topic {k[0]} "
                    f"partition {k[1]}. You either provided an invalid fromOffset, or the "
                    "Kafka topic has been damaged"
                )
            out.append(Range(k[0], k[1], s, e))
        return out

    def check_start(self, key: Key, start: int, log_start: int) -> int:
        """``start``, or the log's start when retention removed it (failOnDataLoss=false);
        with failOnDataLoss an error in Spark's words."""
        if start >= log_start:
            return start
        if self.opts.fail_on_data_loss:
            raise RuntimeError(
                f"Some data may have been lost because they are not available in Kafka any "
                f"more; either the data was aged out by Kafka or the topic may have been "
                f"deleted before all the data in the topic was processed. If you don't want "
                f"your streaming query to fail on such cases, set the source option "
                f'"failOnDataLoss" to "false". ({key[0]}-{key[1]}: offset {start} is before '
                f"the log start offset {log_start})"
            )
        return log_start
