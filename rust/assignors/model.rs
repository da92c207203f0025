//! Model: a group input turned into dense ids, validated once and shared by every assignor.
//!
//! Topic ids follow Java's `String.compareTo` order, so comparing ids compares names the way
//! Java's `TreeSet` and `Collections.sort` do. Partitions get a global index
//! `offsets[topic] + partition`.

use std::collections::HashMap;
use std::sync::Arc;

use super::fxhash::{fx_map, FxMap};
use super::java::{hash_map_order, java_cmp, java_string_hash, JavaHashTable};
use super::{GroupInput, TopicPartition};
use crate::errors::{Error, Result};

/// MAX_TOTAL_PARTITIONS bounds the partitions one assignment may cover (16,777,216), so that a
/// bad partition count is an error instead of an allocation that cannot succeed.
pub const MAX_TOTAL_PARTITIONS: usize = 1 << 24;

pub(crate) struct Model<'a> {
    pub input: &'a GroupInput,
    /// Topics that some member subscribes to and that have at least one partition, in Java order.
    pub topics: Vec<Arc<str>>,
    pub counts: Vec<u32>,
    pub offsets: Vec<u32>,
    pub topic_ids: FxMap<&'a str, u32>,
    /// Each member's subscribed topics that have metadata: sorted ids, no duplicates.
    pub member_topics: Vec<Arc<Vec<u32>>>,
    /// Member indices in the iteration order of Java's subscriptions `HashMap`.
    pub java_members: Vec<usize>,
    /// Topic id of every partition (global index), built on first use.
    ptopic: std::sync::OnceLock<Vec<u32>>,
}

impl<'a> Model<'a> {
    pub fn new(input: &'a GroupInput) -> Result<Self> {
        let mut counts_by_name: HashMap<&str, u32> =
            HashMap::with_capacity(input.partitions_per_topic.len());
        for (t, n) in &input.partitions_per_topic {
            if *n < 0 {
                return Err(Error::InvalidArgument(format!(
                    "topic {t:?} has a negative partition count {n}"
                )));
            }
            if counts_by_name.insert(t, *n as u32).is_some() {
                return Err(Error::InvalidArgument(format!(
                    "topic {t:?} is listed twice"
                )));
            }
        }
        let mut seen_ids: HashMap<&str, ()> = HashMap::with_capacity(input.members.len());
        for m in &input.members {
            if seen_ids.insert(&m.id, ()).is_some() {
                return Err(Error::InvalidArgument(format!(
                    "member id {:?} is listed twice",
                    m.id
                )));
            }
        }

        // Topics with metadata that someone subscribes to; members with the same topic list as
        // the one before share the lookup (groups usually have few distinct subscriptions).
        let mut names: HashMap<&'a str, Arc<str>> = HashMap::new();
        let mut prev: Option<&'a [Arc<str>]> = None;
        for m in &input.members {
            let ts = &m.subscription.topics[..];
            if prev.is_some_and(|p| same_topics(p, ts)) {
                continue;
            }
            prev = Some(ts);
            for t in ts {
                if counts_by_name.get(&**t).is_some_and(|&n| n > 0) && !names.contains_key(&**t) {
                    names.insert(t, t.clone());
                }
            }
        }
        let mut named: Vec<(&'a str, Arc<str>)> = names.into_iter().collect();
        named.sort_by(|a, b| java_cmp(a.0, b.0));
        let mut topic_ids: FxMap<&'a str, u32> = fx_map(named.len());
        for (i, (n, _)) in named.iter().enumerate() {
            topic_ids.insert(*n, i as u32);
        }
        let topics: Vec<Arc<str>> = named.into_iter().map(|(_, t)| t).collect();
        let counts: Vec<u32> = topics.iter().map(|t| counts_by_name[&**t]).collect();
        let mut offsets = Vec::with_capacity(topics.len() + 1);
        let mut total: usize = 0;
        offsets.push(0u32);
        for &c in &counts {
            total += c as usize;
            if total > MAX_TOTAL_PARTITIONS {
                return Err(Error::InvalidArgument(format!(
                    "the subscribed topics have more than {MAX_TOTAL_PARTITIONS} partitions"
                )));
            }
            offsets.push(total as u32);
        }
        let mut model = Model {
            input,
            topics,
            counts,
            offsets,
            topic_ids,
            member_topics: Vec::new(),
            java_members: Vec::new(),
            ptopic: std::sync::OnceLock::new(),
        };

        let mut member_topics: Vec<Arc<Vec<u32>>> = Vec::with_capacity(input.members.len());
        type Prev<'b> = Option<(&'b [Arc<str>], Arc<Vec<u32>>)>;
        let mut prev: Prev<'a> = None;
        for m in &input.members {
            let ts = &m.subscription.topics[..];
            if let Some((p, ids)) = &prev {
                if same_topics(p, ts) {
                    member_topics.push(ids.clone());
                    continue;
                }
            }
            let mut ids: Vec<u32> = ts
                .iter()
                .filter_map(|t| model.topic_ids.get(&**t).copied())
                .collect();
            ids.sort_unstable();
            ids.dedup();
            let ids = Arc::new(ids);
            member_topics.push(ids.clone());
            prev = Some((ts, ids));
        }
        model.member_topics = member_topics;

        let hashes: Vec<i32> = input
            .members
            .iter()
            .map(|m| java_string_hash(&m.id))
            .collect();
        model.java_members = hash_map_order(&hashes);
        Ok(model)
    }

