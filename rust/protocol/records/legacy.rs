//! Legacy message sets (magic 0 and 1), read as Kafka's `AbstractLegacyRecordBatch` reads them
//! and written as its `MemoryRecordsBuilder` wrote them.
//!
//! An entry is `offset int64, size int32, message`; a message is `crc uint32 (CRC-32 over the
//! rest), magic int8, attributes int8, [timestamp int64, magic 1], key bytes, value bytes`, with
//! int32 lengths and -1 (any negative length) for null. Attribute bits 0-2 are the codec (no zstd);
//! bit 3 (magic 1) is LogAppendTime. A compressed message is a wrapper whose value is a compressed
//! message set of inner messages. Inner offsets of magic 1 are relative: the wrapper carries the
//! absolute offset of the last inner message (or 0, as some librdkafka versions sent it), so
//! inner offset i is at `wrapper - last_inner + i`. Magic 0 inner offsets are absolute.
//! Inner magic 1 messages take the wrapper's timestamp when the wrapper is LogAppendTime.

use std::borrow::Cow;

use super::batch::{BatchFields, RecordBatch, TimestampType, NO_TIMESTAMP};
use super::compression::{self, Budget, Compression};
use super::header::LOG_OVERHEAD;
use super::view::{DecodedBatch, RecordSpan};
use super::DecodeOptions;
use crate::errors::{Corruption, Error, Result};

/// RECORD_OVERHEAD_V0 is the smallest magic 0 message (Kafka's `LegacyRecord.RECORD_OVERHEAD_V0`).
pub const RECORD_OVERHEAD_V0: usize = 14;
/// RECORD_OVERHEAD_V1 is the smallest magic 1 message.
pub const RECORD_OVERHEAD_V1: usize = 22;
const TIMESTAMP_TYPE_MASK: i8 = 0x08;

/// framing is a legacy message set whose sizes, magic or offsets cannot be (Kafka's
/// `CorruptRecordException`).
fn framing(m: String) -> Error {
    Error::corrupt(Corruption::Framing, m)
}

struct Message<'a> {
    offset: i64,
    magic: i8,
    attributes: i8,
    timestamp: i64,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn sized<'a>(msg: &'a [u8], at: usize, what: &str) -> Result<(Option<&'a [u8]>, usize)> {
    if msg.len() < at + 4 {
        return Err(framing(format!("truncated legacy message {what} length")));
    }
    let n = be_i32(msg, at);
    if n < 0 {
        return Ok((None, at + 4));
    }
    let end = (at + 4).checked_add(n as usize).filter(|&e| e <= msg.len());
    match end {
        Some(end) => Ok((Some(&msg[at + 4..end]), end)),
        None => Err(framing(format!(
            "legacy message {what} of {n} bytes is past the message's end"
        ))),
    }
}

/// parse_message reads one message (the bytes after offset and size).
fn parse_message(offset: i64, msg: &[u8], verify_crc: bool) -> Result<Message<'_>> {
    if msg.len() < RECORD_OVERHEAD_V0 {
        return Err(framing(format!(
            "legacy message of {} bytes is below the minimum 14",
            msg.len()
        )));
    }
    let magic = msg[4] as i8;
    let key_at = match magic {
        0 => 6,
        1 if msg.len() >= RECORD_OVERHEAD_V1 => 14,
        1 => {
            return Err(framing(format!(
                "magic 1 message of {} bytes is below the minimum 22",
                msg.len()
            )))
        }
        m => return Err(framing(format!("invalid magic {m} in a legacy message"))),
    };
    if verify_crc {
        let stored = u32::from_be_bytes([msg[0], msg[1], msg[2], msg[3]]);
        let computed = crc32fast::hash(&msg[4..]);
        if stored != computed {
            return Err(Error::corrupt(
                Corruption::Crc,
                format!("record is corrupt (stored crc = {stored}, computed crc = {computed})"),
            ));
        }
    }
    let timestamp = if magic == 1 {
        i64::from_be_bytes([
            msg[6], msg[7], msg[8], msg[9], msg[10], msg[11], msg[12], msg[13],
        ])
    } else {
        NO_TIMESTAMP
    };
    let (key, at) = sized(msg, key_at, "key")?;
    let (value, _) = sized(msg, at, "value")?;
    Ok(Message {
        offset,
        magic,
        attributes: msg[5] as i8,
        timestamp,
        key,
        value,
    })
}

