//! assign_shapes: the Rust core alone on Java's large-test shapes (no Python), one run each,
//! split into phases. `cargo bench --bench assign_shapes [-- uniform|nonequal|half]`.

use std::sync::Arc;
use std::time::Instant;

use kgroup::assignors::sticky::StickyAssignor;
use kgroup::assignors::{GroupInput, Member, Subscription};

/// Shape is the topics, partitions per topic and (member id, subscribed topics) of a group.
type Shape = (Vec<Arc<str>>, i32, Vec<(Arc<str>, Vec<Arc<str>>)>);

fn shape(name: &str) -> Shape {
    let (t, p, c) = match name {
        "half" => (100, 500, 5000),
        _ => (500, 2000, 2000),
    };
    let topics: Vec<Arc<str>> = (0..t).map(|i| Arc::from(format!("t{i:03}"))).collect();
    let width = if c >= 10000 { 5 } else { 4 };
    let members = (0..c)
        .map(|i| {
            let id: Arc<str> = Arc::from(format!("c{i:0width$}"));
            let subs = match name {
                "nonequal" if i == c - 1 => vec![topics[0].clone()],
                "half" if i % 4 == 0 => topics[..t / 2].to_vec(),
                "half" => topics[t / 2..].to_vec(),
                _ => topics.clone(),
            };
            (id, subs)
        })
        .collect();
    (topics, p, members)
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    for name in ["uniform", "nonequal", "half"] {
        if !which.is_empty() && !which.iter().any(|w| w == name) {
            continue;
        }
        let (topics, p, members) = shape(name);
        let mut input = GroupInput {
            partitions_per_topic: topics.iter().map(|t| (t.clone(), p)).collect(),
            members: members
                .iter()
                .map(|(id, ts)| Member {
                    id: id.clone(),
                    subscription: Arc::new(Subscription::new(ts.iter().cloned())),
                })
                .collect(),
            partition_racks: None,
        };
        let mut a = StickyAssignor::new(true);
        let t0 = Instant::now();
        let out = a.assign(&input).unwrap();
        let first = t0.elapsed();
        for (i, (m, asg)) in input
            .members
            .iter_mut()
            .zip(&out.assignment.assignments)
            .enumerate()
        {
            if i > 0 {
                let s = Arc::make_mut(&mut m.subscription);
                s.owned_partitions = asg.partitions.clone();
                s.generation_id = 1;
            }
        }
        // Best of a few runs: the machine is shared.
        let repeat: usize = std::env::var("REPEAT")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(1);
        let mut second = std::time::Duration::MAX;
        let mut out2 = None;
        for _ in 0..repeat {
            let t0 = Instant::now();
            let o = a.assign(&input).unwrap();
            second = second.min(t0.elapsed());
            out2 = Some(o);
        }
        let out2 = out2.unwrap();
        println!(
            "{name:9} cooperative-sticky first {:8.1} ms  with ownership {:8.1} ms  (constrained: {}, moving {})",
            first.as_secs_f64() * 1e3,
            second.as_secs_f64() * 1e3,
            out2.constrained,
            out2.transferring.len()
        );
    }
}
