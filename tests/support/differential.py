"""Differential conformance: the same request sequence, on the wire through kgroup's codec, to
Apache Kafka and to kgroup's broker, and their answers compared field by field.

A :class:`Differential` holds one :class:`Peer` per broker (kgroup's first, then Kafka's) and
runs each step on both in lockstep: :meth:`Differential.request` sends a body to both, decodes
both answers, normalises them (:class:`Normaliser`) and raises :class:`Mismatch` with every
differing field when they are not equal. A body may depend on earlier answers (a member id, a
generation): give it as a function of the peer, which reads what a step stored with
:meth:`Differential.keep` from that peer's own answers.

Requests that a broker parks (a JoinGroup waiting for the rest of its group) go through
:meth:`Differential.send` and :meth:`Differential.receive` on a named connection;
:meth:`Differential.parked` checks that neither broker has answered yet. kgroup answers first:
when it has answered, Kafka gets a long wait; when it has not, Kafka gets the same short one,
so that both answer within short timeouts.

What normalising means: ids that each broker makes up (member ids, the cluster id, node ids,
topic ids, producer ids, fetch session ids) become ``<kind N>`` in order of first appearance in
the sequence, so that the same id must recur in the same places on both; times that a broker
picks (throttle times, timestamps it assigns) become ``<time>``; error messages become
``<message>`` when they say anything (their wording is listed in docs/kafka-differences.md),
so that only their presence is compared; lists keyed by name (topics, configs), group or
partition are sorted by it, a group's members by id; host names and ports become ``<host>``
and ``<port>``. Record sets are decoded into their batches and compared by content.
"""

from __future__ import annotations

import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgroup import protocol
from kgroup.protocol import ApiKey
from kgroup.protocol.records import decode_batches

from .kgroup_broker import Wire
from .wire import read_frame

Body = Mapping[str, Any]
BodyFn = Body | Callable[["Peer"], Body]

#: BROKER_CONFIG is what both brokers run with: the settings of tests/conftest.py's ``kafka``.
BROKER_CONFIG = {"group.initial.rebalance.delay.ms": 0, "num.partitions": 1}

#: ID_FIELDS names the fields whose values a broker makes up, by the kind of id.
ID_FIELDS = {
    "member_id": "member",
    "leader": "member",
    "cluster_id": "cluster",
    "node_id": "node",
    "leader_id": "node",
    "controller_id": "node",
    "broker_id": "node",
    "coordinator_id": "node",
    "replica_nodes": "node",
    "isr_nodes": "node",
    "topic_id": "topic_id",
    "producer_id": "producer",
    "session_id": "session",
    "host": "host",
    "port": "port",
}
#: SORT_KEYS are the keys of answer lists whose order means nothing, by precedence.
SORT_KEYS = ("name", "group_id", "partition_index")
#: TIME_FIELDS are times a broker picks; compared only by being set (>= 0) or not.
TIME_FIELDS = {"throttle_time_ms", "log_append_time_ms", "current_state_timestamp"}
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_NULL_UUID = "00000000-0000-0000-0000-000000000000"
NO_ID = uuid.UUID(int=0)


class Mismatch(AssertionError):
    """Kafka and kgroup answered a step differently: the step and every differing field."""


