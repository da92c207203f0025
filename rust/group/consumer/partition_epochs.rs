//! PartitionEpochs: which partitions of a consumer group some member still holds, and at which
//! member epoch (Kafka's `ConsumerGroup.currentPartitionEpoch`).

use std::collections::BTreeMap;

use super::member::ConsumerMember;
use crate::group::assignors::{Assignment, TopicId};

/// PartitionEpochs maps topic id → partition → the epoch of the member that has the partition
/// in its assigned partitions or its partitions pending revocation. A partition without an
/// entry is free: reconciliation hands it to its new owner only then.
///
/// The coordinator keeps it in step with its members: [`PartitionEpochs::update_member`] on
/// every member change (also while replaying records), [`PartitionEpochs::remove_member`] when
/// a member leaves or is fenced, which frees its partitions at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionEpochs {
    epochs: BTreeMap<TopicId, BTreeMap<i32, i32>>,
}

/// PartitionEpochConflict is a partition that [`PartitionEpochs::add`] found held already at
/// an epoch not below the one being set. Kafka 4.2 throws `IllegalStateException` there; kgroup
/// sets the new epoch anyway and reports the conflict, because replaying a log that compaction
/// has partly cleaned can meet it and the later record is the truth (KAFKA-19862).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionEpochConflict {
    /// topic_id and partition name the partition.
    pub topic_id: TopicId,
    pub partition: i32,
    /// held_at is the epoch the partition was held at.
    pub held_at: i32,
    /// epoch is the epoch set in its place.
    pub epoch: i32,
}

impl PartitionEpochs {
    /// new is the map of a group where nobody holds anything.
    pub fn new() -> Self {
        Self::default()
    }

    /// get is the epoch `partition` of `topic_id` is held at, `None` when it is free.
    pub fn get(&self, topic_id: &TopicId, partition: i32) -> Option<i32> {
        self.epochs.get(topic_id)?.get(&partition).copied()
    }

    /// epoch is [`PartitionEpochs::get`] as Kafka answers it: -1 when the partition is free.
    pub fn epoch(&self, topic_id: &TopicId, partition: i32) -> i32 {
        self.get(topic_id, partition).unwrap_or(-1)
    }

    /// is_empty is true when no partition is held.
    pub fn is_empty(&self) -> bool {
        self.epochs.is_empty()
    }

    /// add marks every partition of `assignment` as held at `epoch`. A partition held already
    /// at an epoch ≥ `epoch` is overwritten too, and listed in the answer (in topic, partition
    /// order); a lower epoch is overwritten silently, as Kafka does.
    pub fn add(&mut self, assignment: &Assignment, epoch: i32) -> Vec<PartitionEpochConflict> {
        let mut conflicts = Vec::new();
        for (topic_id, partitions) in assignment.iter() {
            let held = self.epochs.entry(*topic_id).or_default();
            for &partition in partitions {
                if let Some(held_at) = held.insert(partition, epoch) {
                    if held_at >= epoch {
                        conflicts.push(PartitionEpochConflict {
                            topic_id: *topic_id,
                            partition,
                            held_at,
                            epoch,
                        });
                    }
                }
            }
        }
        conflicts
    }

    /// remove frees every partition of `assignment` held at `expected_epoch`; a partition held
    /// at another epoch belongs to someone else now and stays (Kafka logs it and goes on).
    pub fn remove(&mut self, assignment: &Assignment, expected_epoch: i32) {
        for (topic_id, partitions) in assignment.iter() {
            let Some(held) = self.epochs.get_mut(topic_id) else {
                continue;
            };
            for partition in partitions {
                if held.get(partition) == Some(&expected_epoch) {
                    held.remove(partition);
                }
            }
            if held.is_empty() {
                self.epochs.remove(topic_id);
            }
        }
    }

    /// add_member marks the member's assigned and pending partitions as held at its epoch.
    pub fn add_member(&mut self, member: &ConsumerMember) -> Vec<PartitionEpochConflict> {
        let mut conflicts = self.add(&member.assigned_partitions, member.member_epoch);
        conflicts.extend(self.add(&member.partitions_pending_revocation, member.member_epoch));
        conflicts
    }

    /// remove_member frees the member's assigned and pending partitions held at its epoch.
    pub fn remove_member(&mut self, member: &ConsumerMember) {
        self.remove(&member.assigned_partitions, member.member_epoch);
        self.remove(&member.partitions_pending_revocation, member.member_epoch);
    }

