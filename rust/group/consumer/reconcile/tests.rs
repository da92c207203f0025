//! Cases from Kafka's CurrentAssignmentBuilderTest (Kafka 4.2, with 4.3's assignment epochs),
//! one test each, named after it. Topic names become topic ids: the member's subscription is
//! given as the ids it resolves to.

use std::collections::BTreeSet;

use super::*;
use crate::group::consumer::OwnedTopicPartitions;

const T1: TopicId = [1; 16];
const T2: TopicId = [2; 16];

fn a(topics: &[(TopicId, &[i32])]) -> Assignment {
    topics.iter().map(|(t, p)| (*t, p.to_vec())).collect()
}

fn owned(topics: &[(TopicId, &[i32])]) -> Vec<OwnedTopicPartitions<'static>> {
    topics
        .iter()
        .map(|(t, p)| OwnedTopicPartitions {
            topic_id: *t,
            partitions: p.to_vec(),
            ..Default::default()
        })
        .collect()
}

/// member is "member" subscribed to topic1 and topic2, holding every partition since its
/// epoch (see [`since`] and [`new_at`]).
fn member(
    state: MemberState,
    epoch: i32,
    previous: i32,
    assigned: Assignment,
    pending: Assignment,
) -> ConsumerMember {
    since(
        ConsumerMember {
            state,
            member_epoch: epoch,
            previous_member_epoch: previous,
            subscribed_topic_names: ["topic1".to_string(), "topic2".to_string()].into(),
            assigned_partitions: assigned,
            partitions_pending_revocation: pending,
            ..ConsumerMember::new("member")
        },
        epoch,
    )
}

/// since is `m` holding every partition since `epoch` (KIP-1251's assignment epochs).
fn since(mut m: ConsumerMember, epoch: i32) -> ConsumerMember {
    m.assignment_epochs = m
        .assigned_partitions
        .iter()
        .chain(m.partitions_pending_revocation.iter())
        .flat_map(|(t, ps)| ps.iter().map(move |p| ((*t, *p), epoch)))
        .collect();
    m
}

/// new_at is `m` with `partitions` assigned to it at `epoch`.
fn new_at(mut m: ConsumerMember, epoch: i32, partitions: &[(TopicId, &[i32])]) -> ConsumerMember {
    for (t, ps) in partitions {
        for p in *ps {
            m.assignment_epochs.insert((*t, *p), epoch);
        }
    }
    m
}

fn run(
    member: &ConsumerMember,
    target_epoch: i32,
    target: &Assignment,
    partition_epoch: impl Fn(&TopicId, i32) -> Option<i32>,
    owned: Option<&[OwnedTopicPartitions<'_>]>,
    subscription_changed: bool,
    subscribed: &[TopicId],
) -> Result<ConsumerMember, Error> {
    let subscribed: BTreeSet<TopicId> = subscribed.iter().copied().collect();
    reconcile(
        member,
        &Reconcile {
            target_epoch,
            target,
            partition_epoch: &partition_epoch,
            owned_topic_partitions: owned,
            subscription_changed,
            subscribed_topic_ids: &subscribed,
        },
    )
}

fn free(_: &TopicId, _: i32) -> Option<i32> {
    None
}

fn held_at_10(_: &TopicId, _: i32) -> Option<i32> {
    Some(10)
}

use MemberState::{Stable, UnreleasedPartitions, UnrevokedPartitions};

// From Kafka's CurrentAssignmentBuilderTest.testStableToStable.
#[test]
fn stable_to_stable() {
    let m = since(
        member(
            Stable,
            10,
            10,
            a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
            a(&[]),
        ),
        5,
    );
    let target = a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]);
    let next = run(&m, 11, &target, held_at_10, None, false, &[T1, T2]).unwrap();
    // The partitions keep the epoch they were assigned at.
    assert_eq!(
        next,
        since(member(Stable, 11, 10, target.clone(), a(&[])), 5)
    );
}

