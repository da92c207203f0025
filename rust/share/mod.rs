//! share: the share partition of Kafka's share groups (KIP-932), the per-(group,
//! topic-partition) state machine a partition leader keeps for a share group: which records
//! are in flight, who holds them, how often they were delivered, and where the group's start
//! offset is. Behaviour is Kafka 4.2's `SharePartition` (`core/.../server/share/`), with
//! `InFlightBatch`, `InFlightState` and `RecordState`, and `KafkaApis.validateAcknowledgementBatches`.
//!
//! Pure: no I/O, no clock, no Python. A broker drives one [`SharePartition`] per share
//! partition it leads:
//!
//! 1. Initialize: read the persisted state (the share coordinator's snapshot merged with its
//!    updates, [`PersistedState::apply`]). When its start offset is
//!    [`UNINITIALIZED_START_OFFSET`], resolve the group's `share.auto.offset.reset` against the
//!    log and call [`SharePartition::new`]; otherwise [`SharePartition::recover`].
//! 2. ShareFetch: when [`SharePartition::can_acquire_records`], read the log from
//!    [`SharePartition::next_fetch_offset`] and pass the log batches read (base and last
//!    offsets, [`FetchedBatch`]) to [`SharePartition::acquire`] with the request's BatchSize,
//!    the MaxRecords left, the acquire mode and `now_ms`; answer with the returned
//!    [`AcquiredRecords`] and the log batches that cover them. Acquiring writes nothing.
//! 3. Acknowledgements (ShareFetch or ShareAcknowledge): check the request with
//!    [`validate_acknowledgement_batches`], then [`SharePartition::acknowledge`]; its error is
//!    the partition's AcknowledgeErrorCode ([`crate::Error::error_code`]: INVALID_REQUEST or
//!    INVALID_RECORD_STATE).
//! 4. Session close (epoch -1), a dropped connection, a member leaving:
//!    [`SharePartition::release_member`].
//! 5. Timers: call [`SharePartition::expire`] at [`SharePartition::next_deadline`], and
//!    before any other call at a `now_ms` past it (Kafka's timer would have fired by then).
//! 6. The log start offset passing the start offset (retention, DeleteRecords, a read
//!    answered OFFSET_OUT_OF_RANGE): [`SharePartition::update_log_start_offset`].
//!
//! Every call that changes what Kafka persists returns a [`ShareUpdate`]: the state batches
//! that changed, the start offset after the change, the epochs. The host appends it (as a
//! ShareUpdate record of `__share_group_state`, or in Kafka a WriteShareGroupState) before it
//! answers the request that caused it, and before it lets another fetch acquire from this
//! partition (Kafka keeps records whose write is pending out of acquisition); acquire never
//! writes. The change is applied at once: Kafka rolls the window back when the write fails,
//! here the host drops the partition and recovers it from what was written (records then held
//! come back AVAILABLE, as after a leader change). The update carries the start offset after
//! the change (Kafka sends the one before and moves it once the write is done; a recovery
//! reaches the same start either way).
//!
//! Memory is bounded by the window: one entry per in-flight batch, and one per offset only
//! for the batches partly acknowledged or acquired, all between the start offset and the end
//! offset, which new acquisitions cannot push past `group.share.partition.max.record.locks`
//! (plus the last log batch of one fetch).
//!
//! Not covered here (the host's part, or later work): `read_committed` filtering of aborted
//! transactions from acquired ranges, the per-partition fetch lock, the partition's
//! initialization states (EMPTY, INITIALIZING, FAILED, FENCED), leader-epoch and state-epoch
//! fencing of writes, and the share coordinator's snapshot cadence.

mod partition;
mod persist;

#[cfg(test)]
mod tests;

pub use partition::{Acquired, RecordView, SharePartition};
pub use persist::{PersistedState, ShareUpdate, StateBatch, UNINITIALIZED_START_OFFSET};

use crate::errors::{Error, ErrorCode};

/// RecordState is the state of an in-flight record (Kafka's `RecordState`; the id is what
/// `__share_group_state` stores).
///
/// - AVAILABLE (0): can be acquired. transition: ACQUIRED on acquire.
/// - ACQUIRED (1): held by one member until it acknowledges or its lock expires; never
///   persisted. transition: AVAILABLE on release, lock expiry or session close (ARCHIVED at
///   the delivery limit or below the start offset); ACKNOWLEDGED on Accept; ARCHIVED on Reject
///   or Gap.
/// - ACKNOWLEDGED (2): accepted; final.
/// - ARCHIVED (4): rejected, a gap, past the delivery limit, or compacted away; final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i8)]
pub enum RecordState {
    Available = 0,
    Acquired = 1,
    Acknowledged = 2,
    Archived = 4,
}

impl RecordState {
    /// id is the state's id in `__share_group_state`.
    pub fn id(self) -> i8 {
        self as i8
    }

    /// from_id is the state of an id, or None for an id Kafka does not define.
    pub fn from_id(id: i8) -> Option<RecordState> {
        match id {
            0 => Some(RecordState::Available),
            1 => Some(RecordState::Acquired),
            2 => Some(RecordState::Acknowledged),
            4 => Some(RecordState::Archived),
            _ => None,
        }
    }

    /// can_become says whether Kafka allows the transition: AVAILABLE only to ACQUIRED,
    /// ACQUIRED to any other state, nothing out of a final state, never to the same state.
    pub fn can_become(self, new: RecordState) -> bool {
        match self {
            _ if self == new => false,
            RecordState::Acknowledged | RecordState::Archived => false,
            RecordState::Available => new == RecordState::Acquired,
            RecordState::Acquired => true,
        }
    }
}

