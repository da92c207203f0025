"""Real consumer-group clients for tests: topics created and filled through confluent-kafka,
members that commit synchronously after each record (confluent-kafka in a thread, kafka-python
in a process of its own, or any of the three libraries in a process of its own that a test can
kill -9), the delivery check over what members report, and a wait that says what it saw when
it times out."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

PARTITIONS = 12
#: Client settings that keep rebalances quick: the broker's group.min.session.timeout.ms is
#: 6000, members learn of a rebalance at their next heartbeat.
SESSION_MS, HEARTBEAT_MS = 6000, 500


def create_topic(bootstrap: str, partitions: int = PARTITIONS) -> str:
    """A new topic with a unique name."""
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"grp-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


def produce(bootstrap: str, topic: str, values: list[bytes], partitions: int = PARTITIONS) -> None:
    """Produce ``values`` round-robin over the topic's partitions, and wait for every ack."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i, v in enumerate(values):
        p.produce(topic, value=v, partition=i % partitions)
    assert p.flush(30) == 0


def wait_for(
    condition: Callable[[], bool], timeout: float, what: str, state: Callable[[], object] = str
) -> None:
    """Wait until ``condition()``; an AssertionError naming ``what`` and ``state()`` after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {state()}")
        time.sleep(0.05)


def commit_after(consumer, message) -> None:
    """Commit after ``message`` synchronously, again until the rebalance it raced is over.

    A cooperative member keeps consuming while its group rebalances, so its commits race the
    rebalance: one that reaches the coordinator while the group completes it is refused with
    REBALANCE_IN_PROGRESS, one stamped with the generation the group just left with
    ILLEGAL_GENERATION; Kafka answers both so (its RebalanceInProgressException and
    CommitFailedException). The member still owns the partition: it gives partitions up only
    in poll(), and the group cannot move them before it has. So the commit is sent again, with
    the generation librdkafka holds by then. A consumer-protocol member (KIP-848) stamps its
    commit with its member epoch instead, and one it just left is STALE_MEMBER_EPOCH (113),
    retried likewise."""
    from confluent_kafka import KafkaError, KafkaException

    retry = (KafkaError.REBALANCE_IN_PROGRESS, KafkaError.ILLEGAL_GENERATION, 113)
    deadline = time.monotonic() + 10
    while True:
        try:
            consumer.commit(message=message, asynchronous=False)
            return
        except KafkaException as e:
            if e.args[0].code() not in retry or time.monotonic() > deadline:
                raise
            owned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
            if (message.topic(), message.partition()) not in owned:
                # The partition was lost meanwhile (a fenced member): a commit now would write
                # over its next owner's progress, so the refusal stands, as in Java's client.
                raise
            time.sleep(0.05)


class CkMember(threading.Thread):
    """A confluent-kafka consumer in a thread: poll, record, commit that record synchronously.

    The loop is written against confluent-kafka's Consumer API, which kgroup's Consumer shares:
    a subclass changes :meth:`consumer`, :meth:`commit`, :meth:`callbacks` and
    :meth:`observe` (``tests/client``'s kgroup member)."""

    #: defaults are the member's settings unless the test passes its own.
    defaults: ClassVar[dict[str, Any]] = {
        "heartbeat.interval.ms": HEARTBEAT_MS,
        "partition.assignment.strategy": "range",
    }

    def __init__(self, bootstrap: str, topic: str, group: str, seen: list, **config) -> None:
        super().__init__(daemon=True)
        self.conf = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": SESSION_MS,
            **self.defaults,
            **config,
        }
        self.topic, self.seen = topic, seen
        self.stop = threading.Event()
        self.assigned: list[int] = []
        self.errors: list[str] = []
        self.closed = threading.Event()
        #: ready is set once the member owns a partition.
        self.ready = threading.Event()
        #: rebalances counts the assignments the member was given (on_assign calls).
        self.rebalances = 0

    def consumer(self) -> Any:
        from confluent_kafka import Consumer

        return Consumer(self.conf)

    def commit(self, consumer: Any, message: Any) -> None:
        commit_after(consumer, message)

    def callbacks(self) -> dict[str, Any]:
        """The rebalance callbacks subscribe() is given."""

        def assigned(consumer, partitions) -> None:
            self.rebalances += 1

        return {"on_assign": assigned}

    def observe(self, consumer: Any) -> None:
        """Called after every poll(), to note what the test checks."""

    def run(self) -> None:
        c = self.consumer()
        c.subscribe([self.topic], **self.callbacks())
        try:
            while not self.stop.is_set():
                m = c.poll(0.1)
                self.assigned = sorted(tp.partition for tp in c.assignment())
                if self.assigned:
                    self.ready.set()
                self.observe(c)
                if m is None:
                    continue
                if m.error() is not None:
                    self.errors.append(str(m.error()))
                    continue
                self.seen.append(m.value())
                self.commit(c, m)
        except Exception as e:  # surfaces in the test through .errors
            self.errors.append(repr(e))
        finally:
            c.close()
            self.closed.set()


