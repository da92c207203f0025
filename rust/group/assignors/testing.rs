//! Helpers for the assignors' tests: groups written as plain data, and the checks every
//! assignment must pass.

use std::collections::{BTreeMap, BTreeSet};

use super::{uuid, Assignment, AssignorError, GroupSpec, MemberSpec, ServerAssignor};
use super::{SubscriptionType, TopicId};

/// The fixed topic ids of Kafka's uniform assignor tests.
pub(crate) fn t1() -> TopicId {
    uuid::parse("T1-A4s3VTwiI5CTbEp6POw").unwrap()
}
pub(crate) fn t2() -> TopicId {
    uuid::parse("T2-B4s3VTwiI5YHbPp6YUe").unwrap()
}
pub(crate) fn t3() -> TopicId {
    uuid::parse("T3-CU8fVTLCz5YMkLoDQsa").unwrap()
}
pub(crate) fn t4() -> TopicId {
    uuid::parse("T4-Tw9fVTLCz5HbPp6YQsa").unwrap()
}

/// Member is a member that owns its data, for a [`GroupSpec`] to borrow.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub id: String,
    pub instance: Option<String>,
    pub rack: Option<String>,
    pub topics: BTreeSet<TopicId>,
    pub target: Assignment,
}

/// member is a dynamic member subscribed to `topics` whose previous target is `target`.
pub(crate) fn member(id: &str, topics: &[TopicId], target: Assignment) -> Member {
    Member {
        id: id.to_string(),
        instance: None,
        rack: None,
        topics: topics.iter().copied().collect(),
        target,
    }
}

/// asg is an assignment written as (topic, partitions) pairs.
pub(crate) fn asg(entries: &[(TopicId, &[i32])]) -> Assignment {
    entries.iter().map(|(t, p)| (*t, p.to_vec())).collect()
}

/// spec borrows `members` into a spec of type `kind`.
pub(crate) fn spec(members: &[Member], kind: SubscriptionType) -> GroupSpec<'_> {
    GroupSpec::new(
        members
            .iter()
            .map(|m| MemberSpec {
                member_id: &m.id,
                instance_id: m.instance.as_deref(),
                rack_id: m.rack.as_deref(),
                subscribed_topic_ids: &m.topics,
                target: &m.target,
            })
            .collect(),
        kind,
    )
}

/// run assigns `members` with `assignor` over topics of the given partition counts.
pub(crate) fn run(
    assignor: &dyn ServerAssignor,
    members: &[Member],
    kind: SubscriptionType,
    topics: &[(TopicId, i32)],
) -> Result<Vec<Assignment>, AssignorError> {
    let topics: BTreeMap<TopicId, i32> = topics.iter().copied().collect();
    assignor.assign(&spec(members, kind), &topics)
}

/// with_targets is `members` with `targets` as their previous targets.
pub(crate) fn with_targets(members: &[Member], targets: &[Assignment]) -> Vec<Member> {
    members
        .iter()
        .zip(targets)
        .map(|(m, t)| Member {
            target: t.clone(),
            ..m.clone()
        })
        .collect()
}

/// check_valid asserts what every assignment must be: each partition of each topic someone
/// subscribes to is assigned exactly once, to a subscriber; nothing else is assigned.
pub(crate) fn check_valid(members: &[Member], topics: &[(TopicId, i32)], out: &[Assignment]) {
    assert_eq!(members.len(), out.len());
    let counts: BTreeMap<TopicId, i32> = topics.iter().copied().collect();
    let mut seen: BTreeMap<(TopicId, i32), usize> = BTreeMap::new();
    for (i, (m, a)) in members.iter().zip(out).enumerate() {
        for (t, parts) in a.iter() {
            assert!(
                m.topics.contains(t),
                "{} got {} unsubscribed",
                m.id,
                uuid::format(t)
            );
            for &p in parts {
                assert!(
                    (0..counts[t]).contains(&p),
                    "{} got {}-{p}",
                    m.id,
                    uuid::format(t)
                );
                if let Some(j) = seen.insert((*t, p), i) {
                    panic!("{}-{p} given to members {j} and {i}", uuid::format(t));
                }
            }
        }
    }
    let subscribed: BTreeSet<TopicId> = members.iter().flat_map(|m| m.topics.clone()).collect();
    for t in subscribed {
        // A topic missing from the metadata can only be subscribed where the test says the
        // group is Homogeneous and the first member does not subscribe to it.
        for p in 0..counts.get(&t).copied().unwrap_or(0) {
            assert!(
                seen.contains_key(&(t, p)),
                "{}-{p} unassigned",
                uuid::format(&t)
            );
        }
    }
}

