//! SimpleAssignor (`simple`): the share groups' assignor (KIP-932), as Kafka 4.2's group
//! coordinator has it (`SimpleAssignor`, with its `SimpleHomogeneousAssignmentBuilder` and
//! `SimpleHeterogeneousAssignmentBuilder`, which 4.2 rewrote). Not rack-aware.
//!
//! A share group's partitions may be assigned to several members at once: records are
//! acquired one delivery at a time, so two members can read one partition. The aim is balance
//! first (every member's count within one of the others', every assignable partition read by
//! `ceil(members / partitions)` members), stickiness second (a member keeps what it had where
//! balance allows). With `m` members subscribed to the same `p` assignable partitions:
//!
//! - each partition is wanted by `sharing = ceil(m / p)` members;
//! - member `i` (0-based, in the given order) wants `ceil(x(i + 1)) - ceil(x i)` partitions,
//!   with `x = sharing * p / m`;
//! - the previous targets are kept where the member still subscribes to the topic; a member
//!   over its count loses partitions, then a partition held by more than `sharing` members loses
//!   members (who become unfilled); finally the partitions short of members are walked once, in
//!   order, each given to the unfilled members in turn (the turn carries on from one partition
//!   to the next), a member leaving the turn once it has its count. A partition none of the
//!   unfilled members can take (they all hold it) stays short, and so do those after it: Kafka
//!   tolerates that slight imbalance.
//!
//! Members subscribed to different topics (Heterogeneous) are assigned topic by topic, the same
//! way, among each topic's subscribers.
//!
//! Only assignable partitions are handed out (Kafka's `GroupSpec.isPartitionAssignable`: a
//! share group's partitions whose share state is initialised); previous targets are trusted.
//!
//! Order: Kafka walks `HashMap`s and `HashSet`s (of members by index, of partitions by their
//! hash). Here members go in the order given (the coordinator sorts them by member id),
//! topics by ascending id, partitions ascending. Kafka's own tests pin the outcomes where
//! they do not depend on that order, and those hold here (see the tests).

use std::collections::{BTreeMap, BTreeSet};

use super::{
    partition_count, Assignment, AssignorError, SubscriptionType, TopicDescriber, TopicId,
};

/// NAME is Kafka's name of this assignor.
pub const NAME: &str = "simple";

/// ShareMemberSpec is one share group member as the assignor sees it: its id, its subscribed
/// topic ids, and its previous target assignment (which, unlike a consumer group's, may share
/// partitions with other members).
#[derive(Debug, Clone, Copy)]
pub struct ShareMemberSpec<'a> {
    pub member_id: &'a str,
    pub subscribed_topic_ids: &'a BTreeSet<TopicId>,
    pub target: &'a Assignment,
}

/// assign computes a share group's new target assignment: one [`Assignment`] per member, in
/// the order of `members`. `assignable` says whether a partition may be handed out.
pub fn assign(
    members: &[ShareMemberSpec<'_>],
    subscription_type: SubscriptionType,
    topics: &dyn TopicDescriber,
    assignable: &dyn Fn(&TopicId, i32) -> bool,
) -> Result<Vec<Assignment>, AssignorError> {
    if members.is_empty() {
        return Ok(Vec::new());
    }
    let old: Vec<Held> = members.iter().map(|m| held(m.target)).collect();
    let mut new: Vec<Option<Held>> = vec![None; members.len()];
    match subscription_type {
        SubscriptionType::Homogeneous => {
            let subscribed = members[0].subscribed_topic_ids;
            if subscribed.is_empty() {
                return Ok(vec![Assignment::new(); members.len()]);
            }
            let targets = target_partitions(subscribed.iter(), topics, assignable)?;
            homogeneous(subscribed, &targets, &old, &mut new);
        }
        SubscriptionType::Heterogeneous => {
            let subscribed: BTreeSet<TopicId> = members
                .iter()
                .flat_map(|m| m.subscribed_topic_ids.iter().copied())
                .collect();
            if subscribed.is_empty() {
                return Ok(vec![Assignment::new(); members.len()]);
            }
            for topic in &subscribed {
                let count = partition_count(topics, topic)?;
                let targets: Vec<i32> = (0..count).filter(|&p| assignable(topic, p)).collect();
                let subscribers: Vec<usize> = (0..members.len())
                    .filter(|&i| members[i].subscribed_topic_ids.contains(topic))
                    .collect();
                one_topic(*topic, &subscribed, &targets, &subscribers, &old, &mut new);
            }
        }
    }
    Ok(old
        .into_iter()
        .zip(new)
        .map(|(old, new)| to_assignment(new.unwrap_or(old)))
        .collect())
}

/// Held is one member's assignment as the builders change it.
type Held = BTreeMap<TopicId, BTreeSet<i32>>;

fn held(a: &Assignment) -> Held {
    a.iter()
        .map(|(t, ps)| (*t, ps.iter().copied().collect()))
        .collect()
}

fn to_assignment(h: Held) -> Assignment {
    Assignment::from_map(
        h.into_iter()
            .map(|(t, ps)| (t, ps.into_iter().collect()))
            .collect(),
    )
}

/// The member's new assignment, made from its old one the first time it changes.
fn new_of<'a>(new: &'a mut [Option<Held>], old: &[Held], member: usize) -> &'a mut Held {
    new[member].get_or_insert_with(|| old[member].clone())
}

