//! ProducerState: what a log remembers of each idempotent or transactional producer (Kafka's
//! `ProducerStateManager`, `ProducerStateEntry`, `ProducerAppendInfo`): its epoch, the
//! sequence ranges and offsets of its last five batches (so that a retry is answered with the
//! original offsets, a gap is refused, and an older epoch is fenced), the coordinator epoch of
//! the last transaction marker (an older coordinator is fenced), and the first offset of its
//! open transaction, if any. The open transactions are also kept by first offset, so the
//! log's first unstable offset is the first key of a map.
//!
//! A transaction opens with a producer's first transactional batch and completes with its
//! marker ([`ProducerState::complete_txn`]); a producer with an open transaction writes no
//! non-transactional batch (INVALID_TXN_STATE) and is never expired.
//!
//! Snapshots (`<offset>.snapshot`) hold the state as of an offset; a log loads the latest one
//! and replays the batches (markers included) after it. kgroup's snapshot keeps all five batches
//! of each producer (Kafka's keeps only the last), so retries of any in-flight batch are still
//! recognised after a restart. Layout, big-endian: magic `KGPS`, version u16 (2), offset i64,
//! count u32, then per producer: id i64, epoch i16, last timestamp i64, coordinator epoch i32,
//! open transaction's first offset i64 (-1: none), batch count u8, per batch first sequence
//! i32, last sequence i32, first offset i64, last offset i64, timestamp i64; then the CRC-32C
//! of everything before it. Version 1 (no coordinator epoch, no open transaction) is still
//! read.

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::errors::{Error, ErrorCode, Result};
use crate::protocol::primitives::Reader;
use crate::protocol::records::BatchHeader;

/// BATCHES_TO_RETAIN is Kafka's `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`.
pub const BATCHES_TO_RETAIN: usize = 5;

/// NO_PRODUCER_EPOCH is Kafka's `RecordBatch.NO_PRODUCER_EPOCH`.
const NO_EPOCH: i16 = -1;

/// SNAPSHOT_VERSION is the version of the snapshots written (see the module doc).
const SNAPSHOT_VERSION: u16 = 2;

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
    /// last_timestamp is the max timestamp of its last batch (or its last marker's time);
    /// expiry counts from it, as in Kafka.
    pub last_timestamp: i64,
    /// coordinator_epoch is the coordinator epoch of its last marker (-1: none yet).
    pub coordinator_epoch: i32,
    /// current_txn_first_offset is the first offset of its open transaction, if any.
    pub current_txn_first_offset: Option<i64>,
}

impl ProducerEntry {
    fn empty() -> Self {
        ProducerEntry {
            epoch: NO_EPOCH,
            batches: VecDeque::new(),
            last_timestamp: -1,
            coordinator_epoch: -1,
            current_txn_first_offset: None,
        }
    }

    /// last_seq is the last sequence of its last batch (-1: none).
    pub fn last_seq(&self) -> i32 {
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

/// AppendOrigin is Kafka's `AppendOrigin` for the checks that tell them apart: a client's
/// Produce gets every check; a coordinator's own batches to its internal topic (transactional
/// offset commits, with sequence -1) are checked for their epoch only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AppendOrigin {
    #[default]
    Client,
    Coordinator,
}

/// CompletedTxn is a transaction a marker completed (Kafka's `CompletedTxn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    /// last_offset is the marker's offset.
    pub last_offset: i64,
    pub aborted: bool,
    /// last_stable_offset is the first unstable offset once it completed: the first offset of
    /// the earliest other open transaction, else the marker's offset + 1.
    pub last_stable_offset: i64,
}

/// ProducerState is the state of every producer that wrote to a log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerState {
    pub producers: HashMap<i64, ProducerEntry>,
    /// ongoing maps the first offset of each open transaction to its producer id (Kafka's
    /// `ongoingTxns`).
    pub ongoing: BTreeMap<i64, i64>,
}

fn in_sequence(last: i32, next: i32) -> bool {
    next as i64 == last as i64 + 1 || (next == 0 && last == i32::MAX)
}

