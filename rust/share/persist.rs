//! What a share partition persists: the state batches of Kafka's share coordinator
//! (`__share_group_state`'s ShareSnapshot and ShareUpdate values) and the merge of a snapshot
//! with the updates after it, which is what ReadShareGroupState answers and what a share
//! partition recovers from.

use std::collections::BTreeMap;

use super::RecordState;

/// UNINITIALIZED_START_OFFSET is the start offset of a share partition the group coordinator
/// has initialized but no share partition has resolved yet (Kafka's
/// `PartitionFactory.UNINITIALIZED_START_OFFSET`): the leader resolves it by the group's
/// `share.auto.offset.reset` on its first fetch.
pub const UNINITIALIZED_START_OFFSET: i64 = -1;

/// StateBatch is one persisted range: offsets `first_offset..=last_offset`, all in
/// `delivery_state` (never [`RecordState::Acquired`]: an acquisition is not persisted) after
/// `delivery_count` deliveries. Kafka's `PersisterStateBatch` and the StateBatches entries of
/// ShareSnapshot and ShareUpdate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateBatch {
    pub first_offset: i64,
    pub last_offset: i64,
    pub delivery_state: RecordState,
    pub delivery_count: i16,
}

/// ShareUpdate is one WriteShareGroupState of a share partition, the value of a ShareUpdate
/// record: the start offset after the change, the epochs it was written under, and only the
/// ranges that changed. `delivery_complete_count` is the number of acknowledged or archived
/// records at or above the start offset in the window (4.2's DeliveryCompleteCount).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareUpdate {
    pub state_epoch: i32,
    pub leader_epoch: i32,
    pub start_offset: i64,
    pub delivery_complete_count: i32,
    pub state_batches: Vec<StateBatch>,
}

/// PersistedState is a share partition's whole persisted state, the value of a ShareSnapshot
/// record (and what ReadShareGroupState returns): the start offset (or
/// [`UNINITIALIZED_START_OFFSET`]), the epochs, and the state batches at or above the start
/// offset, ascending and disjoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistedState {
    pub state_epoch: i32,
    pub leader_epoch: i32,
    pub start_offset: i64,
    pub state_batches: Vec<StateBatch>,
}

impl PersistedState {
    /// initialized is the snapshot InitializeShareGroupState writes: a start offset (`-1` to
    /// resolve by `share.auto.offset.reset`) and no batches.
    pub fn initialized(state_epoch: i32, start_offset: i64) -> PersistedState {
        PersistedState {
            state_epoch,
            leader_epoch: -1,
            start_offset,
            state_batches: Vec::new(),
        }
    }

    /// apply merges one update into the state as the share coordinator does: a start offset
    /// other than `-1` replaces the old one, the update's batches replace whatever they overlap
    /// (a later write of an offset wins), ranges below the start offset are dropped, and
    /// adjacent ranges with the same state and count are joined. Deterministic; the result
    /// depends only on the state and the update.
    pub fn apply(&mut self, update: &ShareUpdate) {
        if update.start_offset != UNINITIALIZED_START_OFFSET {
            self.start_offset = update.start_offset;
        }
        self.leader_epoch = update.leader_epoch;
        let mut ranges: BTreeMap<i64, StateBatch> = self
            .state_batches
            .iter()
            .map(|b| (b.first_offset, *b))
            .collect();
        for new in &update.state_batches {
            overlay(&mut ranges, *new);
        }
        self.state_batches = normalize(ranges.into_values(), self.start_offset);
    }
}

/// overlay writes `new` over `ranges`, trimming or splitting the ranges it overlaps.
fn overlay(ranges: &mut BTreeMap<i64, StateBatch>, new: StateBatch) {
    let from = ranges
        .range(..=new.first_offset)
        .next_back()
        .map(|(k, _)| *k)
        .unwrap_or(new.first_offset);
    let hit: Vec<StateBatch> = ranges
        .range(from..=new.last_offset)
        .map(|(_, b)| *b)
        .filter(|b| b.last_offset >= new.first_offset)
        .collect();
    for old in hit {
        ranges.remove(&old.first_offset);
        if old.first_offset < new.first_offset {
            let mut left = old;
            left.last_offset = new.first_offset - 1;
            ranges.insert(left.first_offset, left);
        }
        if old.last_offset > new.last_offset {
            let mut right = old;
            right.first_offset = new.last_offset + 1;
            ranges.insert(right.first_offset, right);
        }
    }
    ranges.insert(new.first_offset, new);
}

/// normalize drops what lies below `start_offset` and joins adjacent equal ranges; the input
/// is ascending and disjoint.
pub(super) fn normalize(
    batches: impl IntoIterator<Item = StateBatch>,
    start_offset: i64,
) -> Vec<StateBatch> {
    let mut out: Vec<StateBatch> = Vec::new();
    for mut b in batches {
        if b.last_offset < start_offset {
            continue;
        }
        b.first_offset = b.first_offset.max(start_offset);
        match out.last_mut() {
            Some(prev)
                if prev.last_offset + 1 == b.first_offset
                    && prev.delivery_state == b.delivery_state
                    && prev.delivery_count == b.delivery_count =>
            {
                prev.last_offset = b.last_offset;
            }
            _ => out.push(b),
        }
    }
    out
}
