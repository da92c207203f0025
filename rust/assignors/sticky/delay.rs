//! ScheduledDelay: KIP-415's scheduled rebalance delay (`scheduled.rebalance.max.delay.ms`,
//! Kafka Connect's incremental cooperative assignor), as an option of the cooperative assignor.
//!
//! When a member disappears, its partitions are not spread at once: for up to the delay they
//! stay unassigned, so that a member coming back (a restart, a rolling bounce) gets them back
//! without anything moving. When the delay runs out they are spread as usual.
//!
//! How: the departed member stays in the computation as a stand-in that owns its partitions;
//! the balance is computed as if it were still there, so nobody else gains or loses a partition
//! because of it, and the stand-in's share is then left out of the answer. A member is
//! recognised when it comes back by its `group.instance.id` (static membership, KIP-345) or else
//! its member id; a new member with no partitions and the same topics as a departed one takes
//! over that member's partitions (a dynamic member restarts under a new member id), as
//! Connect gives lost tasks to new workers. While partitions are held back, every assignment
//! carries the remaining delay in its user data ([`encode_delay_user_data`]), so members rejoin
//! when it runs out and the follow-up rebalance spreads what is still held.

use std::collections::HashMap;
use std::sync::Arc;

use crate::assignors::{GroupInput, Member, Subscription, TopicPartition};
use crate::errors::{Error, Result};

/// DELAY_USER_DATA_VERSION is the version of [`encode_delay_user_data`]'s layout.
pub const DELAY_USER_DATA_VERSION: i16 = 0;

/// encode_delay_user_data writes the remaining delay for the assignment user data:
/// int16 version (0), int32 remaining delay in milliseconds (big-endian, like Kafka's types).
pub fn encode_delay_user_data(delay_ms: i32) -> Vec<u8> {
    let mut v = Vec::with_capacity(6);
    v.extend_from_slice(&DELAY_USER_DATA_VERSION.to_be_bytes());
    v.extend_from_slice(&delay_ms.to_be_bytes());
    v
}

/// decode_delay_user_data reads [`encode_delay_user_data`]'s layout (later versions may add
/// fields after these, which are ignored).
pub fn decode_delay_user_data(data: &[u8]) -> Result<i32> {
    if data.len() < 6 {
        return Err(Error::malformed(format!(
            "scheduled-delay user data needs 6 bytes, got {}",
            data.len()
        )));
    }
    let version = i16::from_be_bytes([data[0], data[1]]);
    if version < 0 {
        return Err(Error::malformed(format!(
            "scheduled-delay user data has version {version}"
        )));
    }
    Ok(i32::from_be_bytes([data[2], data[3], data[4], data[5]]))
}

#[derive(Debug, Clone)]
struct Held {
    member_id: Arc<str>,
    topics: Vec<Arc<str>>,
    partitions: Vec<TopicPartition>,
    deadline_ms: i64,
}

#[derive(Debug, Clone)]
struct Last {
    member_id: Arc<str>,
    topics: Vec<Arc<str>>,
    partitions: Vec<TopicPartition>,
}

/// ScheduledDelay remembers the last assignment and the departed members whose partitions are
/// held back. It belongs to one leader's assignor, like Connect's leader state.
#[derive(Debug, Clone, Default)]
pub struct ScheduledDelay {
    /// The longest time partitions of a departed member are held back (0: spread at once).
    pub max_delay_ms: i64,
    last: HashMap<Arc<str>, Last>,
    held: HashMap<Arc<str>, Held>,
}

/// STAND_IN_PREFIX starts the member ids of stand-ins; a NUL cannot start a real member id
/// (the coordinator builds them from the client id and a UUID).
const STAND_IN_PREFIX: &str = "\u{0}kgroup-held:";

fn identity(m: &Member) -> Arc<str> {
    match &m.subscription.group_instance_id {
        Some(i) => Arc::from(format!("i:{i}")),
        None => Arc::from(format!("m:{}", m.id)),
    }
}

/// Prepared is the input with stand-ins, and what to do with the answer.
pub(super) struct Prepared {
    pub input: GroupInput,
    /// Number of real members (stand-ins follow them in `input.members`).
    pub real: usize,
    /// Remaining delay to announce, when partitions are held back.
    pub remaining_ms: Option<i64>,
}

impl ScheduledDelay {
    /// new holds a departed member's partitions back for up to `max_delay_ms`.
    pub fn new(max_delay_ms: i64) -> Self {
        ScheduledDelay {
            max_delay_ms,
            ..Default::default()
        }
    }

