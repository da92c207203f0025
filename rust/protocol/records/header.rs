//! BatchHeader: the 61-byte header of a v2 record batch, read and rewritten in place without
//! touching the records, which is how a broker appends a produced batch.
//!
//! Layout (big-endian; Kafka's `DefaultRecordBatch`): baseOffset int64, length int32 (bytes after
//! this field), partitionLeaderEpoch int32, magic int8 (2), crc uint32, attributes int16,
//! lastOffsetDelta int32, baseTimestamp int64, maxTimestamp int64, producerId int64,
//! producerEpoch int16, baseSequence int32, recordsCount int32. The CRC-32C covers everything
//! from the attributes to the end of the batch, so the base offset and the partition leader
//! epoch can be rewritten without recomputing it; the max timestamp cannot.

use super::batch::{BatchFields, TimestampType};
use super::compression::Compression;
use crate::errors::{Corruption, Error, Result};

pub const BASE_OFFSET_OFFSET: usize = 0;
pub const LENGTH_OFFSET: usize = 8;
pub const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
pub const MAGIC_OFFSET: usize = 16;
pub const CRC_OFFSET: usize = 17;
pub const ATTRIBUTES_OFFSET: usize = 21;
pub const LAST_OFFSET_DELTA_OFFSET: usize = 23;
pub const BASE_TIMESTAMP_OFFSET: usize = 27;
pub const MAX_TIMESTAMP_OFFSET: usize = 35;
pub const PRODUCER_ID_OFFSET: usize = 43;
pub const PRODUCER_EPOCH_OFFSET: usize = 51;
pub const BASE_SEQUENCE_OFFSET: usize = 53;
pub const RECORDS_COUNT_OFFSET: usize = 57;
/// BATCH_OVERHEAD is the size of the v2 header (Kafka's `RECORD_BATCH_OVERHEAD`).
pub const BATCH_OVERHEAD: usize = 61;
/// LOG_OVERHEAD is the offset and length that start every batch or legacy entry.
pub const LOG_OVERHEAD: usize = 12;
/// HEADER_SIZE_UP_TO_MAGIC is what must be present to know how to read a batch.
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;

pub const COMPRESSION_MASK: i16 = 0x07;
pub const TIMESTAMP_TYPE_MASK: i16 = 0x08;
pub const TRANSACTIONAL_MASK: i16 = 0x10;
pub const CONTROL_MASK: i16 = 0x20;
pub const DELETE_HORIZON_MASK: i16 = 0x40;

/// BatchHeader is the header of a v2 record batch, as read; the records stay in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    /// length is the Length field: the batch's size minus [`LOG_OVERHEAD`].
    pub length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

fn be<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[at..at + N]);
    a
}

fn framing(reason: String) -> Error {
    Error::corrupt(Corruption::Framing, reason)
}

/// compute_crc is the CRC-32C of a v2 batch (`batch` holding exactly one batch).
pub fn compute_crc(batch: &[u8]) -> u32 {
    crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..])
}

/// batch_len checks that `buf` starts with a v2 batch header whose whole batch is present and
/// returns the batch's size.
fn batch_len(buf: &[u8]) -> Result<usize> {
    if let Some(&magic) = buf.get(MAGIC_OFFSET) {
        if magic != 2 {
            return Err(Error::corrupt(
                Corruption::Framing,
                format!("magic {} is not a v2 record batch", magic as i8),
            ));
        }
    }
    if buf.len() < BATCH_OVERHEAD {
        return Err(framing(format!(
            "truncated batch header: {} bytes, a v2 header has {BATCH_OVERHEAD}",
            buf.len()
        )));
    }
    let length = i32::from_be_bytes(be(buf, LENGTH_OFFSET));
    if length < (BATCH_OVERHEAD - LOG_OVERHEAD) as i32 {
        return Err(framing(format!(
            "batch length {length} is below the minimum {}",
            BATCH_OVERHEAD - LOG_OVERHEAD
        )));
    }
    let size = LOG_OVERHEAD + length as usize;
    if size > buf.len() {
        return Err(framing(format!(
            "truncated batch: {size} bytes declared, {} present",
            buf.len()
        )));
    }
    Ok(size)
}

impl BatchHeader {
    /// parse reads the v2 batch at the start of `buf` (more may follow it) and checks its
    /// length, record count, codec and CRC-32C. It reads no record.
    pub fn parse(buf: &[u8]) -> Result<BatchHeader> {
        Self::parse_with(buf, true)
    }

