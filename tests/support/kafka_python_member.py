"""A kafka-python group member in a process of its own, as applications run one: it subscribes,
commits synchronously after each record, and reports on standard output, one JSON line per
event: ``{"value": "..."}`` for each record consumed, ``{"assigned": n}`` when its assignment
changes size. It leaves the group (close()) when its standard input closes.

    python -m support.kafka_python_member BOOTSTRAP TOPIC GROUP ASSIGNOR [DEBUG_LOG_FILE]
"""

from __future__ import annotations

import json
import sys
import threading


def main() -> None:
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    bootstrap, topic, group, assignor = sys.argv[1:5]
    if len(sys.argv) > 5:  # a log file, for debugging
        import logging

        logging.basicConfig(
            filename=sys.argv[5], level=logging.DEBUG, format="%(asctime)s %(name)s %(message)s"
        )
    cls = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[assignor]
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    c = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        partition_assignment_strategy=[cls],
    )
    c.subscribe([topic])
    # The subscribed topic's metadata before the first join (topics() fetches it, and the
    # coordinator takes its snapshot of the subscription's partitions from it). Otherwise
    # kafka-python 3.0.12's leader may assign with an empty snapshot, see the topic's
    # partitions in the metadata response that follows, and rejoin only because the two
    # differ; its next assignment makes them equal again, and if that happens while the main
    # thread's poll() has already given up waiting for the join (a JoinGroup held for other
    # members outlasts a 100 ms poll), nothing ever collects the join's result: the member
    # never takes its assignment and never heartbeats again (seen in its debug log:
    # `need_rejoin` turns False with the join finished and unread).
    c.topics()

    def say(event: dict) -> None:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()

    assigned = -1
    try:
        while not stop.is_set():
            for records in c.poll(timeout_ms=100).values():
                for r in records:
                    say({"value": r.value.decode()})
                    c.commit()
            if len(c.assignment()) != assigned:
                assigned = len(c.assignment())
                say({"assigned": assigned})
    finally:
        c.close()


if __name__ == "__main__":
    main()
