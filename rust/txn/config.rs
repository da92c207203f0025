//! Config: the transaction coordinator's settings, under Kafka's names and with Kafka's
//! defaults (`TransactionStateManagerConfig`, `TransactionLogConfig`).

use crate::errors::{Error, Result};

/// Config holds the transaction coordinator's settings. Build it with [`Config::default`] and
/// [`Config::set`] (Kafka's names), or field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `transaction.state.log.num.partitions` (50): partitions of `__transaction_state`.
    pub num_partitions: i32,
    /// `transaction.max.timeout.ms` (900000): the longest transaction timeout a producer may
    /// ask for.
    pub max_timeout_ms: i64,
    /// `transactional.id.expiration.ms` (604800000, 7 days): how long an id without a
    /// transaction is kept after its last update.
    pub id_expiration_ms: i64,
    /// `transaction.abort.timed.out.transaction.cleanup.interval.ms` (10000): how often
    /// transactions past their timeout are aborted.
    pub abort_interval_ms: i64,
    /// `transaction.remove.expired.transaction.cleanup.interval.ms` (3600000): how often
    /// expired ids are removed.
    pub remove_interval_ms: i64,
    /// `offsets.topic.num.partitions` (50): partitions of `__consumer_offsets`, whose partition
    /// of a group AddOffsetsToTxn adds.
    pub offsets_topic_num_partitions: i32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            num_partitions: 50,
            max_timeout_ms: 900_000,
            id_expiration_ms: 604_800_000,
            abort_interval_ms: 10_000,
            remove_interval_ms: 3_600_000,
            offsets_topic_num_partitions: 50,
        }
    }
}

impl Config {
    /// KEYS are the config names [`Config::set`] accepts.
    pub const KEYS: &'static [&'static str] = &[
        "transaction.state.log.num.partitions",
        "transaction.max.timeout.ms",
        "transactional.id.expiration.ms",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "transaction.remove.expired.transaction.cleanup.interval.ms",
        "offsets.topic.num.partitions",
    ];

    /// set sets one setting by Kafka's name; another name, or a value Kafka's config would
    /// reject (below its minimum of 1), is [`Error::InvalidArgument`].
    pub fn set(&mut self, key: &str, value: i64) -> Result<()> {
        if value < 1 {
            return Err(Error::InvalidArgument(format!(
                "{key} must be at least 1, got {value}"
            )));
        }
        let int = |v: i64| {
            i32::try_from(v)
                .map_err(|_| Error::InvalidArgument(format!("{key}: {v} is not an INT")))
        };
        match key {
            "transaction.state.log.num.partitions" => self.num_partitions = int(value)?,
            "transaction.max.timeout.ms" => self.max_timeout_ms = int(value)? as i64,
            "transactional.id.expiration.ms" => self.id_expiration_ms = int(value)? as i64,
            "transaction.abort.timed.out.transaction.cleanup.interval.ms" => {
                self.abort_interval_ms = int(value)? as i64
            }
            "transaction.remove.expired.transaction.cleanup.interval.ms" => {
                self.remove_interval_ms = int(value)? as i64
            }
            "offsets.topic.num.partitions" => self.offsets_topic_num_partitions = int(value)?,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "unknown config {key:?}; known: {}",
                    Config::KEYS.join(", ")
                )))
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafkas_names_and_defaults() {
        let mut c = Config::default();
        assert_eq!(c.max_timeout_ms, 900_000);
        c.set("transaction.max.timeout.ms", 60_000).unwrap();
        assert_eq!(c.max_timeout_ms, 60_000);
        assert!(c.set("transaction.max.timeout.ms", 0).is_err());
        assert!(c.set("nope", 1).is_err());
        assert!(c
            .set("transaction.state.log.num.partitions", 1 << 40)
            .is_err());
    }
}
