"""The keyed repartitioning pipeline: one output folder per Kafka partition, and a skew report.

    python -m spark_udfs.repartition --input PATH --key-column K --partitions N --output DIR
        [--format parquet|csv|json] [--master URL] [--report FILE.png]

reads Parquet, CSV or JSON, lays the rows out so that Spark partition i holds exactly the rows
Kafka's producer sends to partition i, writes them to ``DIR/partition=0``, ``DIR/partition=1``,
... (one folder per Kafka partition, empty ones included), and prints how the rows spread:
rows per partition, max/mean and the heaviest keys.

Arguments are checked before Spark starts, the data's schema before any job runs. The output
is written to a hidden folder beside DIR and renamed to DIR at the end: a failed run leaves
nothing behind.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from kgroup.errors import InvalidArgument, InvalidType, KGroupError
from spark_udfs.frame import NullKeys, check_key_column, repartition_by_kafka_key
from spark_udfs.report import HeavyKey, SkewReport
from spark_udfs.udf import check_hash, check_partitions

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "FORMATS",
    "SAMPLE_ROWS",
    "PipelineResult",
    "detect_format",
    "main",
    "run_pipeline",
    "skew_report",
    "validate_args",
]

FORMATS = ("parquet", "csv", "json")
_EXTENSIONS = {
    ".parquet": "parquet",
    ".parq": "parquet",
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
}
_COMPRESSION = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".xz")


@dataclass
class PipelineResult:
    """PipelineResult is what a finished run wrote: its output folder, the skew report, and
    the wall seconds of each step (``read``: schema and checks, ``write``: partition, shuffle
    and write, ``report``: counting the written rows, ``commit``: the rename)."""

    output: str
    format: str
    report: SkewReport
    timings: dict[str, float] = field(default_factory=dict)


def _is_local_path(path: str) -> bool:
    scheme = urlparse(path).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


def _local(path: str) -> str:
    return urlparse(path).path if path.startswith("file:") else path


def _format_of_name(name: str) -> str | None:
    base = name.lower()
    for suffix in _COMPRESSION:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    return _EXTENSIONS.get(os.path.splitext(base)[1])


def detect_format(path: str) -> str:
    """detect_format names the format of ``path`` from its files' extensions (a file, a folder
    of files such as Spark writes, or a glob), or raises InvalidArgument when it cannot tell."""
    fmt = _format_of_name(path.rstrip("/"))
    if fmt is not None:
        return fmt
    if _is_local_path(path):
        local = _local(path)
        candidates = glob.glob(local) if glob.has_magic(local) else [local]
        for top in candidates:
            if os.path.isfile(top):
                fmt = _format_of_name(top)
            else:
                fmt = _format_in_dir(top)
            if fmt is not None:
                return fmt
    raise InvalidArgument(f"cannot tell the format of {path!r} from its file names: pass --format")


def _format_in_dir(top: str) -> str | None:
    for _root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(files):
            if name.startswith((".", "_")):
                continue
            fmt = _format_of_name(name)
            if fmt is not None:
                return fmt
    return None


def validate_args(
    *,
    input: str,
    key_column: str,
    partitions: int,
    output: str,
    fmt: str | None = None,
    output_format: str | None = None,
    hash: str = "murmur2",
    null_keys: str = "spread",
    partition_column: str = "partition",
    overwrite: bool = False,
    top_keys: int = 10,
) -> tuple[str, str]:
    """validate_args checks everything that needs no Spark and returns the input and output
    formats. Raises InvalidArgument / InvalidType naming the problem."""
    check_partitions(partitions)
    check_hash(hash)
    if not key_column:
        raise InvalidArgument("the key column name is empty")
    if not partition_column:
        raise InvalidArgument("the partition column name is empty")
    if null_keys not in ("spread", "drop"):
        raise InvalidArgument(f"null keys must be 'spread' or 'drop', got {null_keys!r}")
    if top_keys < 0:
        raise InvalidArgument(f"top keys must be 0 or more, got {top_keys}")
    for name, f in (("format", fmt), ("output format", output_format)):
        if f is not None and f not in FORMATS:
            raise InvalidArgument(f"unknown {name} {f!r}: expected one of {', '.join(FORMATS)}")
    if _is_local_path(input):
        local = _local(input)
        matches = glob.glob(local) if glob.has_magic(local) else [local]
        if not matches or not all(os.path.exists(m) for m in matches):
            raise InvalidArgument(f"cannot read input {input!r}: no such file or directory")
        for m in matches:
            if not os.access(m, os.R_OK):
                raise InvalidArgument(f"cannot read input {m!r}: permission denied")
    if fmt is None:
        fmt = detect_format(input)
    if _is_local_path(output) and _is_local_path(input) and not glob.has_magic(_local(input)):
        src = os.path.realpath(_local(input))
        dst = os.path.realpath(_local(output))
        if src == dst or src.startswith(dst + os.sep) or dst.startswith(src + os.sep):
            raise InvalidArgument(
                f"output {output!r} and input {input!r} overlap: write somewhere else"
            )
    if _is_local_path(output) and not overwrite:
        out = _local(output)
        if os.path.exists(out) and not (os.path.isdir(out) and not os.listdir(out)):
            raise InvalidArgument(
                f"output {output!r} already exists: pass --overwrite to replace it"
            )
    out_fmt = output_format or fmt
    columns = _local_columns(input, fmt)
    if columns is not None:
        _check_columns(columns, key_column, partition_column, out_fmt)
    return fmt, out_fmt


def _local_columns(path: str, fmt: str) -> dict[str, str] | None:
    """_local_columns reads the column names and kinds (``string``, ``binary`` or the type's
    name) of a local Parquet or CSV input from its first file, without Spark: a wrong key
    column is reported before Spark starts. None when it cannot tell cheaply (JSON, remote
    storage, unusual compression); Spark's schema is checked again later."""
    if not _is_local_path(path) or fmt not in ("parquet", "csv"):
        return None
    first = _first_data_file(_local(path))
    if first is None:
        return None
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(first)
        except (OSError, pa.ArrowException) as e:
            raise InvalidArgument(f"cannot read input {first!r} as parquet: {e}") from None
        return {f.name: _arrow_kind(f.type) for f in schema}
    ext = os.path.splitext(first)[1].lower()
    opener = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}.get(ext, "")
    if not opener and ext in _COMPRESSION:
        return None
    import csv
    import importlib

    open_ = importlib.import_module(opener).open if opener else open
    try:
        with open_(first, "rt", encoding="utf-8", newline="") as f:
            # Spark's CSV defaults: comma, double quotes, backslash escapes.
            header = next(csv.reader(f, escapechar="\\"), None)
    except (OSError, UnicodeDecodeError, EOFError, csv.Error) as e:
        raise InvalidArgument(f"cannot read input {first!r} as csv: {e}") from None
    if header is None:
        return None
    return dict.fromkeys(header, "string")


