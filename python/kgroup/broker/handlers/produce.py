"""Produce: v0-11. Append record batches to partitions. v1 adds throttle_time_ms; v2 the log
append time; v3 the transactional id and record batches v2 (exactly one batch per partition);
v5 the log start offset; v7 zstd; v8 per-record errors and an error message; v9 is flexible;
v10 the current leader on NOT_LEADER_OR_FOLLOWER (never here: one node leads everything).

acks=1 and acks=-1 (all) answer once the batch is written, as Kafka's leader does when it is
the only replica (once it is fsynced too if the log then holds flush.messages unflushed
messages, as Kafka's log flushes within the append; the broker's flush check handles
flush.ms). With ``kgroup.acks.all.fsync`` acks=all answers once the batch is on disk: the
produces of every connection waiting meanwhile share one fsync per log (``Flusher``), within
``timeout_ms`` (else REQUEST_TIMED_OUT). acks=0 is never answered, and a connection whose
acks=0 produce failed is closed, as Kafka closes it, so that the client refreshes metadata.
Internal topics (``__consumer_offsets``) take no produce: INVALID_TOPIC_EXCEPTION, as in Kafka.
A batch with records that fail validation (a keyless record on a compacted topic, a timestamp
out of range) is refused whole, each such record named by its index in ``record_errors`` and
the whole summed up in ``error_message`` (KIP-467; librdkafka then fails the batch's other
records with its own _INVALID_DIFFERENT_RECORD); as in Kafka, no other failure has a message.
Transactions (v3+): a request with transactional batches must name its transactional id
(else every partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka answers a
producer not authorised for it), and all its transactional batches come from one producer
(INVALID_PRODUCER_ID_MAPPING). The first transactional batch of a producer on a partition is
checked with the transaction coordinator (KIP-890 part 1, ``TxnHost.verify``): a partition not
added to the transaction answers TRANSACTION_ABORTABLE (v11) or INVALID_TXN_STATE (older), a
fenced producer INVALID_PRODUCER_EPOCH, and a coordinator that cannot answer now
NOT_ENOUGH_REPLICAS, which clients retry. The log then opens the transaction there; its
records stay above the last stable offset until the marker.
The batches are checked, given offsets and written by the Rust log (``kgroup.log``). Legacy
message sets (magic 0 and 1, which Produce v0-2 carry) are converted to one batch of magic 2
first, as Kafka 3's broker converts them.

With an authorizer (Kafka's KafkaApis.handleProduceRequest): transactional batches need WRITE
on the transactional id (else every partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
before anything else), and each topic WRITE (else TOPIC_AUTHORIZATION_FAILED, before the topic
is looked up).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import AclOperation, ResourceType
from kgroup.broker.topics import INTERNAL_TOPICS, LEADER_EPOCH, Partition, now_ms
from kgroup.protocol import ApiKey
from kgroup.protocol.records import decode_batches, encode_batch, read_batch_headers

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.PRODUCE
VERSIONS = (0, 11)

ZSTD = "zstd"
# Where a batch (or legacy message set entry) says its magic.
MAGIC_OFFSET = 16
# A batch's base offset and size, before the rest of its header.
LOG_OVERHEAD = 12
# Where a v2 batch's header keeps its attributes' low byte and its producer id, and the
# attributes' transactional flag.
_ATTRIBUTES_LOW = 22
_PRODUCER_ID = 43
_PRODUCER_ID_END = 51
_TRANSACTIONAL = 0x10


def _up_convert(records: bytes) -> bytes:
    """A legacy message set (magic 0 or 1, Produce v0-2) as one batch of magic 2, the only
    format the log stores, as Kafka's LogValidator converts it: same records and codec, magic 0
    messages without a timestamp (-1). Corrupt input raises CorruptMessage."""
    try:
        batches = decode_batches(records)
    except errors.CorruptRecord as e:
        raise errors.CorruptMessage(str(e)) from None
    if not batches:
        raise errors.CorruptMessage("The produced message set holds no whole message")
    tuples: list[tuple[int, int, bytes | None, bytes | None]] = []
    for b in batches:
        if b.magic >= 2:
            raise errors.InvalidRecord("A produced message set mixes magic 2 with older messages")
        tuples.extend((len(tuples), r.timestamp, r.key, r.value) for r in b.records)
    codec = next((b.compression for b in batches if b.compression != "none"), "none")
    return encode_batch(tuples, compression=codec)


def _check_records(version: int, records: bytes | None) -> None:
    """Kafka's ProduceRequest.validateRecords: from v3, exactly one batch, of magic 2, and no
    zstd before v7."""
    if version < 3:
        return
    data = records or b""
    # Kafka's batch iterator reads the size before the magic: one under a legacy message's
    # overhead (14) is corrupt, whatever follows.
    if len(data) >= LOG_OVERHEAD and int.from_bytes(data[8:12], "big", signed=True) < 14:
        raise errors.CorruptMessage(
            f"Record size {int.from_bytes(data[8:12], 'big', signed=True)} is less than the "
            "minimum record overhead (14)"
        )
    if len(data) > MAGIC_OFFSET and data[MAGIC_OFFSET] != 2:
        raise errors.InvalidRecord(
            f"Produce requests with version {version} are only allowed to contain record "
            "batches with magic version 2"
        )
    try:
        headers = read_batch_headers(data, verify_crc=False)
    except errors.CorruptRecord as e:
        raise errors.CorruptMessage(str(e)) from None
    if not headers:
        raise errors.InvalidRecord(
            f"Produce requests with version {version} must have at least one record batch per "
            "partition"
        )
    if version < 7 and headers[0].compression == ZSTD:
        raise errors.UnsupportedCompressionType(
            f"Produce requests with version {version} are not allowed to use ZStandard compression"
        )
    if len(headers) > 1 or headers[0].size != len(data):
        raise errors.InvalidRecord(
            f"Produce requests with version {version} are only allowed to contain exactly one "
            "record batch per partition"
        )


# What the coordinator's verification answers become on a produce (Kafka's
# AddPartitionsToTxnManager and ReplicaManager): its own unavailability is the replicas'.
_RETRY_LATER = frozenset(
    {
        errors.NotCoordinator.code,
        errors.CoordinatorNotAvailable.code,
        errors.CoordinatorLoadInProgress.code,
        errors.ConcurrentTransactions.code,
    }
)


def _transactional_producer(records: bytes | None) -> int | None:
    """The producer id of a v2 batch with the transactional flag, read from its header's
    bytes (the attributes' low byte, the producer id at offset 43); None for any other."""
    if (
        records is None
        or len(records) < _PRODUCER_ID_END
        or records[MAGIC_OFFSET] != 2
        or not records[_ATTRIBUTES_LOW] & _TRANSACTIONAL
    ):
        return None
    return int.from_bytes(records[_PRODUCER_ID:_PRODUCER_ID_END], "big", signed=True)


def _verify(ctx: RequestContext, version: int, records: bytes | None, partition: Partition) -> None:
    """Check a transactional batch against its transaction before the log writes it: raises
    the error the partition answers (see the module's docstring)."""
    if _transactional_producer(records) is None:
        return
    assert records is not None
    h = read_batch_headers(records, verify_crc=False)[0]  # whole: _check_records read it
    if h.producer_id < 0:
        return
    txn_id = ctx.request.body.transactional_id
    if txn_id is None:
        raise errors.TransactionalIdAuthorizationFailed()
    if partition.log.ongoing_transaction(h.producer_id) is not None:
        return  # the producer's transaction is already open here (the log checks its epoch)
    error = ctx.state.transactions.verify(txn_id, h.producer_id, h.producer_epoch, partition)
    if error is None:
        return
    code = error.code
    if code in _RETRY_LATER:
        raise errors.NotEnoughReplicas()
    if code == errors.ProducerFenced.code:
        raise errors.InvalidProducerEpoch()
    if code == errors.TransactionAbortable.code and version < 11:
        raise errors.InvalidTxnState("Record was not part of an ongoing transaction")
    raise error


def _name(t: Any) -> str:
    return str(t.name)


def handle(ctx: RequestContext) -> Any:
    state, request = ctx.state, ctx.request
    body = request.body
    version = request.api_version
    acks = body.acks
    now = now_ms()
    failed = False
    whole: errors.KafkaError | None = None
    # refused: the request's answer on every partition, before anything else is checked (an
    # authorizer's refusal, as Kafka's KafkaApis.handleProduceRequest answers it).
    refused: errors.KafkaError | None = None
    # Each partition's records, copied out of the request once.
    datas = [[pd.records for pd in t.partition_data] for t in body.topic_data]
    if version >= 3:
        producers = {
            pid for ds in datas for d in ds if (pid := _transactional_producer(d)) is not None
        }
        if producers and body.transactional_id is None:
            whole = errors.TransactionalIdAuthorizationFailed()
        elif producers and not ctx.authorize(
            AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id
        ):
            refused = errors.TransactionalIdAuthorizationFailed()
        elif len(producers) > 1:
            whole = errors.InvalidProducerIdMapping(
                "Transactional records from more than one producer id in one request"
            )
    # WRITE on each topic, before the topic is looked up (KafkaApis.handleProduceRequest).
    denied = (
        None
        if state.authorizer is None
        else {t.name for t in body.topic_data}
        - ctx.authorized(AclOperation.WRITE, ResourceType.TOPIC, body.topic_data, _name)
    )
    appended: list[Partition] = []
    responses = []
    for t, ds in zip(body.topic_data, datas, strict=True):
        topic = state.topics.by_name.get(t.name)
        results = []
        for pd, records in zip(t.partition_data, ds, strict=True):
            result: dict[str, Any] = {
                "index": pd.index,
                "error_code": 0,
                "base_offset": -1,
                "log_append_time_ms": -1,
                "log_start_offset": -1,
            }
            results.append(result)
            try:
                if refused is not None:
                    raise refused
                if denied and t.name in denied:
                    raise errors.TopicAuthorizationFailed()
                if acks not in (-1, 0, 1):
                    raise errors.InvalidRequiredAcks()
                if t.name in INTERNAL_TOPICS:
                    # Only the broker writes there (the group coordinator's records).
                    raise errors.InvalidTopicException(f"Cannot append to internal topic {t.name}")
                if topic is None or not 0 <= pd.index < len(topic.partitions):
                    raise errors.UnknownTopicOrPartition()
                if whole is not None:
                    raise whole
                _check_records(version, records)
                partition = topic.partitions[pd.index]
                if version >= 3:
                    _verify(ctx, version, records, partition)
            except errors.KafkaError as e:
                failed = True
                result["error_code"] = e.code
                # Of the request's own checks, only the batch size check and a batch outside
                # its transaction have a message.
                if isinstance(e, (errors.CorruptMessage, errors.InvalidTxnState)):
                    result["error_message"] = str(e)
                continue
            try:
                if records is not None and len(records) > MAGIC_OFFSET:
                    if records[MAGIC_OFFSET] < 2:
                        records = _up_convert(records)
                info = partition.log.append(records, now, LEADER_EPOCH)
            except errors.KafkaError as e:
                failed = True
                if isinstance(e, errors.KafkaStorageError):
                    state.topics.storage_failed(partition, "appending to", e)
                _append_failed(result, e, partition)
                continue
            state.topics.storage_ok(partition)
            result["base_offset"] = info.base_offset
            result["log_append_time_ms"] = info.log_append_time
            if info.duplicate and info.log_append_time == -1 and records:
                # Kafka answers a duplicate with the cached batch's timestamp as its append
                # time (UnifiedLog's duplicate path), whatever the timestamp type.
                result["log_append_time_ms"] = read_batch_headers(records)[0].max_timestamp
            result["log_start_offset"] = info.log_start_offset
            if not info.duplicate:
                partition.wake()
                lg = partition.log
                # An append that reaches flush.messages waits for the fsync (Kafka's log
                # flushes in the append then, before the answer); so does acks=all with
                # kgroup.acks.all.fsync.
                fsync = acks == -1 and state.acks_all_fsync
                if fsync or lg.unflushed_messages >= lg.flush_messages:
                    appended.append(partition)
        responses.append({"name": t.name, "partition_responses": results})
    response = {"responses": responses, "throttle_time_ms": 0}
    if acks == 0:
        if appended:
            state.flusher.schedule(appended)
        if failed:
            ctx.connection.close_for(
                errors.KafkaError("an acks=0 produce failed: the client must refresh metadata")
            )
        return None
    if appended:
        return _durable(ctx, appended, response, body.timeout_ms)
    return response


# The append errors that Kafka's ReplicaManager answers without the log start offset.
_WITHOUT_LOG_START = (
    errors.CorruptMessage,
    errors.MessageTooLarge,
    errors.RecordListTooLarge,
    errors.KafkaStorageError,
    errors.NotLeaderOrFollower,
    errors.UnknownTopicOrPartition,
)


def _append_failed(result: dict[str, Any], e: errors.KafkaError, partition: Partition) -> None:
    """Kafka's ReplicaManager.appendToLocalLog on a failed append: records that failed
    validation (``e.record_errors``) are named one by one with a message for the whole
    (``RecordValidationException``, KIP-467); every failure but a corrupt, too large or
    storage one carries the partition's log start offset."""
    result["error_code"] = e.code
    if not isinstance(e, _WITHOUT_LOG_START):
        result["log_start_offset"] = partition.log.log_start_offset
    if e.record_errors:
        result["record_errors"] = [
            {"batch_index": i, "batch_index_error_message": m} for i, m in e.record_errors
        ]
        result["error_message"] = str(e)


def _durable(
    ctx: RequestContext, partitions: list[Partition], response: dict, timeout_ms: int
) -> asyncio.Future[dict]:
    """The response, once the flusher has made ``partitions`` durable (or REQUEST_TIMED_OUT
    after ``timeout_ms``; 0 asks for no wait beyond the work itself: the flush). A future
    resolved by the flush's own callback, not a task: fewer event loop turns per acks=all."""
    loop = asyncio.get_running_loop()
    out: asyncio.Future[dict] = loop.create_future()
    timer: asyncio.TimerHandle | None = None

    def finish(code: int) -> None:
        if out.done():
            return
        if timer is not None:
            timer.cancel()
        if code:
            names = {(p.topic.name, p.index) for p in partitions}
            for r in response["responses"]:
                for p in r["partition_responses"]:
                    if (r["name"], p["index"]) in names and p["error_code"] == 0:
                        p["error_code"] = code
        out.set_result(response)

    def durable(error: BaseException | None) -> None:
        if error is None:
            finish(0)
        else:
            code = error.code if isinstance(error, errors.KafkaError) else 0
            finish(code or errors.KafkaStorageError.code)

    if timeout_ms > 0:
        timer = loop.call_later(timeout_ms / 1000, finish, errors.RequestTimedOut.code)
    ctx.state.flusher.when_durable(partitions, durable)
    return out
