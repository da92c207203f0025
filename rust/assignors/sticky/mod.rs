//! StickyAssignor (`sticky`) and CooperativeStickyAssignor (`cooperative-sticky`): Java's
//! `AbstractStickyAssignor` and its two subclasses, as one balance engine.
//!
//! Both assignors share the same steps, as in Java:
//! 1. Read each member's previous partitions and generation ([`member_data`]: from the user data
//!    for `sticky`, from the protocol fields for `cooperative-sticky`) and resolve conflicting
//!    claims by generation (`allSubscriptionsEqual` in Java, reference section 3.4).
//! 2. With equal subscriptions, run the constrained builder (quotas, owned partitions first,
//!    round-robin fill); otherwise the general builder (assign to the least loaded subscriber,
//!    then move partitions until balanced, keeping Java's move sequence).
//! 3. For `cooperative-sticky`, withhold every partition that changes owner: it is assigned in
//!    the next rebalance, after its owner revoked it (KIP-429).
//!
//! Java's decisions are kept, including where they depend on `HashMap` order; its data
//! structures are not (see `general.rs`). Where Java's output would be invalid, kgroup differs:
//! members subscribed to different topic sets never count as "equal" (Java ignores members with
//! an empty subscription listed first, then hands them partitions), owned partitions that do not
//! exist are ignored (Java keeps them, then assigns them or throws), a member listing a
//! partition twice claims it once, a partition that Java's stickiness rule left with a previous
//! owner no longer subscribed to its topic goes to the least loaded subscriber at the end, and
//! where Java throws a NullPointerException (that rule pointing at a member that takes no part
//! in the reassignment) the rule is skipped.
//!
//! Checked against Kafka trunk's own classes on 20,000 random multi-round sessions
//! (tools/java_oracle): every answer equal, list order included, except where Java's is invalid
//! or an exception.

mod constrained;
pub mod delay;
mod general;
mod movements;

use std::borrow::Cow;

use super::consumer_protocol::{decode_cooperative_user_data, decode_sticky_user_data};
use super::fxhash::{fx_map, FxMap};
use super::java::java_cmp;
use super::model::Model;
use super::racks::Racks;
use super::{GroupAssignment, GroupInput, Subscription, TopicPartition};
use crate::errors::{Error, Result};
use crate::protocol::primitives::Reader;

/// STICKY_NAME and COOPERATIVE_NAME are Kafka's names of the two assignors.
pub const STICKY_NAME: &str = "sticky";
pub const COOPERATIVE_NAME: &str = "cooperative-sticky";

/// DEFAULT_GENERATION is Java's `AbstractStickyAssignor.DEFAULT_GENERATION`.
pub const DEFAULT_GENERATION: i32 = -1;

const NONE: u32 = u32::MAX;

/// StickyAssignor is one long-lived assignor, as a Java leader keeps one: `max_generation`
/// carries over between assignments, as Java's instance field does (it is never reset, and the
/// general path compares members' generations with it).
#[derive(Debug, Clone)]
pub struct StickyAssignor {
    /// `true` for `cooperative-sticky`, `false` for the eager `sticky`.
    pub cooperative: bool,
    /// The highest generation seen so far (Java's `maxGeneration`).
    pub max_generation: i32,
    /// KIP-415's scheduled rebalance delay (cooperative only; not in Java's consumer assignor).
    pub delay: Option<delay::ScheduledDelay>,
}

/// StickyOutcome is one assignment with what Java computed on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StickyOutcome {
    pub assignment: GroupAssignment,
    /// Partitions moving to a new owner, with the member (index in the input) they move to.
    /// The cooperative assignor withholds them from this round.
    pub transferring: Vec<(TopicPartition, usize)>,
    /// Whether all subscriptions were equal (Java's constrained path).
    pub constrained: bool,
}

/// MemberData is Java's `AbstractStickyAssignor.MemberData`: the partitions a member says it
/// had, and the generation it had them in.
#[derive(Debug, Clone)]
pub struct MemberData<'a> {
    pub partitions: Cow<'a, [TopicPartition]>,
    pub generation: Option<i32>,
}

