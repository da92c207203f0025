//! Accumulator: the producer's record accumulator, Java's `RecordAccumulator` in plain Rust.
//!
//! The application appends records; each goes to a partition (chosen by the configured
//! [`PartitionerKind`] unless given) and is written at once, in Kafka's v2 record format, into
//! the last open batch of that partition's queue. The sender asks which partitions are
//! [`ready`](Accumulator::ready) (a batch full, or older than `linger.ms`, or a flush asked for),
//! [`drains`](Accumulator::drain) their first batches, encodes them
//! ([`DrainedBatch::encode`], the compression, outside any lock) and reports each batch's result
//! back with [`complete`](Accumulator::complete) or [`reenqueue`](Accumulator::reenqueue).
//!
//! Java semantics kept: one queue of batches per partition, appends go to the last batch,
//! `batch.size` bounds a batch's uncompressed bytes (a record larger than that gets a batch of
//! its own), a batch is ready when full (`queue.len() > 1` or its bytes reached `batch.size`) or
//! lingered, a retried batch goes back to the front of its queue with its bytes and sequence, and
//! idempotent batches take per-partition sequence numbers when first drained.
//!
//! Records carry an optional token `T` (the Python binding keeps the delivery callback in it);
//! a completed record with a token becomes a [`Report`], the others are only counted.
//!
//! Not thread-safe by itself: the binding keeps it behind a mutex. It reads no clock: times are
//! passed in (`now_ms` on one monotonic clock, timestamps in wall-clock ms).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::assignors::fxhash::{fx_map, FxMap};
use crate::errors::{Error, ErrorCode, Result};
use crate::partitioners::hash::KeyHash;
use crate::partitioners::{
    BuiltInPartitioner, BuiltInPartitionerConfig, RoundRobinPartitioner, StickyPartitionCache,
    TopicInfo,
};
use crate::protocol::primitives::{varint_len, varlong_len};
use crate::protocol::records::{BatchFields, BatchHeader, Compression, BATCH_OVERHEAD};
use crate::rng::Rng;

/// PARTITIONER_NAMES are the names [`PartitionerKind::from_name`] accepts.
pub const PARTITIONER_NAMES: [&str; 11] = [
    "murmur2_builtin",
    "murmur2_sticky",
    "murmur2_roundrobin",
    "roundrobin",
    "consistent_random",
    "consistent",
    "murmur2_random",
    "murmur2",
    "fnv1a",
    "fnv1a_random",
    "random",
];

/// PartitionerKind is how records without an explicit partition are placed: Java's eras
/// (keys by murmur2) and librdkafka's `partitioner` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionerKind {
    /// Java 3.3+ default: murmur2 keys, null keys by the built-in uniform sticky partitioner
    /// (KIP-794), switching after `batch.size` bytes.
    Murmur2Builtin,
    /// Java 2.4 to 3.2 default: murmur2 keys, null keys by `StickyPartitionCache` (KIP-480),
    /// switching when a new batch is made.
    Murmur2Sticky,
    /// Java up to 2.3 default: murmur2 keys, null keys round-robin from a random start.
    Murmur2RoundRobin,
    /// Java's `RoundRobinPartitioner`: every record round-robin, keys ignored.
    RoundRobin,
    /// librdkafka: `hash` for a key; a null key is random (`random_null`) or the hash of no
    /// bytes. `empty_is_null` is librdkafka's `consistent_random`, which treats an empty key
    /// like a null one.
    Librdkafka {
        hash: KeyHash,
        random_null: bool,
        empty_is_null: bool,
    },
    /// librdkafka `random`: every record random, keys ignored.
    Random,
}

impl PartitionerKind {
    /// from_name reads a partitioner name (see [`PARTITIONER_NAMES`]).
    pub fn from_name(name: &str) -> Result<Self> {
        let lib = |hash, random_null, empty_is_null| PartitionerKind::Librdkafka {
            hash,
            random_null,
            empty_is_null,
        };
        Ok(match name {
            "murmur2_builtin" => PartitionerKind::Murmur2Builtin,
            "murmur2_sticky" => PartitionerKind::Murmur2Sticky,
            "murmur2_roundrobin" => PartitionerKind::Murmur2RoundRobin,
            "roundrobin" => PartitionerKind::RoundRobin,
            "consistent_random" => lib(KeyHash::Crc32, true, true),
            "consistent" => lib(KeyHash::Crc32, false, false),
            "murmur2_random" => lib(KeyHash::Murmur2, true, false),
            "murmur2" => lib(KeyHash::Murmur2, false, false),
            "fnv1a" => lib(KeyHash::Fnv1a, false, false),
            "fnv1a_random" => lib(KeyHash::Fnv1a, true, false),
            "random" => PartitionerKind::Random,
            other => {
                return Err(Error::InvalidArgument(format!(
                    "unknown partitioner {other:?}: expected one of {}",
                    PARTITIONER_NAMES.join(", ")
                )))
            }
        })
    }
}

/// AccumulatorConfig holds the producer settings the accumulator reads (Kafka's names).
#[derive(Debug, Clone)]
pub struct AccumulatorConfig {
    /// `batch.size`: the uncompressed bytes of a batch (header included) before it is full.
    pub batch_size: usize,
    /// `linger.ms`.
    pub linger_ms: f64,
    /// `compression.type` and `compression.level` (`None`: the codec's default).
    pub compression: Compression,
    pub compression_level: Option<i32>,
    pub partitioner: PartitionerKind,
    /// `buffer.memory`: bytes of records not yet completed before appends are refused.
    pub buffer_memory: usize,
    /// `max.request.size`: the largest record (as a batch of one) and the drain limit.
    pub max_request_size: usize,
    /// seed for the partitioners' random choices (tests).
    pub seed: Option<u64>,
}

