//! TxnMetadata: what the coordinator keeps of one transactional id (Kafka's
//! `TransactionMetadata`), and [`Transit`], the values a state change will leave it with once
//! its record is durable (Kafka's `TxnTransitMetadata`).

use std::collections::BTreeSet;

use super::state::TxnState;

/// NO_PRODUCER_ID is Kafka's `RecordBatch.NO_PRODUCER_ID`.
pub const NO_PRODUCER_ID: i64 = -1;
/// NO_PRODUCER_EPOCH is Kafka's `RecordBatch.NO_PRODUCER_EPOCH`.
pub const NO_PRODUCER_EPOCH: i16 = -1;

/// is_epoch_exhausted tells whether `epoch` leaves no room for another bump: Kafka keeps the
/// last epoch (32767) for the bump of a fence, so 32766 is the last a producer gets.
pub fn is_epoch_exhausted(epoch: i16) -> bool {
    epoch >= i16::MAX - 1
}

/// Partitions are a transaction's partitions, (topic, partition), ordered.
pub type TxnPartitions = BTreeSet<(String, i32)>;

/// Transit is the whole of a transactional id's persisted values after a state change: what
/// its record holds, and what the metadata takes once the record is durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transit {
    pub producer_id: i64,
    /// prev_producer_id is the producer id before this change (Kafka's `prevProducerId`: the
    /// id a producer retrying after a rotation still names).
    pub prev_producer_id: i64,
    pub producer_epoch: i16,
    pub last_producer_epoch: i16,
    pub timeout_ms: i32,
    pub state: TxnState,
    pub partitions: TxnPartitions,
    pub start_timestamp: i64,
    pub update_timestamp: i64,
}

/// TxnMetadata is one transactional id's metadata. Changes go in two steps, as Kafka's:
/// [`TxnMetadata::prepare`] builds a [`Transit`] and sets the pending state; the record is
/// appended; [`TxnMetadata::complete`] applies it once durable, or [`TxnMetadata::abandon`]
/// drops the pending state when the append failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnMetadata {
    pub transactional_id: String,
    /// uid tells this metadata from one of the same id loaded or created later: appends of
    /// the older one find it gone.
    pub uid: u64,
    pub producer_id: i64,
    pub prev_producer_id: i64,
    pub producer_epoch: i16,
    /// last_producer_epoch is the epoch before the last bump (KIP-360 retries); not persisted.
    pub last_producer_epoch: i16,
    pub timeout_ms: i32,
    pub state: TxnState,
    pub partitions: TxnPartitions,
    /// start_timestamp is when the transaction's first partition was added, -1 without one.
    pub start_timestamp: i64,
    pub update_timestamp: i64,
    /// pending is the target of a change whose record is not durable yet (or, with the
    /// markers out, the Complete state they lead to).
    pub pending: Option<TxnState>,
    /// has_failed_epoch_fence is set when the append of a fence's abort failed: the next fence
    /// reuses the epoch it bumped to instead of bumping again.
    pub has_failed_epoch_fence: bool,
}

impl TxnMetadata {
    /// new is the metadata of an id seen for the first time: `producer_id`, no epoch yet.
    pub fn new(
        transactional_id: &str,
        uid: u64,
        producer_id: i64,
        timeout_ms: i32,
        now: i64,
    ) -> Self {
        TxnMetadata {
            transactional_id: transactional_id.to_string(),
            uid,
            producer_id,
            prev_producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
            last_producer_epoch: NO_PRODUCER_EPOCH,
            timeout_ms,
            state: TxnState::Empty,
            partitions: TxnPartitions::new(),
            start_timestamp: -1,
            update_timestamp: now,
            pending: None,
            has_failed_epoch_fence: false,
        }
    }

    /// transit is the metadata's values as they stand, the base of a change.
    pub fn transit(&self) -> Transit {
        Transit {
            producer_id: self.producer_id,
            prev_producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            last_producer_epoch: self.last_producer_epoch,
            timeout_ms: self.timeout_ms,
            state: self.state,
            partitions: self.partitions.clone(),
            start_timestamp: self.start_timestamp,
            update_timestamp: self.update_timestamp,
        }
    }

    /// prepare sets `t.state` as the pending state and returns `t`. The caller has checked
    /// that no change is pending and that the transition is valid.
    pub fn prepare(&mut self, t: Transit) -> Transit {
        debug_assert!(
            self.pending.is_none(),
            "{}: a change is pending",
            self.transactional_id
        );
        debug_assert!(
            t.state.valid_previous(self.state),
            "{}: {} to {}",
            self.transactional_id,
            self.state,
            t.state
        );
        self.pending = Some(t.state);
        t
    }