impl StickyAssignor {
    /// new makes an assignor that has seen no generation yet.
    pub fn new(cooperative: bool) -> Self {
        StickyAssignor {
            cooperative,
            max_generation: DEFAULT_GENERATION,
            delay: None,
        }
    }

    /// name is Kafka's name of this assignor.
    pub fn name(&self) -> &'static str {
        if self.cooperative {
            COOPERATIVE_NAME
        } else {
            STICKY_NAME
        }
    }

    /// member_data is `memberData(subscription)` of Java's `StickyAssignor` (eager: owned
    /// partitions and generation from the user data, V1 then V0, unreadable data meaning
    /// `([], -1)`) or `CooperativeStickyAssignor` (the protocol's generation and owned partitions
    /// when the generation is present, else the generation from the 4-byte user data).
    pub fn member_data<'a>(&self, sub: &'a Subscription) -> MemberData<'a> {
        if self.cooperative {
            if let Some(g) = sub.generation() {
                return MemberData {
                    partitions: Cow::Borrowed(&sub.owned_partitions),
                    generation: Some(g),
                };
            }
            let generation = sub
                .user_data
                .as_deref()
                .map(|d| decode_cooperative_user_data(d).unwrap_or(DEFAULT_GENERATION));
            return MemberData {
                partitions: Cow::Borrowed(&sub.owned_partitions),
                generation,
            };
        }
        match sub.user_data.as_deref() {
            None | Some([]) => MemberData {
                partitions: Cow::Borrowed(&[]),
                generation: None,
            },
            Some(d) => match decode_sticky_user_data(d) {
                Ok((partitions, generation)) => MemberData {
                    partitions: Cow::Owned(partitions),
                    generation,
                },
                Err(_) => MemberData {
                    partitions: Cow::Borrowed(&[]),
                    generation: Some(DEFAULT_GENERATION),
                },
            },
        }
    }

    /// with_delay turns on KIP-415's scheduled rebalance delay: a departed member's partitions
    /// are held back for up to `max_delay_ms` (see [`delay`]). Only the cooperative assignor
    /// holds partitions back; `0` turns it off.
    pub fn with_delay(mut self, max_delay_ms: i64) -> Self {
        self.delay = (self.cooperative && max_delay_ms > 0)
            .then(|| delay::ScheduledDelay::new(max_delay_ms));
        self
    }

    /// member_claims is [`member_data`](Self::member_data) as global partition indices in
    /// `out` (unknown topics and partitions left out), returning the generation. The eager
    /// assignor's user data is read straight into indices, without building TopicPartitions.
    pub(crate) fn member_claims(
        &self,
        sub: &Subscription,
        lookup: &mut Lookup<'_, '_>,
        out: &mut Vec<u32>,
    ) -> Option<i32> {
        out.clear();
        if self.cooperative {
            let data = self.member_data(sub);
            out.extend(data.partitions.iter().filter_map(|tp| lookup.find(tp)));
            return data.generation;
        }
        match sub.user_data.as_deref() {
            None | Some([]) => None,
            Some(d) => match lookup.decode_sticky_user_data(d, out) {
                Ok(generation) => generation,
                Err(_) => {
                    out.clear();
                    Some(DEFAULT_GENERATION)
                }
            },
        }
    }

    /// assign_at runs one assignment at time `now_ms` (any monotonic clock, used only by the
    /// scheduled delay), updating `max_generation`.
    pub fn assign_at(&mut self, input: &GroupInput, now_ms: i64) -> Result<StickyOutcome> {
        let Some(mut held) = self.delay.take() else {
            return self.assign(input);
        };
        let generation = input
            .members
            .iter()
            .map(|m| m.subscription.generation_id)
            .max()
            .unwrap_or(-1)
            .max(self.max_generation);
        let prepared = held.prepare(input, now_ms, generation);
        let result = self.assign(&prepared.input);
        let mut out = match result {
            Ok(out) => out,
            Err(e) => {
                self.delay = Some(held);
                return Err(e);
            }
        };
        out.assignment.assignments.truncate(prepared.real);
        out.transferring.retain(|(_, m)| *m < prepared.real);
        if let Some(left) = prepared.remaining_ms {
            let data = delay::encode_delay_user_data(left.clamp(0, i32::MAX as i64) as i32);
            for a in &mut out.assignment.assignments {
                a.user_data = Some(data.clone());
            }
        }
        let lists: Vec<Vec<TopicPartition>> = out
            .assignment
            .assignments
            .iter()
            .map(|a| a.partitions.clone())
            .collect();
        held.record(&prepared.input, &lists);
        self.delay = Some(held);
        Ok(out)
    }

    /// assign runs one assignment of `input`, updating `max_generation`.
    pub fn assign(&mut self, input: &GroupInput) -> Result<StickyOutcome> {
        let model = Model::new(input)?;
        let n = input.members.len();
        if n == 0 {
            return Ok(StickyOutcome {
                assignment: GroupAssignment::default(),
                transferring: Vec::new(),
                constrained: true,
            });
        }
        let racks = Racks::new(&model).and_then(rack_aware);
        let claims = self.resolve_claims(&model);
        let (lists, transferring, constrained) = if claims.all_equal {
            let (lists, transferring) = constrained::build(&model, racks.as_ref(), &claims);
            (lists, transferring, true)
        } else {
            let lists = general::build(&model, racks.as_ref(), &claims, self, self.max_generation);
            let transferring = if self.cooperative {
                transferring_after(&model, &lists)
            } else {
                Vec::new()
            };
            (lists, transferring, false)
        };
        let mut lists = lists;
        if self.cooperative && !transferring.is_empty() {
            let mut withheld = vec![false; model.total()];
            for &(p, _) in &transferring {
                withheld[p as usize] = true;
            }
            for &(_, m) in &transferring {
                lists[m].retain(|&p| !withheld[p as usize]);
            }
        }
        let transferring = transferring
            .into_iter()
            .map(|(p, m)| (model.tp(p), m))
            .collect();
        let out = lists
            .into_iter()
            .map(|l| l.into_iter().map(|p| model.tp(p)).collect())
            .collect();
        Ok(StickyOutcome {
            assignment: GroupAssignment::from_lists(out),
            transferring,
            constrained,
        })
    }

    /// resolve_claims is Java's `allSubscriptionsEqual`: whether every member subscribes to the
    /// same topics, and each member's still-valid previous partitions after conflicting claims
    /// are settled by generation (members taken in subscription-map order).
    fn resolve_claims(&mut self, model: &Model<'_>) -> Claims {
        let input = model.input;
        let n = input.members.len();
        let total = model.total();
        let mut all_equal = true;
        let mut reference: Option<Vec<&str>> = None;
        let mut prev_topics: Option<&[std::sync::Arc<str>]> = None;
        // Per partition: the last claimant (Java's `allPreviousPartitionsToOwner`), with VOID set
        // when that claimant does not hold it (a same-generation conflict voided it).
        const VOID: u32 = 1 << 31;
        let mut claim = vec![NONE; total];
        let mut multi: Vec<bool> = Vec::new();
        let mut conflicts = false;
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut lookup = Lookup::new(model);
        let mut claimed: Vec<u32> = Vec::new();
        for &m in &model.java_members {
            let sub = &input.members[m].subscription;
            if all_equal {
                let ts = &sub.topics[..];
                if !prev_topics.is_some_and(|p| same_list(p, ts)) {
                    let mut set: Vec<&str> = ts.iter().map(|t| &**t).collect();
                    set.sort_unstable();
                    set.dedup();
                    match &reference {
                        None => reference = Some(set),
                        Some(r) => all_equal = *r == set,
                    }
                    prev_topics = Some(ts);
                }
            }
            let data_generation = self.member_claims(sub, &mut lookup, &mut claimed);
            let generation = data_generation.unwrap_or(DEFAULT_GENERATION);
            self.max_generation = self.max_generation.max(generation);
            for &p in &claimed {
                let pu = p as usize;
                let c = claim[pu];
                if c == NONE {
                    claim[pu] = m as u32;
                    lists[m].push(p);
                    continue;
                }
                let other = c & !VOID;
                if other == m as u32 {
                    // A second claim by the same member counts once.
                    continue;
                }
                let other_generation = input.members[other as usize].subscription.generation_id;
                if generation == other_generation {
                    if multi.is_empty() {
                        multi = vec![false; total];
                    }
                    multi[pu] = true;
                    conflicts = true;
                    claim[pu] = m as u32 | VOID;
                } else if generation > other_generation {
                    conflicts = true;
                    claim[pu] = m as u32;
                    lists[m].push(p);
                }
            }
        }
        if conflicts {
            // Drop the entries a later claim took away, keeping each list's order.
            for (m, l) in lists.iter_mut().enumerate() {
                l.retain(|&p| claim[p as usize] == m as u32);
            }
        }
        Claims {
            all_equal,
            owned: lists,
            multi,
        }
    }
}

