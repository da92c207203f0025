//! RangeAssignor (`range`): Java's `org.apache.kafka.clients.consumer.RangeAssignor`, including
//! the rack-aware assignment of KIP-881 (Kafka 3.5+, with the co-partitioning fix KAFKA-14891).
//!
//! Per topic, subscribers sorted by `MemberInfo` order take consecutive ranges: the first
//! `partitions % subscribers` get one extra partition. Each member's list is built topic by topic
//! in the iteration order of Java's `partitionsPerTopic` `HashMap`, which this module replays, so
//! the lists (and the Assignment bytes) equal Java's. In rack-aware mode every list ends sorted
//! by (topic, partition), as Java sorts it.

use super::model::{sorted_members, Model};
use super::racks::Racks;
use super::{GroupAssignment, GroupInput, TopicPartition};
use crate::errors::Result;

/// NAME is Kafka's name of this assignor.
pub const NAME: &str = "range";

struct TopicState {
    topic: u32,
    /// Subscribers in `MemberInfo` order.
    consumers: Vec<usize>,
    /// Partitions assigned so far to each consumer, by position in `consumers`.
    assigned: Vec<u32>,
    unassigned: Vec<bool>,
    num_unassigned: usize,
    first_unassigned: usize,
    per_consumer: u32,
    with_extra: i64,
    needs_rack_aware: bool,
    has_consumer_racks: bool,
}

impl TopicState {
    /// max_assignable is Java's `maxAssignable` for the consumer at position `i`.
    fn max_assignable(&self, i: usize) -> u32 {
        let max = self.per_consumer as i64 + (self.with_extra > 0) as i64 - self.assigned[i] as i64;
        max.max(0) as u32
    }

    /// on_assigned is Java's `onAssigned` for the consumer at position `i`.
    fn on_assigned(&mut self, i: usize, partitions: &[u32]) {
        self.assigned[i] += partitions.len() as u32;
        if self.assigned[i] > self.per_consumer {
            self.with_extra -= 1;
        }
        for &p in partitions {
            if std::mem::replace(&mut self.unassigned[p as usize], false) {
                self.num_unassigned -= 1;
            }
        }
        while self.first_unassigned < self.unassigned.len()
            && !self.unassigned[self.first_unassigned]
        {
            self.first_unassigned += 1;
        }
    }
}

fn racks_match(model: &Model<'_>, racks: Option<&Racks>, m: usize, topic: u32, p: u32) -> bool {
    match racks.and_then(|r| r.member_rack[m].map(|rack| (r, rack))) {
        None => true,
        Some((r, rack)) => r.holds(model.index(topic, p), rack),
    }
}

/// assign computes Java's range assignment for `input`.
pub fn assign(input: &GroupInput) -> Result<GroupAssignment> {
    let model = Model::new(input)?;
    let n = input.members.len();
    let order = sorted_members(&model);
    let mut subscribers: Vec<Vec<usize>> = vec![Vec::new(); model.num_topics()];
    for &m in &order {
        for &t in model.member_topics[m].iter() {
            subscribers[t as usize].push(m);
        }
    }
    let racks = Racks::new(&model);
    let mut states: Vec<TopicState> = model
        .java_topic_order()
        .into_iter()
        .map(|t| {
            let consumers = std::mem::take(&mut subscribers[t as usize]);
            let count = model.counts[t as usize];
            let c = consumers.len() as u32;
            let per_consumer = count.checked_div(c).unwrap_or(0);
            let with_extra = count.checked_rem(c).unwrap_or(0) as i64;
            let (needs_rack_aware, has_consumer_racks) = match &racks {
                Some(r) => needs_rack_aware(&model, r, t, &consumers),
                None => (false, false),
            };
            TopicState {
                topic: t,
                assigned: vec![0; consumers.len()],
                consumers,
                unassigned: vec![true; count as usize],
                num_unassigned: count as usize,
                first_unassigned: 0,
                per_consumer,
                with_extra,
                needs_rack_aware,
                has_consumer_racks,
            }
        })
        .collect();

    let mut lists: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    let use_rack_aware = states.iter().any(|s| s.needs_rack_aware);
    if use_rack_aware {
        assign_with_rack_matching(&model, racks.as_ref(), &mut states, &mut lists);
    }
    for s in &mut states {
        assign_ranges(&model, None, s, &mut lists);
    }
    if use_rack_aware {
        for l in &mut lists {
            l.sort_unstable();
        }
    }
    let out = lists
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|(t, p)| TopicPartition {
                    topic: model.topics[t as usize].clone(),
                    partition: p as i32,
                })
                .collect()
        })
        .collect();
    Ok(GroupAssignment::from_lists(out))
}

