//! `uniform` for a Heterogeneous group: members subscribe to different topics, so a member's
//! load is the number of partitions it has over all its topics, and partitions of a topic can
//! only move between that topic's subscribers.
//!
//! Members are numbered by their position in the caller's order, and every tie below is broken
//! by that number, so the order decides the result among equally good ones.
//!
//! 1. Each member keeps its previous partitions of the topics it still subscribes to, and drops
//!    the others.
//! 2. Topics with partitions nobody has are taken in [`topic_order`]; each such partition, in
//!    ascending order, goes to the topic's least loaded subscriber, round robin among equally
//!    loaded ones ([`Balancer::next_least_loaded`]).
//! 3. Topics with two or more subscribers are balanced in the same order, pass after pass, until
//!    a whole pass moves nothing or 16 passes are done (Kafka's `MAX_ITERATION_COUNT`). Balancing
//!    a topic moves partitions from its most loaded subscribers that have some of it to its
//!    least loaded subscribers, until the two differ by at most one.
//!
//! With identical subscriptions among a topic's subscribers this balances fully; with
//! overlapping ones it can end where no single move helps but a chain of moves would (Kafka's
//! own comment gives 9, 10, 11 over two topics), or, rarely, where the pass limit cut it short.

use std::cmp::Ordering;

use super::super::{
    in_range, partition_count, uuid, Assignment, AssignorError, GroupSpec, TopicDescriber, TopicId,
};
use super::{collect, UNOWNED};
use crate::assignors::fxhash::{fx_map, FxMap};

/// MAX_PASSES is Kafka's `MAX_ITERATION_COUNT`: the most passes over the topics when balancing.
const MAX_PASSES: usize = 16;

/// Topic is one subscribed topic while assigning.
struct Topic {
    id: TopicId,
    partitions: i32,
    /// The subscribing members, ascending.
    subscribers: Vec<u32>,
    /// The member each partition belongs to, or UNOWNED.
    owners: Vec<u32>,
}

pub(super) fn assign(
    spec: &GroupSpec<'_>,
    topics: &dyn TopicDescriber,
) -> Result<Vec<Assignment>, AssignorError> {
    let members = spec.members();
    let mut index: FxMap<TopicId, usize> = fx_map(0);
    let mut state: Vec<Topic> = Vec::new();
    for (m, member) in members.iter().enumerate() {
        for id in member.subscribed_topic_ids {
            let t = match index.get(id) {
                Some(&t) => t,
                None => {
                    let partitions = partition_count(topics, id)?;
                    state.push(Topic {
                        id: *id,
                        partitions,
                        subscribers: Vec::new(),
                        owners: vec![UNOWNED; partitions as usize],
                    });
                    index.insert(*id, state.len() - 1);
                    state.len() - 1
                }
            };
            state[t].subscribers.push(m as u32);
        }
    }
    if state.is_empty() {
        return Ok(vec![Assignment::new(); members.len()]);
    }

    // 1. Keep what is still subscribed.
    let mut loads = vec![0i64; members.len()];
    for (m, member) in members.iter().enumerate() {
        for (id, parts) in spec.target(m).iter() {
            if !member.subscribed_topic_ids.contains(id) {
                continue;
            }
            let topic = &mut state[index[id]];
            let parts = in_range(parts, topic.partitions);
            for &p in parts {
                topic.owners[p as usize] = m as u32;
            }
            loads[m] += parts.len() as i64;
        }
    }

    // 2. Hand out what nobody has.
    let mut balancer = Balancer::default();
    let mut order: Vec<usize> = (0..state.len())
        .filter(|&t| state[t].owners.contains(&UNOWNED))
        .collect();
    order.sort_by(|&a, &b| topic_order(&state[a], &state[b]));
    for t in order {
        let topic = &mut state[t];
        balancer.reset(&topic.subscribers, &loads);
        for p in 0..topic.owners.len() {
            if topic.owners[p] == UNOWNED {
                let m = balancer.next_least_loaded(&loads);
                topic.owners[p] = m;
                loads[m as usize] += 1;
            }
        }
    }

    // 3. Balance.
    let mut order: Vec<usize> = (0..state.len())
        .filter(|&t| state[t].subscribers.len() >= 2)
        .collect();
    order.sort_by(|&a, &b| topic_order(&state[a], &state[b]));
    let mut scratch = Scratch::default();
    // The position in `order` of the last topic balancing moved something in (or of the first
    // topic, before any move): meeting it again after a full pass means nothing moved since.
    let mut last_moved: Option<usize> = None;
    'passes: for _ in 0..MAX_PASSES {
        for (i, &t) in order.iter().enumerate() {
            if last_moved == Some(i) {
                break 'passes;
            }
            let moved = balance_topic(&mut state[t], &mut loads, &mut balancer, &mut scratch);
            if moved > 0 || last_moved.is_none() {
                last_moved = Some(i);
            }
        }
    }

    let ids: Vec<TopicId> = state.iter().map(|t| t.id).collect();
    let owners: Vec<Vec<u32>> = state.into_iter().map(|t| t.owners).collect();
    Ok(collect(&ids, &owners, members.len()))
}

