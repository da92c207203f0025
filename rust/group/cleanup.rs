//! Cleanup: offset expiry, deleted topics, and the tombstones they write (Kafka's
//! `GroupCoordinatorShard.cleanupGroupMetadata` with `OffsetMetadataManager.cleanupExpiredOffsets`,
//! and `onPartitionsDeleted`). An Empty group left without offsets is deleted with them.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::api::Effect;
use super::classic::state::GroupState;
use super::coordinator::Coordinator;
use super::pending::Pending;
use super::records::{group_metadata_key, offset_commit_key};
use crate::coordinator::appends::Records;

/// Tombstones are records to append, by partition of `__consumer_offsets`.
pub(super) type Tombstones = BTreeMap<i32, Records>;

impl Coordinator {
    /// expire_offsets is the periodic retention check (Kafka's `cleanupGroupMetadata` with
    /// `removeExpiredOffsets`): expired offsets are tombstoned, and an Empty group left without
    /// offsets goes Dead and is tombstoned too.
    pub(super) fn expire_offsets(&mut self) {
        let now = self.runtime.now();
        let retention = self.config.offsets_retention_ms;
        let mut tombstones = BTreeMap::new();
        for s in self.groups.slots() {
            let expired = self.group(s).expired_offsets(now, retention);
            self.cleanup_group(s, expired, &mut tombstones);
        }
        self.write_tombstones(tombstones);
    }

    /// topics_deleted removes every group's offsets of deleted topics (Kafka's
    /// `handleDeletedPartitions`), with tombstones; Empty groups left without offsets are
    /// deleted too.
    pub fn topics_deleted<'a>(
        &mut self,
        now: i64,
        topics: impl IntoIterator<Item = &'a str>,
    ) -> Vec<Effect> {
        self.enter(now);
        let topics: Vec<&str> = topics.into_iter().collect();
        if let Some(known) = &mut self.topics {
            for t in &topics {
                known.remove(*t);
            }
        }
        let mut tombstones = BTreeMap::new();
        for s in self.groups.slots() {
            // Offsets open transactions wrote for the topics go too (Kafka's
            // onPartitionsDeleted cleans the pending transactional offsets as well).
            let gone: Vec<(Arc<str>, i32)> = self
                .group(s)
                .offsets
                .partitions()
                .into_iter()
                .filter(|(t, _)| topics.contains(&&**t))
                .collect();
            self.cleanup_group(s, gone, &mut tombstones);
        }
        self.write_tombstones(tombstones);
        self.run_timers();
        self.runtime.take_effects()
    }

    /// cleanup_group removes `offsets` from the group with tombstones, and drops the group (with
    /// a tombstone for its metadata once it had a generation) when it is Dead, or Empty without
    /// offsets left.
    pub(super) fn cleanup_group(
        &mut self,
        g: u32,
        offsets: Vec<(Arc<str>, i32)>,
        tombstones: &mut Tombstones,
    ) {
        let now = self.runtime.now();
        if self.group(g).share.is_some() {
            // A share group has no offsets and never expires; it goes when deleted.
            if self.group(g).is(GroupState::Dead) {
                self.delete_share_group(g, tombstones);
            }
            return;
        }
        let group = self.group_mut(g);
        let partition = group.partition;
        let mut records = Vec::new();
        for (t, p) in offsets {
            if group.offsets.remove(&t, p) {
                records.push((
                    offset_commit_key(&group.id, &t, p).unwrap_or_default(),
                    None,
                ));
            }
        }
        if let Some(part) = group.consumer.as_deref() {
            // A consumer group goes once it has no members and is deleted or has no offsets
            // left, with the tombstones of Kafka's createGroupTombstoneRecords.
            if part.group.num_members() == 0
                && (group.is(GroupState::Dead) || !group.offsets.has_offsets())
            {
                records.extend(consumer_group_tombstones(
                    &group.id,
                    part.group.resolved_regexes().keys(),
                ));
                self.drop_group(g);
            }
            if !records.is_empty() {
                tombstones.entry(partition).or_default().extend(records);
            }
            return;
        }
        if group.is(GroupState::Empty) && !group.offsets.has_offsets() {
            group.transition(GroupState::Dead, now);
        }
        if group.is(GroupState::Dead) {
            if group.generation > 0 {
                records.push((group_metadata_key(&group.id).unwrap_or_default(), None));
            }
            self.drop_group(g);
        }
        if !records.is_empty() {
            tombstones.entry(partition).or_default().extend(records);
        }
    }

    /// write_tombstones appends tombstones, one batch per partition; nothing waits on them
    /// (Kafka appends them with acks=0: a lost one is written again by the next expiry).
    pub(super) fn write_tombstones(&mut self, tombstones: Tombstones) {
        for (partition, records) in tombstones {
            self.append(partition, records, Pending::Nothing);
        }
    }
}

/// consumer_group_tombstones are the tombstones of an Empty consumer group's own records, in
/// the order of Kafka's createGroupTombstoneRecords: its target assignment metadata, its
/// resolved regexes, its (Kafka 4.0) subscription metadata and its epoch.
pub(crate) fn consumer_group_tombstones<'a>(
    group_id: &str,
    regexes: impl Iterator<Item = &'a String>,
) -> Records {
    consumer_group_tombstones_with_members(group_id, std::iter::empty(), regexes)
}

/// consumer_group_tombstones_with_members are the tombstones of a consumer group and of its
/// `members`, in the order of Kafka's createGroupTombstoneRecords: every member's current
/// assignment, every member's target, the target assignment metadata, every member's
/// metadata, the resolved regexes, the subscription metadata and the epoch.
pub(crate) fn consumer_group_tombstones_with_members<'a>(
    group_id: &str,
    members: impl Iterator<Item = &'a String> + Clone,
    regexes: impl Iterator<Item = &'a String>,
) -> Records {
    use super::consumer::records::ConsumerGroupRecord as R;
    let g = group_id.to_string();
    let mut recs: Vec<R> = members
        .clone()
        .map(|m| R::CurrentMemberAssignment {
            group: g.clone(),
            member: m.clone(),
            value: None,
        })
        .collect();
    recs.extend(members.clone().map(|m| R::TargetAssignmentMember {
        group: g.clone(),
        member: m.clone(),
        value: None,
    }));
    recs.push(R::TargetAssignmentMetadata {
        group: g.clone(),
        value: None,
    });
    recs.extend(members.map(|m| R::MemberMetadata {
        group: g.clone(),
        member: m.clone(),
        value: None,
    }));
    recs.extend(regexes.map(|r| R::RegularExpression {
        group: g.clone(),
        regex: r.clone(),
        value: None,
    }));
    recs.push(R::PartitionMetadata {
        group: g.clone(),
        present: false,
    });
    recs.push(R::Metadata {
        group: g,
        value: None,
    });
    recs.iter()
        .filter_map(|r| Some((r.key().ok()?, None)))
        .collect()
}