impl Default for AccumulatorConfig {
    fn default() -> Self {
        AccumulatorConfig {
            batch_size: 16384,
            linger_ms: 5.0,
            compression: Compression::None,
            compression_level: None,
            partitioner: PartitionerKind::Murmur2Builtin,
            buffer_memory: 32 * 1024 * 1024,
            max_request_size: 1024 * 1024,
            seed: None,
        }
    }
}

/// Record is one record as the application hands it over; `partition < 0` lets the
/// partitioner choose. `timestamp` is the record's CreateTime in ms.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: &'a [(&'a [u8], Option<&'a [u8]>)],
    pub partition: i32,
    pub timestamp: i64,
}

/// Appended is what [`Accumulator::append`] did with a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// In a batch that is not yet full.
    Appended = 0,
    /// In a batch, and a batch of that partition is now full: wake the sender.
    BatchFull = 1,
    /// Held until the topic's partition count is known: fetch metadata.
    UnknownTopic = 2,
}

/// Tracked is a record that reports its delivery: its place in its batch and its token.
#[derive(Debug)]
struct Tracked<T> {
    index: i32,
    timestamp: i64,
    appended_ms: f64,
    token: T,
}

/// Report is the delivery of one record with a token: its offset (-1 on error), timestamp and
/// timestamp type (0 CreateTime, 1 LogAppendTime), and error code (0 for success).
#[derive(Debug)]
pub struct Report<T> {
    pub token: T,
    pub topic: Arc<str>,
    pub partition: i32,
    pub offset: i64,
    pub timestamp: i64,
    pub log_append_time: bool,
    pub error_code: i16,
    /// latency_ms is from the append to the completion.
    pub latency_ms: f64,
}

/// Batch is an open or drained batch: its records already in the v2 record format.
#[derive(Debug)]
struct Batch<T> {
    topic: Arc<str>,
    partition: i32,
    records: Vec<u8>,
    count: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    created_ms: f64,
    tracked: Vec<Tracked<T>>,
    /// size is the batch's bytes as counted against `buffer.memory` (uncompressed, header in).
    size: usize,
    closed: bool,
    /// retry is the encoded batch and its sequence, once it was drained and came back.
    retry: Option<(Vec<u8>, i32)>,
    attempts: u32,
}

impl<T> Batch<T> {
    fn is_full(&self, batch_size: usize) -> bool {
        self.closed || (self.count > 0 && self.size >= batch_size)
    }
}

/// DrainedBatch is a batch taken by [`Accumulator::drain`]: the sender encodes it
/// ([`encode`](Self::encode), no lock needed) and gives it back to
/// [`complete`](Accumulator::complete) or [`reenqueue`](Accumulator::reenqueue).
#[derive(Debug)]
pub struct DrainedBatch<T> {
    batch: Batch<T>,
    pub base_sequence: i32,
    producer_id: i64,
    producer_epoch: i16,
    /// transactional sets the batch's transactional attribute (a transactional producer's).
    transactional: bool,
    compression: Compression,
    level: Option<i32>,
    /// encoded is the whole RecordBatch v2 once [`encode`](Self::encode) ran.
    pub encoded: Vec<u8>,
}

impl<T> DrainedBatch<T> {
    pub fn topic(&self) -> &Arc<str> {
        &self.batch.topic
    }
    pub fn partition(&self) -> i32 {
        self.batch.partition
    }
    pub fn record_count(&self) -> i32 {
        self.batch.count
    }
    pub fn created_ms(&self) -> f64 {
        self.batch.created_ms
    }
    pub fn attempts(&self) -> u32 {
        self.batch.attempts
    }

    /// encode writes the batch as Kafka's `MemoryRecordsBuilder` closes it: a v2 header
    /// (base offset 0, partition leader epoch -1, CreateTime, the producer fields) over the
    /// records, compressed with the configured codec, with its CRC-32C. A retried batch keeps
    /// the bytes it had.
    pub fn encode(&mut self) -> Result<()> {
        if !self.encoded.is_empty() {
            return Ok(());
        }
        if let Some((bytes, _)) = self.batch.retry.take() {
            self.encoded = bytes;
            return Ok(());
        }
        let b = &mut self.batch;
        let fields = BatchFields {
            compression: self.compression,
            last_offset_delta: b.count - 1,
            base_timestamp: b.base_timestamp,
            max_timestamp: b.max_timestamp,
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            base_sequence: self.base_sequence,
            is_transactional: self.transactional,
            ..BatchFields::default()
        };
        let mut out = if self.compression == Compression::None {
            // The records were written after room for the header: the batch is its own
            // encoding, with no copy.
            std::mem::take(&mut b.records)
        } else {
            let mut out = Vec::with_capacity(b.records.len());
            out.resize(BATCH_OVERHEAD, 0);
            crate::protocol::records::compression::compress(
                self.compression,
                self.level,
                2,
                &b.records[BATCH_OVERHEAD..],
                &mut out,
            )?;
            out
        };
        let length = (out.len() - crate::protocol::records::LOG_OVERHEAD) as i32;
        BatchHeader::from_fields(&fields, length, b.count).write(&mut out);
        self.encoded = out;
        Ok(())
    }
}

