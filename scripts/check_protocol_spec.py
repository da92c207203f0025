#!/usr/bin/env python3
"""Compare kgroup's protocol definitions with Kafka's own message specs.

    .venv/bin/python scripts/check_protocol_spec.py /path/to/apache/kafka

reads ``clients/src/main/resources/common/message/*.json`` from a checkout of apache/kafka and
reports every difference from ``kgroup.protocol.definitions()``: messages (api key, valid and
flexible versions) and, field by field, names (Kafka's in snake_case), types, versions,
nullable versions, tags and tagged versions, flexible-version overrides, defaults and
ignorability. With ``--errors`` it also checks ``kgroup.errors`` against ``Errors.java``: codes,
names, default messages and whether each code's exception is retriable. Exit status 1 when
anything differs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

MESSAGES = "clients/src/main/resources/common/message"
ERRORS_JAVA = "clients/src/main/java/org/apache/kafka/common/protocol/Errors.java"
EXCEPTIONS = "clients/src/main/java/org/apache/kafka/common/errors"
PRIMITIVES = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint16",
    "uint32",
    "float64",
    "string",
    "bytes",
    "records",
    "uuid",
}
INTEGERS = {"int8", "int16", "int32", "int64", "uint16", "uint32"}


def snake(name: str) -> str:
    """Kafka's CamelCase name in snake_case: ``RebalanceTimeoutMs`` -> ``rebalance_timeout_ms``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def load_json(path: Path) -> dict[str, Any]:
    # Kafka's spec files are JSON with // line comments.
    text = re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M)
    return json.loads(text)


def versions(text: str | None) -> str:
    """Kafka's version syntax, normalised: ``"0+"``, ``"3"``, ``"0-4"`` or ``"none"``."""
    if text is None or text == "none":
        return "none"
    text = text.strip()
    if text.endswith("+"):
        return f"{int(text[:-1])}+"
    lo, _, hi = text.partition("-")
    if not hi or int(lo) == int(hi):
        return str(int(lo))
    return f"{int(lo)}-{int(hi)}"


def kafka_type(t: str) -> str:
    """A Kafka type as our definitions name it: structs lose their names."""
    if t.startswith("[]"):
        inner = t[2:]
        return "[]" + (inner if inner in PRIMITIVES else "struct")
    return t if t in PRIMITIVES else "struct"


def kafka_default(field: dict[str, Any]) -> str | None:
    """A Kafka default normalised as our definitions report it: None for the type's zero."""
    if "default" not in field:
        return None
    d = str(field["default"]).strip()
    t = field["type"]
    if d == "null":
        return "null"
    if t in INTEGERS:
        v = int(d, 0)
        return None if v == 0 else str(v)
    if t == "bool":
        return None if d == "false" else d
    if t == "float64":
        return None if float(d) == 0 else str(float(d))
    if t == "string":
        return None if d == "" else d
    return d


def compare_fields(
    where: str,
    ours: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
    common: dict[str, list[dict[str, Any]]],
    out: list[str],
) -> None:
    for i in range(max(len(ours), len(theirs))):
        if i >= len(ours):
            out.append(
                f"{where}: missing field {snake(theirs[i]['name'])} (Kafka's {theirs[i]['name']})"
            )
            continue
        if i >= len(theirs):
            out.append(f"{where}: field {ours[i]['name']} is not in Kafka's spec")
            continue
        o, k = ours[i], theirs[i]
        name = snake(k["name"])
        at = f"{where}.{name}"
        if o["name"] != name:
            out.append(f"{where}: field {i} is {o['name']!r}, Kafka's is {k['name']!r} ({name})")
            continue
        checks = [
            ("type", o["type"], kafka_type(k["type"])),
            ("versions", o["versions"], versions(k.get("versions"))),
            ("nullable versions", o["nullable_versions"], versions(k.get("nullableVersions"))),
            ("tag", o["tag"], k.get("tag")),
            ("tagged versions", o["tagged_versions"], versions(k.get("taggedVersions"))),
            (
                "flexible versions",
                o["flexible_versions"],
                versions(k["flexibleVersions"]) if "flexibleVersions" in k else None,
            ),
            ("default", o["default"], kafka_default(k)),
            ("ignorable", o["ignorable"], bool(k.get("ignorable", False))),
        ]
        for what, mine, kafka in checks:
            if mine != kafka:
                out.append(f"{at}: {what} is {mine!r}, Kafka's is {kafka!r}")
        if kafka_type(k["type"]).endswith("struct"):
            nested = k.get("fields")
            if nested is None:
                nested = common.get(k["type"].removeprefix("[]"), [])
            compare_fields(at, o["fields"], nested, common, out)
        elif o["fields"]:
            out.append(f"{at}: has nested fields but Kafka's type is {k['type']}")


