//! Load: a coordinator's state rebuilt from its internal topic, one partition at a time, and
//! which partitions it serves meanwhile (Kafka's `CoordinatorLoaderImpl` and the runtime's
//! per-partition `CoordinatorState`: loading, active, closed).
//!
//! The host replays a partition's record batches, from the log's start, in one call or in
//! chunks; [`replay`] decodes them and hands each record to the coordinator's [`Replay`] state of
//! that partition. While a partition loads, requests for it are answered
//! COORDINATOR_LOAD_IN_PROGRESS; once unloaded, NOT_COORDINATOR, until it is loaded again.

use std::collections::{BTreeMap, BTreeSet};

use crate::errors::{ErrorCode, Result};
use crate::protocol::records::{
    batches, Budget, ControlRecordKey, ControlRecordType, DecodeOptions,
};

/// Replayed is what a coordinator made of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replayed {
    /// Known: a record type the coordinator reads.
    Known,
    /// Unknown: a record type it skips (a later version's, another group type's), as Kafka's
    /// loader skips records whose type it does not know.
    Unknown,
}

/// Replay is a coordinator's state of one partition while it loads: records go in in log
/// order, and the state is handed back when the last chunk is read.
pub trait Replay: Default {
    /// record replays one record of a data batch: its key and its value (None: a tombstone).
    /// `producer_id` is the batch's producer (-1 for none) and `transactional` whether the
    /// batch belongs to a transaction, whose records count once its commit marker is read. A
    /// record that does not decode is an error, which fails the load.
    fn record(
        &mut self,
        producer_id: i64,
        transactional: bool,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<Replayed>;

    /// control replays the record of a control batch of `producer_id`: a transaction's commit
    /// or abort marker, or a control record of another kind.
    fn control(&mut self, producer_id: i64, kind: ControlRecordType) -> Result<()> {
        let _ = (producer_id, kind);
        Ok(())
    }
}

/// Counts are what one load call read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub batches: usize,
    /// records counts the records of data batches, keyless ones included.
    pub records: usize,
    /// unknown counts the records of a type the coordinator skips.
    pub unknown: usize,
}

/// replay decodes `data` (whole record batches of any magic and compression, as the log holds
/// them) into `state`: a data record goes to [`Replay::record`] (a record without a key, which
/// a compacted topic cannot hold, is skipped), a control batch's first record to
/// [`Replay::control`]. A corrupt batch is an error.
pub fn replay<S: Replay>(state: &mut S, data: &[u8], counts: &mut Counts) -> Result<()> {
    let opts = DecodeOptions::default();
    let mut budget = Budget::new(opts.max_decompressed_size);
    for raw in batches(data) {
        let batch = raw?.decode(&opts, &mut budget)?;
        counts.batches += 1;
        let pid = batch.batch.producer_id;
        if batch.batch.is_control {
            if let Some(r) = batch.records().next() {
                let key = ControlRecordKey::parse(r.key)?;
                state.control(pid, key.kind)?;
            }
            continue;
        }
        let transactional = batch.batch.is_transactional;
        for r in batch.records() {
            counts.records += 1;
            let Some(key) = r.key else {
                continue;
            };
            if state.record(pid, transactional, key, r.value)? == Replayed::Unknown {
                counts.unknown += 1;
            }
        }
    }
    Ok(())
}

/// Partitions are the partitions of the internal topic a coordinator loads and gives up, and
/// the [`Replay`] state of each one loading. A partition neither loading nor given up is served
/// (a coordinator serves every partition until told otherwise).
#[derive(Debug)]
pub struct Partitions<S> {
    loading: BTreeMap<i32, S>,
    unowned: BTreeSet<i32>,
}

impl<S> Default for Partitions<S> {
    fn default() -> Self {
        Partitions {
            loading: BTreeMap::new(),
            unowned: BTreeSet::new(),
        }
    }
}

impl<S: Replay> Partitions<S> {
    /// load replays one chunk of `partition` into its state. With `last` it returns the state,
    /// to be applied, and the partition is served again; before, None, and the partition loads.
    /// On an error the chunks read so far are dropped (the partition is no longer loading).
    pub fn load(
        &mut self,
        partition: i32,
        data: &[u8],
        last: bool,
        counts: &mut Counts,
    ) -> Result<Option<S>> {
        let mut state = self.loading.remove(&partition).unwrap_or_default();
        replay(&mut state, data, counts)?;
        if !last {
            self.loading.insert(partition, state);
            return Ok(None);
        }
        self.unowned.remove(&partition);
        Ok(Some(state))
    }
}

impl<S> Partitions<S> {
    /// unload gives `partition` up (a load in progress is dropped) until it is loaded again.
    pub fn unload(&mut self, partition: i32) {
        self.loading.remove(&partition);
        self.unowned.insert(partition);
    }

