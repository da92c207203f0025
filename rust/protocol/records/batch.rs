//! RecordBatch: the owned model of a record batch of any magic, and the magic 2 (v2) codec.
//!
//! A v2 record inside a batch (Kafka's `DefaultRecord`), all varints zigzag:
//! `length varint, attributes int8 (unused), timestampDelta varlong, offsetDelta varint,
//! keyLength varint (-1 null), key, valueLength varint (-1 null), value, headerCount varint,
//! [headerKeyLength varint, headerKey UTF-8, headerValueLength varint (-1 null), headerValue]`.

use std::borrow::Cow;

use super::compression::{self, Budget, Compression};
use super::header::{self, BatchHeader, BATCH_OVERHEAD};
use super::view::{read_header, read_len_bytes, DecodedBatch, RecordSpan};
use super::{legacy, DecodeOptions};
use crate::errors::{Corruption, Error, Result};
use crate::protocol::primitives::{varint_len, varlong_len, Reader, Writer};

/// TimestampType is the meaning of a batch's timestamps, with Java's `TimestampType` ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// Magic 0 messages carry no timestamp.
    NoTimestampType = -1,
    /// The producer's timestamp.
    #[default]
    CreateTime = 0,
    /// The broker's append time (the batch's max timestamp, for every record).
    LogAppendTime = 1,
}

impl TimestampType {
    /// id is Java's `TimestampType.id`: -1, 0 or 1.
    pub fn id(self) -> i8 {
        self as i8
    }

    /// from_id reads Java's id.
    pub fn from_id(id: i64) -> Result<Self> {
        match id {
            -1 => Ok(TimestampType::NoTimestampType),
            0 => Ok(TimestampType::CreateTime),
            1 => Ok(TimestampType::LogAppendTime),
            _ => Err(Error::InvalidArgument(format!(
                "timestamp type {id} is not -1, 0 or 1"
            ))),
        }
    }
}

/// NO_TIMESTAMP is Kafka's `RecordBatch.NO_TIMESTAMP`.
pub const NO_TIMESTAMP: i64 = -1;

/// Header is one record header. Kafka reads header keys as UTF-8 and replaces invalid bytes, as
/// Java's `new String(bytes, UTF_8)` does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header {
    pub key: String,
    pub value: Option<Vec<u8>>,
}

/// Record is one record with its absolute offset and timestamp (for a LogAppendTime batch, the
/// batch's max timestamp, as Kafka reports it). Records of magic 0 and 1 have no headers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
}

/// BatchFields are what a batch says of itself besides its records, in logical form (the
/// attribute bits as named values): the one list of a batch's header fields, which
/// [`RecordBatch`], the Python `RecordBatch` and [`BatchHeader::from_fields`] /
/// [`BatchHeader::fields`] share.
///
/// Magic 2 batches map field for field. A magic 0/1 entry (one message, or one compressed
/// wrapper message and its inner messages) maps as Kafka's `AbstractLegacyRecordBatch` reads it:
/// base offset and last offset delta from the records' absolute offsets, both timestamps from
/// the wrapper (none for magic 0), producer fields -1, partition leader epoch -1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchFields {
    pub base_offset: i64,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub compression: Compression,
    pub timestamp_type: TimestampType,
    pub is_transactional: bool,
    pub is_control: bool,
    /// has_delete_horizon is attribute bit 6 (KIP-534): base_timestamp is then the delete horizon.
    pub has_delete_horizon: bool,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
}

impl Default for BatchFields {
    fn default() -> Self {
        BatchFields {
            base_offset: 0,
            partition_leader_epoch: -1,
            magic: 2,
            compression: Compression::None,
            timestamp_type: TimestampType::CreateTime,
            is_transactional: false,
            is_control: false,
            has_delete_horizon: false,
            last_offset_delta: 0,
            base_timestamp: NO_TIMESTAMP,
            max_timestamp: NO_TIMESTAMP,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
        }
    }
}

impl BatchFields {
    /// last_offset is base_offset + last_offset_delta.
    pub fn last_offset(&self) -> i64 {
        header::last_offset(self.base_offset, self.last_offset_delta)
    }

    /// next_offset is the offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// last_sequence is Kafka's `lastSequence` (see [`BatchHeader::last_sequence`]).
    pub fn last_sequence(&self) -> i32 {
        header::last_sequence(self.base_sequence, self.last_offset_delta)
    }

    /// attributes is the v2 attributes word of these fields.
    pub fn attributes(&self) -> i16 {
        let mut a = self.compression.id() as i16;
        if self.timestamp_type == TimestampType::LogAppendTime {
            a |= header::TIMESTAMP_TYPE_MASK;
        }
        if self.is_transactional {
            a |= header::TRANSACTIONAL_MASK;
        }
        if self.is_control {
            a |= header::CONTROL_MASK;
        }
        if self.has_delete_horizon {
            a |= header::DELETE_HORIZON_MASK;
        }
        a
    }
}

