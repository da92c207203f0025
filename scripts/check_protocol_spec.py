#!/usr/bin/env python3
"""Compare kgroup's protocol definitions with Kafka's own message specs.

    .venv/bin/python scripts/check_protocol_spec.py [SPECS] [--exact] [--errors]

SPECS is where Kafka's JSON message specs are read from: a checkout of apache/kafka
(``clients/src/main/resources/common/message/``, and the coordinators' record schemas in
``group-coordinator/``, ``share-coordinator/`` and
``transaction-coordinator/src/main/resources/common/message/``), a jar that carries them as
resources under ``common/message/`` (kafka-clients, kafka-group-coordinator,
kafka-share-coordinator, kafka-transaction-coordinator), or a folder of jars. By
default: the Apache Kafka jars from Maven Central that the tests run
(``tests/support/apache_kafka.py``'s ``lib_dir()``); ``spec_jars()`` there fetches Kafka 3.9's.

Ours are ``kgroup.protocol.definitions()``: requests, responses, headers and the
``__consumer_offsets``, ``__share_group_state`` and ``__transaction_state`` record schemas of
``rust/protocol/messages/coordinator_records.rs``.

Specs of Kafka 3.9, which the tables were transcribed from, or of no known release are compared
exactly: message by message (type, api key, valid and flexible versions) and field by field:
names (Kafka's in snake_case), types, versions, nullable versions, tags and tagged versions,
flexible-version overrides, defaults and ignorability.

Any other release's specs are compared in the versions both speak. kgroup keeps serving the
versions Kafka 4.0 removed (KIP-896) and stops at 3.9's newest, so valid versions may differ as
``DECLARED`` says for that release, and nothing else may: in each version both speak, a message
has the same fields in the same order (tagged ones by tag), each with the same name, type,
nullability, tag, encoding and default, and the fields that neither has there the same default
and ignorability. Ranges may be written differently (``"0+"`` against ``"0-12"``) as long as
they agree on those versions. A message ``DECLARED`` for 3.9 (DescribeGroups, which goes on to
4.0's v6) is compared that way with 3.9 too. ``--exact`` compares every message exactly and
allows nothing.

With ``--errors`` it also checks ``kgroup.errors`` against ``Errors.java`` of a checkout: codes,
names, default messages and whether each code's exception is retriable. Exit status 1 when
anything differs that is not declared.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = "clients/src/main/resources/common/message"
RECORDS = "group-coordinator/src/main/resources/common/message"
TXN_RECORDS = "transaction-coordinator/src/main/resources/common/message"
SHARE_RECORDS = "share-coordinator/src/main/resources/common/message"
IN_JAR = "common/message/"
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


class Declared(NamedTuple):
    """Declared is how kgroup's tables differ on purpose from one Kafka release's specs.

    ``valid_versions``: Kafka's valid versions (normalised) of each message whose range is not
    ours, keyed by message name, or by API name for a request and its response alike.
    ``tagged_fields``: (message, field path in snake_case) -> tag, for each tagged field that
    one side has in a version both speak and the other lacks: one Kafka added after kgroup's
    table, or one of a later Kafka that kgroup declares and this release lacks. A tagged field
    is optional on the wire and unknown ones are kept, so either layout reads and writes that
    version right. ``newer``: our messages this release does not have yet (record schemas of a
    later Kafka). ``renamed``: fields a release renamed. ``early_access``: messages this
    release has only as an early-access draft whose layout the first release that served them
    changed in the same version: only their kind is compared. Everything else in a version both
    speak must be the same, and a declaration that no longer matches Kafka's specs is reported
    too.
    """

    valid_versions: dict[str, str]
    tagged_fields: dict[tuple[str, str], int]
    newer: frozenset[str] = frozenset()
    #: renamed: (message, field path) -> the field's name in this release's spec, for a field
    #: this release renamed (same place, type and encoding: the wire is the same).
    renamed: Mapping[tuple[str, str], str] = MappingProxyType({})
    early_access: frozenset[str] = frozenset()

    def range_of(self, name: str) -> str | None:
        return self.valid_versions.get(name) or self.valid_versions.get(
            re.sub(r"(Request|Response)$", "", name)
        )


#: DECLARED is, per Kafka release (major.minor), where kgroup's tables differ from its specs on
#: purpose. The tables were transcribed from 3.9; kgroup keeps serving every version 3.9 served,
#: and stops at 3.9's newest, DescribeGroups v6 aside. "Removed": versions that 4.0 dropped
#: (KIP-896) and kgroup serves to old clients; the others are versions above 3.9's newest.
DECLARED: dict[str, Declared] = {
    "3.9": Declared(
        # v6 (KIP-1043) from 4.0: Java's 4.x Admin describes groups at the broker's newest
        # version and expects GROUP_ID_NOT_FOUND for a missing group. Compared with 4.4.
        {
            "DescribeGroups": "0-5",
            # v1 (KIP-1082: member ids from the client; the topic regex) from 4.0, the versions
            # Kafka 4.x and the clients that speak KIP-848 use. Compared with 4.4.
            "ConsumerGroupHeartbeat": "0",
            # v1 (KIP-1099: the member type) from 4.0. Compared with 4.4.
            "ConsumerGroupDescribe": "0",
            # The consumer group records are transcribed from 4.x, whose tagged fields 3.9
            # lacks (below); compared in the versions both speak.
            "ConsumerGroupMetadataValue": "0",
            "ConsumerGroupTargetAssignmentMetadataValue": "0",
            "ConsumerGroupCurrentMemberAssignmentValue": "0",
            # Share groups (KIP-932): 3.9 has the early-access v0 of these four, which Kafka
            # 4.1 removed; kgroup declares 4.2's versions, from v1. No version in common.
            "ShareGroupHeartbeat": "0",
            "ShareGroupDescribe": "0",
            "ShareFetch": "0",
            "ShareAcknowledge": "0",
        },
        {
            # The hash of the subscribed topics' metadata (KIP-1101, 4.1).
            ("ConsumerGroupMetadataValue", "metadata_hash"): 0,
            # When the target assignment was computed (KIP-1263, 4.3).
            ("ConsumerGroupTargetAssignmentMetadataValue", "assignment_timestamp"): 0,
            # Each held partition's assignment epoch (KIP-1251, 4.3).
            (
                "ConsumerGroupCurrentMemberAssignmentValue",
                "assigned_partitions.assignment_epochs",
            ): 0,
            (
                "ConsumerGroupCurrentMemberAssignmentValue",
                "partitions_pending_revocation.assignment_epochs",
            ): 0,
        },
        frozenset(
            {
                # Regex subscriptions (4.0).
                "ConsumerGroupRegularExpressionKey",
                "ConsumerGroupRegularExpressionValue",
                # __transaction_state's records: 3.9 keeps them in its core jar, outside the
                # spec jars (4.0 moved them to transaction-coordinator). Compared with 4.4.
                "TransactionLogKey",
                "TransactionLogValue",
                # Api 74: 3.9's ListClientMetricsResources (v0), named ListConfigResources
                # from 4.1 with v1 (KIP-1142). Compared with 4.4.
                "ListConfigResourcesRequest",
                "ListConfigResourcesResponse",
                # Share groups' admin apis (4.1) and the share group records 3.9 lacks (its
                # ShareGroupPartitionMetadata became 4.1's ShareGroupStatePartitionMetadata);
                # __share_group_state's records are in the share-coordinator jar, which the
                # 3.9 spec jars leave out. Compared with 4.4.
                "DescribeShareGroupOffsetsRequest",
                "DescribeShareGroupOffsetsResponse",
                "AlterShareGroupOffsetsRequest",
                "AlterShareGroupOffsetsResponse",
                "DeleteShareGroupOffsetsRequest",
                "DeleteShareGroupOffsetsResponse",
                "ShareGroupTargetAssignmentMetadataKey",
                "ShareGroupTargetAssignmentMetadataValue",
                "ShareGroupTargetAssignmentMemberKey",
                "ShareGroupTargetAssignmentMemberValue",
                "ShareGroupCurrentMemberAssignmentKey",
                "ShareGroupCurrentMemberAssignmentValue",
                "ShareGroupStatePartitionMetadataKey",
                "ShareGroupStatePartitionMetadataValue",
                "ShareSnapshotKey",
                "ShareSnapshotValue",
                "ShareUpdateKey",
                "ShareUpdateValue",
            }
        ),
        # 3.9's draft of the share group's epoch record has no metadata hash; 4.1 added it,
        # untagged, to the same version 0. Compared with 4.4.
        early_access=frozenset({"ShareGroupMetadataValue"}),
    ),
    "4.4": Declared(
        {
            "Produce": "3-13",  # 0-2 removed; 12 (KIP-890), 13 topic ids (KIP-516)
            "Fetch": "4-18",  # 0-3 removed; 18 high watermark (KIP-1166)
            "ListOffsets": "1-11",  # 0 removed; 10 (KIP-1075), 11 (KIP-1023)
            "Metadata": "0-13",  # 13 a top-level error code
            "OffsetCommit": "2-10",  # 0-1 removed; 10 topic ids (KIP-848)
            "OffsetFetch": "1-10",  # 0 removed; 10 topic ids (KIP-848)
            "ApiVersions": "0-5",  # 5 cluster and node id checks (KIP-1242)
            "CreateTopics": "2-7",  # 0-1 removed
            "DeleteTopics": "1-6",  # 0 removed
            "InitProducerId": "0-6",  # 6 two-phase commit (KIP-939)
            "OffsetForLeaderEpoch": "2-4",  # 0-1 removed
            "DescribeAcls": "1-3",  # 0 removed
            "CreateAcls": "1-3",  # 0 removed
            "DeleteAcls": "1-3",  # 0 removed
            "DescribeConfigs": "1-4",  # 0 removed
            "DescribeLogDirs": "1-5",  # 0 removed; 5 more response fields
            "DeleteGroups": "0-3",  # 3 a per-group error message
            "DescribeCluster": "0-2",  # 2 IncludeFencedBrokers (KIP-1073)
            "RequestHeader": "1-2",  # 0 removed with ControlledShutdown v0, its only user
            "EndTxn": "0-5",  # 5 an epoch bump per transaction (KIP-890 part 2)
            "WriteTxnMarkers": "1-2",  # 0 removed; 2 the transaction version (KIP-1228)
            "TxnOffsetCommit": "0-6",  # 5 (KIP-890 part 2), 6 topic ids
            "ListTransactions": "0-2",  # 2 a transactional id pattern (KIP-1152)
        },
        # The committed topic's id, a tagged field 4.x added to v4: what kgroup writes is still
        # a whole v4 record, and a record that has it decodes (the tag kept as unknown).
        {
            ("OffsetCommitValue", "topic_id"): 0,
        },
        renamed={
            # A consumer-protocol member (KIP-848) sends its member epoch there.
            ("TxnOffsetCommitRequest", "generation_id"): "generation_id_or_member_epoch",
        },
    ),
}


# -- Kafka's specs ----------------------------------------------------------------------------


class Specs(NamedTuple):
    """Specs are Kafka's JSON message specs by name, read from one place: a checkout, a jar or
    a folder of jars; ``release`` is Kafka's version when that place says it (``"3.9.2"``)."""

    origin: str
    files: dict[str, dict[str, Any]]
    release: str | None
    checkout: Path | None


