"""story: ``make run``, end to end on this machine (``python -m spark_udfs.demo``).

    python -m spark_udfs.demo [--rows N] [--partitions 12] [--master URL] [--keep DIR]

1. starts kgroup's broker in the background (``python -m kgroup.cli broker`` on 127.0.0.1, a
   port the system picks, its data in a temporary folder);
2. generates N user events in Spark (keys with a heavy head, as real traffic has), runs the
   keyed repartitioning pipeline on them and prints its skew report;
3. writes every event to a topic through the ``kgroup`` data source, laid out first by
   ``repartition_by_kafka_key`` so that each Spark task writes one Kafka partition (key: the
   user, value: the event as JSON);
4. has a group of three kgroup consumers read the topic while one leaves mid-way and comes
   back (:mod:`spark_udfs.demo.group`);
5. prints rows per partition as Spark counted them beside records per partition as the
   consumers saw them, each generation's assignment, the committed offsets and the lag, reads
   the topic back with ``spark.read.format("kgroup")``, and checks it all
   (:mod:`spark_udfs.demo.summary`).

Exits 0 when every check holds, 1 when one fails or a step fails, 130 on Ctrl-C. The broker is
stopped at the end however the run ends (SIGTERM included). ``--keep DIR`` keeps the data,
the pipeline's output, the skew chart (skew.png), the sink's commit report and the broker's
data and log in DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from typing import Any

from spark_udfs.demo.broker import BrokerProcess, background_broker
from spark_udfs.demo.group import LEAVER, run_group
from spark_udfs.demo.summary import checks, generation_table, partition_table

__all__ = ["DEFAULT_PARTITIONS", "DEFAULT_ROWS", "GROUP", "TOPIC", "generate", "main"]

#: DEFAULT_ROWS keeps ``make run`` near a minute on a shared 2-core machine: 300,000 rows took
#: 32 s when it was quiet (load 3) and 53 s when busy (load 5-8); 1,000,000 took 38 s and 75 s.
#: Spark's start and first jobs take most of it whatever the size.
DEFAULT_ROWS = 300_000
DEFAULT_PARTITIONS = 12
TOPIC = "events"
GROUP = "kgroup-demo"
# The local Spark's JVM: C1 alone (a JIT that compiles at once serves a run of a minute
# better than C2's optimising one) and one garbage collector thread (the cores have work).
# The story's Spark steps for 1,000,000 rows took 69-77 s so against 96-130 s with the JVM's
# defaults, alternating runs on the same busy 2-core machine.
_LOCAL_JVM = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}


def generate(spark: Any, path: str, rows: int, *, users: int = 100_000, seed: int = 7) -> None:
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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m spark_udfs.demo",
        description="The story of make run: Spark partitions a sample as Kafka would, writes "
        "it to kgroup's broker, and a group of three consumers reads it while one of them "
        "leaves and comes back; every count is checked.",
    )
    p.add_argument(
        "--rows", type=int, default=DEFAULT_ROWS, help="events to generate (default %(default)s)"
    )
    p.add_argument(
        "--partitions",
        type=int,
        default=DEFAULT_PARTITIONS,
        help="the topic's partitions (default %(default)s)",
    )
    p.add_argument(
        "--master",
        help="Spark master URL (default: local[*]; the broker listens on 127.0.0.1, so the "
        "executors must run on this machine)",
    )
    p.add_argument("--keep", metavar="DIR", help="keep the data, output, chart and broker in DIR")
    return p


def _terminate(signum: int, frame: object) -> None:
    # SIGTERM (a timeout of make's caller, CI) unwinds like Ctrl-C: the broker is stopped.
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """main runs the story; returns 0 when every check holds, 1 when one fails or a step
    fails, 130 when interrupted."""
    p = _parser()
    args = p.parse_args(argv)
    if args.rows < 1:
        p.error("--rows must be 1 or more")
    if args.partitions < 1:
        p.error("--partitions must be 1 or more")
    signal.signal(signal.SIGTERM, _terminate)
    # Each line reaches a pipe (make's output, tee, a test) as it is printed.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    work = args.keep or tempfile.mkdtemp(prefix="kgroup-demo-")
    os.makedirs(work, exist_ok=True)
    try:
        failed = _story(args, work)
    except KeyboardInterrupt:
        print("\ninterrupted: the broker and Spark were stopped", file=sys.stderr)
        return 130
    except Exception as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if failed:
        for text in failed:
            print(f"error: {text}", file=sys.stderr)
        return 1
    return 0


def _story(args: argparse.Namespace, work: str) -> list[str]:
    """_story tells the story in ``work``; returns the checks that failed."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    print("== 1. kgroup's broker, in the background")
    data = os.path.join(work, "broker")
    # A --keep folder of an earlier run: start from an empty broker, as the data and the
    # pipeline's output are written anew.
    shutil.rmtree(data, ignore_errors=True)
    # No initial rebalance delay: the consumers' group forms as soon as they join.
    config = {"group.initial.rebalance.delay.ms": 0}
    with background_broker(data, config=config) as broker:
        print(
            f"$ python -m kgroup.cli broker --listen 127.0.0.1:0 --data-dir {data} &\n"
            f"pid {broker.pid}, listening on {broker.bootstrap} "
            f"after {broker.started_in:.1f} s; log: {broker.log}"
        )
        try:
            return _with_broker(args, work, broker, timings, started)
        except Exception:
            tail = broker.log_tail()
            if tail:
                print(f"the broker's log ends with:\n{tail}", file=sys.stderr)
            raise