/// Claims is the outcome of [`StickyAssignor::resolve_claims`].
pub(crate) struct Claims {
    pub all_equal: bool,
    /// Each member's previous partitions that it keeps a claim on, in claim order.
    pub owned: Vec<Vec<u32>>,
    /// Partitions claimed by two members of the same generation (empty when none).
    pub multi: Vec<bool>,
}

impl Claims {
    pub fn is_multi(&self, p: u32) -> bool {
        !self.multi.is_empty() && self.multi[p as usize]
    }
}

fn same_list(a: &[std::sync::Arc<str>], b: &[std::sync::Arc<str>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| std::sync::Arc::ptr_eq(x, y) || x == y)
}

/// Lookup finds global partition indices. Owned partitions usually share a few topic strings
/// (`Arc`s), so topic ids are cached by string address; the cache keeps each string alive, so
/// an address cannot be reused for another string while the cache exists (user data decoded on
/// the fly frees its strings early).
pub(crate) struct Lookup<'m, 'a> {
    model: &'m Model<'a>,
    by_address: FxMap<usize, (std::sync::Arc<str>, Option<u32>)>,
}

impl<'m, 'a> Lookup<'m, 'a> {
    pub fn new(model: &'m Model<'a>) -> Self {
        Lookup {
            model,
            by_address: fx_map(64),
        }
    }

