"""report: how a keyed dataset spreads over Kafka's partitions (the skew report).

A producer writing these rows to a topic fills each partition in proportion to its row
count: the heaviest partition sets the pace of its consumer, so ``max/mean`` is the slowdown
the skew costs a consumer group, and the heaviest keys say what causes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MAX_LISTED", "HeavyKey", "SkewReport", "ranges"]

# MAX_LISTED is how many partitions the text report lists one per line; past it, it lists
# the HEAVIEST heaviest and LIGHTEST lightest.
MAX_LISTED = 64
HEAVIEST = 20
LIGHTEST = 5


@dataclass(frozen=True)
class HeavyKey:
    """HeavyKey is one key of the dataset with its row count and Kafka partition."""

    key: str | bytes
    rows: int
    partition: int


@dataclass(frozen=True)
class SkewReport:
    """SkewReport holds the rows of every Kafka partition (``rows[i]`` for partition i,
    null-key rows included where they were placed), the null-key row count and the heaviest
    keys, heaviest first."""

    num_partitions: int
    hash: str
    rows: tuple[int, ...]
    null_key_rows: int = 0
    heavy_keys: tuple[HeavyKey, ...] = field(default_factory=tuple)

    @property
    def total(self) -> int:
        return sum(self.rows)

    @property
    def mean(self) -> float:
        return self.total / self.num_partitions

    @property
    def max_over_mean(self) -> float:
        """max_over_mean is the heaviest partition's rows over the mean (1.0 is perfect
        balance; 0.0 for an empty dataset)."""
        return max(self.rows) / self.mean if self.total else 0.0

    @property
    def empty_partitions(self) -> list[int]:
        return [p for p, r in enumerate(self.rows) if r == 0]

    def format(self, width: int = 40) -> str:
        """format renders the report as text: one line per partition with a bar."""
        total, top = self.total, max(self.rows, default=0)
        lines = [
            f"Kafka partitions: {total:,} rows over {self.num_partitions} partitions "
            f"({self.hash}), {self.null_key_rows:,} with a null key",
            f"{'partition':>9}  {'rows':>13}  {'share':>6}",
        ]

        def line(p: int) -> str:
            r = self.rows[p]
            share = r / total if total else 0.0
            bar = "#" * round(width * r / top) if top else ""
            return f"{p:>9}  {r:>13,}  {share:>6.1%}  {bar}".rstrip()

        if self.num_partitions <= MAX_LISTED:
            lines += [line(p) for p in range(self.num_partitions)]
        else:
            # Too many to list: the heaviest and the lightest, by rows.
            order = sorted(range(self.num_partitions), key=lambda p: (-self.rows[p], p))
            lines.append(f"  the {HEAVIEST} heaviest of {self.num_partitions} partitions:")
            lines += [line(p) for p in order[:HEAVIEST]]
            lines.append(f"  the {LIGHTEST} lightest:")
            lines += [line(p) for p in order[-LIGHTEST:]]
        if total:
            heaviest = max(range(self.num_partitions), key=lambda p: self.rows[p])
            lightest = min(range(self.num_partitions), key=lambda p: self.rows[p])
            lines.append(
                f"max/mean {self.max_over_mean:.3f} (partition {heaviest}), "
                f"min/mean {self.rows[lightest] / self.mean:.3f} (partition {lightest}), "
                f"mean {self.mean:,.1f} rows"
            )
        else:
            lines.append("no rows")
        if self.empty_partitions:
            lines.append(f"empty partitions: {ranges(self.empty_partitions)}")
        if self.heavy_keys:
            lines.append("heaviest keys:")
            keyw = min(40, max(len(_show(k.key)) for k in self.heavy_keys))
            lines.append(f"  {'key':<{keyw}}  {'rows':>13}  {'share':>6}  partition")
            for k in self.heavy_keys:
                share = k.rows / total if total else 0.0
                lines.append(
                    f"  {_show(k.key, 40):<{keyw}}  {k.rows:>13,}  {share:>6.2%}  {k.partition}"
                )
        return "\n".join(lines)

    def plot(self, path: str) -> None:
        """plot draws rows per partition as a bar chart into the image file ``path``
        (PNG, SVG or PDF by its extension), with the mean and the heaviest keys."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        n = self.num_partitions
        fig, ax = plt.subplots(figsize=(max(6.0, min(24.0, 0.35 * n + 3)), 4.5), dpi=120)
        try:
            parts = list(range(n))
            heaviest = max(self.rows, default=0)
            colors = ["#c0392b" if r == heaviest and self.total else "#2e86c1" for r in self.rows]
            ax.bar(parts, self.rows, color=colors, width=0.8)
            if self.total:
                ax.axhline(self.mean, color="#444444", linestyle="--", linewidth=1)
                ax.annotate(
                    f"mean {self.mean:,.0f}",
                    (-0.5, self.mean),
                    xytext=(2, 2),
                    textcoords="offset points",
                    ha="left",
                    va="bottom",
                    fontsize=8,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1, "alpha": 0.8},
                )
            ax.set_xlabel("Kafka partition")
            ax.set_ylabel("rows")
            ax.set_xlim(-0.6, n - 0.4)
            if n <= 48:
                ax.set_xticks(parts)
            ax.set_title(
                f"{self.total:,} rows over {n} partitions ({self.hash}): "
                f"max/mean {self.max_over_mean:.3f}"
            )
            ax.yaxis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:,.0f}"))
            if self.heavy_keys:
                text = "heaviest keys\n" + "\n".join(
                    f"{_show(k.key, 24)}: {k.rows:,} (p{k.partition})" for k in self.heavy_keys[:5]
                )
                ax.text(
                    1.01,
                    1.0,
                    text,
                    transform=ax.transAxes,
                    va="top",
                    fontsize=8,
                    family="monospace",
                )
            fig.tight_layout()
            fig.savefig(path)
        finally:
            plt.close(fig)


def _show(key: str | bytes, limit: int | None = None) -> str:
    text = repr(key) if isinstance(key, bytes) else key
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def ranges(ps: list[int]) -> str:
    """ranges writes ascending partition numbers as runs: ``[0, 1, 2, 5]`` is ``0-2, 5``."""
    if not ps:
        return ""
    out: list[str] = []
    start = prev = ps[0]
    for p in [*ps[1:], None]:
        if p is not None and p == prev + 1:
            prev = p
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if p is not None:
            start = prev = p
    return ", ".join(out)
