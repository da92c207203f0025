//! ProducerState: what a log remembers of each idempotent producer (Kafka's
//! `ProducerStateManager`, `ProducerStateEntry`, `ProducerAppendInfo`): its epoch and the
//! sequence ranges and offsets of its last five batches, so that a retry is answered with the
//! original offsets, a gap is refused, and an older epoch is fenced.
//!
//! Snapshots (`<offset>.snapshot`) hold the state as of an offset; a log loads the latest one
//! and replays the batches after it. kgroup's snapshot keeps all five batches of each producer
//! (Kafka's keeps only the last), so retries of any in-flight batch are still recognised after a
//! restart. Layout, big-endian: magic `KGPS`, version u16 (1), offset i64, count u32, then per
//! producer: id i64, epoch i16, last timestamp i64, batch count u8, per batch first sequence
//! i32, last sequence i32, first offset i64, last offset i64, timestamp i64; then the CRC-32C
//! of everything before it.

use std::collections::{HashMap, VecDeque};

use crate::errors::{Error, ErrorCode, Result};
use crate::protocol::primitives::Reader;
use crate::protocol::records::BatchHeader;

/// BATCHES_TO_RETAIN is Kafka's `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`.
pub const BATCHES_TO_RETAIN: usize = 5;

/// NO_PRODUCER_EPOCH is Kafka's `RecordBatch.NO_PRODUCER_EPOCH`.
const NO_EPOCH: i16 = -1;

/// BatchMeta is one remembered batch of a producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMeta {
    pub first_seq: i32,
    pub last_seq: i32,
    pub first_offset: i64,
    pub last_offset: i64,
    /// timestamp is the batch's max timestamp (its log append time under LogAppendTime).
    pub timestamp: i64,
}

/// ProducerEntry is the state of one producer id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerEntry {
    pub epoch: i16,
    pub batches: VecDeque<BatchMeta>,
    /// last_timestamp is the max timestamp of its last batch; expiry counts from it, as in Kafka.
    pub last_timestamp: i64,
}

impl ProducerEntry {
    fn empty() -> Self {
        ProducerEntry {
            epoch: NO_EPOCH,
            batches: VecDeque::new(),
            last_timestamp: -1,
        }
    }

    fn last_seq(&self) -> i32 {
        self.batches.back().map_or(-1, |b| b.last_seq)
    }

    /// last_offset is the last offset of the producer's last batch (-1: none).
    pub fn last_offset(&self) -> i64 {
        self.batches.back().map_or(-1, |b| b.last_offset)
    }

    fn add(&mut self, epoch: i16, b: BatchMeta) {
        if epoch != self.epoch {
            self.batches.clear();
            self.epoch = epoch;
        }
        self.batches.push_back(b);
        if self.batches.len() > BATCHES_TO_RETAIN {
            self.batches.pop_front();
        }
        self.last_timestamp = b.timestamp;
    }
}

/// Check is what the producer state says of a batch about to be appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Append: append it (a batch without producer id, or the next in sequence).
    Append,
    /// Duplicate: a retry of this remembered batch; append nothing.
    Duplicate(BatchMeta),
}

/// ProducerState is the state of every producer that wrote to a log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerState {
    pub producers: HashMap<i64, ProducerEntry>,
}

fn in_sequence(last: i32, next: i32) -> bool {
    next as i64 == last as i64 + 1 || (next == 0 && last == i32::MAX)
}

