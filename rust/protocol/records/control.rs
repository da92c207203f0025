//! Control records: the records of control batches, keyed `version int16, type int16` (Kafka's
//! `ControlRecordType`). Transaction markers (types 0 abort, 1 commit) carry the value
//! `version int16, coordinator_epoch int32` (Kafka's `EndTransactionMarker`).

use super::batch::{BatchFields, Record, RecordBatch, TimestampType};
use crate::errors::{Corruption, Error, Result};

/// ControlRecordType is the type of a control record, with Kafka's ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    Abort,
    Commit,
    LeaderChange,
    SnapshotHeader,
    SnapshotFooter,
    KraftVersion,
    KraftVoters,
    /// A type this version does not know; Kafka's clients skip such records.
    Unknown(i16),
}

impl ControlRecordType {
    /// from_id maps Kafka's type id.
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            2 => ControlRecordType::LeaderChange,
            3 => ControlRecordType::SnapshotHeader,
            4 => ControlRecordType::SnapshotFooter,
            5 => ControlRecordType::KraftVersion,
            6 => ControlRecordType::KraftVoters,
            n => ControlRecordType::Unknown(n),
        }
    }

    /// id is Kafka's type id.
    pub fn id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::LeaderChange => 2,
            ControlRecordType::SnapshotHeader => 3,
            ControlRecordType::SnapshotFooter => 4,
            ControlRecordType::KraftVersion => 5,
            ControlRecordType::KraftVoters => 6,
            ControlRecordType::Unknown(n) => n,
        }
    }

    /// name is Kafka's enum name ("ABORT", "COMMIT", ... or "UNKNOWN").
    pub fn name(self) -> &'static str {
        match self {
            ControlRecordType::Abort => "ABORT",
            ControlRecordType::Commit => "COMMIT",
            ControlRecordType::LeaderChange => "LEADER_CHANGE",
            ControlRecordType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlRecordType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlRecordType::KraftVersion => "KRAFT_VERSION",
            ControlRecordType::KraftVoters => "KRAFT_VOTERS",
            ControlRecordType::Unknown(_) => "UNKNOWN",
        }
    }
}

/// invalid is a control record that does not read (Kafka's `InvalidRecordException`).
fn invalid(m: String) -> Error {
    Error::corrupt(Corruption::Record, m)
}

/// ControlRecordKey is the key of a control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlRecordKey {
    pub version: i16,
    pub kind: ControlRecordType,
}

impl ControlRecordKey {
    /// parse reads a control record key as Kafka's `ControlRecordType.parseTypeId` does: at least
    /// four bytes, a non-negative version (newer versions are read as version 0).
    pub fn parse(key: Option<&[u8]>) -> Result<Self> {
        let key = key.unwrap_or(&[]);
        if key.len() < 4 {
            return Err(invalid(format!(
                "control record key has {} bytes, needs at least 4",
                key.len()
            )));
        }
        let version = i16::from_be_bytes([key[0], key[1]]);
        if version < 0 {
            return Err(invalid(format!("invalid control record version {version}")));
        }
        Ok(ControlRecordKey {
            version,
            kind: ControlRecordType::from_id(i16::from_be_bytes([key[2], key[3]])),
        })
    }

    /// encode is the 4-byte key.
    pub fn encode(&self) -> [u8; 4] {
        let mut k = [0u8; 4];
        k[..2].copy_from_slice(&self.version.to_be_bytes());
        k[2..].copy_from_slice(&self.kind.id().to_be_bytes());
        k
    }
}

/// EndTransactionMarker is a commit or abort marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndTransactionMarker {
    /// commit is true for COMMIT, false for ABORT.
    pub commit: bool,
    pub coordinator_epoch: i32,
}

impl EndTransactionMarker {
    /// parse reads a marker from a control record, as Kafka's `EndTransactionMarker.deserialize`
    /// does: the key must be ABORT or COMMIT, the value at least 6 bytes with a non-negative
    /// version (newer versions are read as version 0).
    pub fn parse(record: &Record) -> Result<Self> {
        let key = ControlRecordKey::parse(record.key.as_deref())?;
        let commit = match key.kind {
            ControlRecordType::Commit => true,
            ControlRecordType::Abort => false,
            k => {
                return Err(invalid(format!(
                    "control record type {} is not a transaction marker",
                    k.name()
                )))
            }
        };
        let value = record.value.as_deref().unwrap_or(&[]);
        if value.len() < 6 {
            return Err(invalid(format!(
                "end transaction marker value has {} bytes, needs at least 6",
                value.len()
            )));
        }
        let version = i16::from_be_bytes([value[0], value[1]]);
        if version < 0 {
            return Err(invalid(format!(
                "invalid end transaction marker version {version}"
            )));
        }
        let coordinator_epoch = i32::from_be_bytes([value[2], value[3], value[4], value[5]]);
        Ok(EndTransactionMarker {
            commit,
            coordinator_epoch,
        })
    }

    /// record is the marker as a control record at `offset` and `timestamp` (key and value
    /// version 0).
    pub fn record(&self, offset: i64, timestamp: i64) -> Record {
        let kind = if self.commit {
            ControlRecordType::Commit
        } else {
            ControlRecordType::Abort
        };
        let mut value = vec![0u8; 6];
        value[2..].copy_from_slice(&self.coordinator_epoch.to_be_bytes());
        Record {
            offset,
            timestamp,
            key: Some(ControlRecordKey { version: 0, kind }.encode().to_vec()),
            value: Some(value),
            headers: Vec::new(),
        }
    }

    /// batch is the control batch a transaction coordinator writes for this marker, as Kafka's
    /// `MemoryRecords.withEndTransactionMarker` builds it: one record, transactional, control,
    /// CreateTime, no base sequence.
    pub fn batch(
        &self,
        base_offset: i64,
        timestamp: i64,
        partition_leader_epoch: i32,
        producer_id: i64,
        producer_epoch: i16,
    ) -> RecordBatch {
        RecordBatch {
            fields: BatchFields {
                base_offset,
                partition_leader_epoch,
                timestamp_type: TimestampType::CreateTime,
                is_transactional: true,
                is_control: true,
                last_offset_delta: 0,
                base_timestamp: timestamp,
                max_timestamp: timestamp,
                producer_id,
                producer_epoch,
                base_sequence: -1,
                ..BatchFields::default()
            },
            records: vec![self.record(base_offset, timestamp)],
        }
    }
}
