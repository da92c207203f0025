use std::collections::HashMap;

use super::TopicInfo;
use crate::rng::Rng;

/// StickyPartitionCache reproduces Kafka 2.4 to 3.2's `StickyPartitionCache` (KIP-480), the
/// null-key path of that era's `DefaultPartitioner` and of `UniformStickyPartitioner`.
///
/// A topic keeps one partition until the producer closes a batch on it and calls
/// [`next_partition`](Self::next_partition) with that partition; the new choice is random over
/// the available partitions and, when more than one is available, always differs from the old.
/// Not thread-safe: callers serialise access.
#[derive(Debug, Clone)]
pub struct StickyPartitionCache {
    index: HashMap<String, i32>,
    rng: Rng,
}

impl StickyPartitionCache {
    /// new makes an empty cache whose random choices come from `seed`.
    pub fn new(seed: Option<u64>) -> Self {
        StickyPartitionCache {
            index: HashMap::new(),
            rng: Rng::new(seed),
        }
    }

    /// partition is the topic's current sticky partition, chosen now if there is none.
    pub fn partition(&mut self, topic: &str, info: &TopicInfo) -> i32 {
        match self.index.get(topic) {
            Some(&p) => p,
            None => self.next_partition(topic, info, -1),
        }
    }

    /// next_partition is called when a new batch is needed on `prev_partition`: the sticky
    /// partition changes only if it is unset or equals `prev_partition` (so a stale caller
    /// cannot move it twice). Returns the topic's sticky partition afterwards.
    pub fn next_partition(&mut self, topic: &str, info: &TopicInfo, prev_partition: i32) -> i32 {
        let old = self.index.get(topic).copied();
        if old.is_some() && old != Some(prev_partition) {
            return old.unwrap_or(prev_partition);
        }
        let avail = &info.available;
        let new = if avail.is_empty() {
            self.rng.next_positive() % info.num_partitions
        } else if avail.len() == 1 {
            avail[0]
        } else {
            loop {
                let p = avail[self.rng.next_positive() as usize % avail.len()];
                if Some(p) != old {
                    break p;
                }
            }
        };
        self.index.insert(topic.to_owned(), new);
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Behaviour from Kafka's StickyPartitionCacheTest: stickiness, change on new batch only for
    // the matching previous partition, and a different partition when several are available.
    #[test]
    fn sticks_until_new_batch_and_then_changes() {
        let info = TopicInfo::new(3, None).unwrap();
        let mut c = StickyPartitionCache::new(Some(1));
        let first = c.partition("t", &info);
        for _ in 0..10 {
            assert_eq!(c.partition("t", &info), first);
        }
        let second = c.next_partition("t", &info, first);
        assert_ne!(second, first);
        assert_eq!(c.partition("t", &info), second);
        // A stale previous partition does not move it again.
        assert_eq!(c.next_partition("t", &info, first), second);
    }

    #[test]
    fn single_and_no_available_partition() {
        let mut c = StickyPartitionCache::new(Some(2));
        let one = TopicInfo::new(4, Some(vec![2])).unwrap();
        assert_eq!(c.partition("a", &one), 2);
        assert_eq!(c.next_partition("a", &one, 2), 2);
        let none = TopicInfo::new(4, Some(vec![])).unwrap();
        let p = c.partition("b", &none);
        assert!((0..4).contains(&p));
    }
}
