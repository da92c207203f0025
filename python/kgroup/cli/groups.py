"""``kgroup groups``: list, describe, delete consumer groups and reset their offsets, as
kafka-consumer-groups.sh does.

    kgroup groups list [--state [STATES]] [--type [consumer|classic]]
    kgroup groups describe GROUP [--members | --state | --offsets] [--verbose]
    kgroup groups delete GROUP
    kgroup groups reset-offsets GROUP --topic orders:0,1 --to-earliest [--execute]

The output and its rules are Kafka's ``ConsumerGroupCommand``'s: ``describe`` prints ``GROUP
TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID`` in columns at
least 15 wide, members' partitions first (the member with most partitions first), then the
partitions with a committed offset and no member, ``-`` where a value is unknown; standard error
says when the group has no active members or is rebalancing. ``reset-offsets`` is a dry run
unless ``--execute``, works only on a group with no members (Empty, or unknown), and keeps each
new offset within the partition's log (a warning on standard error when it moves one);
``--to-datetime`` takes each partition's first offset at or after the time, its end when there
is none.

Consumer groups of the consumer protocol (KIP-848) are described with ConsumerGroupDescribe
(:meth:`AdminClient.describe_consumer_groups`): ``list --type`` prints each group's type (and
filters by it when given types), ``describe --state --verbose`` adds GROUP-EPOCH and
TARGET-ASSIGNMENT-EPOCH, ``describe --members --verbose`` each member's epoch, assignment, the
target assignment epoch and its target assignment (``topic:0,1;other:2``), and UPGRADED when the
group has members of both protocols; ``describe --offsets --verbose`` the LEADER-EPOCH of each
committed offset. ``-`` where a classic group has no such value.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from kgroup.cli.connect import add_connection_options, client_config
from kgroup.client.admin import GROUP_STATES
from kgroup.errors import InvalidArgument

__all__ = ["add_parser", "parse_datetime", "run"]

MISSING = "-"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``groups`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "groups",
        help="list, describe, delete consumer groups, reset their offsets "
        "(kafka-consumer-groups.sh)",
        description=__doc__.split("\n\n")[0],
    )
    sub = p.add_subparsers(dest="action", required=True)
    listing = sub.add_parser("list", help="list the consumer groups")
    listing.add_argument(
        "--state",
        nargs="?",
        const="",
        metavar="STATES",
        help="print each group's state; only groups in these states (a comma list) when given",
    )
    listing.add_argument(
        "--type",
        nargs="?",
        const="",
        metavar="TYPES",
        help="print each group's type; only groups of these types (consumer, classic) when given",
    )
    describe = sub.add_parser("describe", help="a group's offsets and lag, members or state")
    describe.add_argument("group")
    which = describe.add_mutually_exclusive_group()
    which.add_argument("--members", action="store_true")
    which.add_argument("--state", action="store_true")
    which.add_argument("--offsets", action="store_true", help="the default")
    describe.add_argument(
        "--verbose",
        action="store_true",
        help="more columns: epochs and (target) assignments, leader epochs",
    )
    delete = sub.add_parser("delete", help="delete groups that have no members")
    delete.add_argument("group", nargs="+")
    reset = sub.add_parser("reset-offsets", help="move an inactive group's committed offsets")
    reset.add_argument("group")
    scope = reset.add_mutually_exclusive_group(required=True)
    scope.add_argument(
        "--topic", action="append", metavar="TOPIC[:P,P]", help="a topic, or some partitions"
    )
    scope.add_argument("--all-topics", action="store_true", help="every committed partition")
    to = reset.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true")
    to.add_argument("--to-latest", action="store_true")
    to.add_argument("--to-current", action="store_true")
    to.add_argument("--to-offset", type=int, metavar="N")
    to.add_argument("--shift-by", type=int, metavar="N")
    to.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss")
    reset.add_argument("--execute", action="store_true", help="commit the new offsets")
    reset.add_argument("--dry-run", action="store_true", help="only print them (the default)")
    for s in (listing, describe, delete, reset):
        add_connection_options(s)
        s.add_argument(
            "--timeout", type=int, default=5000, metavar="MS", help="each call's time (ms)"
        )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run one ``groups`` action; returns the exit status."""
    from kgroup.client.admin import AdminClient

    out = out or sys.stdout
    with AdminClient(client_config(args)) as admin:
        timeout = args.timeout / 1000.0
        if args.action == "list":
            return _list(admin, args, out, timeout)
        if args.action == "describe":
            return _describe(admin, args, out, timeout)
        if args.action == "delete":
            return _delete(admin, args.group, out, timeout)
        return _reset(admin, args, out, timeout)


