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
use crate::group::assignors::{Assignment, TopicId};
use crate::group::slab::Slab;
use xxhash_rust::xxh3::xxh3_64;

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
    AssignmentEpoch(i32, i64),
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
                save(Undo::AssignmentEpoch(
                    g.assignment_epoch(),
                    g.assignment_timestamp(),
                ));
                let (epoch, timestamp) = value.unwrap_or((-1, 0));
                g.set_target_assignment_metadata(epoch, timestamp);
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
                Undo::AssignmentEpoch(e, t) => g.set_target_assignment_metadata(e, t),
                Undo::Regex(regex, old) => {
                    g.set_resolved_regex(&regex, old);
                }
            }
        }
    }
}

/// metadata_hash is the hash of the metadata of the topics a group subscribes to, Kafka's own
/// (KIP-1101, `ModernGroup.computeMetadataHash`): XXH3-64 over the [`topic_hash`]es of the
/// subscribed topics that exist, in the order of their names; 0 when none of them exists. A
/// change of it bumps the group epoch, and it is the `metadata_hash` of the group's
/// `ConsumerGroupMetadataValue`, so a group moves between Kafka's log and kgroup's without an
/// epoch bump. Deterministic: it depends on the set of names only, not on their order.
pub(crate) fn metadata_hash<'a>(
    names: impl Iterator<Item = &'a String>,
    topics: &BTreeMap<String, TopicInfo>,
) -> i64 {
    // kgroup's broker has no `broker.rack`: no partition has a rack, as on a Kafka cluster
    // whose brokers set none.
    let mut hashes: Vec<(&str, i64)> = names
        .filter_map(|n| {
            let t = topics.get(n)?;
            let h = topic_hash(&t.topic_id, n, t.partition_count, &[]);
            Some((n.as_str(), h))
        })
        .collect();
    if hashes.is_empty() {
        return 0;
    }
    // Kafka sorts by `String.compareTo`, UTF-16 order, which is byte order for topic names
    // (ASCII only); dedup in case a caller repeats a name (Kafka's map cannot).
    hashes.sort_unstable_by_key(|(n, _)| *n);
    hashes.dedup_by_key(|(n, _)| *n);
    let mut bytes = Vec::with_capacity(8 * hashes.len());
    for (_, h) in hashes {
        bytes.extend_from_slice(&h.to_le_bytes());
    }
    xxh3_64(&bytes) as i64
}

/// TOPIC_HASH_MAGIC heads every topic hash (Kafka's `Utils.TOPIC_HASH_MAGIC_BYTE`): Kafka
/// changes it whenever the hash's input changes.
const TOPIC_HASH_MAGIC: u8 = 0;