fn target_partitions<'t>(
    subscribed: impl Iterator<Item = &'t TopicId>,
    topics: &dyn TopicDescriber,
    assignable: &dyn Fn(&TopicId, i32) -> bool,
) -> Result<Vec<(TopicId, i32)>, AssignorError> {
    let mut out = Vec::new();
    for topic in subscribed {
        let count = partition_count(topics, topic)?;
        out.extend(
            (0..count)
                .filter(|&p| assignable(topic, p))
                .map(|p| (*topic, p)),
        );
    }
    Ok(out)
}

/// desired is each of `n` members' wanted partition count for `partitions` partitions shared
/// `sharing` ways (Kafka computes it in doubles; so does this).
fn desired(n: usize, partitions: usize, sharing: usize) -> Vec<usize> {
    let precise = (sharing * partitions) as f64 / n as f64;
    (0..n)
        .map(|i| ((precise * (i + 1) as f64).ceil() - (precise * i as f64).ceil()) as usize)
        .collect()
}

fn sharing(members: usize, partitions: usize) -> usize {
    if partitions == 0 {
        0
    } else {
        members.div_ceil(partitions)
    }
}

/// homogeneous is Kafka's SimpleHomogeneousAssignmentBuilder.build over every member.
fn homogeneous(
    subscribed: &BTreeSet<TopicId>,
    targets: &[(TopicId, i32)],
    old: &[Held],
    new: &mut [Option<Held>],
) {
    let n = old.len();
    let sharing = sharing(n, targets.len());
    let want = desired(n, targets.len(), sharing);
    let mut by_partition: BTreeMap<(TopicId, i32), BTreeSet<usize>> = BTreeMap::new();
    let mut by_member: Vec<BTreeSet<(TopicId, i32)>> = vec![BTreeSet::new(); n];
    let mut unfilled: BTreeSet<usize> = BTreeSet::new();
    let mut overfilled: Vec<usize> = Vec::new();
    // Keep the previous targets of topics still subscribed; drop the others.
    for (i, assignment) in old.iter().enumerate() {
        let mut count = 0;
        for (topic, parts) in assignment {
            if subscribed.contains(topic) {
                for &p in parts {
                    count += 1;
                    by_partition.entry((*topic, p)).or_default().insert(i);
                    by_member[i].insert((*topic, p));
                }
            } else {
                new_of(new, old, i).remove(topic);
            }
        }
        if count < want[i] {
            unfilled.insert(i);
        } else if count > want[i] {
            overfilled.push(i);
        }
    }
    // Members over their count lose partitions.
    for &i in &overfilled {
        while by_member[i].len() > want[i] {
            let first = *by_member[i].iter().next().expect("over its count");
            by_member[i].remove(&first);
            if let Some(parts) = new_of(new, old, i).get_mut(&first.0) {
                parts.remove(&first.1);
            }
            if let Some(ms) = by_partition.get_mut(&first) {
                ms.remove(&i);
            }
        }
    }
    // Partitions shared more than wanted lose members.
    for (tp, ms) in by_partition.iter_mut() {
        while ms.len() > sharing {
            let i = *ms.iter().next().expect("over shared");
            ms.remove(&i);
            by_member[i].remove(tp);
            if let Some(parts) = new_of(new, old, i).get_mut(&tp.0) {
                parts.remove(&tp.1);
            }
            unfilled.insert(i);
        }
    }
    for tp in targets {
        by_partition.entry(*tp).or_default();
    }
    let counts: Vec<usize> = by_member.iter().map(BTreeSet::len).collect();
    fill(
        by_partition.iter().map(|(tp, ms)| (*tp, ms)),
        sharing,
        &want,
        counts,
        unfilled,
        |i, (topic, p)| {
            new_of(new, old, i).entry(topic).or_default().insert(p);
        },
    );
}

