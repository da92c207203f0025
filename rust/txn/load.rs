//! Loading and unloading `__transaction_state` partitions (Kafka's
//! `TransactionStateManager.loadTransactionsForTxnTopicPartition` and `removeTransactionsForTxnTopicPartition`).
//!
//! A load replays a partition's records: the last value of each id wins, a tombstone removes
//! it, keys of another record type are skipped. Once the last chunk is read the ids replace
//! those the coordinator held for the partition; transactions found decided (PrepareCommit,
//! PrepareAbort) ask for their markers again, so that they complete after a restart; Ongoing
//! ones stay open until their timeout aborts them (their start time is in the record).

use super::api::Effect;
use super::coordinator::Coordinator;
use super::metadata::TxnMetadata;
use crate::coordinator::load::Counts;
use crate::errors::Result;

/// LoadStats is what a load call read; `transactions` counts the ids the partition holds once
/// its last chunk is read (0 before).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    pub batches: usize,
    pub records: usize,
    pub unknown: usize,
    pub transactions: usize,
}

impl Coordinator {
    /// load replays one chunk of `partition`'s record batches (from the log's start, in order)
    /// with `last` on the final one; the partition answers COORDINATOR_LOAD_IN_PROGRESS until
    /// then. `coordinator_epoch` is the partition's leader epoch, stamped on the markers of its
    /// transactions. Markers to write again are queued for the next call
    /// ([`Coordinator::next_deadline`] is then due at once). A record that does not decode
    /// fails the load.
    pub fn load(
        &mut self,
        partition: i32,
        data: &[u8],
        last: bool,
        coordinator_epoch: i32,
    ) -> Result<LoadStats> {
        let mut counts = Counts::default();
        let state = self.runtime.load(partition, data, last, &mut counts)?;
        let mut stats = LoadStats {
            batches: counts.batches,
            records: counts.records,
            unknown: counts.unknown,
            transactions: 0,
        };
        let Some(state) = state else {
            return Ok(stats);
        };
        self.drop_partition(partition);
        self.coordinator_epochs.insert(partition, coordinator_epoch);
        let mut decided = Vec::new();
        for (id, t) in state.txns {
            let Some(t) = t else {
                continue;
            };
            let uid = self.new_uid();
            let mut m = TxnMetadata::new(&id, uid, t.producer_id, t.timeout_ms, t.update_timestamp);
            let prev = t.prev_producer_id;
            m.complete(t);
            m.prev_producer_id = prev;
            if m.state.is_prepare() {
                decided.push(id.clone());
            }
            self.txns.insert(id, m);
            stats.transactions += 1;
        }
        for id in decided {
            self.emit_markers(&id);
        }
        Ok(stats)
    }

    /// unload gives `partition` up: its ids are forgotten, appends still out for them change
    /// nothing and answer NOT_COORDINATOR, and its requests are answered NOT_COORDINATOR until
    /// it is loaded again.
    pub fn unload(&mut self, now: i64, partition: i32) -> Vec<Effect> {
        self.enter(now);
        self.runtime.partitions.unload(partition);
        self.drop_partition(partition);
        self.runtime.take_effects()
    }

    fn drop_partition(&mut self, partition: i32) {
        let n = self.config.num_partitions;
        self.txns
            .retain(|id, _| crate::coordinator::partition::partition_for(id, n) != partition);
    }
}
