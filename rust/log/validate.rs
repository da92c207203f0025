//! Validation of a produced record set before it is appended: Kafka's
//! `UnifiedLog.analyzeAndValidateRecords` and `LogValidator` for AppendOrigin.CLIENT (and
//! COORDINATOR, which skips the client-only checks of base offset and sequence), done before
//! the log's lock is taken. The result is one v2 batch with base offset 0, its leader
//! epoch and timestamps stamped; the log only rewrites its base offset (which the CRC does not
//! cover) when it appends it.
//!
//! The uncompressed path and the compressed path whose codec stays copy the producer's bytes
//! once and touch no record beyond reading it; the record set is rebuilt only where Kafka
//! rebuilds it: another codec (`compression.type`), inner offsets that are not 0, 1, 2..., or a
//! magic 0/1 message set (Produce v0-2), which is converted to a v2 batch.

use super::config::{LogConfig, TargetCompression};
use super::producer::AppendOrigin;
use crate::errors::{Error, ErrorCode, RecordError, Result};
use crate::protocol::records::{
    batches, set_max_timestamp, set_partition_leader_epoch, BatchFields, BatchHeader, Budget,
    Compression, ControlRecordKey, ControlRecordType, DecodeOptions, DecodedBatch, RawBatch,
    RecordBatch, RecordFields, RecordRef, TimestampType, NO_TIMESTAMP,
};

/// Prepared is a validated batch ready to append at any offset.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// bytes is one v2 batch with base offset 0.
    pub bytes: Vec<u8>,
    pub header: BatchHeader,
    /// log_append_time is the stamped time under LogAppendTime, else -1.
    pub log_append_time: i64,
    /// records is the record count.
    pub records: i64,
}

fn invalid(m: impl Into<String>) -> Error {
    Error::kafka(ErrorCode::InvalidRecord, m)
}

/// as_kafka turns a CorruptRecord into the Kafka error it stands for, so a produce fails with
/// one family of errors (`Error::Kafka`).
pub fn as_kafka(e: Error) -> Error {
    match e {
        Error::CorruptRecord(c) => Error::kafka(c.kind.error_code(), c.reason),
        Error::Malformed(m) => Error::kafka(ErrorCode::CorruptMessage, m.to_string()),
        e => e,
    }
}

/// prepare validates `records` (the record set of one partition of a Produce request, or a
/// coordinator's batch for its internal topic, as `origin` says) for a topic with `cfg`, at
/// `now_ms`, to be appended by a leader of `leader_epoch`. `topic_partition` names the log in
/// the errors of records that fail (`topic-0`). Control batches are refused from every origin:
/// markers are written by [`Log::append_marker`](super::Log::append_marker).
pub fn prepare(
    records: &[u8],
    cfg: &LogConfig,
    now_ms: i64,
    leader_epoch: i32,
    topic_partition: &str,
    origin: AppendOrigin,
) -> Result<Prepared> {
    prepare_inner(records, cfg, now_ms, leader_epoch, topic_partition, origin).map_err(as_kafka)
}

fn prepare_inner(
    records: &[u8],
    cfg: &LogConfig,
    now_ms: i64,
    leader_epoch: i32,
    topic_partition: &str,
    origin: AppendOrigin,
) -> Result<Prepared> {
    let client = origin == AppendOrigin::Client;
    // analyzeAndValidateRecords: every batch's size and CRC; a v2 batch from a client must
    // have base offset 0. A cut last batch is left out (Kafka trims it).
    let mut raw: Vec<RawBatch<'_>> = Vec::with_capacity(1);
    for b in batches(records) {
        let b = b?;
        if client && b.magic == 2 && b.base_offset() != 0 {
            return Err(invalid(format!(
                "the baseOffset of the record batch should be 0, but it is {}",
                b.base_offset()
            )));
        }
        if b.bytes.len() as u64 > cfg.max_message_bytes {
            return Err(too_large(b.bytes.len(), cfg));
        }
        if b.magic == 2 {
            BatchHeader::parse(b.bytes)?;
        }
        raw.push(b);
    }
    let Some(first) = raw.first() else {
        return Err(invalid("record batch has no batches at all"));
    };
    if raw.iter().any(|b| b.magic != first.magic) {
        return Err(invalid("batch magic is not the same as the first batch's"));
    }
    if first.magic == 2 {
        if raw.len() > 1 {
            return Err(invalid("Compressed outer record has more than one batch"));
        }
        return prepare_v2(
            first.bytes,
            cfg,
            now_ms,
            leader_epoch,
            topic_partition,
            client,
        );
    }
    prepare_legacy(&raw, cfg, now_ms, leader_epoch, topic_partition)
}