def _error(out: TextIO, message: str) -> None:
    """Kafka's ``printError``: a blank line, then ``Error: message``, on standard output."""
    print(f"\nError: {message}", file=out)


def _row(widths: Sequence[int], values: Sequence[Any]) -> str:
    """Java's ``%-Ns`` columns joined by one space; the last column (width 0) unpadded."""
    return " ".join(str(v).ljust(w) for w, v in zip(widths, values, strict=True))


#: The states a consumer group can be in, by lower-case name (Java's
#: ``GroupState.groupStatesForType(CONSUMER)``): what ``list --state`` accepts.
_LIST_STATES = {k: v for k, v in GROUP_STATES.items() if v != "Unknown"}


def _list_filters(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """``--state`` and ``--type``'s values (Kafka's names), checked as Kafka's
    ``groupStatesFromString`` and ``consumerGroupTypesFromString`` check them."""
    states = [s.strip() for s in args.state.split(",")] if args.state else []
    if any(s.lower() not in _LIST_STATES for s in states):
        raise InvalidArgument(
            f"Invalid state list '{args.state}'. Valid states are: "
            + ", ".join(_LIST_STATES.values())
        )
    types = [t.strip().lower() for t in args.type.split(",")] if args.type else []
    if any(t not in ("consumer", "classic") for t in types):
        raise InvalidArgument(
            f"Invalid types list '{args.type}'. Valid types are: Classic, Consumer"
        )
    return [_LIST_STATES[s.lower()] for s in states], types


def _list(admin: Any, args: argparse.Namespace, out: TextIO, timeout: float) -> int:
    with_type, with_state = args.type is not None, args.state is not None
    states, types = _list_filters(args)
    listed = admin.list_consumer_groups(
        states=states or None, types=types or None, request_timeout=timeout
    ).result()
    # Kafka lists consumer groups: the consumer protocol's, and simple ones (offsets only).
    groups = [g for g in listed.valid if g.protocol_type in ("consumer", "")]
    if not with_type and not with_state:
        for g in groups:
            print(g.group_id, file=out)
        return 0
    width = max([15, *(len(g.group_id) for g in groups)]) + 10
    widths, header = [width], ["GROUP"]
    if with_type:
        widths.append(20)
        header.append("TYPE")
    if with_state:
        widths.append(20)
        header.append("STATE")
    print(_row(widths, header), file=out)
    for g in groups:
        row = [g.group_id]
        if with_type:
            row.append(g.type.display if g.type is not None else "Unknown")
        if with_state:
            row.append(g.state or "Unknown")
        print(_row(widths, row), file=out)
    return 0


def _state_message(group: str, state: str, rows: int, out: TextIO) -> bool:
    """Kafka's ``shouldPrintMemberState``: what is said of the group's state (Dead on standard
    output as an error, Empty and rebalancing on standard error), and whether to print rows."""
    if state == "Dead":
        _error(out, f"Consumer group '{group}' does not exist.")
    elif state == "Empty":
        print(f"\nConsumer group '{group}' has no active members.", file=sys.stderr)
    elif state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):
        print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=sys.stderr)
    return state != "Dead" and rows > 0


def _describe(admin: Any, args: argparse.Namespace, out: TextIO, timeout: float) -> int:
    group = args.group
    d = admin.describe_consumer_groups([group], request_timeout=timeout)[group].result()
    if args.state:
        _describe_state(group, d, args.verbose, out)
        return 0
    if args.members:
        _describe_members(group, d, args.verbose, out)
        return 0
    return _describe_offsets(admin, group, d, args.verbose, out, timeout)