    /// held_back lists the partitions currently held back, by departed member id.
    pub fn held_back(&self) -> Vec<(Arc<str>, Vec<TopicPartition>, i64)> {
        let mut v: Vec<_> = self
            .held
            .values()
            .map(|h| (h.member_id.clone(), h.partitions.clone(), h.deadline_ms))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// prepare adds stand-ins for departed members still within their delay, and gives
    /// returning members (or newcomers taking a departed member's place) their partitions as
    /// owned, claimed at `generation`.
    pub(super) fn prepare(&mut self, input: &GroupInput, now_ms: i64, generation: i32) -> Prepared {
        let present: HashMap<Arc<str>, usize> = input
            .members
            .iter()
            .enumerate()
            .map(|(i, m)| (identity(m), i))
            .collect();
        for (id, last) in &self.last {
            if !present.contains_key(id)
                && !self.held.contains_key(id)
                && !last.partitions.is_empty()
            {
                self.held.insert(
                    id.clone(),
                    Held {
                        member_id: last.member_id.clone(),
                        topics: last.topics.clone(),
                        partitions: last.partitions.clone(),
                        deadline_ms: now_ms.saturating_add(self.max_delay_ms),
                    },
                );
            }
        }
        self.held.retain(|_, h| h.deadline_ms > now_ms);
        let mut members = input.members.clone();
        // Returning members first, then newcomers with nothing that match a departed member.
        for (id, &i) in &present {
            if let Some(h) = self.held.remove(id) {
                give(&mut members[i], h.partitions, generation);
            }
        }
        let mut candidates: Vec<(i64, Arc<str>)> = self
            .held
            .iter()
            .map(|(k, h)| (h.deadline_ms, k.clone()))
            .collect();
        candidates.sort();
        for (_, key) in candidates {
            let h = &self.held[&key];
            let newcomer = members.iter().position(|m| {
                let s = &m.subscription;
                s.owned_partitions.is_empty()
                    && !self.was_seen(&identity(m))
                    && same_set(&s.topics, &h.topics)
            });
            if let Some(i) = newcomer {
                let h = self.held.remove(&key).expect("present");
                give(&mut members[i], h.partitions, generation);
            }
        }
        let real = members.len();
        let mut remaining: Option<i64> = None;
        let mut keys: Vec<&Arc<str>> = self.held.keys().collect();
        keys.sort();
        for key in keys {
            let h = &self.held[key];
            let left = h.deadline_ms - now_ms;
            remaining = Some(remaining.map_or(left, |r| r.min(left)));
            let mut s = Subscription::new(h.topics.iter().cloned());
            s.owned_partitions = h.partitions.clone();
            s.generation_id = generation.max(0);
            members.push(Member {
                id: Arc::from(format!("{STAND_IN_PREFIX}{}", h.member_id)),
                subscription: Arc::new(s),
            });
        }
        Prepared {
            input: GroupInput {
                partitions_per_topic: input.partitions_per_topic.clone(),
                members,
                partition_racks: input.partition_racks.clone(),
            },
            real,
            remaining_ms: remaining,
        }
    }

    fn was_seen(&self, id: &Arc<str>) -> bool {
        self.last.contains_key(id)
    }

    /// record remembers what each member got, to notice who departs next time.
    pub(super) fn record(&mut self, input: &GroupInput, lists: &[Vec<TopicPartition>]) {
        self.last = input
            .members
            .iter()
            .zip(lists)
            .map(|(m, l)| {
                (
                    identity(m),
                    Last {
                        member_id: m.id.clone(),
                        topics: m.subscription.topics.clone(),
                        partitions: l.clone(),
                    },
                )
            })
            .collect();
    }
}

fn give(member: &mut Member, partitions: Vec<TopicPartition>, generation: i32) {
    let s = Arc::make_mut(&mut member.subscription);
    if s.owned_partitions.is_empty() {
        s.owned_partitions = partitions;
        s.generation_id = generation.max(0);
        s.user_data = Some(s.generation_id.to_be_bytes().to_vec());
    }
}

fn same_set(a: &[Arc<str>], b: &[Arc<str>]) -> bool {
    let mut x: Vec<&str> = a.iter().map(|t| &**t).collect();
    let mut y: Vec<&str> = b.iter().map(|t| &**t).collect();
    x.sort_unstable();
    x.dedup();
    y.sort_unstable();
    y.dedup();
    x == y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignors::sticky::StickyAssignor;

    fn group(members: &[(&str, &[i32], i32)]) -> GroupInput {
        GroupInput {
            partitions_per_topic: vec![(Arc::from("t"), 4)],
            members: members
                .iter()
                .map(|(id, owned, generation)| {
                    let mut s = Subscription::new(["t"]);
                    s.owned_partitions =
                        owned.iter().map(|&p| TopicPartition::new("t", p)).collect();
                    s.generation_id = *generation;
                    Member {
                        id: Arc::from(*id),
                        subscription: Arc::new(s),
                    }
                })
                .collect(),
            partition_racks: None,
        }
    }

    fn lists(
        input: &GroupInput,
        out: &crate::assignors::sticky::StickyOutcome,
    ) -> Vec<(String, Vec<i32>)> {
        input
            .members
            .iter()
            .zip(&out.assignment.assignments)
            .map(|(m, a)| {
                (
                    m.id.to_string(),
                    a.partitions.iter().map(|tp| tp.partition).collect(),
                )
            })
            .collect()
    }

    fn delay_of(out: &crate::assignors::sticky::StickyOutcome) -> Option<i32> {
        out.assignment.assignments[0]
            .user_data
            .as_deref()
            .map(|d| decode_delay_user_data(d).unwrap())
    }

    // KIP-415's "worker bounces" example with consumers C1, C2, C3 over partitions P0..P3.
    #[test]
    fn departed_member_comes_back_within_the_delay() {
        let mut a = StickyAssignor::new(true).with_delay(5_000);
        let g = group(&[("C1", &[], -1), ("C2", &[], -1), ("C3", &[], -1)]);
        let r1 = a.assign_at(&g, 0).unwrap();
        assert_eq!(
            lists(&g, &r1),
            [
                ("C1".into(), vec![0, 3]),
                ("C2".into(), vec![1]),
                ("C3".into(), vec![2])
            ]
        );
        assert_eq!(delay_of(&r1), None);
        // C2 leaves: its P1 stays unassigned, nobody else moves, members learn the delay.
        let g = group(&[("C1", &[0, 3], 1), ("C3", &[2], 1)]);
        let r2 = a.assign_at(&g, 1_000).unwrap();
        assert_eq!(
            lists(&g, &r2),
            [("C1".into(), vec![0, 3]), ("C3".into(), vec![2])]
        );
        assert_eq!(delay_of(&r2), Some(5_000));
        // C2 comes back before the delay runs out: it gets P1 back, nothing moved.
        let g = group(&[("C1", &[0, 3], 2), ("C2", &[], -1), ("C3", &[2], 2)]);
        let r3 = a.assign_at(&g, 4_000).unwrap();
        assert_eq!(
            lists(&g, &r3),
            [
                ("C1".into(), vec![0, 3]),
                ("C2".into(), vec![1]),
                ("C3".into(), vec![2])
            ]
        );
        assert_eq!(delay_of(&r3), None);
        assert!(r3.transferring.is_empty());
    }

    #[test]
    fn partitions_are_spread_when_the_delay_runs_out() {
        let mut a = StickyAssignor::new(true).with_delay(5_000);
        let g = group(&[("C1", &[], -1), ("C2", &[], -1), ("C3", &[], -1)]);
        a.assign_at(&g, 0).unwrap();
        let g = group(&[("C1", &[0, 3], 1), ("C3", &[2], 1)]);
        let r2 = a.assign_at(&g, 1_000).unwrap();
        assert_eq!(delay_of(&r2), Some(5_000));
        // Rejoining early: still held, with less delay left.
        let g = group(&[("C1", &[0, 3], 2), ("C3", &[2], 2)]);
        let r = a.assign_at(&g, 4_000).unwrap();
        assert_eq!(
            lists(&g, &r),
            [("C1".into(), vec![0, 3]), ("C3".into(), vec![2])]
        );
        assert_eq!(delay_of(&r), Some(2_000));
        // After the delay: P1 goes to the least loaded member; nothing else moves.
        let g = group(&[("C1", &[0, 3], 3), ("C3", &[2], 3)]);
        let r3 = a.assign_at(&g, 6_000).unwrap();
        assert_eq!(
            lists(&g, &r3),
            [("C1".into(), vec![0, 3]), ("C3".into(), vec![2, 1])]
        );
        assert_eq!(delay_of(&r3), None);
        // Without the option, the plain assignor spreads P1 at once.
        let mut plain = StickyAssignor::new(true);
        let r = plain
            .assign_at(&group(&[("C1", &[0, 3], 1), ("C3", &[2], 1)]), 1_000)
            .unwrap();
        assert_eq!(r.assignment.assignments[1].partitions.len(), 2);
    }

    #[test]
    fn a_restarted_dynamic_member_takes_over_under_a_new_id() {
        let mut a = StickyAssignor::new(true).with_delay(5_000);
        a.assign_at(
            &group(&[("C1", &[], -1), ("C2", &[], -1), ("C3", &[], -1)]),
            0,
        )
        .unwrap();
        a.assign_at(&group(&[("C1", &[0, 3], 1), ("C3", &[2], 1)]), 1_000)
            .unwrap();
        let g = group(&[
            ("C1", &[0, 3], 2),
            ("C2-restarted", &[], -1),
            ("C3", &[2], 2),
        ]);
        let r = a.assign_at(&g, 2_000).unwrap();
        assert_eq!(lists(&g, &r)[1], ("C2-restarted".into(), vec![1]));
        assert!(a.delay.as_ref().unwrap().held_back().is_empty());
    }

    #[test]
    fn user_data_layout() {
        assert_eq!(encode_delay_user_data(5_000), [0, 0, 0, 0, 0x13, 0x88]);
        assert_eq!(
            decode_delay_user_data(&[0, 0, 0, 0, 0x13, 0x88, 9]).unwrap(),
            5_000
        );
        assert!(decode_delay_user_data(&[0, 0, 1]).is_err());
    }
}