def parse_json(text: str) -> dict[str, Any]:
    # Kafka's spec files are JSON with // line comments.
    return json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))


def load_json(path: Path) -> dict[str, Any]:
    return parse_json(path.read_text())


def load_specs(source: Path) -> Specs:
    """Kafka's specs from a checkout of apache/kafka, a jar, or a folder of jars."""
    files: dict[str, dict[str, Any]] = {}
    if source.is_dir() and (source / "clients").is_dir():
        for folder in (MESSAGES, RECORDS, SHARE_RECORDS, TXN_RECORDS):
            for path in sorted((source / folder).glob("*.json")):
                files[path.stem] = load_json(path)
        gradle = source / "gradle.properties"
        m = re.search(r"^version=(\S+)", gradle.read_text(), re.M) if gradle.exists() else None
        return Specs(f"the checkout {source}", files, m.group(1) if m else None, source)
    if source.is_dir():
        jars = sorted(source.glob("*.jar"))
        origin = f"the jars of {source}"
    elif source.suffix == ".jar":
        jars = [source]
        origin = str(source)
    else:
        raise SystemExit(f"{source}: not a checkout of apache/kafka, a jar or a folder of jars")
    release = None
    for jar in jars:
        with zipfile.ZipFile(jar) as z:
            for name in z.namelist():
                if name == "kafka/kafka-version.properties":
                    m = re.search(r"^version=(\S+)", z.read(name).decode(), re.M)
                    release = m.group(1) if m else None
                if not (name.startswith(IN_JAR) and name.endswith(".json")):
                    continue
                spec = parse_json(z.read(name).decode())
                stem = name[len(IN_JAR) : -len(".json")]
                if files.setdefault(stem, spec) != spec:
                    raise SystemExit(f"{source}: two different {stem}.json")
    if not files:
        raise SystemExit(f"{source}: no {IN_JAR}*.json in {len(jars)} jars")
    return Specs(origin, files, release, None)


