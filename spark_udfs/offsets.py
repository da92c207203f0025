"""offsets: the driver's planning of what each Spark task reads, with kgroup's AdminClient.

A read is a list of :class:`Range` (one topic partition, offsets ``[start, end)``); the driver
resolves the subscription to partitions and the offset options to numbers (ListOffsets,
earliest, latest or by timestamp), and splits large ranges when ``minPartitions`` asks for
more Spark partitions than there are Kafka partitions (as Spark's KafkaOffsetRangeCalculator).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

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


def split_ranges(ranges: list[Range], min_partitions: int | None) -> list[Range]:
    """Spark's KafkaOffsetRangeCalculator: with ``min_partitions`` above the number of
    non-empty ranges, each range becomes ``round(size / total * min_partitions)`` parts (at
    least one), the last part taking the rounding; empty ranges are dropped."""
    ranges = [r for r in ranges if r.size > 0]
    if min_partitions is None or min_partitions <= len(ranges):
        return ranges
    total = sum(r.size for r in ranges)
    out: list[Range] = []
    for r in ranges:
        parts = max(round(r.size / total * min_partitions), 1)
        remaining = r.size
        start = r.start
        for part in range(parts):
            this = remaining // (parts - part)
            remaining -= this
            end = min(start + this, r.end)
            if end > start:
                out.append(Range(r.topic, r.partition, start, end))
            start = end
    return out


class Planner:
    """Planner answers the driver's questions about the cluster for one set of options; it
    opens its AdminClient on first use and closes it with :meth:`close`."""

    def __init__(self, opts: ReadOptions) -> None:
        self.opts = opts
        self._admin: Any = None

    @property
    def admin(self) -> Any:
        if self._admin is None:
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

    def partitions(self) -> list[Key]:
        """The topic partitions the subscription names now, sorted."""
        o = self.opts
        if o.strategy == "assign":
            return sorted(set(o.assign))
        md = self.admin.list_topics(timeout=30)
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

        futures = self.admin.list_offsets(
            {TopicPartition(t, p): s for (t, p), s in specs.items()}, request_timeout=30
        )
        return {(tp.topic, tp.partition): f.result().offset for tp, f in futures.items()}

    def watermarks(self, keys: Iterable[Key]) -> dict[Key, tuple[int, int]]:
        keys = list(keys)
        if not keys:
            return {}
        got = self.admin.watermarks(keys, timeout=30)
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
            out.append(Range(k[0], k[1], s, max(e, s)))
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