/// topic_order is the order topics are assigned and balanced in: most partitions per
/// subscriber first (compared as doubles, as Kafka does), then fewer subscribers first, then
/// by topic id as Java's `Uuid.compareTo` orders them.
fn topic_order(a: &Topic, b: &Topic) -> Ordering {
    let per = |t: &Topic| t.partitions as f64 / t.subscribers.len() as f64;
    per(b)
        .total_cmp(&per(a))
        .then(a.subscribers.len().cmp(&b.subscribers.len()))
        .then_with(|| uuid::compare(&a.id, &b.id))
}

/// Scratch is balance_topic's reusable memory.
#[derive(Default)]
struct Scratch {
    /// The topic's partitions grouped by owner (owners ascending), ascending within an owner.
    partitions: Vec<i32>,
    /// For each owner, its slice of `partitions` still able to give: [start, end).
    slices: FxMap<u32, (usize, usize)>,
}

/// balance_topic moves partitions of `topic` from its most loaded subscribers to its least
/// loaded ones until their loads differ by at most one, or until no subscriber loaded enough to
/// give has a partition of the topic left. A giver gives its highest-numbered partitions first.
/// Returns how many partitions moved.
fn balance_topic(
    topic: &mut Topic,
    loads: &mut [i64],
    balancer: &mut Balancer,
    scratch: &mut Scratch,
) -> usize {
    if balancer.reset(&topic.subscribers, loads) <= 1 {
        return 0;
    }
    let owners = &mut topic.owners;
    scratch.partitions.clear();
    scratch.partitions.extend(0..owners.len() as i32);
    scratch.partitions.sort_by_key(|&p| (owners[p as usize], p));
    scratch.slices.clear();
    for (i, &p) in scratch.partitions.iter().enumerate() {
        let slice = scratch.slices.entry(owners[p as usize]).or_insert((i, i));
        slice.1 = i + 1;
    }

    let mut moved = 0;
    while !balancer.is_balanced() {
        // The next most loaded subscriber that still has a partition of this topic to give.
        let giver = loop {
            let Some(m) = balancer.next_most_loaded(loads) else {
                break None;
            };
            match scratch.slices.get(&m) {
                Some(&(start, end)) if end > start => break Some(m),
                _ => balancer.exclude_last_most_loaded(),
            }
        };
        let Some(giver) = giver else {
            break;
        };
        let slice = scratch.slices.get_mut(&giver).unwrap();
        slice.1 -= 1;
        let p = scratch.partitions[slice.1];
        let taker = balancer.next_least_loaded(loads);
        if balancer.is_balanced() {
            break;
        }
        owners[p as usize] = taker;
        loads[giver as usize] -= 1;
        loads[taker as usize] += 1;
        moved += 1;
    }
    moved
}

