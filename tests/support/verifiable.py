"""Kafka's system-test clients, kafka-verifiable-producer and kafka-verifiable-consumer, run as
processes whose JSON events are checked as they arrive, as Kafka's system tests check them.

:class:`ConsumerEventHandler` is a port of KT's ``ConsumerEventHandler``
(tests/kafkatest/services/verifiable_consumer.py): per consumer, a state machine over its
events whose assertions fail the test (records consumed only while joined and only from
assigned partitions, each batch starting where the last one ended, commits never ahead of
the position). :class:`VerifiableConsumers` is KT's ``VerifiableConsumer`` service: n consumer
processes of one group, with the group-wide checks (nothing consumed below the group's
committed offset, no commit ahead of the group's position). An assertion raised while an
event is handled is kept and raised again by :meth:`VerifiableConsumers.check`, from the test's
own thread.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from .apache_kafka import tool_command

VERIFIABLE_PRODUCER = "org.apache.kafka.tools.VerifiableProducer"
VERIFIABLE_CONSUMER = "org.apache.kafka.tools.VerifiableConsumer"
RANGE = "org.apache.kafka.clients.consumer.RangeAssignor"

TP = tuple[str, int]


def wait_until(
    cond: Callable[[], bool], timeout: float, what: str, check: Callable[[], None] | None = None
) -> None:
    """Wait until ``cond()``; ``check()`` (which raises what went wrong) on every round."""
    deadline = time.monotonic() + timeout
    while True:
        if check is not None:
            check()
        if cond():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s: {what}")
        time.sleep(0.1)


def _events(proc: subprocess.Popen[str], handle: Callable[[dict[str, Any]], None]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            event = json.loads(line)
        except ValueError:  # KT's try_parse_json: deprecation notices and the like
            continue
        if isinstance(event, dict) and "name" in event:
            handle(event)


class VerifiableProducer:
    """kafka-verifiable-producer on ``topic`` until stopped (or ``max_messages`` sent): every
    acknowledged record's (partition, offset, value)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        log: Path,
        *,
        throughput: int = 200,
        max_messages: int = -1,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.acked: list[tuple[int, int, str]] = []
        self.errors = 0
        self.tool_data: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._err = open(log, "w")
        self.proc = subprocess.Popen(
            tool_command(
                VERIFIABLE_PRODUCER,
                "--bootstrap-server", bootstrap,
                "--topic", topic,
                "--throughput", str(throughput),
                "--max-messages", str(max_messages),
                *extra,
                heap="512m",
            ),
            stdout=subprocess.PIPE, stderr=self._err, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        self._reader = threading.Thread(target=_events, args=(self.proc, self._handle), daemon=True)
        self._reader.start()

    def _handle(self, event: dict[str, Any]) -> None:
        with self._lock:
            if event["name"] == "producer_send_success":
                self.acked.append((event["partition"], event["offset"], event["value"]))
            elif event["name"] == "producer_send_error":
                self.errors += 1
            elif event["name"] == "tool_data":
                self.tool_data = event

    @property
    def num_acked(self) -> int:
        with self._lock:
            return len(self.acked)

    def await_acked(self, more: int, timeout: float = 60) -> None:
        want = self.num_acked + more
        wait_until(
            lambda: self.num_acked >= want, timeout, f"{more} more records acked", self.check
        )

    def check(self) -> None:
        """Raise if the producer process has ended before it was stopped."""
        if self.proc.poll() is not None:
            raise AssertionError(f"the producer exited with {self.proc.returncode}")

    def stop(self) -> None:
        """SIGTERM: the producer flushes, closes and prints tool_data."""
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(60)
        self._reader.join(10)
        self._err.close()

    def end_offsets(self) -> dict[int, int]:
        """Per partition, one past the highest acknowledged offset."""
        out: dict[int, int] = {}
        for p, o, _ in self.acked:
            out[p] = max(out.get(p, 0), o + 1)
        return out


class ConsumerState(Enum):
    Started = 1
    Dead = 2
    Rebalancing = 3
    Joined = 4


@dataclass
class ConsumerEventHandler:
    """One consumer's events, checked as KT's ConsumerEventHandler checks them (the eager
    variant: a revocation takes the whole assignment and every position). It lives across
    restarts of its consumer, as KT's does, so that counts add up over the test."""

    idx: int
    verify_offsets: bool = True
    state: ConsumerState = ConsumerState.Dead
    revoked_count: int = 0
    assigned_count: int = 0
    assignment: list[TP] = field(default_factory=list)
    position: dict[TP, int] = field(default_factory=dict)
    committed: dict[TP, int] = field(default_factory=dict)
    total_consumed: int = 0
    warnings: list[str] = field(default_factory=list)

    def handle_startup_complete(self) -> None:
        self.state = ConsumerState.Started

    def handle_shutdown_complete(self) -> None:
        self.state = ConsumerState.Dead
        self.assignment = []
        self.position = {}

    def handle_offsets_committed(self, event: dict[str, Any]) -> None:
        if not event["success"]:
            return
        for commit in event["offsets"]:
            if commit.get("error", "") != "":
                continue
            tp = (commit["topic"], commit["partition"])
            offset = commit["offset"]
            assert tp in self.assignment, (
                f"consumer {self.idx}: committed offsets for partition {tp} not assigned "
                f"(current assignment: {self.assignment})"
            )
            assert tp in self.position, f"consumer {self.idx}: no previous position for {tp}"
            assert self.position[tp] >= offset, (
                f"consumer {self.idx}: the committed offset {offset} was greater than the "
                f"current position {self.position[tp]} for partition {tp}"
            )
            self.committed[tp] = offset

    def handle_records_consumed(self, event: dict[str, Any]) -> None:
        assert self.state == ConsumerState.Joined, (
            f"consumer {self.idx}: consumed records should only be received when joined "
            f"(current state: {self.state})"
        )
        for batch in event["partitions"]:
            tp = (batch["topic"], batch["partition"])
            lo, hi = batch["minOffset"], batch["maxOffset"]
            assert tp in self.assignment, (
                f"consumer {self.idx}: consumed records for partition {tp} which is not "
                f"assigned (current assignment: {self.assignment})"
            )
            if tp not in self.position or self.position[tp] == lo:
                self.position[tp] = hi + 1
            else:
                msg = (
                    f"consumer {self.idx}: consumed from an unexpected offset "
                    f"({self.position[tp]}, {lo}) for partition {tp}"
                )
                assert not self.verify_offsets, msg
                self.position[tp] = hi + 1
                self.warnings.append(msg)
        self.total_consumed += event["count"]

    def handle_partitions_revoked(self, event: dict[str, Any]) -> None:
        self.revoked_count += 1
        self.state = ConsumerState.Rebalancing
        self.position = {}

    def handle_partitions_assigned(self, event: dict[str, Any]) -> None:
        self.assigned_count += 1
        self.state = ConsumerState.Joined
        self.assignment = [(p["topic"], p["partition"]) for p in event["partitions"]]

    def handle_kill_process(self, clean_shutdown: bool) -> None:
        # A clean stop reports shutdown_complete itself.
        if not clean_shutdown:
            self.handle_shutdown_complete()


@dataclass
class _Node:
    idx: int
    handler: ConsumerEventHandler
    proc: subprocess.Popen[str] | None = None
    reader: threading.Thread | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class VerifiableConsumers:
    """``n`` kafka-verifiable-consumer processes of ``group`` on ``topic`` (KT's
    VerifiableConsumer service): started, stopped (SIGTERM) or killed (SIGKILL) one by one,
    their events checked per consumer and across the group. Commits are synchronous after
    every poll (no auto-commit), as in KT's OffsetValidationTest."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        group: str,
        n: int,
        log_dir: Path,
        *,
        session_timeout_ms: int = 6000,
        static_membership: bool = False,
        assignment_strategy: str = RANGE,
        verify_offsets: bool = True,
    ) -> None:
        self.bootstrap, self.topic, self.group = bootstrap, topic, group
        self.log_dir = log_dir
        self.session_timeout_ms = session_timeout_ms
        self.static_membership = static_membership
        self.assignment_strategy = assignment_strategy
        self.verify_offsets = verify_offsets
        self.nodes = [_Node(i, ConsumerEventHandler(i, verify_offsets)) for i in range(n)]
        self.global_position: dict[TP, int] = {}
        self.global_committed: dict[TP, int] = {}
        #: Every (partition, offset range) consumed, by any member: what "nothing lost" reads.
        self.consumed: dict[int, list[tuple[int, int]]] = {}
        self.warnings: list[str] = []
        self.failures: list[BaseException] = []
        self._lock = threading.Lock()

    # -- processes ---------------------------------------------------------------------------

    def start(self) -> None:
        for node in self.nodes:
            self.start_node(node.idx)

    def start_node(self, idx: int) -> None:
        node = self.nodes[idx]
        assert not node.alive, f"consumer {idx} is running"
        args = [
            "--bootstrap-server", self.bootstrap,
            "--topic", self.topic,
            "--group-id", self.group,
            "--reset-policy", "earliest",
            "--session-timeout", str(self.session_timeout_ms),
            "--assignment-strategy", self.assignment_strategy,
        ]  # fmt: skip
        if self.static_membership:
            args += ["--group-instance-id", f"{self.group}-instance-{idx}"]
        err = open(self.log_dir / f"consumer-{idx}.log", "a")
        node.proc = subprocess.Popen(
            tool_command(VERIFIABLE_CONSUMER, *args, heap="512m"),
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        err.close()
        node.reader = threading.Thread(
            target=_events, args=(node.proc, lambda e, n=node: self._handle(n, e)), daemon=True
        )
        node.reader.start()

    def stop_node(self, idx: int, clean_shutdown: bool = True, timeout: float = 30) -> None:
        """SIGTERM (clean: the consumer leaves its group and reports shutdown_complete) or
        SIGKILL, and wait until the process is gone and its events are read."""
        node = self.nodes[idx]
        assert node.proc is not None
        if node.proc.poll() is None:
            node.proc.send_signal(signal.SIGTERM if clean_shutdown else signal.SIGKILL)
        node.proc.wait(timeout)
        assert node.reader is not None
        node.reader.join(10)
        # After the events it printed before it died: those were valid when printed.
        with self._lock:
            node.handler.handle_kill_process(clean_shutdown)

    def stop_all(self, clean_shutdown: bool = True) -> None:
        for node in self.nodes:
            if node.alive:
                assert node.proc is not None
                node.proc.send_signal(signal.SIGTERM if clean_shutdown else signal.SIGKILL)
        for node in self.nodes:
            if node.proc is not None:
                self.stop_node(node.idx, clean_shutdown)

    def kill_all(self) -> None:
        """Teardown: SIGKILL whatever still runs."""
        for node in self.nodes:
            if node.alive:
                assert node.proc is not None
                node.proc.kill()
                node.proc.wait(10)

    # -- events ------------------------------------------------------------------------------

    def _handle(self, node: _Node, event: dict[str, Any]) -> None:
        with self._lock:
            try:
                self._dispatch(node.handler, event)
            except AssertionError as e:
                self.failures.append(e)

    def _dispatch(self, h: ConsumerEventHandler, event: dict[str, Any]) -> None:
        name = event["name"]
        if name == "shutdown_complete":
            h.handle_shutdown_complete()
        elif name == "startup_complete":
            h.handle_startup_complete()
        elif name == "offsets_committed":
            h.handle_offsets_committed(event)
            self._update_global_committed(event)
        elif name == "records_consumed":
            h.handle_records_consumed(event)
            self._update_global_position(event)
        elif name == "partitions_revoked":
            h.handle_partitions_revoked(event)
        elif name == "partitions_assigned":
            h.handle_partitions_assigned(event)

    def _update_global_position(self, event: dict[str, Any]) -> None:
        for batch in event["partitions"]:
            tp = (batch["topic"], batch["partition"])
            lo, hi = batch["minOffset"], batch["maxOffset"]
            if tp in self.global_committed:
                committed = self.global_committed[tp]
                msg = (
                    f"consumed position {lo} is behind the current committed offset "
                    f"{committed} for partition {tp}"
                )
                assert not self.verify_offsets or committed <= lo, msg
            if tp in self.global_position and self.global_position[tp] != lo:
                # KT only warns: hard failures may legitimately consume again.
                self.warnings.append(
                    f"expected next consumed offset {self.global_position[tp]} for {tp}, saw {lo}"
                )
            self.global_position[tp] = hi + 1
            self.consumed.setdefault(tp[1], []).append((lo, hi))

    def _update_global_committed(self, event: dict[str, Any]) -> None:
        if not event["success"]:
            return
        for commit in event["offsets"]:
            tp = (commit["topic"], commit["partition"])
            offset = commit["offset"]
            assert self.global_position[tp] >= offset, (
                f"committed offset {offset} for partition {tp} is ahead of the current "
                f"position {self.global_position[tp]}"
            )
            self.global_committed[tp] = offset

    # -- what the tests wait for and assert --------------------------------------------------

    def check(self) -> None:
        """Raise the first assertion an event failed, with the consumers' logs' tails."""
        with self._lock:
            if self.failures:
                raise AssertionError(f"{self.failures[0]}\n{self.logs()}") from self.failures[0]

    def logs(self, lines: int = 15) -> str:
        out = []
        for node in self.nodes:
            path = self.log_dir / f"consumer-{node.idx}.log"
            if path.exists():
                tail = path.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"-- consumer {node.idx} stderr:\n" + "\n".join(tail))
        return "\n".join(out)

    def joined_nodes(self) -> list[int]:
        with self._lock:
            return [
                n.idx for n in self.nodes if n.alive and n.handler.state == ConsumerState.Joined
            ]

    def dead_nodes(self) -> list[int]:
        return [n.idx for n in self.nodes if not n.alive]

    def total_consumed(self) -> int:
        with self._lock:
            return sum(n.handler.total_consumed for n in self.nodes)

    def current_position(self, tp: TP) -> int | None:
        with self._lock:
            return self.global_position.get(tp)

    def num_revokes_for_alive(self) -> int:
        with self._lock:
            return sum(n.handler.revoked_count for n in self.nodes if n.alive)

    def await_members(self, n: int, timeout: float | None = None) -> None:
        timeout = timeout or max(60, 2 * self.session_timeout_ms / 1000)
        wait_until(
            lambda: len(self.joined_nodes()) == n,
            timeout,
            f"{n} consumers joined (joined: {self.joined_nodes()})\n{self.logs()}",
            self.check,
        )

    def await_all_members(self) -> None:
        self.await_members(len(self.nodes))

    def await_consumed(self, more: int = 1, timeout: float = 60) -> None:
        want = self.total_consumed() + more
        wait_until(
            lambda: self.total_consumed() >= want,
            timeout,
            f"{more} more records consumed\n{self.logs()}",
            self.check,
        )

    def await_position(self, ends: dict[int, int], timeout: float = 60) -> None:
        """Wait until the group has consumed every partition up to ``ends``."""
        wait_until(
            lambda: all(
                (self.current_position((self.topic, p)) or 0) >= end for p, end in ends.items()
            ),
            timeout,
            f"consumed up to {ends} (at {self.global_position})\n{self.logs()}",
            self.check,
        )

    def missing(self, acked: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
        """The acknowledged (partition, offset)s no member ever consumed."""
        with self._lock:
            ranges = {p: sorted(r) for p, r in self.consumed.items()}

        def seen(p: int, o: int) -> bool:
            return any(lo <= o <= hi for lo, hi in ranges.get(p, []))

        return [(p, o) for p, o, _ in acked if not seen(p, o)]


def rolling_bounce(
    consumers: VerifiableConsumers,
    rounds: int,
    *,
    keep_alive: int = 0,
    clean_shutdown: bool = True,
) -> None:
    """KT's rolling_bounce_consumers: each member but the first ``keep_alive`` in turn is
    stopped, seen dead, started again; then all members are joined and consuming again."""
    for _ in range(rounds):
        for idx in range(keep_alive, len(consumers.nodes)):
            consumers.stop_node(idx, clean_shutdown)
            assert consumers.dead_nodes() == [idx]
            consumers.start_node(idx)
            consumers.await_all_members()
            consumers.await_consumed()