    /// all_served tells whether every partition is served: nothing loading, nothing given up.
    /// The check requests make first, before they find their partition.
    #[inline]
    pub fn all_served(&self) -> bool {
        self.loading.is_empty() && self.unowned.is_empty()
    }

    /// any_loading tells whether some partition is loading.
    #[inline]
    pub fn any_loading(&self) -> bool {
        !self.loading.is_empty()
    }

    /// error is what a request for `partition` is answered instead of being served:
    /// COORDINATOR_LOAD_IN_PROGRESS while it loads, NOT_COORDINATOR once given up, else None.
    pub fn error(&self, partition: i32) -> Option<ErrorCode> {
        if self.loading.contains_key(&partition) {
            Some(ErrorCode::CoordinatorLoadInProgress)
        } else if self.unowned.contains(&partition) {
            Some(ErrorCode::NotCoordinator)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::appends::batch;
    use crate::protocol::records::EndTransactionMarker;

    /// Log keeps what it replayed: records by key (the last one wins), markers by producer.
    #[derive(Debug, Default, PartialEq)]
    struct Log {
        records: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
        markers: Vec<(i64, ControlRecordType)>,
        transactional: usize,
    }

    impl Replay for Log {
        fn record(
            &mut self,
            _pid: i64,
            transactional: bool,
            key: &[u8],
            value: Option<&[u8]>,
        ) -> Result<Replayed> {
            if key.starts_with(b"?") {
                return Ok(Replayed::Unknown);
            }
            self.transactional += transactional as usize;
            self.records.insert(key.to_vec(), value.map(<[u8]>::to_vec));
            Ok(Replayed::Known)
        }

        fn control(&mut self, producer_id: i64, kind: ControlRecordType) -> Result<()> {
            self.markers.push((producer_id, kind));
            Ok(())
        }
    }

    fn marker(pid: i64, commit: bool) -> Vec<u8> {
        EndTransactionMarker {
            commit,
            coordinator_epoch: 0,
        }
        .batch(5, 1, 0, pid, 0)
        .encode(None)
        .unwrap()
    }

    #[test]
    fn chunks_load_in_order_and_the_partition_waits_for_the_last() {
        let mut p: Partitions<Log> = Partitions::default();
        assert!(p.all_served());
        let mut counts = Counts::default();
        let first = batch(
            1,
            vec![(b"a".to_vec(), Some(b"1".to_vec())), (b"?x".to_vec(), None)],
        );
        assert!(p.load(3, &first, false, &mut counts).unwrap().is_none());
        assert_eq!(p.error(3), Some(ErrorCode::CoordinatorLoadInProgress));
        assert_eq!(p.error(4), None);
        assert!(p.any_loading() && !p.all_served());
        let mut data = batch(
            2,
            vec![(b"a".to_vec(), None), (b"b".to_vec(), Some(b"2".to_vec()))],
        );
        data.extend(marker(9, true));
        let log = p.load(3, &data, true, &mut counts).unwrap().unwrap();
        assert_eq!(
            counts,
            Counts {
                batches: 3,
                records: 4,
                unknown: 1
            }
        );
        assert_eq!(
            log.records,
            BTreeMap::from([(b"a".to_vec(), None), (b"b".to_vec(), Some(b"2".to_vec()))])
        );
        assert_eq!(log.markers, vec![(9, ControlRecordType::Commit)]);
        assert!(p.all_served());
    }

    #[test]
    fn unloading_gives_a_partition_up_until_it_loads_again() {
        let mut p: Partitions<Log> = Partitions::default();
        let mut counts = Counts::default();
        p.load(1, &[], false, &mut counts).unwrap();
        p.unload(1);
        assert_eq!(p.error(1), Some(ErrorCode::NotCoordinator));
        assert!(!p.any_loading());
        p.load(1, &[], true, &mut counts).unwrap().unwrap();
        assert_eq!(p.error(1), None);
    }

    #[test]
    fn a_corrupt_batch_fails_the_load_and_drops_its_chunks() {
        let mut p: Partitions<Log> = Partitions::default();
        let mut counts = Counts::default();
        let good = batch(1, vec![(b"a".to_vec(), Some(b"1".to_vec()))]);
        p.load(2, &good, false, &mut counts).unwrap();
        let mut bad = good.clone();
        let n = bad.len();
        bad[n - 1] ^= 0xff;
        assert!(p.load(2, &bad, true, &mut counts).is_err());
        assert_eq!(p.error(2), None);
        let log = p.load(2, &[], true, &mut counts).unwrap().unwrap();
        assert!(log.records.is_empty(), "the first chunk was dropped");
    }
}
