"""Real consumer-group clients for tests: topics created and filled through confluent-kafka,
members that commit synchronously after each record (confluent-kafka in a thread, kafka-python
in a process of its own), and a wait that says what it saw when it times out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

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
    the generation librdkafka holds by then."""
    from confluent_kafka import KafkaError, KafkaException

    retry = (KafkaError.REBALANCE_IN_PROGRESS, KafkaError.ILLEGAL_GENERATION)
    deadline = time.monotonic() + 10
    while True:
        try:
            consumer.commit(message=message, asynchronous=False)
            return
        except KafkaException as e:
            if e.args[0].code() not in retry or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class CkMember(threading.Thread):
    """A confluent-kafka consumer in a thread: poll, record, commit that record synchronously."""

    def __init__(self, bootstrap: str, topic: str, group: str, seen: list, **config) -> None:
        super().__init__(daemon=True)
        self.conf = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "partition.assignment.strategy": "range",
            **config,
        }
        self.topic, self.seen = topic, seen
        self.stop = threading.Event()
        self.assigned: list[int] = []
        self.errors: list[str] = []
        self.closed = threading.Event()
        #: rebalances counts the assignments the member was given (on_assign calls).
        self.rebalances = 0

    def run(self) -> None:
        from confluent_kafka import Consumer

        c = Consumer(self.conf)

        def assigned(consumer, partitions) -> None:
            self.rebalances += 1

        c.subscribe([self.topic], on_assign=assigned)
        try:
            while not self.stop.is_set():
                m = c.poll(0.1)
                self.assigned = sorted(tp.partition for tp in c.assignment())
                if m is None:
                    continue
                if m.error() is not None:
                    self.errors.append(str(m.error()))
                    continue
                self.seen.append(m.value())
                commit_after(c, m)
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
