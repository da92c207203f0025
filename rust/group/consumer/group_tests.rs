//! Tests of [`ConsumerGroup`]: cases ported from Kafka 4.2's `ConsumerGroupTest` and
//! `TargetAssignmentBuilderTest` (each test named after the Java one it pins), and a property
//! test that the incrementally kept indexes equal indexes rebuilt from scratch.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use super::*;
use crate::group::assignors::{by_name, TopicDescriber};
use crate::rng::Rng;

const FOO: TopicId = [1; 16];
const BAR: TopicId = [2; 16];
const ZAR: TopicId = [3; 16];

fn a(topics: &[(TopicId, &[i32])]) -> Assignment {
    topics.iter().map(|(t, p)| (*t, p.to_vec())).collect()
}

fn member(id: &str, topics: &[&str]) -> ConsumerMember {
    ConsumerMember {
        subscribed_topic_names: topics.iter().map(|t| t.to_string()).collect(),
        ..ConsumerMember::new(id)
    }
}

fn metadata() -> BTreeMap<String, TopicInfo> {
    [("foo", FOO, 6), ("bar", BAR, 6), ("zar", ZAR, 6)]
        .into_iter()
        .map(|(n, id, c)| {
            (
                n.to_string(),
                TopicInfo {
                    topic_id: id,
                    partition_count: c,
                },
            )
        })
        .collect()
}

/// Seen is what a [`Fixed`] assignor was given for one member.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    member_id: String,
    instance_id: Option<String>,
    topics: BTreeSet<TopicId>,
    target: Assignment,
}

/// Fixed is the mock assignor of Kafka's TargetAssignmentBuilderTest: it answers prepared
/// assignments by member id and records the spec it was given.
struct Fixed {
    out: BTreeMap<String, Assignment>,
    seen: Mutex<Option<(SubscriptionType, Vec<Seen>)>>,
}

impl Fixed {
    fn new(out: &[(&str, Assignment)]) -> Self {
        Fixed {
            out: out
                .iter()
                .map(|(m, a)| (m.to_string(), a.clone()))
                .collect(),
            seen: Mutex::new(None),
        }
    }
    fn seen(&self) -> (SubscriptionType, Vec<Seen>) {
        self.seen.lock().unwrap().clone().unwrap()
    }
}

impl ServerAssignor for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn assign(
        &self,
        spec: &GroupSpec<'_>,
        _topics: &dyn TopicDescriber,
    ) -> Result<Vec<Assignment>, AssignorError> {
        let seen = spec
            .members()
            .iter()
            .map(|m| Seen {
                member_id: m.member_id.to_string(),
                instance_id: m.instance_id.map(str::to_string),
                topics: m.subscribed_topic_ids.clone(),
                target: m.target.clone(),
            })
            .collect();
        *self.seen.lock().unwrap() = Some((spec.subscription_type(), seen));
        Ok(spec
            .members()
            .iter()
            .map(|m| self.out.get(m.member_id).cloned().unwrap_or_default())
            .collect())
    }
}

