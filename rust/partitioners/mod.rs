//! Producer partitioners for records without a key, one per era of Kafka's Java producer.
//!
//! Keyed records always go to `toPositive(murmur2(key)) % numPartitions` (see [`crate::partitioners::hash`]);
//! what changed between Kafka versions is where records *without* a key go:
//!
//! | type | Kafka | null-key policy |
//! |---|---|---|
//! | [`RoundRobinPartitioner`] | up to 2.3 | per-topic counter from a random start, over available partitions |
//! | [`StickyPartitionCache`] | 2.4 to 3.2 (KIP-480) | one partition per topic until its batch closes, then a different one |
//! | [`BuiltInPartitioner`] | 3.3+ (KIP-794) | sticky for `batch.size` bytes, next choice weighted by queue depth |
//!
//! Java draws from `ThreadLocalRandom`, so only the policy can be reproduced, not the draws:
//! each type takes a seed so that tests are reproducible.

mod builtin;
pub mod hash;
pub mod keys;
mod round_robin;
mod sticky_cache;

pub use builtin::{BuiltInPartitioner, BuiltInPartitionerConfig};
pub use round_robin::RoundRobinPartitioner;
pub use sticky_cache::StickyPartitionCache;

use crate::errors::{Error, Result};

/// Topic is what the partitioners know of a topic's metadata: its partition count and the
/// partitions that have a leader, in metadata order (Kafka's `availablePartitionsForTopic`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    pub num_partitions: i32,
    pub available: Vec<i32>,
}

impl TopicInfo {
    /// new checks the metadata; `available = None` means every partition has a leader.
    pub fn new(num_partitions: i64, available: Option<Vec<i32>>) -> Result<Self> {
        let n = crate::partitioners::hash::check_partitions(num_partitions)? as i32;
        let available = match available {
            None => (0..n).collect(),
            Some(list) => {
                if let Some(p) = list.iter().find(|&&p| p < 0 || p >= n) {
                    return Err(Error::InvalidArgument(format!(
                        "available partition {p} is not in 0..{n}"
                    )));
                }
                list
            }
        };
        Ok(TopicInfo {
            num_partitions: n,
            available,
        })
    }
}