    /// parse_with is [`parse`](Self::parse), checking the CRC only if `verify_crc`.
    pub fn parse_with(buf: &[u8], verify_crc: bool) -> Result<BatchHeader> {
        let size = batch_len(buf)?;
        let h = BatchHeader {
            base_offset: i64::from_be_bytes(be(buf, BASE_OFFSET_OFFSET)),
            length: i32::from_be_bytes(be(buf, LENGTH_OFFSET)),
            partition_leader_epoch: i32::from_be_bytes(be(buf, PARTITION_LEADER_EPOCH_OFFSET)),
            magic: buf[MAGIC_OFFSET] as i8,
            crc: u32::from_be_bytes(be(buf, CRC_OFFSET)),
            attributes: i16::from_be_bytes(be(buf, ATTRIBUTES_OFFSET)),
            last_offset_delta: i32::from_be_bytes(be(buf, LAST_OFFSET_DELTA_OFFSET)),
            base_timestamp: i64::from_be_bytes(be(buf, BASE_TIMESTAMP_OFFSET)),
            max_timestamp: i64::from_be_bytes(be(buf, MAX_TIMESTAMP_OFFSET)),
            producer_id: i64::from_be_bytes(be(buf, PRODUCER_ID_OFFSET)),
            producer_epoch: i16::from_be_bytes(be(buf, PRODUCER_EPOCH_OFFSET)),
            base_sequence: i32::from_be_bytes(be(buf, BASE_SEQUENCE_OFFSET)),
            records_count: i32::from_be_bytes(be(buf, RECORDS_COUNT_OFFSET)),
        };
        if h.records_count < 0 {
            return Err(Error::corrupt(
                Corruption::RecordCount,
                format!("invalid record count {}", h.records_count),
            ));
        }
        h.compression()?;
        if verify_crc {
            let crc = compute_crc(&buf[..size]);
            if crc != h.crc {
                return Err(Error::corrupt(
                    Corruption::Crc,
                    format!(
                        "record batch is corrupt (stored crc = {}, computed crc = {crc})",
                        h.crc
                    ),
                ));
            }
        }
        Ok(h)
    }

    /// from_fields is the header of a v2 batch with these fields, `length` (the batch's size
    /// minus [`LOG_OVERHEAD`]) and `records_count` records; its CRC is computed by
    /// [`write`](Self::write).
    pub fn from_fields(f: &BatchFields, length: i32, records_count: i32) -> BatchHeader {
        BatchHeader {
            base_offset: f.base_offset,
            length,
            partition_leader_epoch: f.partition_leader_epoch,
            magic: 2,
            crc: 0,
            attributes: f.attributes(),
            last_offset_delta: f.last_offset_delta,
            base_timestamp: f.base_timestamp,
            max_timestamp: f.max_timestamp,
            producer_id: f.producer_id,
            producer_epoch: f.producer_epoch,
            base_sequence: f.base_sequence,
            records_count,
        }
    }

    /// fields reads the header's fields in logical form; an unknown codec id is an error.
    pub fn fields(&self) -> Result<BatchFields> {
        Ok(BatchFields {
            base_offset: self.base_offset,
            partition_leader_epoch: self.partition_leader_epoch,
            magic: self.magic,
            compression: self.compression()?,
            timestamp_type: self.timestamp_type(),
            is_transactional: self.is_transactional(),
            is_control: self.is_control(),
            has_delete_horizon: self.has_delete_horizon(),
            last_offset_delta: self.last_offset_delta,
            base_timestamp: self.base_timestamp,
            max_timestamp: self.max_timestamp,
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            base_sequence: self.base_sequence,
        })
    }

    /// write puts this header into the first 61 bytes of `batch` and the CRC-32C of the whole
    /// batch into its CRC field (`self.crc` is ignored). `batch` must hold exactly the batch.
    pub fn write(&self, batch: &mut [u8]) {
        batch[BASE_OFFSET_OFFSET..8].copy_from_slice(&self.base_offset.to_be_bytes());
        batch[LENGTH_OFFSET..12].copy_from_slice(&self.length.to_be_bytes());
        batch[PARTITION_LEADER_EPOCH_OFFSET..16]
            .copy_from_slice(&self.partition_leader_epoch.to_be_bytes());
        batch[MAGIC_OFFSET] = self.magic as u8;
        batch[ATTRIBUTES_OFFSET..23].copy_from_slice(&self.attributes.to_be_bytes());
        batch[LAST_OFFSET_DELTA_OFFSET..27].copy_from_slice(&self.last_offset_delta.to_be_bytes());
        batch[BASE_TIMESTAMP_OFFSET..35].copy_from_slice(&self.base_timestamp.to_be_bytes());
        batch[MAX_TIMESTAMP_OFFSET..43].copy_from_slice(&self.max_timestamp.to_be_bytes());
        batch[PRODUCER_ID_OFFSET..51].copy_from_slice(&self.producer_id.to_be_bytes());
        batch[PRODUCER_EPOCH_OFFSET..53].copy_from_slice(&self.producer_epoch.to_be_bytes());
        batch[BASE_SEQUENCE_OFFSET..57].copy_from_slice(&self.base_sequence.to_be_bytes());
        batch[RECORDS_COUNT_OFFSET..61].copy_from_slice(&self.records_count.to_be_bytes());
        let crc = compute_crc(batch);
        batch[CRC_OFFSET..21].copy_from_slice(&crc.to_be_bytes());
    }

    /// size is the whole batch's size in bytes.
    pub fn size(&self) -> usize {
        LOG_OVERHEAD + self.length as usize
    }

