"""``kgroup assign`` through its functions, and through ``kgroup``'s ``main``."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from kgroup.cli import main
from kgroup.cli.assign import add_parser as add_assign_parser
from kgroup.cli.assign import run as run_assign
from kgroup.errors import InvalidArgument


def run(*argv: str) -> str:
    parser = argparse.ArgumentParser(prog="kgroup")
    add_assign_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["assign", *argv])
    out = io.StringIO()
    assert args.func(args, out) == 0
    return out.getvalue()


def test_prints_each_members_partitions():
    text = run("--strategy", "range", "--topics", "t1:4,t2:2", "--members", "2")
    assert text.splitlines() == ["member-0     3  t1-0 t1-1 t2-0", "member-1     3  t1-2 t1-3 t2-1"]


def test_json_chains_into_previous_and_reports_moves(tmp_path):
    first = json.loads(
        run("--strategy", "sticky", "--topics", "orders:6", "--members", "2", "--json")
    )
    assert first["assignment"] == {
        "member-0": ["orders-0", "orders-2", "orders-4"],
        "member-1": ["orders-1", "orders-3", "orders-5"],
    }
    prev = tmp_path / "round1.json"
    prev.write_text(json.dumps(first))
    second = json.loads(
        run(
            "--strategy",
            "sticky",
            "--topics",
            "orders:6",
            "--members",
            "3",
            "--previous",
            str(prev),
            "--json",
        )
    )
    # The newcomer takes one partition from each: two moves, the rest stays.
    assert second["assignment"]["member-2"] == ["orders-4", "orders-5"]
    assert second["moved"] == [
        {"partition": "orders-4", "from": "member-0", "to": "member-2"},
        {"partition": "orders-5", "from": "member-1", "to": "member-2"},
    ]
    text = run(
        "--strategy",
        "cooperative-sticky",
        "--topics",
        "orders:6",
        "--members",
        "3",
        "--previous",
        str(prev),
    )
    assert "withheld until the next round" in text
    assert "orders-4 -> member-2" in text
    assert "2 partition(s) moved" in text


def test_subscriptions_file(tmp_path):
    subs = tmp_path / "subs.json"
    subs.write_text(
        json.dumps({"a": ["t0"], "b": {"topics": ["t0", "t1"]}, "c": ["t0", "t1", "t2"]})
    )
    out = json.loads(
        run(
            "--strategy",
            "roundrobin",
            "--topics",
            "t0:1,t1:2,t2:3",
            "--subscriptions",
            str(subs),
            "--json",
        )
    )
    assert out["assignment"] == {
        "a": ["t0-0"],
        "b": ["t1-0"],
        "c": ["t1-1", "t2-0", "t2-1", "t2-2"],
    }


@pytest.mark.parametrize(
    "argv",
    [
        ("--strategy", "range", "--topics", "t", "--members", "2"),
        ("--strategy", "range", "--topics", "t:x", "--members", "2"),
        ("--strategy", "range", "--topics", "t:3"),
    ],
)
def test_bad_arguments(argv):
    with pytest.raises(InvalidArgument):
        run(*argv)


def test_unknown_strategy_is_an_argparse_error():
    with pytest.raises(SystemExit):
        run("--strategy", "uniform", "--topics", "t:1", "--members", "1")


def test_run_assign_defaults_to_stdout(capsys):
    args = argparse.Namespace(
        strategy="roundrobin",
        topics="t:2",
        members=1,
        subscriptions=None,
        previous=None,
        generation=1,
        json=False,
    )
    assert run_assign(args) == 0
    assert capsys.readouterr().out == "member-0     2  t-0 t-1\n"


def test_assign_subcommand_is_wired(capsys) -> None:
    assert main(["assign", "--strategy", "range", "--topics", "t:3", "--members", "2"]) == 0
    out = capsys.readouterr().out
    assert "t-0" in out and "t-2" in out
