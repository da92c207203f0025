"""transactions: a transactional producer's side of Kafka's transaction protocol (TV1).

:class:`TransactionManager` is Java's ``TransactionManager`` (clients 4.1) with librdkafka's
API rules, for :class:`~kgroup.client.producer.Producer` with ``transactional.id``. It runs on
the producer's event loop; the producer's application-facing calls submit its coroutines and
wait for them, so that a call that times out goes on in the background and the same call made
again resumes it (confluent-kafka's semantics).

The protocol, as a client of a 4.x broker without transaction version 2 speaks it:

- ``init_transactions``: FindCoordinator (key_type 1) for the transactional id, then
  InitProducerId with it and ``transaction.timeout.ms``; the coordinator bumps the epoch (and
  aborts or completes what the previous producer with this id left). Every batch carries the
  producer id and epoch, per-partition sequences, and the transactional attribute;
- before a transaction's first batch to a partition is sent, AddPartitionsToTxn (v0-3) adds it,
  with every other partition waiting for it at the time in the same request; the sender drains
  a partition only once it is added;
- ``send_offsets_to_transaction``: AddOffsetsToTxn (the group's ``__consumer_offsets``
  partition joins the transaction), then TxnOffsetCommit to the group's coordinator with the
  member id, generation and instance id of the consumer's ConsumerGroupMetadata (v3+);
- ``commit_transaction`` flushes, then EndTxn(commit); ``abort_transaction`` purges what is not
  sent, waits for what is, then EndTxn(abort). Neither sends EndTxn when nothing was added
  (Java's and librdkafka's rule). After an abort in which a batch failed, InitProducerId with
  the current id and epoch bumps the epoch (KIP-360), so that sequences restart at 0.

Errors, by request (Java's handlers and ``rdkafka_txnmgr.c``): NOT_COORDINATOR and
COORDINATOR_NOT_AVAILABLE find the coordinator again; CONCURRENT_TRANSACTIONS and
COORDINATOR_LOAD_IN_PROGRESS are retried after a backoff; fencing (PRODUCER_FENCED,
INVALID_PRODUCER_EPOCH, as librdkafka normalises them to ``_FENCED``), authorization of the
transactional id, INVALID_TXN_STATE and INVALID_PRODUCER_ID_MAPPING are fatal (the error has
``fatal`` set; the producer can only be closed); the rest are abortable (``txn_requires_abort``:
only ``abort_transaction`` is allowed until it succeeds).
"""

from __future__ import annotations

import asyncio
import enum
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Protocol

from kgroup.client.cluster import Cluster
from kgroup.client.runtime import Runtime
from kgroup.client.types import ConsumerGroupMetadata, TopicPartition
from kgroup.errors import (
    ClusterAuthorizationFailed,
    ConcurrentTransactions,
    CoordinatorLoadInProgress,
    CoordinatorNotAvailable,
    InvalidProducerEpoch,
    InvalidProducerIdMapping,
    InvalidTransactionTimeout,
    InvalidTxnState,
    KafkaError,
    NetworkException,
    NotCoordinator,
    OperationNotAttempted,
    OutOfOrderSequenceNumber,
    ProducerFenced,
    RequestTimedOut,
    TransactionAbortable,
    TransactionalIdAuthorizationFailed,
    UnknownProducerId,
    UnknownTopicOrPartition,
    UnsupportedForMessageFormat,
    UnsupportedVersion,
    error_for_code,
)
from kgroup.protocol import ApiKey


class _Sender(Protocol):
    """What the manager uses of the producer's sender (kgroup.client.producer._Sender)."""

    cluster: Cluster
    acc: Any
    backoff: float
    runtime: Runtime
    _producer_id: tuple[int, int] | None

    def wake_threadsafe(self) -> None: ...


__all__ = ["TransactionManager", "TxnState", "abortable_error", "fatal_error"]

#: AddPartitionsToTxn v4+ is broker to coordinator; a client sends v0-3.
ADD_PARTITIONS_VERSION_MAX = 3

_REFIND = {NotCoordinator.code, CoordinatorNotAvailable.code}
_BACKOFF = {ConcurrentTransactions.code, CoordinatorLoadInProgress.code}
#: fencing: another producer with the transactional id has a newer epoch
_FENCED = {ProducerFenced.code, InvalidProducerEpoch.code}
#: fatal for every transactional request (Java's and librdkafka's fatal columns)
_FATAL = _FENCED | {
    TransactionalIdAuthorizationFailed.code,
    ClusterAuthorizationFailed.code,
    InvalidTxnState.code,
    InvalidProducerIdMapping.code,
    InvalidTransactionTimeout.code,
    UnsupportedVersion.code,
    UnsupportedForMessageFormat.code,
}
#: a failed batch whose sequence the broker never took: the epoch is bumped after the abort
_SEQUENCE_LOST = {OutOfOrderSequenceNumber.code, UnknownProducerId.code}