@dataclass
class Normaliser:
    """Normaliser maps the ids one broker made up to ``<kind N>``, N counted per kind in order of
    first appearance; deterministic for one sequence of answers."""

    seen: dict[tuple[str, Any], str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def id(self, kind: str, value: Any) -> Any:
        if value is None or value in ("", -1) or str(value) == _NULL_UUID:
            return value
        if kind == "session" and value == 0:
            return value  # no session
        key = (kind, value)
        if key not in self.seen:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            shape = _UUID.sub("<uuid>", value) if isinstance(value, str) else ""
            shape = f" {shape}" if shape and kind == "member" else ""
            self.seen[key] = f"<{kind} {self.counts[kind]}{shape}>"
        return self.seen[key]

    def value(self, name: str, v: Any, ignore: frozenset[str]) -> Any:
        if name in ignore:
            return "<ignored>"
        if name in ID_FIELDS:
            kind = ID_FIELDS[name]
            if isinstance(v, list):
                return [self.id(kind, x) for x in v]
            return self.id(kind, v)
        if name == "error_message" and v:
            return "<message>"
        if name == "batch_index_error_message" and v:
            # KIP-467's per-record text is compared, the times in it (a timestamp's bounds,
            # from each broker's clock) are not.
            return re.sub(r"\b1\d{12}\b", "<time>", v)
        if isinstance(v, Sequence) and v and isinstance(v[0], Mapping):
            # Answers keyed by name, group or partition come in each broker's own order, which
            # means nothing to a client (Kafka answers what it refuses before its coordinator
            # first).
            key = next((k for k in SORT_KEYS if k in v[0]), None)
            if key is not None:
                v = sorted(v, key=lambda x: str(x[key]) if key != "partition_index" else x[key])
        if name in TIME_FIELDS and isinstance(v, int):
            return "<time>" if v > 0 else v
        if name == "records" and isinstance(v, (bytes, bytearray)):
            return self.records(bytes(v))
        if isinstance(v, Mapping):
            return {k: self.value(k, x, ignore) for k, x in v.items()}
        if name == "members" and isinstance(v, Sequence) and v and isinstance(v[0], Mapping):
            # A group's members come in each broker's own order (Kafka's is a hash map's).
            out = [self.value(name, x, ignore) for x in v]
            return sorted(out, key=lambda m: str(m.get("member_id")))
        if isinstance(v, Sequence) and not isinstance(v, (str, bytes, bytearray)):
            return [self.value(name, x, ignore) for x in v]
        return v

    def records(self, data: bytes) -> Any:
        if not data:
            return []
        try:
            batches = decode_batches(data)
        except Exception as e:  # a peer's bad bytes are a difference to show
            return f"<undecodable {type(e).__name__}>"
        return [
            {
                "base_offset": b.base_offset,
                "magic": b.magic,
                "producer_id": self.id("producer", b.producer_id),
                "producer_epoch": b.producer_epoch,
                "base_sequence": b.base_sequence,
                "timestamp_type": b.timestamp_type,
                "compression": b.compression,
                "control": b.is_control_batch,
                "transactional": b.is_transactional,
                "records": [
                    (
                        r.offset,
                        # A marker's time is its coordinator's clock.
                        r.timestamp
                        if b.timestamp_type == 0 and not b.is_control_batch
                        else "<time>",
                        r.key,
                        r.value,
                        list(r.headers),
                    )
                    for r in b.records
                ],
            }
            for b in batches
        ]


class Peer:
    """Peer is one broker of the comparison: its connections by name, what the sequence stored
    from its answers (``peer["m1"]``), and its normaliser."""

    def __init__(self, name: str, bootstrap: str) -> None:
        self.name = name
        self.bootstrap = bootstrap
        self.conns: dict[str, Wire] = {}
        self.vars: dict[str, Any] = {}
        self.norm = Normaliser()
        self.pending: dict[str, tuple[int, int, int]] = {}

    def __getitem__(self, key: str) -> Any:
        return self.vars[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.vars.get(key, default)

    def conn(self, name: str) -> Wire:
        if name not in self.conns:
            self.conns[name] = Wire(self.bootstrap)
        return self.conns[name]

    def send(self, conn: str, api_key: int, version: int, body: Body) -> None:
        w = self.conn(conn)
        assert conn not in self.pending, f"{conn} already waits for an answer"
        cid = next(w._ids)
        w.send(protocol.encode_request(api_key, version, cid, "wire", body))
        self.pending[conn] = (api_key, version, cid)

    def send_raw(
        self, conn: str, frame: Callable[[int], bytes], api_key: int, version: int
    ) -> None:
        """Send the frame ``frame(correlation_id)`` made by hand; its answer is read as
        ``api_key`` at ``version``."""
        w = self.conn(conn)
        assert conn not in self.pending, f"{conn} already waits for an answer"
        cid = next(w._ids)
        w.send(frame(cid))
        self.pending[conn] = (api_key, version, cid)

    def receive(self, conn: str, timeout: float) -> protocol.Response | None:
        """The answer of ``conn``'s pending request, None if none comes within ``timeout``."""
        api_key, version, cid = self.pending[conn]
        w = self.conns[conn]
        w.sock.settimeout(timeout)
        try:
            # A peek first, so that a timeout never leaves half a frame read.
            w.sock.recv(1, socket.MSG_PEEK)
        except TimeoutError:
            return None
        finally:
            w.sock.settimeout(30.0)
        r = protocol.decode_response(api_key, version, read_frame(w.sock))
        assert r.correlation_id == cid
        del self.pending[conn]
        return r

    def close(self) -> None:
        for w in self.conns.values():
            w.close()
        self.conns.clear()
        self.pending.clear()


@dataclass
class Answer:
    """Answer holds one step's answers from both brokers (None: parked), and their normal
    forms."""

    kgroup: protocol.Response | None
    kafka: protocol.Response | None
    normal: tuple[Any, Any]

    @property
    def body(self) -> Any:
        """kgroup's answer's body (equal to Kafka's once normalised)."""
        assert self.kgroup is not None
        return self.kgroup.body


def diff(a: Any, b: Any, path: str = "") -> Iterator[str]:
    """Every path where ``a`` (kgroup) and ``b`` (Kafka) differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                x, y = a.get(k, "<absent>"), b.get(k, "<absent>")
                yield f"{path}.{k}: kgroup {x!r} / kafka {y!r}"
            else:
                yield from diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from diff(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path or '.'}: kgroup {a!r} / kafka {b!r}"


class Differential:
    """Differential runs one request sequence on kgroup's broker and on Apache Kafka in
    lockstep and compares each step's normalised answers. Not thread-safe; close it (or use it
    as a context manager) to close every connection."""

    #: SHORT is how long an answer may take to count as not parked; LONG how long Kafka gets
    #: for an answer that kgroup gave.
    SHORT = 0.4
    LONG = 8.0

    def __init__(self, kgroup: str, kafka: str) -> None:
        self.peers = (Peer("kgroup", kgroup), Peer("kafka", kafka))
        self.steps: list[str] = []
        self.last_body: Body = {}
        #: rewrite, when set, turns each broker's answer (as a dict) into what is compared,
        #: before normalising: for what only the sequence knows how to read (a topic's id as
        #: the name it was created with, an epoch shifted by a documented difference).
        self.rewrite: Callable[[Peer, dict[str, Any]], dict[str, Any]] | None = None

    def __enter__(self) -> Differential:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for p in self.peers:
            p.close()

    def body(self, peer: Peer, body: BodyFn) -> Body:
        return body(peer) if callable(body) else body

    def request(
        self,
        api_key: int,
        version: int,
        body: BodyFn,
        conn: str = "main",
        ignore: Sequence[str] = (),
        expect: Callable[[Any], Any] | None = None,
    ) -> Answer:
        """Send ``body`` to both and wait for both answers; Mismatch unless they are equal once
        normalised (fields named in ``ignore``, at any depth, aside). ``expect``, given
        kgroup's body, must not return False: it pins kgroup's answer where a documented
        difference is ignored."""
        self.send(api_key, version, body, conn)
        return self.receive(conn, ignore=ignore, expect=expect, timeout=self.LONG)

    def raw(
        self,
        frame: Callable[[int], bytes],
        api_key: int,
        version: int,
        conn: str = "main",
        ignore: Sequence[str] = (),
    ) -> Answer:
        """Send a frame made by hand (``frame(correlation_id)``) to both, read both answers as
        ``api_key`` at ``version`` and compare them."""
        self.steps.append(f"{conn}: raw {ApiKey(api_key).name}, read as v{version}")
        for p in self.peers:
            p.send_raw(conn, frame, api_key, version)
        return self.receive(conn, ignore=ignore)

    def eventually(
        self,
        api_key: int,
        version: int,
        body: BodyFn,
        conn: str = "main",
        ignore: Sequence[str] = (),
        timeout: float = 5.0,
    ) -> Answer:
        """``request`` repeated until both answers agree (Mismatch after ``timeout``): for a
        read after a write that Kafka's brokers learn from its controller's metadata log a few
        milliseconds after the write's answer (topic configs, partition counts); kgroup's one
        node has them at once."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.request(api_key, version, body, conn, ignore)
            except Mismatch:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def send(self, api_key: int, version: int, body: BodyFn, conn: str = "main") -> None:
        """Send ``body`` on ``conn`` to both without waiting for the answers."""
        self.steps.append(f"{conn}: {ApiKey(api_key).name} v{version}")
        for p in self.peers:
            self.last_body = self.body(p, body)
            p.send(conn, api_key, version, self.last_body)

    def receive(
        self,
        conn: str = "main",
        ignore: Sequence[str] = (),
        expect: Callable[[Any], Any] | None = None,
        timeout: float | None = None,
    ) -> Answer:
        """Both answers of ``conn``'s pending request, compared; kgroup's must come within
        ``timeout`` (LONG by default), Kafka then gets LONG."""
        kg, ka = self.peers
        a = kg.receive(conn, self.LONG if timeout is None else timeout)
        if a is None:
            raise Mismatch(f"kgroup does not answer {self.steps[-1]}")
        b = ka.receive(conn, self.LONG)
        return self._compare(conn, a, b, frozenset(ignore), expect)

    def parked(self, *conns: str) -> None:
        """Neither broker has answered what ``conns`` wait for (within SHORT)."""
        for conn in conns:
            got = {p.name: p.receive(conn, self.SHORT) for p in self.peers}
            if any(v is not None for v in got.values()):
                raise Mismatch(
                    f"{conn} should be parked: "
                    + ", ".join(f"{k} {'answered' if v else 'parked'}" for k, v in got.items())
                )

    def settle(self, ignore: Sequence[str] = ()) -> dict[str, Answer | None]:
        """The answers that came on every pending connection within SHORT (kgroup) and then
        LONG (Kafka, for those kgroup answered; SHORT for the others), compared."""
        out: dict[str, Answer | None] = {}
        kg, ka = self.peers
        for conn in sorted(set(kg.pending) | set(ka.pending)):
            a = kg.receive(conn, self.SHORT) if conn in kg.pending else None
            b = (
                ka.receive(conn, self.LONG if a is not None else self.SHORT)
                if conn in ka.pending
                else None
            )
            if a is None and b is None:
                out[conn] = None
                continue
            if a is None or b is None:
                raise Mismatch(
                    f"{conn}: only {'kgroup' if a is not None else 'kafka'} answered"
                    f" ({a.body.to_dict() if a else b.body.to_dict() if b else ''})"
                    f"\nsteps: {self.steps}"
                )
            self.steps.append(f"{conn}: answered")
            out[conn] = self._compare(conn, a, b, frozenset(ignore), None)
        return out

    def _compare(
        self,
        conn: str,
        a: protocol.Response | None,
        b: protocol.Response | None,
        ignore: frozenset[str],
        expect: Callable[[Any], Any] | None,
    ) -> Answer:
        kg, ka = self.peers
        if b is None:
            raise Mismatch(f"kafka does not answer {self.steps[-1]}; kgroup: {a}")
        assert a is not None
        da, db = a.body.to_dict(), b.body.to_dict()
        if self.rewrite is not None:
            da, db = self.rewrite(kg, da), self.rewrite(ka, db)
        na = kg.norm.value("", da, ignore)
        nb = ka.norm.value("", db, ignore)
        differences = list(diff(na, nb))
        if differences:
            raise Mismatch(
                f"{self.steps[-1]}: "
                + "\n  ".join(differences)
                + f"\nkgroup: {na}\nkafka:  {nb}\nsteps: {self.steps}"
            )
        answer = Answer(a, b, (na, nb))
        if expect is not None:
            assert expect(a.body) is not False, f"{self.steps[-1]}: {na}"
        return answer

    def keep(self, name: str, answer: Answer, read: Callable[[Any], Any]) -> None:
        """Store ``read(body)`` of each broker's own answer as ``peer[name]``."""
        for p, r in zip(self.peers, (answer.kgroup, answer.kafka), strict=True):
            assert r is not None
            p.vars[name] = read(r.body)

    def each(self, fn: Callable[[Peer], Any]) -> list[Any]:
        """Run ``fn`` on each peer (kgroup first)."""
        return [fn(p) for p in self.peers]


def wait_for_coordinator(bootstrap: str, timeout: float = 60.0) -> None:
    """Wait until the broker at ``bootstrap`` coordinates every group: Kafka answers
    COORDINATOR_NOT_AVAILABLE, and a group request NOT_COORDINATOR, until its first
    FindCoordinator has created __consumer_offsets, and then loads each of its 50 partitions
    on its own (kgroup: ready at that first FindCoordinator). Asks for one group of each
    partition until none is loading."""
    from kgroup.group import partition_for

    groups: dict[int, str] = {}
    n = 0
    while len(groups) < 50:
        groups.setdefault(partition_for(f"kgroup-diff-{n}"), f"kgroup-diff-{n}")
        n += 1
    with Wire(bootstrap) as w:

        def ready() -> bool:
            body = {"key_type": 0, "coordinator_keys": ["kgroup-diff"]}
            r = w.request(ApiKey.FIND_COORDINATOR, 6, body)
            if r.body.coordinators[0].error_code != 0:
                return False
            body = {"groups": list(groups.values()), "include_authorized_operations": False}
            r = w.request(ApiKey.DESCRIBE_GROUPS, 5, body)
            return all(g.error_code == 0 for g in r.body.groups)

        wait_until(ready, timeout)


def wait_until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        time.sleep(0.05)


# -- steps that many sequences share -----------------------------------------------------------


def new_name(prefix: str) -> str:
    """A topic or group name used once, the same on both brokers."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def leaders_known(peer: Peer, topic: str, partitions: int) -> bool:
    w = peer.conn("metadata")
    r = w.request(ApiKey.METADATA, 12, {"topics": [{"topic_id": NO_ID, "name": topic}]})
    [t] = r.body.topics
    if t.error_code or len(t.partitions) != partitions:
        return False
    if not all(p.error_code == 0 and p.leader_id >= 0 for p in t.partitions):
        return False
    peer.vars[f"topic_id:{topic}"] = t.topic_id
    # Kafka's metadata can name a leader before its replica manager leads the partition (a
    # Produce then fails with NOT_LEADER_OR_FOLLOWER): ask the replica manager too.
    r = w.request(
        ApiKey.LIST_OFFSETS,
        9,
        {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {"partition_index": i, "current_leader_epoch": -1, "timestamp": -1}
                        for i in range(partitions)
                    ],
                }
            ],
        },
    )
    return all(p.error_code == 0 for t in r.body.topics for p in t.partitions)


def create_topic(
    d: Differential,
    partitions: int = 1,
    configs: Mapping[str, str] | None = None,
    name: str | None = None,
) -> str:
    """A new topic on both brokers (CreateTopics v7, compared), once each knows its leaders;
    ``peer["topic_id:<name>"]`` holds its id."""
    name = name or new_name("t")
    d.request(
        ApiKey.CREATE_TOPICS,
        7,
        {
            "topics": [
                {
                    "name": name,
                    "num_partitions": partitions,
                    "replication_factor": 1,
                    "assignments": [],
                    "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
                }
            ],
            "timeout_ms": 10_000,
            "validate_only": False,
        },
        ignore=["configs"],
        expect=lambda b: b.topics[0].error_code == 0 or _fail(b),
    )
    for p in d.peers:
        wait_until(lambda p=p: leaders_known(p, name, partitions))
    return name


def _fail(body: Any) -> bool:
    raise AssertionError(body.to_dict())


class Members:
    """Members runs classic group steps on both brokers for one group: each member (``"m1"``)
    on a connection of its own, its id and generation kept per broker from that broker's own
    answers (``peer["m1.id"]``, ``peer["m1.gen"]``). Sessions of 6 s (Kafka's
    group.min.session.timeout.ms) and rebalances of 10 s: longer than any sequence here, so
    that no answer waits for a timeout."""

    def __init__(
        self,
        d: Differential,
        group: str | None = None,
        protocol_type: str = "consumer",
        session_ms: int = 6000,
        rebalance_ms: int = 10_000,
    ) -> None:
        self.d = d
        self.group = group or new_name("g")
        self.protocol_type = protocol_type
        self.session_ms = session_ms
        self.rebalance_ms = rebalance_ms

    def join_body(
        self,
        m: str,
        instance: str | None = None,
        protocols: Sequence[str] = ("range", "roundrobin"),
        protocol_type: str | None = None,
        session_ms: int | None = None,
        member_id: str | None = None,
    ) -> BodyFn:
        def body(p: Peer) -> Body:
            if instance is not None:
                p.vars[f"{m}.instance"] = instance
            return {
                "group_id": self.group,
                "session_timeout_ms": self.session_ms if session_ms is None else session_ms,
                "rebalance_timeout_ms": self.rebalance_ms,
                "member_id": p.get(f"{m}.id", "") if member_id is None else member_id,
                "group_instance_id": instance,
                "protocol_type": protocol_type or self.protocol_type,
                "protocols": [{"name": n, "metadata": f"{m}:{n}".encode()} for n in protocols],
                "reason": None,
            }

        return body

    def join(self, m: str, **kw: Any) -> None:
        """Send m's JoinGroup v9 (with its id once it has one) without waiting."""
        self.d.send(ApiKey.JOIN_GROUP, 9, self.join_body(m, **kw), conn=m)

    def joined(self, m: str, answer: Answer | None = None) -> Answer:
        """m's JoinGroup answer; its member id and generation are kept."""
        answer = answer or self.d.receive(m)
        self.keep_join(m, answer)
        return answer

    def keep_join(self, m: str, answer: Answer) -> None:
        for p, r in zip(self.d.peers, (answer.kgroup, answer.kafka), strict=True):
            assert r is not None
            if r.body.member_id:
                p.vars[f"{m}.id"] = r.body.member_id
            if r.body.error_code == 0:
                p.vars[f"{m}.gen"] = r.body.generation_id

    def new_member(self, m: str, **kw: Any) -> Answer:
        """m's first JoinGroup: MEMBER_ID_REQUIRED and its id (KIP-394) for a dynamic member."""
        self.join(m, **kw)
        return self.joined(m)

    def sync(
        self,
        m: str,
        assignments: Sequence[str] = (),
        gen: int | None = None,
        protocol_name: str | None = "range",
    ) -> None:
        """Send m's SyncGroup v5; a leader gives each member in ``assignments`` b"<member>"."""

        def body(p: Peer) -> Body:
            return {
                "group_id": self.group,
                "generation_id": p.get(f"{m}.gen", -1) if gen is None else gen,
                "member_id": p.get(f"{m}.id", ""),
                "group_instance_id": p.get(f"{m}.instance"),
                "protocol_type": self.protocol_type,
                "protocol_name": protocol_name,
                "assignments": [
                    {"member_id": p[f"{a}.id"], "assignment": f"to {a}".encode()}
                    for a in assignments
                ],
            }

        self.d.send(ApiKey.SYNC_GROUP, 5, body, conn=m)

    def heartbeat(self, m: str, gen: int | None = None) -> Answer:
        return self.d.request(
            ApiKey.HEARTBEAT,
            4,
            lambda p: {
                "group_id": self.group,
                "generation_id": p.get(f"{m}.gen", -1) if gen is None else gen,
                "member_id": p.get(f"{m}.id", ""),
                "group_instance_id": p.get(f"{m}.instance"),
            },
            conn=m,
        )

    def leave(self, *ms: str, conn: str = "admin") -> Answer:
        return self.d.request(
            ApiKey.LEAVE_GROUP,
            5,
            lambda p: {
                "group_id": self.group,
                "members": [
                    {
                        "member_id": p.get(f"{m}.id", "") if not p.get(f"{m}.instance") else "",
                        "group_instance_id": p.get(f"{m}.instance"),
                        "reason": None,
                    }
                    for m in ms
                ],
            },
            conn=conn,
        )

    def commit(
        self, m: str | None, offsets: Mapping[tuple[str, int], int], gen: int | None = None
    ) -> Answer:
        """OffsetCommit v9 as member m (or as a simple consumer when None)."""
        topics: dict[str, list[dict[str, Any]]] = {}
        for (t, i), o in offsets.items():
            topics.setdefault(t, []).append(
                {
                    "partition_index": i,
                    "committed_offset": o,
                    "committed_leader_epoch": -1,
                    "committed_metadata": f"at {o}",
                }
            )
        return self.d.request(
            ApiKey.OFFSET_COMMIT,
            9,
            lambda p: {
                "group_id": self.group,
                "generation_id_or_member_epoch": (
                    (p.get(f"{m}.gen", -1) if gen is None else gen) if m else -1
                ),
                "member_id": p.get(f"{m}.id", "") if m else "",
                "group_instance_id": p.get(f"{m}.instance") if m else None,
                "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
            },
            conn=m or "admin",
        )

    def fetch_offsets(self, topics: Mapping[str, Sequence[int]] | None = None) -> Answer:
        return self.d.request(
            ApiKey.OFFSET_FETCH,
            9,
            {
                "groups": [
                    {
                        "group_id": self.group,
                        "member_id": None,
                        "member_epoch": -1,
                        "topics": None
                        if topics is None
                        else [
                            {"name": t, "partition_indexes": list(ps)} for t, ps in topics.items()
                        ],
                    }
                ],
                "require_stable": True,
            },
            conn="admin",
        )

    def describe(self) -> Answer:
        return self.d.request(
            ApiKey.DESCRIBE_GROUPS,
            5,
            {"groups": [self.group], "include_authorized_operations": True},
            conn="admin",
        )
