//! SharePartition: the in-flight window of one (share group, topic-partition), Kafka 4.2's
//! `SharePartition` (core/src/main/java/kafka/server/share/SharePartition.java) with
//! `InFlightBatch` and `InFlightState`, as a pure state machine.

use std::collections::BTreeMap;

use super::persist::{normalize, PersistedState, ShareUpdate, StateBatch};
use super::{
    AcknowledgeType, AcknowledgementBatch, AcquireMode, AcquiredRecords, FetchedBatch, RecordState,
    SessionRelease, ShareConfig,
};
use crate::errors::{Error, ErrorCode};

/// Acquired is what one acquire took: the ranges now held by the member, with their delivery
/// counts, ascending, and how many records they count (Kafka's `ShareAcquiredRecords`; the count
/// of a whole-batch acquisition is the batch's length, gaps included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acquired {
    pub records: Vec<AcquiredRecords>,
    pub count: i32,
}

/// RecordView is one offset's state as the window holds it, for inspection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordView<'a> {
    pub state: RecordState,
    pub delivery_count: i16,
    /// member holds the record while it is ACQUIRED; None otherwise.
    pub member: Option<&'a str>,
    /// lock_deadline_ms is when the acquisition lock of an ACQUIRED record expires.
    pub lock_deadline_ms: Option<i64>,
}

/// How an update changes the delivery count (Kafka's `DeliveryCountOps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CountOp {
    Increase,
    Decrease,
    Keep,
}

/// InFlightState is the state of one record, or of every record of a batch tracked whole.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InFlightState {
    state: RecordState,
    delivery_count: i16,
    member: Option<String>,
    deadline_ms: Option<i64>,
}

impl InFlightState {
    /// try_update is Kafka's `InFlightState.tryUpdateState`: a release to AVAILABLE of a record
    /// already delivered `max_delivery_count` times archives it instead (but for a release
    /// that takes the delivery back); the transition must be one RecordState allows; the count
    /// does not change on archiving. Leaving ACQUIRED drops the lock.
    fn try_update(
        &mut self,
        new: RecordState,
        op: CountOp,
        max_delivery_count: i16,
        member: Option<&str>,
    ) -> bool {
        let mut new = new;
        if new == RecordState::Available
            && op != CountOp::Decrease
            && self.delivery_count >= max_delivery_count
        {
            new = RecordState::Archived;
        }
        if !self.state.can_become(new) {
            return false;
        }
        if new != RecordState::Archived {
            self.delivery_count = match op {
                CountOp::Increase => self.delivery_count.saturating_add(1),
                CountOp::Decrease => self.delivery_count - 1,
                CountOp::Keep => self.delivery_count,
            };
        }
        self.state = new;
        self.member = member.map(str::to_owned);
        if new != RecordState::Acquired {
            self.deadline_ms = None;
        }
        true
    }

    fn held_by(&self, member: &str) -> bool {
        self.member.as_deref() == Some(member)
    }
}

/// InFlightBatch is a range of the window: tracked whole until something touches part of it,
/// then per offset (`offsets[i]` is offset `first + i`), as Kafka's `InFlightBatch` splits into
/// its `offsetState`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InFlightBatch {
    first: i64,
    last: i64,
    whole: InFlightState,
    offsets: Option<Vec<InFlightState>>,
}

impl InFlightBatch {
    fn split(&mut self) {
        if self.offsets.is_none() {
            let n = (self.last - self.first + 1) as usize;
            self.offsets = Some(vec![self.whole.clone(); n]);
        }
    }

    fn state_at(&self, offset: i64) -> &InFlightState {
        match &self.offsets {
            Some(o) => &o[(offset - self.first) as usize],
            None => &self.whole,
        }
    }
}

/// GapWindow remembers, after recovery, that offsets missing between persisted batches are
/// records to acquire as new (they were acquired but never written), until the window's end
/// moves past the recovered end offset (Kafka's `GapWindow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GapWindow {
    end_offset: i64,
    gap_start: i64,
}

/// SharePartition is the share-partition state machine of one (group, topic-partition): the
/// start and end offsets, the in-flight records between them and who holds them. It does no
/// I/O and reads no clock: every call that starts or checks a lock takes `now_ms`, and every
/// change Kafka persists comes back as a [`ShareUpdate`] the caller must write to the share
/// coordinator's state before it answers the request that caused it. Not thread safe; one
/// caller at a time (Kafka holds the partition's write lock for each of these calls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharePartition {
    config: ShareConfig,
    state_epoch: i32,
    leader_epoch: i32,
    start_offset: i64,
    end_offset: i64,
    cached: BTreeMap<i64, InFlightBatch>,
    find_next_fetch_offset: bool,
    gap_window: Option<GapWindow>,
    throttle_limit: i16,
}

fn invalid_record_state(message: &str) -> Error {
    Error::kafka(ErrorCode::InvalidRecordState, message)
}

fn invalid_request(message: &str) -> Error {
    Error::kafka(ErrorCode::InvalidRequest, message)
}

fn is_terminal(state: RecordState) -> bool {
    matches!(state, RecordState::Acknowledged | RecordState::Archived)
}

/// push_write appends one changed range, joining it to the previous one when adjacent and equal.
fn push_write(writes: &mut Vec<StateBatch>, first: i64, last: i64, s: &InFlightState) {
    if let Some(prev) = writes.last_mut() {
        if prev.last_offset + 1 == first
            && prev.delivery_state == s.state
            && prev.delivery_count == s.delivery_count
        {
            prev.last_offset = last;
            return;
        }
    }
    writes.push(StateBatch {
        first_offset: first,
        last_offset: last,
        delivery_state: s.state,
        delivery_count: s.delivery_count,
    });
}