def _first_data_file(path: str) -> str | None:
    matches = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
    for m in matches:
        if os.path.isfile(m):
            return m
        for root, dirs, files in os.walk(m):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
            for name in sorted(files):
                if not name.startswith((".", "_")):
                    return os.path.join(root, name)
    return None


def _arrow_kind(t: object) -> str:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_binary_view(t)
        or pa.types.is_fixed_size_binary(t)
    ):
        return "binary"
    if pa.types.is_nested(t):
        return f"nested {t}"
    return str(t)


def _check_columns(
    columns: dict[str, str], key_column: str, partition_column: str, out_fmt: str
) -> None:
    if key_column not in columns:
        folded = [c for c in columns if c.lower() == key_column.lower()]
        hint = f" (did you mean {folded[0]!r}?)" if folded else ""
        names = ", ".join(columns) or "none"
        raise InvalidArgument(
            f"key column {key_column!r} not found{hint}; the columns are: {names}"
        )
    kind = columns[key_column]
    if kind not in ("string", "binary"):
        raise InvalidType(
            f"key column {key_column!r} is {kind}: Kafka partitions the serialized key bytes, "
            "so the key column must be string or binary "
            "(cast it to the bytes your producer's key serializer writes)"
        )
    if partition_column in columns:
        raise InvalidArgument(
            f"the input already has a column {partition_column!r}: "
            "choose another name with --partition-column"
        )
    if out_fmt == "csv":
        for name, kind in columns.items():
            if kind == "binary" or kind.startswith("nested"):
                raise InvalidType(
                    f"column {name!r} is {kind}, which CSV cannot hold: "
                    "choose --output-format parquet or json"
                )