fn too_large(size: usize, cfg: &LogConfig) -> Error {
    Error::kafka(
        ErrorCode::MessageTooLarge,
        format!(
            "the record batch size is {size} bytes which exceeds the maximum configured value of {}",
            cfg.max_message_bytes
        ),
    )
}

/// check_batch is LogValidator.validateBatch for a v2 batch (`client`: from a client).
fn check_batch(h: &BatchHeader, client: bool) -> Result<()> {
    let count_from_offsets = h.last_offset_delta as i64 + 1;
    if count_from_offsets <= 0 {
        return Err(invalid(format!(
            "batch has an invalid offset range: [0, {}]",
            h.last_offset_delta
        )));
    }
    if h.records_count <= 0 {
        return Err(invalid(format!(
            "invalid reported count for record batch: {}",
            h.records_count
        )));
    }
    if count_from_offsets != h.records_count as i64 {
        return Err(invalid(format!(
            "inconsistent batch offset range [0, {}] and count of records {}",
            h.last_offset_delta, h.records_count
        )));
    }
    if h.is_control() {
        return Err(invalid(if client {
            "clients are not allowed to write control records"
        } else {
            "control records are written as transaction markers, not appended"
        }));
    }
    if client && h.producer_id >= 0 && h.base_sequence < 0 {
        return Err(invalid(format!(
            "invalid sequence number {} in record batch with producerId {}",
            h.base_sequence, h.producer_id
        )));
    }
    Ok(())
}

/// check_record is LogValidator.validateRecord's key and timestamp checks of the record at
/// `index` in its batch: at most one error per record, the key's first. Kafka checks every
/// record and fails the batch with all of their errors (`processRecordErrors`).
fn check_record(
    r: &RecordRef<'_>,
    index: usize,
    batch_type: TimestampType,
    cfg: &LogConfig,
    now_ms: i64,
    errors: &mut RecordErrors<'_>,
) {
    if cfg.cleanup_policy.compact && r.key.is_none() {
        let message = format!(
            "Compacted topic cannot accept message without key in topic partition {}",
            errors.topic_partition
        );
        errors.push(index, false, message);
        return;
    }
    if cfg.timestamp_type == TimestampType::CreateTime && r.timestamp != NO_TIMESTAMP {
        let diff = (now_ms as i128) - (r.timestamp as i128);
        if diff > cfg.timestamp_before_max_ms as i128 || -diff > cfg.timestamp_after_max_ms as i128
        {
            // The bounds as Kafka prints them: Java's long arithmetic, which wraps.
            let message = format!(
                "Timestamp {} of message with offset {} is out of range. The timestamp should be within [{}, {}]",
                r.timestamp,
                r.offset,
                now_ms.wrapping_sub(cfg.timestamp_before_max_ms),
                now_ms.wrapping_add(cfg.timestamp_after_max_ms)
            );
            errors.push(index, true, message);
        }
    } else if batch_type == TimestampType::LogAppendTime {
        let message = format!(
            "Invalid timestamp type in message DefaultRecord(offset={}, timestamp={}, key={} bytes, value={} bytes). Producer should not set timestamp type to LogAppendTime.",
            r.offset,
            r.timestamp,
            r.key.map_or(0, <[u8]>::len),
            r.value.map_or(0, <[u8]>::len)
        );
        errors.push(index, true, message);
    }
}

/// RecordErrors gathers the records of one batch that fail validation (Kafka's list of
/// `ApiRecordError`).
struct RecordErrors<'a> {
    /// topic_partition names the log in the messages, as Kafka's `TopicPartition` prints.
    topic_partition: &'a str,
    errors: Vec<RecordError>,
    /// timestamp says some record's error is INVALID_TIMESTAMP.
    timestamp: bool,
}

impl<'a> RecordErrors<'a> {
    fn new(topic_partition: &'a str) -> Self {
        RecordErrors {
            topic_partition,
            errors: Vec::new(),
            timestamp: false,
        }
    }

    fn push(&mut self, index: usize, timestamp: bool, message: String) {
        self.timestamp |= timestamp;
        self.errors.push(RecordError {
            batch_index: i32::try_from(index).unwrap_or(i32::MAX),
            message,
        });
    }