// From Kafka's CurrentAssignmentBuilderTest.testStableToStableWithNewPartitions.
#[test]
fn stable_to_stable_with_new_partitions() {
    let m = member(
        Stable,
        10,
        10,
        a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[1, 2, 3, 4]), (T2, &[4, 5, 6, 7])]);
    let next = run(&m, 11, &target, free, None, false, &[T1, T2]).unwrap();
    // Kept partitions keep their epoch (10), new ones get the target's (11).
    let expected = since(member(Stable, 11, 10, target.clone(), a(&[])), 10);
    assert_eq!(next, new_at(expected, 11, &[(T1, &[4]), (T2, &[7])]));
}

// From Kafka's CurrentAssignmentBuilderTest.testStableToUnrevokedPartitions.
#[test]
fn stable_to_unrevoked_partitions() {
    let m = member(
        Stable,
        10,
        10,
        a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[2, 3, 4]), (T2, &[5, 6, 7])]);
    let next = run(&m, 11, &target, free, None, false, &[T1, T2]).unwrap();
    assert_eq!(
        next,
        member(
            UnrevokedPartitions,
            10,
            10,
            a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
            a(&[(T1, &[1]), (T2, &[4])]),
        )
    );
}

// From Kafka's CurrentAssignmentBuilderTest.testStableToUnreleasedPartitions.
#[test]
fn stable_to_unreleased_partitions() {
    let m = member(
        Stable,
        10,
        10,
        a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[1, 2, 3, 4]), (T2, &[4, 5, 6, 7])]);
    let next = run(&m, 11, &target, held_at_10, None, false, &[T1, T2]).unwrap();
    assert_eq!(
        next,
        since(
            member(
                UnreleasedPartitions,
                11,
                10,
                a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
                a(&[]),
            ),
            10,
        )
    );
}

// From Kafka's CurrentAssignmentBuilderTest
// .testStableToUnreleasedPartitionsWithOwnedPartitionsNotHavingRevokedPartitions.
#[test]
fn stable_to_unreleased_partitions_with_owned_partitions_not_having_revoked_partitions() {
    let m = member(
        Stable,
        10,
        10,
        a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 7])]);
    let epochs = |t: &TopicId, _| (*t == T2).then_some(10);
    let next = run(&m, 11, &target, epochs, Some(&[]), false, &[T1, T2]).unwrap();
    assert_eq!(
        next,
        since(
            member(
                UnreleasedPartitions,
                11,
                10,
                a(&[(T1, &[1, 2, 3]), (T2, &[4, 5])]),
                a(&[]),
            ),
            10,
        )
    );
}

// From Kafka's CurrentAssignmentBuilderTest.testUnrevokedPartitionsToStable.
#[test]
fn unrevoked_partitions_to_stable() {
    let m = member(
        UnrevokedPartitions,
        10,
        10,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        a(&[(T1, &[1]), (T2, &[4])]),
    );
    let target = a(&[(T1, &[2, 3]), (T2, &[5, 6])]);
    let owned = owned(&[(T1, &[2, 3]), (T2, &[5, 6])]);
    let next = run(&m, 11, &target, free, Some(&owned), false, &[T1, T2]).unwrap();
    assert_eq!(
        next,
        since(member(Stable, 11, 10, target.clone(), a(&[])), 10)
    );
}

// From Kafka's CurrentAssignmentBuilderTest.testRemainsInUnrevokedPartitions.
#[test]
fn remains_in_unrevoked_partitions() {
    let m = member(
        UnrevokedPartitions,
        10,
        10,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        a(&[(T1, &[1]), (T2, &[4])]),
    );
    let target = a(&[(T1, &[3]), (T2, &[6])]);
    let still_owning = [
        None,
        Some(owned(&[(T1, &[1, 2, 3]), (T2, &[5, 6])])),
        Some(owned(&[(T1, &[2, 3]), (T2, &[4, 5, 6])])),
    ];
    for o in &still_owning {
        let next = run(&m, 12, &target, free, o.as_deref(), false, &[T1, T2]).unwrap();
        assert_eq!(next, m, "owned {o:?}");
    }
}