/// Pending is a record held until its topic's partition count is known.
#[derive(Debug)]
struct Pending<T> {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    partition: i32,
    timestamp: i64,
    appended_ms: f64,
    token: Option<T>,
    size: usize,
}

#[derive(Debug)]
struct PartitionQueue<T> {
    batches: VecDeque<Batch<T>>,
    next_sequence: i32,
    /// appended counts the records placed in this partition since the accumulator was made.
    appended: u64,
}

impl<T> Default for PartitionQueue<T> {
    fn default() -> Self {
        PartitionQueue {
            batches: VecDeque::new(),
            next_sequence: 0,
            appended: 0,
        }
    }
}

#[derive(Debug)]
struct Topic<T> {
    name: Arc<str>,
    info: Option<TopicInfo>,
    queues: Vec<PartitionQueue<T>>,
    builtin: Option<BuiltInPartitioner>,
    pending: Vec<Pending<T>>,
}

/// Accumulator is the producer's record accumulator (see the module docs). Deterministic for a
/// given seed and sequence of calls.
#[derive(Debug)]
pub struct Accumulator<T> {
    cfg: AccumulatorConfig,
    /// topics by name, in a map with FxHash: it is looked up several times per record, and
    /// SipHash's cost showed in profiles of bulk appends.
    topics: FxMap<Arc<str>, Topic<T>>,
    sticky: StickyPartitionCache,
    round_robin: RoundRobinPartitioner,
    rng: Rng,
    buffered_bytes: usize,
    /// records counts the records not yet completed (queued, pending and in flight).
    records: usize,
    flushing: bool,
    producer: Option<(i64, i16)>,
    /// transactional: batches drained carry the transactional attribute (bit 4).
    transactional: bool,
    reports: VecDeque<Report<T>>,
    /// unreported counts completed records that had no token (delivered or failed).
    pub unreported: u64,
    /// unreported_failed counts the records of `unreported` that failed.
    pub unreported_failed: u64,
    /// unreported_error is the error code of the last of them (0: none failed).
    pub unreported_error: i16,
}

fn opt_len(b: Option<&[u8]>) -> usize {
    b.map_or(1, |v| varint_len(v.len() as i32) + v.len())
}

/// body_size is a record's bytes inside a batch after its length varint.
fn body_size(r: &Record<'_>, offset_delta: i32, timestamp_delta: i64) -> usize {
    1 + varlong_len(timestamp_delta)
        + varint_len(offset_delta)
        + opt_len(r.key)
        + opt_len(r.value)
        + varint_len(r.headers.len() as i32)
        + r.headers
            .iter()
            .map(|(k, v)| varint_len(k.len() as i32) + k.len() + opt_len(*v))
            .sum::<usize>()
}

/// record_size is a record's bytes inside a batch (its length varint included).
fn record_size(r: &Record<'_>, offset_delta: i32, timestamp_delta: i64) -> usize {
    let body = body_size(r, offset_delta, timestamp_delta);
    varint_len(body as i32) + body
}

#[inline]
fn put_varlong(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

#[inline]
fn put_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => put_varlong(out, -1),
        Some(v) => {
            put_varlong(out, v.len() as i64);
            out.extend_from_slice(v);
        }
    }
}

/// write_record appends one v2 record (Kafka's `DefaultRecord.writeTo`).
fn write_record(out: &mut Vec<u8>, r: &Record<'_>, offset_delta: i32, timestamp_delta: i64) {
    let body = body_size(r, offset_delta, timestamp_delta);
    out.reserve(body + 5);
    put_varlong(out, body as i64);
    out.push(0);
    put_varlong(out, timestamp_delta);
    put_varlong(out, offset_delta as i64);
    put_bytes(out, r.key);
    put_bytes(out, r.value);
    put_varlong(out, r.headers.len() as i64);
    for (k, v) in r.headers {
        put_varlong(out, k.len() as i64);
        out.extend_from_slice(k);
        put_bytes(out, *v);
    }
}

/// upper_bound is Java's `estimateSizeInBytesUpperBound` for a v2 record: a batch of one record
/// with the largest deltas.
fn upper_bound(r: &Record<'_>) -> usize {
    BATCH_OVERHEAD + record_size(r, i32::MAX, i64::MAX)
}

impl<T> Accumulator<T> {
    /// new makes an empty accumulator; the configuration is checked.
    pub fn new(cfg: AccumulatorConfig) -> Result<Self> {
        cfg.compression.check_level(cfg.compression_level)?;
        if cfg.linger_ms.is_nan() || cfg.linger_ms < 0.0 {
            return Err(Error::InvalidArgument(format!(
                "linger.ms must be >= 0, got {}",
                cfg.linger_ms
            )));
        }
        let seed = cfg.seed;
        let derive = |k: u64| seed.map(|s| s.wrapping_add(k));
        Ok(Accumulator {
            sticky: StickyPartitionCache::new(derive(1)),
            round_robin: RoundRobinPartitioner::new(
                derive(2),
                (cfg.partitioner == PartitionerKind::RoundRobin).then_some(0),
            ),
            rng: Rng::new(derive(3)),
            cfg,
            topics: fx_map(4),
            buffered_bytes: 0,
            records: 0,
            flushing: false,
            producer: None,
            transactional: false,
            reports: VecDeque::new(),
            unreported: 0,
            unreported_failed: 0,
            unreported_error: 0,
        })
    }

