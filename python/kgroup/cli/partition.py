"""``kgroup partition``: the partition each key goes to, as a Kafka producer would choose it.

kgroup partition --partitions 12 KEY...            where each key goes
kgroup partition --partitions 12 --file keys.txt   one key per line
kgroup partition --partitions 12 --file t.parquet --column user_id --summary
kgroup partition --partitions 12 --sample 1000000 --summary
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from kgroup import HASH_NAMES, partition_keys
from kgroup.errors import KGroupError

__all__ = ["add_parser", "run"]


def _read_keys(path: str, column: str | None, fmt: str) -> Any:
    p = Path(path)
    if fmt == "auto":
        fmt = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}.get(
            p.suffix.lower(), "lines"
        )
    if fmt == "lines":
        if column is not None:
            raise KGroupError("--column needs a Parquet or CSV file")
        data = p.read_bytes()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        return [line[:-1] if line.endswith(b"\r") else line for line in lines]
    if column is None:
        raise KGroupError(f"--column is required for a {fmt} file")
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq
    except ImportError as e:  # pragma: no cover - pyarrow is an optional dependency
        raise KGroupError(
            "reading Parquet or CSV needs pyarrow: pip install 'kgroup[arrow]'"
        ) from e
    if fmt == "parquet":
        schema = pq.read_schema(p)
        if column not in schema.names:
            raise KGroupError(
                f"column {column!r} is not in {path} (columns: {', '.join(schema.names)})"
            )
        return pq.read_table(p, columns=[column]).column(column)
    opts = pacsv.ConvertOptions(include_columns=[column], column_types={column: pa.string()})
    try:
        table = pacsv.read_csv(p, convert_options=opts)
    except (pa.ArrowInvalid, KeyError) as e:
        raise KGroupError(f"cannot read column {column!r} of {path}: {e}") from e
    return table.column(column)


def _sample_keys(n: int) -> Any:
    """n distinct keys shaped like real ones (``user-00000042``), as an Arrow array if possible."""
    keys = np.char.add("user-", np.char.zfill(np.arange(n).astype("U8"), 8))
    try:
        import pyarrow as pa

        return pa.array(keys, type=pa.string())
    except ImportError:  # pragma: no cover
        return keys


def _as_text(key: Any) -> str:
    if key is None:
        return "<null>"
    if isinstance(key, bytes):
        return key.decode("utf-8", errors="backslashreplace")
    return str(key)


def _summary(parts: np.ndarray, num_partitions: int, elapsed: float, out: Any) -> None:
    keyed = parts[parts >= 0]
    counts = np.bincount(keyed, minlength=num_partitions)
    nulls = int((parts < 0).sum())
    print(f"{len(parts):,} keys, {num_partitions} partitions", file=out)
    width = len(str(num_partitions - 1))
    total = max(1, len(keyed))
    for p, c in enumerate(counts):
        print(f"partition {p:>{width}}  {int(c):>12,}  {100.0 * c / total:6.2f}%", file=out)
    if nulls:
        print(f"null keys (not hashed): {nulls:,}", file=out)
    mean = counts.mean() if num_partitions else 0.0
    skew = float(counts.max() / mean) if mean > 0 else 0.0
    print(f"skew (max / mean): {skew:.4f}", file=out)
    if elapsed > 0:
        print(
            f"partitioned in {elapsed * 1e3:.1f} ms ({len(parts) / elapsed / 1e6:.1f} M keys/s)",
            file=out,
        )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the ``partition`` subcommand; returns the exit status."""
    sources = sum(x is not None and x != [] for x in (args.keys or None, args.file, args.sample))
    if sources != 1:
        raise KGroupError("give keys as arguments, or --file PATH, or --sample N (one of them)")
    if args.file is not None:
        keys = _read_keys(args.file, args.column, args.format)
    elif args.sample is not None:
        if args.sample < 0:
            raise KGroupError("--sample must be >= 0")
        keys = _sample_keys(args.sample)
    else:
        keys = list(args.keys)
    start = time.perf_counter()
    parts = partition_keys(keys, args.partitions, hash=args.hash)
    elapsed = time.perf_counter() - start
    out = out or sys.stdout
    if args.summary:
        _summary(parts, args.partitions, elapsed, out)
        return 0
    as_list = keys.to_pylist() if hasattr(keys, "to_pylist") else list(keys)
    write = out.write
    for key, part in zip(as_list, parts.tolist(), strict=True):
        write(f"{_as_text(key)}\t{part}\n")
    return 0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``partition`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "partition",
        help="show the partition each key goes to, as a Kafka producer would choose it",
        description="Print KEY<TAB>PARTITION for each key, or per-partition counts with --summary.",
    )
    p.add_argument("keys", nargs="*", metavar="KEY", help="keys (encoded as UTF-8)")
    p.add_argument(
        "--partitions", "-p", type=int, required=True, help="the topic's partition count"
    )
    p.add_argument(
        "--hash",
        choices=HASH_NAMES,
        default="murmur2",
        help="murmur2: Java, kafka-python, franz-go (default); crc32: librdkafka's default "
        "(confluent-kafka); fnv1a: librdkafka fnv1a, Sarama",
    )
    p.add_argument("--file", "-f", help="read keys from a file: one per line, or Parquet / CSV")
    p.add_argument("--column", "-c", help="the key column of a Parquet or CSV file")
    p.add_argument("--format", choices=("auto", "lines", "csv", "parquet"), default="auto")
    p.add_argument("--sample", type=int, metavar="N", help="partition N generated sample keys")
    p.add_argument("--summary", "-s", action="store_true", help="per-partition counts and skew")
    p.set_defaults(func=run)
    return p