def default_source() -> Path:
    """The jars of Apache Kafka that the tests run (fetched with Maven on first use)."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from support.apache_kafka import lib_dir
    except ImportError as e:
        raise SystemExit(f"no SPECS given, and no tests/support/apache_kafka.py: {e}") from e
    finally:
        sys.path.remove(str(ROOT / "tests"))
    return lib_dir()


# -- our definitions --------------------------------------------------------------------------


def definitions() -> list[dict[str, Any]]:
    """Our definitions, as the binding lists them: the messages, the headers and the record
    schemas."""
    from kgroup import protocol

    return protocol.definitions()


def is_record(ours: dict[str, Any]) -> bool:
    """A record schema of an internal topic (Kafka's ``"data"``, or since 4.0
    ``"coordinator-key"`` and ``"coordinator-value"``): a header-kind table not named one."""
    return ours["type"] == "header" and not ours["name"].endswith("Header")


# -- versions, names, types, defaults ---------------------------------------------------------


def snake(name: str) -> str:
    """Kafka's CamelCase name in snake_case: ``RebalanceTimeoutMs`` -> ``rebalance_timeout_ms``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


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


def version_set(text: str | None, top: int) -> set[int]:
    """The versions of a range up to ``top`` (``"3+"`` is open-ended)."""
    v = versions(text)
    if v == "none":
        return set()
    if v.endswith("+"):
        return set(range(int(v[:-1]), top + 1))
    lo, _, hi = v.partition("-")
    return set(range(int(lo), int(hi or lo) + 1))


