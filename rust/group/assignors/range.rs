//! RangeAssignor (`range`): each topic's partitions cut into consecutive ranges, one per
//! subscriber, as Kafka 4.x's server-side `RangeAssignor` (rewritten in 3.9 by KAFKA-16944).
//!
//! The members are sorted: static members (with an instance id) first, by instance id, then the
//! others by member id, both as Java's `String.compareTo` orders them. For each topic, with `n`
//! partitions and `s` subscribers, the subscribers in that order take consecutive ranges of
//! `n / s` partitions, the first `n % s` of them one more; a subscriber past the last partition
//! gets nothing of the topic. A Homogeneous group takes its topics from the first sorted member
//! and counts every member as a subscriber; a Heterogeneous group counts each topic's own
//! subscribers.
//!
//! The result depends on nothing but the subscriptions, the instance and member ids and the
//! partition counts: not on the members' order, not on the previous targets. Members subscribed
//! to the same topics of equal partition counts get the same partition numbers of each
//! (co-partitioning), and a static member that rejoins under a new member id gets its ranges
//! back. Racks are not used.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::{
    Assignment, AssignorError, GroupSpec, MemberSpec, ServerAssignor, SubscriptionType,
    TopicDescriber, TopicId,
};
use crate::assignors::fxhash::{fx_map, FxMap};
use crate::assignors::java::java_cmp;

/// NAME is Kafka's name of this assignor.
pub const NAME: &str = "range";

/// RangeAssignor is the `range` server-side assignor.
#[derive(Debug, Clone, Copy, Default)]
pub struct RangeAssignor;

/// Ranges is the state of one topic while its ranges are handed out.
struct Ranges {
    partitions: i32,
    subscribers: i32,
    /// The start of the next range.
    next: i32,
    /// How many ranges still get one partition more than `partitions / subscribers`.
    extra: i32,
}

impl Ranges {
    /// new is a topic of `partitions` partitions; `extra` is set once the subscribers are
    /// counted.
    fn new(partitions: i32, subscribers: i32) -> Self {
        Ranges {
            partitions,
            subscribers,
            next: 0,
            extra: 0,
        }
    }

    /// take is the next subscriber's range, empty past the last partition.
    fn take(&mut self) -> std::ops::Range<i32> {
        let mut size = self.partitions / self.subscribers;
        if self.extra > 0 {
            size += 1;
            self.extra -= 1;
        }
        let start = self.next;
        self.next = (start + size).min(self.partitions);
        start..self.next
    }
}

impl ServerAssignor for RangeAssignor {
    fn name(&self) -> &'static str {
        NAME
    }

    fn assign(
        &self,
        spec: &GroupSpec<'_>,
        topics: &dyn TopicDescriber,
    ) -> Result<Vec<Assignment>, AssignorError> {
        let members = spec.members();
        if members.is_empty() {
            return Ok(Vec::new());
        }
        let mut sorted: Vec<usize> = (0..members.len()).collect();
        sorted.sort_by(|&a, &b| member_order(&members[a], &members[b]));

        let mut ranges: FxMap<TopicId, Ranges> = fx_map(0);
        match spec.subscription_type() {
            SubscriptionType::Homogeneous => {
                for id in members[sorted[0]].subscribed_topic_ids {
                    let n = partition_count(topics, id)?;
                    ranges.insert(*id, Ranges::new(n, members.len() as i32));
                }
            }
            SubscriptionType::Heterogeneous => {
                for &m in &sorted {
                    for id in members[m].subscribed_topic_ids {
                        if let Some(r) = ranges.get_mut(id) {
                            r.subscribers += 1;
                        } else {
                            ranges.insert(*id, Ranges::new(partition_count(topics, id)?, 1));
                        }
                    }
                }
            }
        }
        for r in ranges.values_mut() {
            r.extra = r.partitions % r.subscribers;
        }

        let mut out = vec![Assignment::new(); members.len()];
        for &m in &sorted {
            // A Homogeneous group is assigned the first member's topics, whatever each member
            // subscribes to (Kafka trusts the subscription type).
            let subscribed = match spec.subscription_type() {
                SubscriptionType::Homogeneous => members[sorted[0]].subscribed_topic_ids,
                SubscriptionType::Heterogeneous => members[m].subscribed_topic_ids,
            };
            let mut assignment = BTreeMap::new();
            for id in subscribed {
                let range = ranges
                    .get_mut(id)
                    .expect("every subscribed topic was counted")
                    .take();
                if !range.is_empty() {
                    assignment.insert(*id, range.collect());
                }
            }
            out[m] = Assignment::from_sorted(assignment);
        }
        Ok(out)
    }
}

