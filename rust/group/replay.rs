//! Replay: a partition of `__consumer_offsets` read back record by record as the runtime loads
//! it (Kafka's `GroupCoordinatorShard.replay`): the last offset commit and group metadata record
//! per key, and offsets committed in transactions until their markers are read; consumer groups
//! (KIP-848, record types 3-8) are rebuilt record by record. `load.rs` turns what a partition
//! held into groups.

use std::collections::BTreeMap;

use super::consumer::part::{Applied, ConsumerPart};
use super::consumer::records::ConsumerGroupRecord;
use super::offsets::offsets::Position;
use super::records::{
    read_group_metadata_value, read_key, read_offset_commit_value, GroupMetadataValue,
    OffsetAndMetadata, RecordKey,
};
use super::share::part::{Applied as ShareApplied, SharePart};
use super::share::records::ShareGroupRecord;
use crate::coordinator::load::{Replay, Replayed};
use crate::errors::Result;
use crate::protocol::records::ControlRecordType;

/// GroupTopicPartition keys an offset while loading.
pub(super) type Gtp = (String, String, i32);

/// LoadState is a partition's replay so far: the last record per key wins, and a tombstone
/// removes. Offsets keep the position of their record (its place in the replay, which is log
/// order), so that a transaction's offsets committed by its marker replace only older ones.
#[derive(Debug, Default)]
pub(crate) struct LoadState {
    pub(super) offsets: BTreeMap<Gtp, (OffsetAndMetadata, Position)>,
    /// groups hold the last group metadata record per group; None after a tombstone.
    pub(super) groups: BTreeMap<String, Option<GroupMetadataValue>>,
    /// transactional holds offsets committed in a transaction until its marker (by producer id);
    /// those whose marker the log does not hold yet stay pending once loaded.
    pub(super) transactional: BTreeMap<i64, BTreeMap<Gtp, (OffsetAndMetadata, Position)>>,
    /// consumer holds the consumer groups (KIP-848) as their records rebuild them, replayed one
    /// by one with Kafka's rules (`ConsumerPart::apply`).
    pub(super) consumer: BTreeMap<String, ConsumerPart>,
    /// share holds the share groups (KIP-932, record types 10-15) as their records rebuild
    /// them (`SharePart::apply`).
    pub(super) share: BTreeMap<String, SharePart>,
    /// next is the position of the next record.
    next: Position,
}

impl Replay for LoadState {
    /// record keeps the last offset commit and group metadata record per key (a tombstone
    /// removes); offsets committed in a transaction wait for its marker.
    fn record(
        &mut self,
        producer_id: i64,
        transactional: bool,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<Replayed> {
        match read_key(key)? {
            RecordKey::OffsetCommit {
                group,
                topic,
                partition,
            } => {
                let k = (group, topic, partition);
                let position = self.next;
                self.next += 1;
                match value {
                    // Kafka's OffsetMetadataManager.replay: a commit of a transactional batch
                    // waits for the marker of its producer.
                    Some(v) => {
                        let o = (read_offset_commit_value(v)?, position);
                        if transactional {
                            self.transactional
                                .entry(producer_id)
                                .or_default()
                                .insert(k, o);
                        } else {
                            self.offsets.insert(k, o);
                        }
                    }
                    // A tombstone removes the committed offset and what every open transaction
                    // wrote for the partition, whatever batch it came in.
                    None => {
                        self.offsets.remove(&k);
                        self.transactional.retain(|_, t| {
                            t.remove(&k);
                            !t.is_empty()
                        });
                    }
                }
            }
            RecordKey::GroupMetadata { group } => {
                let v = match value {
                    Some(v) => Some(read_group_metadata_value(v)?),
                    None => None,
                };
                self.groups.insert(group, v);
            }
            RecordKey::Unknown { .. } => {
                if let Some(rec) = ShareGroupRecord::read(key, value)? {
                    let group = rec.group();
                    if !self.share.contains_key(group) {
                        if rec.is_tombstone() {
                            return Ok(Replayed::Known);
                        }
                        self.share.insert(group.to_string(), SharePart::new(group));
                    }
                    let part = self.share.get_mut(group).expect("just made");
                    // Initializing partitions are stamped when the group is activated.
                    if part.apply(&rec, 0, None) == ShareApplied::Deleted {
                        self.share.remove(group);
                    }
                    return Ok(Replayed::Known);
                }
                let Some(rec) = ConsumerGroupRecord::read(key, value)? else {
                    return Ok(Replayed::Unknown);
                };
                let group = rec.group();
                if !self.consumer.contains_key(group) {
                    if rec.is_tombstone() {
                        return Ok(Replayed::Known);
                    }
                    self.consumer
                        .insert(group.to_string(), ConsumerPart::new(group));
                }
                let part = self.consumer.get_mut(group).expect("just made");
                if part.apply(&rec, None) == Applied::Deleted {
                    self.consumer.remove(group);
                }
            }
        }
        Ok(Replayed::Known)
    }

    /// control ends a transaction of `producer_id`: on a commit marker each of its offsets
    /// replaces the committed one only if written after it (Kafka's
    /// `replayEndTransactionMarker`); on an abort they are dropped. Other control records (and
    /// markers of producers that wrote no offsets) change nothing.
    fn control(&mut self, producer_id: i64, kind: ControlRecordType) -> Result<()> {
        let done = match kind {
            ControlRecordType::Commit | ControlRecordType::Abort => {
                self.transactional.remove(&producer_id)
            }
            _ => None,
        };
        if kind == ControlRecordType::Commit {
            for (k, (o, position)) in done.into_iter().flatten() {
                match self.offsets.get(&k) {
                    Some((_, at)) if *at > position => {}
                    _ => {
                        self.offsets.insert(k, (o, position));
                    }
                }
            }
        }
        Ok(())
    }
}
