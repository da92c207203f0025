"""producer: kgroup's Producer, confluent-kafka's ``Producer`` API with Java's partitioning and
delivery semantics.

The application's thread appends records to the native :class:`Accumulator` (Java's
``RecordAccumulator``: murmur2 keys, the built-in uniform sticky partitioner for null keys,
batches written in Kafka's v2 format as records arrive). ``produce`` is one native call plus a
test of its status: the sender is woken only when a batch became full or a topic's partition
count is unknown.

The sender is one task on the client's event loop (:mod:`.runtime`), Java's ``Sender``:

- metadata for topics the accumulator holds records for (auto-created as Java's producer asks,
  ``allow_auto_topic_creation``); a topic still unknown after ``max.block.ms`` fails its records
  with UNKNOWN_TOPIC_OR_PARTITION;
- with idempotence, an InitProducerId first; every batch then carries the producer id, epoch and
  per-partition sequence numbers (taken when a batch is first drained, kept on retries);
- partitions ready by ``linger.ms`` / a full batch / ``flush()``, drained per leader into one
  ProduceRequest each, at most ``max.in.flight.requests.per.connection`` per broker, written
  to the broker in the order they were drained (also those that waited for the connection to
  open), so that a partition's sequences reach it in order;
- retriable errors (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, REQUEST_TIMED_OUT,
  NOT_ENOUGH_REPLICAS, a lost connection, ...) refresh the metadata, and the partition's failed
  batches go back to the front of its queue, in their original order, after
  ``retry.backoff.ms``, with their bytes and sequences, until ``retries`` attempts or
  ``delivery.timeout.ms`` since the batch was made: then the records fail (REQUEST_TIMED_OUT
  for an expired batch). A partition is muted while it has batches waiting to be retried, so
  batches are never reordered;
- idempotence: DUPLICATE_SEQUENCE_NUMBER is a success (the broker has the batch). For
  OUT_OF_ORDER_SEQUENCE_NUMBER and UNKNOWN_PRODUCER_ID, when an earlier batch of the partition
  is itself being retried the batch is retried behind it (Java's ``canRetry`` for a batch that
  is not the first in flight); otherwise the batch fails with that error and the producer bumps
  its epoch (InitProducerId with its current id and epoch, KIP-360 as Java 2.5+ does for the
  idempotent non-transactional producer), which restarts every partition's sequences at 0;
- ``acks=0``: no response is awaited; reports carry offset -1;
- with ``transactional.id`` (:mod:`.transactions`): the producer id comes from
  ``init_transactions()``, every batch is transactional and carries the transactional id, and
  a partition is drained only once AddPartitionsToTxn added it to the transaction; a batch
  that fails for good fails the transaction (abortable, or fatal when fenced), after which
  nothing more is sent until ``abort_transaction()``.

Delivery reports are kept in the accumulator and served on the application's thread by
:meth:`Producer.poll` and :meth:`Producer.flush`, calling ``on_delivery(err, msg)`` as
confluent-kafka does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from kgroup._native.client import Accumulator
from kgroup.client.cluster import Cluster
from kgroup.client.config import ClientConfig
from kgroup.client.metadata import ClusterMetadata, cluster_metadata, error_from_code
from kgroup.client.runtime import Runtime
from kgroup.client.transactions import TransactionManager, TxnState
from kgroup.client.types import (
    ClientClosed,
    ClientError,
    ClientTimeout,
    ConsumerGroupMetadata,
    OperationConflict,
    TopicPartition,
    TransactionStateError,
)
from kgroup.errors import (
    DuplicateSequenceNumber,
    InvalidArgument,
    KafkaError,
    NetworkException,
    OutOfOrderSequenceNumber,
    RequestTimedOut,
    TopicAuthorizationFailed,
    UnknownProducerId,
    UnknownTopicOrPartition,
    error_for_code,
)
from kgroup.protocol import ApiKey

__all__ = [
    "Producer",
]

log = logging.getLogger("kgroup.client.producer")

# librdkafka's / Java's names for the partitioner, as the accumulator names them.
_PARTITIONERS = {
    "murmur2_builtin": "murmur2_builtin",
    "default": "murmur2_builtin",
    "org.apache.kafka.clients.producer.internals.defaultpartitioner": "murmur2_sticky",
    "org.apache.kafka.clients.producer.roundrobinpartitioner": "roundrobin",
    "org.apache.kafka.clients.producer.uniformstickypartitioner": "murmur2_builtin",
}

_REQUEST_TIMED_OUT = RequestTimedOut.code
_UNKNOWN_TOPIC = UnknownTopicOrPartition.code
_TOPIC_AUTHORIZATION_FAILED = TopicAuthorizationFailed.code


def _now_ms() -> float:
    return time.monotonic() * 1000.0


def _acks(value: str) -> int:
    v = str(value).strip().lower()
    if v in ("all", "-1"):
        return -1
    if v in ("0", "1"):
        return int(v)
    raise InvalidArgument(f"configuration property 'acks': {value!r} is not one of 0, 1, all")


# -- the producer ---------------------------------------------------------------------------------


class Producer:
    """Producer is confluent-kafka's ``Producer`` over kgroup's native accumulator.

    ``produce`` and ``poll`` may be called from any thread; delivery callbacks run in the thread
    that calls ``poll`` or ``flush``. ``close()`` (or leaving a ``with`` block) flushes and stops
    the background thread; nothing of the producer outlives it.
    """

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        cfg = ClientConfig("producer", config, **kwargs)
        self.config = cfg
        self._acks = _acks(cfg["acks"])
        idempotent = cfg["enable.idempotence"]
        max_in_flight = cfg["max.in.flight.requests.per.connection"]
        if idempotent and (self._acks != -1 or max_in_flight > 5):
            if "enable.idempotence" in cfg.given:
                raise InvalidArgument(
                    "enable.idempotence=true requires acks=all and "
                    "max.in.flight.requests.per.connection <= 5 "
                    f"(got acks={cfg['acks']}, max.in.flight={max_in_flight})"
                )
            idempotent = False  # Java: not asked for explicitly, so quietly off
        self._transactional_id: str | None = cfg["transactional.id"]
        if self._transactional_id is not None:
            # Java's ProducerConfig: a transactional producer is idempotent; asking for it
            # off is a configuration error.
            if "enable.idempotence" in cfg.given and not cfg["enable.idempotence"]:
                raise InvalidArgument("transactional.id requires enable.idempotence=true")
            if self._acks != -1 or max_in_flight > 5:
                raise InvalidArgument(
                    "transactional.id requires acks=all and "
                    "max.in.flight.requests.per.connection <= 5 "
                    f"(got acks={cfg['acks']}, max.in.flight={max_in_flight})"
                )
            idempotent = True
        if cfg["delivery.timeout.ms"] < cfg["linger.ms"] + cfg["request.timeout.ms"]:
            if "delivery.timeout.ms" in cfg.given:
                raise InvalidArgument(
                    "delivery.timeout.ms should be equal to or larger than linger.ms + "
                    "request.timeout.ms"
                )
        self._idempotent = idempotent
        self._max_in_flight = max(1, max_in_flight)
        part = str(cfg["partitioner"])
        partitioner = _PARTITIONERS.get(part.lower(), part)
        self._acc = Accumulator(
            batch_size=cfg["batch.size"],
            linger_ms=float(cfg["linger.ms"]),
            compression=cfg["compression.type"],
            compression_level=cfg["compression.level"],
            partitioner=partitioner,
            buffer_memory=cfg["buffer.memory"],
            max_request_size=cfg["max.request.size"],
        )
        self._default_cb: Callable[..., Any] | None = cfg["on_delivery"]
        self._only_errors = cfg["delivery.report.only.error"]
        self._reports = threading.Event()
        self._closed = False
        self._runtime = Runtime("producer")
        self._sender = _Sender(self, cfg)
        self._wake_flag = False
        #: the transaction manager (transactional.id), and the transactional call running in
        #: the background: (name, future), resumed by the same call made again
        self._txn: TransactionManager | None = None
        self._txn_call: tuple[str, concurrent.futures.Future[Any]] | None = None
        if self._transactional_id is not None:
            self._txn = TransactionManager(
                self._sender, self._transactional_id, cfg["transaction.timeout.ms"]
            )
            self._sender.txn = self._txn  # before it starts: no InitProducerId of its own
        try:
            self._runtime.call(self._sender.start(), timeout=10)
        except BaseException:
            self._runtime.close()
            raise
        self._loop_wake = self._sender.wake_threadsafe
        self._append = self._acc.append

    # -- produce --------------------------------------------------------------------------------

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        on_delivery: Callable[..., Any] | None = None,
        timestamp: int = 0,
        headers: Any = None,
        callback: Callable[..., Any] | None = None,
    ) -> None:
        """Append a record to ``topic`` (confluent-kafka's ``produce``). Raises BufferError
        when ``buffer.memory`` is full (serve reports with ``poll`` and try again). A
        transactional producer produces inside a transaction only
        (:class:`~kgroup.client.types.TransactionStateError` otherwise, or the transaction's
        error when it must be aborted)."""
        if self._txn is not None and self._txn.state is not TxnState.IN_TRANSACTION:
            self._txn_check_produce()
        status = self._append(
            topic,
            value,
            key,
            partition,
            timestamp,
            headers,
            on_delivery or callback or self._default_cb,
        )
        if status:
            if status == 2:
                self._sender.unknown_topics.add(topic)
            self._loop_wake()

    def produce_arrow(
        self,
        topic: str,
        data: Any,
        key: str | None = "key",
        value: str | None = "value",
        partition: str | int | None = None,
        headers: str | None = None,
        timestamp: str | None = None,
    ) -> int:
        """Append every row of a pyarrow Table or RecordBatch (columns ``key`` and ``value``,
        binary or string; missing columns are null) as produce() would, placed and batched in
        Rust. ``partition`` is a column name (per row; null or -1: the partitioner chooses) or
        one partition for every row. ``headers`` names a ``list<struct<key: string, value:
        binary>>`` column (Spark's sink type; a null list is no headers, a null value is
        allowed); a null key or header fails the batch before any of its rows is appended.
        Returns the rows appended; ``flush``/``poll`` deliver them.

        Rows have no delivery report (no per-row callback: not even the ``on_delivery`` of the
        configuration); those that fail for good are counted in
        :attr:`failed_without_report`."""
        if self._txn is not None and self._txn.state is not TxnState.IN_TRANSACTION:
            self._txn_check_produce()
        kwargs: dict[str, Any] = {"key": key, "value": value}
        if isinstance(partition, int) and not isinstance(partition, bool):
            import pyarrow as pa

            data = data.append_column(
                "__kgroup_partition",
                pa.repeat(pa.scalar(partition, pa.int32()), int(data.num_rows)),
            )
            kwargs["partition"] = "__kgroup_partition"
        elif partition is not None:
            kwargs["partition"] = partition
        if headers is not None:
            kwargs["headers"] = headers
        if timestamp is not None:
            kwargs["timestamp"] = timestamp
        if self._acc.partitions(topic) is None:
            self._sender.unknown_topics.add(topic)
            self._loop_wake()
            self._wait_for_topic(topic)
        # In slices of about 4 MB, waking the sender after each: it sends full batches while
        # the next slice is appended (append_arrow releases the GIL), instead of starting only
        # once the whole table is in memory.
        rows, nbytes = getattr(data, "num_rows", None), getattr(data, "nbytes", None)
        if not (isinstance(rows, int) and isinstance(nbytes, int) and hasattr(data, "slice")):
            n: int = self._acc.append_arrow(topic, data, **kwargs)
            self._loop_wake()
            return n
        step = max(1024, (4 << 20) * rows // max(nbytes, 1))
        n = 0
        for start in range(0, rows, step):
            n += self._acc.append_arrow(topic, data.slice(start, step), **kwargs)
            self._loop_wake()
        return n

    def _wait_for_topic(self, topic: str) -> None:
        deadline = time.monotonic() + self.config.ms("max.block.ms")
        while self._acc.partitions(topic) is None:
            if time.monotonic() > deadline:
                raise ClientTimeout(
                    f"topic {topic!r} not present in metadata after "
                    f"{self.config['max.block.ms']} ms"
                )
            self._sender.topic_known.wait(0.05)

    # -- transactions ---------------------------------------------------------------------------

    def _txn_check_produce(self) -> None:
        txn = self._txn
        assert txn is not None
        if txn.error is not None and txn.failed:
            raise txn.error
        raise TransactionStateError(
            f"produce(): transactional.id {txn.transactional_id!r} is not in a transaction "
            f"({txn.state.value}): call begin_transaction() first"
        )

    def _txn_manager(self, call: str) -> TransactionManager:
        """The transaction manager for transactional call ``call``, after the checks every
        call makes: a transactional producer, open, not failed fatally, and no other call
        still running in the background (librdkafka's _CONFLICT)."""
        if self._txn is None:
            raise ClientError(f"{call}(): the producer has no transactional.id")
        if self._closed:
            raise ClientClosed(f"{call}(): the producer is closed")
        if self._txn.state is TxnState.FATAL_ERROR:
            assert self._txn.error is not None
            raise self._txn.error
        running = self._txn_call
        if running is not None and running[0] != call:
            if not running[1].done():
                raise OperationConflict(
                    f"{call}(): {running[0]}() is still in progress: call it again"
                )
            self._txn_call = None
        return self._txn

    def _txn_wait(self, name: str, make: Callable[[], Any], deadline: float) -> Any:
        """Run the coroutine ``make()`` on the loop as transactional call ``name`` (or resume
        the one of that name that timed out) and wait for it until ``deadline``; a timeout
        leaves it running (a retriable ClientTimeout: call again to resume it)."""
        if self._txn_call is None:
            self._txn_call = (name, self._runtime.submit(make()))
        fut = self._txn_call[1]
        try:
            return fut.result(max(deadline - time.monotonic(), 0.0))
        except concurrent.futures.TimeoutError:
            raise ClientTimeout(f"{name}() timed out: call it again to resume") from None
        finally:
            if fut.done():
                self._txn_call = None

    def _txn_deadline(self, timeout: float | None) -> float:
        """librdkafka's rule: no timeout (None, negative) is 2 x transaction.timeout.ms."""
        if timeout is None or timeout < 0:
            timeout = 2 * self.config.ms("transaction.timeout.ms")
        return time.monotonic() + timeout

    def init_transactions(self, timeout: float | None = None) -> None:
        """Find the transaction coordinator of ``transactional.id`` and get a producer id and
        a new epoch from it (InitProducerId), which fences any older producer with the same
        transactional id and ends what it left open. Call once, before the first transaction.
        ``timeout`` in seconds (None: 2 x transaction.timeout.ms); after a ClientTimeout
        (retriable) call it again to resume. Raises TransactionStateError when already
        initialised, a KafkaError with ``fatal`` set when the coordinator refuses."""
        txn = self._txn_manager("init_transactions")
        deadline = self._txn_deadline(timeout)
        if txn.state is TxnState.UNINITIALIZED:
            txn.state = TxnState.INITIALIZING
        elif txn.state is not TxnState.INITIALIZING:
            raise TransactionStateError(
                f"init_transactions(): already initialised ({txn.state.value})"
            )

        async def init() -> None:
            await txn.init()
            txn.transition(TxnState.READY)
            self._sender._wake()

        self._txn_wait("init_transactions", init, deadline)

    def begin_transaction(self) -> None:
        """Start a transaction (local only: the coordinator hears of it with the first
        partition or offsets added). Raises OperationConflict before init_transactions()
        finished, TransactionStateError in a transaction."""
        txn = self._txn_manager("begin_transaction")
        if txn.state is not TxnState.READY:
            if txn.state in (TxnState.UNINITIALIZED, TxnState.INITIALIZING):
                raise OperationConflict("begin_transaction(): init_transactions() has not finished")
            raise TransactionStateError(
                f"begin_transaction(): a transaction is in progress ({txn.state.value})"
            )
        txn.state = TxnState.IN_TRANSACTION

    def send_offsets_to_transaction(
        self,
        positions: list[TopicPartition],
        group_metadata: ConsumerGroupMetadata,
        timeout: float | None = None,
    ) -> None:
        """Commit the consumer's ``positions`` (the next offsets to read: the last processed
        + 1) to ``group_metadata``'s group as part of the transaction: they take effect with
        its commit and are discarded by its abort. ``group_metadata`` is
        ``Consumer.consumer_group_metadata()``; the group coordinator checks its generation
        and member id (a consumer no longer in the group gets an abortable error). Negative
        (logical) offsets are left out; an empty list returns at once."""
        txn = self._txn_manager("send_offsets_to_transaction")
        if not isinstance(group_metadata, ConsumerGroupMetadata):
            raise InvalidArgument(
                "send_offsets_to_transaction(): group_metadata must come from "
                "Consumer.consumer_group_metadata()"
            )
        self._txn_require(txn, "send_offsets_to_transaction")
        positions = [tp for tp in positions if tp.offset >= 0]
        if not positions:
            return
        deadline = self._txn_deadline(timeout)
        self._txn_wait(
            "send_offsets_to_transaction",
            lambda: txn.send_offsets(positions, group_metadata),
            deadline,
        )

    def _txn_require(self, txn: TransactionManager, call: str) -> None:
        if txn.state is TxnState.IN_TRANSACTION:
            return
        if txn.state is TxnState.ABORTABLE_ERROR and txn.error is not None:
            raise txn.error
        raise TransactionStateError(f"{call}(): not in a transaction ({txn.state.value})")

    def commit_transaction(self, timeout: float | None = None) -> None:
        """Flush every record of the transaction, then commit it (EndTxn): its records and
        offsets become visible to read_committed consumers. After a ClientTimeout call it
        again to resume. A record that failed makes the transaction abortable: the error has
        ``txn_requires_abort``, and only abort_transaction() is allowed."""
        txn = self._txn_manager("commit_transaction")
        deadline = self._txn_deadline(timeout)
        if txn.state is not TxnState.COMMITTING_TRANSACTION:
            self._txn_require(txn, "commit_transaction")
            if self.flush(max(deadline - time.monotonic(), 0.0)):
                raise ClientTimeout(
                    "commit_transaction(): records still unsent: call it again to resume"
                )
            if txn.failed:
                assert txn.error is not None
                raise txn.error
            txn.state = TxnState.COMMITTING_TRANSACTION

        async def commit() -> None:
            await txn.end(commit=True)

        self._txn_wait("commit_transaction", commit, deadline)

    def abort_transaction(self, timeout: float | None = None) -> None:
        """Abort the transaction: records not sent yet fail with _PURGE_QUEUE, those in flight
        are waited for, then the coordinator aborts it (EndTxn): read_committed consumers
        never see its records, and offsets sent with it are discarded. The way out of an
        abortable error. After a ClientTimeout call it again to resume."""
        txn = self._txn_manager("abort_transaction")
        deadline = self._txn_deadline(timeout)
        if txn.state not in (
            TxnState.IN_TRANSACTION,
            TxnState.ABORTABLE_ERROR,
            TxnState.ABORTING_TRANSACTION,
        ):
            raise TransactionStateError(
                f"abort_transaction(): not in a transaction ({txn.state.value})"
            )
        txn.state = TxnState.ABORTING_TRANSACTION
        self.purge()
        if self.flush(max(deadline - time.monotonic(), 0.0)):
            raise ClientTimeout("abort_transaction(): records still in flight: call it again")

        async def abort() -> None:
            await txn.end(commit=False)

        self._txn_wait("abort_transaction", abort, deadline)

    # -- reports --------------------------------------------------------------------------------

    def poll(self, timeout: float | None = 0) -> int:
        """Serve delivery reports: call each record's ``on_delivery(err, msg)`` here, waiting
        up to ``timeout`` seconds (None or negative: until one comes) for the first. Returns
        how many. An exception from a callback is raised after the others were served."""
        n = self._serve()
        if n or timeout == 0:
            return n
        deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return self._serve()
            self._reports.wait(left)
            n = self._serve()
            if n:
                return n

    def _serve(self) -> int:
        self._reports.clear()
        reports = self._acc.pop_reports()
        only_errors = self._only_errors
        raised: BaseException | None = None
        for cb, err, msg in reports:
            if cb is not None and (err is not None or not only_errors):
                try:
                    cb(err, msg)
                except Exception as e:  # confluent raises it from poll(): after the rest
                    raised = raised or e
        if raised is not None:
            raise raised
        return len(reports)

    def flush(self, timeout: float | None = None) -> int:
        """Send every record now and wait until all are delivered or failed (serving their
        reports), at most ``timeout`` seconds. Returns the records still undelivered."""
        deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
        self._acc.begin_flush()
        self._loop_wake()
        while True:
            self._serve()
            if len(self._acc) == 0:
                self._serve()
                return 0
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return len(self._acc)
            self._reports.wait(0.1 if left is None else min(left, 0.1))

    def __len__(self) -> int:
        """The records produced and not yet delivered or failed (confluent-kafka's)."""
        return len(self._acc)

    def appended(self, topic: str) -> list[int]:
        """How many records this producer placed in each partition of ``topic`` (index =
        partition), delivered or not yet: with :attr:`failed_without_report` 0 after a flush,
        the rows written per partition. Records still waiting for the topic's metadata are
        not counted; an unknown topic gives []."""
        return list(self._acc.appended(topic) or [])

    @property
    def failed_without_report(self) -> int:
        """The records produced without a delivery callback (``produce_arrow``'s rows) that
        failed for good: their only trace, since they have no report."""
        return int(self._acc.unreported_failed)

    @property
    def last_error_without_report(self) -> KafkaError | None:
        """The error of the last of :attr:`failed_without_report` (None: none failed)."""
        return error_from_code(int(self._acc.unreported_error))

    def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None:
        """Fail every record still queued with PURGE_QUEUE (-152, librdkafka's
        ``_PURGE_QUEUE``); their reports come with the next poll or flush. Records already
        sent are left to their answer."""
        if in_queue:
            self._acc.fail_all(-152)
            self._reports.set()

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        """The cluster's metadata (every topic, or just ``topic``) as confluent-kafka's."""

        names = None if topic is None else [topic]

        async def fetch() -> ClusterMetadata:
            await self._sender.cluster.refresh(names)
            return cluster_metadata(self._sender.cluster, names)

        t = None if timeout is None or timeout < 0 else timeout
        try:
            return self._runtime.call(fetch(), timeout=t)
        except TimeoutError:
            raise ClientTimeout(f"list_topics timed out after {timeout} s") from None

    # -- lifecycle ------------------------------------------------------------------------------

    def close(self, timeout: float | None = None) -> int:
        """Flush (at most ``timeout`` seconds), fail what is left, stop the background thread.
        Returns the records that were not delivered. Idempotent. A transaction still open is
        aborted, and one being committed or aborted is waited for, in the time left (Java's
        producer does so on close; else read_committed consumers would wait for it until the
        coordinator times it out)."""
        if self._closed:
            return 0
        deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
        left = self.flush(timeout)
        if self._txn is not None:
            self._end_transaction_on_close(deadline)
        self._closed = True
        if left:
            self.purge()
            self._serve()
        with contextlib.suppress(Exception):
            self._runtime.call(self._sender.stop(), timeout=5)
        self._runtime.close()
        return left

    def _end_transaction_on_close(self, deadline: float | None) -> None:
        txn = self._txn
        assert txn is not None
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return  # no time left: as Java's forced close, the coordinator times it out
        try:
            running = self._txn_call
            if running is not None and not running[1].done():
                # A commit or abort that timed out earlier: resumed, as Java's close lets a
                # completing transaction complete.
                if running[0] == "commit_transaction":
                    self.commit_transaction(left)
                    return
                if running[0] == "abort_transaction":
                    self.abort_transaction(left)
                    return
                running[1].result(left)
            if txn.state is TxnState.COMMITTING_TRANSACTION:
                self.commit_transaction(left)
            elif txn.state in (
                TxnState.IN_TRANSACTION,
                TxnState.ABORTABLE_ERROR,
                TxnState.ABORTING_TRANSACTION,
            ):
                log.info("Aborting incomplete transaction due to shutdown")
                self.abort_transaction(left)
        except Exception as e:
            log.warning("Closing with the transaction not ended (%s): %s", txn.state.value, e)

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        runtime = getattr(self, "_runtime", None)
        if runtime is not None and not runtime.closed:
            with contextlib.suppress(Exception):
                runtime.close(1.0)


# -- the sender ---------------------------------------------------------------------------------


class _Sender:
    """_Sender is Java's ``Sender``: it runs on the producer's event loop (see the module)."""

    def __init__(self, producer: Producer, cfg: ClientConfig) -> None:
        self.producer = producer
        self.acc = producer._acc
        self.reports = producer._reports
        self.runtime = producer._runtime
        self.cfg = cfg
        self.cluster = Cluster(cfg)
        self.acks = producer._acks
        self.timeout_ms = cfg["request.timeout.ms"]
        self.delivery_timeout_ms = cfg["delivery.timeout.ms"]
        self.retries = cfg["retries"]
        self.backoff = cfg.ms("retry.backoff.ms")
        self.max_request_size = cfg["max.request.size"]
        self.max_in_flight = producer._max_in_flight
        self.idempotent = producer._idempotent
        #: topics appended to before their partition count was known; added by the app thread.
        self.unknown_topics: set[str] = set()
        self.topic_known = threading.Event()
        self._unknown_since: dict[str, float] = {}
        self._in_flight: dict[int, int] = defaultdict(int)
        #: per broker, the turn to write a request: taken in drain order (asyncio's Lock is FIFO)
        self._write_turn: dict[int, asyncio.Lock] = {}
        #: batches in flight per partition, and the retried ones waiting for the others.
        self._partition_in_flight: dict[tuple[str, int], int] = defaultdict(int)
        self._muted: dict[tuple[str, int], list[tuple[int, Any]]] = {}
        self._drain_order = 0
        self._need_metadata = False
        self._producer_id: tuple[int, int] | None = None
        self._bump_epoch = False
        self._event: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake_pending = False
        self._fatal: BaseException | None = None
        self._stopped = False
        #: the producer's transactions (transactional.id), set by the producer
        self.txn: TransactionManager | None = None

    async def start(self) -> None:
        self._event = asyncio.Event()
        self._task = self.runtime.spawn(self._run())

    async def stop(self) -> None:
        # The loop sees the flag at its next turn; the cancel is for a pass in progress.
        # (Python 3.11's wait_for can swallow a cancel that races its inner future.)
        self._stopped = True
        if self._event is not None:
            self._event.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        await self.cluster.close()

    def wake_threadsafe(self) -> None:
        if not self._wake_pending:
            self._wake_pending = True
            self.runtime.call_soon(self._wake)

    def _wake(self) -> None:
        self._wake_pending = False
        if self._event is not None:
            self._event.set()

    def _report(self) -> None:
        self.reports.set()

    # -- the loop -------------------------------------------------------------------------------

    async def _run(self) -> None:
        assert self._event is not None
        event = self._event
        while not self._stopped:
            # cleared before the pass, so that a wake during the pass is not lost
            event.clear()
            try:
                wait = await self._once()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # keep the sender alive
                self._fatal = e
                wait = self.backoff
            if wait > 0 and not event.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), wait)
            else:
                await asyncio.sleep(0)

    async def _once(self) -> float:
        """One pass of the sender; returns the seconds until there may be more to do."""
        if self.unknown_topics or self._need_metadata:
            await self._update_metadata()
        txn = self.txn
        if txn is not None:
            # init_transactions() gets the producer id; a transaction that failed sends
            # nothing more (Java's Sender aborts the undrained batches).
            if txn.failed:
                if len(self.acc):
                    assert txn.error is not None
                    self.acc.fail_all(txn.error.code if txn.error.code > 0 else -172)
                    self._report()
                return 1.0
        elif self.idempotent and (self._producer_id is None or self._bump_epoch):
            if not await self._init_producer_id():
                return self.backoff
        now = _now_ms()
        ready, next_ms = self.acc.ready(now)
        wait = next_ms / 1000.0
        if not ready:
            return wait if len(self.acc) else max(wait, 1.0)
        by_node: dict[int, list[tuple[str, int]]] = defaultdict(list)
        blocked = adding = False
        for topic, partition in ready:
            if (topic, partition) in self._muted:
                blocked = True
                continue
            if txn is not None and (topic, partition) not in txn.added:
                # AddPartitionsToTxn first; it wakes the sender when it is answered
                txn.want((topic, partition))
                adding = True
                continue
            leader = self.cluster.leader(topic, partition)
            if leader is None:
                self._need_metadata = True
                blocked = True
                continue
            by_node[leader].append((topic, partition))
        for node, parts in by_node.items():
            if self._in_flight[node] >= self.max_in_flight:
                blocked = True
                continue
            batches = self.acc.drain(parts, self.max_request_size)
            if batches:
                self._in_flight[node] += 1
                for b in batches:
                    self._partition_in_flight[(b.topic, b.partition)] += 1
                self.runtime.spawn(self._send(node, batches))
        if blocked:
            return self.backoff
        if adding and not by_node:
            return 1.0  # the AddPartitionsToTxn answer wakes the sender
        return 0.0 if by_node else wait

    # -- metadata -------------------------------------------------------------------------------

    async def _update_metadata(self) -> None:
        self._need_metadata = False
        topics = set(self.unknown_topics) | set(self.cluster.topics)
        try:
            await self.cluster.refresh(topics, auto_create=self.cfg["allow.auto.create.topics"])
        except KafkaError:
            self._need_metadata = True
        now = time.monotonic()
        for topic in list(self.unknown_topics):
            n = self.cluster.partition_count(topic)
            if n is not None:
                self.acc.set_partitions(topic, n)
                self.unknown_topics.discard(topic)
                self._unknown_since.pop(topic, None)
                self.topic_known.set()
                self._report()
                continue
            info = self.cluster.topics.get(topic)
            if info is not None and info.error == _TOPIC_AUTHORIZATION_FAILED:
                # Not allowed to describe it: its records fail now, as librdkafka fails them
                # and Java's send() throws TopicAuthorizationException.
                self._fail_topic(topic, _TOPIC_AUTHORIZATION_FAILED)
                continue
            since = self._unknown_since.setdefault(topic, now)
            if now - since > self.cfg.ms("max.block.ms"):
                # Java's send() blocks max.block.ms on the metadata and then throws; records
                # held for the topic fail with UNKNOWN_TOPIC_OR_PARTITION.
                self._fail_topic(topic, _UNKNOWN_TOPIC)
            else:
                self._need_metadata = True
        for topic in self.cluster.topics:
            n = self.cluster.partition_count(topic)
            if n is not None and self.acc.partitions(topic) not in (None, n):
                self.acc.set_partitions(topic, n)

    def _fail_topic(self, topic: str, error_code: int) -> None:
        self.acc.fail_topic(topic, error_code)
        self.unknown_topics.discard(topic)
        self._unknown_since.pop(topic, None)
        self._report()

    async def _init_producer_id(self) -> bool:
        body: dict[str, Any] = {"transactional_id": None, "transaction_timeout_ms": 2147483647}
        try:
            conn = await self.cluster.any_connection()
            v = conn.version(ApiKey.INIT_PRODUCER_ID)
            if self._producer_id is not None and v >= 3:
                body["producer_id"], body["producer_epoch"] = self._producer_id
            resp = await conn.request(ApiKey.INIT_PRODUCER_ID, body, version=v)
        except KafkaError:
            return False
        if resp["error_code"]:
            err = error_from_code(resp["error_code"])
            if err is not None and err.retriable:
                return False
            self._fatal = err
            self.idempotent = False  # the broker cannot give ids: produce without
            return True
        self._producer_id = (resp["producer_id"], resp["producer_epoch"])
        self.acc.set_producer_id(resp["producer_id"], resp["producer_epoch"])
        self._bump_epoch = False
        return True

    # -- produce requests -----------------------------------------------------------------------

    async def _send(self, node: int, batches: list[Any]) -> None:
        order = self._drain_order
        self._drain_order += 1
        error: KafkaError | None = None
        resp = None
        try:
            topic_data: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for b in batches:
                topic_data[b.topic].append({"index": b.partition, "records": b.records()})
            body = {
                "transactional_id": None if self.txn is None else self.txn.transactional_id,
                "acks": self.acks,
                "timeout_ms": self.timeout_ms,
                "topic_data": [
                    {"name": t, "partition_data": parts} for t, parts in topic_data.items()
                ],
            }
            # One request at a time gets the connection and writes, in drain order: one that
            # waited for the connection to open could otherwise go out after one drained
            # later, and its partitions' sequences reach the broker out of order
            # (OUT_OF_ORDER_SEQUENCE_NUMBER for the later one). Answers are awaited outside
            # the turn: up to max.in.flight requests stay in flight.
            turn = self._write_turn.setdefault(node, asyncio.Lock())
            async with turn:
                conn = await self.cluster.connection(node)
                v = conn.version(ApiKey.PRODUCE)
                sent = conn.send(ApiKey.PRODUCE, body, version=v, expect_response=self.acks != 0)
            if self.acks != 0:
                resp = await conn.answer(ApiKey.PRODUCE, sent)
        except KafkaError as e:
            error = e
        except Exception as e:  # an encoding bug must not lose the records
            error = NetworkException(str(e))
        finally:
            self._in_flight[node] -= 1
        now = _now_ms()
        results: dict[tuple[str, int], Any] = {}
        if resp is not None:
            for t in resp["responses"]:
                for p in t["partition_responses"]:
                    results[(t["name"], p["index"])] = p
        retry: list[Any] = []
        for b in batches:
            tp = (b.topic, b.partition)
            self._partition_in_flight[tp] -= 1
            if error is None and self.acks == 0:
                self.acc.complete(b, 0, -1, -1)
                continue
            if error is not None:
                code = error.code if error.code else NetworkException.code
            else:
                p = results.get(tp)
                if p is None:
                    code = NetworkException.code
                else:
                    code = p["error_code"]
                    if code == 0 or code == DuplicateSequenceNumber.code:
                        self.acc.complete(b, 0, p["base_offset"], p.get("log_append_time_ms", -1))
                        continue
            if self._retriable(b, code, now):
                retry.append(b)
                self._muted.setdefault(tp, []).append((order, b))
            else:
                if self.txn is not None:
                    self.txn.batch_failed(code)
                elif code in (OutOfOrderSequenceNumber.code, UnknownProducerId.code):
                    self._bump_epoch = True
                expired = now - self._created_ms(b) >= self.delivery_timeout_ms
                self.acc.complete(b, _REQUEST_TIMED_OUT if expired else code, -1, -1)
        if error is not None or retry:
            self._need_metadata = True
        self._report()
        if retry:
            await asyncio.sleep(self.backoff)
        self._release_muted()
        if self._event is not None:
            self._event.set()

    def _created_ms(self, batch: Any) -> float:
        return float(getattr(batch, "created_ms", _now_ms()))

    def _retriable(self, batch: Any, code: int, now: float) -> bool:
        if now - self._created_ms(batch) >= self.delivery_timeout_ms:
            return False
        if getattr(batch, "attempts", 1) > self.retries:
            return False
        tp = (batch.topic, batch.partition)
        if code in (OutOfOrderSequenceNumber.code, UnknownProducerId.code):
            # retried behind an earlier batch of the partition that failed: its turn comes
            return tp in self._muted
        cls = error_for_code(code)
        return cls is not None and cls.retriable

    def _release_muted(self) -> None:
        """Put back the retried batches of each partition that has nothing left in flight,
        newest first to the queue's front, so they go out again in their original order."""
        for tp in list(self._muted):
            if self._partition_in_flight.get(tp):
                continue
            waiting = sorted(self._muted.pop(tp), key=lambda ob: (ob[0], ob[1].base_sequence))
            for _, b in reversed(waiting):
                self.acc.reenqueue(b)
