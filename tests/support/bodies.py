"""Hypothesis strategies for message bodies, drawn from the definitions themselves
(``protocol.definitions()``): any api, version and direction, with every field of the version,
nulls where the version allows them and unknown tagged fields in flexible versions."""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

from kgroup import protocol

from .wire import in_versions

DEFS = {d["name"]: d for d in protocol.definitions()}

INTS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
}
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


def scalar(kind: str, records: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[Any]:
    """A value of a scalar type; ``records`` draws the records values (bytes by default)."""
    if kind in INTS:
        lo, hi = INTS[kind]
        return st.integers(lo, hi)
    return {
        "bool": st.booleans(),
        "string": TEXT,
        "bytes": st.binary(max_size=24),
        "records": st.binary(max_size=64) if records is None else records,
        "uuid": st.uuids(allow_nil=True),
        "float64": st.floats(allow_nan=False),
    }[kind]


def struct(
    fields: list[dict], v: int, flexible: bool, records: st.SearchStrategy[Any] | None = None
) -> st.SearchStrategy[dict]:
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for f in fields:
        if not in_versions(f["versions"], v):
            continue
        kind = f["type"]
        if kind == "struct":
            s = struct(f["fields"], v, flexible, records)
        elif kind == "[]struct":
            s = st.lists(struct(f["fields"], v, flexible, records), max_size=3)
        elif kind.startswith("[]"):
            s = st.lists(scalar(kind[2:], records), max_size=4)
        else:
            s = scalar(kind, records)
        if in_versions(f["nullable_versions"], v):
            s = st.none() | s
        parts[f["name"]] = s
    base = st.fixed_dictionaries(parts)
    if not flexible:
        return base
    known = {f["tag"] for f in fields if f["tag"] is not None and in_versions(f["versions"], v)}
    unknown = st.dictionaries(
        st.integers(0, 300).filter(lambda t: t not in known), st.binary(max_size=8), max_size=2
    )

    def add_unknown(d: dict, tagged: dict[int, bytes]) -> dict:
        if tagged:
            d = {**d, "unknown_tagged_fields": tagged}
        return d

    return st.builds(add_unknown, base, unknown)


def flexible(name: str, v: int) -> bool:
    return in_versions(DEFS[name]["flexible_versions"], v)


@cache
def body_of(
    name: str, v: int, records: st.SearchStrategy[Any] | None = None
) -> st.SearchStrategy[dict]:
    """The strategy for a whole body of `name` at version `v`; ``records`` draws the records
    values (bytes of up to 64 by default)."""
    return struct(DEFS[name]["fields"], v, flexible(name, v), records)