    pub fn config(&self) -> &AccumulatorConfig {
        &self.cfg
    }

    /// buffered_bytes is the bytes of records appended and not yet completed.
    pub fn buffered_bytes(&self) -> usize {
        self.buffered_bytes
    }

    /// len is the number of records appended and not yet completed (confluent's `len(p)`).
    pub fn len(&self) -> usize {
        self.records
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// set_producer_id turns on idempotence: batches drained from now on carry the producer id,
    /// epoch and per-partition sequences (from 0 for a new id or epoch).
    pub fn set_producer_id(&mut self, producer_id: i64, epoch: i16) {
        if self.producer != Some((producer_id, epoch)) {
            for t in self.topics.values_mut() {
                for q in &mut t.queues {
                    q.next_sequence = 0;
                }
            }
        }
        self.producer = Some((producer_id, epoch));
    }

    /// set_transactional marks the batches drained from now on as transactional (Kafka's
    /// attribute bit 4), as a transactional producer writes every batch.
    pub fn set_transactional(&mut self, transactional: bool) {
        self.transactional = transactional;
    }

    /// partitions is the known partition count of `topic`.
    pub fn partitions(&self, topic: &str) -> Option<i32> {
        self.topics
            .get(topic)
            .and_then(|t| t.info.as_ref().map(|i| i.num_partitions))
    }

    /// appended is the number of records placed in each partition of `topic` since the
    /// accumulator was made (delivered, in flight or queued; records held while the topic's
    /// partition count is unknown are not placed yet).
    pub fn appended(&self, topic: &str) -> Option<Vec<u64>> {
        self.topics
            .get(topic)
            .map(|t| t.queues.iter().map(|q| q.appended).collect())
    }

    fn topic_mut(&mut self, topic: &str) -> &mut Topic<T> {
        if !self.topics.contains_key(topic) {
            let name: Arc<str> = Arc::from(topic);
            self.topics.insert(
                name.clone(),
                Topic {
                    name,
                    info: None,
                    queues: Vec::new(),
                    builtin: None,
                    pending: Vec::new(),
                },
            );
        }
        self.topics.get_mut(topic).expect("inserted above")
    }

    /// set_partitions takes a topic's partition count from metadata (it may grow; a smaller
    /// count is ignored, as Kafka never shrinks a topic) and places the records held for it,
    /// in order. A held record whose explicit partition does not exist fails with
    /// UNKNOWN_TOPIC_OR_PARTITION (a report); returns how many failed.
    pub fn set_partitions(&mut self, topic: &str, count: i64, now_ms: f64) -> Result<usize> {
        let info = TopicInfo::new(count, None)?;
        let batch_size = self.cfg.batch_size.min(i32::MAX as usize) as i32;
        let seed = self.cfg.seed.map(|s| s.wrapping_add(4));
        let builtin_kind = self.cfg.partitioner == PartitionerKind::Murmur2Builtin;
        let t = self.topic_mut(topic);
        if t.info
            .as_ref()
            .is_some_and(|i| i.num_partitions >= info.num_partitions)
        {
            return Ok(0);
        }
        t.queues
            .resize_with(info.num_partitions as usize, PartitionQueue::default);
        if builtin_kind {
            match &mut t.builtin {
                Some(b) => b.set_topic_info(info.clone()),
                None => {
                    let cfg = BuiltInPartitionerConfig {
                        batch_size,
                        ..Default::default()
                    };
                    t.builtin = Some(BuiltInPartitioner::new(info.clone(), cfg, seed)?);
                }
            }
        }
        t.info = Some(info);
        let pending = std::mem::take(&mut t.pending);
        let name = t.name.clone();
        let mut failed = 0;
        for p in pending {
            self.buffered_bytes -= p.size;
            self.records -= 1;
            let headers: Vec<(&[u8], Option<&[u8]>)> = p
                .headers
                .iter()
                .map(|(k, v)| (k.as_slice(), v.as_deref()))
                .collect();
            let r = Record {
                key: p.key.as_deref(),
                value: p.value.as_deref(),
                headers: &headers,
                partition: p.partition,
                timestamp: p.timestamp,
            };
            match self.place(topic, &r) {
                Ok(partition) => {
                    self.insert(topic, partition, &r, p.token, p.appended_ms);
                }
                Err(e) => {
                    failed += 1;
                    let code = e.error_code().map_or(-1, |c| c.code());
                    let partition = p.partition;
                    self.report_failure(
                        &name,
                        partition,
                        p.timestamp,
                        p.appended_ms,
                        p.token,
                        code,
                        now_ms,
                    );
                }
            }
        }
        Ok(failed)
    }

    #[allow(clippy::too_many_arguments)]
    fn report_failure(
        &mut self,
        topic: &Arc<str>,
        partition: i32,
        timestamp: i64,
        appended_ms: f64,
        token: Option<T>,
        code: i16,
        now_ms: f64,
    ) {
        match token {
            Some(token) => self.reports.push_back(Report {
                token,
                topic: topic.clone(),
                partition,
                offset: -1,
                timestamp,
                log_append_time: false,
                error_code: code,
                latency_ms: now_ms - appended_ms,
            }),
            None => {
                self.unreported += 1;
                if code != 0 {
                    self.unreported_failed += 1;
                    self.unreported_error = code;
                }
            }
        }
    }

    /// append adds one record to `topic` (see [`Appended`] and [`AppendError`]). A topic whose
    /// partition count is not known yet holds the record until
    /// [`set_partitions`](Self::set_partitions).
    pub fn append(
        &mut self,
        topic: &str,
        r: &Record<'_>,
        token: Option<T>,
        now_ms: f64,
    ) -> std::result::Result<Appended, AppendError> {
        let size = self.check(r)?;
        // One lookup of the topic per record: the partitioners and the batch are reached
        // through it (bulk appends call this millions of times).
        let Accumulator {
            cfg,
            topics,
            sticky,
            round_robin,
            rng,
            ..
        } = self;
        if let Some(t) = topics.get_mut(topic).filter(|t| t.info.is_some()) {
            let partition =
                place(cfg, sticky, round_robin, rng, t, r).map_err(AppendError::Failed)?;
            let (appended, added) = insert(cfg, t, partition, r, token, now_ms);
            self.buffered_bytes += added;
            self.records += 1;
            return Ok(appended);
        }
        let t = self.topic_mut(topic);
        t.pending.push(Pending {
            key: r.key.map(<[u8]>::to_vec),
            value: r.value.map(<[u8]>::to_vec),
            headers: r
                .headers
                .iter()
                .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec)))
                .collect(),
            partition: r.partition,
            timestamp: r.timestamp,
            appended_ms: now_ms,
            token,
            size,
        });
        self.buffered_bytes += size;
        self.records += 1;
        Ok(Appended::UnknownTopic)
    }

    /// check refuses a record too large or with no room left; it returns the record's size as
    /// counted against `buffer.memory`.
    #[inline]
    fn check(&self, r: &Record<'_>) -> std::result::Result<usize, AppendError> {
        let size = record_size(r, 0, 0);
        let bound = BATCH_OVERHEAD + size + 14;
        if bound > self.cfg.max_request_size || bound > self.cfg.buffer_memory {
            let bound = upper_bound(r);
            if bound > self.cfg.max_request_size || bound > self.cfg.buffer_memory {
                return Err(AppendError::TooLarge(bound));
            }
        }
        if self.buffered_bytes + size > self.cfg.buffer_memory {
            return Err(AppendError::BufferFull);
        }
        Ok(size)
    }

    /// place chooses the record's partition in a topic whose count is known.
    fn place(&mut self, topic: &str, r: &Record<'_>) -> Result<i32> {
        let t = self.topics.get_mut(topic).expect("known topic");
        place(
            &self.cfg,
            &mut self.sticky,
            &mut self.round_robin,
            &mut self.rng,
            t,
            r,
        )
    }

    /// insert writes the record into the partition's last batch, or a new one.
    fn insert(
        &mut self,
        topic: &str,
        partition: i32,
        r: &Record<'_>,
        token: Option<T>,
        now_ms: f64,
    ) -> Appended {
        let t = self.topics.get_mut(topic).expect("known topic");
        let (appended, added) = insert(&self.cfg, t, partition, r, token, now_ms);
        self.buffered_bytes += added;
        self.records += 1;
        appended
    }

    /// begin_flush makes every batch ready until the accumulator has drained them all
    /// (Java's `beginFlush`).
    pub fn begin_flush(&mut self) {
        self.flushing = true;
    }

    /// ready lists the partitions whose first batch can be sent at `now_ms` (full, lingered
    /// `linger.ms`, retried, or a flush is on) in topic then partition order, and the ms until
    /// the next batch becomes ready (`linger.ms` when nothing is queued).
    pub fn ready(&self, now_ms: f64) -> (Vec<(Arc<str>, i32)>, f64) {
        let mut out = Vec::new();
        let mut next = self.cfg.linger_ms;
        let mut names: Vec<&Arc<str>> = self.topics.keys().collect();
        names.sort();
        for name in names {
            let t = &self.topics[name];
            for (p, q) in t.queues.iter().enumerate() {
                let Some(b) = q.batches.front() else { continue };
                let waited = now_ms - b.created_ms;
                if self.flushing
                    || q.batches.len() > 1
                    || b.is_full(self.cfg.batch_size)
                    || b.retry.is_some()
                    || waited >= self.cfg.linger_ms
                {
                    out.push((t.name.clone(), p as i32));
                } else {
                    next = next.min(self.cfg.linger_ms - waited);
                }
            }
        }
        (out, next.max(0.0))
    }

    /// drain takes the first batch of each partition in `partitions` (or of every ready
    /// partition at `now_ms` when `None`), in order, until `max_bytes` of uncompressed batches
    /// (the first batch is always taken). Idempotent batches get their sequence here, once.
    pub fn drain(
        &mut self,
        partitions: Option<&[(String, i32)]>,
        max_bytes: usize,
        now_ms: f64,
    ) -> Vec<DrainedBatch<T>> {
        let list: Vec<(Arc<str>, i32)> = match partitions {
            Some(ps) => ps
                .iter()
                .filter_map(|(t, p)| self.topics.get(t.as_str()).map(|t| (t.name.clone(), *p)))
                .collect(),
            None => self.ready(now_ms).0,
        };
        let mut out = Vec::new();
        let mut total = 0usize;
        for (name, p) in list {
            let producer = self.producer;
            let Some(t) = self.topics.get_mut(&*name) else {
                continue;
            };
            let Some(q) = t.queues.get_mut(p.max(0) as usize).filter(|_| p >= 0) else {
                continue;
            };
            let Some(front) = q.batches.front() else {
                continue;
            };
            if !out.is_empty() && total + front.size > max_bytes {
                break;
            }
            let mut b = q.batches.pop_front().expect("front exists");
            b.closed = true;
            total += b.size;
            let base_sequence = match (&b.retry, producer) {
                (Some((_, seq)), _) => *seq,
                (None, Some(_)) => {
                    let s = q.next_sequence;
                    q.next_sequence = crate::protocol::records::increment_sequence(s, b.count);
                    s
                }
                (None, None) => -1,
            };
            let (producer_id, producer_epoch) = producer.unwrap_or((-1, -1));
            b.attempts += 1;
            out.push(DrainedBatch {
                batch: b,
                base_sequence,
                producer_id,
                producer_epoch,
                transactional: self.transactional,
                compression: self.cfg.compression,
                level: self.cfg.compression_level,
                encoded: Vec::new(),
            });
        }
        if self.flushing
            && self
                .topics
                .values()
                .all(|t| t.queues.iter().all(|q| q.batches.is_empty()))
        {
            self.flushing = false;
        }
        out
    }

    /// complete ends an in-flight batch: with `error_code` 0 its records get offsets
    /// `base_offset + i` (and the broker's `log_append_time` when not -1), otherwise they fail
    /// with that code. Records with a token become reports.
    pub fn complete(
        &mut self,
        batch: DrainedBatch<T>,
        error_code: i16,
        base_offset: i64,
        log_append_time: i64,
        now_ms: f64,
    ) {
        let b = batch.batch;
        self.buffered_bytes = self.buffered_bytes.saturating_sub(b.size - BATCH_OVERHEAD);
        self.records = self.records.saturating_sub(b.count as usize);
        let untracked = (b.count as usize - b.tracked.len()) as u64;
        self.unreported += untracked;
        let ok = error_code == 0;
        if !ok && untracked > 0 {
            self.unreported_failed += untracked;
            self.unreported_error = error_code;
        }
        for tr in b.tracked {
            let lat = log_append_time >= 0 && ok;
            self.reports.push_back(Report {
                token: tr.token,
                topic: b.topic.clone(),
                partition: b.partition,
                offset: if ok && base_offset >= 0 {
                    base_offset + tr.index as i64
                } else {
                    -1
                },
                timestamp: if lat { log_append_time } else { tr.timestamp },
                log_append_time: lat,
                error_code,
                latency_ms: now_ms - tr.appended_ms,
            });
        }
    }

    /// reenqueue puts an in-flight batch back at the front of its partition's queue, to be
    /// drained again with the same bytes and sequence (Java's `reenqueue`).
    pub fn reenqueue(&mut self, mut batch: DrainedBatch<T>) -> Result<()> {
        batch.encode()?;
        let mut b = batch.batch;
        b.retry = Some((batch.encoded, batch.base_sequence));
        b.closed = true;
        let t = self
            .topics
            .get_mut(&*b.topic)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown topic {:?}", b.topic)))?;
        let q = t
            .queues
            .get_mut(b.partition as usize)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown partition {}", b.partition)))?;
        q.batches.push_front(b);
        Ok(())
    }

    /// fail_all fails every queued and held record with `error_code` (close, timeout); batches
    /// in flight are the sender's to complete.
    pub fn fail_all(&mut self, error_code: i16, now_ms: f64) {
        let names: Vec<Arc<str>> = self.topics.keys().cloned().collect();
        for name in names {
            self.fail_topic(&name, error_code, now_ms);
        }
        self.flushing = false;
    }

    /// fail_topic fails every queued and held record of `topic` with `error_code` (a topic
    /// the client may not describe: TOPIC_AUTHORIZATION_FAILED; one never found: Java's
    /// max.block.ms); its batches in flight are the sender's to complete.
    pub fn fail_topic(&mut self, topic: &str, error_code: i16, now_ms: f64) {
        let mut failed: Vec<DrainedBatch<T>> = Vec::new();
        let mut held = Vec::new();
        if let Some(t) = self.topics.get_mut(topic) {
            for q in &mut t.queues {
                for b in q.batches.drain(..) {
                    failed.push(DrainedBatch {
                        batch: b,
                        base_sequence: -1,
                        producer_id: -1,
                        producer_epoch: -1,
                        transactional: false,
                        compression: Compression::None,
                        level: None,
                        encoded: Vec::new(),
                    });
                }
            }
            for p in t.pending.drain(..) {
                held.push((t.name.clone(), p));
            }
        }
        for b in failed {
            self.complete(b, error_code, -1, -1, now_ms);
        }
        for (name, p) in held {
            self.buffered_bytes -= p.size;
            self.records -= 1;
            self.report_failure(
                &name,
                p.partition,
                p.timestamp,
                p.appended_ms,
                p.token,
                error_code,
                now_ms,
            );
        }
    }

    /// pop_reports takes up to `max` reports (all with `None`), oldest first.
    pub fn pop_reports(&mut self, max: Option<usize>) -> Vec<Report<T>> {
        let n = max.map_or(self.reports.len(), |m| m.min(self.reports.len()));
        self.reports.drain(..n).collect()
    }
}

