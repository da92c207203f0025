//! Offsets: a group's committed offsets, its commits still being appended, and the offsets its
//! open transactions committed.
//!
//! A commit is staged as pending when its records go out to be appended, and becomes the
//! committed offset only when the append succeeds (Kafka's `prepareOffsetCommit` /
//! `onOffsetCommitAppend`). An offset committed in a transaction (TxnOffsetCommit) waits under
//! its producer id from the moment its records go out until the transaction's marker: a commit
//! marker makes it the committed offset, an abort drops it (Kafka's
//! `pendingTransactionalOffsets` and `replayEndTransactionMarker`).
//!
//! Every offset carries the [`Position`] of its records in the log, and a commit never replaces
//! one written after it, whatever order appends complete and markers arrive in (Kafka compares
//! the record offsets of the commit records).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::assignors::fxhash::FxMap;
use crate::group::api::AppendToken;
use crate::group::records::OffsetAndMetadata;

/// Position is where a commit's records stand in its partition of `__consumer_offsets`, as an
/// order: records loaded from the log count from 0 in log order; records appended since come
/// after every loaded one, in the order of their appends (see [`appended`]). A load replaces
/// every group of its partition, so positions of the two kinds only meet in that order.
pub(crate) type Position = u64;

/// LIVE marks the positions of appended records, above every loaded one.
const LIVE: Position = 1 << 63;

/// appended is the position of the records of the append of `token` (tokens grow in the order
/// appends are asked for, which is their order in the log).
#[inline]
pub(crate) const fn appended(token: AppendToken) -> Position {
    LIVE | token
}

/// Committed is an offset and the position of the record it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Committed {
    pub value: OffsetAndMetadata,
    pub position: Position,
}

/// Offsets holds one group's offsets by topic, then partition.
#[derive(Debug, Clone, Default)]
pub(crate) struct Offsets {
    committed: FxMap<Arc<str>, BTreeMap<i32, Committed>>,
    /// pending is the latest commit in flight per partition (its append token).
    pending: FxMap<Arc<str>, FxMap<i32, AppendToken>>,
    /// transactional holds the offsets of open transactions by producer id, then partition
    /// (the last one each transaction wrote): invisible until the transaction commits.
    transactional: BTreeMap<i64, Txn>,
    committed_count: usize,
    pending_count: usize,
}

/// Txn is what one open transaction wrote: offsets by topic, then partition. A partition keeps
/// its writes in position order, the last one counting; the earlier ones stay only until a later
/// one is known to be in the log (a failed append must bring the previous write back, as
/// Kafka's coordinator reverts its state to the snapshot before a failed write).
type Txn = BTreeMap<Arc<str>, BTreeMap<i32, Vec<Committed>>>;

fn topic_key<'m, V: Default>(map: &'m mut FxMap<Arc<str>, V>, topic: &str) -> &'m mut V {
    if !map.contains_key(topic) {
        map.insert(Arc::from(topic), V::default());
    }
    map.get_mut(topic).expect("inserted above")
}

impl Offsets {
    /// get is the committed offset of a partition.
    pub fn get(&self, topic: &str, partition: i32) -> Option<&OffsetAndMetadata> {
        self.committed
            .get(topic)
            .and_then(|p| p.get(&partition))
            .map(|c| &c.value)
    }

    /// is_pending tells whether a commit of the partition is still being appended, or an open
    /// transaction committed an offset of it (Kafka's `hasPendingTransactionalOffsets`): what
    /// OffsetFetch with `require_stable` answers UNSTABLE_OFFSET_COMMIT for.
    pub fn is_pending(&self, topic: &str, partition: i32) -> bool {
        self.pending
            .get(topic)
            .is_some_and(|p| p.contains_key(&partition))
            || self.in_transaction(topic, partition)
    }

    /// in_transaction tells whether an open transaction committed an offset of the partition.
    pub fn in_transaction(&self, topic: &str, partition: i32) -> bool {
        self.transactional
            .values()
            .any(|t| t.get(topic).is_some_and(|p| p.contains_key(&partition)))
    }