impl ProducerState {
    /// check validates a data batch (`h`: its header, before offsets are assigned) as Kafka's
    /// `UnifiedLog.analyzeAndValidateProducerState` and `ProducerAppendInfo` do. For a client
    /// (AppendOrigin.CLIENT): a retry of one of the last five batches of the same epoch is a
    /// duplicate; a new epoch must start at sequence 0 and a known epoch must continue its last
    /// sequence, else OUT_OF_ORDER_SEQUENCE_NUMBER. A producer the log does not know (never seen,
    /// expired, or removed with its records) may start at any sequence: Kafka 3.9 accepts it
    /// rather than answer UNKNOWN_PRODUCER_ID. For every origin: an older epoch is
    /// INVALID_PRODUCER_EPOCH, and a non-transactional batch from a producer with an open
    /// transaction is INVALID_TXN_STATE.
    pub fn check(&self, h: &BatchHeader, origin: AppendOrigin) -> Result<Check> {
        if h.producer_id < 0 {
            return Ok(Check::Append);
        }
        let client = origin == AppendOrigin::Client;
        let entry = self.producers.get(&h.producer_id);
        let (first, last) = (h.base_sequence, h.last_sequence());
        if let Some(e) = entry.filter(|_| client) {
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
        if !client {
            // No sequence checks for a coordinator's batches.
        } else if h.producer_epoch != e.epoch {
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
        if let (Some(txn), false) = (e.current_txn_first_offset, h.is_transactional()) {
            return Err(Error::kafka(
                ErrorCode::InvalidTxnState,
                format!(
                    "expected a transactional write from producer {} at offset {txn}: a transaction is open",
                    h.producer_id
                ),
            ));
        }
        Ok(Check::Append)
    }

    /// check_marker validates a transaction marker of producer `pid` at `epoch` from a
    /// coordinator at `coordinator_epoch` (Kafka's `ProducerAppendInfo.appendEndTxnMarker`): an
    /// epoch older than the producer's is INVALID_PRODUCER_EPOCH, a coordinator epoch older than
    /// the producer's last marker's is TRANSACTION_COORDINATOR_FENCED.
    pub fn check_marker(&self, pid: i64, epoch: i16, coordinator_epoch: i32) -> Result<()> {
        let Some(e) = self.producers.get(&pid) else {
            return Ok(());
        };
        if epoch < e.epoch {
            return Err(Error::kafka(
                ErrorCode::InvalidProducerEpoch,
                format!(
                    "epoch of producer {pid} in a transaction marker is {epoch}, which is smaller than the last seen epoch {}",
                    e.epoch
                ),
            ));
        }
        if coordinator_epoch < e.coordinator_epoch {
            return Err(Error::kafka(
                ErrorCode::TransactionCoordinatorFenced,
                format!(
                    "invalid coordinator epoch for producer {pid}: {coordinator_epoch} (zombie), {} (current)",
                    e.coordinator_epoch
                ),
            ));
        }
        Ok(())
    }

    /// complete_txn records producer `pid`'s marker at `offset` (also used to replay the log):
    /// the entry takes the marker's epoch (forgetting its batches if that changed the epoch)
    /// and coordinator epoch, and its open transaction, if any, completes and is returned. A
    /// marker for a producer with no open transaction completes nothing.
    pub fn complete_txn(
        &mut self,
        pid: i64,
        epoch: i16,
        coordinator_epoch: i32,
        commit: bool,
        offset: i64,
        timestamp: i64,
    ) -> Option<CompletedTxn> {
        let e = self
            .producers
            .entry(pid)
            .or_insert_with(ProducerEntry::empty);
        if e.epoch != epoch {
            e.batches.clear();
            e.epoch = epoch;
        }
        e.coordinator_epoch = coordinator_epoch;
        e.last_timestamp = timestamp;
        let first = e.current_txn_first_offset.take()?;
        self.ongoing.remove(&first);
        let last_stable_offset = self.first_unstable_offset().unwrap_or(offset + 1);
        Some(CompletedTxn {
            producer_id: pid,
            first_offset: first,
            last_offset: offset,
            aborted: !commit,
            last_stable_offset,
        })
    }

    /// first_unstable_offset is the first offset of the earliest open transaction.
    pub fn first_unstable_offset(&self) -> Option<i64> {
        self.ongoing.keys().next().copied()
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
        let e = self
            .producers
            .entry(h.producer_id)
            .or_insert_with(ProducerEntry::empty);
        e.add(h.producer_epoch, b);
        if h.is_transactional() && e.current_txn_first_offset.is_none() {
            e.current_txn_first_offset = Some(h.base_offset);
            self.ongoing.insert(h.base_offset, h.producer_id);
        }
    }

    /// expire forgets producers with no open transaction whose last batch's timestamp is
    /// `expiration_ms` or more before `now_ms` (Kafka's `removeExpiredProducers`); returns how
    /// many.
    pub fn expire(&mut self, now_ms: i64, expiration_ms: i64) -> usize {
        let before = self.producers.len();
        self.producers.retain(|_, e| {
            e.current_txn_first_offset.is_some()
                || now_ms.saturating_sub(e.last_timestamp) < expiration_ms
        });
        before - self.producers.len()
    }

    /// encode writes a snapshot of the state as of `offset`.
    pub fn encode(&self, offset: i64) -> Vec<u8> {
        let mut out = Vec::with_capacity(22 + self.producers.len() * 60);
        out.extend_from_slice(b"KGPS");
        out.extend_from_slice(&SNAPSHOT_VERSION.to_be_bytes());
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&(self.producers.len() as u32).to_be_bytes());
        let mut ids: Vec<_> = self.producers.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let e = &self.producers[&id];
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&e.epoch.to_be_bytes());
            out.extend_from_slice(&e.last_timestamp.to_be_bytes());
            out.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
            out.extend_from_slice(&e.current_txn_first_offset.unwrap_or(-1).to_be_bytes());
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
        if r.take(4, "magic")? != b"KGPS" {
            return Err(bad("not a producer snapshot"));
        }
        let version = r.u16()?;
        if version != 1 && version != SNAPSHOT_VERSION {
            return Err(bad(&format!("version {version} is not 1 or 2")));
        }
        let offset = r.i64()?;
        let n = r.u32()? as usize;
        let mut s = ProducerState::default();
        for _ in 0..n.min(body.len() / 19) {
            let id = r.i64()?;
            let epoch = r.i16()?;
            let last_timestamp = r.i64()?;
            let (coordinator_epoch, txn) = if version >= 2 {
                (r.i32()?, r.i64()?)
            } else {
                (-1, -1)
            };
            let current_txn_first_offset = (txn >= 0).then_some(txn);
            if let Some(first) = current_txn_first_offset {
                s.ongoing.insert(first, id);
            }
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
                    coordinator_epoch,
                    current_txn_first_offset,
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
            assert_eq!(s.check(&h, AppendOrigin::Client).unwrap(), Check::Append);
            s.update(&h);
        }
        for i in 2..7 {
            let h = header(1, 0, i * 2, 2, 0);
            match s.check(&h, AppendOrigin::Client).unwrap() {
                Check::Duplicate(b) => assert_eq!(b.first_offset, (i * 2) as i64),
                c => panic!("batch {i}: {c:?}"),
            }
        }
        // Older than the five retained: out of order, as in Kafka.
        assert_eq!(
            code(s.check(&header(1, 0, 2, 2, 0), AppendOrigin::Client)),
            ErrorCode::OutOfOrderSequenceNumber
        );
        // A gap.
        assert_eq!(
            code(s.check(&header(1, 0, 15, 1, 0), AppendOrigin::Client)),
            ErrorCode::OutOfOrderSequenceNumber
        );
        assert_eq!(
            s.check(&header(1, 0, 14, 1, 0), AppendOrigin::Client)
                .unwrap(),
            Check::Append
        );
    }