class TxnState(enum.Enum):
    """Java's ``TransactionManager.State`` (without 2PC's PREPARED_TRANSACTION)."""

    UNINITIALIZED = "UNINITIALIZED"
    INITIALIZING = "INITIALIZING"
    READY = "READY"
    IN_TRANSACTION = "IN_TRANSACTION"
    COMMITTING_TRANSACTION = "COMMITTING_TRANSACTION"
    ABORTING_TRANSACTION = "ABORTING_TRANSACTION"
    ABORTABLE_ERROR = "ABORTABLE_ERROR"
    FATAL_ERROR = "FATAL_ERROR"


def fatal_error(code: int, what: str) -> KafkaError:
    """The error of ``code`` marked fatal; fencing codes become PRODUCER_FENCED."""
    cls = error_for_code(code) or KafkaError
    err: KafkaError
    if code in _FENCED:
        err = ProducerFenced(
            f"{what}: {cls.name}: fenced by a newer producer with the same transactional.id"
        )
    else:
        err = cls(f"{what}: {cls.name}")
    err.fatal = True
    return err


def abortable_error(code: int, what: str) -> KafkaError:
    """The error of ``code`` marked as requiring abort_transaction()."""
    cls = error_for_code(code) or KafkaError
    err = cls(f"{what}: {cls.name}")
    err.txn_requires_abort = True
    return err


def _classify(code: int, what: str) -> KafkaError:
    return fatal_error(code, what) if code in _FATAL else abortable_error(code, what)


