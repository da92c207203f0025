//! ConsumerPart: what a group of the coordinator holds when it is a KIP-848 consumer group: the
//! [`ConsumerGroup`] itself, its members' session and rebalance timers, and the hash of its
//! subscribed topics' metadata. Records change it through [`ConsumerPart::apply`], the one
//! path both a heartbeat and a load take (Kafka's `GroupMetadataManager.replay` rules, reference
//! §7.4); a heartbeat keeps the [`Undo`]s to put the group back when its append fails (Kafka's
//! timeline snapshot).

use std::collections::BTreeMap;

use super::group::{ConsumerGroup, TopicInfo};
use super::member::ConsumerMember;
use super::records::{ConsumerGroupRecord, ResolvedRegex};
use crate::assignors::fxhash::FxMap;
use crate::coordinator::timers::Timer;
use crate::group::assignors::Assignment;
use crate::group::slab::Slab;

/// MemberTimers are one member's timers: its session, and its rebalance timeout while it must
/// revoke partitions.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemberTimers {
    pub member_id: String,
    pub session: Timer,
    pub rebalance: Timer,
    /// rebalance_epoch is the member epoch the rebalance timeout was armed at: it fences the
    /// member only if the member is still there.
    pub rebalance_epoch: i32,
}

/// CLASSIC_TIMER is the `rebalance_epoch` of a classic member's join or sync timeout (the
/// migration bridge's): it fences the member whatever its epoch.
pub(crate) const CLASSIC_TIMER: i32 = i32::MIN;

/// ConsumerPart is a consumer group as the coordinator hosts it.
#[derive(Debug, Clone)]
pub(crate) struct ConsumerPart {
    pub group: ConsumerGroup,
    pub timers: Slab<MemberTimers>,
    timer_slots: FxMap<String, u32>,
    /// metadata_hash is the hash of the subscribed topics' metadata the group epoch was last
    /// bumped at (record type 3's `MetadataHash`).
    pub metadata_hash: i64,
    /// metadata_seen is the coordinator's topic version the hash was last checked against; 0
    /// makes the next heartbeat check it (a loaded group, as Kafka's `onLoaded` asks).
    pub metadata_seen: u64,
    /// regexes_seen is the topic version the group's regexes were last resolved at.
    pub regexes_seen: u64,
}

/// Undo puts back one thing a record changed.
#[derive(Debug, Clone)]
pub(crate) enum Undo {
    Member(String, Option<Box<ConsumerMember>>),
    Target(String, Option<Assignment>),
    GroupEpoch(i32, i64),
    AssignmentEpoch(i32),
    Regex(String, Option<ResolvedRegex>),
}

/// Applied says what a record did beyond the group's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Applied {
    /// Changed: the group took the record.
    Changed,
    /// Deleted: a tombstone of the group's metadata (type 3): the group is gone.
    Deleted,
}

impl ConsumerPart {
    /// new is an empty consumer group.
    pub fn new(group_id: &str) -> Self {
        ConsumerPart {
            group: ConsumerGroup::new(group_id),
            timers: Slab::default(),
            timer_slots: FxMap::default(),
            metadata_hash: 0,
            metadata_seen: 0,
            regexes_seen: 0,
        }
    }

