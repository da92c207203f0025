"""A group member in a process of its own, of any of the three client libraries
(confluent-kafka, kafka-python, aiokafka) or kgroup's own Consumer, so that a test can kill it
with kill -9 as a crash would. It subscribes to one topic, processes each record, commits it
synchronously, and only then takes the next. It reports on standard output, one JSON line per
event, each with the time it happened (``t``, ``time.monotonic()``, which is one clock for
every process of the machine):

- ``{"event": "assign" | "revoke" | "lost", "partitions": [...], "owned": [...]}`` from the
  client's rebalance callbacks: the partitions given or taken, and those it owns after;
- ``{"event": "processed", "value": ..., "partition": p, "offset": o}`` for each record, before
  its commit is sent, and ``{"event": "committed", "value": ...}`` once the commit returned;
- ``{"event": "error", "error": ...}`` for anything that went wrong;
- ``{"event": "closed"}`` once close() returned.

It closes the consumer (close(), or stop() for aiokafka) and exits when its standard input
closes.

    python -m support.group_member '{"client": "confluent", "bootstrap": ..., "topic": ...,
        "group": ..., "assignor": "range"}'

Optional keys: ``protocol`` (``consumer`` for KIP-848's ``group.protocol=consumer``; then
``assignor`` names a broker-side assignor), ``assignor`` (absent: the library's default),
``instance_id``
(group.instance.id), ``session_ms``, ``heartbeat_ms``, ``metadata_refresh_ms``, and
``debug_log``, a file for the library's debug log (librdkafka's ``cgrp`` and ``consumer``
contexts), for debugging.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
import time
from typing import Any

#: MAX_RECORDS bounds what one poll hands over: an eager member rejoins only between polls, so
#: a short batch keeps rebalances quick.
MAX_RECORDS = 50


def say(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, "t": time.monotonic(), **fields}) + "\n")
    sys.stdout.flush()


def _confluent_api_member(c: Any, cfg: dict[str, Any], stop: threading.Event, commit: Any) -> None:
    """The member loop for confluent-kafka's Consumer API (confluent-kafka's and kgroup's):
    rebalance callbacks report, each record is processed, then ``commit(consumer, message)``."""
    owned: set[int] = set()

    def assign(consumer, partitions) -> None:
        owned.update(tp.partition for tp in partitions)
        say("assign", partitions=sorted(tp.partition for tp in partitions), owned=sorted(owned))

    def taken(event: str):
        def callback(consumer, partitions) -> None:
            owned.difference_update(tp.partition for tp in partitions)
            say(event, partitions=sorted(tp.partition for tp in partitions), owned=sorted(owned))

        return callback

    c.subscribe([cfg["topic"]], on_assign=assign, on_revoke=taken("revoke"), on_lost=taken("lost"))
    try:
        while not stop.is_set():
            m = c.poll(0.1)
            if m is None:
                continue
            if m.error() is not None:
                say("error", error=str(m.error()))
                continue
            say("processed", value=m.value().decode(), partition=m.partition(), offset=m.offset())
            commit(c, m)
            say("committed", value=m.value().decode())
    finally:
        c.close()


def _group_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """The settings both confluent-kafka-API members share, by Kafka's names."""
    conf: dict[str, Any] = {
        "bootstrap.servers": cfg["bootstrap"],
        "group.id": cfg["group"],
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    if cfg.get("protocol") == "consumer":
        # KIP-848: the broker owns the session, the heartbeat and the assignor.
        conf["group.protocol"] = "consumer"
        if cfg.get("assignor"):
            conf["group.remote.assignor"] = cfg["assignor"]
    else:
        conf["session.timeout.ms"] = cfg["session_ms"]
        conf["heartbeat.interval.ms"] = cfg["heartbeat_ms"]
        if cfg.get("assignor"):
            conf["partition.assignment.strategy"] = cfg["assignor"]
    if cfg.get("instance_id"):
        conf["group.instance.id"] = cfg["instance_id"]
    return conf


def run_confluent(cfg: dict[str, Any], stop: threading.Event) -> None:
    from confluent_kafka import Consumer

    from support.consumers import commit_after

    conf = _group_config(cfg)
    if cfg.get("metadata_refresh_ms"):
        conf["topic.metadata.refresh.interval.ms"] = cfg["metadata_refresh_ms"]
    if cfg.get("debug_log"):
        conf["debug"] = "cgrp,consumer"
        conf["logger"] = logging.getLogger("librdkafka")
    _confluent_api_member(Consumer(conf), cfg, stop, commit_after)


def run_kgroup(cfg: dict[str, Any], stop: threading.Event) -> None:
    """kgroup's own Consumer, written as the confluent-kafka member: the same API."""
    from kgroup import Consumer
    from kgroup.client.types import CommitFailed
    from kgroup.errors import IllegalGeneration, RebalanceInProgress

    conf = _group_config(cfg)
    if cfg.get("metadata_refresh_ms"):
        conf["metadata.max.age.ms"] = cfg["metadata_refresh_ms"]
    if cfg.get("delay_ms"):
        conf["scheduled.rebalance.max.delay.ms"] = cfg["delay_ms"]

    def commit(c: Any, m: Any) -> None:
        # As support.consumers.commit_after: a cooperative member's commit may race a
        # rebalance (REBALANCE_IN_PROGRESS, or the generation it just left); it still owns
        # the partition until its next poll(), so it commits again. Once the partition is
        # lost (a fenced member), a commit would write over its next owner's progress: the
        # refusal stands.
        deadline = time.monotonic() + 10
        while True:
            try:
                c.commit(message=m, asynchronous=False)
                return
            except (RebalanceInProgress, IllegalGeneration, CommitFailed):
                owned = {(tp.topic, tp.partition) for tp in c.assignment()}
                if time.monotonic() > deadline or (m.topic(), m.partition()) not in owned:
                    raise
                time.sleep(0.05)

    _confluent_api_member(Consumer(conf), cfg, stop, commit)


def run_kafka_python(cfg: dict[str, Any], stop: threading.Event) -> None:
    from kafka import ConsumerRebalanceListener, KafkaConsumer, OffsetAndMetadata
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    assignors = {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor,
    }
    options: dict[str, Any] = {}
    if cfg.get("assignor"):
        options["partition_assignment_strategy"] = [assignors[cfg["assignor"]]]
    if cfg.get("instance_id"):
        options["group_instance_id"] = cfg["instance_id"]
    if cfg.get("metadata_refresh_ms"):
        options["metadata_max_age_ms"] = cfg["metadata_refresh_ms"]
    c = KafkaConsumer(
        bootstrap_servers=cfg["bootstrap"],
        group_id=cfg["group"],
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=cfg["session_ms"],
        heartbeat_interval_ms=cfg["heartbeat_ms"],
        max_poll_records=MAX_RECORDS,
        **options,
    )
    owned: set[int] = set()

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked) -> None:
            owned.difference_update(tp.partition for tp in revoked)
            say("revoke", partitions=sorted(tp.partition for tp in revoked), owned=sorted(owned))

        def on_partitions_assigned(self, assigned) -> None:
            owned.update(tp.partition for tp in assigned)
            say("assign", partitions=sorted(tp.partition for tp in assigned), owned=sorted(owned))

    c.subscribe([cfg["topic"]], listener=Listener())
    # The subscribed topic's metadata before the first join: kafka-python 3.0.12 may otherwise
    # hang (see support.kafka_python_member).
    c.topics()
    try:
        while not stop.is_set():
            # Rebalances happen inside poll(): the records it returns are the member's own
            # until the next poll.
            for tp, records in c.poll(timeout_ms=100).items():
                for r in records:
                    value = r.value.decode()
                    say("processed", value=value, partition=tp.partition, offset=r.offset)
                    c.commit({tp: OffsetAndMetadata(r.offset + 1, "", -1)})
                    say("committed", value=value)
    finally:
        c.close()