def ranges(vs: Iterable[int]) -> str:
    """Versions as short ranges: ``{0, 1, 2, 5}`` -> ``"0-2,5"``."""
    out: list[list[int]] = []
    for v in sorted(vs):
        if out and out[-1][1] == v - 1:
            out[-1][1] = v
        else:
            out.append([v, v])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def kafka_type(t: str) -> str:
    """A Kafka type as our definitions name it: structs lose their names."""
    if t.startswith("[]"):
        inner = t[2:]
        return "[]" + (inner if inner in PRIMITIVES else "struct")
    return t if t in PRIMITIVES else "struct"


def kafka_versions(field: dict[str, Any]) -> str | None:
    """A Kafka field's versions: a tagged field may give only its tagged versions, which are
    then its versions too (Kafka's ``FieldSpec``; ``TransactionLogValue``'s tagged fields)."""
    return field.get("versions", field.get("taggedVersions"))


def kafka_default(field: dict[str, Any]) -> str | None:
    """A Kafka default normalised as our definitions report it: None for the type's zero."""
    if "default" not in field:
        return None
    d = str(field["default"]).strip()
    t = field["type"]
    if field["default"] is None or d == "null":
        return "null"
    if t in INTEGERS:
        v = int(d, 0)
        return None if v == 0 else str(v)
    if t == "bool":
        d = d.lower()  # a JSON false reads as Python's False
        return None if d == "false" else d
    if t == "float64":
        return None if float(d) == 0 else str(float(d))
    if t == "string":
        return None if d == "" else d
    return d