    /// timers_of is the timer slot of `member_id`, made when missing.
    pub fn timers_of(&mut self, member_id: &str) -> u32 {
        if let Some(s) = self.timer_slots.get(member_id) {
            return *s;
        }
        let s = self.timers.insert(MemberTimers {
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

    /// drop_timers forgets `member_id`'s timers; their heap entries go stale.
    pub fn drop_timers(&mut self, member_id: &str) {
        if let Some(s) = self.timer_slots.remove(member_id) {
            self.timers.remove(s);
        }
    }

    /// apply changes the group as `record` says, with Kafka's replay rules: a member's records
    /// create it when missing; a current-assignment tombstone leaves the member at epoch -1
    /// owning nothing; a member-metadata tombstone removes it; a tombstone of what does not
    /// exist is ignored. With `undo`, what the record changed is pushed there first.
    /// Records of another group change nothing.
    pub fn apply(&mut self, record: &ConsumerGroupRecord, undo: Option<&mut Vec<Undo>>) -> Applied {
        let g = &mut self.group;
        let save = |u: Undo| {
            if let Some(undo) = undo {
                undo.push(u);
            }
        };
        match record {
            ConsumerGroupRecord::Metadata { value, .. } => match value {
                Some((epoch, hash)) => {
                    save(Undo::GroupEpoch(g.group_epoch(), self.metadata_hash));
                    g.set_group_epoch(*epoch);
                    self.metadata_hash = *hash;
                }
                None => return Applied::Deleted,
            },
            ConsumerGroupRecord::PartitionMetadata { .. } => {}
            ConsumerGroupRecord::RegularExpression { regex, value, .. } => {
                let old = g.set_resolved_regex(regex, value.clone());
                if old.is_some() || value.is_some() {
                    save(Undo::Regex(regex.clone(), old));
                }
            }
            ConsumerGroupRecord::MemberMetadata { member, value, .. } => {
                let old = g.member(member).cloned();
                match value {
                    Some(v) => {
                        let mut m = old.clone().unwrap_or_else(|| ConsumerMember::new(member));
                        v.apply(&mut m);
                        save(Undo::Member(member.clone(), old.map(Box::new)));
                        g.update_member(m);
                    }
                    None => {
                        if old.is_some() {
                            save(Undo::Member(member.clone(), old.map(Box::new)));
                            g.remove_member(member);
                        }
                    }
                }
            }
            ConsumerGroupRecord::TargetAssignmentMetadata { value, .. } => {
                save(Undo::AssignmentEpoch(g.assignment_epoch()));
                g.set_assignment_epoch(value.unwrap_or(-1));
            }
            ConsumerGroupRecord::TargetAssignmentMember { member, value, .. } => {
                let old = g.target(member).cloned();
                match value {
                    Some(a) => {
                        save(Undo::Target(member.clone(), old));
                        g.set_target(member, a.clone());
                    }
                    None => {
                        if old.is_some() {
                            save(Undo::Target(member.clone(), old));
                            g.remove_target(member);
                        }
                    }
                }
            }
            ConsumerGroupRecord::CurrentMemberAssignment { member, value, .. } => {
                let old = g.member(member).cloned();
                match value {
                    Some(v) => {
                        let mut m = old.clone().unwrap_or_else(|| ConsumerMember::new(member));
                        v.apply(&mut m);
                        save(Undo::Member(member.clone(), old.map(Box::new)));
                        g.update_member(m);
                    }
                    None => {
                        if let Some(mut m) = old.clone() {
                            m.member_epoch = -1;
                            m.previous_member_epoch = -1;
                            m.hold(Assignment::new(), Assignment::new(), -1);
                            save(Undo::Member(member.clone(), old.map(Box::new)));
                            g.update_member(m);
                        }
                    }
                }
            }
        }
        Applied::Changed
    }

    /// undo puts back what `undos` (as [`ConsumerPart::apply`] pushed them) changed, latest
    /// first.
    pub fn undo(&mut self, undos: Vec<Undo>) {
        let g = &mut self.group;
        for u in undos.into_iter().rev() {
            match u {
                Undo::Member(id, Some(m)) => {
                    g.update_member(*m);
                    debug_assert!(g.has_member(&id));
                }
                Undo::Member(id, None) => {
                    g.remove_member(&id);
                }
                Undo::Target(id, Some(a)) => g.set_target(&id, a),
                Undo::Target(id, None) => {
                    g.remove_target(&id);
                }
                Undo::GroupEpoch(e, h) => {
                    g.set_group_epoch(e);
                    self.metadata_hash = h;
                }
                Undo::AssignmentEpoch(e) => g.set_assignment_epoch(e),
                Undo::Regex(regex, old) => {
                    g.set_resolved_regex(&regex, old);
                }
            }
        }
    }
}

/// metadata_hash is a hash of the metadata of the topics a group subscribes to (name, topic id,
/// partition count), 0 when none of them exists: a change of it bumps the group epoch (Kafka
/// 4.1's KIP-1101 hash plays this part; this is kgroup's own function of the same inputs, so a
/// group loaded from a log Kafka wrote recomputes its target once).
pub(crate) fn metadata_hash<'a>(
    names: impl Iterator<Item = &'a String>,
    topics: &BTreeMap<String, TopicInfo>,
) -> i64 {
    // FNV-1a over the sorted names' metadata: stable across runs and builds.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut any = false;
    let mut put = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for name in names {
        if let Some(t) = topics.get(name) {
            any = true;
            put(&(name.len() as u32).to_be_bytes());
            put(name.as_bytes());
            put(&t.topic_id);
            put(&t.partition_count.to_be_bytes());
        }
    }
    if any {
        h as i64
    } else {
        0
    }
}