/// one_topic is Kafka's SimpleHeterogeneousAssignmentBuilder's TopicAssignmentPartialBuilder:
/// `topic`'s partitions among its `subscribers`.
fn one_topic(
    topic: TopicId,
    subscribed: &BTreeSet<TopicId>,
    targets: &[i32],
    subscribers: &[usize],
    old: &[Held],
    new: &mut [Option<Held>],
) {
    let n = old.len();
    let sharing = sharing(subscribers.len(), targets.len());
    let mut want = vec![0; n];
    for (k, w) in desired(subscribers.len(), targets.len(), sharing)
        .into_iter()
        .enumerate()
    {
        want[subscribers[k]] = w;
    }
    let mut by_partition: BTreeMap<i32, BTreeSet<usize>> = BTreeMap::new();
    let mut by_member: BTreeMap<usize, BTreeSet<i32>> = BTreeMap::new();
    for (i, assignment) in old.iter().enumerate() {
        let Some(parts) = assignment.get(&topic) else {
            continue;
        };
        if subscribed.contains(&topic) {
            for &p in parts {
                by_partition.entry(p).or_default().insert(i);
                by_member.entry(i).or_default().insert(p);
            }
        } else {
            new_of(new, old, i).remove(&topic);
        }
    }
    // Members over their count (a member no longer subscribed wants none) lose partitions.
    for (&i, parts) in by_member.iter_mut() {
        while parts.len() > want[i] {
            let p = *parts.iter().next().expect("over its count");
            parts.remove(&p);
            if let Some(ms) = by_partition.get_mut(&p) {
                ms.remove(&i);
            }
            if let Some(held) = new_of(new, old, i).get_mut(&topic) {
                held.remove(&p);
            }
        }
    }
    // Partitions shared more than wanted lose members.
    for (&p, ms) in by_partition.iter_mut() {
        while ms.len() > sharing {
            let i = *ms.iter().next().expect("over shared");
            ms.remove(&i);
            if let Some(parts) = by_member.get_mut(&i) {
                parts.remove(&p);
            }
            if let Some(held) = new_of(new, old, i).get_mut(&topic) {
                held.remove(&p);
            }
        }
    }
    for &p in targets {
        by_partition.entry(p).or_default();
    }
    let mut counts = vec![0; n];
    for (&i, parts) in &by_member {
        counts[i] = parts.len();
    }
    let unfilled: BTreeSet<usize> = subscribers
        .iter()
        .copied()
        .filter(|&i| counts[i] < want[i])
        .collect();
    fill(
        by_partition.iter().map(|(&p, ms)| (p, ms)),
        sharing,
        &want,
        counts,
        unfilled,
        |i, p| {
            new_of(new, old, i).entry(topic).or_default().insert(p);
        },
    );
}

