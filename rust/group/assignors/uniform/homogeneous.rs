//! `uniform` for a Homogeneous group: every member subscribes to the same topics, so the task
//! is to give each member `total / members` partitions, `total % members` of them one more, and
//! to keep as much of the previous target as those sizes allow.
//!
//! 1. The group's topics are the first member's subscriptions, walked in the order Java
//!    iterates `new HashSet<>(them)` (Kafka builds that copy; its tests pin the order). For
//!    each topic, every partition no previous target holds joins a queue, ascending.
//! 2. Members in the caller's order: each gets a quota, the base plus one while extra slots
//!    remain, and keeps its previous partitions of the group's topics up to that quota (topic
//!    ids ascending, partitions ascending); the rest join the queue, and partitions of other
//!    topics are dropped. A member left with room that took an extra slot hands the slot on to
//!    a later member, unless no more members remain than slots (KAFKA-18688, Kafka 4.0.1/4.1:
//!    without it the first members in the order always took the extra slots, so a target that
//!    was already balanced could move).
//! 3. The queue is dealt to members with room, in the order they were met, each filled before
//!    the next.
//!
//! So a member loses previous partitions only when it has more than its quota, and gains new
//! ones only when it has fewer; a balanced previous target comes back unchanged.

use std::collections::BTreeSet;

use super::super::{
    in_range, partition_count, uuid, Assignment, AssignorError, GroupSpec, TopicDescriber, TopicId,
};
use super::{collect, UNOWNED};
use crate::assignors::fxhash::{fx_map, FxMap};
use crate::assignors::java::{order_in, JavaHashTable};

pub(super) fn assign(
    spec: &GroupSpec<'_>,
    topics: &dyn TopicDescriber,
) -> Result<Vec<Assignment>, AssignorError> {
    let members = spec.members().len();
    let topic_ids = java_hash_set_order(spec.members()[0].subscribed_topic_ids);
    if topic_ids.is_empty() {
        return Ok(vec![Assignment::new(); members]);
    }

    let mut index: FxMap<TopicId, usize> = fx_map(topic_ids.len());
    let mut counts = Vec::with_capacity(topic_ids.len());
    let mut owners = Vec::with_capacity(topic_ids.len());
    let mut queue: Vec<(usize, i32)> = Vec::new();
    let mut total = 0usize;
    for (t, topic) in topic_ids.iter().enumerate() {
        let n = partition_count(topics, topic)?;
        let mut held = spec.held_partitions(topic).peekable();
        for p in 0..n {
            while held.next_if(|&h| h < p).is_some() {}
            if held.next_if_eq(&p).is_none() {
                queue.push((t, p));
            }
        }
        index.insert(*topic, t);
        counts.push(n);
        owners.push(vec![UNOWNED; n as usize]);
        total += n as usize;
    }

    let base = total / members;
    let mut extra = total % members;
    // Members with room left, in order, and how much.
    let mut room: Vec<(u32, usize)> = Vec::new();
    for m in 0..members {
        let mut takes_extra = extra > 0;
        let mut quota = base + takes_extra as usize;
        for (topic, parts) in spec.target(m).iter() {
            let Some(&t) = index.get(topic) else {
                continue;
            };
            let parts = in_range(parts, counts[t]);
            let keep = parts.len().min(quota);
            for &p in &parts[..keep] {
                owners[t][p as usize] = m as u32;
            }
            queue.extend(parts[keep..].iter().map(|&p| (t, p)));
            quota -= keep;
        }
        if quota > 0 && takes_extra && members - m > extra {
            quota -= 1;
            takes_extra = false;
        }
        if quota > 0 {
            room.push((m as u32, quota));
        }
        if takes_extra {
            extra -= 1;
        }
    }

    let mut queued = queue.into_iter();
    for (m, quota) in room {
        for (t, p) in queued.by_ref().take(quota) {
            owners[t][p as usize] = m;
        }
    }
    if queued.len() > 0 {
        return Err(AssignorError::new("Partitions were left unassigned"));
    }
    Ok(collect(&topic_ids, &owners, members))
}

/// java_hash_set_order is `ids` in the order Java iterates `new HashSet<>(ids)` when `ids` is
/// walked ascending to fill it. Only ids sharing a bucket depend on the fill order.
pub(crate) fn java_hash_set_order(ids: &BTreeSet<TopicId>) -> Vec<TopicId> {
    let ids: Vec<TopicId> = ids.iter().copied().collect();
    let hashes: Vec<i32> = ids.iter().map(uuid::hash_code).collect();
    order_in(JavaHashTable::for_hash_set_of(ids.len()), &hashes)
        .into_iter()
        .map(|i| ids[i])
        .collect()
}