/// accumulate appends per-offset acquisitions, joining consecutive offsets with the same
/// delivery count into one range (Kafka's `ShareFetchUtils.accumulateAcquiredRecords`).
fn accumulate(result: &mut Vec<AcquiredRecords>, per_offset: Vec<AcquiredRecords>) {
    let mut cur: Option<AcquiredRecords> = None;
    for r in per_offset {
        cur = match cur {
            Some(mut c)
                if c.last_offset + 1 == r.first_offset && c.delivery_count == r.delivery_count =>
            {
                c.last_offset = r.last_offset;
                Some(c)
            }
            Some(c) => {
                result.push(c);
                Some(r)
            }
            None => Some(r),
        };
    }
    result.extend(cur);
}

/// last_offset_of_batch_with is the last offset of the fetched batch holding `offset`, or
/// `offset` when no fetched batch holds it (Kafka's `lastOffsetFromBatchWithRequestOffset`).
fn last_offset_of_batch_with(batches: &[FetchedBatch], offset: i64) -> i64 {
    let prev = batches
        .iter()
        .take_while(|b| offset >= b.base_offset)
        .last();
    match prev {
        Some(b) if offset <= b.last_offset => b.last_offset,
        _ => offset,
    }
}

impl SharePartition {
    /// new is a share partition starting at `start_offset` with nothing in flight: a partition
    /// whose persisted start offset was `-1`, resolved by the caller from the group's
    /// `share.auto.offset.reset` (latest: the high watermark; earliest: the log start offset;
    /// by_duration: the offset for now minus the duration).
    pub fn new(
        config: ShareConfig,
        state_epoch: i32,
        leader_epoch: i32,
        start_offset: i64,
    ) -> Self {
        let throttle_limit = ((config.max_delivery_count + 1) / 2).max(2);
        SharePartition {
            config,
            state_epoch,
            leader_epoch,
            start_offset,
            end_offset: start_offset,
            cached: BTreeMap::new(),
            find_next_fetch_offset: false,
            gap_window: None,
            throttle_limit,
        }
    }

    /// recover is a share partition loaded from its persisted state (a snapshot merged with its
    /// updates, [`PersistedState::apply`]), as Kafka's `maybeInitialize` loads
    /// ReadShareGroupState's answer: every batch comes back owned by nobody with its state and
    /// delivery count, the end offset is the last batch's end, offsets missing between batches
    /// are acquired later as new records, and a finished prefix moves the start offset at once.
    /// A start offset of `-1` must be resolved by the caller first (INVALID_REQUEST otherwise);
    /// a batch below the start offset, reversed, out of order or ACQUIRED is corrupt state
    /// (UNKNOWN_SERVER_ERROR, the partition fails to initialize).
    pub fn recover(
        config: ShareConfig,
        leader_epoch: i32,
        persisted: &PersistedState,
    ) -> Result<Self, Error> {
        if persisted.start_offset < 0 {
            return Err(invalid_request(
                "The share partition's start offset is uninitialized; resolve share.auto.offset.reset first.",
            ));
        }
        let mut sp = SharePartition::new(
            config,
            persisted.state_epoch,
            leader_epoch,
            persisted.start_offset,
        );
        let corrupt = || {
            Error::kafka(
                ErrorCode::UnknownServerError,
                "Failed to initialize the share partition: invalid persisted state batches.",
            )
        };
        let mut gap_start = -1;
        let mut prev_last = sp.start_offset - 1;
        for b in &persisted.state_batches {
            if b.first_offset < sp.start_offset
                || b.last_offset < b.first_offset
                || b.first_offset <= prev_last
                || b.delivery_state == RecordState::Acquired
            {
                return Err(corrupt());
            }
            if gap_start == -1 && b.first_offset > prev_last + 1 {
                gap_start = prev_last + 1;
            }
            prev_last = b.last_offset;
            sp.cached.insert(
                b.first_offset,
                InFlightBatch {
                    first: b.first_offset,
                    last: b.last_offset,
                    whole: InFlightState {
                        state: b.delivery_state,
                        delivery_count: b.delivery_count,
                        member: None,
                        deadline_ms: None,
                    },
                    offsets: None,
                },
            );
        }
        if let Some((_, last)) = sp.cached.last_key_value() {
            sp.find_next_fetch_offset = true;
            sp.end_offset = last.last;
            if gap_start != -1 {
                sp.gap_window = Some(GapWindow {
                    end_offset: sp.end_offset,
                    gap_start,
                });
            }
            sp.maybe_advance();
        }
        Ok(sp)
    }

    /// start_offset is the SPSO: every offset below it is acknowledged or archived.
    pub fn start_offset(&self) -> i64 {
        self.start_offset
    }

    /// end_offset is the SPEO: the last offset acquired so far (equal to the start offset
    /// when the window is empty).
    pub fn end_offset(&self) -> i64 {
        self.end_offset
    }

    /// state_epoch is the state epoch the partition writes under (from the persisted state).
    pub fn state_epoch(&self) -> i32 {
        self.state_epoch
    }

    /// config is the configuration the partition runs with.
    pub fn config(&self) -> &ShareConfig {
        &self.config
    }

    /// set_record_lock_duration_ms changes the lock duration of the locks started from now on
    /// (acquire, Renew): the group's `share.record.lock.duration.ms` can change at any time, and
    /// Kafka reads it each time it starts a lock. Locks already running keep their deadline.
    pub fn set_record_lock_duration_ms(&mut self, record_lock_duration_ms: i64) {
        self.config.record_lock_duration_ms = record_lock_duration_ms;
    }

    /// in_flight_records is `SPEO - SPSO + 1`, or 0 with an empty window: the count
    /// `group.share.partition.max.record.locks` limits.
    pub fn in_flight_records(&self) -> i64 {
        if self.cached.is_empty() {
            0
        } else {
            self.end_offset - self.start_offset + 1
        }
    }

