"""summary: the story's closing tables and the checks that decide its exit status.

Rows per partition three ways (Spark's skew report, the sink's commit report, the consumers'
distinct records) beside each consumer's share, the committed offsets and the lag; the
partitions of each member in each generation; then one line per check. Plain functions of
plain values, so that they are tested without Spark or a broker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spark_udfs.demo.group import LEAVER, GroupResult
from spark_udfs.report import ranges

__all__ = ["Check", "checks", "generation_table", "partition_table"]


@dataclass(frozen=True)
class Check:
    """Check is one invariant of the story: whether it held, and what it says."""

    ok: bool
    text: str

    def format(self) -> str:
        return f"  {'ok  ' if self.ok else 'FAIL'}  {self.text}"


def partition_table(
    spark_rows: Sequence[int],
    sink_rows: Sequence[int],
    group: GroupResult,
    committed: Sequence[int | None],
    ends: Sequence[int],
) -> str:
    """partition_table has one line per partition: Spark's rows, the sink's rows, the
    distinct records the consumers processed and each consumer's records, the group's
    committed offset (``-``: none), the log end offset and the lag; then the totals."""
    roles = list(group.roles)
    head = ["partition", "spark rows", "sink wrote", "consumed", *roles]
    head += ["committed", "log end", "lag"]
    widths = [9, 11, 11, 11, *[9] * len(roles), 10, 10, 6]

    def line(cells: Sequence[object]) -> str:
        return "  ".join(
            f"{c:>{w},}" if isinstance(c, int) else f"{c!s:>{w}}"
            for c, w in zip(cells, widths, strict=True)
        )

    lines = [line(head)]
    for p in range(len(spark_rows)):
        c = committed[p]
        lag = _lag(c, ends[p])
        lines.append(
            line(
                [
                    p,
                    spark_rows[p],
                    sink_rows[p],
                    group.distinct[p],
                    *[group.records[r][p] for r in roles],
                    "-" if c is None else c,
                    ends[p],
                    lag,
                ]
            )
        )
    done = [c for c in committed if c is not None]
    lags = [_lag(c, e) for c, e in zip(committed, ends, strict=True)]
    lines.append(
        line(
            [
                "total",
                sum(spark_rows),
                sum(sink_rows),
                sum(group.distinct),
                *[sum(group.records[r]) for r in roles],
                sum(done),
                sum(ends),
                sum(lags),
            ]
        )
    )
    return "\n".join(lines)


def generation_table(group: GroupResult) -> str:
    """generation_table has one line per generation the consumers saw: each member's
    partitions (``(none)``: a member without partitions, ``-``: not a member)."""
    roles = list(group.roles)
    cells: dict[int, list[str]] = {}
    for g in sorted(group.generations):
        members = group.generations[g]
        cells[g] = [
            "-" if r not in members else ranges(list(members[r])) or "(none)" for r in roles
        ]
    width = max([16, *(len(c) for row in cells.values() for c in row)])
    lines = ["generation  " + "  ".join(f"{r:<{width}}" for r in roles).rstrip()]
    for g, row in cells.items():
        lines.append(f"{g:>10}  " + "  ".join(f"{c:<{width}}" for c in row).rstrip())
    return "\n".join(lines)


def checks(
    spark_rows: Sequence[int],
    sink_rows: Sequence[int],
    group: GroupResult,
    committed: Sequence[int | None],
    ends: Sequence[int],
    read_back: int,
) -> list[Check]:
    """checks are the story's invariants, in the order the story met them. Records processed
    twice fail the run unless a member lost partitions or could not commit before giving one
    up: then Kafka's at-least-once allows them, and the check says so."""
    n = len(spark_rows)
    out = [
        Check(
            list(sink_rows) == list(spark_rows),
            "the sink wrote each partition the rows Spark's skew report counted"
            + _diff("sink", sink_rows, spark_rows),
        ),
        Check(
            list(ends) == list(spark_rows),
            "the topic holds exactly those records (log end offset = rows, per partition)"
            + _diff("log end", ends, spark_rows),
        ),
        Check(
            list(group.distinct) == list(spark_rows),
            "the consumers processed every record of every partition"
            + _diff("consumed", group.distinct, spark_rows),
        ),
        Check(
            group.misplaced == 0,
            "every keyed record sits in the partition Java's producer picks for its key"
            + (f": {group.misplaced:,} do not" if group.misplaced else ""),
        ),
    ]
    twice = sum(group.duplicates)
    if not twice:
        out.append(Check(True, "no record was processed twice across the group"))
    else:
        why = [f"{r} lost {ranges(list(ps))}" for r, ps in group.lost]
        why += [f"{r} could not commit {ranges(sorted(o))} on revoke" for r, o in group.uncommitted]
        text = f"{twice:,} records were processed twice"
        if why:
            text += f" (at-least-once, as Kafka allows: {'; '.join(why)})"
        else:
            text += " with no lost partition or failed commit to explain them"
        out.append(Check(bool(why), text))
    back = group.left_and_came_back(LEAVER)
    if back is None:
        out.append(Check(False, f"no generation shows {LEAVER} leaving and coming back"))
    else:
        g1, g2, g3 = back
        out.append(
            Check(
                True,
                f"{LEAVER} was a member in generation {g1}, absent from generation {g2}, "
                f"back in generation {g3} as a new member",
            )
        )
    behind = [p for p in range(n) if _lag(committed[p], ends[p]) != 0]
    out.append(
        Check(
            not behind,
            "the group committed every partition to its log end: lag 0"
            + (f"; not partitions {ranges(behind)}" if behind else ""),
        )
    )
    out.append(
        Check(
            read_back == sum(spark_rows),
            f'spark.read.format("kgroup") reads back {read_back:,} records '
            f"of the {sum(spark_rows):,} rows written",
        )
    )
    return out


def _lag(committed: int | None, end: int) -> int:
    # The topic is new, its logs start at offset 0: a partition without a commit lags by all
    # its records (none, for an empty one).
    return end - (committed if committed is not None else 0)


def _diff(what: str, got: Sequence[int], want: Sequence[int]) -> str:
    bad = [p for p in range(len(want)) if p >= len(got) or got[p] != want[p]]
    if not bad:
        return ""
    shown = ", ".join(
        f"partition {p}: {what} {got[p] if p < len(got) else 'none'} != {want[p]}" for p in bad[:5]
    )
    return f"; {shown}" + (f" (and {len(bad) - 5} more)" if len(bad) > 5 else "")
