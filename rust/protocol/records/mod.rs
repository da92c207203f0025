//! Record batches: the record format of Produce and Fetch, and of the log.
//!
//! - [`RecordBatch`] is the owned model of one batch of any magic; `encode` writes it and
//!   [`decode_batches`] reads a buffer of concatenated batches (magic 0, 1 and 2, as a Fetch
//!   response carries them).
//! - [`decode_batch_views`] reads the same without copying records: each [`DecodedBatch`] keeps
//!   the batch's record bytes (borrowed, or decompressed) and a [`RecordSpan`] per record;
//!   [`RecordBatch::encode_with`] writes records straight from such [`RecordRef`]s.
//! - [`BatchHeader`] reads a v2 batch's header and checks its CRC-32C without decoding its
//!   records; [`set_base_offset`], [`set_partition_leader_epoch`] and [`set_max_timestamp`]
//!   rewrite it in place, which is all a broker does to a produced batch when it appends it.
//! - [`batches`] walks a buffer batch by batch without decoding anything. Like Kafka's
//!   `ByteBufferLogInputStream`, it stops quietly at a last batch cut short (fetch responses end
//!   with one when the size limit falls inside a batch, and clients skip it) and fails on a size
//!   below the minimum or an unknown magic.
//! - Control batches hold control records ([`ControlRecordKey`], [`EndTransactionMarker`]).
//!
//! Bad bytes give [`Error::CorruptRecord`] (its [`Corruption`] says what is wrong), never a panic; every length is
//! checked against the bytes present before it is used, and decompression is bounded by
//! [`DecodeOptions::max_decompressed_size`] for the whole call.

mod batch;
pub mod compression;
mod control;
mod header;
mod legacy;
pub mod lz4;
mod view;

#[cfg(test)]
mod tests;

pub use batch::{
    record_body_size, BatchFields, Header, Record, RecordBatch, RecordFields, TimestampType,
    NO_TIMESTAMP,
};
pub use compression::{Budget, Compression, COMPRESSION_NAMES, DEFAULT_MAX_DECOMPRESSED_SIZE};
pub use control::{ControlRecordKey, ControlRecordType, EndTransactionMarker};
pub use header::{
    compute_crc, increment_sequence, set_base_offset, set_last_offset, set_max_timestamp,
    set_partition_leader_epoch, BatchHeader, BATCH_OVERHEAD, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD,
};
pub use legacy::{RECORD_OVERHEAD_V0, RECORD_OVERHEAD_V1};
pub use view::{DecodedBatch, HeaderIter, RecordRef, RecordSpan};

use crate::errors::{Corruption, Error, Result};

/// DecodeOptions are the limits and checks of one decode call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// max_decompressed_size bounds the bytes decompression may produce in the whole call.
    pub max_decompressed_size: usize,
    /// verify_crc checks each batch's CRC-32C (magic 2) or each message's CRC-32 (magic 0/1),
    /// as Kafka's consumer does with `check.crcs=true`, its default.
    pub verify_crc: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE,
            verify_crc: true,
        }
    }
}

/// RawBatch is one batch (or legacy entry) found in a buffer, not decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawBatch<'a> {
    /// position is where the batch starts in the buffer.
    pub position: usize,
    pub magic: i8,
    /// bytes is the whole batch, offset and length fields included.
    pub bytes: &'a [u8],
}

impl<'a> RawBatch<'a> {
    /// base_offset is the first field (for a compressed legacy entry, its last offset).
    pub fn base_offset(&self) -> i64 {
        i64::from_be_bytes(self.bytes[..8].try_into().unwrap_or_default())
    }

    /// decode reads the batch, leaving its records in place (see [`DecodedBatch`]) and drawing
    /// decompression from `budget`.
    pub fn decode(&self, opts: &DecodeOptions, budget: &mut Budget) -> Result<DecodedBatch<'a>> {
        if self.magic == 2 {
            RecordBatch::decode_v2(self.bytes, opts, budget)
        } else {
            legacy::decode(self.bytes, opts, budget)
        }
    }
}