    /// find is the global index of `tp`, `None` when its topic is not assigned here or the
    /// partition does not exist.
    #[inline]
    pub fn find(&mut self, tp: &TopicPartition) -> Option<u32> {
        let address = std::sync::Arc::as_ptr(&tp.topic) as *const u8 as usize;
        let model = self.model;
        let topic = self
            .by_address
            .entry(address)
            .or_insert_with(|| (tp.topic.clone(), model.topic_ids.get(&*tp.topic).copied()))
            .1?;
        let count = model.counts[topic as usize];
        (tp.partition >= 0 && (tp.partition as u32) < count)
            .then(|| model.index(topic, tp.partition as u32))
    }

    /// decode_sticky_user_data reads StickyAssignor user data (V1, else V0, as
    /// [`crate::assignors::consumer_protocol::decode_sticky_user_data`]) into global indices,
    /// returning the generation. A topic name that is not UTF-8 matches no topic (Java decodes
    /// it with replacement characters, which match none either).
    fn decode_sticky_user_data(&self, data: &[u8], out: &mut Vec<u32>) -> Result<Option<i32>> {
        let model = self.model;
        let mut r = Reader::new(data);
        let n = r
            .array_len(6)?
            .ok_or_else(|| Error::malformed("null previous_assignment"))?;
        for _ in 0..n {
            let len = r.i16()?;
            if len < 0 {
                return Err(Error::malformed("null topic"));
            }
            let name = r.take(len as usize, "topic")?;
            let topic = std::str::from_utf8(name)
                .ok()
                .and_then(|t| model.topic_ids.get(t).copied());
            let m = r
                .array_len(4)?
                .ok_or_else(|| Error::malformed("null partitions"))?;
            for _ in 0..m {
                let p = r.i32()?;
                if let Some(t) = topic {
                    if p >= 0 && (p as u32) < model.counts[t as usize] {
                        out.push(model.index(t, p as u32));
                    }
                }
            }
        }
        Ok(r.i32().ok())
    }
}