    /// into_result is Kafka's `processRecordErrors`: INVALID_TIMESTAMP if any record's error is
    /// a timestamp's, else INVALID_RECORD with the first three errors in its message; either
    /// carries every record's error.
    fn into_result(self) -> Result<()> {
        if self.errors.is_empty() {
            return Ok(());
        }
        if self.timestamp {
            return Err(Error::record_validation(
                ErrorCode::InvalidTimestamp,
                "One or more records have been rejected due to invalid timestamp",
                self.errors,
            ));
        }
        let first: Vec<String> = self
            .errors
            .iter()
            .take(3)
            .map(|e| {
                format!(
                    "RecordError(batchIndex={}, message='{}')",
                    e.batch_index, e.message
                )
            })
            .collect();
        let message = format!(
            "One or more records have been rejected due to {} record errors in total, and only showing the first three errors at most: [{}]",
            self.errors.len(),
            first.join(", ")
        );
        Err(Error::record_validation(
            ErrorCode::InvalidRecord,
            message,
            self.errors,
        ))
    }
}

fn target(cfg: &LogConfig, source: Compression) -> Compression {
    match cfg.compression {
        TargetCompression::Producer => source,
        TargetCompression::Codec(c) => c,
    }
}

fn prepare_v2(
    bytes: &[u8],
    cfg: &LogConfig,
    now_ms: i64,
    leader_epoch: i32,
    topic_partition: &str,
    client: bool,
) -> Result<Prepared> {
    let h = BatchHeader::parse(bytes)?;
    check_batch(&h, client)?;
    let source = h.compression()?;
    let opts = DecodeOptions {
        verify_crc: false,
        ..DecodeOptions::default()
    };
    let mut budget = Budget::new(opts.max_decompressed_size);
    let raw = RawBatch {
        position: 0,
        magic: 2,
        bytes,
    };
    let decoded = raw.decode(&opts, &mut budget)?;
    let mut errors = RecordErrors::new(topic_partition);
    let mut max_ts = NO_TIMESTAMP;
    let mut sequential = true;
    for (i, r) in decoded.records().enumerate() {
        check_record(&r, i, h.timestamp_type(), cfg, now_ms, &mut errors);
        max_ts = max_ts.max(r.timestamp);
        sequential &= r.offset == i as i64;
    }
    errors.into_result()?;
    let to = target(cfg, source);
    let log_append = cfg.timestamp_type == TimestampType::LogAppendTime;
    // LogValidator rebuilds when the codec changes, or (compressed) when inner offsets are not
    // 0, 1, 2...; the uncompressed path keeps the records as sent.
    if to != source || (source != Compression::None && !sequential) {
        return rebuild(&decoded, to, cfg, now_ms, leader_epoch);
    }
    let mut out = bytes.to_vec();
    set_partition_leader_epoch(&mut out, leader_epoch)?;
    if log_append {
        set_max_timestamp(&mut out, TimestampType::LogAppendTime, now_ms)?;
    } else {
        set_max_timestamp(&mut out, TimestampType::CreateTime, max_ts)?;
    }
    let header = BatchHeader::parse_with(&out, false)?;
    Ok(Prepared {
        bytes: out,
        header,
        log_append_time: if log_append { now_ms } else { -1 },
        records: h.records_count as i64,
    })
}

/// rebuild writes the records of `d` as one new v2 batch with offsets 0, 1, 2..., as Kafka's
/// `buildRecordsAndAssignOffsets` does, keeping the producer id, epoch, base sequence and
/// transactional flag.
fn rebuild(
    d: &DecodedBatch<'_>,
    to: Compression,
    cfg: &LogConfig,
    now_ms: i64,
    leader_epoch: i32,
) -> Result<Prepared> {
    let records: Vec<RecordRef<'_>> = d
        .records()
        .enumerate()
        .map(|(i, mut r)| {
            r.offset = i as i64;
            r
        })
        .collect();
    let f = &d.batch.fields;
    let log_append = cfg.timestamp_type == TimestampType::LogAppendTime;
    let b = RecordBatch {
        fields: BatchFields {
            base_offset: 0,
            partition_leader_epoch: leader_epoch,
            magic: 2,
            compression: to,
            timestamp_type: cfg.timestamp_type,
            is_transactional: f.is_transactional,
            is_control: false,
            has_delete_horizon: false,
            last_offset_delta: 0,
            base_timestamp: NO_TIMESTAMP,
            max_timestamp: if log_append { now_ms } else { NO_TIMESTAMP },
            producer_id: f.producer_id,
            producer_epoch: f.producer_epoch,
            base_sequence: f.base_sequence,
        },
        records: Vec::new(),
    };
    encode_rebuilt(b, &records, cfg, to, log_append, now_ms)
}

