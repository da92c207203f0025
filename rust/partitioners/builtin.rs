use std::collections::HashMap;

use super::TopicInfo;
use crate::errors::{Error, Result};
use crate::partitioners::hash::KeyHash;
use crate::rng::Rng;

/// BuiltInPartitionerConfig holds the producer settings the built-in partitioner reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltInPartitionerConfig {
    /// `batch.size` (default 16384). 0 counts as 1, as Kafka 3.4+ does (KAFKA-14303).
    pub batch_size: i32,
    /// `partitioner.adaptive.partitioning.enable` (default true).
    pub adaptive_partitioning: bool,
    /// `partitioner.availability.timeout.ms` (default 0: never exclude a partition).
    pub availability_timeout_ms: i64,
    /// `partitioner.ignore.keys` (default false).
    pub ignore_keys: bool,
}

impl Default for BuiltInPartitionerConfig {
    fn default() -> Self {
        BuiltInPartitionerConfig {
            batch_size: 16384,
            adaptive_partitioning: true,
            availability_timeout_ms: 0,
            ignore_keys: false,
        }
    }
}

impl BuiltInPartitionerConfig {
    /// validate rejects what Kafka's ConfigDef rejects (negative sizes and timeouts).
    pub fn validate(&self) -> Result<()> {
        if self.batch_size < 0 {
            return Err(Error::InvalidArgument(format!(
                "batch.size must be >= 0, got {}",
                self.batch_size
            )));
        }
        if self.availability_timeout_ms < 0 {
            return Err(Error::InvalidArgument(format!(
                "partitioner.availability.timeout.ms must be >= 0, got {}",
                self.availability_timeout_ms
            )));
        }
        Ok(())
    }
}

/// LoadStats is the cumulative frequency table of inverted queue sizes (KIP-794).
#[derive(Debug, Clone, PartialEq, Eq)]
struct LoadStats {
    cft: Vec<i32>,
    partition_ids: Vec<i32>,
}

/// BuiltInPartitioner reproduces Kafka 3.3+'s built-in partitioner (KIP-794), one instance per
/// topic, as the producer's record accumulator drives it.
///
/// - Keyed records: `toPositive(murmur2(key)) % numPartitions`, unless `ignore_keys`.
/// - Null keys: one sticky partition; after every append the producer reports the bytes it
///   added ([`update_partition_info`](Self::update_partition_info)) and the partition switches
///   once `batch.size` bytes were produced and the last batch is full, or at `2 * batch.size`
///   regardless (the 3.4+ rule, KAFKA-14156).
/// - The next partition is uniform over available partitions, or, with adaptive partitioning
///   and queue sizes reported by [`update_load_stats`](Self::update_load_stats), weighted
///   towards shorter queues: weight `max + 1 - queue`. The same partition may be chosen again.
///
/// Not thread-safe: callers serialise access.
#[derive(Debug, Clone)]
pub struct BuiltInPartitioner {
    cfg: BuiltInPartitionerConfig,
    info: TopicInfo,
    rng: Rng,
    sticky: Option<i32>,
    produced_bytes: i64,
    stats: Option<LoadStats>,
}

impl BuiltInPartitioner {
    /// new makes a partitioner for one topic; random choices come from `seed`.
    pub fn new(info: TopicInfo, cfg: BuiltInPartitionerConfig, seed: Option<u64>) -> Result<Self> {
        cfg.validate()?;
        Ok(BuiltInPartitioner {
            cfg,
            info,
            rng: Rng::new(seed),
            sticky: None,
            produced_bytes: 0,
            stats: None,
        })
    }

    pub fn config(&self) -> &BuiltInPartitionerConfig {
        &self.cfg
    }

    pub fn topic_info(&self) -> &TopicInfo {
        &self.info
    }

    /// set_topic_info takes new metadata; a sticky partition that no longer exists is dropped.
    pub fn set_topic_info(&mut self, info: TopicInfo) {
        if self.sticky.is_some_and(|p| p >= info.num_partitions) {
            self.sticky = None;
            self.produced_bytes = 0;
        }
        if self
            .stats
            .as_ref()
            .is_some_and(|s| s.partition_ids.iter().any(|&p| p >= info.num_partitions))
        {
            self.stats = None;
        }
        self.info = info;
    }

    /// sticky_batch_size is `max(1, batch.size)`.
    pub fn sticky_batch_size(&self) -> i64 {
        self.cfg.batch_size.max(1) as i64
    }

    /// produced_bytes is what the current sticky partition has received so far.
    pub fn produced_bytes(&self) -> i64 {
        self.produced_bytes
    }

    /// partition is where a record goes: murmur2 for a key (unless keys are ignored), the
    /// current sticky partition for a null key.
    pub fn partition(&mut self, key: Option<&[u8]>) -> i32 {
        match key {
            Some(k) if !self.cfg.ignore_keys => {
                KeyHash::Murmur2.partition(k, self.info.num_partitions as u32)
            }
            _ => self.peek_partition(),
        }
    }