// From Kafka's CurrentAssignmentBuilderTest.testUnrevokedPartitionsToUnrevokedPartitions.
#[test]
fn unrevoked_partitions_to_unrevoked_partitions() {
    let m = member(
        UnrevokedPartitions,
        10,
        10,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        a(&[(T1, &[1]), (T2, &[4])]),
    );
    let target = a(&[(T1, &[3]), (T2, &[6])]);
    let owned = owned(&[(T1, &[2, 3]), (T2, &[5, 6])]);
    let next = run(&m, 12, &target, free, Some(&owned), false, &[T1, T2]).unwrap();
    // KAFKA-19974: the member stays at epoch 10 (4.0 and 4.1 moved it to 11).
    assert_eq!(
        next,
        member(
            UnrevokedPartitions,
            10,
            10,
            a(&[(T1, &[3]), (T2, &[6])]),
            a(&[(T1, &[2]), (T2, &[5])]),
        )
    );
}

// From Kafka's CurrentAssignmentBuilderTest.testUnrevokedPartitionsToUnreleasedPartitions.
#[test]
fn unrevoked_partitions_to_unreleased_partitions() {
    let m = member(
        UnrevokedPartitions,
        11,
        10,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[2, 3, 4]), (T2, &[5, 6, 7])]);
    let owned = owned(&[(T1, &[2, 3]), (T2, &[5, 6])]);
    let next = run(&m, 11, &target, held_at_10, Some(&owned), false, &[T1, T2]).unwrap();
    assert_eq!(
        next,
        member(
            UnreleasedPartitions,
            11,
            11,
            a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
            a(&[]),
        )
    );
}

// From Kafka's CurrentAssignmentBuilderTest
// .testUnrevokedPartitionsToStableWithReturnedPartitionsPendingRevocation (KAFKA-19449).
#[test]
fn unrevoked_partitions_to_stable_with_returned_partitions_pending_revocation() {
    let m = member(
        UnrevokedPartitions,
        10,
        10,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        // T1-4 is pending revocation but back in the latest target.
        a(&[(T1, &[4])]),
    );
    let target = a(&[(T1, &[2, 3, 4]), (T2, &[5, 6, 7])]);
    let epochs = |t: &TopicId, p: i32| {
        let held = (*t == T1 && (2..=4).contains(&p)) || (*t == T2 && (5..=6).contains(&p));
        held.then_some(10)
    };
    let owned = owned(&[(T1, &[2, 3]), (T2, &[5, 6])]);
    let next = run(&m, 12, &target, epochs, Some(&owned), false, &[T1, T2]).unwrap();
    // Kept partitions keep 10; 4, given up and handed back, and the new 7 get 12.
    let expected = since(member(Stable, 12, 10, target.clone(), a(&[])), 10);
    assert_eq!(next, new_at(expected, 12, &[(T1, &[4]), (T2, &[7])]));
}

// From Kafka's CurrentAssignmentBuilderTest.testUnreleasedPartitionsToStable.
#[test]
fn unreleased_partitions_to_stable() {
    let m = member(
        UnreleasedPartitions,
        11,
        11,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[2, 3]), (T2, &[5, 6])]);
    let next = run(&m, 12, &target, held_at_10, None, false, &[T1, T2]).unwrap();
    assert_eq!(
        next,
        since(member(Stable, 12, 11, target.clone(), a(&[])), 11)
    );
}

// From Kafka's CurrentAssignmentBuilderTest.testUnreleasedPartitionsToStableWithNewPartitions.
#[test]
fn unreleased_partitions_to_stable_with_new_partitions() {
    let m = member(
        UnreleasedPartitions,
        11,
        11,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[2, 3, 4]), (T2, &[5, 6, 7])]);
    let next = run(&m, 11, &target, free, None, false, &[T1, T2]).unwrap();
    assert_eq!(next, member(Stable, 11, 11, target.clone(), a(&[])));
}

// From Kafka's CurrentAssignmentBuilderTest.testUnreleasedPartitionsToUnreleasedPartitions.
#[test]
fn unreleased_partitions_to_unreleased_partitions() {
    let m = member(
        UnreleasedPartitions,
        11,
        11,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[2, 3, 4]), (T2, &[5, 6, 7])]);
    let next = run(&m, 11, &target, held_at_10, None, false, &[T1, T2]).unwrap();
    assert_eq!(next, m);
}