/// place is where `part` (a slice of `data`) starts in `data`, and its length.
fn place(data: &[u8], part: Option<&[u8]>) -> Option<(usize, usize)> {
    part.map(|p| (p.as_ptr() as usize - data.as_ptr() as usize, p.len()))
}

fn span(data: &[u8], m: &Message<'_>, offset: i64, timestamp: i64) -> RecordSpan {
    RecordSpan {
        offset,
        timestamp,
        key: place(data, m.key),
        value: place(data, m.value),
        headers: (0, 0),
        header_count: 0,
    }
}

/// decode reads one legacy entry that fills `entry` exactly.
pub(super) fn decode<'a>(
    entry: &'a [u8],
    opts: &DecodeOptions,
    budget: &mut Budget,
) -> Result<DecodedBatch<'a>> {
    let offset = i64::from_be_bytes([
        entry[0], entry[1], entry[2], entry[3], entry[4], entry[5], entry[6], entry[7],
    ]);
    let outer = parse_message(offset, &entry[LOG_OVERHEAD..], opts.verify_crc)?;
    let compression = Compression::from_id((outer.attributes & 0x07) as u8)?;
    let timestamp_type = match outer.magic {
        0 => TimestampType::NoTimestampType,
        _ if outer.attributes & TIMESTAMP_TYPE_MASK != 0 => TimestampType::LogAppendTime,
        _ => TimestampType::CreateTime,
    };
    let mut batch = RecordBatch {
        fields: BatchFields {
            base_offset: offset,
            magic: outer.magic,
            compression,
            timestamp_type,
            base_timestamp: outer.timestamp,
            max_timestamp: outer.timestamp,
            ..BatchFields::default()
        },
        records: Vec::new(),
    };
    if compression == Compression::None {
        let spans = vec![span(entry, &outer, offset, outer.timestamp)];
        return Ok(DecodedBatch {
            batch,
            data: Cow::Borrowed(entry),
            spans,
        });
    }
    if compression == Compression::Zstd {
        return Err(Error::corrupt(
            Corruption::Compression,
            "a legacy message cannot be zstd-compressed",
        ));
    }
    let Some(value) = outer.value else {
        return Err(framing(format!(
            "compressed magic {} message has a null value",
            outer.magic
        )));
    };
    let inner = compression::decompress(compression, outer.magic, value, budget)?;
    let mut messages = Vec::new();
    let mut pos = 0;
    // Kafka stops at an inner entry cut short, as its DataLogInputStream does.
    while inner.len() - pos >= LOG_OVERHEAD {
        let off = i64::from_be_bytes(inner[pos..pos + 8].try_into().unwrap_or_default());
        let size = be_i32(&inner, pos + 8);
        if size < RECORD_OVERHEAD_V0 as i32 {
            return Err(framing(format!(
                "inner message size {size} is below the minimum 14"
            )));
        }
        let start = pos + LOG_OVERHEAD;
        if inner.len() - start < size as usize {
            break;
        }
        let m = parse_message(off, &inner[start..start + size as usize], opts.verify_crc)?;
        if m.attributes & 0x07 != 0 {
            return Err(Error::corrupt(
                Corruption::Compression,
                "inner messages must not be compressed",
            ));
        }
        messages.push(m);
        pos = start + size as usize;
    }
    let Some(last) = messages.last() else {
        return Err(framing(
            "compressed message set has no inner messages".into(),
        ));
    };
    let absolute_base = if outer.magic == 1 {
        if offset == 0 {
            0
        } else if offset < last.offset {
            return Err(framing(format!(
                "wrapper offset {offset} is below the last inner offset {} and not zero",
                last.offset
            )));
        } else {
            offset - last.offset
        }
    } else {
        0
    };
    let log_append = timestamp_type == TimestampType::LogAppendTime;
    let spans: Vec<RecordSpan> = messages
        .iter()
        .map(|m| {
            let ts = match m.magic {
                0 => NO_TIMESTAMP,
                _ if log_append => outer.timestamp,
                _ => m.timestamp,
            };
            span(&inner, m, absolute_base.wrapping_add(m.offset), ts)
        })
        .collect();
    drop(messages);
    let first = spans[0].offset;
    let last = spans[spans.len() - 1].offset;
    batch.base_offset = first;
    batch.last_offset_delta = i32::try_from(last.wrapping_sub(first))
        .map_err(|_| framing(format!("inner offsets {first}..{last} span more than 2^31")))?;
    batch.base_timestamp = spans[0].timestamp;
    Ok(DecodedBatch {
        batch,
        data: Cow::Owned(inner),
        spans,
    })
}

