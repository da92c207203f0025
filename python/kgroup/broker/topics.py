"""Topics and partitions on disk: what Kafka's LogManager and metadata cache hold for one node.

Each folder of ``log.dirs`` holds ``meta.properties`` (cluster id, node id and the folder's
directory id, as Kafka writes it) and log folders ``<topic>-<partition>``, whose files the Rust
log engine owns (``kgroup.log``); a new partition goes to the folder holding fewest. The first
folder also holds ``topics.json`` (every topic's id, partition count, config overrides and the
directory of each partition, rewritten atomically on each change).

A deleted topic's log folders are closed at once (no file of theirs stays open), renamed
``<topic>-<partition>.<id>-delete`` and removed after ``log.segment.delete.delay.ms``, as
Kafka's LogManager does; so are the segments that retention, DeleteRecords and compaction take
out of a log (``.deleted`` files, after the topic's ``file.delete.delay.ms``).

Every file operation here goes through ``kgroup.log``'s storage helpers (``read_text``,
``write_atomically``, ``list_dir``...), the layer the log engine's files go through, so that
with ``kgroup.log.storage=memory`` nothing of the broker touches the disk.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgroup import errors
from kgroup.broker.config import BrokerConfig
from kgroup.broker.logdirs import LogDir, LogDirs
from kgroup.log import (
    Log,
    file_exists,
    is_dir,
    list_dir,
    make_dirs,
    read_text,
    remove_tree,
    write_atomically,
)

__all__ = [
    "INTERNAL_TOPICS",
    "OFFSETS_TOPIC",
    "Partition",
    "Topic",
    "Topics",
    "validate_topic_name",
]

log = logging.getLogger("kgroup.broker")

LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_NAME_LENGTH = 249
#: The one leader epoch of every partition: a single node is always the leader, and epochs
#: reported in Metadata, stamped on batches and answered by OffsetForLeaderEpoch agree.
LEADER_EPOCH = 0
#: OFFSETS_TOPIC holds the groups' committed offsets and metadata
#: (``kgroup.broker.coordinators.groups``).
OFFSETS_TOPIC = "__consumer_offsets"
#: INTERNAL_TOPICS are Kafka's internal topics (``Topic.INTERNAL_TOPICS``): shown as internal by
#: Metadata, never deleted, never produced to by clients. Internal by name, as Kafka decides.
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, "__transaction_state"})


def validate_topic_name(name: str) -> str | None:
    """Why Kafka refuses ``name`` as a topic name, or None (Kafka's ``Topic.validate``)."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(name) > MAX_NAME_LENGTH:
        return (
            f"Topic name is illegal, the length of '{name}' is longer than the max allowed "
            f"length {MAX_NAME_LENGTH}"
        )
    if not LEGAL.match(name):
        return (
            f"Topic name '{name}' is illegal, it contains a character other than ASCII "
            "alphanumerics, '.', '_' and '-'"
        )
    return None


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(eq=False)
class Partition:
    """Partition is one topic-partition: its log and the fetches waiting for new data."""

    topic: Topic
    index: int
    log: Log
    #: dir is the log directory holding the partition's folder.
    dir: LogDir
    waiters: list[asyncio.Future[None]] = field(default_factory=list)
    #: offline says the log went offline (a failed fsync) and was reported so.
    offline: bool = False

    @property
    def name(self) -> str:
        return f"{self.topic.name}-{self.index}"

    @property
    def high_watermark(self) -> int:
        # One replica: everything appended is committed.
        return self.log.log_end_offset

    def wake(self) -> None:
        """Wake the fetches waiting on this partition (called after each append)."""
        waiters, self.waiters = self.waiters, []
        for w in waiters:
            if not w.done():
                w.set_result(None)


@dataclass(eq=False)
class Topic:
    """Topic is one topic: its id, its partitions and its config overrides."""

    name: str
    id: uuid.UUID
    configs: dict[str, Any]
    partitions: list[Partition] = field(default_factory=list)

    @property
    def internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


class Topics:
    """Topics holds every topic of the broker, loads them at start and persists each change.

    Not thread-safe: the broker's event loop owns it; only log I/O (flush, compaction) runs in
    other threads, through the logs' own locking.

    ``listeners`` are called after each change, on the event loop, with the topic and what
    happened to it: ``created``, ``grown`` (partitions added) or ``deleted`` (the group
    coordinator follows the topics through them).
    """

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.log_dirs = LogDirs(config.data_dirs)
        #: dir is the metadata directory (the first of log.dirs): topics.json lives there.
        self.dir = self.log_dirs.metadata_dir.path
        self.by_name: dict[str, Topic] = {}
        self.by_id: dict[uuid.UUID, Topic] = {}
        self.cluster_id = ""
        self.listeners: list[Callable[[Topic, str], None]] = []
        #: doomed are the renamed folders of deleted partitions, each with the wall-clock time
        #: (ms) it is due to be removed.
        self.doomed: list[tuple[int, Path]] = []

    # -- start and stop ------------------------------------------------------------------

    def load(self) -> None:
        """Open the data folders: meta.properties, topics.json, and every partition's log
        (recovering it after an unclean stop)."""
        for d in self.log_dirs:
            make_dirs(d.path)
        self.cluster_id = self._meta(self.log_dirs.metadata_dir, None)
        for d in self.log_dirs.dirs[1:]:
            self._meta(d, self.cluster_id)
        state = self._read_state()
        delay = int(self.config.topic_defaults()["file.delete.delay.ms"])
        for d in self.log_dirs:
            for name in list_dir(d.path):
                child = d.path / name
                if name.endswith("-delete") and is_dir(child):
                    # A deleted topic's folder left by the last run: removed after the delay.
                    self.doomed.append((now_ms() + delay, child))
        for name, t in state.items():
            topic = Topic(name, uuid.UUID(t["id"]), dict(t.get("configs", {})))
            dirs = t.get("dirs") or []
            for p in range(int(t["partitions"])):
                d = self._dir_of(f"{name}-{p}", dirs[p] if p < len(dirs) else None)
                topic.partitions.append(self._open_partition(topic, p, d))
            self._add(topic)
        known = {f"{t}-{p.index}" for t in self.by_name for p in self.by_name[t].partitions}
        for d in self.log_dirs:
            for name in list_dir(d.path):
                child = d.path / name
                if name not in known and re.match(r".+-\d+$", name) and is_dir(child):
                    log.warning("Ignoring folder %s: no topic of this broker owns it", child)
        if any(not t.get("dirs") for t in state.values()) and state:
            self._save()

    def _dir_of(self, folder: str, dir_id: str | None) -> LogDir:
        """The directory of a partition's folder: the one topics.json names, else the one
        holding the folder (data from before several folders), else the least used."""
        if dir_id is not None:
            d = self.log_dirs.by_id(dir_id)
            if d is not None:
                return d
            raise errors.KafkaStorageError(
                f"Partition {folder} lives in log directory {dir_id}, which is not in log.dirs "
                f"({', '.join(str(d.path) for d in self.log_dirs)})"
            )
        for d in self.log_dirs:
            if is_dir(d.path / folder):
                return d
        return self._least_used()

    def _least_used(self) -> LogDir:
        """The directory for a new partition: the one holding fewest partitions (Kafka's
        LogManager.nextLogDirs), the first on a tie."""
        if len(self.log_dirs) == 1:
            return self.log_dirs.metadata_dir
        counts = {d.id: 0 for d in self.log_dirs}
        for t in self.by_name.values():
            for p in t.partitions:
                counts[p.dir.id] = counts.get(p.dir.id, 0) + 1
        return min(self.log_dirs, key=lambda d: counts[d.id])

    def close(self) -> None:
        """Flush and close every log cleanly (so that the next start skips recovery)."""
        for topic in self.by_name.values():
            for p in topic.partitions:
                try:
                    p.log.close()
                except errors.KGroupError as e:
                    log.error("Error closing log %s: %s", p.name, e)

    def _meta(self, d: LogDir, cluster_id: str | None) -> str:
        """Read (or write) the meta.properties of ``d``: its cluster id, which must be
        ``cluster_id`` when given, and its directory id. Returns the cluster id."""
        path = d.path / "meta.properties"
        if file_exists(path):
            values = dict(
                line.split("=", 1)
                for line in read_text(path).splitlines()
                if "=" in line and not line.startswith("#")
            )
            node = values.get("node.id")
            if node is not None and int(node) != self.config.node_id:
                raise errors.InvalidArgument(
                    f"{path} is for node.id {node}, this broker is node.id {self.config.node_id}"
                )
            found = values["cluster.id"]
            if cluster_id is not None and found != cluster_id:
                raise errors.InvalidArgument(
                    f"{path} is for cluster {found}, the other log directories for {cluster_id}"
                )
            if "directory.id" in values:
                d.id = values["directory.id"]
                return found
            cluster_id = found
        if cluster_id is None:
            cluster_id = _b64(uuid.uuid4())
        d.id = _b64(uuid.uuid4())
        write_atomically(
            path,
            f"#\n#{time.ctime()}\nnode.id={self.config.node_id}\nversion=1\n"
            f"cluster.id={cluster_id}\ndirectory.id={d.id}\n",
        )
        return cluster_id

    def _read_state(self) -> dict[str, Any]:
        path = self.dir / "topics.json"
        if not file_exists(path):
            return {}
        return json.loads(read_text(path))

    def _save(self) -> None:
        state = {
            t.name: {
                "id": str(t.id),
                "partitions": len(t.partitions),
                "configs": t.configs,
                "dirs": [p.dir.id for p in t.partitions],
            }
            for t in self.by_name.values()
        }
        write_atomically(self.dir / "topics.json", json.dumps(state, indent=1, sort_keys=True))

    # -- configs ---------------------------------------------------------------------------

    def log_config(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        """Every topic config's value for a topic with these overrides."""
        values = self.config.topic_defaults()
        values.update(overrides)
        values["producer.id.expiration.ms"] = self.config.get("producer.id.expiration.ms")
        return values

    def _open_partition(
        self, topic: Topic, index: int, d: LogDir | None = None, new: bool = False
    ) -> Partition:
        if d is None:
            d = self._least_used()
        folder = d.path / f"{topic.name}-{index}"
        started = time.monotonic()
        lg = Log(str(folder), self.log_config(topic.configs), now_ms())
        report = lg.recovery
        if not report.clean and not new:
            log.info(
                "Recovered %s after an unclean stop: %d batch(es) checked, %d replayed for "
                "producer state, %d index(es) rebuilt",
                folder.name,
                report.batches_checked,
                report.batches_replayed,
                report.indexes_rebuilt,
            )
        if report.bytes_truncated or report.segments_deleted:
            log.warning(
                "Recovery of %s cut %d bytes from its tail and deleted %d segment(s); the log "
                "now ends at offset %d",
                folder.name,
                report.bytes_truncated,
                report.segments_deleted,
                report.log_end_offset,
            )
        elapsed = time.monotonic() - started
        if elapsed > 1:
            log.info("Loaded log %s in %.1f s", folder.name, elapsed)
        return Partition(topic, index, lg, d)

    # -- changes -----------------------------------------------------------------------

    def _add(self, topic: Topic) -> None:
        self.by_name[topic.name] = topic
        self.by_id[topic.id] = topic

    def collision(self, name: str) -> str | None:
        """The existing topic whose name differs from ``name`` only by '.' against '_'."""
        unified = name.replace(".", "_")
        for other in self.by_name:
            if other != name and other.replace(".", "_") == unified:
                return other
        return None

    def create(
        self,
        name: str,
        partitions: int,
        configs: Mapping[str, Any] | None = None,
    ) -> Topic:
        """Create a topic whose name and configs were checked by the caller."""
        topic = Topic(name, uuid.uuid4(), dict(configs or {}))
        try:
            for p in range(partitions):
                # Added one by one: each goes to the directory holding fewest, this topic's
                # first partitions counted.
                self.by_name[name] = topic
                topic.partitions.append(self._open_partition(topic, p, new=True))
        except BaseException:
            self.by_name.pop(name, None)
            for part in topic.partitions:
                with contextlib.suppress(errors.KGroupError):
                    part.log.delete()
            raise
        self._add(topic)
        self._save()
        log.info(
            "Created topic %s with topic id %s, %d partition(s) and configs %s",
            name,
            _b64(topic.id),
            partitions,
            topic.configs,
        )
        self._notify(topic, "created")
        return topic

    def add_partitions(self, topic: Topic, count: int) -> None:
        """Grow ``topic`` to ``count`` partitions."""
        for p in range(len(topic.partitions), count):
            topic.partitions.append(self._open_partition(topic, p, new=True))
        self._save()
        log.info("Topic %s now has %d partitions", topic.name, count)
        self._notify(topic, "grown")

    def delete(self, topic: Topic) -> None:
        """Delete a topic: its logs are closed now, their folders renamed
        ``<topic>-<partition>.<id>-delete`` and removed after log.segment.delete.delay.ms
        (``purge``)."""
        del self.by_name[topic.name]
        del self.by_id[topic.id]
        self._save()
        delay = int(self.config.topic_defaults()["file.delete.delay.ms"])
        for p in topic.partitions:
            p.wake()
            doomed = p.dir.path / f"{p.name}.{uuid.uuid4().hex}-delete"
            try:
                if delay == 0:
                    p.log.delete()
                else:
                    p.log.delete(str(doomed))
                    self.doomed.append((now_ms() + delay, doomed))
            except errors.KGroupError as e:
                self.storage_failed(p, "deleting", e)
                with contextlib.suppress(OSError):
                    remove_tree(p.dir.path / p.name)
        log.info(
            "Deleted topic %s; its files go in %d ms (log.segment.delete.delay.ms)",
            topic.name,
            delay,
        )
        self._notify(topic, "deleted")

    def purge_doomed(self, now: int) -> int:
        """Remove the folders of deleted partitions whose delay passed (blocking: run it in an
        executor). Returns how many went."""
        due = [d for d in self.doomed if d[0] <= now]
        if not due:
            return 0
        self.doomed = [d for d in self.doomed if d[0] > now]
        for _, path in due:
            try:
                remove_tree(path)
            except FileNotFoundError:
                pass
            except OSError as e:
                log.error("Error removing the deleted log folder %s: %s", path, e)
                continue
            log.info("Removed the deleted log folder %s", path)
        return len(due)

    # -- storage failures ----------------------------------------------------------------

    def storage_failed(self, p: Partition, what: str, error: BaseException) -> None:
        """Report a failed storage operation on ``p`` to its directory's failure channel."""
        why = p.log.failure
        if why is not None:
            if not p.offline:
                p.offline = True
                self.log_dirs.went_offline(p.dir, p.name, why, error)
            return
        self.log_dirs.failed(p.dir, p.name, what, error)

    def storage_ok(self, p: Partition) -> None:
        """A write to ``p`` succeeded (cheap when its directory had no failures)."""
        if p.dir.failures:
            self.log_dirs.succeeded(p.dir)

    def _notify(self, topic: Topic, change: str) -> None:
        for listener in self.listeners:
            try:
                listener(topic, change)
            except Exception:
                log.exception("Error in a listener of topic %s (%s)", topic.name, change)

    def alter_configs(self, topic: Topic, configs: dict[str, Any]) -> None:
        """Replace a topic's config overrides and apply them to its logs."""
        topic.configs = configs
        self._save()
        values = self.log_config(configs)
        for p in topic.partitions:
            p.log.update_config(values)
        log.info("Topic %s configs are now %s", topic.name, configs)

    def partitions(self) -> Iterable[Partition]:
        for topic in list(self.by_name.values()):
            yield from topic.partitions


def _b64(u: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")