/// topic_hash is Kafka's `Utils.computeTopicHash`: XXH3-64 over the bytes hash4j's
/// `HashStream64` feeds it, every number little-endian and every string as its UTF-16 code
/// units followed by their count (`putString`): the magic byte, the topic id's two halves
/// (most significant first), the name, the partition count, then each partition's index and
/// the racks of its replicas' brokers, sorted, each as its length then the string. `racks[p]`
/// lists partition `p`'s racks (repeats kept, as Kafka's image lists one per replica); a
/// partition past the end of `racks` has none.
fn topic_hash(topic_id: &TopicId, name: &str, partition_count: i32, racks: &[Vec<&str>]) -> i64 {
    fn put_string(bytes: &mut Vec<u8>, s: &str) {
        let mut units = 0u32;
        for u in s.encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
            units += 1;
        }
        bytes.extend_from_slice(&units.to_le_bytes());
    }
    let mut bytes =
        Vec::with_capacity(1 + 16 + 2 * name.len() + 8 + 4 * partition_count.max(0) as usize);
    bytes.push(TOPIC_HASH_MAGIC);
    let (msb, lsb) = topic_id.split_at(8);
    bytes.extend(msb.iter().rev());
    bytes.extend(lsb.iter().rev());
    put_string(&mut bytes, name);
    bytes.extend_from_slice(&partition_count.to_le_bytes());
    for p in 0..partition_count {
        bytes.extend_from_slice(&p.to_le_bytes());
        let Some(partition_racks) = racks.get(p as usize) else {
            continue;
        };
        let mut sorted = partition_racks.clone();
        sorted.sort_unstable_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        for rack in sorted {
            // The length first, then `putString` (which ends with the length again).
            let units = rack.encode_utf16().count() as u32;
            bytes.extend_from_slice(&units.to_le_bytes());
            put_string(&mut bytes, rack);
        }
    }
    xxh3_64(&bytes) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(hex: &str) -> TopicId {
        let mut id = [0u8; 16];
        for (i, b) in id.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
        }
        id
    }

    fn topics(list: &[(&str, TopicId, i32)]) -> BTreeMap<String, TopicInfo> {
        list.iter()
            .map(|(n, topic_id, partition_count)| {
                let info = TopicInfo {
                    topic_id: *topic_id,
                    partition_count: *partition_count,
                };
                (n.to_string(), info)
            })
            .collect()
    }

    fn group_hash(names: &[&str], topics: &BTreeMap<String, TopicInfo>) -> i64 {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        metadata_hash(names.iter(), topics)
    }

    // Vectors from Kafka 4.4.0's own code (`Utils.computeTopicHash`,
    // `ModernGroup.computeMetadataHash`), run by tests/support/java_hash/MetadataHash.java;
    // tests/group/test_metadata_hash.py checks random ones the same way.
    const FOO: &str = "0123456789abcdef0011223344556677";
    const BAR: &str = "ffffffffffffffff8000000000000001";
    const LONG: &str = "a-topic.with_a.longer-name";

    #[test]
    fn topic_hash_is_kafkas() {
        assert_eq!(topic_hash(&id(FOO), "foo", 3, &[]), 1445883863706929052);
        assert_eq!(topic_hash(&id(BAR), "bar", 1, &[]), -7037401469300559187);
        // 289 bytes of input: XXH3's path for long inputs.
        assert_eq!(topic_hash(&[0x5a; 16], LONG, 60, &[]), 5064778981797170089);
        assert_eq!(topic_hash(&[0; 16], "t00", 1, &[]), -2916057113197117098);
        assert_eq!(topic_hash(&[1; 16], "t01", 2, &[]), 2839861543768472583);
    }

    #[test]
    fn topic_hash_sorts_each_partitions_racks() {
        let racked = id("00000000000000000000000000000001");
        let want = 7664111145859401574;
        let racks = [vec!["b", "a", "a"], vec![], vec!["c"]];
        assert_eq!(topic_hash(&racked, "racked", 3, &racks), want);
        let racks = [vec!["a", "b", "a"], vec![], vec!["c"]];
        assert_eq!(topic_hash(&racked, "racked", 3, &racks), want);
        // No racks at all, as on kgroup's broker.
        assert_eq!(topic_hash(&racked, "racked", 3, &[]), -6077004238533151472);
    }

    #[test]
    fn metadata_hash_is_kafkas() {
        let known = topics(&[
            ("foo", id(FOO), 3),
            ("bar", id(BAR), 1),
            (LONG, [0x5a; 16], 60),
        ]);
        assert_eq!(group_hash(&["foo"], &known), -4480113874308730505);
        assert_eq!(group_hash(&["foo", "bar"], &known), 3602605861379434279);
        // In name order whatever the caller's; topics that do not exist are left out.
        assert_eq!(
            group_hash(&["bar", "foo", "missing"], &known),
            3602605861379434279
        );
        assert_eq!(
            group_hash(&["foo", "bar", LONG, "missing"], &known),
            3026117729212324267
        );
        assert_eq!(group_hash(&["missing"], &known), 0);
        assert_eq!(group_hash(&[], &known), 0);

        // t00..t39 with ids [i; 16] and i + 1 partitions: 160 and 320 bytes of topic hashes,
        // XXH3's two paths for longer inputs.
        let names: Vec<String> = (0..40).map(|i| format!("t{i:02}")).collect();
        let many: BTreeMap<String, TopicInfo> = (0..40u8)
            .map(|i| {
                let info = TopicInfo {
                    topic_id: [i; 16],
                    partition_count: i32::from(i) + 1,
                };
                (names[usize::from(i)].clone(), info)
            })
            .collect();
        let first20: Vec<&str> = names[..20].iter().map(String::as_str).collect();
        assert_eq!(group_hash(&first20, &many), 2095752832584191712);
        let all: Vec<&str> = names.iter().rev().map(String::as_str).collect();
        assert_eq!(group_hash(&all, &many), 1978546749576483792);
    }
}