    /// complete applies a durable change. PrepareEpochFence is never applied (its abort is);
    /// the epoch never goes back.
    pub fn complete(&mut self, t: Transit) {
        debug_assert!(
            t.producer_id != self.producer_id || t.producer_epoch >= self.producer_epoch,
            "{}: epoch {} back to {}",
            self.transactional_id,
            self.producer_epoch,
            t.producer_epoch
        );
        self.pending = None;
        self.producer_id = t.producer_id;
        self.prev_producer_id = t.prev_producer_id;
        self.producer_epoch = t.producer_epoch;
        self.last_producer_epoch = t.last_producer_epoch;
        self.timeout_ms = t.timeout_ms;
        self.state = t.state;
        self.partitions = t.partitions;
        self.start_timestamp = t.start_timestamp;
        self.update_timestamp = t.update_timestamp;
    }

    /// abandon drops the pending state of a change whose append failed.
    pub fn abandon(&mut self) {
        self.pending = None;
    }

    /// prepare_increment_epoch is InitProducerId's bump from Empty or Complete* (Kafka's
    /// `prepareIncrementProducerEpoch`): without an expected epoch, epoch+1; with one equal to
    /// the current epoch (or on a new id), epoch+1 remembering the old one; equal to the last
    /// epoch, a retry of a bump that succeeded, answered with the current epoch; else
    /// PRODUCER_FENCED (None).
    pub fn prepare_increment_epoch(
        &mut self,
        timeout_ms: i32,
        expected: Option<i16>,
        now: i64,
    ) -> Option<Transit> {
        let bumped = self.producer_epoch + 1;
        let (epoch, last) = match expected {
            None => (bumped, NO_PRODUCER_EPOCH),
            Some(e) if self.producer_epoch == NO_PRODUCER_EPOCH || e == self.producer_epoch => {
                (bumped, self.producer_epoch)
            }
            Some(e) if e == self.last_producer_epoch => {
                (self.producer_epoch, self.last_producer_epoch)
            }
            Some(_) => return None,
        };
        let t = Transit {
            producer_epoch: epoch,
            last_producer_epoch: last,
            timeout_ms,
            state: TxnState::Empty,
            partitions: TxnPartitions::new(),
            start_timestamp: -1,
            update_timestamp: now,
            ..self.transit()
        };
        Some(self.prepare(t))
    }

    /// prepare_rotation moves an exhausted id to `producer_id` at epoch 0 (Kafka's
    /// `prepareProducerIdRotation`), remembering the old epoch when the producer gave it.
    pub fn prepare_rotation(
        &mut self,
        producer_id: i64,
        timeout_ms: i32,
        now: i64,
        record_last_epoch: bool,
    ) -> Transit {
        let t = Transit {
            producer_id,
            producer_epoch: 0,
            last_producer_epoch: if record_last_epoch {
                self.producer_epoch
            } else {
                NO_PRODUCER_EPOCH
            },
            timeout_ms,
            state: TxnState::Empty,
            partitions: TxnPartitions::new(),
            start_timestamp: -1,
            update_timestamp: now,
            ..self.transit()
        };
        self.prepare(t)
    }

    /// prepare_fence bumps the epoch of an Ongoing transaction to abort it (Kafka's
    /// `prepareFenceProducerEpoch`): not again after a fence whose append failed. None at the
    /// largest epoch, which cannot be bumped.
    pub fn prepare_fence(&mut self) -> Option<Transit> {
        if self.producer_epoch == i16::MAX {
            return None;
        }
        let epoch = if self.has_failed_epoch_fence {
            self.producer_epoch
        } else {
            self.producer_epoch + 1
        };
        let t = Transit {
            producer_epoch: epoch,
            last_producer_epoch: NO_PRODUCER_EPOCH,
            state: TxnState::PrepareEpochFence,
            ..self.transit()
        };
        Some(self.prepare(t))
    }

    /// prepare_add_partitions adds `added` to the transaction, Ongoing from now on; a new
    /// transaction starts now (Kafka's `prepareAddPartitions`).
    pub fn prepare_add_partitions(&mut self, added: &TxnPartitions, now: i64) -> Transit {
        let start = match self.state {
            TxnState::Empty | TxnState::CompleteAbort | TxnState::CompleteCommit => now,
            _ => self.start_timestamp,
        };
        let mut partitions = self.partitions.clone();
        partitions.extend(added.iter().cloned());
        let t = Transit {
            state: TxnState::Ongoing,
            partitions,
            start_timestamp: start,
            update_timestamp: now,
            ..self.transit()
        };
        self.prepare(t)
    }