impl ProducerState {
    /// check validates a client's batch (`h`: its header, before offsets are assigned) as
    /// Kafka's `UnifiedLog.analyzeAndValidateProducerState` and `ProducerAppendInfo` do for
    /// AppendOrigin.CLIENT: a retry of one of the last five batches of the same epoch is a
    /// duplicate; an older epoch is INVALID_PRODUCER_EPOCH; a new epoch must start at sequence
    /// 0 and a known epoch must continue its last sequence, else OUT_OF_ORDER_SEQUENCE_NUMBER.
    /// A producer the log does not know (never seen, expired, or removed with its records) may
    /// start at any sequence: Kafka 3.9 accepts it rather than answer UNKNOWN_PRODUCER_ID.
    pub fn check(&self, h: &BatchHeader) -> Result<Check> {
        if h.producer_id < 0 {
            return Ok(Check::Append);
        }
        let entry = self.producers.get(&h.producer_id);
        let (first, last) = (h.base_sequence, h.last_sequence());
        if let Some(e) = entry {
            if e.epoch == h.producer_epoch {
                if let Some(d) = e
                    .batches
                    .iter()
                    .find(|b| b.first_seq == first && b.last_seq == last)
                {
                    return Ok(Check::Duplicate(*d));
                }
            }
        }
        let e = entry.cloned().unwrap_or_else(ProducerEntry::empty);
        if h.producer_epoch < e.epoch {
            return Err(Error::kafka(
                ErrorCode::InvalidProducerEpoch,
                format!(
                    "epoch of producer {} is {}, which is smaller than the last seen epoch {}",
                    h.producer_id, h.producer_epoch, e.epoch
                ),
            ));
        }
        if h.producer_epoch != e.epoch {
            if first != 0 && e.epoch != NO_EPOCH {
                return Err(Error::kafka(
                    ErrorCode::OutOfOrderSequenceNumber,
                    format!(
                        "invalid sequence number for new epoch of producer {}: {} (request epoch), {first} (seq. number), {} (current producer epoch)",
                        h.producer_id, h.producer_epoch, e.epoch
                    ),
                ));
            }
        } else if e.epoch != NO_EPOCH && !in_sequence(e.last_seq(), first) {
            return Err(Error::kafka(
                ErrorCode::OutOfOrderSequenceNumber,
                format!(
                    "out of order sequence number for producer {}: {first} (incoming seq. number), {} (current end sequence number)",
                    h.producer_id,
                    e.last_seq()
                ),
            ));
        }
        Ok(Check::Append)
    }

    /// update records an appended batch with offsets assigned (also used to replay the log).
    pub fn update(&mut self, h: &BatchHeader) {
        if h.producer_id < 0 || h.is_control() {
            return;
        }
        let b = BatchMeta {
            first_seq: h.base_sequence,
            last_seq: h.last_sequence(),
            first_offset: h.base_offset,
            last_offset: h.last_offset(),
            timestamp: h.max_timestamp,
        };
        self.producers
            .entry(h.producer_id)
            .or_insert_with(ProducerEntry::empty)
            .add(h.producer_epoch, b);
    }

    /// expire forgets producers whose last batch's timestamp is `expiration_ms` or more before
    /// `now_ms` (Kafka's `removeExpiredProducers`); returns how many.
    pub fn expire(&mut self, now_ms: i64, expiration_ms: i64) -> usize {
        let before = self.producers.len();
        self.producers
            .retain(|_, e| now_ms.saturating_sub(e.last_timestamp) < expiration_ms);
        before - self.producers.len()
    }

