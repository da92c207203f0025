//! LogConfig: the topic configs that govern one log, by Kafka 3.9's names and defaults
//! (`LogConfig.java`, `ServerLogConfigs.java`), read from (name, value) strings as a broker gets
//! them from CreateTopics, IncrementalAlterConfigs or its own properties.

use crate::errors::{Error, Result};
use crate::protocol::records::{Compression, TimestampType};

/// CleanupPolicy is `cleanup.policy`: `delete`, `compact` or both (`compact,delete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanupPolicy {
    pub delete: bool,
    pub compact: bool,
}

/// TargetCompression is `compression.type` as a broker reads it (Kafka's
/// `BrokerCompressionType`): `producer` keeps the producer's codec, the others recompress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetCompression {
    Producer,
    Codec(Compression),
}

/// LogConfig is every setting a [`Log`](super::Log) reads. Field names follow the Kafka keys
/// (`segment.bytes` is `segment_bytes`); defaults are Kafka 3.9's.
#[derive(Debug, Clone, PartialEq)]
pub struct LogConfig {
    /// segment.bytes: roll when the active segment would grow past this (1 GiB).
    pub segment_bytes: u64,
    /// segment.ms: roll when the active segment's first batch is this old (7 days).
    pub segment_ms: i64,
    /// segment.index.bytes: roll when an index would hold more than this (10 MiB).
    pub segment_index_bytes: u64,
    /// index.interval.bytes: bytes between two offset index entries (4096).
    pub index_interval_bytes: u64,
    /// retention.ms: delete segments whose largest timestamp is older (7 days; -1: keep).
    pub retention_ms: i64,
    /// retention.bytes: delete the oldest segments while the log is larger (-1: no limit).
    pub retention_bytes: i64,
    pub cleanup_policy: CleanupPolicy,
    /// delete.retention.ms: how long compaction keeps a tombstone after it was first cleaned.
    pub delete_retention_ms: i64,
    /// min.compaction.lag.ms: records younger than this are not compacted.
    pub min_compaction_lag_ms: i64,
    /// max.compaction.lag.ms: a dirty record older than this makes the log cleanable whatever
    /// its dirty ratio.
    pub max_compaction_lag_ms: i64,
    /// min.cleanable.dirty.ratio: the share of dirty bytes that makes the log cleanable.
    pub min_cleanable_dirty_ratio: f64,
    /// max.message.bytes: the largest batch accepted (1048588).
    pub max_message_bytes: u64,
    /// message.timestamp.type: CreateTime or LogAppendTime.
    pub timestamp_type: TimestampType,
    /// message.timestamp.before.max.ms / after.max.ms (Long.MAX_VALUE in Kafka 3.9).
    pub timestamp_before_max_ms: i64,
    pub timestamp_after_max_ms: i64,
    /// compression.type and the level of the codec it names (None: the codec's default).
    pub compression: TargetCompression,
    pub gzip_level: i32,
    pub lz4_level: i32,
    pub zstd_level: i32,
    /// producer.id.expiration.ms (a broker config): idle producers are forgotten after it.
    pub producer_id_expiration_ms: i64,
    /// flush.messages / flush.ms: read by the host, which decides when to call `flush`.
    pub flush_messages: i64,
    pub flush_ms: i64,
    /// file.delete.delay.ms: how long the files of a segment taken out of the log (by
    /// retention, DeleteRecords or compaction) stay, renamed `.deleted`, before they go (60 s).
    pub file_delete_delay_ms: i64,
}

impl Default for LogConfig {
    fn default() -> Self {
        const WEEK: i64 = 7 * 24 * 3600 * 1000;
        LogConfig {
            segment_bytes: 1 << 30,
            segment_ms: WEEK,
            segment_index_bytes: 10 << 20,
            index_interval_bytes: 4096,
            retention_ms: WEEK,
            retention_bytes: -1,
            cleanup_policy: CleanupPolicy {
                delete: true,
                compact: false,
            },
            delete_retention_ms: 24 * 3600 * 1000,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            min_cleanable_dirty_ratio: 0.5,
            max_message_bytes: 1024 * 1024 + 12,
            timestamp_type: TimestampType::CreateTime,
            timestamp_before_max_ms: i64::MAX,
            timestamp_after_max_ms: i64::MAX,
            compression: TargetCompression::Producer,
            gzip_level: -1,
            lz4_level: 9,
            zstd_level: 3,
            producer_id_expiration_ms: 24 * 3600 * 1000,
            flush_messages: i64::MAX,
            flush_ms: i64::MAX,
            file_delete_delay_ms: 60_000,
        }
    }
}