/// needs_rack_aware is `TopicAssignmentState.needsRackAwareAssignment` (Java's
/// `useRackAwareAssignment` over this topic's consumers and partitions), and whether any of
/// the topic's consumers has a rack.
fn needs_rack_aware(model: &Model<'_>, racks: &Racks, t: u32, consumers: &[usize]) -> (bool, bool) {
    let mut consumer_racks = vec![false; racks.num_racks];
    let mut any = false;
    for &m in consumers {
        if let Some(r) = racks.member_rack[m] {
            consumer_racks[r as usize] = true;
            any = true;
        }
    }
    if !any {
        return (false, false);
    }
    let mut partition_racks = vec![false; racks.num_racks];
    let first = model.index(t, 0) as usize;
    let count = model.counts[t as usize] as usize;
    for p in first..first + count {
        for &r in &racks.partition_racks[p] {
            partition_racks[r as usize] = true;
        }
    }
    let intersect = consumer_racks
        .iter()
        .zip(&partition_racks)
        .any(|(a, b)| *a && *b);
    if !intersect {
        return (false, true);
    }
    let all = partition_racks.iter().filter(|b| **b).count();
    let uneven = (first..first + count).any(|p| racks.partition_racks[p].len() != all);
    (uneven, true)
}

/// assign_ranges is Java's `assignRanges`: each consumer in order takes up to its quota of the
/// still-unassigned partitions that `may_assign` allows, in partition order.
fn assign_ranges(
    model: &Model<'_>,
    racks: Option<&Racks>,
    s: &mut TopicState,
    lists: &mut [Vec<(u32, u32)>],
) {
    let mut batch: Vec<u32> = Vec::new();
    for i in 0..s.consumers.len() {
        if s.num_unassigned == 0 {
            break;
        }
        let m = s.consumers[i];
        let limit = s.max_assignable(i) as usize;
        batch.clear();
        if limit > 0 {
            for p in s.first_unassigned as u32..s.unassigned.len() as u32 {
                if s.unassigned[p as usize] && racks_match(model, racks, m, s.topic, p) {
                    batch.push(p);
                    if batch.len() == limit {
                        break;
                    }
                }
            }
        }
        if batch.is_empty() {
            continue;
        }
        lists[m].extend(batch.iter().map(|&p| (s.topic, p)));
        s.on_assigned(i, &batch);
    }
}

/// assign_with_rack_matching is Java's `assignWithRackMatching`: topics with the same consumers
/// and the same partition count are co-partitioned and get partition `p` of every topic on one
/// rack-matching consumer; a lone topic that needs it runs the range loop over rack-matching
/// partitions only. The order of groups cannot change the result (each touches only its own
/// topics and the lists are sorted afterwards), so groups are taken in first-appearance order.
fn assign_with_rack_matching(
    model: &Model<'_>,
    racks: Option<&Racks>,
    states: &mut [TopicState],
    lists: &mut [Vec<(u32, u32)>],
) {
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for i in 0..states.len() {
        // Java groups by the `partitionRacks` map size, which is 0 when no consumer has a rack.
        let size = if states[i].has_consumer_racks {
            model.counts[states[i].topic as usize] as usize
        } else {
            0
        };
        match groups
            .iter_mut()
            .find(|(sz, g)| *sz == size && states[g[0]].consumers == states[i].consumers)
        {
            Some((_, g)) => g.push(i),
            None => groups.push((size, vec![i])),
        }
    }
    for (size, group) in groups {
        if group.len() > 1 {
            assign_co_partitioned(model, racks, size, &group, states, lists);
        } else if states[group[0]].needs_rack_aware {
            assign_ranges(model, racks, &mut states[group[0]], lists);
        }
    }
}