def _show(value: object) -> str:
    """Java's ``Optional.map(Object::toString).orElse("-")``."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _describe_state(group: str, d: Any, verbose: bool, out: TextIO) -> None:
    """Kafka's ``printStates``."""
    if not _state_message(group, d.state, 1, out):
        return
    c = d.coordinator
    coordinator = f"{c.host}:{c.port}  ({c.id})"
    head = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE"]
    row = [group, coordinator, d.protocol or MISSING, d.state]
    widths = [max(15, len(group)), max(25, len(coordinator)), 20, 20]
    if verbose:
        head += ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]
        row += [_show(d.group_epoch), _show(d.target_assignment_epoch)]
        widths += [15, 25]
    widths.append(0)
    print("\n" + _row(widths, [*head, "#MEMBERS"]), end="", file=out)
    print("\n" + _row(widths, [*row, len(d.members)]), file=out)


def _assignment_text(tps: Sequence[Any] | None) -> str:
    """Kafka's ``getAssignmentString``: ``topic:0,1;other:2`` (each topic's partitions in
    order, the topics' texts in order); ``-`` for none."""
    if not tps:
        return MISSING
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ";".join(
        sorted(f"{t}:" + ",".join(str(p) for p in sorted(ps)) for t, ps in by_topic.items())
    )


def _describe_members(group: str, d: Any, verbose: bool, out: TextIO) -> None:
    """Kafka's ``printMembers``: a member's partitions, and with ``verbose`` its epoch and
    assignment, the group's target assignment epoch, its target assignment and, when the group
    has members of both protocols, whether it is upgraded (of the consumer protocol)."""
    _state_message(group, d.state, len(d.members), out)
    members = d.members if d.state != "Dead" else []
    with_instance = any(m.group_instance_id for m in members)
    current = [_assignment_text(m.assignment) for m in members]
    target = [_assignment_text(m.target_assignment) for m in members]
    widths = [max([15, len(group)])]
    widths.append(max([15, *(len(m.member_id) for m in members)]))
    if with_instance:
        widths.append(max([17, *(len(m.group_instance_id or "") for m in members)]))
    widths.append(max([15, *(len(m.host) for m in members)]))
    widths.append(max([15, *(len(m.client_id) for m in members)]))
    widths.append(15)
    # Kafka's hasMigrationMember: a classic member and a consumer-protocol one, both.
    upgrade = any(m.upgraded is False for m in members) and any(m.upgraded for m in members)
    extra = [15, max([20, *map(len, current)]), 15, max([20, *map(len, target)])]
    if upgrade:
        extra.append(0)
    head = ["GROUP", "CONSUMER-ID"] + (["GROUP-INSTANCE-ID"] if with_instance else [])
    line = _row(widths, [*head, "HOST", "CLIENT-ID", "#PARTITIONS"]) + " "
    if verbose:
        names = ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"]
        line += _row(extra, names + (["UPGRADED"] if upgrade else []))
    print("\n" + line, file=out)
    for i, m in enumerate(members):
        ids = [group, m.member_id] + ([m.group_instance_id or ""] if with_instance else [])
        line = _row(widths, [*ids, m.host, m.client_id, len(m.assignment)]) + " "
        if verbose:
            values = [
                _show(m.member_epoch),
                current[i],
                _show(d.target_assignment_epoch),
                target[i],
            ]
            line += _row(extra, values + ([_show(m.upgraded)] if upgrade else []))
        print(line, file=out)