/// rack_aware keeps `racks` only when Java's `RackInfo` turns rack-aware assignment on: some
/// member rack holds replicas, and not every partition has replicas on every partition rack.
fn rack_aware(racks: Racks) -> Option<Racks> {
    let mut consumer = vec![false; racks.num_racks];
    for r in racks.member_rack.iter().flatten() {
        consumer[*r as usize] = true;
    }
    let mut partition = vec![false; racks.num_racks];
    for rs in &racks.partition_racks {
        for &r in rs {
            partition[r as usize] = true;
        }
    }
    if !consumer.iter().zip(&partition).any(|(a, b)| *a && *b) {
        return None;
    }
    let all = partition.iter().filter(|b| **b).count();
    racks
        .partition_racks
        .iter()
        .any(|rs| rs.len() != all)
        .then_some(racks)
}

/// transferring_after is `CooperativeStickyAssignor.computePartitionsTransferringOwnership`
/// for the general path: partitions newly given to a member that some member's
/// `owned_partitions` (the protocol field) held and lost.
fn transferring_after(model: &Model<'_>, lists: &[Vec<u32>]) -> Vec<(u32, usize)> {
    let total = model.total();
    let mut assigned_to = vec![NONE; total];
    for (m, l) in lists.iter().enumerate() {
        for &p in l {
            assigned_to[p as usize] = m as u32;
        }
    }
    let mut revoked = vec![false; total];
    let mut lookup = Lookup::new(model);
    let mut owners: Vec<Vec<u32>> = vec![Vec::new(); lists.len()];
    for (m, member) in model.input.members.iter().enumerate() {
        for tp in &member.subscription.owned_partitions {
            if let Some(p) = lookup.find(tp) {
                owners[m].push(p);
                if assigned_to[p as usize] != m as u32 {
                    revoked[p as usize] = true;
                }
            }
        }
    }
    let mut out = Vec::new();
    for (m, l) in lists.iter().enumerate() {
        owners[m].sort_unstable();
        for &p in l {
            if revoked[p as usize] && owners[m].binary_search(&p).is_err() {
                out.push((p, m));
            }
        }
    }
    out
}

