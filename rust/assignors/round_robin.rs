//! RoundRobinAssignor (`roundrobin`): Java's `org.apache.kafka.clients.consumer.RoundRobinAssignor`.
//!
//! Members sorted by `MemberInfo` order form a circle; partitions of all subscribed topics, topics
//! in `String.compareTo` order and partitions ascending, go one by one to the next member on the
//! circle that subscribes to the partition's topic. The result does not depend on hash order.
//! Java skips non-subscribers one step at a time; here each topic keeps the sorted positions of
//! its subscribers, so each partition costs one binary search.

use super::model::{sorted_members, Model};
use super::{GroupAssignment, GroupInput, TopicPartition};
use crate::errors::Result;

/// NAME is Kafka's name of this assignor.
pub const NAME: &str = "roundrobin";

/// assign computes Java's round-robin assignment for `input`.
pub fn assign(input: &GroupInput) -> Result<GroupAssignment> {
    let model = Model::new(input)?;
    let n = input.members.len();
    let mut lists: Vec<Vec<TopicPartition>> = vec![Vec::new(); n];
    if n == 0 {
        return Ok(GroupAssignment::from_lists(lists));
    }
    let circle = sorted_members(&model);
    // Positions on the circle of each topic's subscribers, ascending.
    let mut positions: Vec<Vec<u32>> = vec![Vec::new(); model.num_topics()];
    for (pos, &m) in circle.iter().enumerate() {
        for &t in model.member_topics[m].iter() {
            positions[t as usize].push(pos as u32);
        }
    }
    let mut next: usize = 0;
    for (t, subs) in positions.iter().enumerate() {
        let topic = &model.topics[t];
        for p in 0..model.counts[t] {
            // The first subscriber at or after `next`, wrapping around.
            let k = subs.partition_point(|&x| (x as usize) < next);
            let pos = if k < subs.len() { subs[k] } else { subs[0] } as usize;
            lists[circle[pos]].push(TopicPartition {
                topic: topic.clone(),
                partition: p as i32,
            });
            next = (pos + 1) % n;
        }
    }
    Ok(GroupAssignment::from_lists(lists))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignors::range::tests::group;

    fn lists(out: &GroupAssignment) -> Vec<Vec<String>> {
        out.assignments
            .iter()
            .map(|a| {
                a.partitions
                    .iter()
                    .map(|tp| format!("{}-{}", tp.topic, tp.partition))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn javadoc_examples() {
        // RoundRobinAssignor Javadoc, reproduced by running Java (golden vector S2).
        let g = group(
            &[("t0", 3), ("t1", 3)],
            &[("C0", &["t0", "t1"]), ("C1", &["t0", "t1"])],
        );
        assert_eq!(
            lists(&assign(&g).unwrap()),
            [vec!["t0-0", "t0-2", "t1-1"], vec!["t0-1", "t1-0", "t1-2"]]
        );
        let g = group(
            &[("t0", 1), ("t1", 2), ("t2", 3)],
            &[
                ("C0", &["t0"]),
                ("C1", &["t0", "t1"]),
                ("C2", &["t0", "t1", "t2"]),
            ],
        );
        assert_eq!(
            lists(&assign(&g).unwrap()),
            [
                vec!["t0-0"],
                vec!["t1-0"],
                vec!["t1-1", "t2-0", "t2-1", "t2-2"]
            ]
        );
    }
}