def _describe_offsets(
    admin: Any, group: str, d: Any, verbose: bool, out: TextIO, timeout: float
) -> int:
    from kgroup.client.admin import OffsetSpec

    committed: dict[tuple[str, int], int] = {}
    epochs: dict[tuple[str, int], int | None] = {}
    for tp in admin.list_consumer_group_offsets(group, request_timeout=timeout)[group].result():
        if tp.offset >= 0:
            committed[(tp.topic, tp.partition)] = tp.offset
            epochs[(tp.topic, tp.partition)] = tp.leader_epoch
    # (topic, partition, consumer id, host, client id): members with partitions, the most
    # first (a stable sort, as Java's), then the committed partitions no member has.
    rows: list[tuple[str, int, str, str, str]] = []
    assigned: set[tuple[str, int]] = set()
    for m in sorted(
        (m for m in d.members if m.assignment), key=lambda m: len(m.assignment), reverse=True
    ):
        tps = sorted({(tp.topic, tp.partition) for tp in m.assignment})
        assigned.update(tps)
        rows.extend((t, p, m.member_id, m.host, m.client_id) for t, p in tps)
    rows.extend((t, p, MISSING, MISSING, MISSING) for t, p in sorted(set(committed) - assigned))
    if not _state_message(group, d.state, len(rows), out):
        return 0
    ends = _offsets(admin, {(t, p) for t, p, *_ in rows}, OffsetSpec.latest(), timeout)
    # Kafka's printOffsetFormat: LEADER-EPOCH (the committed offset's) after PARTITION when
    # verbose.
    widths = [max([15, len(group)]), max([15, *(len(r[0]) for r in rows)]), 10]
    head = ["GROUP", "TOPIC", "PARTITION"]
    if verbose:
        widths.append(15)
        head.append("LEADER-EPOCH")
    widths += [
        15,
        15,
        15,
        max([15, *(len(r[2]) for r in rows)]),
        max([15, *(len(r[3]) for r in rows)]),
        0,
    ]
    head += ["CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
    text = "\n" + _row(widths, head)
    for t, p, consumer, host, client in rows:
        offset = committed.get((t, p))
        end = ends.get((t, p))
        lag = end - offset if offset is not None and end is not None else None
        values: list[object] = [group, t, p]
        if verbose:
            values.append(_show(epochs.get((t, p))))
        values += [_show(offset), _show(end), _show(lag), consumer, host, client]
        text += "\n" + _row(widths, values)
    print(text, file=out)
    return 0


def _offsets(
    admin: Any, tps: set[tuple[str, int]], spec: Any, timeout: float
) -> dict[tuple[str, int], int]:
    """ListOffsets of ``tps``; the partitions that fail are left out (shown as ``-``)."""
    from kgroup.client.types import TopicPartition

    if not tps:
        return {}
    futures = admin.list_offsets(
        {TopicPartition(t, p): spec for t, p in sorted(tps)}, request_timeout=timeout
    )
    out: dict[tuple[str, int], int] = {}
    for tp, f in futures.items():
        try:
            r = f.result()
        except Exception:
            continue
        out[(tp.topic, tp.partition)] = r.offset
    return out


def _delete(admin: Any, groups: list[str], out: TextIO, timeout: float) -> int:
    futures = admin.delete_consumer_groups(groups, request_timeout=timeout)
    ok: list[str] = []
    failed: dict[str, Exception] = {}
    for g, f in futures.items():
        try:
            f.result()
            ok.append(g)
        except Exception as e:
            failed[g] = e
    if not failed:
        names = ", ".join(f"'{g}'" for g in ok)
        print(f"Deletion of requested consumer groups ({names}) was successful.", file=out)
        return 0
    _error(out, "Deletion of some consumer groups failed:")
    for g, err in failed.items():
        print(f"* Group '{g}' could not be deleted due to: {type(err).__name__}: {err}", file=out)
    if ok:
        names = ", ".join(f"'{g}'" for g in ok)
        print(f"\nThese consumer groups were deleted successfully: {names}", file=out)
    return 1


def parse_datetime(text: str) -> int:
    """``--to-datetime``'s value in ms since the epoch: ISO 8601
    (``2024-01-31T12:00:00.000``, ``...+02:00``, ``...Z``); without a zone, UTC, as Kafka's
    ``Utils.getDateTime`` reads it."""
    s = text.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    try:
        dt = datetime.datetime.fromisoformat(s)
    except ValueError:
        raise InvalidArgument(
            f"--to-datetime {text!r} is not of the form YYYY-MM-DDTHH:mm:SS.sss"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.UTC)
    return int(dt.timestamp() * 1000)


def _partitions_to_reset(
    admin: Any, args: argparse.Namespace, group: str, timeout: float
) -> list[tuple[str, int]]:
    if args.all_topics:
        committed = admin.list_consumer_group_offsets(group, request_timeout=timeout)[group]
        return sorted((tp.topic, tp.partition) for tp in committed.result())
    out: set[tuple[str, int]] = set()
    for item in args.topic:
        topic, sep, parts = item.partition(":")
        md = admin.list_topics(topic, timeout=timeout).topics.get(topic)
        if md is None or md.error is not None:
            raise InvalidArgument(f'The partitions "{topic}" do not exist')
        if sep:
            wanted = [int(p) for p in parts.split(",") if p.strip()]
            missing = [p for p in wanted if p not in md.partitions]
            if missing:
                names = ",".join(f"{topic}-{p}" for p in missing)
                raise InvalidArgument(f'The partitions "{names}" do not exist')
            out.update((topic, p) for p in wanted)
        else:
            out.update((topic, p) for p in md.partitions)
    return sorted(out)


def _reset(admin: Any, args: argparse.Namespace, out: TextIO, timeout: float) -> int:
    from kgroup.client.admin import OffsetSpec
    from kgroup.client.types import TopicPartition

    group = args.group
    d = admin.describe_consumer_groups([group], request_timeout=timeout)[group].result()
    plan: dict[tuple[str, int], int] = {}
    if d.state not in ("Empty", "Dead"):
        _error(
            out,
            f"Assignments can only be reset if the group '{group}' is inactive, but the "
            f"current state is {d.state}.",
        )
        _print_plan(group, plan, out)
        return 0
    tps = _partitions_to_reset(admin, args, group, timeout)
    if tps:
        earliest = _offsets(admin, set(tps), OffsetSpec.earliest(), timeout)
        latest = _offsets(admin, set(tps), OffsetSpec.latest(), timeout)

        def clamp(tp: tuple[str, int], offset: int) -> int:
            """Kafka's ``checkOffsetRange``: within [log start, log end]."""
            lo, hi = earliest[tp], latest[tp]
            name = f"{tp[0]}-{tp[1]}"
            if offset > hi:
                print(
                    f"New offset ({offset}) is higher than latest offset for topic partition "
                    f"{name}. Value will be set to {hi}",
                    file=sys.stderr,
                )
                return hi
            if offset < lo:
                print(
                    f"New offset ({offset}) is lower than earliest offset for topic partition "
                    f"{name}. Value will be set to {lo}",
                    file=sys.stderr,
                )
                return lo
            return offset

        if args.to_earliest:
            plan = {tp: earliest[tp] for tp in tps}
        elif args.to_latest:
            plan = {tp: latest[tp] for tp in tps}
        elif args.to_offset is not None:
            plan = {tp: clamp(tp, args.to_offset) for tp in tps}
        elif args.shift_by is not None or args.to_current:
            current = {
                (tp.topic, tp.partition): tp.offset
                for tp in admin.list_consumer_group_offsets(group, request_timeout=timeout)[
                    group
                ].result()
                if tp.offset >= 0
            }
            for tp in tps:
                if tp not in current:
                    if args.to_current:  # Kafka: the partition's end when nothing is committed
                        plan[tp] = latest[tp]
                        continue
                    raise InvalidArgument(
                        f"Cannot shift offset for partition {tp[0]}-{tp[1]} since there is no "
                        "current committed offset"
                    )
                plan[tp] = clamp(tp, current[tp] + (args.shift_by or 0))
        else:
            at = parse_datetime(args.to_datetime)
            found = _offsets(admin, set(tps), OffsetSpec.for_timestamp(at), timeout)
            plan = {tp: found[tp] if found.get(tp, -1) >= 0 else latest[tp] for tp in tps}
        if args.execute and not args.dry_run:
            futures = admin.alter_consumer_group_offsets(
                group,
                [TopicPartition(t, p, o) for (t, p), o in plan.items()],
                request_timeout=timeout,
            )
            for f in futures.values():
                f.result()
    _print_plan(group, plan, out)
    return 0


def _print_plan(group: str, plan: dict[tuple[str, int], int], out: TextIO) -> None:
    """Kafka's ``printOffsetsToReset``."""
    widths = [max(15, len(group)), max([15, *(len(t) for t, _ in plan)]), 10, 0]
    text = "\n" + _row(widths, ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"])
    for (t, p), offset in sorted(plan.items()):
        text += "\n" + _row(widths, [group, t, p, offset])
    print(text, file=out)
