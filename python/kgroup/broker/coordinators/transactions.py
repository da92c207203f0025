"""TxnHost: Kafka's transactions on this broker (KIP-98, transaction protocol v1, with
KIP-890 part 1's check that a partition is in its transaction before the first write).

The transaction coordinator is Rust (:class:`kgroup.txn.Coordinator`): a pure state machine
that reads no clock and does no I/O, run by a :class:`CoordinatorRuntime` like the group
coordinator, over ``__transaction_state`` (``transaction.state.log.num.partitions``
partitions, compacted, created on the first FindCoordinator for a transactional id, as Kafka
creates it). ``TxnHost``, one per broker, adds what is the transactions' own:

- Requests. InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
  DescribeTransactions and ListTransactions go to the coordinator as their frames, which Rust
  decodes into their typed messages; the answer is a whole response frame, now or once the
  coordinator's records are durable. An InitProducerId without a transactional id is an
  idempotent producer's: a new producer id at epoch 0, as Kafka's coordinator answers it.
- Markers. Once a transaction's PrepareCommit or PrepareAbort is durable (EndTxn is answered
  then, as Kafka answers it), the coordinator asks for its markers (``WriteMarkers``): one
  control batch per partition of the transaction, appended here in the broker's process where
  Kafka sends WriteTxnMarkers to each partition's leader. A marker on ``__consumer_offsets``
  also tells the group coordinator, which makes the transaction's offsets visible (commit) or
  drops them (abort). A partition whose topic was deleted is dropped from the transaction, as
  Kafka drops it; one that cannot take the marker now (its log failed, its offsets partition
  loading) is tried again every ``MARKER_RETRY_MS``. Once every marker is written (durable as
  any append: fsynced first when its log reached ``flush.messages``) the coordinator hears of
  it and writes CompleteCommit or CompleteAbort.
- Verification. A produce of a transactional batch to a partition where its producer has no
  open transaction asks the coordinator whether the partition was added to the transaction
  (``verify``): Kafka's AddPartitionsToTxn with ``verify_only``, here a call in the same event
  loop turn as the append, so no marker can slip between the answer and the write (Kafka needs
  its verification guard for that).
- Topics. The coordinator knows the topics and their partition counts, for
  AddPartitionsToTxn's UNKNOWN_TOPIC_OR_PARTITION.

Not thread-safe: the broker's event loop owns it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from kgroup import errors, protocol
from kgroup.broker.coordinators.runtime import CoordinatorRuntime, Effect, Host, InternalTopic
from kgroup.broker.topics import LEADER_EPOCH, OFFSETS_TOPIC, Partition, Topic, now_ms
from kgroup.txn import CONFIG_KEYS, Coordinator

__all__ = ["MARKER_RETRY_MS", "TRANSACTION_STATE_TOPIC", "TxnHost"]

log = logging.getLogger("kgroup.broker")

#: TRANSACTION_STATE_TOPIC holds the transaction coordinator's records.
TRANSACTION_STATE_TOPIC = "__transaction_state"
#: MARKER_RETRY_MS is how long a marker that could not be written waits before it is tried
#: again (Kafka's marker sender retries on its next round).
MARKER_RETRY_MS = 100

# Marker errors after which Kafka's marker sender gives the transaction up: it stays prepared
# until the coordinator loads again (TransactionMarkerRequestCompletionHandler).
_GIVE_UP = (errors.InvalidProducerEpoch, errors.TransactionCoordinatorFenced)


class TxnHost:
    """TxnHost runs the broker's transaction coordinator over a :class:`CoordinatorRuntime`.
    See the module's docstring."""

    def __init__(self, state: Any) -> None:
        self.state = state
        config = state.config
        #: coordinator is the Rust state machine, configured by the broker's ``transaction*``
        #: settings and ``offsets.topic.num.partitions`` (Kafka's names).
        self.coordinator = Coordinator({k: config.get(k) for k in CONFIG_KEYS})
        self.num_partitions = int(config.get("transaction.state.log.num.partitions"))
        #: verification: whether produces check their partition is in the transaction
        #: (``transaction.partition.verification.enable``).
        self.verification = bool(config.get("transaction.partition.verification.enable"))
        host: Host = state
        self.runtime = CoordinatorRuntime(
            host,
            self.coordinator,
            InternalTopic(
                name=TRANSACTION_STATE_TOPIC,
                partitions=self.num_partitions,
                # Kafka's TransactionStateManager.transactionTopicConfigs: compacted,
                # uncompressed, its own segment size.
                configs={
                    "cleanup.policy": ["compact"],
                    "compression.type": "uncompressed",
                    "segment.bytes": int(config.get("transaction.state.log.segment.bytes")),
                    "unclean.leader.election.enable": False,
                },
                load_buffer=int(config.get("transaction.state.log.load.buffer.size")),
                unit="transaction",
                contents="transaction metadata",
            ),
            other=self._effect,
        )
        state.topics.listeners.append(self._topic_changed)
        self._retries: set[asyncio.TimerHandle] = set()

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Take the partitions of ``__transaction_state`` (after the topics are loaded, on the
        event loop): each is loaded in the background; prepared transactions then finish."""
        self._set_topics()
        self.runtime.start()

    def stop(self) -> None:
        """Give every partition up: waiting requests are answered NOT_COORDINATOR."""
        for handle in self._retries:
            handle.cancel()
        self._retries.clear()
        self.runtime.stop()

    # -- topics --------------------------------------------------------------------------

    def coordinator_error(self, transactional_id: str) -> errors.KafkaError | None:
        """Why this broker cannot coordinate ``transactional_id`` (FindCoordinator), or None:
        it can. Creates ``__transaction_state`` when it does not exist."""
        topic = self.runtime.internal_topic()
        if self.coordinator.partition_for(transactional_id) >= len(topic.partitions):
            return errors.CoordinatorNotAvailable()
        return None

    def _set_topics(self) -> None:
        self.coordinator.set_topics(
            {t.name: len(t.partitions) for t in self.state.topics.by_name.values()}
        )

    def _topic_changed(self, topic: Topic, change: str) -> None:
        self._set_topics()

    # -- requests ------------------------------------------------------------------------

    def handle(self, request: protocol.Request) -> bytes | asyncio.Future[bytes]:
        """Serve one transaction request (already decoded by the server): its response frame,
        or a future of it. The coordinator reads the request's frame, encoded again: these
        requests are a few per transaction."""
        frame = protocol.encode_request(
            request.api_key,
            request.api_version,
            request.correlation_id,
            request.client_id,
            request.body,
            tagged_fields=request.tagged_fields,
        )[4:]
        runtime = self.runtime
        token = runtime.new_token()
        effects = self.coordinator.handle_frame(
            now_ms(), token, frame, self.state.producer_ids.next
        )
        return runtime.answer(token, effects)

    def verify(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partition: Partition
    ) -> errors.KafkaError | None:
        """Whether a transactional batch of (``producer_id``, ``producer_epoch``) may open the
        transaction on ``partition``: None when the coordinator has the partition in the
        producer's ongoing transaction, else the error Kafka's produce answers."""
        if not self.verification:
            return None
        code = self.coordinator.verify(
            transactional_id, producer_id, producer_epoch, partition.topic.name, partition.index
        )
        cls = errors.error_for_code(code)
        return None if cls is None else cls()

    @property
    def waiting(self) -> int:
        """Requests handed to the coordinator and not answered yet."""
        return self.runtime.waiting

    # -- markers -------------------------------------------------------------------------

    def _effect(self, effect: Any) -> Sequence[Effect]:
        """Carry out an effect the runtime does not know: the coordinator's WriteMarkers."""
        return self._write_markers(effect, list(effect.partitions))

    def _write_markers(self, e: Any, partitions: list[tuple[str, int]]) -> Sequence[Effect]:
        """Append the markers of transaction ``e`` to ``partitions``; once all are written,
        the coordinator's effects of hearing so (or none yet: a retry or a flush pending)."""
        now = now_ms()
        state = self.state
        retry: list[tuple[str, int]] = []
        flush: list[Partition] = []
        for name, index in partitions:
            try:
                partition = self.append_marker(
                    name, index, e.producer_id, e.producer_epoch, e.commit, e.coordinator_epoch, now
                )
            except errors.UnknownTopicOrPartition:
                # Deleted meanwhile: Kafka drops the partition from the transaction.
                continue
            except _GIVE_UP as err:
                log.warning(
                    "Stopped writing the %s markers of transactional id %s to %s-%d: %s; it "
                    "completes when its coordinator loads again",
                    "commit" if e.commit else "abort",
                    e.transactional_id,
                    name,
                    index,
                    err,
                )
                return []
            except errors.KafkaError as err:
                if not isinstance(err, (errors.KafkaStorageError, errors.NotLeaderOrFollower)):
                    log.error(
                        "Could not write a %s marker of transactional id %s to %s-%d: %s",
                        "commit" if e.commit else "abort",
                        e.transactional_id,
                        name,
                        index,
                        err,
                    )
                retry.append((name, index))
                continue
            lg = partition.log
            if lg.unflushed_messages >= lg.flush_messages:
                flush.append(partition)
        if retry:
            self._retry(e, retry)
            # The partitions written so far need no second marker; the rest follow.
            return []
        if flush:
            state.flusher.when_durable(flush, lambda error: self._markers_durable(e, error))
            return []
        return self.coordinator.markers_written(
            now, e.transactional_id, e.producer_id, e.producer_epoch
        )

    def append_marker(
        self,
        topic: str,
        index: int,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        now: int,
    ) -> Partition:
        """Append one marker to partition ``index`` of ``topic`` (Kafka's WriteTxnMarkers for
        one partition); the partition. A marker on ``__consumer_offsets`` ends the
        transaction's offsets in the group coordinator too. Raises the error the partition
        answers: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER while the offsets
        partition loads, INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED, a storage
        error."""
        state = self.state
        t = state.topics.by_name.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            raise errors.UnknownTopicOrPartition()
        partition = t.partitions[index]
        offsets = topic == OFFSETS_TOPIC
        groups = state.groups
        if offsets and (index in groups.runtime.loading or index not in groups.runtime.owned):
            # Kafka's group coordinator answers NOT_COORDINATOR or a load in progress, which
            # WriteTxnMarkers turns into NOT_LEADER_OR_FOLLOWER: the sender tries again.
            raise errors.NotLeaderOrFollower()
        try:
            partition.log.append_marker(
                producer_id, producer_epoch, commit, coordinator_epoch, now, LEADER_EPOCH
            )
        except errors.KafkaStorageError as err:
            state.topics.storage_failed(partition, "appending a marker to", err)
            raise
        state.topics.storage_ok(partition)
        partition.wake()
        if offsets:
            groups.runtime.apply(
                groups.coordinator.end_transaction(now, index, producer_id, commit)
            )
        return partition

    def _retry(self, e: Any, partitions: list[tuple[str, int]]) -> None:
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle | None = None

        def again() -> None:
            if handle is not None:
                self._retries.discard(handle)
            self.runtime.apply(self._write_markers(e, partitions))

        handle = loop.call_later(MARKER_RETRY_MS / 1000, again)
        self._retries.add(handle)

    def _markers_durable(self, e: Any, error: BaseException | None) -> None:
        if error is not None:
            # The flusher told the log dirs; the markers are written again once the log is
            # back (a restart recovers it), as Kafka resends them after a failed append.
            self._retry(e, list(e.partitions))
            return
        self.runtime.apply(
            self.coordinator.markers_written(
                now_ms(), e.transactional_id, e.producer_id, e.producer_epoch
            )
        )