    #[test]
    fn epochs_fence_and_restart_sequences() {
        // ProducerStateManagerTest.testProducerSequenceWithWrapAroundBatchRecord /
        // testNonZeroSequenceOnFirstAppendNonIdempotent cases.
        let mut s = ProducerState::default();
        // Unknown producer: any first sequence is accepted (Kafka 3.9).
        assert_eq!(
            s.check(&header(7, 3, 42, 1, 0), AppendOrigin::Client)
                .unwrap(),
            Check::Append
        );
        s.update(&header(7, 3, 42, 1, 0));
        assert_eq!(
            code(s.check(&header(7, 2, 43, 1, 1), AppendOrigin::Client)),
            ErrorCode::InvalidProducerEpoch
        );
        assert_eq!(
            code(s.check(&header(7, 4, 5, 1, 1), AppendOrigin::Client)),
            ErrorCode::OutOfOrderSequenceNumber
        );
        assert_eq!(
            s.check(&header(7, 4, 0, 1, 1), AppendOrigin::Client)
                .unwrap(),
            Check::Append
        );
        // Sequence wraps from i32::MAX to 0.
        let mut w = ProducerState::default();
        w.update(&header(9, 0, i32::MAX, 1, 0));
        assert_eq!(
            w.check(&header(9, 0, 0, 1, 1), AppendOrigin::Client)
                .unwrap(),
            Check::Append
        );
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

    fn txn_header(pid: i64, epoch: i16, seq: i32, n: i32, base: i64) -> BatchHeader {
        BatchHeader {
            attributes: 0x10, // transactional
            ..header(pid, epoch, seq, n, base)
        }
    }

    fn append(s: &mut ProducerState, h: BatchHeader, origin: AppendOrigin) -> Result<()> {
        s.check(&h, origin)?;
        s.update(&h);
        Ok(())
    }

    #[test]
    fn a_non_transactional_batch_during_a_transaction_is_invalid_txn_state() {
        // Kafka's ProducerStateManagerTest.testNonTransactionalAppendWithOngoingTransaction.
        let mut s = ProducerState::default();
        append(&mut s, txn_header(1, 0, 0, 1, 0), AppendOrigin::Client).unwrap();
        assert_eq!(s.producers[&1].current_txn_first_offset, Some(0));
        let e = s.check(&header(1, 0, 1, 1, 1), AppendOrigin::Client);
        assert_eq!(code(e), ErrorCode::InvalidTxnState);
        // A later transactional batch joins the open transaction.
        append(&mut s, txn_header(1, 0, 1, 2, 1), AppendOrigin::Client).unwrap();
        assert_eq!(s.producers[&1].current_txn_first_offset, Some(0));
        assert_eq!(s.ongoing, BTreeMap::from([(0, 1)]));
        // After the marker, non-transactional writes are fine again.
        s.complete_txn(1, 0, 0, true, 3, 2000);
        append(&mut s, header(1, 0, 3, 1, 4), AppendOrigin::Client).unwrap();
    }

    #[test]
    fn markers_complete_transactions_and_move_the_first_unstable_offset() {
        // Kafka's ProducerStateManagerTest.testFirstUnstableOffset and
        // testLastStableOffsetCompletedTxn: the earliest open transaction bounds the LSO; a
        // completed transaction's last stable offset is the next open one's first offset.
        let mut s = ProducerState::default();
        assert_eq!(s.first_unstable_offset(), None);
        append(&mut s, txn_header(1, 0, 0, 5, 0), AppendOrigin::Client).unwrap();
        append(&mut s, txn_header(2, 0, 0, 5, 5), AppendOrigin::Client).unwrap();
        append(&mut s, txn_header(1, 0, 5, 1, 10), AppendOrigin::Client).unwrap();
        assert_eq!(s.first_unstable_offset(), Some(0));
        let done = s.complete_txn(1, 0, 3, false, 11, 2000).unwrap();
        assert_eq!(
            done,
            CompletedTxn {
                producer_id: 1,
                first_offset: 0,
                last_offset: 11,
                aborted: true,
                last_stable_offset: 5,
            }
        );
        assert_eq!(s.first_unstable_offset(), Some(5));
        assert_eq!(s.producers[&1].coordinator_epoch, 3);
        assert_eq!(s.producers[&1].last_timestamp, 2000);
        let done = s.complete_txn(2, 0, 3, true, 12, 2001).unwrap();
        assert!(!done.aborted);
        assert_eq!(done.last_stable_offset, 13);
        assert_eq!(s.first_unstable_offset(), None);
    }

    #[test]
    fn a_marker_without_an_open_transaction_completes_nothing() {
        // Kafka's ProducerStateManagerTest.testAppendTxnMarkerWithNoProducerState: the marker
        // still creates the entry with its epochs.
        let mut s = ProducerState::default();
        assert_eq!(s.complete_txn(4, 2, 7, true, 0, 1000), None);
        let e = &s.producers[&4];
        assert_eq!((e.epoch, e.coordinator_epoch), (2, 7));
        assert_eq!(s.complete_txn(4, 2, 7, false, 1, 1000), None);
        assert!(s.ongoing.is_empty());
    }

    #[test]
    fn old_producer_and_coordinator_epochs_are_fenced_for_markers() {
        // Kafka's ProducerStateManagerTest.testOldEpochForControlRecord and
        // testCoordinatorFencing.
        let mut s = ProducerState::default();
        append(&mut s, txn_header(1, 3, 0, 1, 0), AppendOrigin::Client).unwrap();
        assert_eq!(
            code(s.check_marker(1, 2, 0).map(|_| Check::Append)),
            ErrorCode::InvalidProducerEpoch
        );
        s.check_marker(1, 3, 5).unwrap();
        s.complete_txn(1, 3, 5, true, 1, 1000);
        assert_eq!(
            code(s.check_marker(1, 3, 4).map(|_| Check::Append)),
            ErrorCode::TransactionCoordinatorFenced
        );
        s.check_marker(1, 3, 5).unwrap();
        s.check_marker(1, 4, 6).unwrap();
        // An unknown producer is fenced by nothing.
        s.check_marker(99, 0, -1).unwrap();
    }

    #[test]
    fn a_marker_that_bumps_the_epoch_forgets_the_sequences() {
        // ProducerStateEntry.maybeUpdateProducerEpoch on appendEndTxnMarker.
        let mut s = ProducerState::default();
        append(&mut s, txn_header(1, 0, 0, 3, 0), AppendOrigin::Client).unwrap();
        s.complete_txn(1, 1, 0, false, 3, 1000);
        assert!(s.producers[&1].batches.is_empty());
        append(&mut s, txn_header(1, 1, 0, 1, 4), AppendOrigin::Client).unwrap();
    }

    #[test]
    fn coordinator_batches_skip_sequence_checks_but_not_epochs() {
        // Kafka's ProducerAppendInfo for AppendOrigin.COORDINATOR: the group coordinator's
        // transactional offset commits carry sequence -1.
        let mut s = ProducerState::default();
        let h = txn_header(5, 2, -1, 1, 0);
        append(&mut s, h, AppendOrigin::Coordinator).unwrap();
        // The same again is no duplicate for a coordinator: it is appended.
        let again = txn_header(5, 2, -1, 1, 1);
        assert_eq!(
            s.check(&again, AppendOrigin::Coordinator).unwrap(),
            Check::Append
        );
        s.update(&again);
        assert_eq!(s.producers[&5].current_txn_first_offset, Some(0));
        assert_eq!(
            code(s.check(&txn_header(5, 1, -1, 1, 2), AppendOrigin::Coordinator)),
            ErrorCode::InvalidProducerEpoch
        );
        assert_eq!(
            code(s.check(&header(5, 2, -1, 1, 2), AppendOrigin::Coordinator)),
            ErrorCode::InvalidTxnState
        );
    }

    #[test]
    fn producers_with_an_open_transaction_never_expire() {
        // Kafka's ProducerStateManagerTest.testProducersWithOngoingTransactionsDontExpire.
        let mut s = ProducerState::default();
        append(&mut s, txn_header(1, 0, 0, 1, 0), AppendOrigin::Client).unwrap();
        append(&mut s, header(2, 0, 0, 1, 1), AppendOrigin::Client).unwrap();
        assert_eq!(s.expire(i64::MAX / 2, 10), 1);
        assert!(s.producers.contains_key(&1));
        s.complete_txn(1, 0, 0, true, 2, 5000);
        assert_eq!(s.expire(5000 + 10, 10), 1);
        assert!(s.producers.is_empty());
    }

    #[test]
    fn snapshots_keep_open_transactions_and_coordinator_epochs() {
        // Kafka's ProducerStateManagerTest.testRecoverFromSnapshotUnfinishedTransaction and
        // testRecoverFromSnapshotFinishedTransaction.
        let mut s = ProducerState::default();
        append(&mut s, txn_header(1, 0, 0, 2, 0), AppendOrigin::Client).unwrap();
        append(&mut s, txn_header(2, 0, 0, 2, 2), AppendOrigin::Client).unwrap();
        s.complete_txn(2, 0, 9, false, 4, 1500);
        let (offset, back) = ProducerState::decode(&s.encode(5)).unwrap();
        assert_eq!((offset, &back), (5, &s));
        assert_eq!(back.first_unstable_offset(), Some(0));
        assert_eq!(back.producers[&2].coordinator_epoch, 9);
        assert_eq!(back.producers[&2].current_txn_first_offset, None);
    }

    #[test]
    fn version_1_snapshots_are_still_read() {
        // The layout before transactions: no coordinator epoch, no open transaction.
        let mut v1 = Vec::new();
        v1.extend_from_slice(b"KGPS");
        v1.extend_from_slice(&1u16.to_be_bytes());
        v1.extend_from_slice(&10i64.to_be_bytes());
        v1.extend_from_slice(&1u32.to_be_bytes());
        v1.extend_from_slice(&7i64.to_be_bytes());
        v1.extend_from_slice(&3i16.to_be_bytes());
        v1.extend_from_slice(&1234i64.to_be_bytes());
        v1.push(1);
        for v in [0i32, 4] {
            v1.extend_from_slice(&v.to_be_bytes());
        }
        for v in [5i64, 9, 1234] {
            v1.extend_from_slice(&v.to_be_bytes());
        }
        let crc = crc32c::crc32c(&v1);
        v1.extend_from_slice(&crc.to_be_bytes());
        let (offset, s) = ProducerState::decode(&v1).unwrap();
        assert_eq!(offset, 10);
        let e = &s.producers[&7];
        assert_eq!((e.epoch, e.last_seq(), e.last_offset()), (3, 4, 9));
        assert_eq!(
            (e.coordinator_epoch, e.current_txn_first_offset),
            (-1, None)
        );
        assert!(s.ongoing.is_empty());
    }
}
