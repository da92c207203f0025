//! SharePart: what a group of the coordinator holds when it is a share group (Kafka's
//! `ShareGroup` and its entry of `shareGroupStatePartitionMetadata`): its members, their target
//! assignments, the group and assignment epochs, the share-partition state metadata, and the
//! members' session timers. Records change it through [`SharePart::apply`], the one path a
//! heartbeat and a load both take (Kafka's `GroupMetadataManager.replay` for types 10-15); a
//! heartbeat keeps the [`Undo`]s to put the group back when its append fails.

use std::collections::{BTreeMap, BTreeSet};

use super::records::{
    CurrentAssignment, MemberMetadata, ShareGroupRecord, StatePartitionMetadata, TopicPartitions,
};
use crate::assignors::fxhash::FxMap;
use crate::coordinator::timers::Timer;
use crate::group::assignors::{Assignment, TopicId};
use crate::group::slab::Slab;

/// STABLE is Kafka's `MemberState.STABLE`, the one state of a share member.
pub(crate) const STABLE: i8 = 0;

/// ShareMember is one member of a share group (Kafka's `ShareGroupMember`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShareMember {
    pub member_id: String,
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    pub state: i8,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub subscribed_topic_names: BTreeSet<String>,
    pub assigned_partitions: Assignment,
}

impl ShareMember {
    /// new is a member as Kafka's builder makes one: epoch 0, previous epoch -1, STABLE.
    pub fn new(member_id: &str) -> Self {
        ShareMember {
            member_id: member_id.to_string(),
            member_epoch: 0,
            previous_member_epoch: -1,
            state: STABLE,
            rack_id: None,
            client_id: String::new(),
            client_host: String::new(),
            subscribed_topic_names: BTreeSet::new(),
            assigned_partitions: Assignment::new(),
        }
    }

    /// metadata is what record type 10 holds of the member.
    pub fn metadata(&self) -> MemberMetadata {
        MemberMetadata {
            rack_id: self.rack_id.clone(),
            client_id: self.client_id.clone(),
            client_host: self.client_host.clone(),
            subscribed_topic_names: self.subscribed_topic_names.clone(),
        }
    }

    /// current is what record type 14 holds of the member.
    pub fn current(&self) -> CurrentAssignment {
        CurrentAssignment {
            member_epoch: self.member_epoch,
            previous_member_epoch: self.previous_member_epoch,
            state: self.state,
            assigned_partitions: self.assigned_partitions.clone(),
        }
    }

    fn set_metadata(&mut self, m: &MemberMetadata) {
        self.rack_id = m.rack_id.clone();
        self.client_id = m.client_id.clone();
        self.client_host = m.client_host.clone();
        self.subscribed_topic_names = m.subscribed_topic_names.clone();
    }

    fn set_current(&mut self, c: &CurrentAssignment) {
        self.member_epoch = c.member_epoch;
        self.previous_member_epoch = c.previous_member_epoch;
        self.state = c.state;
        self.assigned_partitions = c.assigned_partitions.clone();
    }
}

/// InitState is the group's share-partition state metadata (record type 15) as the coordinator
/// keeps it: the partitions whose state is being initialized (with when that was asked, Kafka's
/// `InitMapValue.timestamp`, which the log does not hold: every record 15 applied stamps all
/// of them with the time, as Kafka's replay does; a loaded one counts from the group's
/// activation), those initialized, the topics being deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct InitState {
    pub initializing: BTreeMap<TopicId, (TopicPartitions, i64)>,
    pub initialized: BTreeMap<TopicId, TopicPartitions>,
    pub deleting: BTreeMap<TopicId, String>,
}

impl InitState {
    /// of is the state a record's value gives, its initializing entries stamped `now`.
    pub fn of(v: &StatePartitionMetadata, now: i64) -> Self {
        InitState {
            initializing: v
                .initializing
                .iter()
                .map(|(id, t)| (*id, (t.clone(), now)))
                .collect(),
            initialized: v.initialized.clone(),
            deleting: v.deleting.clone(),
        }
    }

