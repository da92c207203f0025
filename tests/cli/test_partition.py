"""The `kgroup partition` command, run as a user runs it."""

import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import kgroup
from kgroup.cli import main


def test_keys_as_arguments(capsys) -> None:
    assert main(["partition", "--partitions", "12", "foobar", "21", ""]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"foobar\t{kgroup.partition_for_key('foobar', 12)}",
        "21\t0",
        f"\t{kgroup.partition_for_key(b'', 12)}",
    ]


def test_hash_option(capsys) -> None:
    main(["partition", "-p", "15", "--hash", "crc32", "TT0124"])
    assert capsys.readouterr().out == "TT0124\t9\n"  # kafkajs#1154: librdkafka's default gives 9


def test_file_of_lines(tmp_path, capsys) -> None:
    f = tmp_path / "keys.txt"
    f.write_bytes(b"a\r\nab\nabc\n")
    main(["partition", "-p", "1000", "--file", str(f)])
    assert capsys.readouterr().out == "a\t524\nab\t434\nabc\t107\n"


def test_parquet_and_csv_columns(tmp_path, capsys) -> None:
    table = pa.table({"id": [1, 2, 3], "user": ["a", None, "abc"]})
    pq.write_table(table, tmp_path / "t.parquet")
    main(["partition", "-p", "1000", "--file", str(tmp_path / "t.parquet"), "--column", "user"])
    assert capsys.readouterr().out == "a\t524\n<null>\t-1\nabc\t107\n"
    (tmp_path / "t.csv").write_text("id,user\n1,a\n2,ab\n3,007\n")
    main(["partition", "-p", "1000", "-f", str(tmp_path / "t.csv"), "-c", "user"])
    # CSV cells are keys as text: "007" stays "007", not the number 7.
    assert (
        capsys.readouterr().out
        == f"a\t524\nab\t434\n007\t{kgroup.partition_for_key('007', 1000)}\n"
    )


def test_summary(capsys) -> None:
    main(["partition", "-p", "12", "--sample", "120000", "--summary"])
    out = capsys.readouterr().out
    assert "120,000 keys, 12 partitions" in out
    assert out.count("partition ") == 12
    skew = float(out.split("skew (max / mean): ")[1].split()[0])
    assert 1.0 <= skew < 1.05


def test_errors_are_messages_not_tracebacks(tmp_path, capsys) -> None:
    assert main(["partition", "-p", "3", "--file", str(tmp_path / "missing.txt")]) == 2
    assert "No such file" in capsys.readouterr().err
    pq.write_table(pa.table({"a": [1]}), tmp_path / "t.parquet")
    assert main(["partition", "-p", "3", "-f", str(tmp_path / "t.parquet"), "-c", "user"]) == 2
    assert "column 'user' is not in" in capsys.readouterr().err
    assert main(["partition", "-p", "0", "k"]) == 2
    assert "num_partitions" in capsys.readouterr().err
    assert main(["partition", "-p", "3"]) == 2
    with pytest.raises(SystemExit):
        main(["partition", "-p", "3", "--hash", "md5", "k"])


def test_console_script_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kgroup.cli", "partition", "-p", "1000", "abc"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == "abc\t107\n"


def test_closed_pipe_is_not_an_error() -> None:
    # As in `kgroup partition ... | head -1`: the reader leaves long before the last key.
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgroup.cli", "partition", "-p", "12", "--sample", "1000000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"user-00000000\t")
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""