class _FileSystem:
    """_FileSystem is Hadoop's FileSystem API through the JVM, so the pipeline commits on a
    local disk, HDFS or an object store alike."""

    def __init__(self, spark: SparkSession, path: str) -> None:
        jvm = spark.sparkContext._jvm
        self._path = jvm.org.apache.hadoop.fs.Path
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        self._fs = self._path(path).getFileSystem(conf)

    def qualify(self, path: str) -> str:
        return str(self._fs.makeQualified(self._path(path)).toString())

    def exists(self, path: str) -> bool:
        return bool(self._fs.exists(self._path(path)))

    def is_empty_dir(self, path: str) -> bool:
        p = self._path(path)
        return bool(self._fs.getFileStatus(p).isDirectory()) and len(self._fs.listStatus(p)) == 0

    def mkdirs(self, path: str) -> None:
        self._fs.mkdirs(self._path(path))

    def rename(self, src: str, dst: str) -> None:
        if not self._fs.rename(self._path(src), self._path(dst)):
            raise OSError(f"could not rename {src} to {dst}")

    def delete(self, path: str) -> None:
        self._fs.delete(self._path(path), True)


def _sibling(output: str, tag: str) -> str:
    # Beside the output, so the final rename stays within one file system; not hidden (a
    # leading "." or "_"), because Spark's readers skip hidden paths.
    parent, name = output.rstrip("/").rsplit("/", 1) if "/" in output.rstrip("/") else ("", output)
    sibling = f"{name}.kgroup-{tag}-{uuid.uuid4().hex[:12]}"
    return f"{parent}/{sibling}" if parent else sibling


def read_input(spark: SparkSession, path: str, fmt: str) -> DataFrame:
    """read_input reads ``path`` as ``fmt``: CSV with a header line and every column a string
    (a key is exactly the text in the file), JSON lines and Parquet with their own types.
    Raises InvalidArgument when Spark cannot read it."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "false")
    try:
        df = reader.load(path)
        df.schema  # noqa: B018 - resolves the schema: a bad input fails here, not mid-job
    except (PySparkException, Py4JJavaError) as e:
        raise InvalidArgument(f"cannot read input {path!r} as {fmt}: {_first_line(e)}") from None
    if not df.columns:
        raise InvalidArgument(f"cannot read input {path!r} as {fmt}: it holds no columns")
    return df


def _check_writable(df: DataFrame, fmt: str) -> None:
    from pyspark.sql.types import ArrayType, BinaryType, MapType, StructType

    if fmt != "csv":
        return
    for f in df.schema.fields:
        if isinstance(f.dataType, BinaryType | ArrayType | MapType | StructType):
            raise InvalidType(
                f"column {f.name!r} is {f.dataType.simpleString()}, which CSV cannot hold: "
                "choose --output-format parquet or json"
            )


def run_pipeline(
    spark: SparkSession,
    *,
    input: str,
    key_column: str,
    partitions: int,
    output: str,
    fmt: str | None = None,
    output_format: str | None = None,
    hash: str = "murmur2",
    sort_within: bool = False,
    null_keys: NullKeys = "spread",
    partition_column: str = "partition",
    overwrite: bool = False,
    top_keys: int = 10,
) -> PipelineResult:
    """run_pipeline reads ``input``, writes it to ``output`` with one folder per Kafka
    partition (``partition=0`` ... ``partition=N-1``; Spark partition i held exactly the rows
    of Kafka partition i, so each folder is written by one task) and returns the skew report.

    Everything is checked before the first job; the output appears only when complete.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, StructField, StructType

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    in_fmt, out_fmt = validate_args(
        input=input,
        key_column=key_column,
        partitions=partitions,
        output=output,
        fmt=fmt,
        output_format=output_format,
        hash=hash,
        null_keys=null_keys,
        partition_column=partition_column,
        overwrite=overwrite,
        top_keys=top_keys,
    )
    df = read_input(spark, input, in_fmt)
    check_key_column(df, key_column)
    if partition_column in df.columns:
        raise InvalidArgument(
            f"the input already has a column {partition_column!r}: "
            "choose another name with --partition-column"
        )
    _check_writable(df, out_fmt)
    fs = _FileSystem(spark, output)
    output = fs.qualify(output)
    if fs.exists(output) and not overwrite and not fs.is_empty_dir(output):
        raise InvalidArgument(f"output {output!r} already exists: pass --overwrite to replace it")
    laid_out = repartition_by_kafka_key(
        df,
        key_column,
        partitions,
        hash=hash,
        partition_column=partition_column,
        null_keys=null_keys,
    )
    if sort_within:
        # Sorted by (partition, key) the rows already have the order a partitioned write
        # requires, so Spark adds no sort of its own that would undo the key order.
        laid_out = laid_out.sortWithinPartitions(
            F.col(f"`{partition_column}`"), F.col(f"`{key_column}`")
        )
    timings["read"] = time.perf_counter() - t0

    tmp = _sibling(output, "tmp")
    try:
        t = time.perf_counter()
        writer = laid_out.write.format(out_fmt).partitionBy(partition_column)
        if out_fmt == "csv":
            writer = writer.option("header", "true")
        spark.sparkContext.setJobDescription(f"kgroup: partition by {key_column} and write")
        # Each task holds one Kafka partition, so one open writer per task is enough: Spark
        # then skips the sort by partition value it does before a partitioned write.
        with _session_conf(spark, {"spark.sql.maxConcurrentOutputFileWriters": "1"}):
            writer.save(tmp)
        # One folder per Kafka partition, also for partitions no key maps to.
        for p in range(partitions):
            folder = f"{tmp}/{partition_column}={p}"
            if not fs.exists(folder):
                fs.mkdirs(folder)
        timings["write"] = time.perf_counter() - t

        t = time.perf_counter()
        spark.sparkContext.setJobDescription("kgroup: skew report")
        schema = StructType(
            [f for f in df.schema.fields] + [StructField(partition_column, IntegerType())]
        )
        reader = spark.read.format(out_fmt).schema(schema)
        if out_fmt == "csv":
            reader = reader.option("header", "true")
        written = reader.load(tmp)
        report = skew_report(written, key_column, partition_column, partitions, hash, top_keys)
        timings["report"] = time.perf_counter() - t

        t = time.perf_counter()
        _commit(fs, tmp, output, overwrite)
        timings["commit"] = time.perf_counter() - t
    except BaseException:
        fs.delete(tmp)
        raise
    finally:
        spark.sparkContext.setJobDescription(None)
    return PipelineResult(output=output, format=out_fmt, report=report, timings=timings)