/// Balancer picks, among one topic's subscribers, who takes the next partition and who gives
/// the next one, as Kafka's `MemberAssignmentBalancer` does.
///
/// The subscribers are sorted by load (then by member number). Two windows over that list grow
/// as partitions are dealt: the least loaded window `[0, least_end)` grows rightwards, the most
/// loaded `[most_start, most_end)` leftwards. Each window has a level, the load its members had
/// before the dealing reached them. Takers are picked round robin within the least loaded window;
/// once each has taken one, the level rises by one and the window takes in the members whose
/// load equals the new level. Givers are picked the same way from the top, the level falling.
/// The topic is balanced when the two levels differ by at most one. The loads are read from the
/// caller's slice, which the caller updates as partitions move.
#[derive(Default)]
struct Balancer {
    sorted: Vec<u32>,
    least_end: usize,
    least_level: i64,
    next_least: usize,
    most_start: usize,
    most_end: usize,
    most_level: i64,
    /// The position of the next giver in `sorted`; -1 once none is left.
    next_most: isize,
}

impl Balancer {
    /// reset starts over with `members` (not empty) and returns the difference between the
    /// largest and smallest load among them.
    fn reset(&mut self, members: &[u32], loads: &[i64]) -> i64 {
        self.sorted.clear();
        self.sorted.extend_from_slice(members);
        self.sorted.sort_by_key(|&m| (loads[m as usize], m));
        let n = self.sorted.len();
        let (low, high) = (self.load(0, loads), self.load(n - 1, loads));
        self.least_end = 0;
        self.least_level = low - 1;
        self.next_least = 0;
        self.most_start = n;
        self.most_end = n;
        self.most_level = high + 1;
        self.next_most = n as isize - 1;
        high - low
    }

    fn load(&self, position: usize, loads: &[i64]) -> i64 {
        loads[self.sorted[position] as usize]
    }

    /// next_least_loaded is the member to take the next partition; the caller gives it one.
    fn next_least_loaded(&mut self, loads: &[i64]) -> u32 {
        if self.next_least >= self.least_end {
            // Everyone in the window has taken one: raise the level and widen the window.
            self.least_level += 1;
            while self.least_end < self.sorted.len()
                && self.load(self.least_end, loads) == self.least_level
            {
                self.least_end += 1;
            }
            self.next_least = 0;
        }
        let m = self.sorted[self.next_least];
        self.next_least += 1;
        m
    }

    /// next_most_loaded is the member to give the next partition, or None when no member is
    /// left to give.
    fn next_most_loaded(&mut self, loads: &[i64]) -> Option<u32> {
        if self.next_most < self.most_start as isize {
            if self.most_end <= self.most_start && self.most_start > 0 {
                // Exclusions emptied the window: restart the level from the next member down,
                // so that the window is sure to widen.
                self.most_level = self.load(self.most_start - 1, loads);
            } else {
                self.most_level -= 1;
            }
            while self.most_start > 0 && self.load(self.most_start - 1, loads) == self.most_level {
                self.most_start -= 1;
            }
            self.next_most = self.most_end as isize - 1;
        }
        if self.next_most < 0 {
            return None;
        }
        let m = self.sorted[self.next_most as usize];
        self.next_most -= 1;
        Some(m)
    }

    /// exclude_last_most_loaded takes the member next_most_loaded just returned out of the most
    /// loaded window for good (it has nothing of the topic to give), by swapping it to the
    /// window's end and shrinking the window.
    fn exclude_last_most_loaded(&mut self) {
        let at = (self.next_most + 1) as usize;
        self.sorted.swap(at, self.most_end - 1);
        self.most_end -= 1;
    }

    /// is_balanced says whether the two windows' levels differ by at most one.
    fn is_balanced(&self) -> bool {
        self.most_level - self.least_level <= 1
    }
}

#[cfg(test)]
mod tests {
    //! Vectors from Kafka's UniformHeterogeneousAssignmentBuilderTest and CommonAssignorTests.
    //! Kafka's tests put the members in a TreeMap (v8.2.0 also sorted them explicitly), so A,
    //! B, C is their order here too.

    use super::super::UniformAssignor;
    use super::*;
    use crate::group::assignors::testing::*;
    use crate::group::assignors::SubscriptionType::Heterogeneous;

    fn uniform(
        members: &[Member],
        topics: &[(TopicId, i32)],
    ) -> Result<Vec<Assignment>, AssignorError> {
        run(&UniformAssignor, members, Heterogeneous, topics)
    }