    /// value is the record's value of this state.
    pub fn value(&self) -> StatePartitionMetadata {
        StatePartitionMetadata {
            initializing: self
                .initializing
                .iter()
                .map(|(id, (t, _))| (*id, t.clone()))
                .collect(),
            initialized: self.initialized.clone(),
            deleting: self.deleting.clone(),
        }
    }

    /// is_initialized tells whether a partition's share state is initialized.
    pub fn is_initialized(&self, topic: &TopicId, partition: i32) -> bool {
        self.initialized
            .get(topic)
            .is_some_and(|t| t.partitions.contains(&partition))
    }
}

/// MemberTimer is one member's session timer.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemberTimer {
    pub member_id: String,
    pub session: Timer,
}

/// SharePart is a share group as the coordinator hosts it.
#[derive(Debug, Clone, Default)]
pub(crate) struct SharePart {
    pub group_id: String,
    pub group_epoch: i32,
    /// metadata_hash is the hash of the subscribed topics' metadata at the last epoch bump.
    pub metadata_hash: i64,
    pub assignment_epoch: i32,
    pub members: BTreeMap<String, ShareMember>,
    pub targets: BTreeMap<String, Assignment>,
    /// init is the share-partition state metadata; None before the group's first record 15.
    pub init: Option<InitState>,
    pub timers: Slab<MemberTimer>,
    timer_slots: FxMap<String, u32>,
    /// metadata_seen is the coordinator's topic version the hash was last checked against; 0
    /// makes the next heartbeat check it.
    pub metadata_seen: u64,
}

/// Undo puts back one thing a record changed.
#[derive(Debug, Clone)]
pub(crate) enum Undo {
    Member(String, Option<Box<ShareMember>>),
    Target(String, Option<Assignment>),
    GroupEpoch(i32, i64),
    AssignmentEpoch(i32),
    Init(Option<Box<InitState>>),
}

/// Applied says what a record did beyond the group's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Applied {
    Changed,
    /// Deleted: a tombstone of the group's metadata (type 11): the group is gone.
    Deleted,
}

impl SharePart {
    /// new is an empty share group.
    pub fn new(group_id: &str) -> Self {
        SharePart {
            group_id: group_id.to_string(),
            ..Default::default()
        }
    }