// From Kafka's CurrentAssignmentBuilderTest.testUnreleasedPartitionsToUnrevokedPartitions.
#[test]
fn unreleased_partitions_to_unrevoked_partitions() {
    let m = member(
        UnreleasedPartitions,
        11,
        11,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[3]), (T2, &[6])]);
    let next = run(&m, 12, &target, held_at_10, None, false, &[T1, T2]).unwrap();
    assert_eq!(
        next,
        member(
            UnrevokedPartitions,
            11,
            11,
            a(&[(T1, &[3]), (T2, &[6])]),
            a(&[(T1, &[2]), (T2, &[5])]),
        )
    );
}

// From Kafka's CurrentAssignmentBuilderTest.testUnknownState.
#[test]
fn unknown_state() {
    let m = member(
        MemberState::Unknown,
        11,
        11,
        a(&[(T1, &[3]), (T2, &[6])]),
        a(&[(T1, &[2]), (T2, &[5])]),
    );
    let target = a(&[(T1, &[3]), (T2, &[6])]);
    // Fenced first, to make the client drop everything ...
    let err = run(&m, 12, &target, held_at_10, None, false, &[T1, T2]).unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::FencedMemberEpoch));
    // ... (also while it reports partitions) ...
    let some = owned(&[(T1, &[3])]);
    let err = run(&m, 12, &target, held_at_10, Some(&some), false, &[T1, T2]).unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::FencedMemberEpoch));
    // ... then it rejoins owning nothing and is reconciled from scratch.
    let next = run(
        &m,
        12,
        &target,
        |_, _| Some(11),
        Some(&[]),
        false,
        &[T1, T2],
    )
    .unwrap();
    assert_eq!(
        next,
        since(member(Stable, 12, 11, target.clone(), a(&[])), 11)
    );
}

// From Kafka's CurrentAssignmentBuilderTest.testStableToStableWithAssignmentTopicsNoLongerInSubscription
// (KAFKA-19431), its three parameter rows.
#[test]
fn stable_to_stable_with_assignment_topics_no_longer_in_subscription() {
    for (epoch, target_epoch, expected_epoch, changed) in
        [(10, 11, 11, false), (10, 11, 11, true), (10, 10, 10, true)]
    {
        let mut m = member(
            Stable,
            epoch,
            epoch,
            a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
            a(&[]),
        );
        m.subscribed_topic_names = ["topic2".to_string()].into();
        let target = a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]);
        let owned = owned(&[(T2, &[4, 5, 6])]);
        let next = run(
            &m,
            target_epoch,
            &target,
            free,
            Some(&owned),
            changed,
            &[T2],
        )
        .unwrap();
        let mut expected = member(
            Stable,
            expected_epoch,
            epoch,
            a(&[(T2, &[4, 5, 6])]),
            a(&[]),
        );
        expected = since(expected, epoch);
        expected.subscribed_topic_names = m.subscribed_topic_names.clone();
        assert_eq!(next, expected, "row {epoch}, {target_epoch}, {changed}");
    }
}

// From Kafka's CurrentAssignmentBuilderTest
// .testStableToUnrevokedPartitionsWithAssignmentTopicsNoLongerInSubscription, its three rows.
#[test]
fn stable_to_unrevoked_partitions_with_assignment_topics_no_longer_in_subscription() {
    for (epoch, target_epoch, expected_epoch, changed) in
        [(10, 11, 10, false), (10, 11, 10, true), (10, 10, 10, true)]
    {
        let mut m = member(
            Stable,
            epoch,
            epoch,
            a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
            a(&[]),
        );
        m.subscribed_topic_names = ["topic2".to_string()].into();
        let target = a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]);
        let owned = owned(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]);
        let next = run(
            &m,
            target_epoch,
            &target,
            free,
            Some(&owned),
            changed,
            &[T2],
        )
        .unwrap();
        let mut expected = member(
            UnrevokedPartitions,
            expected_epoch,
            epoch,
            a(&[(T2, &[4, 5, 6])]),
            a(&[(T1, &[1, 2, 3])]),
        );
        expected.subscribed_topic_names = m.subscribed_topic_names.clone();
        assert_eq!(next, expected, "row {epoch}, {target_epoch}, {changed}");
    }
}