    /// check runs the group, compares with `expected` and checks validity and balance.
    fn check(members: &[Member], topics: &[(TopicId, i32)], expected: &[Assignment]) {
        let out = uniform(members, topics).unwrap();
        assert_eq!(out, expected);
        check_valid(members, topics, &out);
        check_balanced(members, &out);
    }

    #[test]
    fn two_members_no_topic_subscription() {
        // Kafka's testTwoMembersNoTopicSubscription.
        // Kafka answers an empty map, no member at all; a coordinator reads a member missing
        // from it as one with no partitions, which is what kgroup answers for each.
        let members = [
            member("A", &[], Assignment::new()),
            member("B", &[], Assignment::new()),
        ];
        check(
            &members,
            &[(t1(), 3)],
            &[Assignment::new(), Assignment::new()],
        );
    }

    #[test]
    fn two_members_subscribed_to_nonexistent_topics() {
        // Kafka's testTwoMembersSubscribedToNonexistentTopics.
        let members = [
            member("A", &[t3()], Assignment::new()),
            member("B", &[t2()], Assignment::new()),
        ];
        assert!(uniform(&members, &[(t1(), 3)]).is_err());
    }

    #[test]
    fn first_assignment_two_members_two_topics() {
        // Kafka's testFirstAssignmentTwoMembersTwoTopics.
        let members = [
            member("A", &[t1(), t3()], Assignment::new()),
            member("B", &[t3()], Assignment::new()),
        ];
        check(
            &members,
            &[(t1(), 3), (t3(), 6)],
            &[
                asg(&[(t1(), &[0, 1, 2]), (t3(), &[4])]),
                asg(&[(t3(), &[0, 1, 2, 3, 5])]),
            ],
        );
    }

    #[test]
    fn first_assignment_num_members_greater_than_total_num_partitions() {
        // Kafka's testFirstAssignmentNumMembersGreaterThanTotalNumPartitions.
        let members = [
            member("A", &[t3()], Assignment::new()),
            member("B", &[t3()], Assignment::new()),
            member("C", &[t1()], Assignment::new()),
        ];
        check(
            &members,
            &[(t1(), 2), (t3(), 1)],
            &[
                asg(&[(t3(), &[0])]),
                Assignment::new(),
                asg(&[(t1(), &[0, 1])]),
            ],
        );
    }

    #[test]
    fn reassignment_for_two_members_three_topics_given_unbalanced_prev_assignment() {
        // Kafka's testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment.
        let members = [
            member("A", &[t1()], asg(&[(t1(), &[0, 1, 2])])),
            member("B", &[t1(), t2()], asg(&[(t1(), &[3]), (t2(), &[0])])),
            member(
                "C",
                &[t1(), t2(), t3()],
                asg(&[(t1(), &[4, 5]), (t2(), &[1, 2, 3]), (t3(), &[0, 1, 2, 3])]),
            ),
        ];
        check(
            &members,
            &[(t1(), 6), (t2(), 4), (t3(), 4)],
            &[
                asg(&[(t1(), &[0, 1, 2, 5])]),
                asg(&[(t1(), &[3]), (t2(), &[0, 1, 2, 3])]),
                asg(&[(t1(), &[4]), (t3(), &[0, 1, 2, 3])]),
            ],
        );
    }

    #[test]
    fn reassignment_when_partitions_are_added_for_two_members() {
        // Kafka's testReassignmentWhenPartitionsAreAddedForTwoMembers.
        let members = [
            member(
                "A",
                &[t1(), t3()],
                asg(&[(t1(), &[0, 1, 2, 3]), (t3(), &[0, 1])]),
            ),
            member(
                "B",
                &[t1(), t2(), t3(), t4()],
                asg(&[(t2(), &[0, 1, 2]), (t4(), &[0, 1, 2])]),
            ),
        ];
        check(
            &members,
            &[(t1(), 6), (t2(), 5), (t3(), 3), (t4(), 3)],
            &[
                asg(&[(t1(), &[0, 1, 2, 3, 4, 5]), (t3(), &[0, 1, 2])]),
                asg(&[(t2(), &[0, 1, 2, 3, 4]), (t4(), &[0, 1, 2])]),
            ],
        );
    }