fn message_size(magic: i8, key: Option<&[u8]>, value: Option<&[u8]>) -> usize {
    let overhead = if magic == 0 {
        RECORD_OVERHEAD_V0
    } else {
        RECORD_OVERHEAD_V1
    };
    overhead + key.map_or(0, <[u8]>::len) + value.map_or(0, <[u8]>::len)
}

/// uncompressed_size is the encoded size of `batch` as uncompressed legacy entries.
pub(super) fn uncompressed_size(batch: &RecordBatch) -> usize {
    batch
        .records
        .iter()
        .map(|r| LOG_OVERHEAD + message_size(batch.magic, r.key.as_deref(), r.value.as_deref()))
        .sum()
}

fn write_entry(
    out: &mut Vec<u8>,
    offset: i64,
    magic: i8,
    attributes: i8,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<()> {
    let size = message_size(magic, key, value);
    let size = i32::try_from(size)
        .map_err(|_| Error::InvalidArgument(format!("message of {size} bytes is too large")))?;
    if magic == 1 && timestamp < 0 && timestamp != NO_TIMESTAMP {
        return Err(Error::InvalidArgument(format!(
            "invalid message timestamp {timestamp}"
        )));
    }
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&size.to_be_bytes());
    let crc_at = out.len();
    out.extend_from_slice(&[0; 4]);
    out.push(magic as u8);
    out.push(attributes as u8);
    if magic == 1 {
        out.extend_from_slice(&timestamp.to_be_bytes());
    }
    for b in [key, value] {
        match b {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(b) => {
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(b);
            }
        }
    }
    let crc = crc32fast::hash(&out[crc_at + 4..]);
    out[crc_at..crc_at + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// encode writes `batch` (magic 0 or 1) as a legacy message set: one entry per record, or, when
/// compressed, one wrapper entry at the last record's offset whose inner offsets are relative
/// (magic 1) or absolute (magic 0), with the batch's max timestamp on the wrapper.
pub(super) fn encode(batch: &RecordBatch, out: &mut Vec<u8>, level: Option<i32>) -> Result<()> {
    let magic = batch.magic;
    if batch.records.iter().any(|r| !r.headers.is_empty()) {
        return Err(Error::InvalidArgument(format!(
            "magic {magic} records cannot carry headers"
        )));
    }
    if batch.compression == Compression::Zstd {
        return Err(Error::InvalidArgument(format!(
            "magic {magic} message sets cannot use zstd"
        )));
    }
    batch.compression.check_level(level)?;
    let ts_bit = if magic == 1 && batch.timestamp_type == TimestampType::LogAppendTime {
        TIMESTAMP_TYPE_MASK
    } else {
        0
    };
    let ts = |t: i64| if magic == 0 { NO_TIMESTAMP } else { t };
    if batch.compression == Compression::None {
        for r in &batch.records {
            write_entry(
                out,
                r.offset,
                magic,
                ts_bit,
                ts(r.timestamp),
                r.key.as_deref(),
                r.value.as_deref(),
            )?;
        }
        return Ok(());
    }
    let Some(first) = batch.records.first() else {
        return Err(Error::InvalidArgument(
            "a compressed legacy message set needs records".into(),
        ));
    };
    let mut inner = Vec::with_capacity(uncompressed_size(batch));
    for r in &batch.records {
        let offset = if magic == 1 {
            r.offset.wrapping_sub(first.offset)
        } else {
            r.offset
        };
        write_entry(
            &mut inner,
            offset,
            magic,
            ts_bit,
            ts(r.timestamp),
            r.key.as_deref(),
            r.value.as_deref(),
        )?;
    }
    let mut value = Vec::new();
    compression::compress(batch.compression, level, magic, &inner, &mut value)?;
    let last = batch.records[batch.records.len() - 1].offset;
    write_entry(
        out,
        last,
        magic,
        ts_bit | batch.compression.id() as i8,
        ts(batch.max_timestamp),
        None,
        Some(&value),
    )
}