    /// prepare_abort_or_commit decides the transaction (transaction protocol v1: no epoch
    /// bump), Kafka's `prepareAbortOrCommit`.
    pub fn prepare_abort_or_commit(&mut self, state: TxnState, now: i64) -> Transit {
        let t = Transit {
            state,
            update_timestamp: now,
            ..self.transit()
        };
        self.prepare(t)
    }

    /// prepare_complete is the Complete state a decided transaction's markers lead to, with no
    /// partitions (Kafka's `prepareComplete`).
    pub fn prepare_complete(&mut self, now: i64) -> Transit {
        let state = if self.state == TxnState::PrepareCommit {
            TxnState::CompleteCommit
        } else {
            TxnState::CompleteAbort
        };
        self.has_failed_epoch_fence = false;
        let t = Transit {
            state,
            partitions: TxnPartitions::new(),
            update_timestamp: now,
            ..self.transit()
        };
        self.prepare(t)
    }

    /// prepare_dead marks an expired id, whose tombstone is then written.
    pub fn prepare_dead(&mut self) -> Transit {
        let t = Transit {
            state: TxnState::Dead,
            ..self.transit()
        };
        self.prepare(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(state: TxnState, epoch: i16) -> TxnMetadata {
        let mut m = TxnMetadata::new("t", 1, 7, 30_000, 0);
        m.state = state;
        m.producer_epoch = epoch;
        m
    }

    // Kafka's TransactionMetadataTest.testInitializeEpoch / testNormalEpochBump.
    #[test]
    fn epoch_bumps_from_none_to_zero_then_by_one() {
        let mut m = meta(TxnState::Empty, NO_PRODUCER_EPOCH);
        let t = m.prepare_increment_epoch(30_000, None, 1).unwrap();
        assert_eq!((t.producer_epoch, t.last_producer_epoch), (0, -1));
        m.complete(t);
        let t = m.prepare_increment_epoch(30_000, None, 2).unwrap();
        assert_eq!((t.producer_epoch, t.last_producer_epoch), (1, -1));
    }

    // Kafka's TransactionMetadataTest.testBumpEpochNotAllowedIfEpochsExhausted: the fence may
    // use the last epoch but nothing bumps past it.
    #[test]
    fn the_fence_takes_the_last_epoch_and_no_more() {
        let mut m = meta(TxnState::Ongoing, i16::MAX - 1);
        let t = m.prepare_fence().unwrap();
        assert_eq!(t.producer_epoch, i16::MAX);
        m.abandon();
        m.producer_epoch = i16::MAX;
        assert!(m.prepare_fence().is_none());
        assert!(is_epoch_exhausted(i16::MAX - 1) && !is_epoch_exhausted(i16::MAX - 2));
    }

    // Kafka's TransactionMetadataTest.testFenceProducerAfterEpochsExhausted-like: KIP-360
    // retries with the last epoch get the current one back without a bump.
    #[test]
    fn a_retry_with_the_last_epoch_is_not_bumped_again() {
        let mut m = meta(TxnState::Empty, 5);
        let t = m.prepare_increment_epoch(30_000, Some(5), 1).unwrap();
        assert_eq!((t.producer_epoch, t.last_producer_epoch), (6, 5));
        m.complete(t);
        let t = m.prepare_increment_epoch(30_000, Some(5), 2).unwrap();
        assert_eq!((t.producer_epoch, t.last_producer_epoch), (6, 5));
        m.complete(t);
        assert!(m.prepare_increment_epoch(30_000, Some(3), 3).is_none());
    }

    // Kafka's TransactionMetadataTest.testRotateProducerId.
    #[test]
    fn rotation_starts_a_new_producer_id_at_epoch_zero() {
        let mut m = meta(TxnState::CompleteCommit, i16::MAX - 1);
        let t = m.prepare_rotation(8, 30_000, 5, true);
        assert_eq!(
            (t.producer_id, t.prev_producer_id, t.producer_epoch),
            (8, 7, 0)
        );
        assert_eq!(t.last_producer_epoch, i16::MAX - 1);
        m.complete(t);
        assert_eq!((m.producer_id, m.prev_producer_id), (8, 7));
    }

    #[test]
    fn adding_partitions_starts_a_transaction_once() {
        let mut m = meta(TxnState::CompleteAbort, 0);
        let add: TxnPartitions = [("a".to_string(), 0)].into();
        let t = m.prepare_add_partitions(&add, 100);
        assert_eq!((t.state, t.start_timestamp), (TxnState::Ongoing, 100));
        m.complete(t);
        let more: TxnPartitions = [("b".to_string(), 1)].into();
        let t = m.prepare_add_partitions(&more, 200);
        assert_eq!((t.start_timestamp, t.update_timestamp), (100, 200));
        assert_eq!(t.partitions.len(), 2);
    }
}