#[cfg(test)]
mod tests {
    //! Vectors from Kafka's OptimizedUniformAssignmentBuilderTest (v8.2.0; renamed
    //! UniformHomogeneousAssignmentBuilderTest later) and CommonAssignorTests. Kafka's tests
    //! put the members in a TreeMap, so A, B, C is their order here too.

    use super::super::UniformAssignor;
    use super::*;
    use crate::group::assignors::testing::*;
    use crate::group::assignors::SubscriptionType::Homogeneous;
    use crate::rng::Rng;

    fn uniform(
        members: &[Member],
        topics: &[(TopicId, i32)],
    ) -> Result<Vec<Assignment>, AssignorError> {
        run(&UniformAssignor, members, Homogeneous, topics)
    }

    #[test]
    fn first_member_topics_iterate_in_java_hash_set_order() {
        // What testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks depends on: Java's
        // HashSet of {t1, t3} yields t3 first.
        let ids: BTreeSet<TopicId> = [t1(), t3()].into();
        assert_eq!(java_hash_set_order(&ids), [t3(), t1()]);
    }

    #[test]
    fn one_member_no_topic_subscription() {
        // Kafka's testOneMemberNoTopicSubscription.
        // Kafka answers an empty map, no member at all; a coordinator reads a member missing
        // from it as one with no partitions, which is what kgroup answers for each.
        let members = [member("A", &[], Assignment::new())];
        assert_eq!(uniform(&members, &[(t1(), 3)]), Ok(vec![Assignment::new()]));
    }

    #[test]
    fn one_member_subscribed_to_nonexistent_topic() {
        // Kafka's testOneMemberSubscribedToNonexistentTopic.
        let members = [member("A", &[t2()], Assignment::new())];
        assert!(uniform(&members, &[(t1(), 3)]).is_err());
    }

    #[test]
    fn first_assignment_two_members_two_topics_no_member_racks() {
        // Kafka's testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks.
        let topics = [(t1(), 3), (t3(), 2)];
        let members = [
            member("A", &[t1(), t3()], Assignment::new()),
            member("B", &[t1(), t3()], Assignment::new()),
        ];
        let out = uniform(&members, &topics).unwrap();
        assert_eq!(out, [asg(&[(t3(), &[0, 1])]), asg(&[(t1(), &[0, 1, 2])])]);
        check_valid(&members, &topics, &out);
        check_balanced(&members, &out);
    }

    #[test]
    fn first_assignment_num_members_greater_than_total_num_partitions() {
        // Kafka's testFirstAssignmentNumMembersGreaterThanTotalNumPartitions.
        let topics = [(t3(), 2)];
        let members = [
            member("A", &[t3()], Assignment::new()),
            member("B", &[t3()], Assignment::new()),
            member("C", &[t3()], Assignment::new()),
        ];
        let out = uniform(&members, &topics).unwrap();
        assert_eq!(
            out,
            [
                Assignment::new(),
                asg(&[(t3(), &[0])]),
                asg(&[(t3(), &[1])])
            ]
        );
        check_valid(&members, &topics, &out);
        check_balanced(&members, &out);
    }

    #[test]
    fn validity_and_balance_for_large_sample_set() {
        // Kafka's testValidityAndBalanceForLargeSampleSet: 100 random topics of 3 partitions,
        // 49 members subscribed to all of them.
        let mut rng = Rng::new(Some(100));
        let ids: Vec<TopicId> = (0..100)
            .map(|_| {
                let mut id = [0u8; 16];
                id[..8].copy_from_slice(&rng.next_u64().to_be_bytes());
                id[8..].copy_from_slice(&rng.next_u64().to_be_bytes());
                id
            })
            .collect();
        let topics: Vec<(TopicId, i32)> = ids.iter().map(|&t| (t, 3)).collect();
        let mut names: Vec<String> = (1..50).map(|i| format!("member{i}")).collect();
        names.sort();
        let members: Vec<Member> = names
            .iter()
            .map(|n| member(n, &ids, Assignment::new()))
            .collect();
        let out = uniform(&members, &topics).unwrap();
        check_valid(&members, &topics, &out);
        check_balanced(&members, &out);
    }

    #[test]
    fn reassignment_for_two_members_two_topics_given_unbalanced_prev_assignment() {
        // Kafka's testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment.
        let topics = [(t1(), 3), (t2(), 3)];
        let members = [
            member("A", &[t1(), t2()], asg(&[(t1(), &[0, 1]), (t2(), &[0, 1])])),
            member("B", &[t1(), t2()], asg(&[(t1(), &[2]), (t2(), &[2])])),
        ];
        let out = uniform(&members, &topics).unwrap();
        assert_eq!(
            out,
            [
                asg(&[(t1(), &[0, 1]), (t2(), &[0])]),
                asg(&[(t1(), &[2]), (t2(), &[1, 2])]),
            ]
        );
        check_valid(&members, &topics, &out);
        check_balanced(&members, &out);
    }

