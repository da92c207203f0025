//! Tests of the group spec and its parts.

use std::collections::{BTreeMap, BTreeSet};

use super::testing::*;
use super::*;

#[test]
fn is_partition_assigned_reads_previous_targets() {
    // Kafka's GroupSpecImplTest.testIsPartitionAssigned, plus ownership.
    let members = [
        member("A", &[t1()], asg(&[(t1(), &[1])])),
        member("B", &[t1()], asg(&[(t2(), &[0, 3])])),
    ];
    let spec = spec(&members, SubscriptionType::Homogeneous);
    assert!(spec.is_partition_assigned(&t1(), 1));
    assert!(!spec.is_partition_assigned(&t1(), 2));
    assert!(!spec.is_partition_assigned(&t3(), 2));
    assert_eq!(spec.previous_owner(&t2(), 3), Some(1));
    assert_eq!(spec.previous_owner(&t2(), 1), None);
    assert_eq!(spec.subscription_type(), SubscriptionType::Homogeneous);
    assert_eq!(spec.members()[1].member_id, "B");
}

#[test]
fn previous_targets_are_cleaned() {
    // A partition held twice stays with the first member in the given order; negative
    // partitions are dropped. Valid targets are borrowed as they are.
    let members = [
        member("A", &[t1()], asg(&[(t1(), &[0, 1])])),
        member("B", &[t1()], asg(&[(t1(), &[-1, 1, 2])])),
        member("C", &[t1()], asg(&[(t1(), &[3])])),
    ];
    let spec = spec(&members, SubscriptionType::Homogeneous);
    assert_eq!(spec.target(0), &members[0].target);
    assert_eq!(spec.target(1), &asg(&[(t1(), &[2])]));
    assert!(matches!(spec.targets[2], std::borrow::Cow::Borrowed(_)));
    assert_eq!(spec.previous_owner(&t1(), 1), Some(0));
    assert!(!spec.is_partition_assigned(&t1(), -1));

    // Past the partition count: ignored by both uniform builders. A keeps partition 0; the
    // homogeneous builder fills A first, the heterogeneous one deals to the least loaded.
    let members = [
        member("A", &[t1()], asg(&[(t1(), &[0, 5, 9])])),
        member("B", &[t1()], Assignment::new()),
    ];
    let topics = [(t1(), 4)];
    for (kind, a, b) in [
        (SubscriptionType::Homogeneous, [0, 1], [2, 3]),
        (SubscriptionType::Heterogeneous, [0, 3], [1, 2]),
    ] {
        let out = run(&UniformAssignor, &members, kind, &topics).unwrap();
        assert_eq!(out, [asg(&[(t1(), &a)]), asg(&[(t1(), &b)])], "{kind:?}");
    }
}

#[test]
fn subscription_type_is_all_sets_equal() {
    use SubscriptionType::*;
    let a: BTreeSet<&str> = ["x", "y"].into();
    let b: BTreeSet<&str> = ["y", "x"].into();
    let c: BTreeSet<&str> = ["x"].into();
    let none: BTreeSet<&str> = BTreeSet::new();
    assert_eq!(SubscriptionType::of([&a, &b]), Homogeneous);
    assert_eq!(SubscriptionType::of([&a, &c]), Heterogeneous);
    assert_eq!(SubscriptionType::of([&none, &c]), Heterogeneous);
    assert_eq!(SubscriptionType::of([&none, &none]), Homogeneous);
    assert_eq!(
        SubscriptionType::of(Vec::<&BTreeSet<&str>>::new()),
        Homogeneous
    );
    assert_eq!(Heterogeneous.name(), "Heterogeneous");
}

#[test]
fn assignments_are_normalised() {
    let a: Assignment = [(t1(), vec![3, 1, 3]), (t2(), vec![]), (t1(), vec![0])]
        .into_iter()
        .collect();
    assert_eq!(a.topics().len(), 1);
    assert_eq!(a.get(&t1()), [0, 1, 3]);
    assert_eq!(a.get(&t2()), [] as [i32; 0]);
    assert!(a.contains(&t1(), 3) && !a.contains(&t1(), 2));
    assert_eq!(a.len(), 3);
    assert!(Assignment::from_map(BTreeMap::from([(t1(), vec![])])).is_empty());
}

#[test]
fn assignors_are_found_by_name() {
    assert_eq!(by_name("uniform").map(|a| a.name()), Some("uniform"));
    assert_eq!(by_name("range").map(|a| a.name()), Some("range"));
    assert!(by_name("sticky").is_none());
    assert!(by_name("org.apache.kafka.coordinator.group.assignor.UniformAssignor").is_none());
    // Closures describe topics too.
    let members = [member("A", &[t1()], Assignment::new())];
    let spec = spec(&members, SubscriptionType::Homogeneous);
    let topics = |t: &TopicId| (*t == t1()).then_some(2);
    let out = by_name("uniform").unwrap().assign(&spec, &topics).unwrap();
    assert_eq!(out, [asg(&[(t1(), &[0, 1])])]);
    let missing = |_: &TopicId| Some(-1);
    let err = by_name("range")
        .unwrap()
        .assign(&spec, &missing)
        .unwrap_err();
    assert!(err.message().contains(&uuid::format(&t1())), "{err}");
}