    /// update_member replaces what `old` held (if the member existed) by what `new` holds
    /// (Kafka's `maybeUpdatePartitionEpoch`).
    pub fn update_member(
        &mut self,
        old: Option<&ConsumerMember>,
        new: &ConsumerMember,
    ) -> Vec<PartitionEpochConflict> {
        if let Some(old) = old {
            self.remove_member(old);
        }
        self.add_member(new)
    }

    /// waiting_on_unreleased_partition is true when `member` is UnreleasedPartitions and some
    /// partition of its `target` that it does not have yet is still held by someone (Kafka's
    /// `ConsumerGroup.waitingOnUnreleasedPartition`).
    pub fn waiting_on_unreleased_partition(
        &self,
        member: &ConsumerMember,
        target: &Assignment,
    ) -> bool {
        member.state == super::member::MemberState::UnreleasedPartitions
            && target.iter().any(|(topic_id, partitions)| {
                partitions.iter().any(|&p| {
                    !member.assigned_partitions.contains(topic_id, p)
                        && self.get(topic_id, p).is_some()
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::consumer::member::MemberState;

    const FOO: TopicId = [1; 16];
    const BAR: TopicId = [2; 16];
    const ZAR: TopicId = [3; 16];

    fn assignment(topics: &[(TopicId, &[i32])]) -> Assignment {
        topics.iter().map(|(t, p)| (*t, p.to_vec())).collect()
    }

    fn member(id: &str, epoch: i32, assigned: Assignment, pending: Assignment) -> ConsumerMember {
        ConsumerMember {
            member_epoch: epoch,
            assigned_partitions: assigned,
            partitions_pending_revocation: pending,
            ..ConsumerMember::new(id)
        }
    }

    fn assert_epochs(epochs: &PartitionEpochs, topic: TopicId, partitions: &[i32], epoch: i32) {
        for &p in partitions {
            assert_eq!(epochs.epoch(&topic, p), epoch, "partition {p}");
        }
    }

    // From Kafka's ConsumerGroupTest.testUpdatingMemberUpdatesPartitionEpoch.
    #[test]
    fn updating_member_updates_partition_epoch() {
        let mut epochs = PartitionEpochs::new();
        let m = member(
            "member",
            10,
            assignment(&[(FOO, &[1, 2, 3])]),
            assignment(&[(BAR, &[4, 5, 6])]),
        );
        assert!(epochs.update_member(None, &m).is_empty());
        assert_epochs(&epochs, FOO, &[1, 2, 3], 10);
        assert_epochs(&epochs, BAR, &[4, 5, 6], 10);
        assert_epochs(&epochs, ZAR, &[7, 8, 9], -1);

        let m2 = member(
            "member",
            11,
            assignment(&[(BAR, &[1, 2, 3])]),
            assignment(&[(ZAR, &[4, 5, 6])]),
        );
        assert!(epochs.update_member(Some(&m), &m2).is_empty());
        assert_epochs(&epochs, BAR, &[1, 2, 3], 11);
        assert_epochs(&epochs, ZAR, &[4, 5, 6], 11);
        assert_epochs(&epochs, FOO, &[1, 2, 3, 7, 8, 9], -1);
        assert_epochs(&epochs, BAR, &[4, 5, 6], -1);
    }

    // From Kafka's ConsumerGroupTest
    // .testUpdatingMemberUpdatesPartitionEpochWhenPartitionIsReassignedBeforeBeingRevoked.
    #[test]
    fn updating_member_updates_partition_epoch_when_reassigned_before_revoked() {
        let mut epochs = PartitionEpochs::new();
        let m = member("member", 10, Assignment::new(), assignment(&[(FOO, &[1])]));
        assert!(epochs.update_member(None, &m).is_empty());
        assert_eq!(epochs.epoch(&FOO, 1), 10);
        let m2 = member("member", 11, assignment(&[(FOO, &[1])]), Assignment::new());
        assert!(epochs.update_member(Some(&m), &m2).is_empty());
        assert_eq!(epochs.epoch(&FOO, 1), 11);
    }

    // From Kafka's ConsumerGroupTest.testUpdatingMemberUpdatesPartitionEpochWhenPartitionIsNotReleased.
    // Kafka throws for m3; kgroup lets the later write win and reports it.
    #[test]
    fn updating_member_updates_partition_epoch_when_not_released() {
        let mut epochs = PartitionEpochs::new();
        let m1 = member("m1", 10, assignment(&[(FOO, &[1])]), Assignment::new());
        assert!(epochs.update_member(None, &m1).is_empty());
        // m2 takes foo-1 at a larger epoch: no conflict.
        let m2 = member("m2", 11, assignment(&[(FOO, &[1])]), Assignment::new());
        assert!(epochs.update_member(None, &m2).is_empty());
        // m3 at a smaller epoch than foo-1's (11): the conflict Kafka throws on.
        let m3 = member("m3", 10, assignment(&[(FOO, &[1])]), Assignment::new());
        assert_eq!(
            epochs.update_member(None, &m3),
            vec![PartitionEpochConflict {
                topic_id: FOO,
                partition: 1,
                held_at: 11,
                epoch: 10
            }]
        );
        assert_eq!(epochs.epoch(&FOO, 1), 10);
    }

    // From Kafka's ConsumerGroupTest.testRemovePartitionEpochs.
    #[test]
    fn remove_partition_epochs() {
        let mut epochs = PartitionEpochs::new();
        // Nothing held: a no-op.
        epochs.remove(&assignment(&[(FOO, &[1])]), 10);
        assert!(epochs.is_empty());
        let m1 = member("m1", 10, assignment(&[(FOO, &[1])]), Assignment::new());
        epochs.update_member(None, &m1);
        // Another epoch: left alone.
        epochs.remove(&assignment(&[(FOO, &[1])]), 11);
        assert_eq!(epochs.epoch(&FOO, 1), 10);
        epochs.remove(&assignment(&[(FOO, &[1])]), 10);
        assert!(epochs.is_empty());
    }

    // From Kafka's ConsumerGroupTest.testAddPartitionEpochs (the last add throws in Kafka).
    #[test]
    fn add_partition_epochs() {
        let mut epochs = PartitionEpochs::new();
        assert!(epochs.add(&assignment(&[(FOO, &[1])]), 10).is_empty());
        assert!(epochs.add(&assignment(&[(FOO, &[1])]), 11).is_empty());
        assert_eq!(epochs.epoch(&FOO, 1), 11);
        let conflicts = epochs.add(&assignment(&[(FOO, &[1])]), 10);
        assert_eq!(conflicts.len(), 1);
        assert_eq!((conflicts[0].held_at, conflicts[0].epoch), (11, 10));
        // The same epoch twice is a conflict too (Kafka: not `prevValue < epoch`).
        assert_eq!(epochs.add(&assignment(&[(FOO, &[1])]), 10).len(), 1);
    }

    // From Kafka's ConsumerGroupTest.testDeletingMemberRemovesPartitionEpoch.
    #[test]
    fn deleting_member_removes_partition_epoch() {
        let mut epochs = PartitionEpochs::new();
        let m = member(
            "member",
            10,
            assignment(&[(FOO, &[1, 2, 3])]),
            assignment(&[(BAR, &[4, 5, 6])]),
        );
        epochs.update_member(None, &m);
        assert_epochs(&epochs, FOO, &[1, 2, 3], 10);
        assert_epochs(&epochs, BAR, &[4, 5, 6], 10);
        epochs.remove_member(&m);
        assert!(epochs.is_empty());
        assert_epochs(&epochs, FOO, &[1, 2, 3], -1);
        assert_epochs(&epochs, BAR, &[4, 5, 6], -1);
    }

    // From Kafka's ConsumerGroupTest.testWaitingOnUnreleasedPartition.
    #[test]
    fn waiting_on_unreleased_partition() {
        let mut epochs = PartitionEpochs::new();
        let target = assignment(&[(FOO, &[1, 2, 3]), (ZAR, &[7, 8, 9])]);
        let mut m1 = member(
            "m1",
            10,
            assignment(&[(FOO, &[1, 2, 3])]),
            assignment(&[(BAR, &[4, 5, 6])]),
        );
        m1.state = MemberState::UnreleasedPartitions;
        epochs.update_member(None, &m1);
        assert!(!epochs.waiting_on_unreleased_partition(&m1, &target));
        let m2 = member("m2", 10, Assignment::new(), assignment(&[(ZAR, &[7])]));
        epochs.update_member(None, &m2);
        assert!(epochs.waiting_on_unreleased_partition(&m1, &target));
        // Only an UnreleasedPartitions member waits.
        m1.state = MemberState::Stable;
        assert!(!epochs.waiting_on_unreleased_partition(&m1, &target));
    }
}