    #[test]
    fn reassignment_when_partitions_are_added_for_two_members_two_topics() {
        // Kafka's testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics.
        let topics = [(t1(), 6), (t2(), 5)];
        let members = [
            member("A", &[t1(), t2()], asg(&[(t1(), &[0, 2]), (t2(), &[0])])),
            member("B", &[t1(), t2()], asg(&[(t1(), &[1]), (t2(), &[1, 2])])),
        ];
        let out = uniform(&members, &topics).unwrap();
        assert_eq!(
            out,
            [
                asg(&[(t1(), &[0, 2]), (t2(), &[0, 3, 4])]),
                asg(&[(t1(), &[1, 3, 4, 5]), (t2(), &[1, 2])]),
            ]
        );
        check_valid(&members, &topics, &out);
        check_balanced(&members, &out);
    }

    #[test]
    fn reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics() {
        // Kafka's testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics.
        let topics = [(t1(), 3), (t2(), 3)];
        let members = [
            member("A", &[t1(), t2()], asg(&[(t1(), &[0, 2]), (t2(), &[0])])),
            member("B", &[t1(), t2()], asg(&[(t1(), &[1]), (t2(), &[1, 2])])),
            member("C", &[t1(), t2()], Assignment::new()),
        ];
        let out = uniform(&members, &topics).unwrap();
        assert_eq!(
            out,
            [
                asg(&[(t1(), &[0, 2])]),
                asg(&[(t1(), &[1]), (t2(), &[1])]),
                asg(&[(t2(), &[0, 2])]),
            ]
        );
        check_valid(&members, &topics, &out);
        check_balanced(&members, &out);
    }

    #[test]
    fn reassignment_when_one_member_removed_after_initial_assignment_with_three_members_two_topics()
    {
        // Kafka's testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics.
        let topics = [(t1(), 3), (t2(), 3)];
        let members = [
            member("A", &[t1(), t2()], asg(&[(t1(), &[0]), (t2(), &[0])])),
            member("B", &[t1(), t2()], asg(&[(t1(), &[1]), (t2(), &[1])])),
        ];
        let out = uniform(&members, &topics).unwrap();
        assert_eq!(
            out,
            [
                asg(&[(t1(), &[0]), (t2(), &[0, 2])]),
                asg(&[(t1(), &[1, 2]), (t2(), &[1])]),
            ]
        );
        check_valid(&members, &topics, &out);
        check_balanced(&members, &out);
    }

    #[test]
    fn reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics(
    ) {
        // Kafka's testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics.
        let topics = [(t1(), 2), (t2(), 2)];
        let members = [
            member("A", &[t2()], asg(&[(t1(), &[0]), (t2(), &[0])])),
            member("B", &[t2()], asg(&[(t1(), &[1]), (t2(), &[1])])),
        ];
        let out = uniform(&members, &topics).unwrap();
        assert_eq!(out, [asg(&[(t2(), &[0])]), asg(&[(t2(), &[1])])]);
        check_valid(&members, &topics, &out);
        check_balanced(&members, &out);
    }

    #[test]
    fn reassignment_stickiness_when_already_balanced() {
        // Kafka's testReassignmentStickinessWhenAlreadyBalanced (KAFKA-18688): five partitions
        // over three members, where A and C had the extra ones. Before the fix A and B took the
        // extra slots and C gave up partition 4. The test calls the group Homogeneous although
        // B and C also subscribe to a topic missing from the metadata; the assignor follows the
        // first member.
        let topics = [(t1(), 5)];
        let members = [
            member("A", &[t1()], asg(&[(t1(), &[0, 3])])),
            member("B", &[t1(), t2()], asg(&[(t1(), &[1])])),
            member("C", &[t1(), t2()], asg(&[(t1(), &[2, 4])])),
        ];
        let out = uniform(&members, &topics).unwrap();
        let previous: Vec<Assignment> = members.iter().map(|m| m.target.clone()).collect();
        assert_eq!(out, previous);
        check_valid(&members, &topics, &out);
        check_balanced(&members, &out);
    }

    #[test]
    fn assignment_reuse() {
        // Kafka's testAssignmentReuse(rackAware), CommonAssignorTests.testAssignmentReuse.
        for rack_aware in [false, true] {
            let first = check_assignment_reuse(&UniformAssignor, Homogeneous, rack_aware);
            let (members, _) = common_group([None; 3]);
            check_balanced(&members, &first);
        }
    }

    #[test]
    fn reassignment_stickiness() {
        // Kafka's testReassignmentStickiness(rackAware), CommonAssignorTests.
        for rack_aware in [false, true] {
            check_reassignment_stickiness(&UniformAssignor, Homogeneous, rack_aware);
        }
    }
}
