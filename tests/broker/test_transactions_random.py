"""Random transactional histories on kgroup's broker, with kill -9: several transactional
producers (kgroup's client) commit, abort or leave open transactions over several partitions,
a plain producer writes between them, and the broker is killed with kill -9 and started again
at random points. At every check, and at the end once the open transactions have timed out:

- a read_committed reader sees exactly the records of committed transactions and the plain
  ones below each partition's last stable offset, each once (a committed transaction is
  never seen in part within a partition, nor an aborted or open one at all);
- no aborted record and no record of a transaction still open is ever seen;
- the last stable offset of a partition never passes the first offset of a transaction that
  is open there (ListOffsets under read_committed, checked against what the producers know
  they left open).

Each seed is one history; a failure names its seed and the operations that led to it."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from support.kgroup_broker import BrokerProcess

import kgroup
from kgroup.client.types import PartitionEOF

pytestmark = [pytest.mark.network, pytest.mark.slow]

PARTITIONS = 3
PRODUCERS = 3
STEPS = 24
TIMEOUT_MS = 3000


def committed_view(bootstrap: str) -> list[bytes]:
    """Every value a read_committed reader finds, reading each partition to its end (the last
    stable offset)."""
    c = kgroup.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "checker",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    c.assign([kgroup.TopicPartition("t", p, 0) for p in range(PARTITIONS)])
    got: list[bytes] = []
    ended: set[int] = set()
    deadline = time.monotonic() + 20
    try:
        while len(ended) < PARTITIONS:
            assert time.monotonic() < deadline, "read_committed never reached the ends"
            for m in c.consume(500, 0.2):
                err = m.error()
                if err is None:
                    got.append(m.value())
                elif isinstance(err, PartitionEOF):
                    ended.add(m.partition())
    finally:
        c.close()
    return got


def lso(bootstrap: str) -> dict[int, int]:
    with kgroup.AdminClient({"bootstrap.servers": bootstrap}) as admin:
        futures = admin.list_offsets(
            {kgroup.TopicPartition("t", p): "latest" for p in range(PARTITIONS)},
            isolation_level=1,
        )
        return {tp.partition: f.result().offset for tp, f in futures.items()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_transactions_with_kills(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    history: list[str] = []
    config = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": 500}
    with BrokerProcess(tmp_path / "data", config) as broker:
        bootstrap = broker.bootstrap
        with kgroup.AdminClient({"bootstrap.servers": bootstrap}) as admin:
            admin.create_topics([kgroup.NewTopic("t", PARTITIONS, 1)])["t"].result(10)
        plain = kgroup.Producer({"bootstrap.servers": bootstrap})
        committed: set[bytes] = set()
        aborted: set[bytes] = set()
        # Per producer: the values of its open transaction and where it first wrote in each
        # partition (the offsets its deliveries reported).
        open_values: dict[int, set[bytes]] = {}
        open_first: dict[int, dict[int, int]] = {}
        producers: dict[int, kgroup.Producer] = {}
        serial = 0

        def producer(i: int) -> kgroup.Producer:
            if i not in producers:
                p = kgroup.Producer(
                    {
                        "bootstrap.servers": bootstrap,
                        "transactional.id": f"r{seed}-{i}",
                        "transaction.timeout.ms": TIMEOUT_MS,
                    }
                )
                p.init_transactions(30)
                producers[i] = p
            return producers[i]

        # Where each record went: (partition, offset), from the delivery reports.
        where: dict[bytes, tuple[int, int]] = {}

        def delivered(err: object, msg: kgroup.Message) -> None:
            if err is None:
                where[msg.value()] = (msg.partition(), msg.offset())

        def check() -> None:
            seen = committed_view(bootstrap)
            ends = lso(bootstrap)
            # Committed records behind a transaction still open in their partition wait for
            # it: the last stable offset holds them back.
            visible = {v for v in committed if where[v][1] < ends[where[v][0]]}
            assert len(seen) == len(set(seen)), (seed, history, "a record seen twice")
            assert set(seen) == visible, (seed, " ".join(history), set(seen) ^ visible)
            for i, firsts in open_first.items():
                for part, first in firsts.items():
                    assert ends[part] <= first, (seed, history, i, part, first, ends)

        for _ in range(STEPS):
            op = rng.choice(["txn", "txn", "txn", "plain", "kill", "check"])
            history.append(op)
            if op == "plain":
                serial += 1
                v = f"plain-{serial}".encode()
                plain.produce("t", v, partition=rng.randrange(PARTITIONS), on_delivery=delivered)
                plain.flush(30)
                committed.add(v)
            elif op == "kill":
                broker.kill9()
                broker.start()
                # Transactions left open are aborted at their timeout; producers that had one
                # open are dropped (their transactional ids are fenced or reused below).
                for i in list(open_values):
                    aborted |= open_values.pop(i)
                    open_first.pop(i, None)
                    producers.pop(i).close(0)
                time.sleep(TIMEOUT_MS / 1000 + 1.5)
                check()
            elif op == "check":
                check()
            else:
                i = rng.randrange(PRODUCERS)
                if i in open_values:
                    # Ends the transaction it left open.
                    p = producers[i]
                    if rng.random() < 0.5:
                        p.commit_transaction(30)
                        p.poll(0)
                        committed |= open_values.pop(i)
                        history.append(f"commit {i}")
                    else:
                        p.abort_transaction(30)
                        aborted |= open_values.pop(i)
                        history.append(f"abort {i}")
                    open_first.pop(i, None)
                    continue
                p = producer(i)
                p.begin_transaction()
                values: set[bytes] = set()
                firsts: dict[int, int] = {}

                def delivered_txn(err: object, msg: kgroup.Message, firsts=firsts) -> None:
                    delivered(err, msg)
                    if err is None:
                        part = msg.partition()
                        firsts[part] = min(firsts.get(part, msg.offset()), msg.offset())

                for _ in range(rng.randint(1, 6)):
                    serial += 1
                    v = f"txn-{i}-{serial}".encode()
                    values.add(v)
                    p.produce(
                        "t", v, partition=rng.randrange(PARTITIONS), on_delivery=delivered_txn
                    )
                end = rng.choice(["commit", "abort", "open"])
                history.append(f"{end} {i}")
                if end == "commit":
                    p.commit_transaction(30)
                    p.poll(0)  # the delivery reports
                    committed |= values
                elif end == "abort":
                    p.abort_transaction(30)
                    aborted |= values
                else:
                    p.flush(30)
                    open_values[i] = values
                    open_first[i] = firsts
        # The open transactions time out and are aborted; then everything is decided.
        for i in list(open_values):
            aborted |= open_values.pop(i)
        open_first.clear()
        time.sleep(TIMEOUT_MS / 1000 + 1.5)
        check()
        assert not committed & aborted
        for p in producers.values():
            p.close(0)
        plain.close()
