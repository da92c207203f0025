"""A consume-transform-produce service with exactly-once semantics, as a process of its own so
that a test can kill it with kill -9: a member of a consumer group reading ``--input`` under
read_committed, writing each record's value to ``--output`` in a transaction that also commits
the group's offsets (KIP-447: the consumer's group metadata fences zombies).

    python -m support.eos_service --client confluent|kgroup --bootstrap HOST:PORT \\
        --input IN --output OUT --group G --transactional-id ID

``--client kgroup`` runs the same loop on kgroup's own client, whose API is confluent-kafka's.
It prints one line per committed transaction (``committed N``) and runs until killed or until
``--idle`` seconds pass with nothing to read. A failed transaction is aborted and the consumer
goes back to its last committed offsets, as an exactly-once application must; a fatal error
(the producer fenced by a newer instance) ends the process with status 3.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any


def modules(client: str) -> tuple[Any, Any, Any]:
    """(Producer, Consumer, KafkaException) of the client."""
    if client == "kgroup":
        import kgroup
        from kgroup.errors import KafkaError

        return kgroup.Producer, kgroup.Consumer, KafkaError
    import confluent_kafka as ck

    return ck.Producer, ck.Consumer, ck.KafkaException


def fatal(e: BaseException) -> bool:
    """Whether the producer cannot go on: confluent-kafka's ``KafkaError.fatal()`` (its
    exception carries the error), kgroup's ``fatal`` (the exception is the error)."""
    err = e.args[0] if e.args and hasattr(e.args[0], "fatal") else e
    flag = getattr(err, "fatal", False)
    return bool(flag() if callable(flag) else flag)


def rewind(consumer: Any) -> None:
    """Go back to the group's committed offsets of every assigned partition."""
    assignment = consumer.assignment()
    if not assignment:
        return
    for tp in consumer.committed(assignment, 10):
        if tp.offset >= 0:
            consumer.seek(tp)
        else:
            tp.offset = -2  # OFFSET_BEGINNING: nothing committed yet
            consumer.seek(tp)


def main(argv: list[str] | None = None) -> int:
    a = argparse.ArgumentParser()
    a.add_argument("--client", default="confluent", choices=["confluent", "kgroup"])
    a.add_argument("--bootstrap", required=True)
    a.add_argument("--input", required=True)
    a.add_argument("--output", required=True)
    a.add_argument("--group", required=True)
    a.add_argument("--transactional-id", required=True)
    a.add_argument("--transaction-timeout-ms", type=int, default=10_000)
    a.add_argument("--batch", type=int, default=50)
    a.add_argument("--idle", type=float, default=600.0)
    args = a.parse_args(argv)
    Producer, Consumer, KafkaException = modules(args.client)
    consumer = Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": args.group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
        }
    )
    producer_config = {
        "bootstrap.servers": args.bootstrap,
        "transactional.id": args.transactional_id,
        "transaction.timeout.ms": args.transaction_timeout_ms,
        "linger.ms": 5,
    }
    if args.client == "confluent":
        # librdkafka (2.10 on) re-bootstraps when every broker it knows is down, as the one
        # broker is while it restarts, and decommissions the broker's handle; its coordinator
        # cache can keep that dead handle as the group's coordinator, and then
        # send_offsets_to_transaction waits for it forever, past its timeout (librdkafka
        # issues 5511 and 5456): TxnOffsetCommit is never sent, consume() is never called
        # again, the group cannot finish its rebalance. With one broker on one address a
        # re-bootstrap has nothing to find; without it the handle reconnects to the restarted
        # broker as before 2.10.
        producer_config["metadata.recovery.strategy"] = "none"
    producer = Producer(producer_config)
    producer.init_transactions(30)
    consumer.subscribe([args.input])
    last_seen = time.monotonic()
    try:
        while time.monotonic() - last_seen < args.idle:
            msgs = []
            for m in consumer.consume(args.batch, 0.5):
                if m.error() is None:
                    msgs.append(m)
                else:
                    print(f"consume error {m.error()}", flush=True)
            if not msgs:
                continue
            last_seen = time.monotonic()
            try:
                producer.begin_transaction()
                for m in msgs:
                    producer.produce(args.output, m.value(), key=m.key())
                producer.send_offsets_to_transaction(
                    consumer.position(consumer.assignment()),
                    consumer.consumer_group_metadata(),
                    30,
                )
                producer.commit_transaction(30)
            except KafkaException as e:
                if fatal(e):
                    print(f"fatal {e}", flush=True)
                    return 3
                print(f"aborted {e}", flush=True)
                try:
                    producer.abort_transaction(30)
                except KafkaException as e2:
                    print(f"abort failed {e2}", flush=True)
                    return 3
                rewind(consumer)
                continue
            print(f"committed {len(msgs)}", flush=True)
    finally:
        consumer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
