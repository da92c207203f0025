//! server_assignors: KIP-848's server-side assignors (`uniform`, `range`) on large groups, one
//! run each: a first assignment from nothing, then the next one after the last member leaves,
//! from the first result. `cargo bench --bench server_assignors [-- homogeneous|half]`.
//!
//! Shapes (topics x partitions, members): `homogeneous` 500 x 2000 over 2000 members, all
//! subscribed to everything; `half` 100 x 500 over 5000 members, every fourth subscribed to the
//! first half of the topics and the others to the second half (a Heterogeneous group).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kgroup::group::assignors::{
    by_name, Assignment, GroupSpec, MemberSpec, SubscriptionType, TopicId,
};

fn topic_id(i: usize) -> TopicId {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&(0x5eed_0000_0000_0000u64 ^ i as u64).to_be_bytes());
    id[8..].copy_from_slice(&(i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
    id
}

/// Shape is the partition counts, and each member's id and subscribed topics.
type Shape = (BTreeMap<TopicId, i32>, Vec<(String, BTreeSet<TopicId>)>);

fn shape(name: &str) -> Shape {
    let (topics, partitions, members) = match name {
        "half" => (100, 500, 5000),
        _ => (500, 2000, 2000),
    };
    let ids: Vec<TopicId> = (0..topics).map(topic_id).collect();
    let counts = ids.iter().map(|&t| (t, partitions)).collect();
    let members = (0..members)
        .map(|i| {
            let subs = match name {
                "half" if i % 4 == 0 => ids[..topics / 2].iter().copied().collect(),
                "half" => ids[topics / 2..].iter().copied().collect(),
                _ => ids.iter().copied().collect(),
            };
            (format!("member-{i:05}"), subs)
        })
        .collect();
    (counts, members)
}

/// assign runs `assignor` once over `members` with previous `targets`.
fn assign(
    assignor: &str,
    topics: &BTreeMap<TopicId, i32>,
    members: &[(String, BTreeSet<TopicId>)],
    targets: &[Assignment],
) -> (Vec<Assignment>, Duration) {
    let t0 = Instant::now();
    let specs = members
        .iter()
        .zip(targets)
        .map(|((id, subs), target)| MemberSpec {
            member_id: id,
            instance_id: None,
            rack_id: None,
            subscribed_topic_ids: subs,
            target,
        })
        .collect();
    let kind = SubscriptionType::of(members.iter().map(|m| &m.1));
    let spec = GroupSpec::new(specs, kind);
    let out = by_name(assignor).unwrap().assign(&spec, topics).unwrap();
    (out, t0.elapsed())
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    for name in ["homogeneous", "half"] {
        if !which.is_empty() && !which.iter().any(|w| w == name) {
            continue;
        }
        let (topics, mut members) = shape(name);
        let total: i32 = topics.values().sum();
        for assignor in ["uniform", "range"] {
            let empty = vec![Assignment::new(); members.len()];
            let (first, t_first) = assign(assignor, &topics, &members, &empty);
            let left = members.pop().unwrap();
            let (second, t_second) = assign(assignor, &topics, &members, &first[..members.len()]);
            let moved: usize = second
                .iter()
                .zip(&first)
                .map(|(new, old)| {
                    new.iter()
                        .map(|(t, ps)| ps.iter().filter(|&&p| !old.contains(t, p)).count())
                        .sum::<usize>()
                })
                .sum();
            members.push(left);
            println!(
                "{name:11} {assignor:7} {} topics, {total} partitions, {} members: first {:7.1} ms, after one leaves {:7.1} ms ({moved} partitions move, {} were the leaver's)",
                topics.len(),
                members.len(),
                t_first.as_secs_f64() * 1e3,
                t_second.as_secs_f64() * 1e3,
                first.last().map_or(0, Assignment::len),
            );
        }
    }
}