// From Kafka's CurrentAssignmentBuilderTest
// .testRemainsInUnrevokedPartitionsWithAssignmentTopicsNoLongerInSubscription.
#[test]
fn remains_in_unrevoked_partitions_with_assignment_topics_no_longer_in_subscription() {
    let mut m = member(
        UnrevokedPartitions,
        10,
        10,
        a(&[(T1, &[2, 3]), (T2, &[5, 6])]),
        a(&[(T1, &[1]), (T2, &[4])]),
    );
    m.subscribed_topic_names = ["topic2".to_string()].into();
    let target = a(&[(T1, &[1, 3, 4]), (T2, &[6, 7])]);
    let owned = owned(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]);
    let next = run(&m, 12, &target, free, Some(&owned), true, &[T2]).unwrap();
    let mut expected = member(
        UnrevokedPartitions,
        10,
        10,
        a(&[(T2, &[5, 6])]),
        a(&[(T1, &[1, 2, 3]), (T2, &[4])]),
    );
    expected.subscribed_topic_names = m.subscribed_topic_names.clone();
    assert_eq!(next, expected);
}

/// regex_member is subscribed to `names` and the regex `bar*`, holding foo (T1) 1-3 and
/// bar (T2) 4-6, with both reported as owned.
fn regex_case(names: &[&str], subscribed_ids: &[TopicId]) -> (ConsumerMember, ConsumerMember) {
    let mut m = member(
        Stable,
        10,
        10,
        a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
        a(&[]),
    );
    m.subscribed_topic_names = names.iter().map(|n| n.to_string()).collect();
    m.subscribed_topic_regex = "bar*".to_string();
    let target = a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]);
    let owned = owned(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]);
    let next = run(&m, 10, &target, free, Some(&owned), true, subscribed_ids).unwrap();
    (m, next)
}

// From Kafka's CurrentAssignmentBuilderTest.testSubscribedTopicNameAndUnresolvedRegularExpression:
// an unresolved regex matches nothing, so the member subscribes to foo only.
#[test]
fn subscribed_topic_name_and_unresolved_regular_expression() {
    let (m, next) = regex_case(&["foo"], &[T1]);
    let expected = ConsumerMember {
        state: UnrevokedPartitions,
        assigned_partitions: a(&[(T1, &[1, 2, 3])]),
        partitions_pending_revocation: a(&[(T2, &[4, 5, 6])]),
        ..m
    };
    assert_eq!(next, expected);
}

// From Kafka's CurrentAssignmentBuilderTest.testUnresolvedRegularExpression.
#[test]
fn unresolved_regular_expression() {
    let (m, next) = regex_case(&[], &[]);
    let expected = ConsumerMember {
        state: UnrevokedPartitions,
        assigned_partitions: a(&[]),
        partitions_pending_revocation: a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
        ..m
    };
    assert_eq!(next, expected);
}

// From Kafka's CurrentAssignmentBuilderTest.testSubscribedTopicNameAndResolvedRegularExpression.
#[test]
fn subscribed_topic_name_and_resolved_regular_expression() {
    let (m, next) = regex_case(&["foo"], &[T1, T2]);
    assert_eq!(next, m);
}

// A subscription change whose dropped partitions the client no longer reports only shrinks
// the assignment (Kafka's updateCurrentAssignment, the branch without revocation).
#[test]
fn subscription_change_already_revoked_only_shrinks() {
    let m = member(
        Stable,
        10,
        10,
        a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]),
        a(&[]),
    );
    let target = a(&[(T1, &[1, 2, 3]), (T2, &[4, 5, 6])]);
    let owned = owned(&[(T2, &[4, 5, 6])]);
    let next = run(&m, 10, &target, free, Some(&owned), true, &[T2]).unwrap();
    assert_eq!(next, member(Stable, 10, 10, a(&[(T2, &[4, 5, 6])]), a(&[])));
}