/// RecordBatch is a batch of any magic: its [`BatchFields`] and its records. It derefs to its
/// fields (`batch.base_offset`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordBatch {
    pub fields: BatchFields,
    pub records: Vec<Record>,
}

impl std::ops::Deref for RecordBatch {
    type Target = BatchFields;

    fn deref(&self) -> &BatchFields {
        &self.fields
    }
}

impl std::ops::DerefMut for RecordBatch {
    fn deref_mut(&mut self) -> &mut BatchFields {
        &mut self.fields
    }
}

fn invalid(m: String) -> Error {
    Error::InvalidArgument(m)
}

fn len_i32(n: usize, what: &str) -> Result<i32> {
    i32::try_from(n).map_err(|_| invalid(format!("{what} of {n} bytes is over the 2^31-1 limit")))
}

fn opt_len(b: Option<&[u8]>) -> usize {
    b.map_or(1, |v| varint_len(v.len() as i32) + v.len())
}

/// RecordFields is what encoding reads of a record: [`Record`] and
/// [`RecordRef`](super::RecordRef) have it, so records decoded in place encode without a copy.
pub trait RecordFields {
    fn offset(&self) -> i64;
    fn timestamp(&self) -> i64;
    fn key(&self) -> Option<&[u8]>;
    fn value(&self) -> Option<&[u8]>;
    fn header_count(&self) -> usize;
    /// headers yields (key, value) pairs; keys are UTF-8 on the wire.
    fn headers(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> + '_;
}

impl RecordFields for Record {
    fn offset(&self) -> i64 {
        self.offset
    }
    fn timestamp(&self) -> i64 {
        self.timestamp
    }
    fn key(&self) -> Option<&[u8]> {
        self.key.as_deref()
    }
    fn value(&self) -> Option<&[u8]> {
        self.value.as_deref()
    }
    fn header_count(&self) -> usize {
        self.headers.len()
    }
    fn headers(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> + '_ {
        self.headers
            .iter()
            .map(|h| (h.key.as_bytes(), h.value.as_deref()))
    }
}

impl RecordBatch {
    /// derive_from_records sets what Kafka's `MemoryRecordsBuilder` derives from the records: the
    /// last offset delta, the base timestamp (the first record's, unless a delete horizon is set)
    /// and, for CreateTime, the max timestamp. An empty batch keeps its fields. Offsets must
    /// increase from base_offset, as Kafka's builder requires.
    pub fn derive_from_records(&mut self) -> Result<()> {
        let records = std::mem::take(&mut self.records);
        let r = self.derive_from(&records);
        self.records = records;
        r
    }

    /// derive_from is [`derive_from_records`](Self::derive_from_records) over `records`.
    pub fn derive_from<R: RecordFields>(&mut self, records: &[R]) -> Result<()> {
        let (Some(first), Some(last)) = (records.first(), records.last()) else {
            return Ok(());
        };
        let mut prev: Option<i64> = None;
        for r in records {
            if r.offset() < self.base_offset || prev.is_some_and(|p| r.offset() <= p) {
                return Err(invalid(format!(
                    "record offset {} does not increase from base offset {} and the previous record",
                    r.offset(),
                    self.base_offset
                )));
            }
            prev = Some(r.offset());
        }
        self.last_offset_delta = i32::try_from(last.offset() - self.base_offset)
            .map_err(|_| invalid("records span more than 2^31 offsets".into()))?;
        if !self.has_delete_horizon {
            self.base_timestamp = first.timestamp();
        }
        if self.timestamp_type != TimestampType::LogAppendTime {
            self.max_timestamp = records
                .iter()
                .map(|r| r.timestamp())
                .max()
                .unwrap_or(NO_TIMESTAMP);
        }
        Ok(())
    }

    /// uncompressed_size is the exact encoded length of this batch without compression (for a
    /// v2 batch with compression none, the encoded length).
    pub fn uncompressed_size(&self) -> usize {
        if self.magic < 2 {
            return legacy::uncompressed_size(self);
        }
        self.v2_size(&self.records)
    }

    fn v2_size<R: RecordFields>(&self, records: &[R]) -> usize {
        BATCH_OVERHEAD
            + records
                .iter()
                .map(|r| {
                    let od = r.offset().wrapping_sub(self.base_offset) as i32;
                    let td = r.timestamp().wrapping_sub(self.base_timestamp);
                    let body = record_body_size(od, td, r);
                    varint_len(body as i32) + body
                })
                .sum::<usize>()
    }