def kafka_fields(spec: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A spec's fields, and its common structs by name."""
    return spec["fields"], {c["name"]: c["fields"] for c in spec.get("commonStructs", [])}


def nested(k: dict[str, Any], common: dict[str, Any]) -> list[dict[str, Any]]:
    """The fields of a Kafka struct field: its own, or its common struct's."""
    if k.get("fields") is not None:
        return k["fields"]
    return common.get(k["type"].removeprefix("[]"), [])


# -- exact: every range as Kafka writes it ----------------------------------------------------


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
            ("versions", o["versions"], versions(kafka_versions(k))),
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
            compare_fields(at, o["fields"], nested(k, common), common, out)
        elif o["fields"]:
            out.append(f"{at}: has nested fields but Kafka's type is {k['type']}")


def _kind(ours: dict[str, Any], theirs: dict[str, Any], out: list[str]) -> None:
    """Differences of type and api key."""
    kafka, where = theirs.get("type"), ours["name"]
    if is_record(ours):
        suffix = "key" if where.endswith("Key") else "value"
        if kafka not in ("data", f"coordinator-{suffix}"):
            out.append(f"{where}: a record {suffix}, Kafka's type is {kafka!r}")
    elif ours["type"] != kafka:
        out.append(f"{where}: type is {ours['type']!r}, Kafka's is {kafka!r}")
    elif ours["type"] != "header" and ours["api_key"] != theirs.get("apiKey"):
        out.append(f"{where}: api key is {ours['api_key']}, Kafka's is {theirs.get('apiKey')}")


def _exact(ours: dict[str, Any], theirs: dict[str, Any], out: list[str]) -> None:
    where = ours["name"]
    _kind(ours, theirs, out)
    for what, mine, kafka in [
        ("valid versions", ours["valid_versions"], versions(theirs.get("validVersions"))),
        ("flexible versions", ours["flexible_versions"], versions(theirs.get("flexibleVersions"))),
    ]:
        if mine != kafka:
            out.append(f"{where}: {what} are {mine!r}, Kafka's are {kafka!r}")
    fields, common = kafka_fields(theirs)
    compare_fields(where, ours["fields"], fields, common, out)


# -- shared: each version both speak ----------------------------------------------------------

#: TOP bounds open ranges ("3+"): Kafka's newest message versions are in the tens.
TOP = 99

#: At is one field as it is in one version.
At = dict[str, Any]


def _at_version(
    fields: list[dict[str, Any]], v: int, flexible: bool, common: dict[str, Any] | None
) -> list[At]:
    """Each field as it is in version ``v`` of a message (``flexible`` there or not): ours, or
    Kafka's when ``common`` (its common structs by name) is given."""
    out = []
    for f in fields:
        if common is not None:
            name, ty, children = snake(f["name"]), kafka_type(f["type"]), nested(f, common)
            in_versions, nullable = kafka_versions(f), f.get("nullableVersions")
            tag, tagged = f.get("tag"), f.get("taggedVersions")
            override = versions(f["flexibleVersions"]) if "flexibleVersions" in f else None
            default, ignorable = kafka_default(f), bool(f.get("ignorable", False))
        else:
            name, ty, children = f["name"], f["type"], f["fields"]
            in_versions, nullable = f["versions"], f["nullable_versions"]
            tag, tagged = f["tag"], f["tagged_versions"]
            override, default, ignorable = f["flexible_versions"], f["default"], f["ignorable"]
        present = v in version_set(in_versions, TOP)
        encoding = v in version_set(override, TOP) if override else flexible
        out.append(
            {
                "name": name,
                "present": present,
                "type": ty,
                "nullable": v in version_set(nullable, TOP),
                "tag": tag if v in version_set(tagged, TOP) else None,
                # None when the field is encoded as the rest of the message is.
                "flexible override": encoding if encoding != flexible else None,
                "default": default,
                "ignorable": ignorable,
                "fields": _at_version(children, v, flexible, common) if present else [],
            }
        )
    return out


def _compare_at(
    where: str,
    ours: list[At],
    theirs: list[At],
    allowed: Callable[[str, int | str], bool],
    path: str = "",
) -> list[str]:
    """Differences of one version (of the fields at ``path`` of message ``where``): the fields
    it has, untagged ones in wire order and tagged ones by tag, by name, type, nullability,
    encoding and default; and of the fields both lack there, the default (what a decoder fills
    in) and ignorability (whether an encoder may drop a value). ``allowed(path, tag)`` tells a
    tagged field that one side may lack, and ``allowed(path, name)`` a field Kafka renamed."""
    out = []
    at = where + path
    here = [f for f in ours if f["present"]], [f for f in theirs if f["present"]]
    untagged = [[f for f in side if f["tag"] is None] for side in here]
    pairs: list[tuple[At | None, At | None, str]] = [
        (
            untagged[0][i] if i < len(untagged[0]) else None,
            untagged[1][i] if i < len(untagged[1]) else None,
            f"field {i}",
        )
        for i in range(max(map(len, untagged)))
    ]
    tagged = [{f["tag"]: f for f in side if f["tag"] is not None} for side in here]
    for tag in sorted(tagged[0].keys() | tagged[1].keys()):
        pairs.append((tagged[0].get(tag), tagged[1].get(tag), f"tag {tag}"))
    for o, k, place in pairs:
        if k is None:
            assert o is not None
            if o["tag"] is None or not allowed(f"{path}.{o['name']}"[1:], o["tag"]):
                out.append(f"{at}: field {o['name']} is not in Kafka's spec")
        elif o is None:
            if k["tag"] is None or not allowed(f"{path}.{k['name']}"[1:], k["tag"]):
                out.append(f"{at}: missing field {k['name']} ({place})")
        elif o["name"] != k["name"] and not allowed(f"{path}.{o['name']}"[1:], k["name"]):
            out.append(f"{at}: {place} is {o['name']!r}, Kafka's is {k['name']!r}")
        else:
            for what in ("type", "nullable", "flexible override", "default"):
                if o[what] != k[what]:
                    out.append(f"{at}.{o['name']}: {what} is {o[what]!r}, Kafka's is {k[what]!r}")
            out += _compare_at(where, o["fields"], k["fields"], allowed, f"{path}.{o['name']}")
    absent = [{f["name"]: f for f in side if not f["present"]} for side in (ours, theirs)]
    for name in sorted(absent[0].keys() & absent[1].keys()):
        o, k = absent[0][name], absent[1][name]
        for what in ("default", "ignorable"):
            if o[what] != k[what]:
                out.append(f"{at}.{name}, absent: {what} is {o[what]!r}, Kafka's is {k[what]!r}")
    return out


def _counterparts(ours: dict[str, Any], specs: Specs) -> dict[int, tuple[str, dict[str, Any], int]]:
    """For each version of Kafka's that ours has: Kafka's spec and version for it. That is the
    same name and version, except for the keys of __consumer_offsets records since Kafka 4.0,
    which made a key's version the record type: each type's key is a spec of its own,
    ``"type": "coordinator-key"``, with the old key version as ``apiKey`` and ``validVersions``
    "0" (3.9's OffsetCommitKey v0-1 became LegacyOffsetCommitKey and OffsetCommitKey, its
    GroupMetadataKey v2 the GroupMetadataKey of apiKey 2). Version v of our key is version 0
    of the key spec whose apiKey is v: the same bytes, an INT16 that is both, then the fields."""
    name = ours["name"]
    spec = specs.files[name]
    mine = version_set(ours["valid_versions"], TOP)
    if spec.get("type") != "coordinator-key":
        return {v: (name, spec, v) for v in mine & version_set(spec.get("validVersions"), TOP)}
    keys = {}
    for key in (name, f"Legacy{name}"):
        s = specs.files.get(key)
        if s is not None and s.get("type") == "coordinator-key" and "0" == s.get("validVersions"):
            keys[s.get("apiKey", -1)] = (key, s, 0)
    return keys


def _shared(
    ours: dict[str, Any],
    specs: Specs,
    declared: Declared,
    out: list[str],
    allowed: Callable[[str, str, int], bool],
) -> None:
    where = ours["name"]
    spec = specs.files[where]
    _kind(ours, spec, out)
    found = _counterparts(ours, specs)
    if spec.get("type") == "coordinator-key":
        theirs = ranges(found) or "none"
    else:
        theirs = versions(spec.get("validVersions"))
    expected = declared.range_of(where) or ours["valid_versions"]
    if theirs != expected:
        note = f" (declared: {expected!r})" if declared.range_of(where) else ""
        out.append(
            f"{where}: valid versions are {ours['valid_versions']!r}, Kafka's are {theirs!r}{note}"
        )
    differences: dict[str, list[int]] = {}
    for v in sorted(version_set(ours["valid_versions"], TOP) & found.keys()):
        name, kafka, kv = found[v]
        here = where if name == where else f"{where} (Kafka's {name} v{kv})"
        fields, common = kafka_fields(kafka)
        flexible = v in version_set(ours["flexible_versions"], TOP)
        flexible_kafka = kv in version_set(kafka.get("flexibleVersions"), TOP)
        found_here = []
        if flexible != flexible_kafka:
            found_here.append(f"{here}: flexible is {flexible}, Kafka's is {flexible_kafka}")
        found_here += _compare_at(
            here,
            _at_version(ours["fields"], v, flexible, None),
            _at_version(fields, kv, flexible_kafka, common),
            lambda path, tag: allowed(where, path, tag),
        )
        for d in found_here:
            differences.setdefault(d, []).append(v)
    out.extend(f"{d} (v{ranges(vs)})" for d, vs in differences.items())


def check(
    specs: Specs, definitions: list[dict[str, Any]], declared: Declared | None, exact: bool
) -> list[str]:
    """Every difference of our definitions from Kafka's specs that ``declared`` does not allow:
    each message not declared compared exactly (``exact``) or in the versions both speak, each
    declared one in the versions both speak."""
    declared = declared or Declared({}, {})
    out: list[str] = []
    used: set[tuple[str, str]] = set()

    def allowed(message: str, path: str, tag: int | str) -> bool:
        table: Mapping[tuple[str, str], int | str] = (
            declared.renamed if isinstance(tag, str) else declared.tagged_fields
        )
        if table.get((message, path)) != tag:
            return False
        used.add((message, path))
        return True

    for ours in definitions:
        if ours["name"] not in specs.files:
            if ours["name"] not in declared.newer:
                out.append(f"{ours['name']}: no {ours['name']}.json in {specs.origin}")
        elif ours["name"] in declared.early_access:
            _kind(ours, specs.files[ours["name"]], out)
        elif exact and declared.range_of(ours["name"]) is None:
            _exact(ours, specs.files[ours["name"]], out)
        else:
            _shared(ours, specs, declared, out, allowed)
    names = {d["name"] for d in definitions}
    apis = {re.sub(r"(Request|Response)$", "", n) for n in names}
    for name in declared.valid_versions.keys() - names - apis:
        out.append(f"{name}: declared, but not one of our definitions")
    for name in sorted(declared.newer & specs.files.keys()):
        out.append(f"{name}: declared newer than these specs, but they have it")
    for message, path in declared.tagged_fields.keys() - used:
        out.append(f"{message}.{path}: declared a tagged field of Kafka's that is not there")
    for name in sorted(declared.early_access - names):
        out.append(f"{name}: declared early access, but not one of our definitions")
    for message, path in declared.renamed.keys() - used:
        out.append(f"{message}.{path}: declared renamed, but Kafka's spec has the same name")
    return out


# -- errors -----------------------------------------------------------------------------------


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


# -- the command ------------------------------------------------------------------------------


#: TRANSCRIBED_FROM is the Kafka release the tables were transcribed from: its specs are compared
#: exactly, except the messages DECLARED for it.
TRANSCRIBED_FROM = "3.9"


def minor(release: str | None) -> str:
    """A release's major.minor: ``"4.4.0"`` -> ``"4.4"``; "" for none."""
    return ".".join((release or "").split(".")[:2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "specs",
        type=Path,
        nargs="?",
        help="a checkout of apache/kafka, a jar, or a folder of jars "
        "(default: the jars of tests/support/apache_kafka.py's lib_dir())",
    )
    parser.add_argument(
        "--exact", action="store_true", help="compare every message exactly, nothing declared"
    )
    parser.add_argument("--errors", action="store_true", help="also check kgroup.errors")
    args = parser.parse_args(argv)

    specs = load_specs(args.specs if args.specs is not None else default_source())
    if args.errors and specs.checkout is None:
        parser.error("--errors needs a checkout of apache/kafka (jars carry no Errors.java)")
    ours = definitions()
    release = specs.release
    exact = args.exact or release is None or minor(release) == TRANSCRIBED_FROM
    declared = None if args.exact else DECLARED.get(minor(release))
    differences = check(specs, ours, declared, exact)
    if args.errors:
        assert specs.checkout is not None
        differences += check_errors(specs.checkout)
    for d in differences:
        print(d)
    how = "exactly" if exact else "in the versions both speak"
    if declared is not None:
        how += f", with the differences declared for {minor(release)}"
    fields = sum(_count(d["fields"]) for d in ours)
    print(
        f"{len(differences)} differences in {len(ours)} messages and {fields} fields"
        + (" and the error codes" if args.errors else "")
        + f" from the specs of Kafka {release or '(release unknown)'} in {specs.origin}, "
        + f"compared {how}",
        file=sys.stderr,
    )
    return 1 if differences else 0


def _count(fields: list[dict[str, Any]]) -> int:
    return sum(1 + _count(f["fields"]) for f in fields)


if __name__ == "__main__":
    sys.exit(main())
