"""kgroup's server-side assignors (``range``, ``uniform``; ``rust/group/assignors/``) against
Apache Kafka 4.4's own classes (``RangeAssignor``, ``UniformAssignor``), run by the harness of
:mod:`support.kafka_assignors` on the same random groups.

The groups (:func:`random_group`, fixed seed): 1 to 20 members, some static (instance ids),
member and instance ids mostly Kafka-style but some with characters outside the BMP and above
U+E000, where Java's ``String.compareTo`` (UTF-16 units) and Rust's ``str`` order differ; 1 to 8
topics of 1 to 24 partitions with racks; members with racks or none; subscriptions shared by
all (Homogeneous) or drawn per member (Heterogeneous, some empty); previous targets that hold
each partition at most once, mostly by a subscriber of its topic, some by a member that no
longer subscribes to it (as after a subscription change); and one group in twenty subscribing to
a topic missing from the metadata. The subscription type is computed as Kafka computes it (all
subscriptions equal or not).

Kafka runs each group in two modes (the harness's header says how it builds each), and kgroup is
handed the members in the order Kafka's assignor walked them in that mode:

- ``ordered``: every collection Kafka iterates is in kgroup's order (subscribed topic ids and
  target topics ascending by their bytes, partitions ascending). Every result must be equal:
  both assignors, both subscription types, and the error message when a topic is missing.
- ``hashed``: hash-ordered collections, as Kafka's coordinator hands its assignors (a
  ``HashMap`` of members, ``HashSet`` of topic ids, ``HashMap`` of target topics to ``HashSet``
  of partitions).
  ``range`` depends on no iteration order and must be equal, and so must ``uniform`` on a
  Heterogeneous group (it sorts topics and partitions itself). ``uniform`` on a Homogeneous
  group walks each member's previous target in Java's hash order to choose which partitions
  a member over its quota keeps, and queues the others in that order: where no member gives up
  a partition the results must be equal; where one does, only these must hold: each member
  holds as many partitions as in Kafka's result and keeps as many of its previous ones, and the
  result is valid. (Seed 21848: range equal in 400 of 400 runs; uniform in 200 of 200
  ordered runs and 173 of 200 hashed ones, the 27 others all Homogeneous groups where a member
  gave up partitions.)

Racks change nothing in either (Kafka 3.8 removed rack awareness from both, KAFKA-16694); they
are in the groups so that a regression there would show.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Sequence
from typing import Any

import pytest
from support import kafka_assignors

from kgroup.errors import InvalidArgument, UnknownServerError
from kgroup.group import assign_consumer_group

SEED = 21_848
GROUPS = 200
RACKS = ["rack-a", "rack-b", "rack-c"]
# Ids whose order differs between UTF-16 units (Java) and code points (Rust): U+FF61 sorts after
# U+1F600's surrogates in Java, before it in Rust.
ODD_PREFIXES = ["\uff61", "\U0001f600", "\ue000", "z", "A"]

Assignment = dict[str, list[int]]


def topic_id(rng: random.Random) -> str:
    """A random topic id in Kafka's text form (url-safe base64 of 16 bytes, no padding)."""
    return base64.urlsafe_b64encode(rng.randbytes(16)).rstrip(b"=").decode()


def id_bytes(topic: str) -> bytes:
    return base64.urlsafe_b64decode(topic + "==")


def member_ids(rng: random.Random, n: int) -> list[str]:
    ids: set[str] = set()
    while len(ids) < n:
        if rng.random() < 0.2:
            ids.add(rng.choice(ODD_PREFIXES) + rng.choice(ODD_PREFIXES) + str(rng.randrange(100)))
        else:
            ids.add(topic_id(rng))
    out = sorted(ids)
    rng.shuffle(out)
    return out


def random_group(rng: random.Random) -> dict[str, Any]:
    """One group in the harness's input format, lists in kgroup's order."""
    topics = [
        {
            "id": topic_id(rng),
            "partitions": rng.randint(1, 24),
        }
        for _ in range(rng.randint(1, 8))
    ]
    for t in topics:
        t["racks"] = [rng.sample(RACKS, rng.randint(0, 2)) for _ in range(t["partitions"])]
    ids = [t["id"] for t in topics]
    missing = topic_id(rng) if rng.random() < 0.05 else None

    def subscription() -> list[str]:
        subs = [t for t in ids if rng.random() < 0.5]
        if missing is not None and rng.random() < 0.5:
            subs.append(missing)
        return subs

    shared = subscription() if rng.random() < 0.4 else None
    members = []
    names = member_ids(rng, rng.randint(1, 20))
    instances = member_ids(rng, len(names))
    for i, name in enumerate(names):
        subs = shared if shared is not None else subscription()
        members.append(
            {
                "id": name,
                "instance": f"i-{instances[i]}" if rng.random() < 0.25 else None,
                "rack": rng.choice([*RACKS, None]),
                "topics": sorted(subs, key=id_bytes),
                "target": {},
            }
        )
    for t in topics:
        subscribers = [m for m in members if t["id"] in m["topics"]]
        for p in range(t["partitions"]):
            if rng.random() < 0.3:
                continue
            owner = (
                rng.choice(subscribers)
                if subscribers and rng.random() < 0.85
                else rng.choice(members)
            )
            owner["target"].setdefault(t["id"], []).append(p)
    for m in members:
        m["target"] = sorted(m["target"].items(), key=lambda e: id_bytes(e[0]))
    homogeneous = all(set(m["topics"]) == set(members[0]["topics"]) for m in members)
    return {
        "type": "Homogeneous" if homogeneous else "Heterogeneous",
        "topics": topics,
        "members": members,
    }


