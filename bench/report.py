"""What every side-by-side benchmark prints: the servers compared, a table of their figures with
kgroup's ratio to each, and the load the figures were taken under."""

from __future__ import annotations

import os
from collections.abc import Callable

#: The servers compared, in the order of the tables: KGROUP_BENCH_SERVERS (a comma-separated
#: subset of kgroup,kafka,tansu) runs fewer.
SERVERS = [
    s.strip()
    for s in os.environ.get("KGROUP_BENCH_SERVERS", "kgroup,kafka,tansu").split(",")
    if s.strip()
]

#: The side-by-side summaries of the modules that ran, printed at the end of the session (after
#: pytest-benchmark's tables, past pytest's capture): each a title and a function of no
#: arguments that returns the summary's lines, or none when its module measured nothing.
SUMMARIES: dict[str, Callable[[], list[str]]] = {}


def summary(title: str) -> Callable[[Callable[[], list[str]]], Callable[[], list[str]]]:
    """summary registers the decorated function as the summary titled ``title``."""

    def register(fn: Callable[[], list[str]]) -> Callable[[], list[str]]:
        SUMMARIES[title] = fn
        return fn

    return register


def load_average() -> str:
    """This machine's load average (1, 5, 15 minutes) and its core count, for every summary:
    figures taken on a busy machine are not figures."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


def side_by_side(
    results: dict[str, dict[str, float]],
    lower_is_better: Callable[[str], bool],
    compared: Callable[[str], bool] = lambda what: True,
    names: list[str] | None = None,
) -> list[str]:
    """side_by_side lays out ``results`` (by server, then by figure) as a table: one column
    per server of ``names`` (SERVERS unless given), then kgroup's ratio to each other server,
    oriented so that above 1 means kgroup is ahead (for a time or a size, the other's figure
    over kgroup's); figures for which ``compared`` is false (the harness's own readings) get
    no ratio."""
    names = [n for n in (SERVERS if names is None else names) if n in results]
    others = [n for n in names if n != "kgroup"]
    whats = list(dict.fromkeys(w for n in names for w in results[n]))
    width = max([len(w) for w in whats] + [10])
    head = f"  {'':<{width}}" + "".join(f"{n:>12}" for n in names)
    head += "".join(f"{'vs ' + n:>12} " for n in others if "kgroup" in names)
    lines = [head]
    for w in whats:
        row = f"  {w:<{width}}"
        for n in names:
            v = results[n].get(w)
            row += f"{v:12.3f}" if v is not None else f"{'-':>12}"
        k = results.get("kgroup", {}).get(w)
        for n in others:
            v = results[n].get(w)
            if k is None or v is None or not k or not v or not compared(w):
                row += f"{'-':>12} "
            else:
                ratio = v / k if lower_is_better(w) else k / v
                row += f"{ratio:11.2f}x "
        lines.append(row)
    lines.append(
        "  (ratios: kgroup against each; above 1x kgroup is ahead, below 1x behind; "
        + load_average()
        + ")"
    )
    return lines


def behind(
    results: dict[str, dict[str, float]],
    other: str,
    lower_is_better: Callable[[str], bool],
    compared: Callable[[str], bool] = lambda what: True,
) -> list[str] | None:
    """behind lists the figures on which kgroup is behind ``other`` (None when either was not
    measured)."""
    k, o = results.get("kgroup"), results.get(other)
    if not k or not o:
        return None
    return [
        w
        for w in k
        if w in o and compared(w) and (k[w] > o[w] if lower_is_better(w) else k[w] < o[w])
    ]