/// fill is Kafka's assignRemainingPartitions: the partitions short of `sharing` members are
/// walked once, in order, each given to the unfilled members in turn. The members a partition
/// had before this step are the ones it cannot be given to again (Kafka does not add the ones
/// it gives: a member the turn comes back to may be given the same partition once more, which
/// changes nothing but the count of what is still to give).
fn fill<'a, P: Copy>(
    partitions: impl Iterator<Item = (P, &'a BTreeSet<usize>)>,
    sharing: usize,
    want: &[usize],
    mut counts: Vec<usize>,
    unfilled: BTreeSet<usize>,
    mut give: impl FnMut(usize, P),
) {
    let mut unfilled: Vec<usize> = unfilled.into_iter().collect();
    if unfilled.is_empty() {
        return;
    }
    // given[i] holds what member i was given here, so that giving twice counts once.
    let mut given: BTreeMap<usize, usize> = BTreeMap::new();
    let mut next = 0; // the turn: an index into `unfilled`
    let mut gave_this_turn = false;
    let mut seen: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (k, (partition, had)) in partitions.enumerate() {
        if had.len() < sharing {
            let mut to_give = sharing - had.len();
            while to_give > 0 {
                if next >= unfilled.len() {
                    if !gave_this_turn {
                        break;
                    }
                    next = 0;
                    gave_this_turn = false;
                }
                let i = unfilled[next];
                next += 1;
                if had.contains(&i) {
                    continue;
                }
                if seen.insert((i, k)) {
                    counts[i] += 1;
                    *given.entry(i).or_default() += 1;
                    give(i, partition);
                }
                to_give -= 1;
                gave_this_turn = true;
                if counts[i] >= want[i] {
                    next -= 1;
                    unfilled.remove(next);
                }
            }
        }
        if unfilled.is_empty() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T1: TopicId = [1; 16];
    const T2: TopicId = [2; 16];
    const T3: TopicId = [3; 16];

    fn topics(list: &[(TopicId, i32)]) -> BTreeMap<TopicId, i32> {
        list.iter().copied().collect()
    }

    fn subs(ts: &[TopicId]) -> BTreeSet<TopicId> {
        ts.iter().copied().collect()
    }

    fn a(parts: &[(TopicId, &[i32])]) -> Assignment {
        parts.iter().map(|(t, ps)| (*t, ps.to_vec())).collect()
    }

    fn run(
        members: &[(&str, BTreeSet<TopicId>, Assignment)],
        kind: SubscriptionType,
        meta: &BTreeMap<TopicId, i32>,
        assignable: &dyn Fn(&TopicId, i32) -> bool,
    ) -> Result<Vec<Assignment>, AssignorError> {
        let specs: Vec<ShareMemberSpec<'_>> = members
            .iter()
            .map(|(id, s, t)| ShareMemberSpec {
                member_id: id,
                subscribed_topic_ids: s,
                target: t,
            })
            .collect();
        assign(&specs, kind, meta, assignable)
    }

    fn all(_: &TopicId, _: i32) -> bool {
        true
    }

    /// Every assignable partition is held by at least one member, and no member's count is
    /// more than one from another's among members of the same subscription.
    fn check_every_partition_assigned(out: &[Assignment], expected: usize) {
        let mut seen = BTreeSet::new();
        for x in out {
            for (t, ps) in x.iter() {
                for &p in ps {
                    seen.insert((*t, p));
                }
            }
        }
        assert_eq!(seen.len(), expected, "{out:?}");
    }

    // SimpleAssignorTest.testAssignWithEmptyMembers
    #[test]
    fn no_members_no_assignment() {
        assert_eq!(
            run(
                &[],
                SubscriptionType::Homogeneous,
                &topics(&[(T1, 3)]),
                &all
            )
            .unwrap(),
            Vec::<Assignment>::new()
        );
    }

    // SimpleAssignorTest.testAssignWithNoSubscribedTopic
    #[test]
    fn no_subscribed_topic_gives_nothing() {
        let m = [("A", subs(&[]), Assignment::new())];
        let out = run(&m, SubscriptionType::Homogeneous, &topics(&[(T1, 3)]), &all).unwrap();
        assert_eq!(out, vec![Assignment::new()]);
    }

    // SimpleAssignorTest.testAssignWithSubscribedToNonExistentTopic
    #[test]
    fn a_missing_topic_fails() {
        let m = [("A", subs(&[T2]), Assignment::new())];
        let err = run(&m, SubscriptionType::Homogeneous, &topics(&[(T1, 3)]), &all).unwrap_err();
        assert!(err
            .message()
            .contains("doesn't exist in the topic metadata"));
    }

    // SimpleAssignorTest.testAssignWithTwoMembersAndTwoTopicsHomogeneous
    #[test]
    fn two_members_two_topics() {
        let s = subs(&[T1, T3]);
        let m = [
            ("A", s.clone(), Assignment::new()),
            ("B", s, Assignment::new()),
        ];
        let out = run(
            &m,
            SubscriptionType::Homogeneous,
            &topics(&[(T1, 3), (T3, 2)]),
            &all,
        )
        .unwrap();
        check_every_partition_assigned(&out, 5);
        let counts: Vec<usize> = out.iter().map(Assignment::len).collect();
        assert_eq!(counts, vec![3, 2]);
    }

    // SimpleAssignorTest.testAssignWithTwoMembersAndTwoTopicsHomogeneousWithAllowedMap and
    // ...WithNonAssignableTopic: only assignable partitions are handed out.
    #[test]
    fn only_assignable_partitions() {
        let s = subs(&[T1, T3]);
        let m = [
            ("A", s.clone(), Assignment::new()),
            ("B", s, Assignment::new()),
        ];
        let meta = topics(&[(T1, 3), (T3, 3)]);
        let out = run(&m, SubscriptionType::Homogeneous, &meta, &|t, p| {
            *t == T1 || p < 2
        })
        .unwrap();
        check_every_partition_assigned(&out, 5);
        assert!(out.iter().all(|x| !x.contains(&T3, 2)));
        let out = run(&m, SubscriptionType::Homogeneous, &meta, &|t, _| *t == T1).unwrap();
        check_every_partition_assigned(&out, 3);
    }

    // SimpleAssignorTest.testAssignWithThreeMembersThreeTopicsHeterogeneousWithNonAssignableTopic
    #[test]
    fn heterogeneous_with_a_topic_not_assignable() {
        let m = [
            ("A", subs(&[T1, T2]), Assignment::new()),
            ("B", subs(&[T3]), Assignment::new()),
            ("C", subs(&[T2, T3]), Assignment::new()),
        ];
        let meta = topics(&[(T1, 3), (T2, 3), (T3, 2)]);
        let out = run(&m, SubscriptionType::Heterogeneous, &meta, &|t, _| *t != T3).unwrap();
        assert_eq!(
            out,
            vec![
                a(&[(T1, &[0, 1, 2]), (T2, &[0, 2])]),
                Assignment::new(),
                a(&[(T2, &[1])]),
            ]
        );
    }

    // SimpleAssignorTest.testAssignWithOneMemberNoAssignedTopicHeterogeneous
    #[test]
    fn heterogeneous_with_a_member_subscribed_to_nothing() {
        let m = [
            ("A", subs(&[T1, T2]), Assignment::new()),
            ("B", subs(&[]), Assignment::new()),
        ];
        let out = run(
            &m,
            SubscriptionType::Heterogeneous,
            &topics(&[(T1, 3), (T2, 2)]),
            &all,
        )
        .unwrap();
        assert_eq!(
            out,
            vec![a(&[(T1, &[0, 1, 2]), (T2, &[0, 1])]), Assignment::new()]
        );
    }

    // The reference's examples: 1 member takes all; 2 members and 1 partition share it;
    // 3 members and 2 partitions: each partition read by 2 members.
    #[test]
    fn sharing_when_members_outnumber_partitions() {
        let s = subs(&[T1]);
        let meta = topics(&[(T1, 1)]);
        let m = [
            ("A", s.clone(), Assignment::new()),
            ("B", s.clone(), Assignment::new()),
        ];
        let out = run(&m, SubscriptionType::Homogeneous, &meta, &all).unwrap();
        assert_eq!(out, vec![a(&[(T1, &[0])]), a(&[(T1, &[0])])]);
        let meta = topics(&[(T1, 2)]);
        let m = [
            ("A", s.clone(), Assignment::new()),
            ("B", s.clone(), Assignment::new()),
            ("C", s, Assignment::new()),
        ];
        let out = run(&m, SubscriptionType::Homogeneous, &meta, &all).unwrap();
        let mut readers = [0; 2];
        for x in &out {
            for &p in x.get(&T1) {
                readers[p as usize] += 1;
            }
        }
        assert_eq!(readers, [2, 2]);
        let mut counts: Vec<usize> = out.iter().map(Assignment::len).collect();
        counts.sort();
        assert_eq!(counts, vec![1, 1, 2]);
    }

    /// Kafka's incremental tests: members added (or removed) one at a time, each computation
    /// fed the previous targets, every partition always assigned and counts balanced.
    fn balanced(out: &[Assignment]) {
        let counts: Vec<usize> = out.iter().map(Assignment::len).collect();
        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(hi - lo <= 1, "{counts:?}");
    }

    // SimpleAssignorTest.testIncrementalAssignmentIncreasingMembersHomogeneous
    #[test]
    fn members_added_one_at_a_time() {
        let s = subs(&[T1]);
        let meta = topics(&[(T1, 24)]);
        let mut members: Vec<(String, Assignment)> = Vec::new();
        for k in 0..101 {
            members.push((format!("M{k:03}"), Assignment::new()));
            let m: Vec<(&str, BTreeSet<TopicId>, Assignment)> = members
                .iter()
                .map(|(id, t)| (id.as_str(), s.clone(), t.clone()))
                .collect();
            let out = run(&m, SubscriptionType::Homogeneous, &meta, &all).unwrap();
            check_every_partition_assigned(&out, 24);
            if k < 24 {
                balanced(&out);
            }
            for (slot, x) in members.iter_mut().zip(out) {
                slot.1 = x;
            }
        }
    }

    // SimpleAssignorTest.testIncrementalAssignmentDecreasingMembersHomogeneous
    #[test]
    fn members_removed_one_at_a_time() {
        let s = subs(&[T1]);
        let meta = topics(&[(T1, 24)]);
        let mut members: Vec<(String, Assignment)> = (0..101)
            .map(|k| (format!("M{k:03}"), Assignment::new()))
            .collect();
        loop {
            let m: Vec<(&str, BTreeSet<TopicId>, Assignment)> = members
                .iter()
                .map(|(id, t)| (id.as_str(), s.clone(), t.clone()))
                .collect();
            let out = run(&m, SubscriptionType::Homogeneous, &meta, &all).unwrap();
            check_every_partition_assigned(&out, 24);
            for (slot, x) in members.iter_mut().zip(out) {
                slot.1 = x;
            }
            if members.len() == 1 {
                assert_eq!(members[0].1.len(), 24);
                break;
            }
            members.pop();
        }
    }

    // Stickiness: a member joining takes partitions from the others, and the others keep the
    // rest of what they had.
    #[test]
    fn a_new_member_takes_from_the_others_only() {
        let s = subs(&[T1]);
        let meta = topics(&[(T1, 6)]);
        let m = [
            ("A", s.clone(), a(&[(T1, &[0, 1, 2])])),
            ("B", s.clone(), a(&[(T1, &[3, 4, 5])])),
            ("C", s, Assignment::new()),
        ];
        let out = run(&m, SubscriptionType::Homogeneous, &meta, &all).unwrap();
        balanced(&out);
        check_every_partition_assigned(&out, 6);
        assert!(out[0].get(&T1).iter().all(|p| [0, 1, 2].contains(p)));
        assert!(out[1].get(&T1).iter().all(|p| [3, 4, 5].contains(p)));
    }

    // A topic no longer subscribed leaves the members' targets (Homogeneous).
    #[test]
    fn an_unsubscribed_topic_is_dropped() {
        let s = subs(&[T2]);
        let meta = topics(&[(T1, 2), (T2, 2)]);
        let m = [("A", s, a(&[(T1, &[0, 1])]))];
        let out = run(&m, SubscriptionType::Homogeneous, &meta, &all).unwrap();
        assert_eq!(out, vec![a(&[(T2, &[0, 1])])]);
    }

    // Random groups: every assignable partition of a subscribed topic assigned, balanced
    // counts in Homogeneous groups, and a member only given topics it subscribes to.
    #[test]
    fn random_groups_hold_the_invariants() {
        let mut rng = crate::rng::Rng::new(Some(7));
        let mut below = |n: u64| rng.next_u64() % n;
        let all_topics = [T1, T2, T3];
        for _ in 0..300 {
            let meta = topics(&[
                (T1, 1 + below(8) as i32),
                (T2, 1 + below(8) as i32),
                (T3, 1 + below(8) as i32),
            ]);
            let n = 1 + below(12) as usize;
            let homogeneous = below(2) == 0;
            let shared = subs(&all_topics[..1 + below(3) as usize]);
            let members: Vec<(String, BTreeSet<TopicId>, Assignment)> = (0..n)
                .map(|i| {
                    let s = if homogeneous {
                        shared.clone()
                    } else {
                        all_topics
                            .iter()
                            .copied()
                            .filter(|_| below(2) == 0)
                            .collect()
                    };
                    (format!("m{i:02}"), s, Assignment::new())
                })
                .collect();
            let kind = SubscriptionType::of(members.iter().map(|m| &m.1));
            let m: Vec<(&str, BTreeSet<TopicId>, Assignment)> = members
                .iter()
                .map(|(id, s, t)| (id.as_str(), s.clone(), t.clone()))
                .collect();
            let out = run(&m, kind, &meta, &all).unwrap();
            let mut wanted = BTreeSet::new();
            for (_, s, _) in &m {
                for t in s {
                    for p in 0..meta[t] {
                        wanted.insert((*t, p));
                    }
                }
            }
            let mut got = BTreeSet::new();
            for ((_, s, _), x) in m.iter().zip(&out) {
                for (t, ps) in x.iter() {
                    assert!(s.contains(t));
                    got.extend(ps.iter().map(|&p| (*t, p)));
                }
            }
            assert_eq!(got, wanted);
            if kind == SubscriptionType::Homogeneous {
                balanced(&out);
            }
        }
    }
}