/// AppendError is why [`Accumulator::append`] refused a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendError {
    /// BufferFull: `buffer.memory` is used up (confluent raises `BufferError`).
    BufferFull,
    /// TooLarge: the record, as a batch of one, is over `max.request.size` or `buffer.memory`
    /// (Java's `RecordTooLargeException`, MESSAGE_TOO_LARGE); the size is attached.
    TooLarge(usize),
    /// Failed: an explicit partition that does not exist (UNKNOWN_TOPIC_OR_PARTITION).
    Failed(Error),
}

/// has_room is Java's `MemoryRecordsBuilder.hasRoomFor` on the partition's last batch.
fn has_room<T>(cfg: &AccumulatorConfig, t: &Topic<T>, partition: i32, r: &Record<'_>) -> bool {
    match t.queues[partition as usize].batches.back() {
        None => false,
        Some(b) if b.closed || b.retry.is_some() => false,
        Some(b) => {
            let od = b.count;
            let td = r.timestamp.wrapping_sub(b.base_timestamp);
            b.size + record_size(r, od, td) <= cfg.batch_size
        }
    }
}

/// place chooses a record's partition in `t`, a topic whose count is known.
fn place<T>(
    cfg: &AccumulatorConfig,
    sticky: &mut StickyPartitionCache,
    round_robin: &mut RoundRobinPartitioner,
    rng: &mut Rng,
    t: &mut Topic<T>,
    r: &Record<'_>,
) -> Result<i32> {
    let info = t.info.as_ref().expect("known count");
    let n = info.num_partitions;
    if r.partition >= 0 {
        if r.partition >= n {
            return Err(Error::kafka(
                ErrorCode::UnknownTopicOrPartition,
                format!(
                    "partition {} of topic {:?} does not exist ({n} partitions)",
                    r.partition, &*t.name
                ),
            ));
        }
        return Ok(r.partition);
    }
    let topic = &*t.name;
    Ok(match cfg.partitioner {
        PartitionerKind::Murmur2Builtin => match r.key {
            Some(k) => KeyHash::Murmur2.partition(k, n as u32),
            None => t
                .builtin
                .as_mut()
                .expect("made with the count")
                .peek_partition(),
        },
        PartitionerKind::Murmur2Sticky => {
            let p = match r.key {
                Some(k) => KeyHash::Murmur2.partition(k, n as u32),
                None => sticky.partition(topic, info),
            };
            // Java 2.4-3.2: a record that would open a new batch calls onNewBatch, which
            // moves the sticky partition if it was this one; a null key is placed again.
            if has_room(cfg, t, p, r) {
                p
            } else {
                let next = sticky.next_partition(topic, info, p);
                if r.key.is_none() {
                    next
                } else {
                    p
                }
            }
        }
        PartitionerKind::Murmur2RoundRobin => match r.key {
            Some(k) => KeyHash::Murmur2.partition(k, n as u32),
            None => round_robin.partition(topic, info),
        },
        PartitionerKind::RoundRobin => round_robin.partition(topic, info),
        PartitionerKind::Librdkafka {
            hash,
            random_null,
            empty_is_null,
        } => match r.key {
            Some(k) if !(empty_is_null && k.is_empty()) => hash.partition(k, n as u32),
            _ if random_null => rng.next_positive() % n,
            _ => hash.partition(b"", n as u32),
        },
        PartitionerKind::Random => rng.next_positive() % n,
    })
}

