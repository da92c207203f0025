use std::collections::HashMap;

use super::TopicInfo;
use crate::partitioners::hash::to_positive;
use crate::rng::Rng;

/// RoundRobinPartitioner reproduces the null-key path of Kafka's `DefaultPartitioner` up to
/// 2.3: a per-topic counter, started at a random int the first time a topic is seen, advanced
/// by one per record; it indexes the available partitions (all partitions when none is
/// available). With `start = Some(0)` it is Kafka 3.x's `RoundRobinPartitioner`, whose counter
/// starts at 0. Not thread-safe: callers serialise access.
#[derive(Debug, Clone)]
pub struct RoundRobinPartitioner {
    counters: HashMap<String, i32>,
    start: Option<i32>,
    rng: Rng,
}

impl RoundRobinPartitioner {
    /// new makes a partitioner; `start` fixes every topic's first counter value, otherwise it
    /// is drawn from a generator seeded with `seed`.
    pub fn new(seed: Option<u64>, start: Option<i32>) -> Self {
        RoundRobinPartitioner {
            counters: HashMap::new(),
            start,
            rng: Rng::new(seed),
        }
    }

    /// partition returns the partition of the next null-key record for `topic`.
    pub fn partition(&mut self, topic: &str, info: &TopicInfo) -> i32 {
        let value = match self.counters.get_mut(topic) {
            Some(c) => {
                let v = *c;
                *c = c.wrapping_add(1);
                v
            }
            None => {
                let v = self.start.unwrap_or_else(|| self.rng.next_int());
                self.counters.insert(topic.to_owned(), v.wrapping_add(1));
                v
            }
        };
        let v = to_positive(value);
        if info.available.is_empty() {
            v % info.num_partitions
        } else {
            info.available[(v as usize) % info.available.len()]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_over_available_partitions_from_start() {
        let mut p = RoundRobinPartitioner::new(None, Some(0));
        let info = TopicInfo::new(6, Some(vec![1, 3, 5])).unwrap();
        let got: Vec<i32> = (0..6).map(|_| p.partition("t", &info)).collect();
        assert_eq!(got, vec![1, 3, 5, 1, 3, 5]);
        // Each topic has its own counter.
        assert_eq!(p.partition("u", &info), 1);
    }

    #[test]
    fn counter_wraps_through_to_positive_like_java() {
        // Java: AtomicInteger.getAndIncrement wraps at Integer.MAX_VALUE; toPositive(MIN) = 0.
        let mut p = RoundRobinPartitioner::new(None, Some(i32::MAX));
        let info = TopicInfo::new(10, None).unwrap();
        assert_eq!(p.partition("t", &info), (i32::MAX % 10)); // 7
        assert_eq!(p.partition("t", &info), 0); // toPositive(i32::MIN) = 0
        assert_eq!(p.partition("t", &info), 1); // toPositive(i32::MIN + 1) = 1
    }

    #[test]
    fn no_available_uses_all_partitions() {
        let mut p = RoundRobinPartitioner::new(None, Some(4));
        let info = TopicInfo::new(3, Some(vec![])).unwrap();
        assert_eq!(p.partition("t", &info), 1);
        assert_eq!(p.partition("t", &info), 2);
    }
}