fn bad(key: &str, value: &str, why: &str) -> Error {
    Error::InvalidArgument(format!("invalid value {value:?} for {key}: {why}"))
}

fn long(key: &str, value: &str, min: i64) -> Result<i64> {
    let v: i64 = value
        .trim()
        .parse()
        .map_err(|_| bad(key, value, "not a long"))?;
    if v < min {
        return Err(bad(key, value, &format!("must be at least {min}")));
    }
    Ok(v)
}

fn int(key: &str, value: &str, min: i64) -> Result<i64> {
    let v = long(key, value, min)?;
    if v > i32::MAX as i64 {
        return Err(bad(key, value, "not an int"));
    }
    Ok(v)
}

fn level(key: &str, value: &str, range: std::ops::RangeInclusive<i32>, or: i32) -> Result<i32> {
    let v = int(key, value, i32::MIN as i64)? as i32;
    if range.contains(&v) || v == or {
        Ok(v)
    } else {
        Err(bad(
            key,
            value,
            &format!("must be in [{}, {}]", range.start(), range.end()),
        ))
    }
}

/// TIMESTAMP_DIFFERENCE is the deprecated `message.timestamp.difference.max.ms`, which Kafka 3.9
/// still reads for before/after when they are not set.
const TIMESTAMP_DIFFERENCE: &str = "message.timestamp.difference.max.ms";