    /// has_offsets tells whether any offset is committed, in flight, or waiting in an open
    /// transaction (Kafka's `hasOffsets`, and its `openTransactions.contains(groupId)`, which
    /// keeps a group from being deleted while its transactions are open).
    pub fn has_offsets(&self) -> bool {
        self.committed_count > 0 || self.pending_count > 0 || !self.transactional.is_empty()
    }

    /// stage marks a commit of the partition as in flight under `token`.
    pub fn stage(&mut self, topic: &str, partition: i32, token: AppendToken) {
        if topic_key(&mut self.pending, topic)
            .insert(partition, token)
            .is_none()
        {
            self.pending_count += 1;
        }
    }

    /// complete ends the commit of `token`: when it succeeded and the partition still has a
    /// commit in flight (its offsets were not deleted meanwhile), `value` becomes the committed
    /// offset unless one written later already is; the partition stops being pending when this
    /// was its latest commit.
    pub fn complete(
        &mut self,
        topic: &str,
        partition: i32,
        token: AppendToken,
        value: Option<OffsetAndMetadata>,
    ) {
        let Some(latest) = self.pending.get(topic).and_then(|p| p.get(&partition)) else {
            return;
        };
        let latest = *latest;
        if let Some(value) = value {
            self.commit(topic, partition, value, appended(token));
        }
        if latest == token {
            self.unpend(topic, partition);
        }
    }

    /// commit makes `value`, written at `position`, the committed offset of the partition
    /// unless one written later already is.
    fn commit(
        &mut self,
        topic: &str,
        partition: i32,
        value: OffsetAndMetadata,
        position: Position,
    ) {
        let parts = topic_key(&mut self.committed, topic);
        match parts.get_mut(&partition) {
            Some(c) if c.position > position => {}
            Some(c) => *c = Committed { value, position },
            None => {
                parts.insert(partition, Committed { value, position });
                self.committed_count += 1;
            }
        }
    }

    fn unpend(&mut self, topic: &str, partition: i32) {
        if let Some(parts) = self.pending.get_mut(topic) {
            if parts.remove(&partition).is_some() {
                self.pending_count -= 1;
            }
            if parts.is_empty() {
                self.pending.remove(topic);
            }
        }
    }

    /// put sets a committed offset directly (loading), written at `position`.
    pub fn put(
        &mut self,
        topic: &str,
        partition: i32,
        value: OffsetAndMetadata,
        position: Position,
    ) {
        let parts = topic_key(&mut self.committed, topic);
        if parts
            .insert(partition, Committed { value, position })
            .is_none()
        {
            self.committed_count += 1;
        }
    }

    /// put_transactional keeps `value`, written at `position` in a transaction of
    /// `producer_id`, until the transaction ends; it supersedes what the same transaction wrote
    /// for the partition before (Kafka's replay of a transactional commit record), which comes
    /// back if this write's append fails ([`drop_transactional`](Offsets::drop_transactional)).
    /// Positions grow from one call to the next.
    pub fn put_transactional(
        &mut self,
        producer_id: i64,
        topic: &str,
        partition: i32,
        value: OffsetAndMetadata,
        position: Position,
    ) {
        let txn = self.transactional.entry(producer_id).or_default();
        if !txn.contains_key(topic) {
            txn.insert(Arc::from(topic), BTreeMap::new());
        }
        let parts = txn.get_mut(topic).expect("inserted above");
        parts
            .entry(partition)
            .or_default()
            .push(Committed { value, position });
    }

    /// drop_transactional forgets what the transaction of `producer_id` wrote at `position`
    /// (an append that failed: its records are not in the log); later writes stay.
    pub fn drop_transactional(&mut self, producer_id: i64, position: Position) {
        if let Some(t) = self.transactional.get_mut(&producer_id) {
            for parts in t.values_mut() {
                for writes in parts.values_mut() {
                    writes.retain(|c| c.position != position);
                }
                parts.retain(|_, writes| !writes.is_empty());
            }
            t.retain(|_, parts| !parts.is_empty());
            if t.is_empty() {
                self.transactional.remove(&producer_id);
            }
        }
    }

