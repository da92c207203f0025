//! Offsets: a group's committed offsets and its commits still being appended.
//!
//! A commit is staged as pending when its records go out to be appended, and becomes the
//! committed offset only when the append succeeds (Kafka's `prepareOffsetCommit` /
//! `onOffsetCommitAppend`). Each commit carries the token of its append; tokens grow, so a
//! commit never replaces a later one even when appends complete out of order (Kafka compares the
//! offsets of the commit records in the log). Loaded offsets carry token 0.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::assignors::fxhash::FxMap;
use crate::group::api::AppendToken;
use crate::group::records::OffsetAndMetadata;

/// Committed is a committed offset and the append it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Committed {
    pub value: OffsetAndMetadata,
    pub token: AppendToken,
}

/// Offsets holds one group's offsets by topic, then partition.
#[derive(Debug, Clone, Default)]
pub(crate) struct Offsets {
    committed: FxMap<Arc<str>, BTreeMap<i32, Committed>>,
    /// pending is the latest commit in flight per partition (its append token).
    pending: FxMap<Arc<str>, FxMap<i32, AppendToken>>,
    committed_count: usize,
    pending_count: usize,
}

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

    /// is_pending tells whether a commit of the partition is still being appended.
    pub fn is_pending(&self, topic: &str, partition: i32) -> bool {
        self.pending
            .get(topic)
            .is_some_and(|p| p.contains_key(&partition))
    }

    /// has_offsets tells whether any offset is committed or pending (Kafka's `hasOffsets`).
    pub fn has_offsets(&self) -> bool {
        self.committed_count > 0 || self.pending_count > 0
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
    /// offset unless a later commit already is; the partition stops being pending when this was
    /// its latest commit.
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
            let parts = topic_key(&mut self.committed, topic);
            match parts.get_mut(&partition) {
                Some(c) if c.token > token => {}
                Some(c) => *c = Committed { value, token },
                None => {
                    parts.insert(partition, Committed { value, token });
                    self.committed_count += 1;
                }
            }
        }
        if latest == token {
            self.unpend(topic, partition);
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

    /// put sets a committed offset directly (loading).
    pub fn put(&mut self, topic: &str, partition: i32, value: OffsetAndMetadata) {
        let parts = topic_key(&mut self.committed, topic);
        if parts
            .insert(partition, Committed { value, token: 0 })
            .is_none()
        {
            self.committed_count += 1;
        }
    }

    /// remove drops a partition's committed offset and its pending commit (Kafka's
    /// `removeOffsets`); true when an offset was committed.
    pub fn remove(&mut self, topic: &str, partition: i32) -> bool {
        self.unpend(topic, partition);
        let Some(parts) = self.committed.get_mut(topic) else {
            return false;
        };
        let removed = parts.remove(&partition).is_some();
        if removed {
            self.committed_count -= 1;
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
        self.committed_count = 0;
        self.pending_count = 0;
        all
    }

    /// partitions are the partitions with a committed offset, sorted.
    pub fn partitions(&self) -> Vec<(Arc<str>, i32)> {
        self.all().map(|(t, p, _)| (t.clone(), p)).collect()
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
    /// flight (Kafka's `removeExpiredOffsets`): an explicit expire timestamp decides alone;
    /// otherwise the offset expires once `retention_ms` has passed since `base(offset)`. Topics
    /// in `keep` never expire. Sorted.
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
        s.put("t", 1, o(1));
        s.stage("t", 0, 7);
        assert!(!s.remove("t", 0));
        s.complete("t", 0, 7, Some(o(9)));
        assert!(s.get("t", 0).is_none());
        assert_eq!(s.remove_all(), vec![(Arc::from("t"), 1)]);
        assert!(!s.has_offsets());
    }
}