impl LogConfig {
    /// from_pairs is the default config with each (Kafka name, value) applied in order; see
    /// [`set`](Self::set).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut c = LogConfig::default();
        c.update(pairs)?;
        Ok(c)
    }

    /// update applies (Kafka name, value) pairs to a copy and keeps it only if every value is
    /// valid, so a failed IncrementalAlterConfigs changes nothing.
    pub fn update<'a>(
        &mut self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<()> {
        let mut c = self.clone();
        let mut difference = None;
        let mut before_after_set = false;
        for (k, v) in pairs {
            if k == TIMESTAMP_DIFFERENCE {
                difference = Some(long(k, v, 0)?);
                continue;
            }
            before_after_set |= k.starts_with("message.timestamp.");
            c.set(k, v)?;
        }
        if let (Some(d), false) = (difference, before_after_set) {
            c.timestamp_before_max_ms = d;
            c.timestamp_after_max_ms = d;
        }
        *self = c;
        Ok(())
    }

    /// set applies one config. Keys that are not about the log (`min.insync.replicas`...) are
    /// ignored; a bad value is [`Error::InvalidArgument`] naming the key.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "segment.bytes" => self.segment_bytes = int(key, value, 14)? as u64,
            "segment.ms" => self.segment_ms = long(key, value, 1)?,
            "segment.index.bytes" => self.segment_index_bytes = int(key, value, 4)? as u64,
            "index.interval.bytes" => self.index_interval_bytes = int(key, value, 0)? as u64,
            "retention.ms" => self.retention_ms = long(key, value, -1)?,
            "retention.bytes" => self.retention_bytes = long(key, value, i64::MIN)?,
            "cleanup.policy" => {
                let mut p = CleanupPolicy {
                    delete: false,
                    compact: false,
                };
                for part in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    match part {
                        "delete" => p.delete = true,
                        "compact" => p.compact = true,
                        _ => return Err(bad(key, value, "expected delete, compact or both")),
                    }
                }
                self.cleanup_policy = p;
            }
            "delete.retention.ms" => self.delete_retention_ms = long(key, value, 0)?,
            "min.compaction.lag.ms" => self.min_compaction_lag_ms = long(key, value, 0)?,
            "max.compaction.lag.ms" => self.max_compaction_lag_ms = long(key, value, 1)?,
            "min.cleanable.dirty.ratio" => {
                let r: f64 = value
                    .trim()
                    .parse()
                    .map_err(|_| bad(key, value, "not a double"))?;
                if !(0.0..=1.0).contains(&r) {
                    return Err(bad(key, value, "must be in [0, 1]"));
                }
                self.min_cleanable_dirty_ratio = r;
            }
            "max.message.bytes" => self.max_message_bytes = int(key, value, 0)? as u64,
            "message.timestamp.type" => {
                self.timestamp_type = match value {
                    "CreateTime" => TimestampType::CreateTime,
                    "LogAppendTime" => TimestampType::LogAppendTime,
                    _ => return Err(bad(key, value, "expected CreateTime or LogAppendTime")),
                }
            }
            "message.timestamp.before.max.ms" => {
                self.timestamp_before_max_ms = long(key, value, 0)?
            }
            "message.timestamp.after.max.ms" => self.timestamp_after_max_ms = long(key, value, 0)?,
            TIMESTAMP_DIFFERENCE => {
                let d = long(key, value, 0)?;
                self.timestamp_before_max_ms = d;
                self.timestamp_after_max_ms = d;
            }
            "compression.type" => {
                // Kafka's BrokerCompressionType names: `none` is a producer's name, not a topic's.
                self.compression = match value {
                    "producer" => TargetCompression::Producer,
                    "uncompressed" => TargetCompression::Codec(Compression::None),
                    "gzip" | "snappy" | "lz4" | "zstd" => {
                        TargetCompression::Codec(Compression::from_name(value)?)
                    }
                    _ => {
                        return Err(bad(
                            key,
                            value,
                            "expected uncompressed, zstd, lz4, snappy, gzip or producer",
                        ))
                    }
                }
            }
            "compression.gzip.level" => self.gzip_level = level(key, value, 1..=9, -1)?,
            "compression.lz4.level" => self.lz4_level = level(key, value, 1..=17, 9)?,
            "compression.zstd.level" => self.zstd_level = level(key, value, -131_072..=22, 3)?,
            "producer.id.expiration.ms" => self.producer_id_expiration_ms = long(key, value, 1)?,
            "flush.messages" => self.flush_messages = long(key, value, 1)?,
            "flush.ms" => self.flush_ms = long(key, value, 0)?,
            "file.delete.delay.ms" => self.file_delete_delay_ms = long(key, value, 0)?,
            _ => {}
        }
        Ok(())
    }

    /// level is the compression level to encode `c` with (None: the codec's default). kgroup's
    /// lz4 writes only Kafka's default level 9, so other lz4 levels are written at 9.
    pub fn level(&self, c: Compression) -> Option<i32> {
        match c {
            Compression::Gzip if self.gzip_level != -1 => Some(self.gzip_level),
            Compression::Zstd => Some(self.zstd_level),
            _ => None,
        }
    }

    /// index_entries is how many entries an index of `entry_size` bytes may hold.
    pub(crate) fn index_entries(&self, entry_size: usize) -> usize {
        (self.segment_index_bytes as usize / entry_size).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kafka_3_9s() {
        let c = LogConfig::default();
        assert_eq!(c.segment_bytes, 1073741824);
        assert_eq!(c.max_message_bytes, 1048588);
        assert_eq!(c.timestamp_before_max_ms, i64::MAX);
        assert_eq!(c.timestamp_after_max_ms, i64::MAX);
        assert_eq!(c.compression, TargetCompression::Producer);
        assert!(c.cleanup_policy.delete && !c.cleanup_policy.compact);
    }

    #[test]
    fn names_values_and_unknown_keys() {
        let c = LogConfig::from_pairs([
            ("cleanup.policy", "compact,delete"),
            ("compression.type", "zstd"),
            ("compression.zstd.level", "7"),
            ("message.timestamp.type", "LogAppendTime"),
            ("min.insync.replicas", "2"),
            ("retention.ms", "-1"),
        ])
        .unwrap();
        assert!(c.cleanup_policy.compact && c.cleanup_policy.delete);
        assert_eq!(c.compression, TargetCompression::Codec(Compression::Zstd));
        assert_eq!(c.level(Compression::Zstd), Some(7));
        assert_eq!(c.timestamp_type, TimestampType::LogAppendTime);
        assert_eq!(c.retention_ms, -1);
    }

    #[test]
    fn bad_values_name_the_key_and_change_nothing() {
        let mut c = LogConfig::default();
        for (k, v) in [
            ("segment.bytes", "abc"),
            ("segment.bytes", "3"),
            ("retention.ms", "-2"),
            ("cleanup.policy", "forever"),
            ("compression.type", "none"),
            ("compression.gzip.level", "10"),
            ("min.cleanable.dirty.ratio", "1.5"),
            ("message.timestamp.type", "Now"),
        ] {
            let e = c.update([("segment.ms", "5"), (k, v)]).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidArgument(m) if m.contains(k)),
                "{e}"
            );
            assert_eq!(c, LogConfig::default());
        }
    }

    #[test]
    fn timestamp_difference_fills_before_and_after() {
        let c = LogConfig::from_pairs([(TIMESTAMP_DIFFERENCE, "1000")]).unwrap();
        assert_eq!(
            (c.timestamp_before_max_ms, c.timestamp_after_max_ms),
            (1000, 1000)
        );
        let c = LogConfig::from_pairs([
            (TIMESTAMP_DIFFERENCE, "1000"),
            ("message.timestamp.after.max.ms", "5"),
        ])
        .unwrap();
        assert_eq!(
            (c.timestamp_before_max_ms, c.timestamp_after_max_ms),
            (i64::MAX, 5)
        );
    }
}