    /// record is one offset's state, or None when the window does not hold it.
    pub fn record(&self, offset: i64) -> Option<RecordView<'_>> {
        let (_, b) = self.cached.range(..=offset).next_back()?;
        if offset > b.last {
            return None;
        }
        let s = b.state_at(offset);
        Some(RecordView {
            state: s.state,
            delivery_count: s.delivery_count,
            member: s.member.as_deref(),
            lock_deadline_ms: s.deadline_ms,
        })
    }

    /// can_acquire_records says whether a fetch may acquire now (Kafka's
    /// `canAcquireRecords`): always when records inside the window wait for redelivery,
    /// otherwise only while the in-flight count is below `max_in_flight_records`.
    pub fn can_acquire_records(&mut self) -> bool {
        if self.next_fetch_offset() != self.end_offset + 1 {
            return true;
        }
        self.in_flight_records() < self.config.max_in_flight_records as i64
    }

    fn gap_active(&self) -> bool {
        matches!(self.gap_window, Some(g) if g.end_offset == self.end_offset)
    }

    /// next_fetch_offset is where the next log read starts (Kafka's `nextFetchOffset`): the
    /// first AVAILABLE offset in the window (or the first offset of a recovered gap) once
    /// something was released or timed out, else the offset after the end offset (the end
    /// offset itself when the window is empty).
    pub fn next_fetch_offset(&mut self) -> i64 {
        let past_window = self
            .cached
            .last_key_value()
            .is_none_or(|(_, b)| self.start_offset > b.last);
        if past_window {
            self.find_next_fetch_offset = false;
            return self.end_offset;
        }
        if !self.find_next_fetch_offset {
            return self.end_offset + 1;
        }
        let mut gap_start = self
            .gap_window
            .filter(|_| self.gap_active())
            .map(|g| g.gap_start);
        for (key, b) in &self.cached {
            if let Some(g) = gap_start {
                if *key > g {
                    return g;
                }
                gap_start = Some((b.last + 1).max(g));
            }
            match &b.offsets {
                None => {
                    if b.whole.state == RecordState::Available {
                        return b.first;
                    }
                }
                Some(o) => {
                    if let Some(i) = o.iter().position(|s| s.state == RecordState::Available) {
                        return b.first + i as i64;
                    }
                }
            }
        }
        self.find_next_fetch_offset = false;
        self.end_offset + 1
    }

    /// next_deadline is the earliest acquisition-lock deadline in the window; call
    /// [`SharePartition::expire`] then.
    pub fn next_deadline(&self) -> Option<i64> {
        let mut min: Option<i64> = None;
        for b in self.cached.values() {
            let mut see = |d: Option<i64>| {
                if let Some(d) = d {
                    min = Some(min.map_or(d, |m| m.min(d)));
                }
            };
            match &b.offsets {
                None => see(b.whole.deadline_ms),
                Some(o) => o.iter().for_each(|s| see(s.deadline_ms)),
            }
        }
        min
    }

    /// acquire takes records for `member` from what a log read at `fetch_offset` returned
    /// (`batches`: the log batches read, ascending) as Kafka's `SharePartition.acquire` does:
    ///
    /// - at most `max_fetch_records`, and no new records once `max_in_flight_records` are in
    ///   flight (records inside the window can still be redelivered);
    /// - in [`AcquireMode::BatchOptimized`] the limit is soft: a log batch is taken whole, and
    ///   new records come back in ranges split at log-batch boundaries every `batch_size`
    ///   records; in [`AcquireMode::RecordLimit`] at most `max_fetch_records` are taken, the
    ///   rest of the batch stays AVAILABLE in the window;
    /// - AVAILABLE records already in the window are re-acquired with their delivery count + 1
    ///   (per offset where the window tracks offsets); ACQUIRED and finished ones are skipped;
    ///   records that were delivered often (from half the delivery limit) are handed out in
    ///   smaller groups so that one bad record cannot archive a whole batch;
    /// - window records between `fetch_offset` and the first batch's base offset (removed by
    ///   compaction) are archived.
    ///
    /// Each acquired record is locked until `now_ms + record_lock_duration_ms`. Nothing is
    /// persisted (Kafka writes no state on acquire).
    #[allow(clippy::too_many_arguments)]
    pub fn acquire(
        &mut self,
        member: &str,
        mode: AcquireMode,
        batch_size: i32,
        max_fetch_records: i32,
        fetch_offset: i64,
        batches: &[FetchedBatch],
        now_ms: i64,
    ) -> Acquired {
        let (Some(first_batch), Some(last_batch)) = (batches.first(), batches.last()) else {
            return Acquired::default();
        };
        if max_fetch_records <= 0 || last_batch.last_offset < self.start_offset {
            return Acquired::default();
        }
        let (last_to_acquire, mut max_records) = self.last_offset_and_max_records(
            fetch_offset,
            max_fetch_records,
            last_batch.last_offset,
        );
        if max_records <= 0 {
            return Acquired::default();
        }
        let deadline = now_ms.saturating_add(self.config.record_lock_duration_ms);
        let record_limit = mode == AcquireMode::RecordLimit;
        let mut base = first_batch.base_offset;
        self.archive_stale(fetch_offset, base);

        // Align the read with the window: up to the start offset when nothing lies below it
        // (a recovered start inside a log batch), or back to the window batch it starts in.
        match self.cached.range(..=base).next_back() {
            None if base < self.start_offset => base = self.start_offset,
            Some((k, b)) if b.last >= base => base = *k,
            _ => {}
        }
        let lo = first_batch.base_offset.min(base);
        let keys: Vec<i64> = if lo <= last_to_acquire {
            self.cached
                .range(lo..=last_to_acquire)
                .map(|(k, _)| *k)
                .collect()
        } else {
            Vec::new()
        };
        if keys.is_empty() {
            return self.acquire_new(
                member,
                batches,
                record_limit,
                base,
                last_to_acquire,
                batch_size,
                max_records,
                deadline,
            );
        }
        let sub_last = self.cached[keys.last().unwrap()].last;

        let mut result = Vec::new();
        let mut acquired: i64 = 0;
        let mut maybe_gap_start = base;
        for key in keys {
            if acquired >= max_records {
                break;
            }
            if self.gap_active() {
                if maybe_gap_start < key {
                    let got = self.acquire_new(
                        member,
                        batches,
                        record_limit,
                        maybe_gap_start,
                        key - 1,
                        batch_size,
                        max_records - acquired,
                        deadline,
                    );
                    result.extend(got.records);
                    acquired += got.count as i64;
                }
                maybe_gap_start = self.cached[&key].last + 1;
                if acquired >= max_records {
                    break;
                }
            }
            let b = &self.cached[&key];
            let full_match = b.first >= first_batch.base_offset && b.last <= last_to_acquire;
            let remaining = max_records - acquired;
            let record_limit_subset = record_limit && b.last - b.first + 1 > remaining;
            let throttle = self.should_throttle(b, first_batch.base_offset, last_to_acquire);
            if throttle && acquired > 0 {
                max_records = 0;
                break;
            }
            if !full_match || b.offsets.is_some() || record_limit_subset || throttle {
                let b = self.cached.get_mut(&key).unwrap();
                if b.offsets.is_none() {
                    if b.whole.state != RecordState::Available {
                        continue;
                    }
                    b.split();
                }
                let n = self.acquire_subset(
                    member,
                    record_limit,
                    remaining,
                    first_batch.base_offset,
                    last_to_acquire,
                    key,
                    &mut result,
                    deadline,
                );
                acquired += n;
                if throttle && n > 0 {
                    max_records = 0;
                    break;
                }
                continue;
            }
            let max_dc = self.config.max_delivery_count;
            let b = self.cached.get_mut(&key).unwrap();
            if b.whole.state != RecordState::Available
                || !b.whole.try_update(
                    RecordState::Acquired,
                    CountOp::Increase,
                    max_dc,
                    Some(member),
                )
            {
                continue;
            }
            b.whole.deadline_ms = Some(deadline);
            result.push(AcquiredRecords {
                first_offset: b.first,
                last_offset: b.last,
                delivery_count: b.whole.delivery_count,
            });
            acquired += b.last - b.first + 1;
        }
        if acquired < max_records && sub_last < last_to_acquire {
            let got = self.acquire_new(
                member,
                batches,
                record_limit,
                sub_last + 1,
                last_to_acquire,
                batch_size,
                max_records - acquired,
                deadline,
            );
            result.extend(got.records);
            acquired += got.count as i64;
        }
        if let Some(last) = result.last() {
            self.update_gap_start(last.last_offset + 1);
        }
        Acquired {
            records: result,
            count: acquired as i32,
        }
    }

    /// last_offset_and_max_records applies the in-flight limit (Kafka's
    /// `lastOffsetAndMaxRecordsToAcquire`): past the limit only a read inside the window may
    /// acquire, up to the end offset.
    fn last_offset_and_max_records(
        &self,
        fetch_offset: i64,
        max_fetch: i32,
        last: i64,
    ) -> (i64, i64) {
        let max_fetch = max_fetch as i64;
        let mut max =
            max_fetch.min(self.config.max_in_flight_records as i64 - self.in_flight_records());
        let mut last_to_acquire = last;
        if max <= 0 && fetch_offset <= self.end_offset {
            max = max_fetch.min(self.end_offset - fetch_offset + 1);
            last_to_acquire = last.min(self.end_offset);
        }
        (last_to_acquire, max)
    }

    /// acquire_new acquires records the window does not hold yet (Kafka's
    /// `acquireNewBatchRecords` and `createBatches`).
    #[allow(clippy::too_many_arguments)]
    fn acquire_new(
        &mut self,
        member: &str,
        batches: &[FetchedBatch],
        record_limit: bool,
        first_offset: i64,
        last_offset: i64,
        batch_size: i32,
        max_records: i64,
        deadline: i64,
    ) -> Acquired {
        let mut first = first_offset;
        if self.cached.is_empty() && self.end_offset > first {
            first = self.end_offset;
        }
        // Never a new record below the start offset. Kafka only guards this for an empty
        // window; after the log start offset passed the window a read can begin inside a log
        // batch that starts below it, and Kafka would acquire the records below the start.
        if first < self.start_offset {
            first = self.start_offset;
        }
        let mut last = last_offset;
        if max_records < last - first + 1 {
            last = last_offset_of_batch_with(batches, first + max_records - 1);
            if self.gap_active() && last > last_offset {
                last = last_offset;
            }
        }
        if last < first {
            return Acquired::default();
        }
        let records = self.create_batches(
            member,
            batches,
            record_limit,
            max_records,
            first,
            last,
            batch_size,
            deadline,
        );
        if self.cached.first_key_value().map(|(k, _)| *k) == Some(first) {
            self.start_offset = first;
        }
        if last > self.end_offset {
            self.end_offset = last;
        }
        if record_limit {
            last = records[0].last_offset;
        }
        self.update_gap_start(last + 1);
        Acquired {
            records,
            count: (last - first + 1) as i32,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn create_batches(
        &mut self,
        member: &str,
        batches: &[FetchedBatch],
        record_limit: bool,
        max_records: i64,
        first: i64,
        last: i64,
        batch_size: i32,
        deadline: i64,
    ) -> Vec<AcquiredRecords> {
        let mut result = Vec::new();
        let mut current = first;
        if !record_limit && last - first + 1 > batch_size as i64 {
            for b in batches {
                if b.base_offset > last {
                    break;
                }
                if b.base_offset - current >= batch_size as i64 {
                    result.push(AcquiredRecords {
                        first_offset: current,
                        last_offset: b.base_offset - 1,
                        delivery_count: 1,
                    });
                    current = b.base_offset;
                }
            }
        }
        result.push(AcquiredRecords {
            first_offset: current,
            last_offset: last,
            delivery_count: 1,
        });
        let acquired = InFlightState {
            state: RecordState::Acquired,
            delivery_count: 1,
            member: Some(member.to_owned()),
            deadline_ms: Some(deadline),
        };
        if record_limit {
            let r = &mut result[0];
            if r.last_offset - r.first_offset + 1 > max_records {
                // The batch is kept whole in the window, but only its first `max_records`
                // offsets are taken; the rest wait, never delivered, for the next fetch.
                let limit = r.first_offset + max_records - 1;
                let offsets = (r.first_offset..=r.last_offset)
                    .map(|o| {
                        if o <= limit {
                            acquired.clone()
                        } else {
                            InFlightState {
                                state: RecordState::Available,
                                delivery_count: 0,
                                member: None,
                                deadline_ms: None,
                            }
                        }
                    })
                    .collect();
                self.cached.insert(
                    r.first_offset,
                    InFlightBatch {
                        first: r.first_offset,
                        last: r.last_offset,
                        whole: acquired.clone(),
                        offsets: Some(offsets),
                    },
                );
                self.find_next_fetch_offset = true;
                r.last_offset = limit;
                result.truncate(1);
                return result;
            }
        }
        for r in &result {
            self.cached.insert(
                r.first_offset,
                InFlightBatch {
                    first: r.first_offset,
                    last: r.last_offset,
                    whole: acquired.clone(),
                    offsets: None,
                },
            );
        }
        result
    }

    /// should_throttle: an AVAILABLE record in the requested range has been delivered at
    /// least half the delivery limit times (Kafka's `shouldThrottleRecordsDelivery`).
    fn should_throttle(&self, b: &InFlightBatch, req_first: i64, req_last: i64) -> bool {
        match &b.offsets {
            None => {
                b.whole.state == RecordState::Available
                    && b.whole.delivery_count >= self.throttle_limit
            }
            Some(o) => {
                o.iter()
                    .enumerate()
                    .filter(|(i, s)| {
                        let off = b.first + *i as i64;
                        off >= req_first && off <= req_last && s.state == RecordState::Available
                    })
                    .map(|(_, s)| s.delivery_count)
                    .max()
                    .unwrap_or(0)
                    >= self.throttle_limit
            }
        }
    }

    /// acquire_subset acquires the AVAILABLE offsets of a per-offset batch within the request
    /// (Kafka's `acquireSubsetBatchRecords`), with the throttling of records delivered often:
    /// a record on its last delivery goes out alone, and records past half the limit go out in
    /// ever smaller groups.
    #[allow(clippy::too_many_arguments)]
    fn acquire_subset(
        &mut self,
        member: &str,
        record_limit: bool,
        max_fetch_records: i64,
        req_first: i64,
        req_last: i64,
        key: i64,
        result: &mut Vec<AcquiredRecords>,
        deadline: i64,
    ) -> i64 {
        let max_dc = self.config.max_delivery_count;
        let throttle_limit = self.throttle_limit;
        let b = self.cached.get_mut(&key).unwrap();
        let first = b.first;
        let offsets = b.offsets.as_mut().unwrap();
        let len = offsets.len() as i64;
        let mut acquired = 0i64;
        let mut max_while_throttled = -1i64;
        let mut per_offset = Vec::new();
        for (i, s) in offsets.iter_mut().enumerate() {
            let off = first + i as i64;
            if off < req_first {
                continue;
            }
            if off > req_last {
                break;
            }
            if s.state != RecordState::Available {
                continue;
            }
            let count = s.delivery_count;
            if max_dc > 2 && count == max_dc - 1 && acquired > 0 {
                break;
            }
            if count >= throttle_limit && max_while_throttled < 0 {
                let shift = (count - throttle_limit + 1).clamp(0, 62) as u32;
                max_while_throttled = (len >> shift).max(1);
            }
            if !s.try_update(
                RecordState::Acquired,
                CountOp::Increase,
                max_dc,
                Some(member),
            ) {
                continue;
            }
            s.deadline_ms = Some(deadline);
            per_offset.push(AcquiredRecords {
                first_offset: off,
                last_offset: off,
                delivery_count: s.delivery_count,
            });
            acquired += 1;
            if s.delivery_count == max_dc && max_dc > 2 {
                break;
            }
            if record_limit && acquired == max_fetch_records {
                break;
            }
            if max_while_throttled > 0 && acquired == max_while_throttled {
                break;
            }
        }
        accumulate(result, per_offset);
        acquired
    }

    /// archive_stale archives AVAILABLE window records in `fetch_offset..base_offset`: the read
    /// started past them, so compaction removed them (Kafka's `maybeArchiveStaleBatches`). Not
    /// persisted, as in Kafka; the next write carries the start offset past them.
    fn archive_stale(&mut self, fetch_offset: i64, base_offset: i64) {
        if self.cached.is_empty() || fetch_offset >= base_offset {
            return;
        }
        let mut from = fetch_offset;
        if let Some((k, b)) = self.cached.range(..=fetch_offset).next_back() {
            if b.last >= fetch_offset {
                from = *k;
            }
        }
        if self.archive_available(from, fetch_offset, base_offset) {
            self.find_next_fetch_offset = true;
        }
    }

    /// update_log_start_offset follows the log start offset past the start offset (retention,
    /// DeleteRecords; a read answered OFFSET_OUT_OF_RANGE), as Kafka's `updateCacheAndOffsets`
    /// does: AVAILABLE records below it are archived and the start offset jumps to it. Records
    /// held below it stay held until they are released or their lock ends, and are then
    /// archived; their acknowledgements are ignored. Nothing is persisted here (Kafka writes it
    /// with the next change).
    pub fn update_log_start_offset(&mut self, log_start_offset: i64) {
        if log_start_offset <= self.start_offset {
            return;
        }
        if self.cached.is_empty() {
            self.start_offset = log_start_offset;
            self.end_offset = log_start_offset;
            return;
        }
        let first_key = *self.cached.first_key_value().unwrap().0;
        if self.archive_available(first_key, self.start_offset, log_start_offset) {
            self.find_next_fetch_offset = true;
        }
        self.start_offset = log_start_offset;
        if self.end_offset < self.start_offset {
            self.end_offset = self.start_offset;
        }
    }

    /// archive_available archives the AVAILABLE records of `first..end` in the window batches
    /// from key `from_key` (Kafka's `archiveRecords` from AVAILABLE): a batch wholly inside
    /// and tracked whole is archived whole, any other is tracked per offset.
    fn archive_available(&mut self, from_key: i64, first: i64, end: i64) -> bool {
        if from_key >= end {
            return false;
        }
        let keys: Vec<i64> = self.cached.range(from_key..end).map(|(k, _)| *k).collect();
        let mut any = false;
        let archive = |s: &mut InFlightState| {
            s.state = RecordState::Archived;
            s.member = None;
            s.deadline_ms = None;
        };
        for key in keys {
            let b = self.cached.get_mut(&key).unwrap();
            let full_match = b.first >= first && b.last < end;
            if full_match && b.offsets.is_none() {
                if b.whole.state == RecordState::Available {
                    archive(&mut b.whole);
                    any = true;
                }
                continue;
            }
            if b.offsets.is_none() {
                if b.whole.state != RecordState::Available {
                    continue;
                }
                b.split();
            }
            let first_offset = b.first;
            for (i, s) in b.offsets.as_mut().unwrap().iter_mut().enumerate() {
                let off = first_offset + i as i64;
                if off >= first && off < end && s.state == RecordState::Available {
                    archive(s);
                    any = true;
                }
            }
        }
        any
    }

    fn update_gap_start(&mut self, offset: i64) {
        if let Some(g) = self.gap_window.as_mut() {
            if g.end_offset == self.end_offset && offset <= g.end_offset {
                g.gap_start = offset;
            } else {
                self.gap_window = None;
            }
        }
    }

    /// acknowledge applies a member's acknowledgement batches (ascending) as Kafka's
    /// `SharePartition.acknowledge` does, all or nothing: on any error the window is left as it
    /// was. Types: 0 Gap and 3 Reject archive, 1 Accept acknowledges, 2 Release makes the
    /// record AVAILABLE again (ARCHIVED once delivered `max_delivery_count` times), 4 Renew
    /// restarts the lock at `now_ms` (validate with [`super::validate_acknowledgement_batches`]
    /// first; Renew is only legal when the request says so). Batches wholly below the start
    /// offset are ignored. Errors: INVALID_REQUEST for an unknown type or a range past the
    /// window's records; INVALID_RECORD_STATE for an offset the window does not hold, or that
    /// is not ACQUIRED by `member`. On success, the write to persist (None when only locks were
    /// renewed); the start offset has then advanced past any finished prefix.
    pub fn acknowledge(
        &mut self,
        member: &str,
        batches: &[AcknowledgementBatch],
        now_ms: i64,
    ) -> Result<Option<ShareUpdate>, Error> {
        // The batches as they were before this call touched them: an acknowledgement changes
        // batches in place (it splits, never adds or removes), so putting these back undoes it.
        let mut undo: BTreeMap<i64, InFlightBatch> = BTreeMap::new();
        let mut writes = Vec::new();
        let mut result = Ok(());
        for batch in batches {
            result = self.acknowledge_batch(member, batch, now_ms, &mut writes, &mut undo);
            if result.is_err() {
                break;
            }
        }
        if let Err(e) = result {
            for (key, b) in undo {
                self.cached.insert(key, b);
            }
            return Err(e);
        }
        Ok(self.finish_write(writes))
    }

    fn acknowledge_batch(
        &mut self,
        member: &str,
        batch: &AcknowledgementBatch,
        now_ms: i64,
        writes: &mut Vec<StateBatch>,
        undo: &mut BTreeMap<i64, InFlightBatch>,
    ) -> Result<(), Error> {
        let types: Vec<AcknowledgeType> = batch
            .acknowledge_types
            .iter()
            .map(|t| AcknowledgeType::from_id(*t))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                invalid_request(&format!(
                    "Invalid acknowledge type: {:?}",
                    batch.acknowledge_types
                ))
            })?;
        if types.is_empty() {
            return Err(invalid_request("Invalid acknowledge type: []"));
        }
        if batch.last_offset < self.start_offset {
            return Ok(());
        }
        // The window's batches the acknowledgement covers (Kafka's
        // fetchSubMapForAcknowledgementBatch).
        let mut floor = self
            .cached
            .range(..=batch.first_offset)
            .next_back()
            .map(|(k, _)| *k);
        if floor.is_none() {
            if batch.first_offset < self.start_offset && batch.last_offset >= self.start_offset {
                floor = self
                    .cached
                    .range(..=self.start_offset)
                    .next_back()
                    .map(|(k, _)| *k);
            }
            if floor.is_none() {
                return Err(invalid_record_state(
                    "Batch record not found. The request batch offsets are not found in the cache.",
                ));
            }
        }
        let keys: Vec<i64> = self
            .cached
            .range(floor.unwrap()..=batch.last_offset.max(floor.unwrap()))
            .map(|(k, _)| *k)
            .collect();
        let sub_last = self.cached[keys.last().unwrap()].last;
        if sub_last < batch.first_offset {
            return Err(invalid_request(
                "Batch record not found. The first offset in request is past acquired records.",
            ));
        }
        if batch.last_offset > sub_last {
            return Err(invalid_request(
                "Batch record not found. The last offset in request is past acquired records.",
            ));
        }
        let lock_ms = self.config.record_lock_duration_ms;
        let max_dc = self.config.max_delivery_count;
        let start = self.start_offset;
        for key in keys {
            let b = self.cached.get_mut(&key).unwrap();
            if b.last < start {
                continue;
            }
            undo.entry(key).or_insert_with(|| b.clone());
            if b.offsets.is_none() {
                match b.whole.member.as_deref() {
                    None => return Err(invalid_record_state(
                        "The batch cannot be acknowledged. The batch is not in the acquired state.",
                    )),
                    Some(m) if m != member => {
                        return Err(invalid_record_state(
                            "Member is not the owner of batch record",
                        ))
                    }
                    _ => {}
                }
            }
            let full_match = b.first >= batch.first_offset && b.last <= batch.last_offset;
            let per_offset_ack = types.len() > 1;
            let start_inside = b.first < start && b.last >= start;
            if !full_match || b.offsets.is_some() || per_offset_ack || start_inside {
                if b.offsets.is_none() {
                    if b.whole.state != RecordState::Acquired {
                        return Err(invalid_record_state(
                            "The batch cannot be acknowledged. The subset batch is not in the acquired state.",
                        ));
                    }
                    b.split();
                }
                let first = b.first;
                for (i, s) in b.offsets.as_mut().unwrap().iter_mut().enumerate() {
                    let off = first + i as i64;
                    if off < batch.first_offset || off < start {
                        continue;
                    }
                    if off > batch.last_offset {
                        break;
                    }
                    if s.state != RecordState::Acquired {
                        return Err(invalid_record_state(
                            "The offset cannot be acknowledged. The offset is not acquired.",
                        ));
                    }
                    if !s.held_by(member) {
                        return Err(invalid_record_state("Member is not the owner of offset"));
                    }
                    let ty = if per_offset_ack {
                        types[(off - batch.first_offset) as usize]
                    } else {
                        types[0]
                    };
                    match ty.record_state() {
                        None => s.deadline_ms = Some(now_ms.saturating_add(lock_ms)),
                        Some(new) => {
                            if !s.try_update(new, CountOp::Keep, max_dc, None) {
                                return Err(invalid_record_state(
                                    "Unable to acknowledge records for the batch",
                                ));
                            }
                            push_write(writes, off, off, s);
                        }
                    }
                }
            } else {
                if b.whole.state != RecordState::Acquired {
                    return Err(invalid_record_state(
                        "The batch cannot be acknowledged. The batch is not in the acquired state.",
                    ));
                }
                match types[0].record_state() {
                    None => b.whole.deadline_ms = Some(now_ms.saturating_add(lock_ms)),
                    Some(new) => {
                        if !b.whole.try_update(new, CountOp::Keep, max_dc, None) {
                            return Err(invalid_record_state(
                                "Unable to acknowledge records for the batch",
                            ));
                        }
                        push_write(writes, b.first, b.last, &b.whole);
                    }
                }
            }
        }
        Ok(())
    }

    /// release_member releases every record `member` holds, as Kafka's
    /// `releaseAcquiredRecords` does when the member's share session closes (epoch -1), its
    /// connection drops or it leaves: back to AVAILABLE, or ARCHIVED below the start offset or
    /// (4.2, [`SessionRelease::CountDelivery`]) at the delivery limit. The write to persist, if
    /// anything was held.
    pub fn release_member(&mut self, member: &str) -> Option<ShareUpdate> {
        let start = self.start_offset;
        let max_dc = self.config.max_delivery_count;
        let op = match self.config.session_release {
            SessionRelease::CountDelivery => CountOp::Keep,
            SessionRelease::UndoDelivery => CountOp::Decrease,
        };
        let mut writes = Vec::new();
        for b in self.cached.values_mut() {
            if b.offsets.is_none()
                && b.whole.state == RecordState::Acquired
                && b.whole.held_by(member)
                && b.first < start
                && b.last >= start
            {
                b.split();
            }
            match b.offsets.as_mut() {
                Some(o) => {
                    for (i, s) in o.iter_mut().enumerate() {
                        let off = b.first + i as i64;
                        if s.state == RecordState::Acquired && s.held_by(member) {
                            let new = if off < start {
                                RecordState::Archived
                            } else {
                                RecordState::Available
                            };
                            if s.try_update(new, op, max_dc, None) {
                                push_write(&mut writes, off, off, s);
                            }
                        }
                    }
                }
                None => {
                    if b.whole.state == RecordState::Acquired && b.whole.held_by(member) {
                        let new = if b.last < start {
                            RecordState::Archived
                        } else {
                            RecordState::Available
                        };
                        if b.whole.try_update(new, op, max_dc, None) {
                            push_write(&mut writes, b.first, b.last, &b.whole);
                        }
                    }
                }
            }
        }
        self.finish_write(writes)
    }

    /// expire releases every record whose acquisition lock ended at or before `now_ms`, as
    /// Kafka's acquisition-lock timer does: back to AVAILABLE with its delivery count kept, or
    /// ARCHIVED once delivered `max_delivery_count` times or when below the start offset. The
    /// write to persist, if any lock had ended.
    pub fn expire(&mut self, now_ms: i64) -> Option<ShareUpdate> {
        let start = self.start_offset;
        let max_dc = self.config.max_delivery_count;
        let expired = |s: &InFlightState| {
            s.state == RecordState::Acquired && s.deadline_ms.is_some_and(|d| d <= now_ms)
        };
        let mut writes = Vec::new();
        for b in self.cached.values_mut() {
            if b.offsets.is_none() && expired(&b.whole) && b.first < start && b.last >= start {
                b.split();
            }
            match b.offsets.as_mut() {
                Some(o) => {
                    for (i, s) in o.iter_mut().enumerate() {
                        let off = b.first + i as i64;
                        if expired(s) {
                            let new = if off < start {
                                RecordState::Archived
                            } else {
                                RecordState::Available
                            };
                            if s.try_update(new, CountOp::Keep, max_dc, None) {
                                push_write(&mut writes, off, off, s);
                            }
                        }
                    }
                }
                None => {
                    if expired(&b.whole) {
                        let new = if b.last < start {
                            RecordState::Archived
                        } else {
                            RecordState::Available
                        };
                        if b.whole.try_update(new, CountOp::Keep, max_dc, None) {
                            push_write(&mut writes, b.first, b.last, &b.whole);
                        }
                    }
                }
            }
        }
        self.finish_write(writes)
    }

    /// finish_write turns the changed ranges into the update to persist and advances the start
    /// offset: a release makes the next fetch look for AVAILABLE records again.
    fn finish_write(&mut self, writes: Vec<StateBatch>) -> Option<ShareUpdate> {
        if writes.is_empty() {
            return None;
        }
        if writes
            .iter()
            .any(|w| w.delivery_state == RecordState::Available)
        {
            self.find_next_fetch_offset = true;
        }
        self.maybe_advance();
        Some(ShareUpdate {
            state_epoch: self.state_epoch,
            leader_epoch: self.leader_epoch,
            start_offset: self.start_offset,
            delivery_complete_count: self.delivery_complete_count(),
            state_batches: writes,
        })
    }

    /// delivery_complete_count is the number of finished records at or above the start offset.
    pub fn delivery_complete_count(&self) -> i32 {
        let mut n = 0i64;
        for b in self.cached.values() {
            match &b.offsets {
                None if is_terminal(b.whole.state) && b.last >= self.start_offset => {
                    n += b.last - b.first.max(self.start_offset) + 1
                }
                None => {}
                Some(o) => {
                    n += o
                        .iter()
                        .enumerate()
                        .filter(|(i, s)| {
                            b.first + *i as i64 >= self.start_offset && is_terminal(s.state)
                        })
                        .count() as i64
                }
            }
        }
        n as i32
    }

    /// maybe_advance moves the start offset past a finished prefix of the window and drops the
    /// batches wholly below it, clearing the window when everything in it is finished (Kafka's
    /// `maybeUpdateCachedStateAndOffsets`).
    fn maybe_advance(&mut self) -> bool {
        if !self.can_move_start_offset() {
            return false;
        }
        let Some(last_acked) = self.last_offset_acknowledged() else {
            return false;
        };
        let last_cached = self.cached.last_key_value().unwrap().1.last;
        if last_acked == last_cached {
            // Kafka sets both to last + 1 here, which moves the start back when the log start
            // offset had passed the window (it is put right by the next OFFSET_OUT_OF_RANGE);
            // the start offset never moves back here.
            self.start_offset = self.start_offset.max(last_cached + 1);
            self.end_offset = self.start_offset;
            self.cached.clear();
            return true;
        }
        let first_key = *self.cached.first_key_value().unwrap().0;
        let (entry_key, entry_last) = {
            let (k, b) = self.cached.range(..=last_acked).next_back().unwrap();
            (*k, b.last)
        };
        let last_key_to_remove = if last_acked == entry_last {
            let higher = *self.cached.range(last_acked + 1..).next().unwrap().0;
            if higher > self.start_offset {
                self.start_offset = higher;
            }
            if self.gap_active() {
                self.start_offset = self.start_offset.min(self.gap_window.unwrap().gap_start);
            }
            Some(entry_key)
        } else {
            if last_acked + 1 > self.start_offset {
                self.start_offset = last_acked + 1;
            }
            if entry_key == first_key {
                None
            } else {
                self.cached.range(..entry_key).next_back().map(|(k, _)| *k)
            }
        };
        if let Some(last_key) = last_key_to_remove {
            let drop: Vec<i64> = self
                .cached
                .range(first_key..=last_key)
                .map(|(k, _)| *k)
                .collect();
            for k in drop {
                self.cached.remove(&k);
            }
        }
        true
    }

    fn can_move_start_offset(&self) -> bool {
        let Some((_, b)) = self.cached.range(..=self.start_offset).next_back() else {
            return false;
        };
        if self.start_offset > b.last {
            // The start offset moved past the batch (the log start offset did): it may go if
            // the batch is finished (Kafka reads the batch's state here).
            return match &b.offsets {
                None => is_terminal(b.whole.state),
                Some(o) => o.iter().all(|s| is_terminal(s.state)),
            };
        }
        is_terminal(b.state_at(self.start_offset).state)
    }

    /// last_offset_acknowledged is the end of the window's finished prefix, stopping at a
    /// recovered gap (Kafka's `findLastOffsetAcknowledgedAndMetadata`).
    fn last_offset_acknowledged(&self) -> Option<i64> {
        let mut last = None;
        let gap = self
            .gap_window
            .filter(|_| self.gap_active())
            .map(|g| g.gap_start);
        for b in self.cached.values() {
            if gap.is_some_and(|g| b.last >= g) {
                return last;
            }
            match &b.offsets {
                None => {
                    if !is_terminal(b.whole.state) {
                        return last;
                    }
                    last = Some(b.last);
                }
                Some(o) => {
                    for (i, s) in o.iter().enumerate() {
                        if !is_terminal(s.state) {
                            return last;
                        }
                        last = Some(b.first + i as i64);
                    }
                }
            }
        }
        last
    }

    /// state_batches is the window's durable view: every offset at or above the start offset
    /// that has been delivered and is not ACQUIRED, as persisted state batches (joined when
    /// adjacent and equal). After every member has released its records it equals what
    /// recovery from the written updates gives.
    pub fn state_batches(&self) -> Vec<StateBatch> {
        let mut out = Vec::new();
        for b in self.cached.values() {
            let mut take = |first: i64, last: i64, s: &InFlightState| {
                let never_delivered = s.state == RecordState::Available && s.delivery_count == 0;
                if s.state != RecordState::Acquired && !never_delivered {
                    out.push(StateBatch {
                        first_offset: first,
                        last_offset: last,
                        delivery_state: s.state,
                        delivery_count: s.delivery_count,
                    });
                }
            };
            match &b.offsets {
                None => take(b.first, b.last, &b.whole),
                Some(o) => o.iter().enumerate().for_each(|(i, s)| {
                    let off = b.first + i as i64;
                    take(off, off, s)
                }),
            }
        }
        normalize(out, self.start_offset)
    }

    /// snapshot is the whole persisted state a share coordinator would hold for this window
    /// now (the value of a ShareSnapshot): the start offset and [`SharePartition::state_batches`].
    pub fn snapshot(&self) -> PersistedState {
        PersistedState {
            state_epoch: self.state_epoch,
            leader_epoch: self.leader_epoch,
            start_offset: self.start_offset,
            state_batches: self.state_batches(),
        }
    }
}
