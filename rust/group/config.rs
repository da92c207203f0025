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
    /// `group.coordinator.rebalance.protocols` (`classic,consumer`): the group protocols the
    /// coordinator serves; KIP-848's apis answer UNSUPPORTED_VERSION without `consumer`.
    pub rebalance_protocols: Vec<GroupProtocol>,
    /// `group.consumer.session.timeout.ms` (45000): a consumer-protocol member's session.
    pub consumer_session_timeout_ms: i64,
    /// `group.consumer.min.session.timeout.ms` (45000).
    pub consumer_min_session_timeout_ms: i64,
    /// `group.consumer.max.session.timeout.ms` (60000).
    pub consumer_max_session_timeout_ms: i64,
    /// `group.consumer.heartbeat.interval.ms` (5000): the interval a member is told to keep.
    pub consumer_heartbeat_interval_ms: i64,
    /// `group.consumer.min.heartbeat.interval.ms` (5000).
    pub consumer_min_heartbeat_interval_ms: i64,
    /// `group.consumer.max.heartbeat.interval.ms` (15000).
    pub consumer_max_heartbeat_interval_ms: i64,
    /// `group.consumer.assignment.interval.ms` (1000): a consumer group's target assignment is
    /// computed again at most this often (Kafka 4.3+, KIP-1263); 0 computes it at every
    /// epoch bump.
    pub consumer_assignment_interval_ms: i64,
    /// `group.consumer.min.assignment.interval.ms` (0).
    pub consumer_min_assignment_interval_ms: i64,
    /// `group.consumer.max.assignment.interval.ms` (15000).
    pub consumer_max_assignment_interval_ms: i64,
    /// `group.consumer.max.size` (2147483647): members a consumer group accepts.
    pub consumer_max_size: i64,
    /// `group.consumer.assignors` (`uniform,range`): the server-side assignors by Kafka's
    /// short names; the first is a group's default.
    pub consumer_assignors: Vec<String>,
    /// `group.consumer.migration.policy` (`bidirectional`): which non-empty groups convert
    /// between the classic and the consumer protocol online.
    pub consumer_migration_policy: MigrationPolicy,
    /// `group.share.session.timeout.ms` (45000): a share group member's session.
    pub share_session_timeout_ms: i64,
    /// `group.share.min.session.timeout.ms` (45000): bounds the group config only.
    pub share_min_session_timeout_ms: i64,
    /// `group.share.max.session.timeout.ms` (60000).
    pub share_max_session_timeout_ms: i64,
    /// `group.share.heartbeat.interval.ms` (5000): the interval a share member is told.
    pub share_heartbeat_interval_ms: i64,
    /// `group.share.min.heartbeat.interval.ms` (5000): bounds the group config only.
    pub share_min_heartbeat_interval_ms: i64,
    /// `group.share.max.heartbeat.interval.ms` (15000).
    pub share_max_heartbeat_interval_ms: i64,
    /// `group.share.max.size` (200, 1-1000): members a share group accepts.
    pub share_max_size: i64,
    /// `group.share.initialize.retry.interval.ms` (30000, Kafka 4.2, internal): partitions
    /// whose share state has been initializing longer than this are asked for again at the
    /// group's next heartbeat.
    pub share_initialize_retry_interval_ms: i64,
}

/// GroupConfig is one group's dynamic configs (KIP-848's group configs, Kafka's `GroupConfig`)
/// that the coordinator reads: each one set overrides the broker's for that group's members. The
/// host keeps them (durably, validated against the broker's bounds) and hands them in with
/// [`Coordinator::set_group_config`](crate::group::Coordinator::set_group_config); they are
/// read at each heartbeat, as Kafka reads its `GroupConfigManager`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupConfig {
    /// `consumer.session.timeout.ms`.
    pub consumer_session_timeout_ms: Option<i64>,
    /// `consumer.heartbeat.interval.ms`.
    pub consumer_heartbeat_interval_ms: Option<i64>,
    /// `consumer.assignment.interval.ms`.
    pub consumer_assignment_interval_ms: Option<i64>,
    /// `share.session.timeout.ms`.
    pub share_session_timeout_ms: Option<i64>,
    /// `share.heartbeat.interval.ms`.
    pub share_heartbeat_interval_ms: Option<i64>,
}

