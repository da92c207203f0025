"""scripts/check_protocol_spec.py finds every kind of difference it promises to report.

The real comparison runs against a checkout of apache/kafka (see the script); here it runs
against spec files written back from kgroup's own definitions, clean and then altered.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from kgroup import protocol

SCRIPT = Path(__file__).parents[2] / "scripts" / "check_protocol_spec.py"
spec = importlib.util.spec_from_file_location("check_protocol_spec", SCRIPT)
assert spec is not None and spec.loader is not None
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)


def camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def kafka_field(f: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": camel(f["name"]), "versions": f["versions"]}
    t = f["type"]
    out["type"] = {"struct": "SomeStruct", "[]struct": "[]SomeStruct"}.get(t, t)
    if f["nullable_versions"] != "none":
        out["nullableVersions"] = f["nullable_versions"]
    if f["tag"] is not None:
        out["tag"] = f["tag"]
        out["taggedVersions"] = f["tagged_versions"]
    if f["flexible_versions"] is not None:
        out["flexibleVersions"] = f["flexible_versions"]
    if f["default"] is not None:
        out["default"] = f["default"]
    if f["ignorable"]:
        out["ignorable"] = True
    if f["fields"]:
        out["fields"] = [kafka_field(g) for g in f["fields"]]
    return out


def write_specs(root: Path, definitions: list[dict[str, Any]]) -> Path:
    folder = root / check.MESSAGES
    folder.mkdir(parents=True)
    for d in definitions:
        doc = {
            "apiKey": d["api_key"],
            "type": d["type"],
            "name": d["name"],
            "validVersions": d["valid_versions"],
            "flexibleVersions": d["flexible_versions"],
            "fields": [kafka_field(f) for f in d["fields"]],
        }
        if d["type"] == "header":
            del doc["apiKey"]
        (folder / f"{d['name']}.json").write_text("// a comment\n" + json.dumps(doc, indent=1))
    return root


def test_identical_specs_report_nothing(tmp_path: Path, capsys) -> None:
    root = write_specs(tmp_path, protocol.definitions())
    assert check.main([str(root)]) == 0
    assert capsys.readouterr().out == ""


def field_of(defs: list[dict], message: str, *path: str) -> dict:
    fields = next(d for d in defs if d["name"] == message)["fields"]
    f: dict = {}
    for name in path:
        f = next(x for x in fields if x["name"] == name)
        fields = f["fields"]
    return f


@pytest.mark.parametrize(
    ("change", "report"),
    [
        (
            lambda f: f.update(versions="2+"),
            "JoinGroupRequest.rebalance_timeout_ms: versions is '1+'",
        ),
        (
            lambda f: f.update(nullable_versions="1+"),
            "JoinGroupRequest.rebalance_timeout_ms: nullable versions is 'none', Kafka's is '1+'",
        ),
        (
            lambda f: f.update(type="int64"),
            "rebalance_timeout_ms: type is 'int32', Kafka's is 'int64'",
        ),
        (lambda f: f.update(default="5"), "rebalance_timeout_ms: default is '-1', Kafka's is '5'"),
        (lambda f: f.update(ignorable=False), "ignorable is True, Kafka's is False"),
        (lambda f: f.update(name="rebalance_timeout"), "field 2 is 'rebalance_timeout_ms'"),
        (lambda f: f.update(tag=3, tagged_versions="6+"), "tag is None, Kafka's is 3"),
    ],
)
def test_each_kind_of_difference_is_reported(tmp_path: Path, capsys, change, report) -> None:
    theirs = copy.deepcopy(protocol.definitions())
    change(field_of(theirs, "JoinGroupRequest", "rebalance_timeout_ms"))
    assert check.main([str(write_specs(tmp_path, theirs))]) == 1
    assert report in capsys.readouterr().out


def test_nested_and_message_level_differences(tmp_path: Path, capsys) -> None:
    theirs = copy.deepcopy(protocol.definitions())
    field_of(theirs, "FetchRequest", "topics", "partitions")["fields"].pop()
    next(d for d in theirs if d["name"] == "HeartbeatResponse")["valid_versions"] = "0-5"
    assert check.main([str(write_specs(tmp_path, theirs))]) == 1
    out = capsys.readouterr().out
    assert (
        "FetchRequest.topics.partitions: field replica_directory_id is not in Kafka's spec" in out
    )
    assert "HeartbeatResponse: valid versions are '0-4', Kafka's are '0-5'" in out


def test_snake_case_matches_kafka_names() -> None:
    assert check.snake("RebalanceTimeoutMs") == "rebalance_timeout_ms"
    assert check.snake("TopicId") == "topic_id"
    assert check.snake("ZkMigrationReady") == "zk_migration_ready"


def write_errors(root: Path, rows: list[tuple[int, str, str, bool, str]]) -> Path:
    """An ``Errors.java`` and exception classes in Kafka's layout, from the error-code rows:
    messages split over concatenated literals, as Kafka writes its long ones."""
    entries = []
    for code, name, class_name, _, message in rows:
        if code == 0:
            entries.append("    NONE(0, null, message -> null)")
            continue
        half = len(message) // 2
        text = f'"{message[:half]}" +\n            "{message[half:]}"'
        entries.append(f"    {name}({code}, {text},\n            {class_name}Exception::new)")
    java = root / check.ERRORS_JAVA
    java.parent.mkdir(parents=True)
    java.write_text("public enum Errors {\n" + ",\n".join(entries) + ";\n\n    private int x;\n}\n")
    exceptions = root / check.EXCEPTIONS
    exceptions.mkdir(parents=True)
    for _, _, class_name, retriable, _ in rows:
        parent = "RetriableException" if retriable else "ApiException"
        (exceptions / f"{class_name}Exception.java").write_text(
            f"public class {class_name}Exception extends {parent} {{}}\n"
        )
    return root


def test_error_codes_are_checked_by_name_retriability_and_message(tmp_path: Path) -> None:
    from kgroup._native.errors import ERROR_CODES

    assert check.check_errors(write_errors(tmp_path / "same", ERROR_CODES)) == []
    altered = []
    for code, name, class_name, retriable, message in ERROR_CODES:
        if code == 15:
            message = message.replace("not available", "elsewhere")
        elif code == 16:
            retriable = not retriable
        elif code == 17:
            name = "INVALID_TOPIC"
        altered.append((code, name, class_name, retriable, message))
    assert check.check_errors(write_errors(tmp_path / "altered", altered)) == [
        "error 15 COORDINATOR_NOT_AVAILABLE: message is 'The coordinator is not available.', "
        "Kafka's is 'The coordinator is elsewhere.'",
        "error 16 NOT_COORDINATOR: retriable is True, Kafka's is False",
        "error 17: name is INVALID_TOPIC_EXCEPTION, Kafka's is INVALID_TOPIC",
    ]


def test_java_string_reads_constant_expressions() -> None:
    assert check.java_string(' "a \\"b\\" " +\n "c\\u0041\\n"') == 'a "b" cA\n'
    assert check.java_string(" null") is None
    with pytest.raises(ValueError, match="not a constant string"):
        check.java_string(' "a" + name()')