/// group_with builds a group of `members` whose targets are `targets`, at epoch 10.
fn group_with(members: Vec<ConsumerMember>, targets: &[(&str, Assignment)]) -> ConsumerGroup {
    let mut g = ConsumerGroup::new("group");
    for m in members {
        g.update_member(m);
    }
    for (id, t) in targets {
        g.set_target(id, t.clone());
    }
    g.set_group_epoch(10);
    g.set_assignment_epoch(10);
    g
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ConsumerGroupTest.testGroupState.
#[test]
fn test_group_state() {
    let mut g = ConsumerGroup::new("foo");
    assert_eq!(g.state(), ConsumerGroupState::Empty);
    let stable = |id: &str, epoch: i32, state: MemberState| ConsumerMember {
        state,
        member_epoch: epoch,
        previous_member_epoch: epoch - 1,
        ..ConsumerMember::new(id)
    };
    // A new group is at epochs 1 (KAFKA-20268): the first assignment is epoch 2.
    g.update_member(stable("member1", 2, MemberState::Stable));
    g.set_group_epoch(2);
    assert_eq!(g.state(), ConsumerGroupState::Assigning);
    g.update_member(stable("member2", 2, MemberState::Stable));
    g.set_group_epoch(3);
    assert_eq!(g.state(), ConsumerGroupState::Assigning);
    g.set_assignment_epoch(3);
    assert_eq!(g.state(), ConsumerGroupState::Reconciling);
    g.update_member(stable("member1", 3, MemberState::Stable));
    assert_eq!(g.state(), ConsumerGroupState::Reconciling);
    g.update_member(stable("member2", 3, MemberState::UnrevokedPartitions));
    assert_eq!(g.state(), ConsumerGroupState::Reconciling);
    g.update_member(stable("member2", 3, MemberState::Stable));
    assert_eq!(g.state(), ConsumerGroupState::Stable);
    g.remove_member("member1");
    g.remove_member("member2");
    assert_eq!(g.state(), ConsumerGroupState::Empty);
    assert_eq!(
        [
            ConsumerGroupState::Empty,
            ConsumerGroupState::Assigning,
            ConsumerGroupState::Reconciling,
            ConsumerGroupState::Stable
        ]
        .map(ConsumerGroupState::name),
        ["Empty", "Assigning", "Reconciling", "Stable"]
    );
}

// ConsumerGroupTest.testPreferredServerAssignor (the group-level answers; Kafka's
// computePreferredServerAssignor(old, new) is preferred_server_assignor on the updated group).
#[test]
fn test_preferred_server_assignor() {
    let with = |id: &str, assignor: Option<&str>| ConsumerMember {
        server_assignor: assignor.map(str::to_string),
        ..ConsumerMember::new(id)
    };
    let mut g = ConsumerGroup::new("foo");
    assert_eq!(g.preferred_server_assignor("default"), "default");
    let after = |g: &ConsumerGroup, old: Option<&ConsumerMember>, new: Option<&ConsumerMember>| {
        g.preferred_server_assignor_after(old, new, "default")
    };
    assert_eq!(
        after(&g, None, Some(&with("member1", Some("range")))),
        "range"
    );
    g.update_member(with("member1", Some("range")));
    assert_eq!(
        after(&g, Some(&with("member1", Some("range"))), None),
        "default"
    );
    assert_eq!(
        after(&g, None, Some(&with("member2", Some("range")))),
        "range"
    );
    assert_eq!(g.preferred_server_assignor("uniform"), "range");
    g.update_member(with("member2", Some("range")));
    g.update_member(with("member3", Some("uniform")));
    assert_eq!(g.preferred_server_assignor("uniform"), "range");
    let assignor = after(
        &g,
        Some(&with("member1", Some("range"))),
        Some(&with("member1", None)),
    );
    assert_eq!(assignor, "uniform");
    g.update_member(with("member1", None));
    assert_eq!(
        after(
            &g,
            Some(&with("member2", Some("range"))),
            Some(&with("member2", None))
        ),
        "uniform"
    );
    // One vote each: the tie goes to uniform (reference §3.3).
    assert_eq!(g.preferred_server_assignor("range"), "uniform");
    g.update_member(with("member2", None));
    assert_eq!(g.preferred_server_assignor("range"), "uniform");
    assert_eq!(
        after(
            &g,
            Some(&with("member3", Some("uniform"))),
            Some(&with("member3", None))
        ),
        "default"
    );
    g.update_member(with("member3", None));
    assert_eq!(g.preferred_server_assignor("default"), "default");
    assert!(g.server_assignor_votes().is_empty());
}

// ConsumerGroupTest.testUpdateSubscribedTopicNamesAndSubscriptionType.
#[test]
fn test_update_subscribed_topic_names_and_subscription_type() {
    let mut g = ConsumerGroup::new("group-foo");
    assert!(g.subscribed_topic_names().is_empty());
    assert_eq!(g.subscription_type(), SubscriptionType::Homogeneous);
    g.update_member(member("member1", &["foo"]));
    assert_eq!(g.subscription_type(), SubscriptionType::Homogeneous);
    g.update_member(member("member2", &["bar", "foo"]));
    assert_eq!(g.subscription_type(), SubscriptionType::Heterogeneous);
    g.update_member(member("member3", &["bar", "foo"]));
    assert_eq!(g.subscription_type(), SubscriptionType::Heterogeneous);
    assert_eq!(
        g.subscribed_topic_names(),
        &BTreeMap::from([("bar".to_string(), 2), ("foo".to_string(), 3)])
    );
    g.remove_member("member1");
    assert_eq!(g.subscription_type(), SubscriptionType::Homogeneous);
    g.update_member(member("member2", &["bar", "foo", "zar"]));
    assert_eq!(g.subscription_type(), SubscriptionType::Heterogeneous);
}

// ConsumerGroupTest.testSubscriptionType (the name-only cases; regexes are not counted yet).
#[test]
fn test_subscription_type() {
    let mut g = ConsumerGroup::new("g");
    g.update_member(member("m1", &[]));
    g.update_member(member("m2", &[]));
    assert_eq!(g.subscription_type(), SubscriptionType::Homogeneous);
    g.update_member(member("m1", &["foo"]));
    assert_eq!(g.subscription_type(), SubscriptionType::Heterogeneous);
    g.update_member(member("m2", &["foo"]));
    assert_eq!(g.subscription_type(), SubscriptionType::Homogeneous);
}

// ConsumerGroupTest.testUpdateMember and testRemoveMember (named apart from
// TargetAssignmentBuilderTest.testUpdateMember below).
#[test]
fn group_test_update_and_remove_member() {
    let mut g = ConsumerGroup::new("foo");
    g.update_member(ConsumerMember::new("member"));
    let m = member("member", &["foo", "bar"]);
    g.update_member(m.clone());
    assert_eq!(g.member("member"), Some(&m));
    assert_eq!(g.num_members(), 1);
    assert_eq!(g.remove_member("member"), Some(m));
    assert!(!g.has_member("member"));
    assert_eq!(g.remove_member("member"), None);
    assert_eq!(g, ConsumerGroup::new("foo"));
}

// ConsumerGroupTest.testNoStaticMember, testGetStaticMemberByInstanceId, testRemoveStaticMember.
#[test]
fn test_static_members() {
    let mut g = ConsumerGroup::new("foo");
    assert_eq!(g.static_member_id("instance"), None);
    let m = ConsumerMember {
        instance_id: Some("instance".to_string()),
        ..ConsumerMember::new("member")
    };
    g.update_member(m.clone());
    assert_eq!(g.static_member_id("instance"), Some("member"));
    assert_eq!(g.static_member("instance"), Some(&m));
    g.remove_member("member");
    assert_eq!(g.static_member_id("instance"), None);
    assert!(!g.has_member("member"));
}

// A static replacement: the new member id takes the instance id; removing the old member
// afterwards keeps the new entry (Kafka removes the old id first, kgroup allows either order).
#[test]
fn static_replacement_keeps_the_new_member_in_the_index() {
    let mut g = ConsumerGroup::new("foo");
    let with = |id: &str| ConsumerMember {
        instance_id: Some("i".to_string()),
        ..ConsumerMember::new(id)
    };
    g.update_member(with("old"));
    g.update_member(with("new"));
    g.remove_member("old");
    assert_eq!(g.static_member_id("i"), Some("new"));
}

// ConsumerGroupTest.testUpdatingMemberUpdatesPartitionEpoch, testDeletingMemberRemovesPartitionEpoch.
#[test]
fn test_updating_member_updates_partition_epoch() {
    let mut g = ConsumerGroup::new("foo");
    g.update_member(ConsumerMember {
        member_epoch: 10,
        assigned_partitions: a(&[(FOO, &[1, 2, 3])]),
        partitions_pending_revocation: a(&[(BAR, &[4, 5, 6])]),
        ..ConsumerMember::new("m1")
    });
    assert_eq!(g.partition_epochs().epoch(&FOO, 1), 10);
    assert_eq!(g.partition_epochs().epoch(&BAR, 4), 10);
    g.update_member(ConsumerMember {
        member_epoch: 11,
        assigned_partitions: a(&[(BAR, &[1, 2, 3])]),
        partitions_pending_revocation: a(&[(FOO, &[4, 5, 6])]),
        ..ConsumerMember::new("m1")
    });
    assert_eq!(g.partition_epochs().epoch(&FOO, 1), -1);
    assert_eq!(g.partition_epochs().epoch(&BAR, 1), 11);
    assert_eq!(g.partition_epochs().epoch(&FOO, 4), 11);
    g.remove_member("m1");
    assert!(g.partition_epochs().is_empty());
}

// ConsumerGroupTest.testUpdateInvertedAssignment (the set/remove target part).
#[test]
fn test_update_inverted_assignment() {
    let mut g = ConsumerGroup::new("foo");
    g.set_target("m1", a(&[(FOO, &[0, 1])]));
    assert_eq!(g.target_owner(&FOO, 0), Some("m1"));
    g.set_target("m2", a(&[(FOO, &[1, 2])]));
    assert_eq!(g.target_owner(&FOO, 1), Some("m2"));
    g.set_target("m1", a(&[(FOO, &[0])]));
    assert_eq!(g.target_owner(&FOO, 1), Some("m2"));
    g.remove_target("m2");
    assert_eq!(g.target_owner(&FOO, 1), None);
    assert_eq!(g.target_owner(&FOO, 0), Some("m1"));
    g.remove_target("m1");
    assert_eq!(g, ConsumerGroup::new("foo"));
}

// ConsumerGroupTest: throwIfConsumerGroupIsFull as GroupMetadataManagerTest drives it.
#[test]
fn is_full_lets_known_members_in() {
    let mut g = ConsumerGroup::new("foo");
    assert!(!g.is_full(1, "a"));
    g.update_member(ConsumerMember::new("a"));
    assert!(!g.is_full(1, "a"));
    assert!(g.is_full(1, "b"));
    assert!(g.is_full(1, ""));
    assert!(!g.is_full(2, "b"));
}

// TargetAssignmentBuilderTest.testEmpty.
#[test]
fn test_empty() {
    let g = ConsumerGroup::new("g");
    let fixed = Fixed::new(&[]);
    let r = g
        .compute_target_assignment(TargetChange::None, &metadata(), &fixed)
        .unwrap();
    assert!(r.targets.is_empty());
    assert!(r.changed.is_empty());
}

fn two_members() -> ConsumerGroup {
    group_with(
        vec![
            member("member-1", &["foo", "bar", "zar"]),
            member("member-2", &["foo", "bar", "zar"]),
        ],
        &[
            ("member-1", a(&[(FOO, &[1, 2, 3]), (BAR, &[1, 2, 3])])),
            ("member-2", a(&[(FOO, &[4, 5, 6]), (BAR, &[4, 5, 6])])),
        ],
    )
}

// TargetAssignmentBuilderTest.testAssignmentHasNotChanged.
#[test]
fn test_assignment_has_not_changed() {
    let g = two_members();
    let fixed = Fixed::new(&[
        ("member-1", a(&[(FOO, &[1, 2, 3]), (BAR, &[1, 2, 3])])),
        ("member-2", a(&[(FOO, &[4, 5, 6]), (BAR, &[4, 5, 6])])),
    ]);
    let r = g
        .compute_target_assignment(TargetChange::None, &metadata(), &fixed)
        .unwrap();
    assert!(r.changed.is_empty());
    assert_eq!(&r.targets, g.targets());
    let (ty, seen) = fixed.seen();
    assert_eq!(ty, SubscriptionType::Homogeneous);
    assert_eq!(seen[0].topics, BTreeSet::from([FOO, BAR, ZAR]));
    assert_eq!(seen[1].target, g.targets()["member-2"]);
}

// TargetAssignmentBuilderTest.testAssignmentSwapped.
#[test]
fn test_assignment_swapped() {
    let g = two_members();
    let fixed = Fixed::new(&[
        ("member-2", a(&[(FOO, &[1, 2, 3]), (BAR, &[1, 2, 3])])),
        ("member-1", a(&[(FOO, &[4, 5, 6]), (BAR, &[4, 5, 6])])),
    ]);
    let r = g
        .compute_target_assignment(TargetChange::None, &metadata(), &fixed)
        .unwrap();
    assert_eq!(r.changed, ids(&["member-1", "member-2"]));
    assert_eq!(
        r.targets["member-1"],
        a(&[(FOO, &[4, 5, 6]), (BAR, &[4, 5, 6])])
    );
}

// TargetAssignmentBuilderTest.testNewMember.
#[test]
fn test_new_member() {
    let g = two_members();
    let new = member("member-3", &["foo", "bar", "zar"]);
    let fixed = Fixed::new(&[
        ("member-1", a(&[(FOO, &[1, 2]), (BAR, &[1, 2])])),
        ("member-2", a(&[(FOO, &[3, 4]), (BAR, &[3, 4])])),
        ("member-3", a(&[(FOO, &[5, 6]), (BAR, &[5, 6])])),
    ]);
    let r = g
        .compute_target_assignment(TargetChange::Update(&new), &metadata(), &fixed)
        .unwrap();
    assert_eq!(r.changed, ids(&["member-1", "member-2", "member-3"]));
    let (_, seen) = fixed.seen();
    assert_eq!(
        seen.iter()
            .map(|s| s.member_id.as_str())
            .collect::<Vec<_>>(),
        ["member-1", "member-2", "member-3"]
    );
    assert!(seen[2].target.is_empty());
}

// TargetAssignmentBuilderTest.testUpdateMember: the updated member's new subscription is what
// the assignor sees, and the group turns heterogeneous.
#[test]
fn test_update_member() {
    let mut g = two_members();
    g.update_member(member("member-3", &["bar", "zar"]));
    g.set_target("member-3", a(&[(BAR, &[5, 6])]));
    let updated = ConsumerMember {
        rack_id: Some("rack-0".to_string()),
        ..member("member-3", &["foo", "bar", "zar"])
    };
    let fixed = Fixed::new(&[
        ("member-1", a(&[(FOO, &[1, 2]), (BAR, &[1, 2])])),
        ("member-2", a(&[(FOO, &[3, 4]), (BAR, &[3, 4])])),
        ("member-3", a(&[(FOO, &[5, 6]), (BAR, &[5, 6])])),
    ]);
    let r = g
        .compute_target_assignment(TargetChange::Update(&updated), &metadata(), &fixed)
        .unwrap();
    assert_eq!(r.changed, ids(&["member-1", "member-2", "member-3"]));
    let (ty, seen) = fixed.seen();
    assert_eq!(ty, SubscriptionType::Homogeneous);
    assert_eq!(seen[2].topics, BTreeSet::from([FOO, BAR, ZAR]));
    assert_eq!(seen[2].target, a(&[(BAR, &[5, 6])]));
    // Before the update the group was heterogeneous.
    g.compute_target_assignment(TargetChange::None, &metadata(), &fixed)
        .unwrap();
    assert_eq!(fixed.seen().0, SubscriptionType::Heterogeneous);
}

// TargetAssignmentBuilderTest.testPartialAssignmentUpdate.
#[test]
fn test_partial_assignment_update() {
    let g = two_members();
    let fixed = Fixed::new(&[
        ("member-1", a(&[(FOO, &[1, 2, 3]), (BAR, &[1, 2, 3])])),
        ("member-2", a(&[(FOO, &[4, 5]), (BAR, &[4, 5])])),
    ]);
    let r = g
        .compute_target_assignment(TargetChange::None, &metadata(), &fixed)
        .unwrap();
    assert_eq!(r.changed, ids(&["member-2"]));
}

// TargetAssignmentBuilderTest.testDeleteMember.
#[test]
fn test_delete_member() {
    let g = two_members();
    let fixed = Fixed::new(&[("member-1", a(&[(FOO, &[1, 2, 3, 4, 5, 6])]))]);
    let r = g
        .compute_target_assignment(TargetChange::Remove("member-2"), &metadata(), &fixed)
        .unwrap();
    assert_eq!(r.changed, ids(&["member-1"]));
    assert_eq!(r.targets.keys().collect::<Vec<_>>(), ["member-1"]);
}

// TargetAssignmentBuilderTest.testReplaceStaticMember: the new member id inherits the old
// one's target and the old id leaves the spec.
#[test]
fn test_replace_static_member() {
    let old = ConsumerMember {
        instance_id: Some("instance-3".to_string()),
        ..member("member-3", &["foo", "bar", "zar"])
    };
    let mut g = two_members();
    g.update_member(old);
    g.set_target("member-3", a(&[(FOO, &[5, 6]), (BAR, &[5, 6])]));
    let new = ConsumerMember {
        instance_id: Some("instance-3".to_string()),
        ..member("member-3-a", &["foo", "bar", "zar"])
    };
    let fixed = Fixed::new(&[
        ("member-1", a(&[(FOO, &[1, 2, 3]), (BAR, &[1, 2, 3])])),
        ("member-2", a(&[(FOO, &[4, 5, 6]), (BAR, &[4, 5, 6])])),
        ("member-3-a", a(&[(FOO, &[5, 6]), (BAR, &[5, 6])])),
    ]);
    let r = g
        .compute_target_assignment(TargetChange::Update(&new), &metadata(), &fixed)
        .unwrap();
    assert_eq!(r.changed, ids(&["member-3-a"]));
    assert_eq!(
        r.targets.keys().collect::<Vec<_>>(),
        ["member-1", "member-2", "member-3-a"]
    );
    let (_, seen) = fixed.seen();
    assert_eq!(seen[2].target, a(&[(FOO, &[5, 6]), (BAR, &[5, 6])]));
    assert_eq!(seen[2].instance_id.as_deref(), Some("instance-3"));
}

// Unknown topic names are dropped, not an error (reference §3.2).
#[test]
fn unknown_topic_names_are_dropped() {
    let g = group_with(vec![member("m", &["foo", "missing"])], &[]);
    let fixed = Fixed::new(&[]);
    g.compute_target_assignment(TargetChange::None, &metadata(), &fixed)
        .unwrap();
    assert_eq!(fixed.seen().1[0].topics, BTreeSet::from([FOO]));
}

// An assignor failure maps to UNKNOWN_SERVER_ERROR
// (GroupMetadataManagerTest.testPartitionAssignorExceptionOnRegularHeartbeat).
#[test]
fn assignor_error_is_unknown_server_error() {
    struct Failing;
    impl ServerAssignor for Failing {
        fn name(&self) -> &'static str {
            "failing"
        }
        fn assign(
            &self,
            _: &GroupSpec<'_>,
            _: &dyn TopicDescriber,
        ) -> Result<Vec<Assignment>, AssignorError> {
            Err(AssignorError::new("boom"))
        }
    }
    let g = two_members();
    let err = g
        .compute_target_assignment(TargetChange::None, &metadata(), &Failing)
        .unwrap_err();
    assert_eq!(
        err,
        TargetAssignmentError::Assignor(AssignorError::new("boom"))
    );
    assert_eq!(err.error_code(), ErrorCode::UnknownServerError);
}