    /// encode writes this batch with its fields as they are (nothing is derived: see
    /// [`derive_from_records`](Self::derive_from_records)), compressing at `level` (the codec's
    /// default if `None`). Magic 0 and 1 write a legacy message set: one message per record, or
    /// one wrapper message when compressed.
    pub fn encode(&self, level: Option<i32>) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.uncompressed_size());
        self.encode_into(&mut out, level)?;
        Ok(out)
    }

    /// encode_into appends the encoded batch to `out` (see [`encode`](Self::encode)).
    pub fn encode_into(&self, out: &mut Vec<u8>, level: Option<i32>) -> Result<()> {
        match self.magic {
            2 => self.encode_v2(&self.records, out, level),
            0 | 1 => legacy::encode(self, out, level),
            m => Err(invalid(format!("magic {m} is not 0, 1 or 2"))),
        }
    }

    /// encode_with is [`encode_into`](Self::encode_into) with `records` in place of
    /// `self.records` (which it ignores): records decoded in place encode without a copy.
    pub fn encode_with<R: RecordFields>(
        &self,
        records: &[R],
        out: &mut Vec<u8>,
        level: Option<i32>,
    ) -> Result<()> {
        if self.magic == 2 {
            out.reserve(self.v2_size(records));
            return self.encode_v2(records, out, level);
        }
        let owned = records
            .iter()
            .map(|r| Record {
                offset: r.offset(),
                timestamp: r.timestamp(),
                key: r.key().map(<[u8]>::to_vec),
                value: r.value().map(<[u8]>::to_vec),
                headers: r
                    .headers()
                    .map(|(k, v)| Header {
                        key: String::from_utf8_lossy(k).into_owned(),
                        value: v.map(<[u8]>::to_vec),
                    })
                    .collect(),
            })
            .collect();
        RecordBatch {
            fields: self.fields,
            records: owned,
        }
        .encode_into(out, level)
    }

    fn encode_v2<R: RecordFields>(
        &self,
        records: &[R],
        out: &mut Vec<u8>,
        level: Option<i32>,
    ) -> Result<()> {
        self.compression.check_level(level)?;
        if self.base_timestamp < 0 && self.base_timestamp != NO_TIMESTAMP {
            return Err(invalid(format!(
                "invalid base timestamp {}",
                self.base_timestamp
            )));
        }
        if self.timestamp_type == TimestampType::NoTimestampType {
            return Err(invalid(
                "a magic 2 batch needs CreateTime or LogAppendTime".into(),
            ));
        }
        let count = len_i32(records.len(), "record count")?;
        let start = out.len();
        out.resize(start + BATCH_OVERHEAD, 0);
        if self.compression == Compression::None {
            let mut w = Writer {
                buf: std::mem::take(out),
            };
            let r = self.write_records(records, &mut w);
            *out = w.into_inner();
            r?;
        } else {
            let size = self.v2_size(records) - BATCH_OVERHEAD;
            let mut w = Writer::with_capacity(size);
            self.write_records(records, &mut w)?;
            compression::compress(self.compression, level, 2, &w.buf, out)?;
        }
        let length = len_i32(out.len() - start - header::LOG_OVERHEAD, "batch")?;
        BatchHeader::from_fields(&self.fields, length, count).write(&mut out[start..]);
        Ok(())
    }

    fn write_records<R: RecordFields>(&self, records: &[R], w: &mut Writer) -> Result<()> {
        for r in records {
            let od = r
                .offset()
                .checked_sub(self.base_offset)
                .and_then(|d| i32::try_from(d).ok())
                .ok_or_else(|| {
                    invalid(format!(
                        "record offset {} is not within 2^31 of base offset {}",
                        r.offset(),
                        self.base_offset
                    ))
                })?;
            let td = r
                .timestamp()
                .checked_sub(self.base_timestamp)
                .ok_or_else(|| {
                    invalid(format!(
                        "record timestamp {} is too far from base {}",
                        r.timestamp(),
                        self.base_timestamp
                    ))
                })?;
            write_record(w, od, td, r)?;
        }
        Ok(())
    }

    /// decode_v2 reads one v2 batch that fills `batch` exactly (its length field agreeing).
    pub(super) fn decode_v2<'a>(
        batch: &'a [u8],
        opts: &DecodeOptions,
        budget: &mut Budget,
    ) -> Result<DecodedBatch<'a>> {
        let h = BatchHeader::parse_with(batch, opts.verify_crc)?;
        let fields = h.fields()?;
        let body = &batch[BATCH_OVERHEAD..h.size()];
        let compression = fields.compression;
        let data: Cow<'a, [u8]> = match compression {
            Compression::None => Cow::Borrowed(body),
            c => Cow::Owned(compression::decompress(c, 2, body, budget)?),
        };
        let log_append_time =
            (h.timestamp_type() == TimestampType::LogAppendTime).then_some(h.max_timestamp);
        let mut spans =
            Vec::with_capacity((h.records_count as usize).min(data.len() / MIN_RECORD_SIZE));
        let mut r = Reader::new(&data);
        for i in 0..h.records_count {
            if r.remaining() == 0 {
                return Err(Error::corrupt(
                    Corruption::RecordCount,
                    format!(
                        "batch declares {} records, its bytes end after {i}",
                        h.records_count
                    ),
                ));
            }
            let span = read_record(&mut r, h.base_offset, h.base_timestamp, log_append_time)
                .map_err(|e| e.into_corrupt(Corruption::Record))?;
            spans.push(span);
        }
        // Kafka checks that the records fill the batch, except for an empty batch.
        if h.records_count > 0 && r.remaining() > 0 {
            return Err(Error::corrupt(
                Corruption::RecordCount,
                format!(
                    "incorrect declared batch size: {} bytes remain after {} records",
                    r.remaining(),
                    h.records_count
                ),
            ));
        }
        let batch = RecordBatch {
            fields,
            records: Vec::new(),
        };
        Ok(DecodedBatch { batch, data, spans })
    }
}