    /// settle_transactional notes that the write of `producer_id` at `position` is in the log:
    /// the writes it superseded are forgotten.
    pub fn settle_transactional(&mut self, producer_id: i64, position: Position) {
        if let Some(t) = self.transactional.get_mut(&producer_id) {
            for writes in t.values_mut().flat_map(|parts| parts.values_mut()) {
                if let Some(i) = writes.iter().position(|c| c.position == position) {
                    writes.drain(..i);
                }
            }
        }
    }

    /// end_transaction ends the transaction of `producer_id` (its marker is in the log): on a
    /// commit each of its offsets becomes the committed one unless an offset written after it
    /// already is; on an abort they are dropped. False when it wrote nothing here.
    pub fn end_transaction(&mut self, producer_id: i64, commit: bool) -> bool {
        let Some(offsets) = self.transactional.remove(&producer_id) else {
            return false;
        };
        if commit {
            for (topic, parts) in offsets {
                for (partition, mut writes) in parts {
                    if let Some(c) = writes.pop() {
                        self.commit(&topic, partition, c.value, c.position);
                    }
                }
            }
        }
        true
    }

    /// transactional_offset is what the open transaction of `producer_id` committed for the
    /// partition (tests, as Kafka's `pendingTransactionalOffset`).
    #[cfg(test)]
    pub fn transactional_offset(
        &self,
        producer_id: i64,
        topic: &str,
        partition: i32,
    ) -> Option<&OffsetAndMetadata> {
        self.transactional
            .get(&producer_id)?
            .get(topic)?
            .get(&partition)?
            .last()
            .map(|c| &c.value)
    }

    /// remove drops a partition's committed offset, its pending commit, and the offsets open
    /// transactions wrote for it (Kafka's `removeOffsets` and the replay of a tombstone); true
    /// when an offset was committed or waited in a transaction (a tombstone is due).
    pub fn remove(&mut self, topic: &str, partition: i32) -> bool {
        self.unpend(topic, partition);
        let mut removed = false;
        self.transactional.retain(|_, t| {
            if let Some(parts) = t.get_mut(topic) {
                removed |= parts.remove(&partition).is_some();
                if parts.is_empty() {
                    t.remove(topic);
                }
            }
            !t.is_empty()
        });
        let Some(parts) = self.committed.get_mut(topic) else {
            return removed;
        };
        if parts.remove(&partition).is_some() {
            self.committed_count -= 1;
            removed = true;
        }
        if parts.is_empty() {
            self.committed.remove(topic);
        }
        removed
    }

    #[cfg(test)]
    /// remove_all drops every offset and returns the partitions that had a committed one,
    /// sorted.
    pub fn remove_all(&mut self) -> Vec<(Arc<str>, i32)> {
        let all: Vec<(Arc<str>, i32)> = self.all().map(|(t, p, _)| (t.clone(), p)).collect();
        self.committed.clear();
        self.pending.clear();
        self.transactional.clear();
        self.committed_count = 0;
        self.pending_count = 0;
        all
    }

    /// partitions are the partitions with a committed offset or one an open transaction wrote,
    /// sorted: what deleting the group tombstones (Kafka's `deleteAllOffsets`).
    pub fn partitions(&self) -> Vec<(Arc<str>, i32)> {
        let mut all: Vec<(Arc<str>, i32)> = self.all().map(|(t, p, _)| (t.clone(), p)).collect();
        for t in self.transactional.values() {
            for (topic, parts) in t {
                all.extend(parts.keys().map(|p| (topic.clone(), *p)));
            }
        }
        all.sort();
        all.dedup();
        all
    }

    /// clear_pending forgets every commit in flight: none of them will land.
    pub fn clear_pending(&mut self) {
        self.pending.clear();
        self.pending_count = 0;
    }