    /// compression is the codec of attribute bits 0-2.
    pub fn compression(&self) -> Result<Compression> {
        Compression::from_id((self.attributes & COMPRESSION_MASK) as u8)
    }

    /// timestamp_type is CreateTime or LogAppendTime (attribute bit 3).
    pub fn timestamp_type(&self) -> TimestampType {
        if self.attributes & TIMESTAMP_TYPE_MASK != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// is_transactional is attribute bit 4.
    pub fn is_transactional(&self) -> bool {
        self.attributes & TRANSACTIONAL_MASK != 0
    }

    /// is_control is attribute bit 5: the batch holds control records (transaction markers).
    pub fn is_control(&self) -> bool {
        self.attributes & CONTROL_MASK != 0
    }

    /// has_delete_horizon is attribute bit 6 (KIP-534).
    pub fn has_delete_horizon(&self) -> bool {
        self.attributes & DELETE_HORIZON_MASK != 0
    }

    /// last_offset is base_offset + last_offset_delta.
    pub fn last_offset(&self) -> i64 {
        last_offset(self.base_offset, self.last_offset_delta)
    }

    /// next_offset is the offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// last_sequence is Kafka's `lastSequence`: base_sequence + last_offset_delta, wrapping
    /// past i32::MAX to 0; -1 when the batch has no sequence.
    pub fn last_sequence(&self) -> i32 {
        last_sequence(self.base_sequence, self.last_offset_delta)
    }
}

/// last_offset is a batch's last offset: its base offset plus its last offset delta.
pub(super) fn last_offset(base_offset: i64, last_offset_delta: i32) -> i64 {
    base_offset.wrapping_add(last_offset_delta as i64)
}

/// last_sequence is Kafka's `DefaultRecordBatch.lastSequence`: -1 for a batch without sequence.
pub(super) fn last_sequence(base_sequence: i32, last_offset_delta: i32) -> i32 {
    if base_sequence == -1 {
        -1
    } else {
        increment_sequence(base_sequence, last_offset_delta)
    }
}

/// increment_sequence is Kafka's `DefaultRecordBatch.incrementSequence`.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX - increment {
        increment - (i32::MAX - sequence) - 1
    } else {
        sequence + increment
    }
}

/// set_base_offset rewrites the base offset of the v2 batch at the start of `batch`. The CRC
/// does not cover it, so nothing else changes.
pub fn set_base_offset(batch: &mut [u8], base_offset: i64) -> Result<()> {
    batch_len(batch)?;
    batch[BASE_OFFSET_OFFSET..8].copy_from_slice(&base_offset.to_be_bytes());
    Ok(())
}

/// set_last_offset is Kafka's `setLastOffset`: base offset = `last_offset` - last offset delta.
pub fn set_last_offset(batch: &mut [u8], last_offset: i64) -> Result<()> {
    batch_len(batch)?;
    let delta = i32::from_be_bytes(be(batch, LAST_OFFSET_DELTA_OFFSET));
    set_base_offset(batch, last_offset.wrapping_sub(delta as i64))
}

/// set_partition_leader_epoch rewrites the partition leader epoch (not covered by the CRC).
pub fn set_partition_leader_epoch(batch: &mut [u8], epoch: i32) -> Result<()> {
    batch_len(batch)?;
    batch[PARTITION_LEADER_EPOCH_OFFSET..16].copy_from_slice(&epoch.to_be_bytes());
    Ok(())
}

/// set_max_timestamp is Kafka's `setMaxTimestamp`: it sets the timestamp type bit and the max
/// timestamp and recomputes the CRC, unless both are unchanged. A broker stamping
/// LogAppendTime calls it with the append time.
pub fn set_max_timestamp(
    batch: &mut [u8],
    timestamp_type: TimestampType,
    max_timestamp: i64,
) -> Result<()> {
    let size = batch_len(batch)?;
    let batch = &mut batch[..size];
    let attributes = i16::from_be_bytes(be(batch, ATTRIBUTES_OFFSET));
    let attributes = match timestamp_type {
        TimestampType::CreateTime => attributes & !TIMESTAMP_TYPE_MASK,
        TimestampType::LogAppendTime => attributes | TIMESTAMP_TYPE_MASK,
        TimestampType::NoTimestampType => {
            return Err(Error::InvalidArgument(
                "a v2 batch needs CreateTime or LogAppendTime".into(),
            ))
        }
    };
    let current = i64::from_be_bytes(be(batch, MAX_TIMESTAMP_OFFSET));
    if current == max_timestamp && i16::from_be_bytes(be(batch, ATTRIBUTES_OFFSET)) == attributes {
        return Ok(());
    }
    batch[ATTRIBUTES_OFFSET..23].copy_from_slice(&attributes.to_be_bytes());
    batch[MAX_TIMESTAMP_OFFSET..43].copy_from_slice(&max_timestamp.to_be_bytes());
    let crc = compute_crc(batch);
    batch[CRC_OFFSET..21].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}