/// check_balanced asserts Kafka's balance for uniform: no partition can move from its owner
/// to a subscriber of its topic holding at least two fewer partitions. For a Homogeneous group
/// that is sizes differing by at most one.
pub(crate) fn check_balanced(members: &[Member], out: &[Assignment]) {
    let sizes: Vec<usize> = out.iter().map(Assignment::len).collect();
    for (a, owner) in out.iter().enumerate() {
        for (t, _) in owner.iter() {
            for (b, other) in members.iter().enumerate() {
                assert!(
                    !other.topics.contains(t) || sizes[b] + 2 > sizes[a],
                    "{} ({}) could give {} to {} ({}): {sizes:?}",
                    members[a].id,
                    sizes[a],
                    uuid::format(t),
                    other.id,
                    sizes[b],
                );
            }
        }
    }
}

/// common_group is the group of Kafka's CommonAssignorTests: A, B and C subscribed to three
/// topics of 2, 5 and 7 partitions (random ids in Kafka; fixed here), with these racks.
pub(crate) fn common_group(racks: [Option<&str>; 3]) -> (Vec<Member>, [(TopicId, i32); 3]) {
    let all = [t1(), t2(), t3()];
    let members = ["A", "B", "C"]
        .iter()
        .zip(racks)
        .map(|(id, rack)| Member {
            rack: rack.map(str::to_string),
            ..member(id, &all, Assignment::new())
        })
        .collect();
    (members, [(t1(), 2), (t2(), 5), (t3(), 7)])
}

/// check_assignment_reuse is Kafka's CommonAssignorTests.testAssignmentReuse: assigning again
/// from the first result gives it back (Kafka checks that the very same map objects come back;
/// here, equal ones). Rack-aware, the members have racks 1, 2 and 3, which change nothing.
/// Returns the first result.
pub(crate) fn check_assignment_reuse(
    assignor: &dyn ServerAssignor,
    kind: SubscriptionType,
    rack_aware: bool,
) -> Vec<Assignment> {
    let racks = if rack_aware {
        [Some("rack1"), Some("rack2"), Some("rack3")]
    } else {
        [None; 3]
    };
    let (members, topics) = common_group(racks);
    let first = run(assignor, &members, kind, &topics).unwrap();
    check_valid(&members, &topics, &first);
    let again = with_targets(&members, &first);
    assert_eq!(run(assignor, &again, kind, &topics).unwrap(), first);
    first
}

/// check_reassignment_stickiness is Kafka's CommonAssignorTests.testReassignmentStickiness: from
/// the first result, every order of the members gives the same assignment back. Rack-aware,
/// only B has a rack, so that A and C stay interchangeable.
pub(crate) fn check_reassignment_stickiness(
    assignor: &dyn ServerAssignor,
    kind: SubscriptionType,
    rack_aware: bool,
) {
    let (members, topics) = common_group([None, rack_aware.then_some("rack1"), None]);
    let first = run(assignor, &members, kind, &topics).unwrap();
    check_valid(&members, &topics, &first);
    let with_first = with_targets(&members, &first);
    for order in [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ] {
        let again: Vec<Member> = order.iter().map(|&i| with_first[i].clone()).collect();
        let out = run(assignor, &again, kind, &topics).unwrap();
        for (k, &i) in order.iter().enumerate() {
            assert_eq!(
                out[k],
                first[i],
                "{} {kind:?} rack-aware {rack_aware}, order {order:?}, member {}",
                assignor.name(),
                members[i].id
            );
        }
    }
}
