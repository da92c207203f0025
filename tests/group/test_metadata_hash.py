"""The metadata hash of a consumer group (KIP-1101) is Kafka's own: the ``metadata_hash`` that
kgroup's coordinator writes in a group's ConsumerGroupMetadataValue equals what Kafka 4.4.0's
``ModernGroup.computeMetadataHash`` (over ``Utils.computeTopicHash``) gives for the same topics,
run by ``tests/support/java_hash/MetadataHash.java`` against Kafka's jars. A group then moves
between Kafka's log and kgroup's without an epoch bump.

The topics are drawn at random from a fixed seed: names of every legal length and character,
ids, partition counts from 1 to 300, so that the hashed inputs cover every length class of
XXH3 (up to 16 bytes, 17-128, 129-240, longer).
"""

from __future__ import annotations

import random
import struct
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.apache_kafka import FAST_JVM, classpath, java

from kgroup import protocol
from kgroup.group import Append, Coordinator, Respond
from kgroup.protocol.records import decode_batches

HEARTBEAT = 68
SOURCE = Path(__file__).resolve().parents[1] / "support" / "java_hash" / "MetadataHash.java"
#: The characters of a legal topic name (Kafka's `Topic.validate`).
LEGAL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

Topic = tuple[str, bytes, int]


def draw_topics(rng: random.Random, n: int) -> list[Topic]:
    names: set[str] = set()
    while len(names) < n:
        name = "".join(rng.choices(LEGAL, k=rng.choice([1, 2, 5, 30, rng.randint(1, 249)])))
        if name not in (".", ".."):
            names.add(name)
    return [
        (name, rng.randbytes(16), rng.choice([1, 2, 3, rng.randint(1, 300)]))
        for name in sorted(names)
    ]


def draw_groups(rng: random.Random, topics: list[Topic], n: int) -> list[list[str]]:
    names = [t[0] for t in topics]
    groups = [[name] for name in names[:10]]
    groups.append(["missing"])
    groups.append([names[0], "missing"])
    while len(groups) < n:
        groups.append(rng.sample(names, rng.choice([2, 3, 17, 31, rng.randint(1, len(names))])))
    return groups


def kafkas_hashes(topics: list[Topic], groups: list[list[str]]) -> list[int]:
    """Kafka's hash of each group's subscribed topics, from Kafka's own code."""
    lines = [
        f"topic\t{name}\t{topic_id.hex()}\t{partitions}" for name, topic_id, partitions in topics
    ]
    lines += ["\t".join(["group", *names]) for names in groups]
    # Java's source launcher compiles the one file in memory (the JDK's compiler, as javac).
    got = subprocess.run(
        [java(), "-Xmx128m", *FAST_JVM, "-cp", classpath(), str(SOURCE)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, got.stderr
    out = [int(x) for x in got.stdout.split()]
    assert len(out) == len(lines)
    return out[len(topics) :]


def heartbeat(group: str, names: list[str]) -> protocol.Request:
    body: dict[str, Any] = {
        "group_id": group,
        "member_id": uuid.uuid4().hex,
        "member_epoch": 0,
        "instance_id": None,
        "rack_id": None,
        "rebalance_timeout_ms": 30_000,
        "subscribed_topic_names": names,
        "subscribed_topic_regex": None,
        "server_assignor": None,
        "topic_partitions": [],
    }
    frame = protocol.encode_request(HEARTBEAT, 1, 1, "c", body)
    return protocol.decode_request(frame[4:])


def read_metadata_hash(value: bytes) -> tuple[int, int]:
    """The group epoch and metadata hash of a ConsumerGroupMetadataValue v0 (the hash is tagged
    field 0, absent when 0)."""
    version, epoch = struct.unpack_from(">hi", value)
    assert version == 0
    pos = 6

    def uvarint() -> int:
        nonlocal pos
        out = shift = 0
        while True:
            b = value[pos]
            pos += 1
            out |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return out

    metadata_hash = 0
    for _ in range(uvarint()):
        tag, size = uvarint(), uvarint()
        if tag == 0:
            assert size == 8
            (metadata_hash,) = struct.unpack_from(">q", value, pos)
        pos += size
    assert pos == len(value)
    return epoch, metadata_hash


def kgroups_hashes(topics: list[Topic], groups: list[list[str]]) -> list[int]:
    """The hash kgroup's coordinator writes when each group's first member joins."""
    c = Coordinator(seed=7)
    c.set_topic_metadata(list(topics))
    out = []
    for i, names in enumerate(groups):
        group = f"g{i}"
        written = []
        for e in c.handle(0, i, heartbeat(group, names)):
            if isinstance(e, Append):
                for batch in decode_batches(e.records):
                    written += [
                        r.value
                        for r in batch.records
                        if r.key[:2] == b"\x00\x03" and r.value is not None
                    ]
                c.appended(0, e.token)
            else:
                assert isinstance(e, Respond)
        [value] = written  # ConsumerGroupMetadataValue: the group's first epoch
        out.append(read_metadata_hash(value)[1])
    return out


@pytest.mark.parametrize("seed", [1101])
def test_the_metadata_hash_is_kafkas(seed: int) -> None:
    rng = random.Random(seed)
    topics = draw_topics(rng, 60)
    groups = draw_groups(rng, topics, 60)
    want = kafkas_hashes(topics, groups)
    # Topics that do not exist are left out, and a group of none of them is 0; every other
    # group's hash differs.
    assert want[10] == 0 and want[11] == want[0]
    others = want[:10] + want[12:]
    assert len(set(others)) == len(others)
    assert kgroups_hashes(topics, groups) == want