def kgroup_result(
    assignor: str, group: dict[str, Any], order: Sequence[str]
) -> dict[str, Assignment] | str:
    """kgroup's assignment of ``group`` with its members in ``order``, by member id; or the
    error's message."""
    by_id = {m["id"]: m for m in group["members"]}
    members = [
        (
            m["id"],
            m["instance"],
            m["rack"],
            m["topics"],
            dict(m["target"]),
        )
        for m in (by_id[i] for i in order)
    ]
    counts = {t["id"]: t["partitions"] for t in group["topics"]}
    try:
        out = assign_consumer_group(assignor, members, counts, group["type"])
    except UnknownServerError as e:
        return str(e)
    return dict(zip(order, out, strict=True))


def kafka_result(line: dict[str, Any], group: dict[str, Any]) -> dict[str, Assignment] | str:
    """Kafka's answer, with an empty assignment for every member it left out (uniform answers
    no member at all when the group subscribes to nothing)."""
    if "error" in line:
        return str(line["error"])
    got = line["assignment"]
    return {m["id"]: got.get(m["id"], {}) for m in group["members"]}


def size(a: Assignment) -> int:
    return sum(len(p) for p in a.values())


def held(member: dict[str, Any]) -> int:
    """How many partitions of its subscribed topics the member's previous target holds."""
    return sum(len(ps) for t, ps in member["target"] if t in member["topics"])


def kept(a: Assignment, member: dict[str, Any]) -> int:
    """How many partitions of its previous target the member keeps in ``a``."""
    return sum(len(set(a.get(t, [])) & set(ps)) for t, ps in member["target"])


def check_valid(group: dict[str, Any], result: dict[str, Assignment]) -> None:
    subscribed = {m["id"]: set(m["topics"]) for m in group["members"]}
    owners: dict[tuple[str, int], str] = {}
    for member, a in result.items():
        for t, ps in a.items():
            assert t in subscribed[member], (member, t)
            for p in ps:
                assert (t, p) not in owners, (t, p)
                owners[t, p] = member
    wanted = {
        (t["id"], p)
        for t in group["topics"]
        if any(t["id"] in s for s in subscribed.values())
        for p in range(t["partitions"])
    }
    assert set(owners) == wanted


@pytest.fixture(scope="module")
def runs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    rng = random.Random(SEED)
    groups = [random_group(rng) for _ in range(GROUPS)]
    lines = kafka_assignors.run(groups)
    assert len(lines) == GROUPS * 4
    return [(groups[line["group"]], line) for line in lines]


def test_range_matches_kafka(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """``range`` gives Kafka's assignment, or Kafka's error, for every group in both modes."""
    compared = 0
    for group, line in runs:
        if line["assignor"] != "range":
            continue
        want = kafka_result(line, group)
        got = kgroup_result("range", group, line["order"])
        assert got == want, (line["group"], line["mode"], group)
        compared += 1
    assert compared == GROUPS * 2


def test_uniform_matches_kafka(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """``uniform`` gives Kafka's assignment, or Kafka's error, for every group in ``ordered``
    mode and, in ``hashed`` mode, wherever Kafka's result depends on no hash order (see the
    module's docstring); elsewhere the same sizes and stickiness as Kafka's, and valid."""
    tally = {"exact": 0, "properties": 0, "errors": 0, "homogeneous": 0, "heterogeneous": 0}
    for group, line in runs:
        if line["assignor"] != "uniform":
            continue
        want = kafka_result(line, group)
        got = kgroup_result("uniform", group, line["order"])
        where = (line["group"], line["mode"], group)
        if isinstance(want, str):
            assert got == want, where
            tally["errors"] += 1
            continue
        tally[group["type"].lower()] += 1
        assert not isinstance(got, str), (got, where)
        check_valid(group, got)
        members = {m["id"]: m for m in group["members"]}
        gave_up = any(kept(want[i], m) < held(m) for i, m in members.items())
        if line["mode"] == "ordered" or group["type"] == "Heterogeneous" or not gave_up:
            assert got == want, where
            tally["exact"] += 1
        else:
            for i, m in members.items():
                assert size(got[i]) == size(want[i]), (i, where)
                assert kept(got[i], m) == kept(want[i], m), (i, where)
            tally["properties"] += 1
    # Every kind of group was met, and most compared exactly.
    assert tally["errors"] > 0 and tally["homogeneous"] > 50 and tally["heterogeneous"] > 100
    assert tally["exact"] > 3 * tally["properties"], tally


def test_assign_consumer_group_arguments() -> None:
    """The binding's own checks (no Kafka): the subscription type is computed when not given,
    and unknown assignors, subscription types and malformed topic ids are refused."""
    t1, t2 = "T1-A4s3VTwiI5CTbEp6POw", "T2-B4s3VTwiI5YHbPp6YUQ"
    members = [("A", None, None, [t1], {}), ("B", None, None, [t1, t2], {t2: [1]})]
    counts = {t1: 2, t2: 2}
    # Heterogeneous: B keeps t2-1 and takes t2-0; A and B share t1 one each.
    assert assign_consumer_group("uniform", members, counts) == [{t1: [0, 1]}, {t2: [0, 1]}]
    assert assign_consumer_group("range", members, counts) == [{t1: [0]}, {t1: [1], t2: [0, 1]}]
    with pytest.raises(InvalidArgument, match="no server-side assignor"):
        assign_consumer_group("sticky", members, counts)
    with pytest.raises(InvalidArgument, match="subscription type"):
        assign_consumer_group("range", members, counts, "homogeneous")
    with pytest.raises(InvalidArgument, match="topic id"):
        assign_consumer_group("range", [("A", None, None, ["topic1"], {})], counts)