    /// total is the number of partitions of all subscribed topics.
    pub fn total(&self) -> usize {
        *self.offsets.last().unwrap_or(&0) as usize
    }

    pub fn num_topics(&self) -> usize {
        self.topics.len()
    }

    /// index is the global index of `(topic id, partition)`.
    #[inline]
    pub fn index(&self, topic: u32, partition: u32) -> u32 {
        self.offsets[topic as usize] + partition
    }

    /// ptopic is the topic id of every partition, by global index.
    pub fn ptopic(&self) -> &[u32] {
        self.ptopic.get_or_init(|| {
            let mut v = Vec::with_capacity(self.total());
            for (t, &c) in self.counts.iter().enumerate() {
                v.extend(std::iter::repeat_n(t as u32, c as usize));
            }
            v
        })
    }

    /// tp turns a global index back into a TopicPartition.
    pub fn tp(&self, index: u32) -> TopicPartition {
        let t = self.ptopic()[index as usize];
        TopicPartition {
            topic: self.topics[t as usize].clone(),
            partition: (index - self.offsets[t as usize]) as i32,
        }
    }

    /// lookup finds the global index of a TopicPartition, `None` when its topic has no metadata,
    /// nobody subscribes to it, or the partition is out of range.
    pub fn lookup(&self, topic: &str, partition: i32) -> Option<u32> {
        let t = *self.topic_ids.get(topic)?;
        (partition >= 0 && (partition as u32) < self.counts[t as usize])
            .then(|| self.index(t, partition as u32))
    }

    /// java_topic_order is the iteration order of the `partitionsPerTopic` `HashMap` Java's
    /// `AbstractPartitionAssignor.assign(Cluster, ...)` builds: subscribed topics collected into
    /// a `HashSet` (members in subscription-map order, topics in list order), then those with
    /// metadata put into a `HashMap` in the set's order.
    pub fn java_topic_order(&self) -> Vec<u32> {
        let mut set_keys: Vec<&str> = Vec::new();
        let mut seen: HashMap<&str, ()> = HashMap::new();
        let mut set = JavaHashTable::new();
        let mut hashes: Vec<i32> = Vec::new();
        for &m in &self.java_members {
            for t in &self.input.members[m].subscription.topics {
                if seen.insert(t, ()).is_none() {
                    let h = java_string_hash(t);
                    hashes.push(h);
                    set_keys.push(t);
                    set.insert((set_keys.len() - 1) as u32, h, |k| hashes[k as usize]);
                }
            }
        }
        let mut map = JavaHashTable::new();
        let mut map_keys: Vec<u32> = Vec::new();
        let mut map_hashes: Vec<i32> = Vec::new();
        for k in set.iter() {
            if let Some(&id) = self.topic_ids.get(set_keys[k as usize]) {
                map_keys.push(id);
                map_hashes.push(hashes[k as usize]);
                map.insert((map_keys.len() - 1) as u32, hashes[k as usize], |i| {
                    map_hashes[i as usize]
                });
            }
        }
        map.iter().map(|i| map_keys[i as usize]).collect()
    }
}

fn same_topics(a: &[Arc<str>], b: &[Arc<str>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y) || x == y)
}

/// member_info_cmp is Java's `MemberInfo.compareTo`: members with a `group.instance.id` first,
/// by instance id, then the others by member id (both with `String.compareTo`).
pub(crate) fn member_info_cmp(input: &GroupInput, a: usize, b: usize) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    let (ma, mb) = (&input.members[a], &input.members[b]);
    match (
        &ma.subscription.group_instance_id,
        &mb.subscription.group_instance_id,
    ) {
        (Some(x), Some(y)) => java_cmp(x, y),
        (Some(_), None) => Less,
        (None, Some(_)) => Greater,
        (None, None) => java_cmp(&ma.id, &mb.id),
    }
}

/// sorted_members is Java's `Utils.sorted` / `Collections.sort` of `MemberInfo`s listed in
/// subscription-map order: a stable sort, so equal instance ids keep that order.
pub(crate) fn sorted_members(model: &Model<'_>) -> Vec<usize> {
    let mut v = model.java_members.clone();
    v.sort_by(|&a, &b| member_info_cmp(model.input, a, b));
    v
}