    /// peek_partition is the current sticky partition, chosen now if there is none.
    pub fn peek_partition(&mut self) -> i32 {
        if let Some(p) = self.sticky {
            return p;
        }
        let p = self.next_partition();
        self.sticky = Some(p);
        p
    }

    /// update_partition_info records `appended_bytes` added to the sticky partition;
    /// `enable_switch` is the accumulator's "the partition's last batch is full (or there is
    /// none)". Returns true when the sticky partition was switched.
    pub fn update_partition_info(&mut self, appended_bytes: i64, enable_switch: bool) -> bool {
        if self.sticky.is_none() {
            return false;
        }
        self.produced_bytes = self.produced_bytes.saturating_add(appended_bytes);
        let size = self.sticky_batch_size();
        if (self.produced_bytes >= size && enable_switch) || self.produced_bytes >= 2 * size {
            self.sticky = Some(self.next_partition());
            self.produced_bytes = 0;
            return true;
        }
        false
    }

    /// update_load_stats rebuilds the adaptive statistics the way Kafka's accumulator does on
    /// each `ready()` pass. `queue_sizes[p]` is the number of batches queued for partition `p`,
    /// `None` when the accumulator has no queue for it yet (then the choice stays uniform);
    /// `leaders[p]` is its leader node (`None`: no leader, skipped); `node_unready_ms[node]`
    /// is how long the node has had ready data that was not drained (partitions on nodes over
    /// `partitioner.availability.timeout.ms` are excluded).
    pub fn update_load_stats(
        &mut self,
        queue_sizes: &[Option<i32>],
        leaders: Option<&[Option<i32>]>,
        node_unready_ms: &HashMap<i32, i64>,
    ) -> Result<()> {
        let n = self.info.num_partitions as usize;
        if queue_sizes.len() != n {
            return Err(Error::InvalidArgument(format!(
                "queue_sizes has {} entries for {n} partitions",
                queue_sizes.len()
            )));
        }
        if let Some(l) = leaders {
            if l.len() != n {
                return Err(Error::InvalidArgument(format!(
                    "leaders has {} entries for {n} partitions",
                    l.len()
                )));
            }
        }
        if let Some(q) = queue_sizes.iter().flatten().find(|&&q| q < 0) {
            return Err(Error::InvalidArgument(format!(
                "queue sizes must be >= 0, got {q}"
            )));
        }
        // Adaptive stats only once the accumulator has a queue for every partition.
        if !self.cfg.adaptive_partitioning || queue_sizes.iter().any(Option::is_none) {
            self.stats = None;
            return Ok(());
        }
        let mut sizes = Vec::with_capacity(n);
        let mut ids = Vec::with_capacity(n);
        for (p, q) in queue_sizes.iter().enumerate() {
            let leader = match leaders {
                Some(l) => match l[p] {
                    Some(node) => node,
                    None => continue,
                },
                None => -1,
            };
            if self.cfg.availability_timeout_ms > 0
                && node_unready_ms
                    .get(&leader)
                    .is_some_and(|&ms| ms > self.cfg.availability_timeout_ms)
            {
                continue;
            }
            sizes.push(q.unwrap_or(0));
            ids.push(p as i32);
        }
        self.stats = load_stats(sizes, ids, n);
        Ok(())
    }

    /// load_weights exposes the current cumulative frequency table as (partition, cumulative
    /// weight) pairs; `None` while choices are uniform.
    pub fn load_weights(&self) -> Option<Vec<(i32, i32)>> {
        self.stats.as_ref().map(|s| {
            s.partition_ids
                .iter()
                .copied()
                .zip(s.cft.iter().copied())
                .collect()
        })
    }

    fn next_partition(&mut self) -> i32 {
        let random = self.rng.next_positive();
        match &self.stats {
            None => {
                if self.info.available.is_empty() {
                    random % self.info.num_partitions
                } else {
                    self.info.available[random as usize % self.info.available.len()]
                }
            }
            Some(s) => {
                let total = *s.cft.last().expect("load stats are never empty");
                let w = random % total;
                // First entry strictly greater than w (Java: abs(binarySearch(cft, w) + 1)).
                let idx = s.cft.partition_point(|&c| c <= w);
                s.partition_ids[idx]
            }
        }
    }
}

