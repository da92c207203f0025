"""``kgroup groups``: list, describe, delete consumer groups and reset their offsets, as
kafka-consumer-groups.sh does.

    kgroup groups list [--state]
    kgroup groups describe GROUP [--members | --state]
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
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from kgroup.cli.connect import add_connection_options, client_config
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
    listing.add_argument("--state", action="store_true", help="print each group's state too")
    describe = sub.add_parser("describe", help="a group's offsets and lag, members or state")
    describe.add_argument("group")
    which = describe.add_mutually_exclusive_group()
    which.add_argument("--members", action="store_true")
    which.add_argument("--state", action="store_true")
    which.add_argument("--offsets", action="store_true", help="the default")
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


def _list(admin: Any, args: argparse.Namespace, out: TextIO, timeout: float) -> int:
    listed = admin.list_consumer_groups(request_timeout=timeout).result()
    # Kafka lists consumer groups: the consumer protocol's, and simple ones (offsets only).
    groups = [g for g in listed.valid if g.protocol_type in ("consumer", "")]
    if not args.state:
        for g in groups:
            print(g.group_id, file=out)
        return 0
    width = max([15, *(len(g.group_id) for g in groups)]) + 10
    print(_row([width, 20], ["GROUP", "STATE"]), file=out)
    for g in groups:
        print(_row([width, 20], [g.group_id, g.state or "Unknown"]), file=out)
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
        if _state_message(group, d.state, 1, out):
            c = d.coordinator
            coordinator = f"{c.host}:{c.port}  ({c.id})"
            widths = [max(15, len(group)), max(25, len(coordinator)), 20, 20, 0]
            strategy = d.protocol or MISSING
            print(
                "\n"
                + _row(
                    widths,
                    ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
                ),
                end="",
                file=out,
            )
            print(
                "\n" + _row(widths, [group, coordinator, strategy, d.state, len(d.members)]),
                file=out,
            )
        return 0
    if args.members:
        _state_message(group, d.state, len(d.members), out)
        with_instance = any(m.group_instance_id for m in d.members)
        widths = [max([15, len(group)])]
        widths.append(max([15, *(len(m.member_id) for m in d.members)]))
        if with_instance:
            widths.append(max([17, *(len(m.group_instance_id or "") for m in d.members)]))
        widths.append(max([15, *(len(m.host) for m in d.members)]))
        widths.append(max([15, *(len(m.client_id) for m in d.members)]))
        widths.append(15)
        head = ["GROUP", "CONSUMER-ID"] + (["GROUP-INSTANCE-ID"] if with_instance else [])
        print("\n" + _row(widths, [*head, "HOST", "CLIENT-ID", "#PARTITIONS"]) + " ", file=out)
        if d.state != "Dead":
            for m in d.members:
                ids = [group, m.member_id] + ([m.group_instance_id or ""] if with_instance else [])
                print(_row(widths, [*ids, m.host, m.client_id, len(m.assignment)]) + " ", file=out)
        return 0
    return _describe_offsets(admin, group, d, out, timeout)


def _describe_offsets(admin: Any, group: str, d: Any, out: TextIO, timeout: float) -> int:
    from kgroup.client.admin import OffsetSpec

    committed = {
        (tp.topic, tp.partition): tp.offset
        for tp in admin.list_consumer_group_offsets(group, request_timeout=timeout)[group].result()
        if tp.offset >= 0
    }
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
    widths = [
        max([15, len(group)]),
        max([15, *(len(r[0]) for r in rows)]),
        10,
        15,
        15,
        15,
        max([15, *(len(r[2]) for r in rows)]),
        max([15, *(len(r[3]) for r in rows)]),
        0,
    ]
    text = "\n" + _row(
        widths,
        [
            "GROUP",
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
        ],
    )
    for t, p, consumer, host, client in rows:
        offset = committed.get((t, p))
        end = ends.get((t, p))
        lag = end - offset if offset is not None and end is not None else None

        def show(v: int | None) -> str:
            return MISSING if v is None else str(v)

        text += "\n" + _row(
            widths, [group, t, p, show(offset), show(end), show(lag), consumer, host, client]
        )
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