@contextlib.contextmanager
def _session_conf(spark: SparkSession, conf: dict[str, str]) -> Iterator[None]:
    old = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


# SAMPLE_ROWS is about how many rows skew_report samples to find candidate heavy keys.
SAMPLE_ROWS = 200_000


def skew_report(
    df: DataFrame,
    key_column: str,
    partition_column: str,
    partitions: int,
    hash: str,
    top_keys: int = 10,
) -> SkewReport:
    """skew_report counts ``df``'s rows per Kafka partition and its heaviest keys.

    Row counts are exact. The heaviest keys are found without aggregating every distinct key
    (that would cost more than the whole pipeline): the keys of a sample of about SAMPLE_ROWS
    rows are the candidates, and the candidates' rows are then counted exactly. The keys reported
    are the heaviest unless one holds under about 0.05% of the rows or ties with a lighter key
    within the sample's noise: such keys cause no skew worth reporting.
    """
    from pyspark.sql import functions as F

    key = F.col(f"`{key_column}`")
    part = F.col(f"`{partition_column}`")
    rows = [0] * partitions
    nulls = 0
    for r in (
        df.groupBy(part)
        .agg(F.count(F.lit(1)).alias("rows"), F.count_if(key.isNull()).alias("nulls"))
        .collect()
    ):
        rows[r[0]] = r["rows"]
        nulls += r["nulls"]
    total = sum(rows) - nulls
    heavy: list[HeavyKey] = []
    if top_keys and total:
        keyed = df.where(key.isNotNull())
        fraction = min(1.0, SAMPLE_ROWS / total)
        if fraction < 1.0:
            sample = keyed.select(key).sample(fraction=fraction, seed=42)
            candidates = [
                r[0]
                for r in sample.groupBy(key)
                .count()
                .orderBy(F.desc("count"), key)
                .limit(max(100, 10 * top_keys))
                .collect()
            ]
            keyed = keyed.where(key.isin(candidates))
        top = (
            keyed.groupBy(part, key).count().orderBy(F.desc("count"), key).limit(top_keys).collect()
        )
        heavy = [HeavyKey(key=_key_value(r[1]), rows=r[2], partition=r[0]) for r in top]
    return SkewReport(
        num_partitions=partitions,
        hash=hash,
        rows=tuple(rows),
        null_key_rows=nulls,
        heavy_keys=tuple(heavy),
    )