// The real assignors run through the computation: uniform spreads six partitions over two.
#[test]
fn uniform_through_the_group() {
    let g = group_with(vec![member("a", &["foo"]), member("b", &["foo"])], &[]);
    let r = g
        .compute_target_assignment(TargetChange::None, &metadata(), by_name("uniform").unwrap())
        .unwrap();
    assert_eq!(r.changed, ids(&["a", "b"]));
    assert_eq!(r.targets.values().map(Assignment::len).sum::<usize>(), 6);
}

/// rebuilt is `g` with every index recomputed from its members and targets.
fn rebuilt(g: &ConsumerGroup) -> ConsumerGroup {
    let mut fresh = ConsumerGroup::new(g.group_id());
    fresh.set_group_epoch(g.group_epoch());
    fresh.set_assignment_epoch(g.assignment_epoch());
    for m in g.members().values() {
        fresh.update_member(m.clone());
    }
    for (id, t) in g.targets() {
        fresh.set_target(id, t.clone());
    }
    fresh
}

// Property: after random add/update/remove sequences the incrementally kept indexes equal
// indexes rebuilt from scratch. Members hold disjoint partitions and targets are disjoint, as
// the coordinator keeps them, so the rebuild order does not matter.
#[test]
fn indexes_match_a_rebuild_after_random_changes() {
    let mut rng = Rng::new(Some(848));
    let names = ["foo", "bar", "zar"];
    let topic_ids = [FOO, BAR, ZAR];
    let assignors = ["uniform", "range", "custom"];
    for _ in 0..200 {
        let mut g = ConsumerGroup::new("g");
        for _ in 0..30 {
            let r = rng.next_u64();
            let id = format!("m{}", r % 6);
            if r % 5 == 0 {
                g.remove_member(&id);
                g.remove_target(&id);
                continue;
            }
            let pick =
                |bits: u64| -> Vec<usize> { (0..3).filter(|i| bits >> i & 1 == 1).collect() };
            let slot = (r % 6) as i32;
            // Each member slot owns partition `slot` (assigned) and `slot + 6` (pending) of the
            // topics it picks, so no two members hold one partition.
            let assigned: Assignment = pick(r >> 8)
                .into_iter()
                .map(|i| (topic_ids[i], vec![slot]))
                .collect();
            let pending: Assignment = pick(r >> 11)
                .into_iter()
                .map(|i| (topic_ids[i], vec![slot + 6]))
                .collect();
            let m = ConsumerMember {
                instance_id: (r >> 14 & 1 == 1).then(|| format!("i{}", r % 6)),
                subscribed_topic_names: pick(r >> 15)
                    .into_iter()
                    .map(|i| names[i].to_string())
                    .collect(),
                server_assignor: assignors.get((r >> 18) as usize % 4).map(|s| s.to_string()),
                classic_member_metadata: (r >> 20 & 1 == 1).then(Default::default),
                member_epoch: (r >> 21) as i32 % 5,
                state: MemberState::from_i8((r >> 24) as i8 % 3),
                assigned_partitions: assigned,
                partitions_pending_revocation: pending,
                ..ConsumerMember::new(id.clone())
            };
            assert!(g.update_member(m).is_empty());
            let target: Assignment = pick(r >> 27)
                .into_iter()
                .map(|i| (topic_ids[i], vec![slot, slot + 12]))
                .collect();
            g.set_target(&id, target);
        }
        assert_eq!(g, rebuilt(&g));
    }
}