impl GroupConfig {
    /// KEYS are the group configs the coordinator reads, by Kafka's names.
    pub const KEYS: &'static [&'static str] = &[
        "consumer.session.timeout.ms",
        "consumer.heartbeat.interval.ms",
        "consumer.assignment.interval.ms",
        "share.session.timeout.ms",
        "share.heartbeat.interval.ms",
    ];

    /// set sets one of [`GroupConfig::KEYS`]; another name is [`Error::InvalidArgument`]. The
    /// host validates values as Kafka does before they come here.
    pub fn set(&mut self, key: &str, value: i64) -> Result<()> {
        match key {
            "consumer.session.timeout.ms" => self.consumer_session_timeout_ms = Some(value),
            "consumer.heartbeat.interval.ms" => self.consumer_heartbeat_interval_ms = Some(value),
            "consumer.assignment.interval.ms" => self.consumer_assignment_interval_ms = Some(value),
            "share.session.timeout.ms" => self.share_session_timeout_ms = Some(value),
            "share.heartbeat.interval.ms" => self.share_heartbeat_interval_ms = Some(value),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "unknown group config {key:?} (known: {})",
                    GroupConfig::KEYS.join(", ")
                )))
            }
        }
        Ok(())
    }

    /// is_empty tells whether no config is set.
    pub fn is_empty(&self) -> bool {
        *self == GroupConfig::default()
    }
}

/// GroupProtocol is one entry of `group.coordinator.rebalance.protocols`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupProtocol {
    Classic,
    Consumer,
    Share,
    Streams,
}

/// MigrationPolicy is `group.consumer.migration.policy` (Kafka's
/// `ConsumerGroupMigrationPolicy`): empty groups always convert; non-empty ones as it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationPolicy {
    /// Both ways: classic to consumer when a consumer-protocol member joins, back when the last
    /// one leaves.
    Bidirectional,
    /// Classic to consumer only.
    Upgrade,
    /// Consumer to classic only.
    Downgrade,
    /// Neither.
    Disabled,
}

impl MigrationPolicy {
    /// parse reads Kafka's names, in any case.
    pub fn parse(s: &str) -> Option<MigrationPolicy> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bidirectional" => Some(MigrationPolicy::Bidirectional),
            "upgrade" => Some(MigrationPolicy::Upgrade),
            "downgrade" => Some(MigrationPolicy::Downgrade),
            "disabled" => Some(MigrationPolicy::Disabled),
            _ => None,
        }
    }

    /// upgrades tells whether a non-empty classic group converts to a consumer group.
    pub fn upgrades(self) -> bool {
        matches!(
            self,
            MigrationPolicy::Bidirectional | MigrationPolicy::Upgrade
        )
    }

    /// downgrades tells whether a non-empty consumer group converts back to classic.
    pub fn downgrades(self) -> bool {
        matches!(
            self,
            MigrationPolicy::Bidirectional | MigrationPolicy::Downgrade
        )
    }
}