    #[test]
    fn reassignment_when_one_member_added_and_partitions_added_two_members_two_topics() {
        // Kafka's testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics.
        let members = [
            member("A", &[t1()], asg(&[(t1(), &[0, 2]), (t2(), &[0])])),
            member("B", &[t1(), t2()], asg(&[(t1(), &[1]), (t2(), &[1, 2])])),
            member("C", &[t1(), t2()], Assignment::new()),
        ];
        check(
            &members,
            &[(t1(), 6), (t2(), 7)],
            &[
                asg(&[(t1(), &[0, 2, 3, 4, 5])]),
                asg(&[(t1(), &[1]), (t2(), &[1, 2, 6])]),
                asg(&[(t2(), &[0, 3, 4, 5])]),
            ],
        );
    }

    #[test]
    fn reassignment_when_one_member_removed_after_initial_assignment_with_three_members_three_topics(
    ) {
        // Kafka's testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics.
        let members = [
            member(
                "A",
                &[t1(), t3()],
                asg(&[(t1(), &[0, 1, 2]), (t3(), &[0, 1])]),
            ),
            member("B", &[t2()], asg(&[(t2(), &[3, 4, 5, 6])])),
        ];
        check(
            &members,
            &[(t1(), 3), (t2(), 8), (t3(), 3)],
            &[
                asg(&[(t1(), &[0, 1, 2]), (t3(), &[0, 1, 2])]),
                asg(&[(t2(), &[0, 1, 2, 3, 4, 5, 6, 7])]),
            ],
        );
    }

    #[test]
    fn reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics(
    ) {
        // Kafka's testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics.
        let members = [
            member("A", &[t1()], asg(&[(t1(), &[0, 2]), (t2(), &[1, 3])])),
            member("B", &[t1(), t2()], asg(&[(t1(), &[1]), (t2(), &[0, 2, 4])])),
        ];
        check(
            &members,
            &[(t1(), 3), (t2(), 5)],
            &[asg(&[(t1(), &[0, 1, 2])]), asg(&[(t2(), &[0, 1, 2, 3, 4])])],
        );
    }

    #[test]
    fn reassignment_when_topic_partitions_run_out_and_members_have_no_partitions() {
        // Kafka's testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions: balancing
        // topic 1 runs out of partitions to move before A and B are level, and must stop.
        let all = [t1(), t2(), t3()];
        let members = [
            member(
                "A",
                &all,
                asg(&[(t1(), &[0, 1]), (t2(), &[0, 1]), (t3(), &[0, 1])]),
            ),
            member("B", &all, Assignment::new()),
        ];
        check(
            &members,
            &[(t1(), 2), (t2(), 2), (t3(), 2)],
            &[
                asg(&[(t2(), &[0]), (t3(), &[0, 1])]),
                asg(&[(t1(), &[0, 1]), (t2(), &[1])]),
            ],
        );
    }

    #[test]
    fn first_assignment_with_two_members_including_one_without_subscriptions() {
        // Kafka's testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions.
        let members = [
            member("A", &[t1()], Assignment::new()),
            member("B", &[], Assignment::new()),
        ];
        check(
            &members,
            &[(t1(), 3)],
            &[asg(&[(t1(), &[0, 1, 2])]), Assignment::new()],
        );
    }

    #[test]
    fn assignment_reuse() {
        // Kafka's testAssignmentReuse(rackAware), CommonAssignorTests.testAssignmentReuse.
        for rack_aware in [false, true] {
            let first = check_assignment_reuse(&UniformAssignor, Heterogeneous, rack_aware);
            let (members, _) = common_group([None; 3]);
            check_balanced(&members, &first);
        }
    }

    #[test]
    fn reassignment_stickiness() {
        // Kafka's testReassignmentStickiness(rackAware), CommonAssignorTests.
        for rack_aware in [false, true] {
            check_reassignment_stickiness(&UniformAssignor, Heterogeneous, rack_aware);
        }
    }
}