/// Batches iterates over the batches of a buffer (see [`batches`]). After an error it ends.
#[derive(Debug, Clone)]
pub struct Batches<'a> {
    buf: &'a [u8],
    pos: usize,
    done: bool,
}

/// batches walks the concatenated batches of `buf`.
pub fn batches(buf: &[u8]) -> Batches<'_> {
    Batches {
        buf,
        pos: 0,
        done: false,
    }
}

impl<'a> Batches<'a> {
    /// rest is what is left unread: after the iteration ended without error, the truncated
    /// last batch (empty if there is none).
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    fn next_batch(&mut self) -> Result<Option<RawBatch<'a>>> {
        let rest = self.rest();
        if rest.len() < LOG_OVERHEAD {
            return Ok(None);
        }
        let size = i32::from_be_bytes([rest[8], rest[9], rest[10], rest[11]]);
        if size < RECORD_OVERHEAD_V0 as i32 {
            return Err(Error::corrupt(
                Corruption::Framing,
                format!(
                    "record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
                ),
            ));
        }
        if rest.len() < HEADER_SIZE_UP_TO_MAGIC {
            return Ok(None);
        }
        let magic = rest[16] as i8;
        if !(0..=2).contains(&magic) {
            return Err(Error::corrupt(
                Corruption::Framing,
                format!("invalid magic found in record: {magic}"),
            ));
        }
        let total = LOG_OVERHEAD + size as usize;
        if rest.len() < total {
            return Ok(None);
        }
        let b = RawBatch {
            position: self.pos,
            magic,
            bytes: &rest[..total],
        };
        self.pos += total;
        Ok(Some(b))
    }
}

impl<'a> Iterator for Batches<'a> {
    type Item = Result<RawBatch<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_batch() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// decode_batches reads every complete batch of `buf` with its records; a truncated last batch
/// is skipped, as Kafka's clients skip it.
pub fn decode_batches(buf: &[u8], opts: &DecodeOptions) -> Result<Vec<RecordBatch>> {
    decode_batch_views(buf, opts)
        .map(|v| v.into_iter().map(DecodedBatch::into_record_batch).collect())
}

/// decode_batch_views is [`decode_batches`] without copying the records out.
pub fn decode_batch_views<'a>(
    buf: &'a [u8],
    opts: &DecodeOptions,
) -> Result<Vec<DecodedBatch<'a>>> {
    let mut budget = Budget::new(opts.max_decompressed_size);
    let mut out = Vec::new();
    for b in batches(buf) {
        out.push(b?.decode(opts, &mut budget)?);
    }
    Ok(out)
}

/// HeaderAt is the header of a v2 batch and where the batch starts in its buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderAt {
    pub position: usize,
    pub header: BatchHeader,
}

/// read_headers reads the header of every complete v2 batch of `buf` (a truncated last batch is
/// left out), checking each CRC when `opts.verify_crc`. With `verify_records` it also reads every
/// batch's records (decompressing within `opts.max_decompressed_size`) and keeps none of them:
/// what a broker checks of a produced record set before it appends it as received. A legacy
/// (magic 0 or 1) entry is a [`Corruption::Framing`] error.
pub fn read_headers(
    buf: &[u8],
    opts: &DecodeOptions,
    verify_records: bool,
) -> Result<Vec<HeaderAt>> {
    let mut budget = Budget::new(opts.max_decompressed_size);
    let mut out = Vec::new();
    for b in batches(buf) {
        let b = b?;
        let header = BatchHeader::parse_with(b.bytes, opts.verify_crc)?;
        if verify_records {
            b.decode(opts, &mut budget)?;
        }
        out.push(HeaderAt {
            position: b.position,
            header,
        });
    }
    Ok(out)
}