class TransactionManager:
    """TransactionManager is one transactional producer's transaction state (see the module).
    Use on the producer's event loop, except :attr:`state` and :attr:`error`, which the
    application's thread reads."""

    def __init__(self, sender: _Sender, transactional_id: str, timeout_ms: int) -> None:
        self.sender = sender
        self.cluster = sender.cluster
        self.acc = sender.acc
        self.transactional_id = transactional_id
        self.timeout_ms = timeout_ms
        self.backoff = sender.backoff
        self.state = TxnState.UNINITIALIZED
        #: the abortable or fatal error the producer is in (ABORTABLE_ERROR / FATAL_ERROR)
        self.error: KafkaError | None = None
        self.producer_id = -1
        self.epoch = -1
        #: partitions the coordinator has in the current transaction
        self.added: set[tuple[str, int]] = set()
        #: partitions with records waiting for AddPartitionsToTxn
        self.pending: set[tuple[str, int]] = set()
        self._adding: asyncio.Task[None] | None = None
        #: AddOffsetsToTxn succeeded in this transaction (it has something to end)
        self.offsets_added = False
        #: a batch failed in this transaction, so its sequences are lost: bump after abort
        self.bump_epoch = False

    # -- state ------------------------------------------------------------------------------------

    def transition(self, state: TxnState) -> None:
        if self.state is not TxnState.FATAL_ERROR:
            self.state = state

    def fail(self, err: KafkaError) -> None:
        """Enter FATAL_ERROR (``err.fatal``) or ABORTABLE_ERROR with ``err``. Fatal wins; an
        abortable error while aborting is left to the abort."""
        if self.state is TxnState.FATAL_ERROR:
            return
        if err.fatal:
            self.state, self.error = TxnState.FATAL_ERROR, err
            return
        if self.state in (TxnState.IN_TRANSACTION, TxnState.COMMITTING_TRANSACTION):
            self.state, self.error = TxnState.ABORTABLE_ERROR, err

    @property
    def failed(self) -> bool:
        return self.state in (TxnState.ABORTABLE_ERROR, TxnState.FATAL_ERROR)

    def batch_failed(self, code: int) -> None:
        """A batch of the transaction failed for good with ``code`` (the sender's call)."""
        self.bump_epoch = True
        what = f"a batch of transactional.id {self.transactional_id!r} failed"
        if code in _FATAL and code not in (InvalidTxnState.code,):
            self.fail(fatal_error(code, what))
        else:
            # Java 4.1 wraps INVALID_TXN_STATE from Produce in TransactionAbortableException
            self.fail(abortable_error(code, what))

    def _reset_transaction(self) -> None:
        self.added.clear()
        self.pending.clear()
        self.offsets_added = False

    # -- coordinator requests ---------------------------------------------------------------------

    async def _to_coordinator(
        self,
        api_key: int,
        body: dict[str, Any],
        *,
        highest: int | None = None,
        key: str | None = None,
        key_type: int = 1,
        code_of: Any = None,
    ) -> Any:
        """Send ``body`` to the coordinator of the transactional id (or of group ``key``, key
        type 0) until its error code is neither a coordinator move nor one to back off from;
        returns the answer (its other error codes are the caller's)."""
        key = self.transactional_id if key is None else key
        attempt = 0
        while True:
            try:
                conn = await self.cluster.coordinator(key, key_type)
                v = conn.version(api_key, highest)
                resp = await conn.request(api_key, body, version=v)
            except (NetworkException, RequestTimedOut, CoordinatorNotAvailable, NotCoordinator):
                self.cluster.coordinator_dead(key, key_type)
                await asyncio.sleep(self.backoff)
                continue
            except KafkaError as e:
                if not e.retriable:
                    # the coordinator lookup refused (an authorization error)
                    err = _classify(e.code, f"FindCoordinator({key!r})")
                    self.fail(err)
                    raise err from e
                await asyncio.sleep(self.backoff)
                continue
            code = code_of(resp) if code_of is not None else resp["error_code"]
            if code in _REFIND:
                self.cluster.coordinator_dead(key, key_type)
                await asyncio.sleep(self.backoff)
                continue
            if code in _BACKOFF:
                # Java retries a CONCURRENT_TRANSACTIONS quickly (the previous transaction's
                # markers are being written), then with retry.backoff.ms
                attempt += 1
                await asyncio.sleep(0.02 if attempt < 5 else self.backoff)
                continue
            return resp

    async def init(self) -> None:
        """InitProducerId for the transactional id (a new epoch), or with the current id and
        epoch to bump it after an abort (KIP-360)."""
        body: dict[str, Any] = {
            "transactional_id": self.transactional_id,
            "transaction_timeout_ms": self.timeout_ms,
            "producer_id": self.producer_id,
            "producer_epoch": self.epoch,
        }
        resp = await self._to_coordinator(ApiKey.INIT_PRODUCER_ID, body)
        code = resp["error_code"]
        if code:
            err = fatal_error(code, f"InitProducerId({self.transactional_id!r})")
            self.fail(err)
            raise err
        self.producer_id, self.epoch = resp["producer_id"], resp["producer_epoch"]
        self.acc.set_producer_id(self.producer_id, self.epoch)
        self.acc.set_transactional(True)
        self.sender._producer_id = (self.producer_id, self.epoch)
        self.bump_epoch = False

    def want(self, tp: tuple[str, int]) -> None:
        """The sender has a batch for ``tp``, which is not in the transaction yet."""
        if tp in self.added or tp in self.pending or self.failed:
            return
        self.pending.add(tp)
        if self._adding is None or self._adding.done():
            self._adding = self.sender.runtime.spawn(self._add_partitions())

    async def _add_partitions(self) -> None:
        """AddPartitionsToTxn for every pending partition, until each is added or the
        transaction failed; wakes the sender."""
        try:
            while self.pending and not self.failed:
                todo = sorted(self.pending)
                by_topic: dict[str, list[int]] = defaultdict(list)
                for t, p in todo:
                    by_topic[t].append(p)
                body = {
                    "v3_and_below_transactional_id": self.transactional_id,
                    "v3_and_below_producer_id": self.producer_id,
                    "v3_and_below_producer_epoch": self.epoch,
                    "v3_and_below_topics": [
                        {"name": t, "partitions": ps} for t, ps in by_topic.items()
                    ],
                }
                resp = await self._to_coordinator(
                    ApiKey.ADD_PARTITIONS_TO_TXN,
                    body,
                    highest=ADD_PARTITIONS_VERSION_MAX,
                    code_of=_add_partitions_code,
                )
                retry = False
                for t in resp["results_by_topic_v3_and_below"]:
                    for r in t["results_by_partition"]:
                        tp, code = (t["name"], r["partition_index"]), r["partition_error_code"]
                        if code == 0:
                            self.pending.discard(tp)
                            self.added.add(tp)
                        elif (
                            code in _BACKOFF
                            or code in _REFIND
                            or code
                            in (
                                UnknownTopicOrPartition.code,
                                OperationNotAttempted.code,
                            )
                        ):
                            retry = True
                        else:
                            self.fail(_classify(code, f"AddPartitionsToTxn({t['name']}-{tp[1]})"))
                if retry and not self.failed:
                    await asyncio.sleep(0.02)
        finally:
            self.sender.wake_threadsafe()

    async def send_offsets(
        self, positions: Iterable[TopicPartition], group: ConsumerGroupMetadata
    ) -> None:
        """AddOffsetsToTxn, then TxnOffsetCommit of ``positions`` to ``group``'s coordinator."""
        offsets = [tp for tp in positions if tp.offset >= 0]
        if not offsets:
            return
        resp = await self._to_coordinator(
            ApiKey.ADD_OFFSETS_TO_TXN,
            {
                "transactional_id": self.transactional_id,
                "producer_id": self.producer_id,
                "producer_epoch": self.epoch,
                "group_id": group.group_id,
            },
        )
        code = resp["error_code"]
        if code:
            err = _classify(code, f"AddOffsetsToTxn({group.group_id!r})")
            self.fail(err)
            raise err
        self.offsets_added = True
        topics: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for tp in offsets:
            topics[tp.topic].append(
                {
                    "partition_index": tp.partition,
                    "committed_offset": tp.offset,
                    "committed_leader_epoch": -1 if tp.leader_epoch is None else tp.leader_epoch,
                    "committed_metadata": tp.metadata,
                }
            )
        body = {
            "transactional_id": self.transactional_id,
            "group_id": group.group_id,
            "producer_id": self.producer_id,
            "producer_epoch": self.epoch,
            "generation_id": group.generation_id,
            "member_id": group.member_id,
            "group_instance_id": group.group_instance_id,
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
        }
        resp = await self._to_coordinator(
            ApiKey.TXN_OFFSET_COMMIT,
            body,
            key=group.group_id,
            key_type=0,
            code_of=_txn_offset_commit_code,
        )
        for t in resp["topics"]:
            for p in t["partitions"]:
                if p["error_code"]:
                    err = _classify(
                        p["error_code"], f"TxnOffsetCommit({t['name']}-{p['partition_index']})"
                    )
                    self.fail(err)
                    raise err

    async def end(self, commit: bool) -> None:
        """EndTxn (when the transaction has anything in it); READY after. An abort in which a
        batch failed bumps the epoch after."""
        if self.added or self.offsets_added:
            resp = await self._to_coordinator(
                ApiKey.END_TXN,
                {
                    "transactional_id": self.transactional_id,
                    "producer_id": self.producer_id,
                    "producer_epoch": self.epoch,
                    "committed": commit,
                },
            )
            code = resp["error_code"]
            if code:
                err = _end_txn_error(code, commit)
                if code == UnknownProducerId.code:
                    # The coordinator lost the producer: a new epoch after the abort (KIP-360).
                    self.bump_epoch = True
                self.fail(err)
                raise err
        if not commit and self.bump_epoch:
            await self.init()
        self._reset_transaction()
        self.error = None
        self.transition(TxnState.READY)


