//! Replay: a partition of `__consumer_offsets` read back record by record as the runtime loads
//! it (Kafka's `GroupCoordinatorShard.replay`): the last offset commit and group metadata record
//! per key, and offsets committed in transactions until their markers are read; consumer groups
//! (KIP-848, record types 3-8) are rebuilt record by record. `load.rs` turns what a partition
//! held into groups.

use std::collections::BTreeMap;

use super::consumer::part::{Applied, ConsumerPart};
use super::consumer::records::ConsumerGroupRecord;
use super::records::{
    read_group_metadata_value, read_key, read_offset_commit_value, GroupMetadataValue,
    OffsetAndMetadata, RecordKey,
};
use crate::coordinator::load::{Replay, Replayed};
use crate::errors::Result;
use crate::protocol::records::ControlRecordType;

/// GroupTopicPartition keys an offset while loading.
pub(super) type Gtp = (String, String, i32);

/// LoadState is a partition's replay so far: the last record per key wins, and a tombstone
/// removes.
#[derive(Debug, Default)]
pub(crate) struct LoadState {
    pub(super) offsets: BTreeMap<Gtp, OffsetAndMetadata>,
    /// groups hold the last group metadata record per group; None after a tombstone.
    pub(super) groups: BTreeMap<String, Option<GroupMetadataValue>>,
    /// transactional holds offsets committed in a transaction until its marker (by producer id).
    transactional: BTreeMap<i64, BTreeMap<Gtp, Option<OffsetAndMetadata>>>,
    /// consumer holds the consumer groups (KIP-848) as their records rebuild them, replayed one
    /// by one with Kafka's rules (`ConsumerPart::apply`).
    pub(super) consumer: BTreeMap<String, ConsumerPart>,
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
                let v = match value {
                    Some(v) => Some(read_offset_commit_value(v)?),
                    None => None,
                };
                if transactional {
                    self.transactional
                        .entry(producer_id)
                        .or_default()
                        .insert(k, v);
                } else {
                    match v {
                        Some(o) => {
                            self.offsets.insert(k, o);
                        }
                        None => {
                            self.offsets.remove(&k);
                        }
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

    /// control ends a transaction of `producer_id`: its offsets count on a commit marker and
    /// are dropped on any other.
    fn control(&mut self, producer_id: i64, kind: ControlRecordType) -> Result<()> {
        let done = self.transactional.remove(&producer_id);
        if kind == ControlRecordType::Commit {
            for (k, v) in done.into_iter().flatten() {
                match v {
                    Some(o) => {
                        self.offsets.insert(k, o);
                    }
                    None => {
                        self.offsets.remove(&k);
                    }
                }
            }
        }
        Ok(())
    }
}