    /// all yields every committed offset, by topic name then partition.
    pub fn all(&self) -> impl Iterator<Item = (&Arc<str>, i32, &OffsetAndMetadata)> + '_ {
        let mut topics: Vec<&Arc<str>> = self.committed.keys().collect();
        topics.sort();
        topics.into_iter().flat_map(move |t| {
            self.committed[t]
                .iter()
                .map(move |(p, c)| (t, *p, &c.value))
        })
    }

    /// expired are the committed offsets that have expired at `now` and have no commit in
    /// flight nor an offset in an open transaction (Kafka's `cleanupExpiredOffsets`): an
    /// explicit expire timestamp decides alone; otherwise the offset expires once `retention_ms`
    /// has passed since `base(offset)`. Topics in `keep` never expire. Sorted.
    pub fn expired(
        &self,
        now: i64,
        retention_ms: i64,
        base: impl Fn(&OffsetAndMetadata) -> i64,
        keep: impl Fn(&str) -> bool,
    ) -> Vec<(Arc<str>, i32)> {
        self.all()
            .filter(|(t, p, o)| {
                !keep(t)
                    && !self.is_pending(t, *p)
                    && match o.expire_timestamp {
                        Some(expire) => now >= expire,
                        None => now.saturating_sub(base(o)) >= retention_ms,
                    }
            })
            .map(|(t, p, _)| (t.clone(), p))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(offset: i64) -> OffsetAndMetadata {
        OffsetAndMetadata {
            offset,
            leader_epoch: -1,
            metadata: Arc::from(""),
            commit_timestamp: 0,
            expire_timestamp: None,
        }
    }

    #[test]
    fn commits_become_visible_when_appended() {
        let mut s = Offsets::default();
        s.stage("t", 0, 1);
        assert!(s.get("t", 0).is_none());
        assert!(s.is_pending("t", 0) && s.has_offsets());
        s.complete("t", 0, 1, Some(o(5)));
        assert_eq!(s.get("t", 0).unwrap().offset, 5);
        assert!(!s.is_pending("t", 0));
    }

    #[test]
    fn a_later_commit_wins_whatever_order_appends_complete_in() {
        let mut s = Offsets::default();
        s.stage("t", 0, 1);
        s.stage("t", 0, 2);
        s.complete("t", 0, 2, Some(o(20)));
        // The older one is no longer pending anywhere: it does not land (Kafka's
        // onOffsetCommitAppend needs the partition still pending).
        s.complete("t", 0, 1, Some(o(10)));
        assert_eq!(s.get("t", 0).unwrap().offset, 20);
        s.stage("t", 0, 3);
        s.stage("t", 0, 4);
        s.complete("t", 0, 3, Some(o(30)));
        assert!(s.is_pending("t", 0));
        s.complete("t", 0, 4, None); // failed
        assert!(!s.is_pending("t", 0));
        assert_eq!(s.get("t", 0).unwrap().offset, 30);
    }

    #[test]
    fn deleted_partitions_drop_their_pending_commits() {
        let mut s = Offsets::default();
        s.put("t", 1, o(1), 0);
        s.stage("t", 0, 7);
        assert!(!s.remove("t", 0));
        s.complete("t", 0, 7, Some(o(9)));
        assert!(s.get("t", 0).is_none());
        assert_eq!(s.remove_all(), vec![(Arc::from("t"), 1)]);
        assert!(!s.has_offsets());
    }

    // Kafka's replay of a transactional commit and its revert on a failed write: a failed
    // append brings the transaction's previous write of the partition back; a marker commits
    // the last write unless a later plain commit is in.
    #[test]
    fn a_failed_transactional_write_brings_the_previous_one_back() {
        let mut s = Offsets::default();
        s.put_transactional(7, "t", 0, o(1), appended(1));
        s.put_transactional(7, "t", 0, o(2), appended(2));
        s.drop_transactional(7, appended(2));
        assert_eq!(s.transactional_offset(7, "t", 0).map(|v| v.offset), Some(1));
        s.put_transactional(7, "t", 0, o(3), appended(3));
        s.settle_transactional(7, appended(3));
        s.drop_transactional(7, appended(1));
        assert_eq!(s.transactional_offset(7, "t", 0).map(|v| v.offset), Some(3));
        assert!(s.is_pending("t", 0) && !s.is_pending("t", 1));
        s.stage("t", 0, 4);
        s.complete("t", 0, 4, Some(o(4)));
        assert!(s.end_transaction(7, true));
        assert_eq!(s.get("t", 0).unwrap().offset, 4);
        assert!(!s.end_transaction(7, true));
        assert!(!s.in_transaction("t", 0));
    }
}
