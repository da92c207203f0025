//! Expiring transactional ids: every `transaction.remove.expired.transaction.cleanup.interval.ms`
//! the ids without a transaction (Empty, CompleteCommit, CompleteAbort), no change pending,
//! whose last update is `transactional.id.expiration.ms` old, go Dead and get a tombstone; once
//! it is durable they are forgotten (Kafka's `TransactionStateManager.removeExpiredTransactionalIds`).

use std::collections::BTreeMap;

use super::coordinator::Coordinator;
use super::pending::Pending;
use super::records;
use crate::errors::ErrorCode;

impl Coordinator {
    pub(super) fn expire_ids(&mut self) {
        let now = self.now();
        let horizon = now.saturating_sub(self.config.id_expiration_ms);
        let due: Vec<String> = self
            .txns
            .values()
            .filter(|m| {
                m.state.expiration_allowed()
                    && m.pending.is_none()
                    && m.update_timestamp <= horizon
                    && self.gate(&m.transactional_id).is_none()
            })
            .map(|m| m.transactional_id.clone())
            .collect();
        // One append per partition, as Kafka batches the tombstones of a partition.
        let mut by_partition: BTreeMap<i32, Vec<String>> = BTreeMap::new();
        for id in due {
            by_partition
                .entry(self.partition_for(&id))
                .or_default()
                .push(id);
        }
        for (partition, ids) in by_partition {
            let mut recs = Vec::new();
            let mut expiring = Vec::new();
            for id in ids {
                let Ok(k) = records::key(&id) else {
                    continue;
                };
                let m = self.txns.get_mut(&id).expect("listed");
                m.prepare_dead();
                expiring.push((id, m.uid, m.producer_epoch));
                recs.push((k, None));
            }
            if !recs.is_empty() {
                self.runtime
                    .append(partition, recs, Pending::Expire { ids: expiring });
            }
        }
    }

    /// complete_expire forgets the ids whose tombstones are durable, if still Dead at the same
    /// epoch; a failed append keeps them (Kafka's
    /// `shouldNotRemoveExpiredTransactionalIdsIfLogAppendFails`).
    pub(super) fn complete_expire(&mut self, ids: Vec<(String, u64, i16)>, error: ErrorCode) {
        for (id, uid, epoch) in ids {
            let Some(m) = self.current(&id, uid) else {
                continue;
            };
            if error == ErrorCode::None
                && m.pending == Some(super::state::TxnState::Dead)
                && m.producer_epoch == epoch
            {
                self.txns.remove(&id);
            } else {
                m.abandon();
            }
        }
    }
}