/// AcknowledgeType is an acknowledgement's type as ShareFetch and ShareAcknowledge carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i8)]
pub enum AcknowledgeType {
    /// Gap (0): the offset holds no record (compacted, an aborted transaction's); archived.
    Gap = 0,
    Accept = 1,
    Release = 2,
    Reject = 3,
    /// Renew (4, ShareFetch/ShareAcknowledge v2, KIP-1222): keep the record and restart its lock.
    Renew = 4,
}

impl AcknowledgeType {
    /// from_id is the type of an id, or None outside 0..=4.
    pub fn from_id(id: i8) -> Option<AcknowledgeType> {
        match id {
            0 => Some(AcknowledgeType::Gap),
            1 => Some(AcknowledgeType::Accept),
            2 => Some(AcknowledgeType::Release),
            3 => Some(AcknowledgeType::Reject),
            4 => Some(AcknowledgeType::Renew),
            _ => None,
        }
    }

    /// record_state is the state the type moves a record to (Kafka's
    /// `ACK_TYPE_TO_RECORD_STATE`); None for Renew, which keeps it ACQUIRED.
    pub fn record_state(self) -> Option<RecordState> {
        match self {
            AcknowledgeType::Gap | AcknowledgeType::Reject => Some(RecordState::Archived),
            AcknowledgeType::Accept => Some(RecordState::Acknowledged),
            AcknowledgeType::Release => Some(RecordState::Available),
            AcknowledgeType::Renew => None,
        }
    }
}

/// AcquireMode is ShareFetch v2's ShareAcquireMode (KIP-1206).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AcquireMode {
    /// BatchOptimized (0, and every v1 fetch): MaxRecords is soft, whole log batches are taken.
    BatchOptimized,
    /// RecordLimit (1): MaxRecords is a hard limit.
    RecordLimit,
}

/// SessionRelease is what a session close does to the delivery count of the records it
/// releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionRelease {
    /// CountDelivery: the delivery counts (Kafka 4.2 and later, KAFKA-19972), so a client that
    /// crashes on a record cannot get it forever; at the limit the record is archived.
    CountDelivery,
    /// UndoDelivery: the delivery count goes back by one (Kafka 4.0 and 4.1).
    UndoDelivery,
}

/// ShareConfig is what a share partition takes from the broker's and the group's configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShareConfig {
    /// max_delivery_count: `group.share.delivery.count.limit` (default 5, 2..=10).
    pub max_delivery_count: i16,
    /// max_in_flight_records: `group.share.partition.max.record.locks` (default 2000).
    pub max_in_flight_records: i32,
    /// record_lock_duration_ms: the group's `share.record.lock.duration.ms`, else
    /// `group.share.record.lock.duration.ms` (default 30000).
    pub record_lock_duration_ms: i64,
    pub session_release: SessionRelease,
}

impl Default for ShareConfig {
    /// default is Kafka 4.2's broker defaults.
    fn default() -> Self {
        ShareConfig {
            max_delivery_count: 5,
            max_in_flight_records: 2000,
            record_lock_duration_ms: 30_000,
            session_release: SessionRelease::CountDelivery,
        }
    }
}

/// FetchedBatch is one log batch a fetch read: its base and last offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchedBatch {
    pub base_offset: i64,
    pub last_offset: i64,
}

/// AcquiredRecords is one range a member now holds, as ShareFetch's AcquiredRecords carries
/// it; `delivery_count` is 1 on first delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquiredRecords {
    pub first_offset: i64,
    pub last_offset: i64,
    pub delivery_count: i16,
}

/// AcknowledgementBatch is one AcknowledgementBatches entry: one type for every offset of
/// `first_offset..=last_offset`, or one type per offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcknowledgementBatch {
    pub first_offset: i64,
    pub last_offset: i64,
    pub acknowledge_types: Vec<i8>,
}

/// validate_acknowledgement_batches checks one partition's acknowledgement batches as
/// Kafka 4.2's `KafkaApis.validateAcknowledgementBatches` does before any reaches the share
/// partition; the first bad batch makes the whole partition INVALID_REQUEST: a reversed range,
/// a batch starting below the previous one's last offset (equal is allowed), no types, a
/// per-offset type list of the wrong length, a type outside 0..=3 (0..=4 when the request
/// version supports Renew, `supports_renew`: ShareFetch/ShareAcknowledge v2), or a Renew in a
/// request whose IsRenewAck is false.
pub fn validate_acknowledgement_batches(
    batches: &[AcknowledgementBatch],
    supports_renew: bool,
    is_renew_ack: bool,
) -> Result<(), Error> {
    let max_type = if supports_renew { 4 } else { 3 };
    let mut prev_last = -1i64;
    for b in batches {
        let types = &b.acknowledge_types;
        let bad = if b.first_offset > b.last_offset {
            Some("The first offset of an acknowledgement batch is after its last offset.")
        } else if b.first_offset < prev_last {
            Some("Acknowledgement batches overlap or are not in order.")
        } else if types.is_empty() {
            Some("An acknowledgement batch has no acknowledge types.")
        } else if types.len() > 1 && b.last_offset - b.first_offset != types.len() as i64 - 1 {
            Some("An acknowledgement batch has a type count that does not match its offsets.")
        } else if types.iter().any(|t| *t < 0 || *t > max_type) {
            Some("An acknowledgement batch has an invalid acknowledge type.")
        } else if types.contains(&4) && !is_renew_ack {
            Some("A renew acknowledgement in a request that is not a renew acknowledgement.")
        } else {
            None
        };
        if let Some(message) = bad {
            return Err(Error::kafka(ErrorCode::InvalidRequest, message));
        }
        prev_last = b.last_offset;
    }
    Ok(())
}
