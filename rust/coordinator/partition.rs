//! Partition: which partition of a coordinator's internal topic holds a key (a group id in
//! `__consumer_offsets`, a transactional id in `__transaction_state`).

use crate::assignors::java::java_string_hash;

/// partition_for is the partition of an internal topic of `partitions` partitions that holds
/// `key`: Kafka's `Utils.abs(key.hashCode) % partitions` (`GroupCoordinator.partitionFor`,
/// `TransactionStateManager.partitionFor`), where `hashCode` is Java's `String.hashCode` over
/// UTF-16 code units and `Utils.abs(Integer.MIN_VALUE)` is 0. Fewer than 1 partition counts as
/// 1.
pub fn partition_for(key: &str, partitions: i32) -> i32 {
    let h = java_string_hash(key);
    let abs = if h == i32::MIN { 0 } else { h.abs() };
    abs % partitions.max(1)
}