class KpMember:
    """A kafka-python consumer in a process of its own (``support.kafka_python_member``): the
    records it consumed and the size of its assignment, read from its output."""

    def __init__(self, bootstrap: str, topic: str, group: str, assignor: str, seen: list) -> None:
        tests = Path(__file__).resolve().parents[1]
        args = [bootstrap, topic, group, assignor]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "support.kafka_python_member", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ, PYTHONPATH=str(tests)),
        )
        self.assigned = -1
        self.seen = seen
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            event = json.loads(line)
            if "value" in event:
                self.seen.append(event["value"].encode())
            else:
                self.assigned = event["assigned"]

    def close(self) -> int:
        """Leave the group and exit; the exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.reader.join(5)


class SteadyProducer(threading.Thread):
    """Produces records ``p0``, ``p1``, ... round-robin over the topic's partitions, about
    ``per_second`` of them a second, in small batches each flushed before the next: members
    consume while the group changes. ``finish()`` stops it and returns every value acked."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        per_second: int = 200,
        partitions: int = PARTITIONS,
        prefix: str = "p",
    ) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.partitions = bootstrap, topic, partitions
        self.batch, self.prefix = max(1, per_second // 10), prefix
        self.values: list[str] = []
        self.errors: list[str] = []
        self.halt = threading.Event()

    def run(self) -> None:
        from confluent_kafka import Producer

        # Idempotent: a produce retried after a lost answer (a slow or reset connection) must
        # not put a value in the log twice, which a consumer would rightly read twice.
        p = Producer(
            {"bootstrap.servers": self.bootstrap, "linger.ms": 5, "enable.idempotence": True}
        )
        i = 0
        try:
            while not self.halt.is_set():
                batch = [f"{self.prefix}{n}" for n in range(i, i + self.batch)]
                for n, v in enumerate(batch, i):
                    p.produce(self.topic, value=v.encode(), partition=n % self.partitions)
                if p.flush(30) != 0:
                    self.errors.append(f"records of {batch} not acked")
                    return
                self.values.extend(batch)
                i += self.batch
                self.halt.wait(0.1)
        except Exception as e:  # surfaces in the test through finish()
            self.errors.append(repr(e))

    def finish(self) -> list[str]:
        """Stop producing; every value produced (and acked)."""
        self.halt.set()
        self.join(60)
        assert self.errors == [], self.errors
        return list(self.values)


class MemberProcess:
    """A group member of any of the three libraries in a process of its own
    (``support.group_member``): a test can close it (its standard input closes, it calls
    close()) or kill it with kill -9. What it reported is read as it comes: its rebalance
    events, the partitions it owns, the records it processed and those whose commit returned.

    Options are ``support.group_member``'s: ``assignor``, ``instance_id``, ``session_ms``,
    ``heartbeat_ms``, ``metadata_refresh_ms``. With ``KGROUP_MEMBER_LOGS`` set to a folder in
    the environment, each member writes its library's debug log there, ``<group>-<name>.log``."""

    def __init__(
        self, bootstrap: str, topic: str, group: str, client: str, name: str = "", **options: Any
    ) -> None:
        cfg = {
            "client": client,
            "bootstrap": bootstrap,
            "topic": topic,
            "group": group,
            "session_ms": SESSION_MS,
            "heartbeat_ms": HEARTBEAT_MS,
            **options,
        }
        self.name = name or f"{client}-{uuid.uuid4().hex[:4]}"
        logs = os.environ.get("KGROUP_MEMBER_LOGS")
        if logs:
            cfg["debug_log"] = str(Path(logs) / f"{group}-{self.name}.log")
        tests = Path(__file__).resolve().parents[1]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "support.group_member", json.dumps(cfg)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=str(tests)),
        )
        #: events are every event the member reported, in order (``support.group_member``).
        self.events: list[dict[str, Any]] = []
        #: owned are the partitions the member owns, after its last rebalance callback.
        self.owned: list[int] = []
        self.processed: list[str] = []
        self.committed: list[str] = []
        self.errors: list[str] = []
        self.stderr: collections.deque[str] = collections.deque(maxlen=30)
        #: killed is set by kill9(); gone once the member closed or was killed.
        self.killed = False
        self.gone = False
        self._readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for t in self._readers:
            t.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            event = json.loads(line)
            kind = event["event"]
            if kind == "processed":
                self.processed.append(event["value"])
            elif kind == "committed":
                self.committed.append(event["value"])
            elif kind in ("assign", "revoke", "lost"):
                self.owned = event["owned"]
            elif kind == "error":
                self.errors.append(event["error"])
            self.events.append(event)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.decode(errors="replace").rstrip())

    def rebalances(self, since: float = 0.0) -> list[dict[str, Any]]:
        """The member's rebalance events (assign, revoke, lost) at or after ``since``."""
        return [
            e for e in self.events if e["event"] in ("assign", "revoke", "lost") and e["t"] >= since
        ]

    def close(self, timeout: float = 30) -> int:
        """Close the consumer (close(): a dynamic member leaves its group) and wait for the
        process to exit; its exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
            self.gone = True
            for t in self._readers:
                t.join(5)

    def kill9(self) -> float:
        """Kill the member without warning, as a crash would; when (``time.monotonic()``)."""
        at = time.monotonic()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.killed = self.gone = True
        for t in self._readers:
            t.join(5)
        return at

    def stop(self) -> None:
        """Make sure the process is gone (in a test's ``finally``)."""
        if self.proc.poll() is None:
            self.close(timeout=20)

    def __repr__(self) -> str:
        state = "killed" if self.killed else "gone" if self.gone else "live"
        return (
            f"<{self.name} {state} owns {self.owned} processed {len(self.processed)}"
            f" committed {len(self.committed)} errors {self.errors}"
            f" stderr {list(self.stderr)[-5:]}>"
        )


def balanced(members: Iterable[MemberProcess], partitions: int = PARTITIONS) -> bool:
    """Whether the live ones of ``members`` own every partition, none twice, each member at
    least one: the group is through its rebalance."""
    live = [m for m in members if not m.gone]
    owned = [p for m in live for p in m.owned]
    return all(m.owned for m in live) and sorted(owned) == list(range(partitions))


def wait_balanced(
    members: Sequence[MemberProcess], partitions: int = PARTITIONS, timeout: float = 60
) -> None:
    """Wait until :func:`balanced`."""
    wait_for(lambda: balanced(members, partitions), timeout, "a balanced group", lambda: members)


def assert_delivered(members: Iterable[MemberProcess], values: Iterable[str]) -> None:
    """Every record of ``values`` was processed by some member, and none twice, as Kafka
    promises to members that commit each record synchronously after processing it, with its
    one caveat: a member killed after processing a record and before its commit returned
    leaves that record to be delivered again. So a killed member's records are those it
    reported committed; it may have processed one more (the one in flight at the kill), which
    may be processed again elsewhere. Members that were not killed committed all they
    processed."""
    members = list(members)
    processed = collections.Counter(v for m in members for v in m.processed)
    committed = collections.Counter(v for m in members for v in m.committed)
    in_flight: collections.Counter[str] = collections.Counter()
    for m in members:
        unconfirmed = collections.Counter(m.processed) - collections.Counter(m.committed)
        if m.killed:
            assert sum(unconfirmed.values()) <= 1, (m, unconfirmed)
            in_flight += unconfirmed
        else:
            assert not unconfirmed, (m, "processed without a commit", unconfirmed)
    expected = set(values)
    assert sorted(expected - set(processed)) == [], "records never consumed"
    assert sorted(set(processed) - expected) == [], "records never produced"
    twice = [v for v, n in committed.items() if n > 1]
    assert twice == [], ("records committed twice", _stories(members, twice))
    twice = [v for v, n in processed.items() if n - in_flight[v] > 1]
    assert twice == [], ("records twice", _stories(members, twice))


def _stories(members: list[MemberProcess], values: list[str], most: int = 3) -> list[str]:
    """For a failure message: each of the first ``most`` values, who processed it and when, and
    every rebalance event of those members that touched its partition, in time order."""
    stories = []
    for value in values[:most]:
        lines, partition = [], None
        for m in members:
            for e in m.events:
                if e.get("value") == value:
                    partition = e.get("partition", partition)
                    lines.append((e["t"], m.name, e["event"], e.get("offset")))
        for m in members:
            for e in m.events:
                if e["event"] in ("assign", "revoke", "lost") and partition in e["partitions"]:
                    lines.append((e["t"], m.name, e["event"], partition))
        stories.append(
            f"{value} (partition {partition}): "
            + "; ".join(f"{t:.3f} {name} {event} {x}" for t, name, event, x in sorted(lines))
        )
    return stories


def consumed(members: list[MemberProcess], values: list[str]) -> bool:
    """Whether every value was committed by a member, or processed by a killed one."""
    done = {v for m in members for v in (m.processed if m.killed else m.committed)}
    return set(values) <= done


def committing(member: MemberProcess, timeout: float = 30) -> None:
    """Wait until ``member`` commits a record it had not committed yet: it is mid-stream."""
    n = len(member.committed)
    wait_for(lambda: len(member.committed) > n, timeout, f"{member.name} to commit", repr)


def run_group(
    bootstrap: str,
    client: str | Sequence[str],
    assignor: str | None,
    first: int,
    joining: list[int],
    **options: Any,
) -> None:
    """A group that starts with ``first`` members; ``joining`` more join in waves, mid-stream;
    then one member leaves with close() and one dies by kill -9. Records are produced
    throughout; then every one must have been consumed, and none twice. ``client`` is one
    library for every member, or a list that the members take in turn (a mixed group)."""
    clients = [client] if isinstance(client, str) else list(client)
    topic, group = create_topic(bootstrap), f"{clients[0]}-{uuid.uuid4().hex[:6]}"
    if assignor:
        options["assignor"] = assignor

    def spawn(n: int) -> list[MemberProcess]:
        return [
            MemberProcess(
                bootstrap,
                topic,
                group,
                clients[(len(members) + i) % len(clients)],
                name=f"m{len(members) + i}",
                **options,
            )
            for i in range(n)
        ]

    members: list[MemberProcess] = []
    producer = SteadyProducer(bootstrap, topic)
    try:
        members += spawn(first)
        producer.start()
        wait_balanced(members)
        for n in joining:
            committing(members[-1])
            members += spawn(n)
            wait_balanced(members)
        leaver, victim = members[0], members[-1]
        committing(leaver)
        assert leaver.close() == 0
        wait_balanced(members)
        committing(victim)
        victim.kill9()
        # Its partitions wait for its session to expire.
        wait_balanced(members, timeout=SESSION_MS / 1000 + 60)
        values = producer.finish()
        wait_for(lambda: consumed(members, values), 60, "every record", lambda: members)
    finally:
        producer.halt.set()
        for m in members:
            m.stop()
    assert [(m.name, m.errors) for m in members if m.errors] == []
    assert {m.name: m.proc.returncode for m in members if m is not victim} == {
        m.name: 0 for m in members if m is not victim
    }
    assert_delivered(members, values)