def _end_txn_error(code: int, commit: bool) -> KafkaError:
    """An EndTxn error as Java 4.1's EndTxnHandler takes it (the retriable ones are retried
    before): UNKNOWN_PRODUCER_ID abortable (with an epoch bump), TRANSACTION_ABORTABLE abortable
    for a commit but fatal for an abort (aborting again would loop), the rest fatal."""
    what = f"EndTxn({'commit' if commit else 'abort'})"
    if code == UnknownProducerId.code or (code == TransactionAbortable.code and commit):
        return abortable_error(code, what)
    return fatal_error(code, what)


def _add_partitions_code(resp: Any) -> int:
    """A coordinator error of an AddPartitionsToTxn answer (v0-3 have it per partition only)."""
    codes = {
        r["partition_error_code"]
        for t in resp["results_by_topic_v3_and_below"]
        for r in t["results_by_partition"]
    }
    return next((c for c in (NotCoordinator.code, CoordinatorNotAvailable.code) if c in codes), 0)


def _txn_offset_commit_code(resp: Any) -> int:
    """A TxnOffsetCommit answer's error to retry by (it has them per partition): a coordinator
    move or REQUEST_TIMED_OUT finds the group's coordinator again, the rest backs off."""
    codes = {p["error_code"] for t in resp["topics"] for p in t["partitions"]}
    if codes & _REFIND or RequestTimedOut.code in codes:
        return NotCoordinator.code
    if codes & (_BACKOFF | {UnknownTopicOrPartition.code}):
        return ConcurrentTransactions.code
    return 0
