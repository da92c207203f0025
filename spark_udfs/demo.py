"""demo: the keyed repartitioning pipeline on a generated sample (``make run`` calls this).

    python -m spark_udfs.demo [--rows 1000000] [--partitions 12] [--keep DIR]

generates a Parquet dataset of user events inside Spark (keys ``user-000000`` ... drawn with a
heavy head, as real traffic has), runs the pipeline on it into a temporary folder and prints
the skew report. ``--keep DIR`` keeps the input, output and bar chart in DIR.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

from spark_udfs.repartition import run_pipeline
from spark_udfs.session import get_session

__all__ = ["generate", "main"]


def generate(spark, path: str, rows: int, *, users: int = 100_000, seed: int = 7) -> None:
    """generate writes ``rows`` events to Parquet at ``path``: ``user`` keys whose
    popularity falls off as a power law (user-000000 is the busiest), a few null keys (events
    without a user), an event type and an amount."""
    from pyspark.sql import functions as F

    rank = F.floor(F.pow(F.rand(seed), F.lit(4.0)) * users).cast("long")
    key = F.concat(F.lit("user-"), F.lpad(rank.cast("string"), 6, "0"))
    (
        spark.range(rows, numPartitions=max(2, spark.sparkContext.defaultParallelism))
        .select(
            F.col("id").alias("event_id"),
            F.when(F.rand(seed + 1) < 0.001, F.lit(None)).otherwise(key).alias("user"),
            F.element_at(
                F.array(*[F.lit(t) for t in ("view", "click", "cart", "buy")]),
                (F.floor(F.rand(seed + 2) * 4) + 1).cast("int"),
            ).alias("type"),
            F.round(F.rand(seed + 3) * 100, 2).alias("amount"),
        )
        .write.mode("overwrite")
        .parquet(path)
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m spark_udfs.demo", description=__doc__.split("\n")[0]
    )
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--partitions", type=int, default=12)
    p.add_argument("--master", help="Spark master URL (default: local[*])")
    p.add_argument("--keep", metavar="DIR", help="keep input, output and chart in DIR")
    args = p.parse_args(argv)
    if args.rows < 0:
        p.error("--rows must be 0 or more")

    work = args.keep or tempfile.mkdtemp(prefix="kgroup-spark-demo-")
    os.makedirs(work, exist_ok=True)
    source, output = os.path.join(work, "events"), os.path.join(work, "by-partition")
    chart = os.path.join(work, "skew.png")
    try:
        t = time.perf_counter()
        spark = get_session(args.master, app_name="kgroup demo")
        print(f"spark started in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        t = time.perf_counter()
        generate(spark, source, args.rows)
        print(f"generated {args.rows:,} events in {time.perf_counter() - t:.1f} s: {source}")
        print(
            f"$ python -m spark_udfs.repartition --input {source} --key-column user "
            f"--partitions {args.partitions} --output {output} --report {chart}"
        )
        result = run_pipeline(
            spark,
            input=source,
            key_column="user",
            partitions=args.partitions,
            output=output,
            overwrite=True,
        )
        print(result.report.format())
        steps = ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items())
        print(f"wrote {result.output}; {steps}")
        folders = sorted(
            (d for d in os.listdir(output) if d.startswith("partition=")),
            key=lambda d: int(d.split("=", 1)[1]),
        )
        print(f"{len(folders)} folders: {folders[0]} ... {folders[-1]}")
        if args.keep:
            result.report.plot(chart)
            print(f"kept in {work}; bar chart: {chart}")
        else:
            print("(removed again: --keep DIR keeps the data, the output and a bar chart)")
        spark.stop()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