/// partition_count is `topic`'s partition count, or Kafka's error for a subscribed topic missing
/// from the metadata. `range` words it otherwise than `uniform` and names no topic (Kafka 4.4's
/// `RangeAssignor`).
fn partition_count(topics: &dyn TopicDescriber, topic: &TopicId) -> Result<i32, AssignorError> {
    match topics.partition_count(topic) {
        Some(n) if n >= 0 => Ok(n),
        _ => Err(AssignorError::new(
            "Member is subscribed to a non-existent topic",
        )),
    }
}

/// member_order is Kafka's order of members for `range`: static members before dynamic ones,
/// static members by instance id, dynamic members by member id.
fn member_order(a: &MemberSpec<'_>, b: &MemberSpec<'_>) -> Ordering {
    match (a.instance_id, b.instance_id) {
        (Some(x), Some(y)) => java_cmp(x, y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => java_cmp(a.member_id, b.member_id),
    }
}

#[cfg(test)]
mod tests {
    //! Vectors from Kafka's RangeAssignorTest and CommonAssignorTests. Kafka draws its topic
    //! ids at random; range's result does not depend on them, so fixed ones stand in.

    use super::*;
    use crate::group::assignors::testing::*;
    use crate::group::assignors::SubscriptionType::{Heterogeneous, Homogeneous};

    fn range(
        members: &[Member],
        kind: SubscriptionType,
        topics: &[(TopicId, i32)],
    ) -> Result<Vec<Assignment>, AssignorError> {
        let out = run(&RangeAssignor, members, kind, topics)?;
        check_valid(members, topics, &out);
        Ok(out)
    }

    fn static_member(id: &str, instance: &str, topics: &[TopicId]) -> Member {
        Member {
            instance: Some(instance.to_string()),
            ..member(id, topics, Assignment::new())
        }
    }

    #[test]
    fn one_member_no_topic() {
        // Kafka's testOneMemberNoTopic.
        let members = [member("A", &[], Assignment::new())];
        assert_eq!(
            range(&members, Homogeneous, &[]),
            Ok(vec![Assignment::new()])
        );
    }

    #[test]
    fn one_member_subscribed_to_non_existent_topic() {
        // Kafka's testOneMemberSubscribedToNonExistentTopic.
        // Kafka's test asserts the exception; its message is RangeAssignor's own.
        let members = [member("A", &[t2()], Assignment::new())];
        let err = run(&RangeAssignor, &members, Homogeneous, &[(t1(), 3)]).unwrap_err();
        assert_eq!(
            err.message(),
            "Member is subscribed to a non-existent topic"
        );
        let members = [
            member("A", &[t1()], Assignment::new()),
            member("B", &[t2()], Assignment::new()),
        ];
        let err = run(&RangeAssignor, &members, Heterogeneous, &[(t1(), 3)]).unwrap_err();
        assert_eq!(
            err.message(),
            "Member is subscribed to a non-existent topic"
        );
    }

    #[test]
    fn first_assignment_two_members_two_topics_same_subscriptions() {
        // Kafka's testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions.
        let members = [
            member("A", &[t1(), t3()], Assignment::new()),
            member("B", &[t1(), t3()], Assignment::new()),
        ];
        assert_eq!(
            range(&members, Homogeneous, &[(t1(), 3), (t3(), 2)]).unwrap(),
            [
                asg(&[(t1(), &[0, 1]), (t3(), &[0])]),
                asg(&[(t1(), &[2]), (t3(), &[1])]),
            ]
        );
    }

    #[test]
    fn first_assignment_three_members_three_topics_different_subscriptions() {
        // Kafka's testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions.
        let members = [
            member("A", &[t1(), t2()], Assignment::new()),
            member("B", &[t3()], Assignment::new()),
            member("C", &[t2(), t3()], Assignment::new()),
        ];
        assert_eq!(
            range(&members, Heterogeneous, &[(t1(), 3), (t2(), 3), (t3(), 2)]).unwrap(),
            [
                asg(&[(t1(), &[0, 1, 2]), (t2(), &[0, 1])]),
                asg(&[(t3(), &[0])]),
                asg(&[(t2(), &[2]), (t3(), &[1])]),
            ]
        );
    }

    #[test]
    fn first_assignment_num_members_greater_than_num_partitions() {
        // Kafka's testFirstAssignmentNumMembersGreaterThanNumPartitions.
        let members: Vec<Member> = ["A", "B", "C"]
            .iter()
            .map(|id| member(id, &[t1(), t3()], Assignment::new()))
            .collect();
        assert_eq!(
            range(&members, Homogeneous, &[(t1(), 3), (t3(), 2)]).unwrap(),
            [
                asg(&[(t1(), &[0]), (t3(), &[0])]),
                asg(&[(t1(), &[1]), (t3(), &[1])]),
                asg(&[(t1(), &[2])]),
            ]
        );
    }

    #[test]
    fn static_membership() {
        // Kafka's testStaticMembership: a static member rejoining under a new member id gets
        // the same partitions.
        let topics = [(t1(), 3)];
        let members = [
            static_member("A", "instanceA", &[t1()]),
            static_member("B", "instanceB", &[t1()]),
        ];
        let first = range(&members, Homogeneous, &topics).unwrap();
        let rejoined = [
            static_member("B", "instanceB", &[t1()]),
            static_member("memberA1", "instanceA", &[t1()]),
        ];
        let second = range(&rejoined, Homogeneous, &topics).unwrap();
        assert_eq!(second[1], first[0]);
        assert_eq!(second[0], first[1]);
    }

    #[test]
    fn mixed_static_membership() {
        // Kafka's testMixedStaticMembership: static members A and C, dynamic member B; A
        // rejoins as memberA1. Static members come first, so C is ahead of B.
        let topics = [(t1(), 5)];
        let members = [
            static_member("A", "instanceA", &[t1()]),
            member("B", &[t1()], Assignment::new()),
            static_member("C", "instanceC", &[t1()]),
        ];
        let first = range(&members, Homogeneous, &topics).unwrap();
        assert_eq!(
            first,
            [
                asg(&[(t1(), &[0, 1])]),
                asg(&[(t1(), &[4])]),
                asg(&[(t1(), &[2, 3])]),
            ]
        );
        let rejoined = [
            member("B", &[t1()], Assignment::new()),
            static_member("C", "instanceC", &[t1()]),
            static_member("memberA1", "instanceA", &[t1()]),
        ];
        let second = range(&rejoined, Homogeneous, &topics).unwrap();
        assert_eq!(
            second,
            [first[1].clone(), first[2].clone(), first[0].clone()]
        );
    }

    #[test]
    fn reassignment_num_members_greater_than_num_partitions_when_one_member_added() {
        // Kafka's testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded.
        let both = [t1(), t2()];
        let members = [
            member("A", &both, asg(&[(t1(), &[0]), (t2(), &[0])])),
            member("B", &both, asg(&[(t1(), &[1]), (t2(), &[1])])),
            member("C", &both, Assignment::new()),
        ];
        assert_eq!(
            range(&members, Homogeneous, &[(t1(), 2), (t2(), 2)]).unwrap(),
            [
                asg(&[(t1(), &[0]), (t2(), &[0])]),
                asg(&[(t1(), &[1]), (t2(), &[1])]),
                Assignment::new(),
            ]
        );
    }

    #[test]
    fn reassignment_when_one_partition_added_for_two_members_two_topics() {
        // Kafka's testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics.
        let both = [t1(), t2()];
        let members = [
            member("A", &both, asg(&[(t1(), &[0, 1]), (t2(), &[0, 1])])),
            member("B", &both, asg(&[(t1(), &[2]), (t2(), &[2])])),
        ];
        assert_eq!(
            range(&members, Homogeneous, &[(t1(), 4), (t2(), 4)]).unwrap(),
            [
                asg(&[(t1(), &[0, 1]), (t2(), &[0, 1])]),
                asg(&[(t1(), &[2, 3]), (t2(), &[2, 3])]),
            ]
        );
    }

    #[test]
    fn reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics() {
        // Kafka's testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics.
        let both = [t1(), t2()];
        let members = [
            member("A", &both, asg(&[(t1(), &[0, 1]), (t2(), &[0, 1])])),
            member("B", &both, asg(&[(t1(), &[2]), (t2(), &[2])])),
            member("C", &both, Assignment::new()),
        ];
        assert_eq!(
            range(&members, Homogeneous, &[(t1(), 3), (t2(), 3)]).unwrap(),
            [
                asg(&[(t1(), &[0]), (t2(), &[0])]),
                asg(&[(t1(), &[1]), (t2(), &[1])]),
                asg(&[(t1(), &[2]), (t2(), &[2])]),
            ]
        );
    }

    #[test]
    fn reassignment_when_one_member_added_and_one_partition_after_initial_assignment_with_two_members_two_topics(
    ) {
        // Kafka's testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics.
        let both = [t1(), t2()];
        let members = [
            member("A", &both, asg(&[(t1(), &[0, 1]), (t2(), &[0, 1])])),
            member("B", &both, asg(&[(t1(), &[2]), (t2(), &[2])])),
            member("C", &[t1()], Assignment::new()),
        ];
        assert_eq!(
            range(&members, Heterogeneous, &[(t1(), 4), (t2(), 3)]).unwrap(),
            [
                asg(&[(t1(), &[0, 1]), (t2(), &[0, 1])]),
                asg(&[(t1(), &[2]), (t2(), &[2])]),
                asg(&[(t1(), &[3])]),
            ]
        );
    }

    #[test]
    fn reassignment_when_one_member_removed_after_initial_assignment_with_two_members_two_topics() {
        // Kafka's testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics.
        let members = [member(
            "B",
            &[t1(), t2()],
            asg(&[(t1(), &[2]), (t2(), &[2])]),
        )];
        assert_eq!(
            range(&members, Homogeneous, &[(t1(), 3), (t2(), 3)]).unwrap(),
            [asg(&[(t1(), &[0, 1, 2]), (t2(), &[0, 1, 2])])]
        );
    }

    #[test]
    fn reassignment_when_multiple_subscriptions_removed_after_initial_assignment_with_three_members_two_topics(
    ) {
        // Kafka's testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics.
        let members = [
            member("A", &[t1()], asg(&[(t1(), &[0, 1, 2]), (t2(), &[0])])),
            member("B", &[t1(), t2(), t3()], asg(&[(t2(), &[1])])),
            member("C", &[t2()], asg(&[(t2(), &[2]), (t3(), &[0, 1])])),
        ];
        assert_eq!(
            range(&members, Heterogeneous, &[(t1(), 3), (t2(), 3), (t3(), 2)]).unwrap(),
            [
                asg(&[(t1(), &[0, 1])]),
                asg(&[(t1(), &[2]), (t2(), &[0, 1]), (t3(), &[0, 1])]),
                asg(&[(t2(), &[2])]),
            ]
        );
    }

    #[test]
    fn reassignment_stickiness() {
        // Kafka's testReassignmentStickiness(subscriptionType, rackAware), with
        // CommonAssignorTests: from the first result, every order of the members gives the same
        // assignment.
        for kind in [Homogeneous, Heterogeneous] {
            for rack_aware in [false, true] {
                check_reassignment_stickiness(&RangeAssignor, kind, rack_aware);
            }
        }
    }

    #[test]
    fn ids_compare_as_java_strings() {
        // Member ids sort by UTF-16 code units, as Java's String.compareTo: U+FF61 (one unit,
        // 0xFF61) comes after U+1F600 (units 0xD83D 0xDE00), where Rust's str order has it
        // before.
        let members = [
            member("\u{FF61}", &[t1()], Assignment::new()),
            member("\u{1F600}", &[t1()], Assignment::new()),
        ];
        assert_eq!(
            range(&members, Homogeneous, &[(t1(), 2)]).unwrap(),
            [asg(&[(t1(), &[1])]), asg(&[(t1(), &[0])])]
        );
    }
}