def check_messages(kafka: Path, definitions: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    folder = kafka / MESSAGES
    for ours in definitions:
        path = folder / f"{ours['name']}.json"
        if not path.exists():
            out.append(f"{ours['name']}: no {path.name} in {folder}")
            continue
        theirs = load_json(path)
        where = ours["name"]
        if ours["type"] != theirs.get("type"):
            out.append(f"{where}: type is {ours['type']!r}, Kafka's is {theirs.get('type')!r}")
        if ours["type"] != "header" and ours["api_key"] != theirs.get("apiKey"):
            out.append(f"{where}: api key is {ours['api_key']}, Kafka's is {theirs.get('apiKey')}")
        for what, mine, kafka_value in [
            ("valid versions", ours["valid_versions"], versions(theirs.get("validVersions"))),
            (
                "flexible versions",
                ours["flexible_versions"],
                versions(theirs.get("flexibleVersions")),
            ),
        ]:
            if mine != kafka_value:
                out.append(f"{where}: {what} are {mine!r}, Kafka's are {kafka_value!r}")
        common = {c["name"]: c["fields"] for c in theirs.get("commonStructs", [])}
        compare_fields(where, ours["fields"], theirs["fields"], common, out)
    return out


def _superclasses(kafka: Path) -> dict[str, str]:
    parents = {}
    for path in (kafka / EXCEPTIONS).rglob("*.java"):
        m = re.search(r"class\s+(\w+)(?:<[^>]*>)?\s+extends\s+([\w.]+)", path.read_text())
        if m:
            parents[m.group(1)] = m.group(2).split(".")[-1]
    return parents


# Java's one-letter escapes that are not the letter itself (\s is a space).
_JAVA_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "s": " "}


def java_string(expression: str) -> str | None:
    """The value of a constant Java string expression: ``null``, or literals joined by ``+``."""
    if expression.strip() == "null":
        return None
    literal = r'"((?:[^"\\]|\\.)*)"'
    if re.sub(literal + r"|\+|\s", "", expression):
        raise ValueError(f"not a constant string: {expression!r}")

    def unescape(m: re.Match[str]) -> str:
        e = m.group(1)
        return chr(int(e.lstrip("u"), 16)) if len(e) > 1 else _JAVA_ESCAPES.get(e, e)

    escape = re.compile(r"\\(u+[0-9a-fA-F]{4}|.)")
    return "".join(escape.sub(unescape, s) for s in re.findall(literal, expression))


def check_errors(kafka: Path) -> list[str]:
    from kgroup import errors

    out = []
    text = (kafka / ERRORS_JAVA).read_text()
    parents = _superclasses(kafka)

    def retriable(cls: str | None) -> bool:
        seen = set()
        while cls is not None and cls not in seen:
            if cls == "RetriableException":
                return True
            seen.add(cls)
            cls = parents.get(cls)
        return False

    entries = re.findall(r"^\s{4}([A-Z][A-Z_0-9]+)\((-?\d+),(.*?)\)[,;]\s*$", text, re.M | re.S)
    theirs = {}
    for name, code, rest in entries:
        # rest is "<message expression>, <exception constructor>": the message is everything
        # before the last top-level comma (a message holds no comma outside its literals).
        m = re.search(r"(\w+)::new", rest)
        message_expression = re.match(r'((?:"(?:[^"\\]|\\.)*"|[^",])*),', rest)
        message = java_string(message_expression.group(1)) if message_expression else None
        theirs[int(code)] = (name, retriable(m.group(1) if m else None), message)
    for code, (name, is_retriable, message) in sorted(theirs.items()):
        if code == 0:
            continue
        cls = errors.error_for_code(code)
        if cls is None or cls.code != code:
            out.append(f"error {code} {name}: no class in kgroup.errors")
            continue
        if cls.name != name:
            out.append(f"error {code}: name is {cls.name}, Kafka's is {name}")
        if cls.retriable != is_retriable:
            out.append(
                f"error {code} {name}: retriable is {cls.retriable}, Kafka's is {is_retriable}"
            )
        if cls.message != message:
            out.append(f"error {code} {name}: message is {cls.message!r}, Kafka's is {message!r}")
    ours = {c.code for c in errors.KafkaError.__subclasses__() if c.__module__ == errors.__name__}
    for code in sorted(ours - set(theirs)):
        out.append(f"error {code}: not in Kafka's Errors.java")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kafka", type=Path, help="a checkout of apache/kafka")
    parser.add_argument("--errors", action="store_true", help="also check kgroup.errors")
    args = parser.parse_args(argv)

    from kgroup import protocol

    definitions = protocol.definitions()
    differences = check_messages(args.kafka, definitions)
    if args.errors:
        differences += check_errors(args.kafka)
    for d in differences:
        print(d)
    fields = sum(_count(d["fields"]) for d in definitions)
    print(
        f"{len(differences)} differences in {len(definitions)} messages and {fields} fields"
        + (" and the error codes" if args.errors else ""),
        file=sys.stderr,
    )
    return 1 if differences else 0


def _count(fields: list[dict[str, Any]]) -> int:
    return sum(1 + _count(f["fields"]) for f in fields)


if __name__ == "__main__":
    sys.exit(main())