/// insert writes a record into the partition's last batch, or a new one; returns what
/// happened and the bytes added.
fn insert<T>(
    cfg: &AccumulatorConfig,
    t: &mut Topic<T>,
    partition: i32,
    r: &Record<'_>,
    token: Option<T>,
    now_ms: f64,
) -> (Appended, usize) {
    let room = has_room(cfg, t, partition, r);
    let batch_size = cfg.batch_size;
    let builtin_null =
        cfg.partitioner == PartitionerKind::Murmur2Builtin && r.key.is_none() && r.partition < 0;
    let q = &mut t.queues[partition as usize];
    let before = q.batches.back().map_or(0, |b| b.size);
    if !room {
        if let Some(last) = q.batches.back_mut() {
            last.closed = true;
        }
        q.batches.push_back(Batch {
            topic: t.name.clone(),
            partition,
            records: {
                // Room for the batch header first, written in place by `encode`.
                let mut v = Vec::with_capacity(BATCH_OVERHEAD + batch_size.min(1 << 20));
                v.resize(BATCH_OVERHEAD, 0);
                v
            },
            count: 0,
            base_timestamp: r.timestamp,
            max_timestamp: r.timestamp,
            created_ms: now_ms,
            tracked: Vec::new(),
            size: BATCH_OVERHEAD,
            closed: false,
            retry: None,
            attempts: 0,
        });
    }
    let b = q.batches.back_mut().expect("pushed above");
    let od = b.count;
    let td = r.timestamp.wrapping_sub(b.base_timestamp);
    let start = b.records.len();
    write_record(&mut b.records, r, od, td);
    let added = b.records.len() - start;
    b.size += added;
    b.count += 1;
    b.max_timestamp = b.max_timestamp.max(r.timestamp);
    if let Some(token) = token {
        b.tracked.push(Tracked {
            index: od,
            timestamp: r.timestamp,
            appended_ms: now_ms,
            token,
        });
    }
    let appended_bytes = if room { b.size - before } else { b.size };
    let last_full = b.is_full(batch_size);
    let full = q.batches.len() > 1 || last_full;
    q.appended += 1;
    if builtin_null {
        if let Some(bp) = t.builtin.as_mut() {
            bp.update_partition_info(appended_bytes as i64, last_full);
        }
    }
    let appended = if full {
        Appended::BatchFull
    } else {
        Appended::Appended
    };
    (appended, added)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::records::{decode_batches, DecodeOptions};

    fn rec<'a>(key: Option<&'a [u8]>, value: &'a [u8], ts: i64) -> Record<'a> {
        Record {
            key,
            value: Some(value),
            headers: &[],
            partition: -1,
            timestamp: ts,
        }
    }

    #[test]
    fn records_decode_back_with_every_codec() {
        for c in ["none", "gzip", "snappy", "lz4", "zstd"] {
            let cfg = AccumulatorConfig {
                compression: Compression::from_name(c).unwrap(),
                seed: Some(1),
                ..Default::default()
            };
            let mut a: Accumulator<u32> = Accumulator::new(cfg).unwrap();
            a.set_partitions("t", 1, 0.0).unwrap();
            let h: [(&[u8], Option<&[u8]>); 2] = [(b"h", Some(b"v")), (b"n", None)];
            for i in 0..10u32 {
                let v = format!("value-{i}");
                let r = Record {
                    key: Some(b"k"),
                    value: Some(v.as_bytes()),
                    headers: &h,
                    partition: -1,
                    timestamp: 1000 + i as i64,
                };
                a.append("t", &r, Some(i), 0.0).unwrap();
            }
            let mut d = a.drain(None, usize::MAX, 10.0);
            assert_eq!(d.len(), 1);
            d[0].encode().unwrap();
            let got = decode_batches(&d[0].encoded, &DecodeOptions::default()).unwrap();
            assert_eq!(got[0].records.len(), 10, "{c}");
            assert_eq!(got[0].records[3].value.as_deref(), Some(&b"value-3"[..]));
            assert_eq!(got[0].records[3].timestamp, 1003);
            assert_eq!(got[0].records[3].headers.len(), 2);
            assert_eq!(got[0].producer_id, -1);
            let b = d.pop().unwrap();
            a.complete(b, 0, 100, -1, 20.0);
            let reps = a.pop_reports(None);
            assert_eq!(reps.len(), 10);
            assert_eq!(reps[9].offset, 109);
            assert_eq!(a.len(), 0);
            assert_eq!(a.buffered_bytes(), 0);
        }
    }

    #[test]
    fn a_transactional_producer_sets_the_transactional_attribute() {
        // Kafka's RecordAccumulator.drain: a transactional producer's batches carry bit 4, the
        // producer id, epoch and sequence (MemoryRecordsBuilder with isTransactional).
        let mut a: Accumulator<u32> = Accumulator::new(AccumulatorConfig::default()).unwrap();
        a.set_partitions("t", 1, 0.0).unwrap();
        a.set_producer_id(7, 2);
        a.set_transactional(true);
        a.append("t", &rec(Some(b"k"), b"v", 1), Some(0), 0.0)
            .unwrap();
        let mut d = a.drain(None, usize::MAX, 10.0);
        d[0].encode().unwrap();
        let got = decode_batches(&d[0].encoded, &DecodeOptions::default()).unwrap();
        assert!(got[0].is_transactional);
        assert!(!got[0].is_control);
        assert_eq!((got[0].producer_id, got[0].producer_epoch), (7, 2));
        assert_eq!(got[0].base_sequence, 0);
    }

    #[test]
    fn a_record_larger_than_batch_size_gets_its_own_batch() {
        let cfg = AccumulatorConfig {
            batch_size: 100,
            ..Default::default()
        };
        let mut a: Accumulator<()> = Accumulator::new(cfg).unwrap();
        a.set_partitions("t", 1, 0.0).unwrap();
        let big = [7u8; 500];
        assert_eq!(
            a.append("t", &rec(Some(b"k"), b"x", 1), None, 0.0),
            Ok(Appended::Appended)
        );
        assert_eq!(
            a.append("t", &rec(Some(b"k"), &big, 1), None, 0.0),
            Ok(Appended::BatchFull)
        );
        let d = a.drain(Some(&[("t".into(), 0)]), usize::MAX, 0.0);
        assert_eq!(d[0].record_count(), 1);
        let d = a.drain(Some(&[("t".into(), 0)]), usize::MAX, 0.0);
        assert_eq!(d[0].record_count(), 1);
    }

    #[test]
    fn appended_counts_the_records_placed_per_partition() {
        let cfg = AccumulatorConfig {
            seed: Some(3),
            ..Default::default()
        };
        let mut a: Accumulator<()> = Accumulator::new(cfg).unwrap();
        assert_eq!(a.appended("t"), None);
        // Held while the count is unknown: not placed, not counted.
        a.append("t", &rec(Some(b"held"), b"v", 1), None, 0.0)
            .unwrap();
        assert_eq!(a.appended("t"), Some(vec![]));
        a.set_partitions("t", 3, 0.0).unwrap();
        let mut want = vec![0u64; 3];
        want[KeyHash::Murmur2.partition(b"held", 3) as usize] += 1;
        for i in 0..50 {
            let k = format!("key-{i}");
            a.append("t", &rec(Some(k.as_bytes()), b"v", 1), None, 0.0)
                .unwrap();
            want[KeyHash::Murmur2.partition(k.as_bytes(), 3) as usize] += 1;
        }
        let mut explicit = rec(None, b"v", 1);
        explicit.partition = 2;
        a.append("t", &explicit, None, 0.0).unwrap();
        want[2] += 1;
        assert_eq!(a.appended("t"), Some(want.clone()));
        // Completing the batches does not change what was placed.
        for b in a.drain(None, usize::MAX, 10.0) {
            a.complete(b, 0, 0, -1, 20.0);
        }
        assert_eq!(a.appended("t"), Some(want));
    }
}