/// prepare_legacy converts a magic 0/1 message set (Produce v0-2) to one v2 batch, as Kafka
/// 3.x does since its log holds only v2 (`convertAndAssignOffsetsNonCompressed` and the
/// compressed path's rebuild).
fn prepare_legacy(
    raw: &[RawBatch<'_>],
    cfg: &LogConfig,
    now_ms: i64,
    leader_epoch: i32,
    topic_partition: &str,
) -> Result<Prepared> {
    let opts = DecodeOptions::default();
    let mut budget = Budget::new(opts.max_decompressed_size);
    let mut decoded = Vec::with_capacity(raw.len());
    let mut source = Compression::None;
    for b in raw {
        let d = b.decode(&opts, &mut budget)?;
        if d.batch.compression != Compression::None {
            source = d.batch.compression;
        }
        decoded.push(d);
    }
    if source != Compression::None && raw.len() > 1 {
        return Err(invalid("Compressed outer record has more than one batch"));
    }
    let mut all: Vec<RecordRef<'_>> = Vec::new();
    for d in &decoded {
        // Kafka checks a legacy message set entry by entry, counting each entry's records
        // from 0, and fails at the first entry with errors.
        let mut errors = RecordErrors::new(topic_partition);
        for (i, r) in d.records().enumerate() {
            check_record(&r, i, d.batch.timestamp_type, cfg, now_ms, &mut errors);
            let mut r = r;
            r.offset = all.len() as i64;
            all.push(r);
        }
        errors.into_result()?;
    }
    if all.is_empty() {
        return Err(invalid("record batch has no records"));
    }
    let to = target(cfg, source);
    let log_append = cfg.timestamp_type == TimestampType::LogAppendTime;
    let b = RecordBatch {
        fields: BatchFields {
            base_offset: 0,
            partition_leader_epoch: leader_epoch,
            compression: to,
            timestamp_type: cfg.timestamp_type,
            max_timestamp: if log_append { now_ms } else { NO_TIMESTAMP },
            ..BatchFields::default()
        },
        records: Vec::new(),
    };
    encode_rebuilt(b, &all, cfg, to, log_append, now_ms)
}

/// decode_one reads the v2 batch `bytes` with its records (CRC not checked: it was on append
/// or recovery).
pub fn decode_one(bytes: &[u8]) -> Result<DecodedBatch<'_>> {
    let opts = DecodeOptions {
        verify_crc: false,
        ..DecodeOptions::default()
    };
    let mut budget = Budget::new(opts.max_decompressed_size);
    RawBatch {
        position: 0,
        magic: 2,
        bytes,
    }
    .decode(&opts, &mut budget)
}

/// read_marker reads the COMMIT (true) or ABORT (false) marker and its coordinator epoch from
/// the control batch `batch`; None for another control record (Kafka ignores those in its
/// producer state) or one that does not read.
pub fn read_marker(batch: &[u8]) -> Option<(bool, i32)> {
    let d = decode_one(batch).ok()?;
    let r = d.records().next()?;
    let commit = match ControlRecordKey::parse(r.key).ok()?.kind {
        ControlRecordType::Commit => true,
        ControlRecordType::Abort => false,
        _ => return None,
    };
    let v = r.value.filter(|v| v.len() >= 6)?;
    Some((commit, i32::from_be_bytes([v[2], v[3], v[4], v[5]])))
}

/// encode_rebuilt encodes a batch rebuilt from `records` (recompressed to `to`, or converted),
/// checks its size against max.message.bytes and reads its header back.
fn encode_rebuilt<R: RecordFields>(
    mut b: RecordBatch,
    records: &[R],
    cfg: &LogConfig,
    to: Compression,
    log_append: bool,
    now_ms: i64,
) -> Result<Prepared> {
    b.derive_from(records).map_err(|e| invalid(e.to_string()))?;
    let mut out = Vec::new();
    b.encode_with(records, &mut out, cfg.level(to))?;
    if out.len() as u64 > cfg.max_message_bytes {
        return Err(too_large(out.len(), cfg));
    }
    let header = BatchHeader::parse_with(&out, false)?;
    Ok(Prepared {
        bytes: out,
        header,
        log_append_time: if log_append { now_ms } else { -1 },
        records: records.len() as i64,
    })
}