fn assign_co_partitioned(
    model: &Model<'_>,
    racks: Option<&Racks>,
    num_partitions: usize,
    group: &[usize],
    states: &mut [TopicState],
    lists: &mut [Vec<(u32, u32)>],
) {
    // Positions in `consumers`, which is the same list for every topic of the group.
    let mut remaining: Vec<usize> = (0..states[group[0]].consumers.len()).collect();
    for p in 0..num_partitions as u32 {
        let found = remaining.iter().position(|&i| {
            group.iter().all(|&g| {
                let s = &states[g];
                racks_match(model, racks, s.consumers[i], s.topic, p) && s.max_assignable(i) > 0
            })
        });
        let Some(pos) = found else { continue };
        let i = remaining[pos];
        for &g in group {
            let s = &mut states[g];
            lists[s.consumers[i]].push((s.topic, p));
            s.on_assigned(i, &[p]);
        }
        if group.iter().all(|&g| states[g].max_assignable(i) == 0) {
            remaining.remove(pos);
            if remaining.is_empty() {
                break;
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::assignors::{Member, Subscription};
    use std::collections::HashMap;
    use std::sync::Arc;

    pub(crate) fn group(topics: &[(&str, i32)], members: &[(&str, &[&str])]) -> GroupInput {
        GroupInput {
            partitions_per_topic: topics.iter().map(|(t, n)| (Arc::from(*t), *n)).collect(),
            members: members
                .iter()
                .map(|(id, ts)| Member {
                    id: Arc::from(*id),
                    subscription: Arc::new(Subscription::new(ts.iter().copied())),
                })
                .collect(),
            partition_racks: None,
        }
    }

    /// show lists each member's partitions as `member=[t-0, t-1]`, sorted by member.
    pub(crate) fn show(input: &GroupInput, out: &GroupAssignment) -> Vec<String> {
        let mut v: Vec<String> = input
            .members
            .iter()
            .zip(&out.assignments)
            .map(|(m, a)| {
                let ps: Vec<String> = a
                    .partitions
                    .iter()
                    .map(|tp| format!("{}-{}", tp.topic, tp.partition))
                    .collect();
                format!("{}=[{}]", m.id, ps.join(", "))
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn golden_s1_and_s2() {
        // java-golden-vectors.txt S1 and S2 (range).
        let g = group(
            &[("a", 3), ("b", 2), ("c", 1)],
            &[("c1", &["a", "b", "c"]), ("c0", &["a", "b", "c"])],
        );
        assert_eq!(
            show(&g, &assign(&g).unwrap()),
            ["c0=[a-0, a-1, b-0, c-0]", "c1=[a-2, b-1]"]
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
            show(&g, &assign(&g).unwrap()),
            ["C0=[t0-0]", "C1=[t1-0]", "C2=[t1-1, t2-0, t2-1, t2-2]"]
        );
    }

    #[test]
    fn golden_s6_rack_aware() {
        // S6: c0/c1/c2 on racks r0/r1/r2; partition p's only replica is on rack (p+1)%3.
        let mut g = group(
            &[("t", 6)],
            &[("c0", &["t"]), ("c1", &["t"]), ("c2", &["t"])],
        );
        for (i, m) in g.members.iter_mut().enumerate() {
            Arc::make_mut(&mut m.subscription).rack_id = Some(Arc::from(format!("r{i}")));
        }
        let racks: HashMap<TopicPartition, Vec<Arc<str>>> = (0..6)
            .map(|p| {
                (
                    TopicPartition::new("t", p),
                    vec![Arc::from(format!("r{}", (p + 1) % 3))],
                )
            })
            .collect();
        g.partition_racks = Some(racks);
        assert_eq!(
            show(&g, &assign(&g).unwrap()),
            ["c0=[t-2, t-5]", "c1=[t-0, t-3]", "c2=[t-1, t-4]"]
        );
    }

    #[test]
    fn javadoc_example_and_static_members() {
        // RangeAssignor Javadoc: C0=[t0p0, t0p1, t1p0, t1p1], C1=[t0p2, t1p2].
        let g = group(
            &[("t0", 3), ("t1", 3)],
            &[("C0", &["t0", "t1"]), ("C1", &["t0", "t1"])],
        );
        assert_eq!(
            show(&g, &assign(&g).unwrap()),
            ["C0=[t0-0, t0-1, t1-0, t1-1]", "C1=[t0-2, t1-2]"]
        );
        // With instance ids, instance-id order wins over member-id order.
        let mut g = group(
            &[("t0", 3), ("t1", 3)],
            &[("C3", &["t0", "t1"]), ("C2", &["t0", "t1"])],
        );
        Arc::make_mut(&mut g.members[0].subscription).group_instance_id = Some("I0".into());
        Arc::make_mut(&mut g.members[1].subscription).group_instance_id = Some("I1".into());
        assert_eq!(
            show(&g, &assign(&g).unwrap()),
            ["C2=[t0-2, t1-2]", "C3=[t0-0, t0-1, t1-0, t1-1]"]
        );
    }
}
