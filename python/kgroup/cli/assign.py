"""``kgroup assign``: run one of Kafka's assignors on a described group and print the result.

    kgroup assign --strategy cooperative-sticky --topics orders:12,payments:6 --members 5
    kgroup assign --strategy sticky --topics t:12 --members 4 --json > round1.json
    kgroup assign --strategy sticky --topics t:12 --members 5 --previous round1.json

``--subscriptions FILE`` gives each member's topics (JSON: ``{"member": ["t1", "t2"]}``, or
``{"member": {"topics": [...], "rack": "r1", "group_instance_id": "i1"}}``); otherwise every one
of ``--members`` members (``member-0``, ``member-1``, ...) subscribes to every topic.
``--previous FILE`` is the group's current assignment (``{"member": ["t1-0", "t1-3"]}``, or the
``--json`` output of an earlier run); members keep what the assignor lets them keep, and the
partitions that moved are listed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from kgroup.assignors import (
    ASSIGNORS,
    CooperativeStickyAssignor,
    StickyAssignor,
    Subscription,
)
from kgroup.errors import InvalidArgument

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``assign`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "assign",
        help="run a consumer assignor (range, roundrobin, sticky, cooperative-sticky)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--strategy", required=True, choices=sorted(ASSIGNORS), help="assignor name")
    p.add_argument(
        "--topics", required=True, help="topics and partition counts: name:count[,name:count...]"
    )
    p.add_argument("--members", type=int, default=None, help="number of members (member-0...)")
    p.add_argument("--subscriptions", type=Path, help="JSON file: each member's topics")
    p.add_argument("--previous", type=Path, help="JSON file: the current assignment")
    p.add_argument("--generation", type=int, default=1, help="generation of --previous (default 1)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)
    return p


def parse_topics(spec: str) -> dict[str, int]:
    """``"t1:12,t2:6"`` -> ``{"t1": 12, "t2": 6}``."""
    out: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, count = item.rpartition(":")
        if not sep or not name:
            raise InvalidArgument(f"topic {item!r} is not name:count")
        try:
            n = int(count)
        except ValueError:
            raise InvalidArgument(
                f"partition count {count!r} of {name!r} is not a number"
            ) from None
        if n < 0:
            raise InvalidArgument(f"topic {name!r} has a negative partition count")
        out[name] = n
    if not out:
        raise InvalidArgument("--topics names no topic")
    return out


def parse_partition(item: Any) -> tuple[str, int]:
    """``"t1-3"`` or ``["t1", 3]`` -> ``("t1", 3)`` (the topic may contain dashes)."""
    if isinstance(item, str):
        topic, sep, p = item.rpartition("-")
        if sep and topic and p.isdigit():
            return topic, int(p)
    elif isinstance(item, list | tuple) and len(item) == 2:
        topic, p = item
        if isinstance(topic, str) and isinstance(p, int):
            return topic, p
    raise InvalidArgument(f"partition {item!r} is neither 'topic-N' nor [topic, N]")


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise InvalidArgument(f"cannot read {path}: {e}") from None


def load_subscriptions(path: Path) -> dict[str, dict[str, Any]]:
    data = _load_json(path)
    if not isinstance(data, dict):
        raise InvalidArgument(f"{path}: expected an object mapping member ids to topics")
    out = {}
    for member, spec in data.items():
        if isinstance(spec, list):
            spec = {"topics": spec}
        if not isinstance(spec, dict) or not isinstance(spec.get("topics"), list):
            raise InvalidArgument(f"{path}: member {member!r} needs a list of topics")
        out[member] = spec
    return out


def load_previous(path: Path) -> dict[str, list[tuple[str, int]]]:
    data = _load_json(path)
    if isinstance(data, dict) and isinstance(data.get("assignment"), dict):
        data = data["assignment"]
    if not isinstance(data, dict):
        raise InvalidArgument(f"{path}: expected an object mapping member ids to partitions")
    out = {}
    for member, parts in data.items():
        if not isinstance(parts, list):
            raise InvalidArgument(f"{path}: member {member!r} needs a list of partitions")
        out[member] = [parse_partition(p) for p in parts]
    return out


def _name(tp: tuple[str, int]) -> str:
    return f"{tp[0]}-{tp[1]}"


def plan(args: argparse.Namespace) -> dict[str, Any]:
    """Compute what ``run`` prints: the assignment, withheld and moved partitions."""
    topics = parse_topics(args.topics)
    previous = load_previous(args.previous) if args.previous else {}
    if args.subscriptions:
        specs = load_subscriptions(args.subscriptions)
    else:
        n = args.members if args.members is not None else len(previous)
        if n <= 0:
            raise InvalidArgument("give --members N (N >= 1) or --subscriptions FILE")
        specs = {f"member-{i}": {"topics": list(topics)} for i in range(n)}
    assignor = ASSIGNORS[args.strategy]()
    subs = {}
    for member, spec in specs.items():
        owned = previous.get(member)
        generation = args.generation if owned is not None else -1
        extra = {"rack_id": spec.get("rack"), "group_instance_id": spec.get("group_instance_id")}
        if isinstance(assignor, StickyAssignor):
            subs[member] = type(assignor).subscription(spec["topics"], owned, generation, **extra)
        else:
            subs[member] = Subscription(spec["topics"], **extra)
    result = assignor.assign(topics, subs)
    assignment = {m: [tuple(tp) for tp in a.partitions] for m, a in result.items()}
    withheld = {}
    if isinstance(assignor, CooperativeStickyAssignor):
        withheld = {_name(tp): m for tp, m in assignor.last_transferring.items()}
    before = {tp: m for m, ps in previous.items() for tp in ps}
    moved = []
    for m, ps in assignment.items():
        for tp in ps:
            if before.get(tp, m) != m:
                moved.append((_name(tp), before[tp], m))
    for tp_name, m in withheld.items():
        t = parse_partition(tp_name)
        if t in before and before[t] != m:
            moved.append((tp_name, before[t], m))
    moved.sort()
    return {
        "strategy": args.strategy,
        "assignment": {m: [_name(tp) for tp in ps] for m, ps in assignment.items()},
        "withheld": withheld,
        "moved": [{"partition": p, "from": a, "to": b} for p, a, b in moved],
    }


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the ``assign`` subcommand; returns the exit status."""
    out = out or sys.stdout
    result = plan(args)
    if args.json:
        json.dump(result, out, indent=2)
        out.write("\n")
        return 0
    width = max((len(m) for m in result["assignment"]), default=0)
    for m, parts in result["assignment"].items():
        out.write(f"{m:<{width}}  {len(parts):>4}  {' '.join(parts)}\n")
    if result["withheld"]:
        out.write("\nwithheld until the next round (their owners revoke them first):\n")
        for p, m in sorted(result["withheld"].items()):
            out.write(f"  {p} -> {m}\n")
    if args.previous:
        out.write(f"\n{len(result['moved'])} partition(s) moved\n")
        for mv in result["moved"]:
            out.write(f"  {mv['partition']}: {mv['from']} -> {mv['to']}\n")
    return 0
