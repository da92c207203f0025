"""kgroup.testing under pytest-xdist: with the session scope each worker has a broker of its
own (each worker is a pytest session), shared by that worker's tests; with the function scope
every test has its own, whichever worker runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.kit import plugin_args

TESTS = """
import json, os, pathlib

import pytest


@pytest.mark.parametrize("n", range(8))
def test_uses_broker(kgroup_broker, n):
    kgroup_broker.create_topic(f"t{n}")
    line = {"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
            "broker": kgroup_broker.bootstrap_servers, "topics": sorted(kgroup_broker.topics())}
    with open(pathlib.Path(os.environ["KIT_OUT"]), "a") as f:
        f.write(json.dumps(line) + "\\n")
"""


def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> list[dict]:
    out = pytester.path / "out.jsonl"
    monkeypatch.setenv("KIT_OUT", str(out))
    pytester.makepyfile(test_x=TESTS)
    result = pytester.runpytest_subprocess(
        *plugin_args(), "-n", "2", "-p", "no:cacheprovider", *args
    )
    result.assert_outcomes(passed=8)
    return [json.loads(line) for line in Path(out).read_text().splitlines()]


@pytest.mark.network
def test_session_scope_is_one_broker_per_worker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = run(pytester, monkeypatch, "--kgroup-broker-scope=session")
    by_worker: dict[str, set[str]] = {}
    for line in lines:
        by_worker.setdefault(line["worker"], set()).add(line["broker"])
    assert set(by_worker) == {"gw0", "gw1"}
    assert all(len(brokers) == 1 for brokers in by_worker.values())
    assert by_worker["gw0"] != by_worker["gw1"]
    # A worker's tests share its broker: each sees the topics its predecessors made there.
    assert max(len(line["topics"]) for line in lines) > 1


@pytest.mark.network
def test_function_scope_is_one_broker_per_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = run(pytester, monkeypatch)
    assert all(len(line["topics"]) == 1 for line in lines)