/// ASSIGNOR_CLASSES are the class names Kafka accepts for its built-in server-side assignors,
/// with their short names.
const ASSIGNOR_CLASSES: [(&str, &str); 2] = [
    (
        "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
        "uniform",
    ),
    (
        "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
        "range",
    ),
];

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
            rebalance_protocols: vec![GroupProtocol::Classic, GroupProtocol::Consumer],
            consumer_session_timeout_ms: 45_000,
            consumer_min_session_timeout_ms: 45_000,
            consumer_max_session_timeout_ms: 60_000,
            consumer_heartbeat_interval_ms: 5_000,
            consumer_min_heartbeat_interval_ms: 5_000,
            consumer_max_heartbeat_interval_ms: 15_000,
            consumer_assignment_interval_ms: 1_000,
            consumer_min_assignment_interval_ms: 0,
            consumer_max_assignment_interval_ms: 15_000,
            consumer_max_size: i32::MAX as i64,
            consumer_assignors: vec!["uniform".into(), "range".into()],
            consumer_migration_policy: MigrationPolicy::Bidirectional,
            share_session_timeout_ms: 45_000,
            share_min_session_timeout_ms: 45_000,
            share_max_session_timeout_ms: 60_000,
            share_heartbeat_interval_ms: 5_000,
            share_min_heartbeat_interval_ms: 5_000,
            share_max_heartbeat_interval_ms: 15_000,
            share_max_size: 200,
            share_initialize_retry_interval_ms: 30_000,
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
        "group.consumer.session.timeout.ms",
        "group.consumer.min.session.timeout.ms",
        "group.consumer.max.session.timeout.ms",
        "group.consumer.heartbeat.interval.ms",
        "group.consumer.min.heartbeat.interval.ms",
        "group.consumer.max.heartbeat.interval.ms",
        "group.consumer.assignment.interval.ms",
        "group.consumer.min.assignment.interval.ms",
        "group.consumer.max.assignment.interval.ms",
        "group.consumer.max.size",
    ];

    /// SHARE_KEYS are the share groups' config names (KIP-932, `group.share.*`), which
    /// [`Config::set`] accepts too; the host reads them from its own config as it reads
    /// [`Config::KEYS`].
    pub const SHARE_KEYS: &'static [&'static str] = &[
        "group.share.session.timeout.ms",
        "group.share.min.session.timeout.ms",
        "group.share.max.session.timeout.ms",
        "group.share.heartbeat.interval.ms",
        "group.share.min.heartbeat.interval.ms",
        "group.share.max.heartbeat.interval.ms",
        "group.share.max.size",
        "group.share.initialize.retry.interval.ms",
    ];

    /// TEXT_KEYS are the config names whose values are lists or names, which
    /// [`Config::set_text`] accepts (it takes the integer ones too).
    pub const TEXT_KEYS: &'static [&'static str] = &[
        "group.coordinator.rebalance.protocols",
        "group.consumer.assignors",
        "group.consumer.migration.policy",
    ];

    /// consumer_enabled tells whether KIP-848's consumer protocol is served.
    pub fn consumer_enabled(&self) -> bool {
        self.rebalance_protocols.contains(&GroupProtocol::Consumer)
    }

    /// set_text sets one config by Kafka's name from its text: a list (comma-separated, as
    /// Kafka's LIST type reads it), a name, or an integer for any of [`Config::KEYS`]. An
    /// unknown name, or a value Kafka refuses (an unknown protocol, policy or assignor, an
    /// empty assignor list), is [`Error::InvalidArgument`].
    pub fn set_text(&mut self, key: &str, value: &str) -> Result<()> {
        let bad = |why: String| Err(Error::InvalidArgument(format!("{key}: {why}")));
        let items: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        match key {
            "group.coordinator.rebalance.protocols" => {
                let mut out = Vec::new();
                for item in items {
                    let p = match item.to_ascii_lowercase().as_str() {
                        "classic" => GroupProtocol::Classic,
                        "consumer" => GroupProtocol::Consumer,
                        "share" => GroupProtocol::Share,
                        "streams" => GroupProtocol::Streams,
                        _ => {
                            return bad(format!(
                                "{item:?} is not one of classic, consumer, share, streams"
                            ))
                        }
                    };
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
                self.rebalance_protocols = out;
            }
            "group.consumer.assignors" => {
                let mut out: Vec<String> = Vec::new();
                for item in items {
                    let name = ASSIGNOR_CLASSES
                        .iter()
                        .find(|(class, _)| *class == item)
                        .map_or(item, |(_, name)| name);
                    if !matches!(name, "uniform" | "range") {
                        return bad(format!(
                            "{item:?} is not a server-side assignor kgroup has (uniform, range)"
                        ));
                    }
                    if out.iter().any(|n| n == name) {
                        return bad(format!("{name:?} is named twice"));
                    }
                    out.push(name.to_string());
                }
                if out.is_empty() {
                    return bad("at least one assignor is needed".into());
                }
                self.consumer_assignors = out;
            }
            "group.consumer.migration.policy" => match MigrationPolicy::parse(value) {
                Some(p) => self.consumer_migration_policy = p,
                None => {
                    return bad(format!(
                        "{value:?} is not one of bidirectional, upgrade, downgrade, disabled"
                    ))
                }
            },
            _ if Config::KEYS.contains(&key) || Config::SHARE_KEYS.contains(&key) => {
                match value.trim().parse::<i64>() {
                    Ok(n) => self.set(key, n)?,
                    Err(_) => return bad(format!("{value:?} is not an integer")),
                }
            }
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "unknown group coordinator config {key:?} (known: {}, {})",
                    Config::KEYS.join(", "),
                    Config::TEXT_KEYS.join(", ")
                )))
            }
        }
        Ok(())
    }

    /// validate checks what no single setting can: the session bounds of classic groups, and
    /// the consumer protocol's session and heartbeat settings against their bounds and each
    /// other (Kafka's `GroupCoordinatorConfig` requirements).
    pub fn validate(&self) -> Result<()> {
        let require = |ok: bool, why: String| {
            if ok {
                Ok(())
            } else {
                Err(Error::InvalidArgument(why))
            }
        };
        require(
            self.min_session_timeout_ms <= self.max_session_timeout_ms,
            format!(
                "group.min.session.timeout.ms ({}) is above group.max.session.timeout.ms ({})",
                self.min_session_timeout_ms, self.max_session_timeout_ms
            ),
        )?;
        let (hb, hb_min, hb_max) = (
            self.consumer_heartbeat_interval_ms,
            self.consumer_min_heartbeat_interval_ms,
            self.consumer_max_heartbeat_interval_ms,
        );
        let (st, st_min, st_max) = (
            self.consumer_session_timeout_ms,
            self.consumer_min_session_timeout_ms,
            self.consumer_max_session_timeout_ms,
        );
        require(
            hb_min <= hb_max,
            format!("group.consumer.min.heartbeat.interval.ms ({hb_min}) is above group.consumer.max.heartbeat.interval.ms ({hb_max})"),
        )?;
        require(
            (hb_min..=hb_max).contains(&hb),
            format!("group.consumer.heartbeat.interval.ms ({hb}) is outside [{hb_min}, {hb_max}]"),
        )?;
        require(
            st_min <= st_max,
            format!("group.consumer.min.session.timeout.ms ({st_min}) is above group.consumer.max.session.timeout.ms ({st_max})"),
        )?;
        require(
            (st_min..=st_max).contains(&st),
            format!("group.consumer.session.timeout.ms ({st}) is outside [{st_min}, {st_max}]"),
        )?;
        require(
            hb < st,
            format!("group.consumer.heartbeat.interval.ms ({hb}) must be below group.consumer.session.timeout.ms ({st})"),
        )?;
        let (ai, ai_min, ai_max) = (
            self.consumer_assignment_interval_ms,
            self.consumer_min_assignment_interval_ms,
            self.consumer_max_assignment_interval_ms,
        );
        require(
            ai_min <= ai_max,
            "group.consumer.max.assignment.interval.ms must be greater than or equal to group.consumer.min.assignment.interval.ms".into(),
        )?;
        require(
            ai >= ai_min,
            "group.consumer.assignment.interval.ms must be greater than or equal to group.consumer.min.assignment.interval.ms".into(),
        )?;
        require(
            ai <= ai_max,
            "group.consumer.assignment.interval.ms must be less than or equal to group.consumer.max.assignment.interval.ms".into(),
        )?;
        // Kafka's ShareGroupConfig requirements.
        let (hb, hb_min, hb_max) = (
            self.share_heartbeat_interval_ms,
            self.share_min_heartbeat_interval_ms,
            self.share_max_heartbeat_interval_ms,
        );
        let (st, st_min, st_max) = (
            self.share_session_timeout_ms,
            self.share_min_session_timeout_ms,
            self.share_max_session_timeout_ms,
        );
        require(
            (hb_min..=hb_max).contains(&hb),
            format!("group.share.heartbeat.interval.ms ({hb}) is outside [{hb_min}, {hb_max}]"),
        )?;
        require(
            (st_min..=st_max).contains(&st),
            format!("group.share.session.timeout.ms ({st}) is outside [{st_min}, {st_max}]"),
        )?;
        require(
            hb < st,
            format!("group.share.heartbeat.interval.ms ({hb}) must be below group.share.session.timeout.ms ({st})"),
        )
    }

    /// consumer_session_timeout_ms is a consumer group's session timeout: its group config's
    /// `consumer.session.timeout.ms`, else the broker's (Kafka's
    /// `GroupMetadataManager.consumerGroupSessionTimeoutMs`).
    pub fn consumer_session_timeout_ms(&self, group: Option<&GroupConfig>) -> i64 {
        group
            .and_then(|g| g.consumer_session_timeout_ms)
            .unwrap_or(self.consumer_session_timeout_ms)
    }

    /// share_session_timeout_ms is a share group's session timeout: its group config's
    /// `share.session.timeout.ms`, else the broker's (Kafka's `shareGroupSessionTimeoutMs`).
    pub fn share_session_timeout_ms(&self, group: Option<&GroupConfig>) -> i64 {
        group
            .and_then(|g| g.share_session_timeout_ms)
            .unwrap_or(self.share_session_timeout_ms)
    }

    /// share_heartbeat_interval_ms is the heartbeat interval a share group's members are
    /// told: its group config's `share.heartbeat.interval.ms`, else the broker's.
    pub fn share_heartbeat_interval_ms(&self, group: Option<&GroupConfig>) -> i64 {
        group
            .and_then(|g| g.share_heartbeat_interval_ms)
            .unwrap_or(self.share_heartbeat_interval_ms)
    }

    /// consumer_heartbeat_interval_ms is the heartbeat interval a consumer group's members are
    /// told: its group config's `consumer.heartbeat.interval.ms`, else the broker's.
    pub fn consumer_heartbeat_interval_ms(&self, group: Option<&GroupConfig>) -> i64 {
        group
            .and_then(|g| g.consumer_heartbeat_interval_ms)
            .unwrap_or(self.consumer_heartbeat_interval_ms)
    }

    /// consumer_assignment_interval_ms is how often a consumer group's target may be computed:
    /// its group config's `consumer.assignment.interval.ms`, else the broker's.
    pub fn consumer_assignment_interval_ms(&self, group: Option<&GroupConfig>) -> i64 {
        group
            .and_then(|g| g.consumer_assignment_interval_ms)
            .unwrap_or(self.consumer_assignment_interval_ms)
    }

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
            "group.consumer.session.timeout.ms" => self.consumer_session_timeout_ms = at_least(1)?,
            "group.consumer.min.session.timeout.ms" => {
                self.consumer_min_session_timeout_ms = at_least(1)?
            }
            "group.consumer.max.session.timeout.ms" => {
                self.consumer_max_session_timeout_ms = at_least(1)?
            }
            "group.consumer.heartbeat.interval.ms" => {
                self.consumer_heartbeat_interval_ms = at_least(1)?
            }
            "group.consumer.min.heartbeat.interval.ms" => {
                self.consumer_min_heartbeat_interval_ms = at_least(1)?
            }
            "group.consumer.max.heartbeat.interval.ms" => {
                self.consumer_max_heartbeat_interval_ms = at_least(1)?
            }
            "group.consumer.assignment.interval.ms" => {
                self.consumer_assignment_interval_ms = at_least(0)?
            }
            "group.consumer.min.assignment.interval.ms" => {
                self.consumer_min_assignment_interval_ms = at_least(0)?
            }
            "group.consumer.max.assignment.interval.ms" => {
                self.consumer_max_assignment_interval_ms = at_least(0)?
            }
            "group.consumer.max.size" => self.consumer_max_size = at_least(1)?,
            "group.share.session.timeout.ms" => self.share_session_timeout_ms = at_least(1)?,
            "group.share.min.session.timeout.ms" => {
                self.share_min_session_timeout_ms = at_least(1)?
            }
            "group.share.max.session.timeout.ms" => {
                self.share_max_session_timeout_ms = at_least(1)?
            }
            "group.share.heartbeat.interval.ms" => self.share_heartbeat_interval_ms = at_least(1)?,
            "group.share.min.heartbeat.interval.ms" => {
                self.share_min_heartbeat_interval_ms = at_least(1)?
            }
            "group.share.max.heartbeat.interval.ms" => {
                self.share_max_heartbeat_interval_ms = at_least(1)?
            }
            // Kafka's ShareGroupConfig: between 1 and 1000.
            "group.share.max.size" => {
                if !(1..=1000).contains(&value) {
                    return Err(Error::InvalidArgument(format!(
                        "{key} must be between 1 and 1000, got {value}"
                    )));
                }
                self.share_max_size = value
            }
            "group.share.initialize.retry.interval.ms" => {
                self.share_initialize_retry_interval_ms = at_least(1)?
            }
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
        c.validate()?;
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

    // GroupCoordinatorConfig's consumer-protocol defaults.
    #[test]
    fn consumer_defaults_are_kafkas() {
        let c = Config::default();
        assert_eq!(
            (
                c.consumer_session_timeout_ms,
                c.consumer_min_session_timeout_ms
            ),
            (45_000, 45_000)
        );
        assert_eq!(c.consumer_max_session_timeout_ms, 60_000);
        assert_eq!(
            (
                c.consumer_heartbeat_interval_ms,
                c.consumer_min_heartbeat_interval_ms,
                c.consumer_max_heartbeat_interval_ms
            ),
            (5_000, 5_000, 15_000)
        );
        assert_eq!(c.consumer_max_size, 2_147_483_647);
        assert_eq!(c.consumer_assignors, ["uniform", "range"]);
        assert_eq!(c.consumer_migration_policy, MigrationPolicy::Bidirectional);
        assert!(c.consumer_enabled());
        c.validate().unwrap();
    }

    #[test]
    fn text_configs_read_as_kafka_reads_them() {
        let mut c = Config::default();
        c.set_text("group.coordinator.rebalance.protocols", " Classic ")
            .unwrap();
        assert!(!c.consumer_enabled());
        c.set_text(
            "group.consumer.assignors",
            "range, org.apache.kafka.coordinator.group.assignor.UniformAssignor",
        )
        .unwrap();
        assert_eq!(c.consumer_assignors, ["range", "uniform"]);
        c.set_text("group.consumer.migration.policy", "UPGRADE")
            .unwrap();
        assert!(c.consumer_migration_policy.upgrades());
        assert!(!c.consumer_migration_policy.downgrades());
        c.set_text("group.consumer.max.size", "10").unwrap();
        assert_eq!(c.consumer_max_size, 10);
        for (k, v) in [
            ("group.coordinator.rebalance.protocols", "classic,kip848"),
            ("group.consumer.assignors", ""),
            ("group.consumer.assignors", "uniform,uniform"),
            ("group.consumer.assignors", "com.example.MyAssignor"),
            ("group.consumer.migration.policy", "sometimes"),
            ("group.consumer.max.size", "ten"),
            ("group.consumer.max.size", "0"),
            ("group.consumer.nothing", "1"),
        ] {
            assert!(Config::default().set_text(k, v).is_err(), "{k}={v}");
        }
    }

    // GroupCoordinatorConfig's requirements on the consumer protocol's timings.
    #[test]
    fn consumer_timings_must_fit_their_bounds_and_each_other() {
        let bad = [
            vec![("group.consumer.heartbeat.interval.ms", 4_000)],
            vec![("group.consumer.heartbeat.interval.ms", 16_000)],
            vec![("group.consumer.session.timeout.ms", 44_000)],
            vec![("group.consumer.session.timeout.ms", 61_000)],
            vec![("group.consumer.min.heartbeat.interval.ms", 20_000)],
            vec![("group.consumer.min.session.timeout.ms", 70_000)],
            vec![
                ("group.consumer.min.session.timeout.ms", 1_000),
                ("group.consumer.session.timeout.ms", 5_000),
            ],
        ];
        for pairs in bad {
            assert!(Config::from_pairs(pairs.clone()).is_err(), "{pairs:?}");
        }
        // Short timings for tests, as a broker may be configured.
        let c = Config::from_pairs([
            ("group.consumer.min.session.timeout.ms", 1_000),
            ("group.consumer.session.timeout.ms", 1_000),
            ("group.consumer.min.heartbeat.interval.ms", 100),
            ("group.consumer.heartbeat.interval.ms", 100),
        ])
        .unwrap();
        assert_eq!(c.consumer_heartbeat_interval_ms, 100);
    }
}