/// load_stats is `BuiltInPartitioner.updatePartitionLoadStats`: `None` (uniform) when nothing
/// is left, when the topic has fewer than 2 partitions, or when every queue is equal and no
/// partition was left out.
fn load_stats(sizes: Vec<i32>, ids: Vec<i32>, num_partitions: usize) -> Option<LoadStats> {
    if sizes.is_empty() || num_partitions < 2 {
        return None;
    }
    let max = *sizes.iter().max().expect("non-empty");
    let all_equal = sizes.iter().all(|&s| s == sizes[0]);
    if all_equal && sizes.len() == num_partitions {
        return None;
    }
    let mut cft = Vec::with_capacity(sizes.len());
    let mut acc = 0i32;
    for s in sizes {
        acc = acc.saturating_add(max - s + 1);
        cft.push(acc);
    }
    Some(LoadStats {
        cft,
        partition_ids: ids,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(n: i64, batch: i32, seed: u64) -> BuiltInPartitioner {
        let cfg = BuiltInPartitionerConfig {
            batch_size: batch,
            ..Default::default()
        };
        BuiltInPartitioner::new(TopicInfo::new(n, None).unwrap(), cfg, Some(seed)).unwrap()
    }

    // BuiltInPartitioner's source example: queues 0 3 1 -> inverted 4 1 3 -> CFT 4 5 8.
    #[test]
    fn cft_matches_kafka_example() {
        let s = load_stats(vec![0, 3, 1], vec![0, 1, 2], 3).unwrap();
        assert_eq!(s.cft, vec![4, 5, 8]);
        assert!(load_stats(vec![2, 2, 2], vec![0, 1, 2], 3).is_none());
        // Equal sizes but one partition left out: still weighted.
        assert_eq!(
            load_stats(vec![2, 2], vec![0, 2], 3).unwrap().cft,
            vec![1, 2]
        );
        assert!(load_stats(vec![5], vec![0], 1).is_none());
    }

    #[test]
    fn switches_after_batch_size_when_full_and_at_twice_regardless() {
        let mut p = part(100, 1000, 3);
        let first = p.partition(None);
        assert!(!p.update_partition_info(600, true));
        assert!(p.update_partition_info(600, true)); // 1200 >= 1000 and batch full
        let mut p = part(100, 1000, 3);
        p.partition(None);
        assert!(!p.update_partition_info(1500, false)); // not full: waits for 2x
        assert!(p.update_partition_info(500, false)); // 2000 >= 2000
        assert_eq!(p.produced_bytes(), 0);
        let _ = first;
    }

    #[test]
    fn batch_size_zero_counts_as_one() {
        let mut p = part(10, 0, 1);
        p.partition(None);
        assert!(p.update_partition_info(1, true));
    }

    #[test]
    fn keys_are_hashed_unless_ignored() {
        let mut p = part(1000, 16384, 1);
        assert_eq!(p.partition(Some(b"abc")), 107);
        let cfg = BuiltInPartitionerConfig {
            ignore_keys: true,
            ..Default::default()
        };
        let mut q =
            BuiltInPartitioner::new(TopicInfo::new(1000, None).unwrap(), cfg, Some(1)).unwrap();
        let sticky = q.partition(None);
        assert_eq!(q.partition(Some(b"abc")), sticky);
    }

    #[test]
    fn adaptive_choice_follows_inverted_queue_sizes() {
        let mut p = part(3, 1, 9);
        p.update_load_stats(&[Some(0), Some(3), Some(1)], None, &HashMap::new())
            .unwrap();
        assert_eq!(p.load_weights(), Some(vec![(0, 4), (1, 5), (2, 8)]));
        let mut counts = [0u32; 3];
        for _ in 0..80_000 {
            counts[p.next_partition() as usize] += 1;
        }
        // Expected 4/8, 1/8, 3/8.
        assert!((39_000..41_000).contains(&counts[0]), "{counts:?}");
        assert!((9_300..10_700).contains(&counts[1]), "{counts:?}");
        assert!((29_000..31_000).contains(&counts[2]), "{counts:?}");
    }

    #[test]
    fn stats_need_every_queue_and_respect_leaders_and_timeout() {
        let cfg = BuiltInPartitionerConfig {
            availability_timeout_ms: 100,
            ..Default::default()
        };
        let mut p =
            BuiltInPartitioner::new(TopicInfo::new(4, None).unwrap(), cfg, Some(5)).unwrap();
        p.update_load_stats(&[Some(1), None, Some(1), Some(1)], None, &HashMap::new())
            .unwrap();
        assert_eq!(p.load_weights(), None);
        let leaders = [Some(1), None, Some(2), Some(3)];
        let unready = HashMap::from([(3, 500i64), (2, 50)]);
        p.update_load_stats(
            &[Some(1), Some(0), Some(1), Some(1)],
            Some(&leaders),
            &unready,
        )
        .unwrap();
        // Partition 1 has no leader, partition 3's node is over the timeout.
        assert_eq!(p.load_weights(), Some(vec![(0, 1), (2, 2)]));
        for _ in 0..100 {
            assert!([0, 2].contains(&p.next_partition()));
        }
        // Adaptive off: always uniform.
        let cfg = BuiltInPartitionerConfig {
            adaptive_partitioning: false,
            ..Default::default()
        };
        let mut q =
            BuiltInPartitioner::new(TopicInfo::new(3, None).unwrap(), cfg, Some(5)).unwrap();
        q.update_load_stats(&[Some(0), Some(3), Some(1)], None, &HashMap::new())
            .unwrap();
        assert_eq!(q.load_weights(), None);
    }

    #[test]
    fn uniform_choice_uses_available_partitions() {
        let mut p = BuiltInPartitioner::new(
            TopicInfo::new(10, Some(vec![7])).unwrap(),
            BuiltInPartitionerConfig::default(),
            Some(1),
        )
        .unwrap();
        assert_eq!(p.partition(None), 7);
        assert!(p.update_partition_info(40_000, false));
        assert_eq!(p.partition(None), 7); // may choose the same partition again
    }
}