def _with_broker(
    args: argparse.Namespace,
    work: str,
    broker: BrokerProcess,
    timings: dict[str, float],
    started: float,
) -> list[str]:
    import kgroup
    import spark_udfs
    from spark_udfs.repartition import run_pipeline
    from spark_udfs.session import get_session, is_local

    n, bs = args.partitions, broker.bootstrap
    source, output = os.path.join(work, "events"), os.path.join(work, "by-partition")
    chart = os.path.join(work, "skew.png")
    commit_report = os.path.join(work, "commit-report.json")

    t = time.perf_counter()
    local = args.master is None or is_local(args.master)
    spark = get_session(args.master, app_name="kgroup demo", conf=_LOCAL_JVM if local else None)
    spark_udfs.register(spark)  # format("kgroup")
    # Ctrl-C raises KeyboardInterrupt at once, as before Spark started: PySpark's handler
    # would first cancel the jobs through the gateway, which fails noisily when the gateway
    # is in a call; spark.stop() below ends them anyway.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    timings["spark"] = time.perf_counter() - t
    try:
        print(f"\n== 2. Spark lays a sample out by Kafka partition ({spark.sparkContext.master})")
        t = time.perf_counter()
        generate(spark, source, args.rows)
        timings["generate"] = time.perf_counter() - t
        print(f"generated {args.rows:,} events in {timings['generate']:.1f} s: {source}")
        print(
            f"$ python -m spark_udfs.repartition --input {source} --key-column user "
            f"--partitions {n} --output {output}"
        )
        t = time.perf_counter()
        result = run_pipeline(
            spark, input=source, key_column="user", partitions=n, output=output, overwrite=True
        )
        timings["pipeline"] = time.perf_counter() - t
        report = result.report
        print(report.format())
        steps = ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items())
        print(f"wrote {n} folders, partition=0 ... partition={n - 1}: {result.output}; {steps}")
        if args.keep:
            report.plot(chart)
            print(f"bar chart: {chart}")

        print(f"\n== 3. Spark writes every event to the topic {TOPIC!r} ({n} partitions)")
        admin = kgroup.AdminClient({"bootstrap.servers": bs})
        try:
            admin.create_topics([kgroup.NewTopic(TOPIC, n, 1)])[TOPIC].result(30)
            t = time.perf_counter()
            sink_rows = _write_topic(spark, source, bs, n, commit_report)
            timings["write"] = time.perf_counter() - t
            ends = _log_ends(admin, n)
            print(
                f"wrote {sum(sink_rows):,} records in {timings['write']:.1f} s, one Spark task "
                f"per Kafka partition; the sink's commit report: {commit_report}"
            )

            print(
                f"\n== 4. Three consumers read it as group {GROUP!r} (cooperative-sticky, "
                f"commits after processing)\n{LEAVER} leaves mid-way and comes back"
            )
            t = time.perf_counter()
            group = run_group(bs, TOPIC, ends, group=GROUP)
            timings["consume"] = time.perf_counter() - t
            committed = _committed(admin, n)
            ends = _log_ends(admin, n)
        finally:
            admin.close()

        t = time.perf_counter()
        read_back = (
            spark.read.format("kgroup")
            .option("kafka.bootstrap.servers", bs)
            .option("subscribe", TOPIC)
            .load()
            .count()
        )
        timings["read back"] = time.perf_counter() - t
    finally:
        spark.stop()

    spark_rows = list(report.rows)
    print("\n== 5. Per partition: Spark's rows, the records the consumers saw, the offsets")
    print(partition_table(spark_rows, sink_rows, group, committed, ends))
    print("\nEach generation's assignment while the group read, as the members' rebalance")
    print("callbacks saw it ((none): a member without partitions; -: not a member)")
    print(generation_table(group))
    results = checks(spark_rows, sink_rows, group, committed, ends, read_back)
    print("\nChecks")
    print("\n".join(c.format() for c in results))
    total = time.perf_counter() - started
    steps = ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
    print(f"\n{total:.0f} s in all: {steps}")
    if args.keep:
        print(f"kept in {work}: events/, by-partition/, skew.png, commit-report.json, broker/")
    failed = [c.text for c in results if not c.ok]
    print("every check holds" if not failed else f"{len(failed)} check(s) failed")
    return failed