    /// encode writes a snapshot of the state as of `offset`.
    pub fn encode(&self, offset: i64) -> Vec<u8> {
        let mut out = Vec::with_capacity(22 + self.producers.len() * 60);
        out.extend_from_slice(b"KGPS");
        out.extend_from_slice(&1u16.to_be_bytes());
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&(self.producers.len() as u32).to_be_bytes());
        let mut ids: Vec<_> = self.producers.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let e = &self.producers[&id];
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&e.epoch.to_be_bytes());
            out.extend_from_slice(&e.last_timestamp.to_be_bytes());
            out.push(e.batches.len() as u8);
            for b in &e.batches {
                out.extend_from_slice(&b.first_seq.to_be_bytes());
                out.extend_from_slice(&b.last_seq.to_be_bytes());
                out.extend_from_slice(&b.first_offset.to_be_bytes());
                out.extend_from_slice(&b.last_offset.to_be_bytes());
                out.extend_from_slice(&b.timestamp.to_be_bytes());
            }
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_be_bytes());
        out
    }

    /// decode reads a snapshot: its offset and state. A damaged one is an error.
    pub fn decode(data: &[u8]) -> Result<(i64, ProducerState)> {
        let bad = |why: &str| Error::malformed(format!("producer snapshot: {why}"));
        if data.len() < 22 {
            return Err(bad("too short"));
        }
        let (body, crc) = data.split_at(data.len() - 4);
        if crc32c::crc32c(body).to_be_bytes() != crc {
            return Err(bad("CRC does not match"));
        }
        let mut r = Reader::new(body);
        if r.take(4, "magic")? != b"KGPS" || r.u16()? != 1 {
            return Err(bad("not a version 1 snapshot"));
        }
        let offset = r.i64()?;
        let n = r.u32()? as usize;
        let mut s = ProducerState::default();
        for _ in 0..n.min(body.len() / 19) {
            let id = r.i64()?;
            let epoch = r.i16()?;
            let last_timestamp = r.i64()?;
            let k = r.i8()? as u8 as usize;
            let mut batches = VecDeque::with_capacity(k);
            for _ in 0..k {
                batches.push_back(BatchMeta {
                    first_seq: r.i32()?,
                    last_seq: r.i32()?,
                    first_offset: r.i64()?,
                    last_offset: r.i64()?,
                    timestamp: r.i64()?,
                });
            }
            s.producers.insert(
                id,
                ProducerEntry {
                    epoch,
                    batches,
                    last_timestamp,
                },
            );
        }
        if r.remaining() != 0 || s.producers.len() != n {
            return Err(bad("bytes left over"));
        }
        Ok((offset, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(pid: i64, epoch: i16, seq: i32, n: i32, base: i64) -> BatchHeader {
        BatchHeader {
            base_offset: base,
            length: 49,
            partition_leader_epoch: 0,
            magic: 2,
            crc: 0,
            attributes: 0,
            last_offset_delta: n - 1,
            base_timestamp: 1000,
            max_timestamp: 1000 + base,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: seq,
            records_count: n,
        }
    }

    fn code(r: Result<Check>) -> ErrorCode {
        match r {
            Err(Error::Kafka(k)) => k.code,
            other => panic!("expected a Kafka error, got {other:?}"),
        }
    }

    #[test]
    fn each_of_the_last_five_batches_is_a_duplicate() {
        // Kafka's ProducerStateManagerTest.testDeduplicationOnlyWithinRetainedBatches shape.
        let mut s = ProducerState::default();
        for i in 0..7 {
            let h = header(1, 0, i * 2, 2, (i * 2) as i64);
            assert_eq!(s.check(&h).unwrap(), Check::Append);
            s.update(&h);
        }
        for i in 2..7 {
            let h = header(1, 0, i * 2, 2, 0);
            match s.check(&h).unwrap() {
                Check::Duplicate(b) => assert_eq!(b.first_offset, (i * 2) as i64),
                c => panic!("batch {i}: {c:?}"),
            }
        }
        // Older than the five retained: out of order, as in Kafka.
        assert_eq!(
            code(s.check(&header(1, 0, 2, 2, 0))),
            ErrorCode::OutOfOrderSequenceNumber
        );
        // A gap.
        assert_eq!(
            code(s.check(&header(1, 0, 15, 1, 0))),
            ErrorCode::OutOfOrderSequenceNumber
        );
        assert_eq!(s.check(&header(1, 0, 14, 1, 0)).unwrap(), Check::Append);
    }

    #[test]
    fn epochs_fence_and_restart_sequences() {
        // ProducerStateManagerTest.testProducerSequenceWithWrapAroundBatchRecord /
        // testNonZeroSequenceOnFirstAppendNonIdempotent cases.
        let mut s = ProducerState::default();
        // Unknown producer: any first sequence is accepted (Kafka 3.9).
        assert_eq!(s.check(&header(7, 3, 42, 1, 0)).unwrap(), Check::Append);
        s.update(&header(7, 3, 42, 1, 0));
        assert_eq!(
            code(s.check(&header(7, 2, 43, 1, 1))),
            ErrorCode::InvalidProducerEpoch
        );
        assert_eq!(
            code(s.check(&header(7, 4, 5, 1, 1))),
            ErrorCode::OutOfOrderSequenceNumber
        );
        assert_eq!(s.check(&header(7, 4, 0, 1, 1)).unwrap(), Check::Append);
        // Sequence wraps from i32::MAX to 0.
        let mut w = ProducerState::default();
        w.update(&header(9, 0, i32::MAX, 1, 0));
        assert_eq!(w.check(&header(9, 0, 0, 1, 1)).unwrap(), Check::Append);
    }

    #[test]
    fn expiry_and_snapshot_round_trip() {
        let mut s = ProducerState::default();
        for pid in 0..3 {
            for i in 0..6 {
                s.update(&header(pid, 1, i, 1, i as i64 + pid * 100));
            }
        }
        let bytes = s.encode(77);
        let (offset, back) = ProducerState::decode(&bytes).unwrap();
        assert_eq!((offset, &back), (77, &s));
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x20;
            assert!(ProducerState::decode(&b).is_err(), "flip at {i}");
        }
        // last timestamps are 1005, 1105, 1205.
        assert_eq!(s.expire(1205 + 100, 250), 1);
        assert_eq!(s.producers.len(), 2);
    }
}