def run_aiokafka(cfg: dict[str, Any], stop: threading.Event) -> None:
    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

    async def main() -> None:
        # aiokafka rebalances in a task of its own, concurrently with the application, so a
        # record is processed and committed under a lock that the revocation callback takes
        # too (aiokafka's documented way of committing by hand through rebalances); and the
        # rest of a batch is dropped after a rebalance (the new assignment starts from the
        # committed offsets, where those records are fetched again).
        lock = asyncio.Lock()
        owned: set[int] = set()
        rebalances = 0

        class Listener(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked) -> None:
                nonlocal rebalances
                async with lock:
                    rebalances += 1
                    owned.difference_update(tp.partition for tp in revoked)
                    partitions = sorted(tp.partition for tp in revoked)
                    say("revoke", partitions=partitions, owned=sorted(owned))

            async def on_partitions_assigned(self, assigned) -> None:
                async with lock:
                    owned.update(tp.partition for tp in assigned)
                    partitions = sorted(tp.partition for tp in assigned)
                    say("assign", partitions=partitions, owned=sorted(owned))

        options: dict[str, Any] = {}
        if cfg.get("instance_id"):
            options["group_instance_id"] = cfg["instance_id"]
        if cfg.get("metadata_refresh_ms"):
            options["metadata_max_age_ms"] = cfg["metadata_refresh_ms"]
        assert not cfg.get("assignor"), "aiokafka members use the library's default assignor"
        c = AIOKafkaConsumer(
            bootstrap_servers=cfg["bootstrap"],
            group_id=cfg["group"],
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=cfg["session_ms"],
            heartbeat_interval_ms=cfg["heartbeat_ms"],
            **options,
        )
        c.subscribe([cfg["topic"]], listener=Listener())
        await c.start()
        try:
            while not stop.is_set():
                batches = await c.getmany(timeout_ms=100, max_records=MAX_RECORDS)
                # What getmany returned is of the current assignment; from here on, until the
                # next rebalance.
                seen = rebalances
                for tp, records in batches.items():
                    for r in records:
                        async with lock:
                            if rebalances != seen or tp.partition not in owned:
                                break
                            value = r.value.decode()
                            say("processed", value=value, partition=tp.partition, offset=r.offset)
                            await c.commit({tp: r.offset + 1})
                            say("committed", value=value)
        finally:
            await c.stop()

    asyncio.run(main())


def main() -> None:
    cfg = {"session_ms": 6000, "heartbeat_ms": 500, **json.loads(sys.argv[1])}
    run = {
        "confluent": run_confluent,
        "kafka-python": run_kafka_python,
        "aiokafka": run_aiokafka,
        "kgroup": run_kgroup,
    }
    if cfg.get("debug_log"):
        logging.basicConfig(
            filename=cfg["debug_log"],
            level=logging.DEBUG,
            format="%(asctime)s %(threadName)s %(name)s %(message)s",
        )
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    try:
        run[cfg["client"]](cfg, stop)
    except Exception as e:
        say("error", error=repr(e))
        raise
    say("closed")


if __name__ == "__main__":
    main()