def _write_topic(spark: Any, source: str, bootstrap: str, n: int, report_path: str) -> list[int]:
    """_write_topic writes the events at ``source`` to TOPIC: key the user, value the event as
    JSON, each row to the partition ``repartition_by_kafka_key`` computed (null-key rows
    spread as the pipeline spread them), one Spark task per Kafka partition. Returns the rows
    written per partition, from the sink's commit report."""
    from pyspark.sql import functions as F

    from spark_udfs.frame import repartition_by_kafka_key

    events = spark.read.parquet(source)
    laid = repartition_by_kafka_key(events, "user", n, partition_column="partition")
    (
        laid.select(
            F.col("user").alias("key"),
            F.to_json(F.struct(*[F.col(c) for c in events.columns])).alias("value"),
            F.col("partition"),
        )
        .write.format("kgroup")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", TOPIC)
        .option("kgroup.commitReport", report_path)
        .save()
    )
    with open(report_path, encoding="utf-8") as f:
        rows = json.load(f)["rows"].get(TOPIC, {})
    return [int(rows.get(str(p), 0)) for p in range(n)]


def _log_ends(admin: Any, n: int) -> list[int]:
    marks = admin.watermarks([(TOPIC, p) for p in range(n)])
    return [hi for _, hi in sorted((tp.partition, m[1]) for tp, m in marks.items())]


def _committed(admin: Any, n: int) -> list[int | None]:
    """The group's committed offset of each partition (None: none committed), as
    ``kgroup groups describe`` reads them."""
    got = admin.list_consumer_group_offsets(GROUP, request_timeout=30)[GROUP].result(30)
    offsets = {tp.partition: tp.offset for tp in got if tp.topic == TOPIC and tp.offset >= 0}
    return [offsets.get(p) for p in range(n)]
