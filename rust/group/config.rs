//! Config: the group coordinator's settings, under Kafka's names and with Kafka's defaults
//! (`GroupCoordinatorConfig`).

use crate::errors::{Error, Result};

/// NEW_MEMBER_JOIN_TIMEOUT_MS is how long a new member's parked JoinGroup may wait (Kafka's
/// `NewMemberJoinTimeoutMs`, 5 minutes): a new member has no id yet and cannot heartbeat, and a
/// broker cannot see it disconnect while its request is parked.
pub const NEW_MEMBER_JOIN_TIMEOUT_MS: i64 = 5 * 60 * 1000;

/// Config holds the coordinator's settings. Build it with [`Config::default`] and
/// [`Config::set`] (Kafka's names), or field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `group.initial.rebalance.delay.ms` (3000): how long the first rebalance of an empty group
    /// waits for more members, re-armed by each new one up to the rebalance timeout.
    pub initial_rebalance_delay_ms: i64,
    /// `group.min.session.timeout.ms` (6000).
    pub min_session_timeout_ms: i64,
    /// `group.max.session.timeout.ms` (1800000).
    pub max_session_timeout_ms: i64,
    /// `group.max.size` (2147483647): members a classic group accepts.
    pub max_size: i64,
    /// `offsets.topic.num.partitions` (50): partitions of `__consumer_offsets`.
    pub offsets_topic_num_partitions: i32,
    /// `offsets.retention.minutes` (10080, 7 days), kept in milliseconds.
    pub offsets_retention_ms: i64,
    /// `offsets.retention.check.interval.ms` (600000): how often expired offsets are removed.
    pub offsets_retention_check_interval_ms: i64,
    /// `offset.metadata.max.bytes` (4096): the longest metadata string of a committed offset, in
    /// UTF-16 code units as Java counts them.
    pub offset_metadata_max_bytes: i64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            initial_rebalance_delay_ms: 3000,
            min_session_timeout_ms: 6000,
            max_session_timeout_ms: 1_800_000,
            max_size: i32::MAX as i64,
            offsets_topic_num_partitions: 50,
            offsets_retention_ms: 10080 * 60 * 1000,
            offsets_retention_check_interval_ms: 600_000,
            offset_metadata_max_bytes: 4096,
        }
    }
}

impl Config {
    /// KEYS are the config names [`Config::set`] accepts.
    pub const KEYS: &'static [&'static str] = &[
        "group.initial.rebalance.delay.ms",
        "group.min.session.timeout.ms",
        "group.max.session.timeout.ms",
        "group.max.size",
        "offsets.topic.num.partitions",
        "offsets.retention.minutes",
        "offsets.retention.check.interval.ms",
        "offset.metadata.max.bytes",
    ];

    /// set sets one config by Kafka's name. An unknown name, or a value out of Kafka's range
    /// (negative delays and sizes, fewer than 1 partition or group member, a retention below 1
    /// minute, a check interval below 1 ms), is [`Error::InvalidArgument`].
    pub fn set(&mut self, key: &str, value: i64) -> Result<()> {
        let at_least = |min: i64| -> Result<i64> {
            if value < min || value > i32::MAX as i64 {
                Err(Error::InvalidArgument(format!(
                    "{key} must be between {min} and {}, got {value}",
                    i32::MAX
                )))
            } else {
                Ok(value)
            }
        };
        match key {
            "group.initial.rebalance.delay.ms" => self.initial_rebalance_delay_ms = at_least(0)?,
            "group.min.session.timeout.ms" => self.min_session_timeout_ms = at_least(0)?,
            "group.max.session.timeout.ms" => self.max_session_timeout_ms = at_least(0)?,
            "group.max.size" => self.max_size = at_least(1)?,
            "offsets.topic.num.partitions" => {
                self.offsets_topic_num_partitions = at_least(1)? as i32
            }
            // Kafka multiplies in 64 bits (testOffsetsRetentionMsIntegerOverflow).
            "offsets.retention.minutes" => self.offsets_retention_ms = at_least(1)? * 60 * 1000,
            "offsets.retention.check.interval.ms" => {
                self.offsets_retention_check_interval_ms = at_least(1)?
            }
            "offset.metadata.max.bytes" => self.offset_metadata_max_bytes = at_least(0)?,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "unknown group coordinator config {key:?} (known: {})",
                    Config::KEYS.join(", ")
                )))
            }
        }
        Ok(())
    }

    /// from_pairs is the defaults with each `(name, value)` set in turn.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, i64)>) -> Result<Config> {
        let mut c = Config::default();
        for (k, v) in pairs {
            c.set(k, v)?;
        }
        if c.min_session_timeout_ms > c.max_session_timeout_ms {
            return Err(Error::InvalidArgument(format!(
                "group.min.session.timeout.ms ({}) is above group.max.session.timeout.ms ({})",
                c.min_session_timeout_ms, c.max_session_timeout_ms
            )));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kafkas() {
        let c = Config::default();
        assert_eq!(c.initial_rebalance_delay_ms, 3000);
        assert_eq!(c.offsets_retention_ms, 604_800_000);
        assert_eq!(c.max_size, 2_147_483_647);
    }

    // testOffsetsRetentionMsIntegerOverflow: Integer.MAX_VALUE minutes do not wrap.
    #[test]
    fn retention_minutes_do_not_overflow() {
        let c = Config::from_pairs([("offsets.retention.minutes", i32::MAX as i64)]).unwrap();
        assert_eq!(c.offsets_retention_ms, i32::MAX as i64 * 60 * 1000);
    }

    #[test]
    fn bad_names_and_values_are_errors() {
        assert!(Config::from_pairs([("group.max.sizes", 1)]).is_err());
        assert!(Config::from_pairs([("group.max.size", 0)]).is_err());
        assert!(Config::from_pairs([("group.initial.rebalance.delay.ms", -1)]).is_err());
        assert!(Config::from_pairs([
            ("group.min.session.timeout.ms", 10),
            ("group.max.session.timeout.ms", 5)
        ])
        .is_err());
        assert!(Config::KEYS
            .iter()
            .all(|k| Config::default().set(k, 1).is_ok()));
    }
}