    /// is_empty tells whether the group has no member (state Empty, else Stable).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// state is Kafka's name of the group's state.
    pub fn state(&self) -> &'static str {
        if self.is_empty() {
            "Empty"
        } else {
            "Stable"
        }
    }

    /// subscribed_topic_names are the topic names the members subscribe to.
    pub fn subscribed_topic_names(&self) -> BTreeSet<String> {
        self.members
            .values()
            .flat_map(|m| m.subscribed_topic_names.iter().cloned())
            .collect()
    }

    /// timers_of is the timer slot of `member_id`, made when missing.
    pub fn timers_of(&mut self, member_id: &str) -> u32 {
        if let Some(s) = self.timer_slots.get(member_id) {
            return *s;
        }
        let s = self.timers.insert(MemberTimer {
            member_id: member_id.to_string(),
            ..Default::default()
        });
        self.timer_slots.insert(member_id.to_string(), s);
        s
    }

    /// timer_slot is the timer slot of `member_id`, if it has one.
    pub fn timer_slot(&self, member_id: &str) -> Option<u32> {
        self.timer_slots.get(member_id).copied()
    }

    /// drop_timers forgets `member_id`'s timer; its heap entry goes stale.
    pub fn drop_timers(&mut self, member_id: &str) {
        if let Some(s) = self.timer_slots.remove(member_id) {
            self.timers.remove(s);
        }
    }

    /// apply changes the group as `record` says, with Kafka's replay rules: a member's records
    /// create it when missing; a current-assignment tombstone leaves the member at epoch -1
    /// owning nothing; a member-metadata tombstone removes it; a tombstone of what does not
    /// exist is ignored. `now` stamps initializing partitions. With `undo`, what the record
    /// changed is pushed there first.
    pub fn apply(
        &mut self,
        record: &ShareGroupRecord,
        now: i64,
        undo: Option<&mut Vec<Undo>>,
    ) -> Applied {
        let save = |u: Undo| {
            if let Some(undo) = undo {
                undo.push(u);
            }
        };
        match record {
            ShareGroupRecord::MemberMetadata { member, value, .. } => {
                let old = self.members.get(member).cloned();
                match value {
                    Some(v) => {
                        let mut m = old.clone().unwrap_or_else(|| ShareMember::new(member));
                        m.set_metadata(v);
                        save(Undo::Member(member.clone(), old.map(Box::new)));
                        self.members.insert(member.clone(), m);
                    }
                    None => {
                        if old.is_some() {
                            save(Undo::Member(member.clone(), old.map(Box::new)));
                            self.members.remove(member);
                        }
                    }
                }
            }
            ShareGroupRecord::Metadata { value, .. } => match value {
                Some((epoch, hash)) => {
                    save(Undo::GroupEpoch(self.group_epoch, self.metadata_hash));
                    self.group_epoch = *epoch;
                    self.metadata_hash = *hash;
                }
                None => return Applied::Deleted,
            },
            ShareGroupRecord::TargetAssignmentMetadata { value, .. } => {
                save(Undo::AssignmentEpoch(self.assignment_epoch));
                self.assignment_epoch = value.map_or(-1, |(epoch, _)| epoch);
            }
            ShareGroupRecord::TargetAssignmentMember { member, value, .. } => {
                let old = self.targets.get(member).cloned();
                match value {
                    Some(a) => {
                        save(Undo::Target(member.clone(), old));
                        self.targets.insert(member.clone(), a.clone());
                    }
                    None => {
                        if old.is_some() {
                            save(Undo::Target(member.clone(), old));
                            self.targets.remove(member);
                        }
                    }
                }
            }
            ShareGroupRecord::CurrentMemberAssignment { member, value, .. } => {
                let old = self.members.get(member).cloned();
                match value {
                    Some(c) => {
                        let mut m = old.clone().unwrap_or_else(|| ShareMember::new(member));
                        m.set_current(c);
                        save(Undo::Member(member.clone(), old.map(Box::new)));
                        self.members.insert(member.clone(), m);
                    }
                    None => {
                        if let Some(mut m) = old.clone() {
                            m.member_epoch = -1;
                            m.previous_member_epoch = -1;
                            m.assigned_partitions = Assignment::new();
                            save(Undo::Member(member.clone(), old.map(Box::new)));
                            self.members.insert(member.clone(), m);
                        }
                    }
                }
            }
            ShareGroupRecord::StatePartitionMetadata { value, .. } => {
                save(Undo::Init(self.init.clone().map(Box::new)));
                // Kafka's replay stamps every initializing entry with the time of the replay.
                self.init = value.as_ref().map(|v| InitState::of(v, now));
            }
        }
        Applied::Changed
    }

    /// undo puts back what `undos` (as [`SharePart::apply`] pushed them) changed, latest first.
    pub fn undo(&mut self, undos: Vec<Undo>) {
        for u in undos.into_iter().rev() {
            match u {
                Undo::Member(id, Some(m)) => {
                    self.members.insert(id, *m);
                }
                Undo::Member(id, None) => {
                    self.members.remove(&id);
                }
                Undo::Target(id, Some(a)) => {
                    self.targets.insert(id, a);
                }
                Undo::Target(id, None) => {
                    self.targets.remove(&id);
                }
                Undo::GroupEpoch(e, h) => {
                    self.group_epoch = e;
                    self.metadata_hash = h;
                }
                Undo::AssignmentEpoch(e) => self.assignment_epoch = e,
                Undo::Init(s) => self.init = s.map(|b| *b),
            }
        }
    }

    /// same_data tells whether two parts hold the same group (timers and caches aside), for
    /// the load tests.
    #[cfg(test)]
    pub fn same_data(&self, other: &SharePart) -> bool {
        let strip = |s: &Option<InitState>| {
            s.as_ref().map(|s| {
                let mut s = s.clone();
                for (_, at) in s.initializing.values_mut() {
                    *at = 0;
                }
                s
            })
        };
        self.group_id == other.group_id
            && self.group_epoch == other.group_epoch
            && self.metadata_hash == other.metadata_hash
            && self.assignment_epoch == other.assignment_epoch
            && self.members == other.members
            && self.targets == other.targets
            && strip(&self.init) == strip(&other.init)
    }
}