/// id_ranks gives each member its rank in member-id order (Java `String.compareTo`).
pub(crate) fn id_ranks(model: &Model<'_>) -> Vec<u32> {
    let n = model.input.members.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| java_cmp(&model.input.members[a].id, &model.input.members[b].id));
    let mut rank = vec![0u32; n];
    for (r, &m) in order.iter().enumerate() {
        rank[m] = r as u32;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignors::{GroupInput, Member};
    use std::collections::HashMap;
    use std::sync::Arc;

    fn tps(list: &[(&str, i32)]) -> Vec<TopicPartition> {
        list.iter()
            .map(|(t, p)| TopicPartition::new(*t, *p))
            .collect()
    }

    fn member(id: &str, topics: &[&str], owned: &[(&str, i32)], generation: i32) -> Member {
        let mut s = Subscription::new(topics.iter().copied());
        s.owned_partitions = tps(owned);
        s.generation_id = generation;
        // What Java's CooperativeStickyAssignor sends: its generation as user data.
        s.user_data = Some(generation.to_be_bytes().to_vec());
        Member {
            id: Arc::from(id),
            subscription: Arc::new(s),
        }
    }

    fn input(topics: &[(&str, i32)], members: Vec<Member>) -> GroupInput {
        GroupInput {
            partitions_per_topic: topics.iter().map(|(t, n)| (Arc::from(*t), *n)).collect(),
            members,
            partition_racks: None,
        }
    }

    fn show(input: &GroupInput, out: &StickyOutcome) -> (Vec<String>, Vec<String>) {
        let lists = crate::assignors::range::tests::show(input, &out.assignment);
        let mut moving: Vec<String> = out
            .transferring
            .iter()
            .map(|(tp, m)| format!("{}-{}={}", tp.topic, tp.partition, input.members[*m].id))
            .collect();
        moving.sort();
        (lists, moving)
    }

    // Golden vectors from java-golden-vectors.txt, made by running Kafka trunk's assignors.

    #[test]
    fn golden_s2_sticky_general_path() {
        let g = input(
            &[("t0", 1), ("t1", 2), ("t2", 3)],
            vec![
                member("C0", &["t0"], &[], -1),
                member("C1", &["t0", "t1"], &[], -1),
                member("C2", &["t0", "t1", "t2"], &[], -1),
            ],
        );
        for cooperative in [false, true] {
            let out = StickyAssignor::new(cooperative).assign(&g).unwrap();
            assert!(!out.constrained);
            assert_eq!(
                show(&g, &out).0,
                ["C0=[t0-0]", "C1=[t1-0, t1-1]", "C2=[t2-0, t2-1, t2-2]"]
            );
        }
    }

    #[test]
    fn golden_s3_hash_order_decides_who_keeps_max_quota() {
        let g = input(
            &[("t", 7)],
            vec![
                member("c0", &["t"], &[("t", 0), ("t", 1), ("t", 2)], 1),
                member("c1", &["t"], &[("t", 3), ("t", 4), ("t", 5)], 1),
                member("c2", &["t"], &[("t", 6)], 1),
            ],
        );
        let out = StickyAssignor::new(true).assign(&g).unwrap();
        assert_eq!(
            show(&g, &out),
            (
                vec![
                    "c0=[t-0, t-1, t-2]".into(),
                    "c1=[t-3, t-4]".into(),
                    "c2=[t-6]".into()
                ],
                vec!["t-5=c2".into()]
            )
        );
        let g = input(
            &[("t", 7)],
            vec![
                member("member-10", &["t"], &[("t", 0), ("t", 1), ("t", 2)], 1),
                member("member-9", &["t"], &[("t", 3), ("t", 4), ("t", 5)], 1),
                member("member-1", &["t"], &[("t", 6)], 1),
            ],
        );
        let out = StickyAssignor::new(true).assign(&g).unwrap();
        assert_eq!(
            show(&g, &out),
            (
                vec![
                    "member-10=[t-0, t-1]".into(),
                    "member-1=[t-6]".into(),
                    "member-9=[t-3, t-4, t-5]".into()
                ],
                vec!["t-2=member-1".into()]
            )
        );
    }

    #[test]
    fn golden_s4_generation_conflicts_general_path() {
        // AbstractStickyAssignorTest.testSubscriptionNotEqualAndAssignSamePartitionWith3Generation.
        let expected: [([i32; 3], [&str; 4]); 6] = [
            (
                [1, 2, 3],
                [
                    "consumer1=[topic-0, topic-2]",
                    "consumer2=[topic-1, topic-3]",
                    "consumer3=[topic-4, topic-5]",
                    "consumer4=[topic1-0]",
                ],
            ),
            (
                [1, 3, 2],
                [
                    "consumer1=[topic-0]",
                    "consumer2=[topic-2, topic-3]",
                    "consumer3=[topic-4, topic-5]",
                    "consumer4=[topic1-0]",
                ],
            ),
            (
                [2, 1, 3],
                [
                    "consumer1=[topic-0, topic-2]",
                    "consumer2=[topic-1, topic-3]",
                    "consumer3=[topic-4, topic-5]",
                    "consumer4=[topic1-0]",
                ],
            ),
            (
                [2, 3, 1],
                [
                    "consumer1=[topic-0]",
                    "consumer2=[topic-2, topic-3]",
                    "consumer3=[topic-4, topic-5]",
                    "consumer4=[topic1-0]",
                ],
            ),
            (
                [3, 1, 2],
                [
                    "consumer1=[topic-0, topic-2]",
                    "consumer2=[topic-1, topic-3]",
                    "consumer3=[topic-4, topic-5]",
                    "consumer4=[topic1-0]",
                ],
            ),
            (
                [3, 2, 1],
                [
                    "consumer1=[topic-0, topic-2]",
                    "consumer2=[topic-1, topic-3]",
                    "consumer3=[topic-4, topic-5]",
                    "consumer4=[topic1-0]",
                ],
            ),
        ];
        let mut assignor = StickyAssignor::new(true);
        for (gens, want) in expected {
            let g = input(
                &[("topic", 6), ("topic1", 1)],
                vec![
                    member(
                        "consumer1",
                        &["topic"],
                        &[("topic", 0), ("topic", 2)],
                        gens[0],
                    ),
                    member(
                        "consumer2",
                        &["topic"],
                        &[("topic", 1), ("topic", 2), ("topic", 3)],
                        gens[1],
                    ),
                    member(
                        "consumer3",
                        &["topic"],
                        &[("topic", 2), ("topic", 4), ("topic", 5)],
                        gens[2],
                    ),
                    member("consumer4", &["topic1"], &[("topic1", 0)], 2),
                ],
            );
            let out = assignor.assign(&g).unwrap();
            assert!(!out.constrained);
            assert_eq!(show(&g, &out).0, want, "generations {gens:?}");
        }
        assert_eq!(assignor.max_generation, 3);
    }

    #[test]
    fn golden_s5_third_member_joins() {
        let g = input(
            &[("t", 6)],
            vec![
                member("c0", &["t"], &[("t", 0), ("t", 2), ("t", 4)], 1),
                member("c1", &["t"], &[("t", 1), ("t", 3), ("t", 5)], 1),
                member("c2", &["t"], &[], 1),
            ],
        );
        let out = StickyAssignor::new(true).assign(&g).unwrap();
        assert_eq!(
            show(&g, &out),
            (
                vec![
                    "c0=[t-0, t-2]".into(),
                    "c1=[t-1, t-3]".into(),
                    "c2=[]".into()
                ],
                vec!["t-4=c2".into(), "t-5=c2".into()]
            )
        );
        // The eager assignor reads ownership from its own user data and hands them over at once.
        let mut g = g;
        for m in &mut g.members {
            let s = Arc::make_mut(&mut m.subscription);
            let owned = std::mem::take(&mut s.owned_partitions);
            s.user_data = Some(
                crate::assignors::consumer_protocol::encode_sticky_user_data(&owned, Some(1))
                    .unwrap(),
            );
        }
        let out = StickyAssignor::new(false).assign(&g).unwrap();
        assert_eq!(
            show(&g, &out),
            (
                vec![
                    "c0=[t-0, t-2]".into(),
                    "c1=[t-1, t-3]".into(),
                    "c2=[t-4, t-5]".into()
                ],
                vec!["t-4=c2".into(), "t-5=c2".into()]
            )
        );
    }

    #[test]
    fn golden_s6_rack_aware_cooperative() {
        let mut members = vec![
            member("c0", &["t"], &[], -1),
            member("c1", &["t"], &[], -1),
            member("c2", &["t"], &[], -1),
        ];
        for (i, m) in members.iter_mut().enumerate() {
            Arc::make_mut(&mut m.subscription).rack_id = Some(Arc::from(format!("r{i}")));
        }
        let mut g = input(&[("t", 6)], members);
        let racks: HashMap<TopicPartition, Vec<Arc<str>>> = (0..6)
            .map(|p| {
                (
                    TopicPartition::new("t", p),
                    vec![Arc::from(format!("r{}", (p + 1) % 3))],
                )
            })
            .collect();
        g.partition_racks = Some(racks);
        let out = StickyAssignor::new(true).assign(&g).unwrap();
        assert_eq!(
            show(&g, &out).0,
            ["c0=[t-2, t-5]", "c1=[t-0, t-3]", "c2=[t-1, t-4]"]
        );
    }
}