/// MIN_RECORD_SIZE is the smallest v2 record: a length and six one-byte fields.
const MIN_RECORD_SIZE: usize = 7;

/// record_body_size is the size of a v2 record after its length varint.
pub fn record_body_size<R: RecordFields>(offset_delta: i32, timestamp_delta: i64, r: &R) -> usize {
    1 + varlong_len(timestamp_delta)
        + varint_len(offset_delta)
        + opt_len(r.key())
        + opt_len(r.value())
        + varint_len(r.header_count() as i32)
        + r.headers()
            .map(|(k, v)| varint_len(k.len() as i32) + k.len() + opt_len(v))
            .sum::<usize>()
}

fn write_opt_bytes(w: &mut Writer, b: Option<&[u8]>, what: &str) -> Result<()> {
    match b {
        None => w.varint(-1),
        Some(v) => {
            w.varint(len_i32(v.len(), what)?);
            w.raw(v);
        }
    }
    Ok(())
}

fn write_record<R: RecordFields>(
    w: &mut Writer,
    offset_delta: i32,
    timestamp_delta: i64,
    r: &R,
) -> Result<()> {
    let body = len_i32(record_body_size(offset_delta, timestamp_delta, r), "record")?;
    w.varint(body);
    w.i8(0);
    w.varlong(timestamp_delta);
    w.varint(offset_delta);
    write_opt_bytes(w, r.key(), "key")?;
    write_opt_bytes(w, r.value(), "value")?;
    w.varint(len_i32(r.header_count(), "header count")?);
    for (k, v) in r.headers() {
        w.varint(len_i32(k.len(), "header key")?);
        w.raw(k);
        write_opt_bytes(w, v, "header value")?;
    }
    Ok(())
}

/// bad_record is a record that does not read (Kafka's `InvalidRecordException`).
fn bad_record(m: String) -> Error {
    Error::corrupt(Corruption::Record, m)
}

/// read_record checks one v2 record, as Kafka's `DefaultRecord.readFrom` reads it, and returns
/// where its parts are in the reader's buffer.
fn read_record(
    r: &mut Reader<'_>,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
) -> Result<RecordSpan> {
    let size = r.varint()?;
    if size < 0 {
        return Err(bad_record(format!("invalid record size {size}")));
    }
    let body = r.take(size as usize, "record")?;
    let at = r.position() - body.len();
    let mut b = Reader::new(body);
    let _attributes = b.i8()?;
    let timestamp_delta = b.varlong()?;
    let offset_delta = b.varint()?;
    let place =
        |b: &Reader<'_>, v: Option<&[u8]>| v.map(|v| (at + b.position() - v.len(), v.len()));
    let key = read_len_bytes(&mut b, "record key")?;
    let key = place(&b, key);
    let value = read_len_bytes(&mut b, "record value")?;
    let value = place(&b, value);
    let n_headers = b.varint()?;
    if n_headers < 0 || n_headers as usize > b.remaining() {
        return Err(bad_record(format!(
            "invalid number of record headers {n_headers}"
        )));
    }
    let headers_at = at + b.position();
    for _ in 0..n_headers {
        read_header(&mut b)?;
    }
    if b.remaining() != 0 {
        return Err(bad_record(format!(
            "invalid record size: expected to read {size} bytes, read {}",
            b.position()
        )));
    }
    Ok(RecordSpan {
        offset: base_offset.wrapping_add(offset_delta as i64),
        timestamp: log_append_time.unwrap_or(base_timestamp.wrapping_add(timestamp_delta)),
        key,
        value,
        headers: (headers_at, at + b.position() - headers_at),
        header_count: n_headers as usize,
    })
}