def _key_value(value: object) -> str | bytes:
    # Spark returns binary values as bytearray.
    return bytes(value) if isinstance(value, bytearray) else value  # type: ignore[return-value]


def _commit(fs: _FileSystem, tmp: str, output: str, overwrite: bool) -> None:
    if not fs.exists(output):
        fs.rename(tmp, output)
        return
    if not overwrite and not fs.is_empty_dir(output):
        raise InvalidArgument(f"output {output!r} appeared while the pipeline ran")
    old = _sibling(output, "old")
    fs.rename(output, old)
    try:
        fs.rename(tmp, output)
    except BaseException:
        fs.rename(old, output)
        raise
    fs.delete(old)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return type(e).__name__


def _check_report_path(path: str) -> None:
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".png", ".svg", ".pdf"):
        raise InvalidArgument(f"the report {path!r} must end in .png, .svg or .pdf")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise InvalidArgument(
            f"cannot write the report {path!r}: {folder} is not a writable folder"
        )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m spark_udfs.repartition",
        description="Lay a keyed dataset out by Kafka partition: one folder per partition "
        "(partition=0, ...), holding exactly the rows Kafka's producer sends there, "
        "and a report of the skew.",
    )
    p.add_argument("--input", required=True, help="Parquet, CSV or JSON file, folder or glob")
    p.add_argument("--key-column", required=True, help="the string or binary key column")
    p.add_argument("--partitions", required=True, type=int, help="the topic's partition count")
    p.add_argument("--output", required=True, help="the folder to create")
    p.add_argument("--format", choices=FORMATS, help="input format (default: from file names)")
    p.add_argument("--output-format", choices=FORMATS, help="default: the input format")
    p.add_argument("--master", help="Spark master URL (default: local[*], or spark-submit's)")
    p.add_argument("--report", metavar="FILE.png", help="also draw the skew as a bar chart")
    p.add_argument(
        "--hash",
        default="murmur2",
        choices=("murmur2", "crc32", "fnv1a"),
        help="the producer's partitioner: murmur2 (Java, default), crc32 (librdkafka's "
        "consistent), fnv1a",
    )
    p.add_argument("--sort-within", action="store_true", help="sort each partition by key")
    p.add_argument(
        "--null-keys",
        default="spread",
        choices=("spread", "drop"),
        help="rows with a null key: spread over all partitions (default) or drop them",
    )
    p.add_argument("--partition-column", default="partition", help="folder name prefix")
    p.add_argument("--top-keys", type=int, default=10, help="heaviest keys to report")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    p.add_argument("--no-progress", action="store_true", help="hide Spark's progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    """main runs the pipeline from the command line; returns 0, 2 for bad arguments or input
    (nothing is started), 1 when Spark fails mid-run (nothing is left in the output)."""
    args = _parser().parse_args(argv)
    options = dict(
        input=args.input,
        key_column=args.key_column,
        partitions=args.partitions,
        output=args.output,
        fmt=args.format,
        output_format=args.output_format,
        hash=args.hash,
        null_keys=args.null_keys,
        partition_column=args.partition_column,
        overwrite=args.overwrite,
        top_keys=args.top_keys,
    )
    try:
        validate_args(**options)
        if args.report:
            _check_report_path(args.report)
    except KGroupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    from pyspark.sql import SparkSession

    from spark_udfs.session import get_session

    start = time.perf_counter()
    ours = SparkSession.getActiveSession() is None
    spark = get_session(args.master, app_name="kgroup repartition", progress=not args.no_progress)
    startup = time.perf_counter() - start
    try:
        result = run_pipeline(spark, sort_within=args.sort_within, **options)
    except KGroupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        print(
            f"error: the run failed and nothing was written to {args.output}: {_first_line(e)}",
            file=sys.stderr,
        )
        return 1
    finally:
        if ours:
            spark.stop()
    print(result.report.format())
    if args.report:
        result.report.plot(args.report)
        print(f"bar chart: {args.report}")
    steps = ", ".join(f"{k} {v:.1f} s" for k, v in {"spark": startup, **result.timings}.items())
    print(f"wrote {result.output} ({result.format}); {steps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
