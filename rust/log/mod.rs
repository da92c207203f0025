//! Log: the broker's storage of one topic-partition, in Kafka's file layout (Kafka's
//! `UnifiedLog`, `LocalLog`, `LogSegment`, `LogLoader`, `LogCleaner`).
//!
//! A log owns one folder (the broker names it `<data dir>/<topic>-<partition>`) holding:
//!
//! - segments `<base offset, 20 digits>.log`: v2 record batches as produced, with offsets
//!   assigned, the leader epoch stamped and the CRC checked;
//! - their sparse indexes `.index` (relative offset u32, position u32: one entry per
//!   `index.interval.bytes`) and `.timeindex` (timestamp i64, relative offset u32);
//! - their aborted-transaction indexes `.txnindex`, only for segments holding ABORT markers
//!   (see [`txnindex`]);
//! - producer-state snapshots `<offset>.snapshot` (see [`producer`]): epochs, sequences and open
//!   transactions;
//! - `recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`,
//!   `cleaner-offset-checkpoint` (see [`files::Checkpoint`]) and, after a clean close,
//!   `.kafka_cleanshutdown`.
//!
//! Thread safety: [`Log`] is `Send + Sync`. One `RwLock` guards the segment list, offsets and
//! producer state; appends hold it for writing while they check the producer state, rewrite the
//! base offset and write the batch (validation, CRC checks and recompression are done before
//! taking it). Reads hold it for reading only to pick a segment; they then read bytes that never
//! change with no lock held. `flush` fsyncs with no lock held (appends and reads go on), and
//! `compact` writes cleaned segments with no lock held, taking it only to swap them in.
//!
//! Transactions (Kafka's transaction protocol v1): a producer's first transactional batch opens
//! its transaction, [`Log::append_marker`] writes the coordinator's COMMIT or ABORT control batch
//! and completes it; an aborted transaction goes to the `.txnindex` of the marker's segment.
//! [`Log::first_unstable_offset`] bounds read_committed fetches, and
//! [`Log::aborted_transactions`] answers their aborted-transaction list. The files:
//! `mod.rs` (the log, appends, reads, retention), `open.rs` (recovery), `segment.rs`,
//! `index.rs`, `txnindex.rs`, `producer.rs`, `validate.rs`, `cleaner.rs`, `config.rs`,
//! `files.rs`, `faults.rs`, and `vfs.rs`, through which every file operation goes (a log folder
//! under a registered memory root lives in memory, see [`vfs`]).

pub mod cleaner;
pub mod config;
pub mod faults;
pub mod files;
pub mod index;
pub mod producer;
pub mod segment;
pub mod txnindex;
pub mod validate;
pub mod vfs;

#[cfg(test)]
pub(crate) mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub use cleaner::CompactionReport;
pub use config::{CleanupPolicy, LogConfig, TargetCompression};
use files::{Checkpoint, IoContext};
pub use producer::AppendOrigin;
use producer::{Check, ProducerState};
use segment::{BatchInfo, Segment};
pub use txnindex::AbortedTxn;

use crate::errors::{Error, ErrorCode, Result};
use crate::protocol::records::{set_base_offset, EndTransactionMarker, TimestampType};

/// AppendInfo is what an append answers a producer with (Kafka's `LogAppendInfo` as a
/// ProducePartitionResponse carries it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendInfo {
    pub base_offset: i64,
    pub last_offset: i64,
    /// log_append_time is the time stamped on the batch under LogAppendTime, else -1.
    pub log_append_time: i64,
    pub log_start_offset: i64,
    /// duplicate says the batch was a producer's retry of a batch already in the log: nothing
    /// was appended and the offsets are the original's.
    pub duplicate: bool,
    /// records is how many records were appended (0 for a duplicate).
    pub records: i64,
}

/// RecoveryReport says what opening a log found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// clean says the log was closed cleanly (nothing was scanned past the indexes).
    pub clean: bool,
    pub segments: usize,
    /// batches_checked counts the batches whose CRC and offsets were checked.
    pub batches_checked: u64,
    /// bytes_truncated counts bytes cut at the first bad or torn batch.
    pub bytes_truncated: u64,
    /// indexes_rebuilt counts segments whose indexes were rebuilt from the log.
    pub indexes_rebuilt: usize,
    /// segments_deleted counts segments dropped after a cut, and leftovers of compaction.
    pub segments_deleted: usize,
    /// swaps_completed counts compacted segments whose swap recovery finished.
    pub swaps_completed: usize,
    /// snapshot_offset is the producer snapshot loaded, if any.
    pub snapshot_offset: Option<i64>,
    /// batches_replayed counts batches replayed into the producer state after it.
    pub batches_replayed: u64,
    pub log_start_offset: i64,
    pub log_end_offset: i64,
}

/// MaintenanceReport says what [`Log::maintenance`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaintenanceReport {
    pub rolled: bool,
    pub segments_deleted: usize,
    pub bytes_deleted: u64,
    pub log_start_offset: i64,
    pub producers_expired: usize,
}

/// ProducerInfo is what DescribeProducers tells of one producer of the partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerInfo {
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// last_sequence is its last batch's last sequence (-1: none).
    pub last_sequence: i32,
    pub last_timestamp: i64,
    /// coordinator_epoch is its last marker's coordinator epoch (-1: none).
    pub coordinator_epoch: i32,
    /// current_txn_start_offset is its open transaction's first offset (-1: none).
    pub current_txn_start_offset: i64,
}

/// TimestampOffset answers ListOffsets: a record's timestamp and offset, and the leader epoch
/// of its batch (-1 when unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampOffset {
    pub timestamp: i64,
    pub offset: i64,
    pub leader_epoch: i32,
}

/// FileSlice is a range of whole batches in one segment file, as a fetch returns them. It holds
/// its segment, so its file stays open and its bytes stay the same while the slice lives, even
/// if the segment is deleted or compacted meanwhile: the host may `sendfile` from
/// [`file`](Self::file) at [`position`](Self::position) for [`len`](Self::len) bytes.
#[derive(Debug, Clone)]
pub struct FileSlice {
    segment: Option<Arc<Segment>>,
    position: u64,
    len: usize,
}

impl FileSlice {
    fn empty() -> Self {
        FileSlice {
            segment: None,
            position: 0,
            len: 0,
        }
    }

    /// position is where the range starts in the segment file.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// len is the range's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// file is the open segment file (None for an empty slice).
    pub fn file(&self) -> Option<&vfs::File> {
        self.segment.as_ref().map(|s| s.file())
    }

    /// path is the segment file's path (None for an empty slice).
    pub fn path(&self) -> Option<PathBuf> {
        self.segment.as_ref().map(|s| s.path())
    }

    /// bytes reads the range.
    pub fn bytes(&self) -> Result<Vec<u8>> {
        match &self.segment {
            Some(s) if self.len > 0 => s.read(self.position, self.len),
            _ => Ok(Vec::new()),
        }
    }

    /// append_to reads the range onto the end of `out`.
    pub fn append_to(&self, out: &mut Vec<u8>) -> Result<()> {
        let at = out.len();
        out.resize(at + self.len, 0);
        let r = self.read_into(&mut out[at..]);
        if r.is_err() {
            out.truncate(at);
        }
        r
    }

    /// read_into reads the range into `out`, which must be [`len`](Self::len) bytes.
    pub fn read_into(&self, out: &mut [u8]) -> Result<()> {
        if out.len() != self.len {
            return Err(Error::InvalidArgument(format!(
                "a slice of {} bytes read into {}",
                self.len,
                out.len()
            )));
        }
        match &self.segment {
            Some(s) if self.len > 0 => s.read_into(self.position, out),
            _ => Ok(()),
        }
    }
}

struct State {
    segments: Vec<Arc<Segment>>,
    log_start_offset: i64,
    next_offset: i64,
    recovery_point: i64,
    producers: ProducerState,
    /// dir_dirty: files were created, renamed or deleted since the folder was last synced.
    dir_dirty: bool,
    last_flush_ms: i64,
    recovery_ckpt: Checkpoint,
    start_ckpt: Checkpoint,
    cleaner_ckpt: Checkpoint,
    closed: bool,
    /// delete_horizon is the earliest time a cleaned tombstone may be dropped, if any.
    delete_horizon: Option<i64>,
    /// failed says why the log is offline (a failed fsync, a partial batch that could not be
    /// cut): it takes no appends, answers no reads and is not closed cleanly, so that the next
    /// open recovers it from its last durable point.
    failed: Option<String>,
    /// trash holds the segments taken out of the log, their files renamed `.deleted`, each
    /// with the time (ms) its files are due to be removed (file.delete.delay.ms).
    trash: Vec<(i64, Arc<Segment>)>,
}

impl State {
    fn active(&self) -> &Arc<Segment> {
        self.segments
            .last()
            .expect("a log always has an active segment")
    }

    fn check_open(&self) -> Result<()> {
        if self.closed {
            return Err(Error::kafka(
                ErrorCode::KafkaStorageError,
                "the log is closed",
            ));
        }
        if let Some(why) = &self.failed {
            return Err(Error::kafka(
                ErrorCode::KafkaStorageError,
                format!("the log is offline until the broker restarts: {why}"),
            ));
        }
        Ok(())
    }

    /// segment_index is the index of the segment that holds `offset` (the last with a base
    /// offset at or below it).
    fn segment_index(&self, offset: i64) -> usize {
        self.segments
            .partition_point(|s| s.base_offset <= offset)
            .saturating_sub(1)
    }

    fn size(&self) -> u64 {
        self.segments.iter().map(|s| s.size()).sum()
    }
}

/// Log is the storage of one topic-partition. See the module doc for its files and locking.
pub struct Log {
    dir: PathBuf,
    config: RwLock<Arc<LogConfig>>,
    state: RwLock<State>,
    /// flush_lock lets one flush run at a time: a flush that waited finds its data synced.
    flush_lock: Mutex<()>,
    /// clean_lock lets one compaction run at a time.
    clean_lock: Mutex<()>,
}

fn now_wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Log {
    fn read_state(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_state(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// config is the log's current config.
    pub fn config(&self) -> Arc<LogConfig> {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// topic_partition is the name of the log's folder, which the broker gives as
    /// `<topic>-<partition>` (Kafka's `UnifiedLog` too reads its `TopicPartition` from its
    /// folder's name); errors about its records name the log by it.
    pub fn topic_partition(&self) -> std::borrow::Cow<'_, str> {
        self.dir.file_name().unwrap_or_default().to_string_lossy()
    }

    /// dir is the log's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// update_config applies changed topic configs (IncrementalAlterConfigs); all or nothing.
    pub fn update_config<'a>(
        &self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<()> {
        let mut c = (*self.config()).clone();
        c.update(pairs)?;
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(c);
        Ok(())
    }

    /// set_config replaces the config.
    pub fn set_config(&self, config: LogConfig) {
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(config);
    }

    /// append validates a Produce request's record set for this partition (Kafka's
    /// LogValidator for a client), assigns offsets from the log end offset, stamps
    /// `leader_epoch` (and the append time under LogAppendTime), recompresses if
    /// `compression.type` says so, checks the producer's sequence and transaction, and writes
    /// it, rolling the segment first if needed. A producer's first transactional batch opens its
    /// transaction. Errors are [`Error::Kafka`] with the code Kafka answers (CORRUPT_MESSAGE,
    /// INVALID_RECORD, MESSAGE_TOO_LARGE, INVALID_TIMESTAMP, RECORD_LIST_TOO_LARGE,
    /// INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_TXN_STATE), or
    /// [`Error::Io`] when the disk fails (the log is then as it was before the call). The data is
    /// in the page cache on return: call [`flush`](Self::flush) for acks=all.
    pub fn append(&self, records: &[u8], now_ms: i64, leader_epoch: i32) -> Result<AppendInfo> {
        self.append_from(records, now_ms, leader_epoch, AppendOrigin::Client)
    }

    /// append_from is [`append`](Self::append) for a batch from `origin`: with
    /// [`AppendOrigin::Coordinator`] (a coordinator's own batch to its internal topic, as the
    /// group coordinator writes transactional offset commits with sequence -1) the producer's
    /// epoch and transaction are checked but not its sequence, and no retry is recognised.
    pub fn append_from(
        &self,
        records: &[u8],
        now_ms: i64,
        leader_epoch: i32,
        origin: AppendOrigin,
    ) -> Result<AppendInfo> {
        let cfg = self.config();
        let mut p = validate::prepare(
            records,
            &cfg,
            now_ms,
            leader_epoch,
            &self.topic_partition(),
            origin,
        )?;
        let size = p.bytes.len() as u64;
        if size > cfg.segment_bytes {
            return Err(Error::kafka(
                ErrorCode::RecordListTooLarge,
                format!(
                    "message batch size is {size} bytes, which exceeds the maximum configured segment size of {}",
                    cfg.segment_bytes
                ),
            ));
        }
        let mut st = self.write_state();
        st.check_open()?;
        if let Check::Duplicate(b) = st.producers.check(&p.header, origin)? {
            return Ok(AppendInfo {
                base_offset: b.first_offset,
                last_offset: b.last_offset,
                log_append_time: if cfg.timestamp_type == TimestampType::LogAppendTime {
                    b.timestamp
                } else {
                    -1
                },
                log_start_offset: st.log_start_offset,
                duplicate: true,
                records: 0,
            });
        }
        let base = st.next_offset;
        set_base_offset(&mut p.bytes, base)?;
        p.header.base_offset = base;
        let last = p.header.last_offset();
        self.maybe_roll(&mut st, &cfg, size, p.header.max_timestamp, last, now_ms)?;
        let info = BatchInfo {
            base_offset: base,
            last_offset: last,
            max_timestamp: p.header.max_timestamp,
            offset_of_max_timestamp: last,
        };
        let active = st.active().clone();
        if let Err(e) = active.append(&p.bytes, &info, cfg.index_interval_bytes) {
            if active.is_torn() {
                st.failed = Some(e.to_string());
            }
            return Err(e);
        }
        st.next_offset = last + 1;
        st.producers.update(&p.header);
        Ok(AppendInfo {
            base_offset: base,
            last_offset: last,
            log_append_time: p.log_append_time,
            log_start_offset: st.log_start_offset,
            duplicate: false,
            records: p.records,
        })
    }

    /// append_marker writes the end-transaction marker of producer `producer_id` at
    /// `producer_epoch` from a transaction coordinator at `coordinator_epoch`: one control
    /// batch (transactional, control, no sequence, timestamp `now_ms`) holding a COMMIT (if
    /// `commit`) or ABORT record, which takes one offset (Kafka's
    /// `MemoryRecords.withEndTransactionMarker` appended with AppendOrigin.COORDINATOR). An
    /// epoch older than the producer's is INVALID_PRODUCER_EPOCH; a coordinator epoch older than
    /// the producer's last marker's is TRANSACTION_COORDINATOR_FENCED. The marker completes the
    /// producer's open transaction; an aborted one goes to the aborted-transaction index. A
    /// marker for a producer with no open transaction is written all the same and completes
    /// nothing (a coordinator resending markers after a restart does that).
    pub fn append_marker(
        &self,
        producer_id: i64,
        producer_epoch: i16,
        commit: bool,
        coordinator_epoch: i32,
        now_ms: i64,
        leader_epoch: i32,
    ) -> Result<AppendInfo> {
        if producer_id < 0 || producer_epoch < 0 {
            return Err(Error::kafka(
                ErrorCode::InvalidRecord,
                format!(
                    "a transaction marker needs a producer id and epoch, not {producer_id} and {producer_epoch}"
                ),
            ));
        }
        let marker = EndTransactionMarker {
            commit,
            coordinator_epoch,
        };
        let mut bytes = marker
            .batch(0, now_ms, leader_epoch, producer_id, producer_epoch)
            .encode(None)?;
        let cfg = self.config();
        let mut st = self.write_state();
        st.check_open()?;
        st.producers
            .check_marker(producer_id, producer_epoch, coordinator_epoch)?;
        let base = st.next_offset;
        set_base_offset(&mut bytes, base)?;
        self.maybe_roll(&mut st, &cfg, bytes.len() as u64, now_ms, base, now_ms)?;
        let info = BatchInfo {
            base_offset: base,
            last_offset: base,
            max_timestamp: now_ms,
            offset_of_max_timestamp: base,
        };
        let active = st.active().clone();
        if let Err(e) = active.append(&bytes, &info, cfg.index_interval_bytes) {
            if active.is_torn() {
                st.failed = Some(e.to_string());
            }
            return Err(e);
        }
        st.next_offset = base + 1;
        let done = st.producers.complete_txn(
            producer_id,
            producer_epoch,
            coordinator_epoch,
            commit,
            base,
            now_ms,
        );
        if let Some(t) = done.filter(|t| t.aborted) {
            active.push_aborted(AbortedTxn {
                producer_id,
                first_offset: t.first_offset,
                last_offset: t.last_offset,
                last_stable_offset: t.last_stable_offset,
            });
        }
        Ok(AppendInfo {
            base_offset: base,
            last_offset: base,
            log_append_time: -1,
            log_start_offset: st.log_start_offset,
            duplicate: false,
            records: 1,
        })
    }

    /// first_unstable_offset is the first offset of the earliest open transaction (Kafka's
    /// `firstUnstableOffset`), raised to the log start offset if below it; None when no
    /// transaction is open. The last stable offset is the smaller of it and the high watermark.
    pub fn first_unstable_offset(&self) -> Option<i64> {
        let st = self.read_state();
        st.producers
            .first_unstable_offset()
            .map(|o| o.max(st.log_start_offset))
    }

    /// ongoing_transaction is the first offset of producer `producer_id`'s open transaction.
    pub fn ongoing_transaction(&self, producer_id: i64) -> Option<i64> {
        self.read_state()
            .producers
            .producers
            .get(&producer_id)
            .and_then(|e| e.current_txn_first_offset)
    }

    /// producers lists the producers the log remembers, by id (DescribeProducers).
    pub fn producers(&self) -> Vec<ProducerInfo> {
        let st = self.read_state();
        let mut out: Vec<ProducerInfo> = st
            .producers
            .producers
            .iter()
            .map(|(id, e)| ProducerInfo {
                producer_id: *id,
                producer_epoch: e.epoch,
                last_sequence: e.last_seq(),
                last_timestamp: e.last_timestamp,
                coordinator_epoch: e.coordinator_epoch,
                current_txn_start_offset: e.current_txn_first_offset.unwrap_or(-1),
            })
            .collect();
        out.sort_unstable_by_key(|p| p.producer_id);
        out
    }

    /// aborted_transactions is Kafka's `collectAbortedTransactions` for a read_committed fetch
    /// from `start_offset` whose data ends before `end_offset`: every aborted transaction whose
    /// range (first offset to its ABORT marker) overlaps [`start_offset`, `end_offset`), found in
    /// the aborted-transaction indexes from the segment holding `start_offset` on, as
    /// (producer id, first offset), by marker offset. Entries whose marker is below the log
    /// start offset are never returned.
    pub fn aborted_transactions(&self, start_offset: i64, end_offset: i64) -> Vec<AbortedTxn> {
        let (segments, from) = {
            let st = self.read_state();
            let from = start_offset.max(st.log_start_offset);
            let i = st.segment_index(from);
            (st.segments[i..].to_vec(), from)
        };
        let mut out = Vec::new();
        for seg in segments {
            if seg.meta().txns.collect(from, end_offset, &mut out) {
                break;
            }
        }
        out
    }

    /// maybe_roll is Kafka's `maybeRoll`/`shouldRoll`: a new segment when the batch would push
    /// the active one past segment.bytes, when segment.ms passed since its first batch's
    /// timestamp (or its creation), when an index is full, or when the offsets would not fit
    /// its relative offsets.
    fn maybe_roll(
        &self,
        st: &mut State,
        cfg: &LogConfig,
        size: u64,
        max_timestamp: i64,
        last_offset: i64,
        now_ms: i64,
    ) -> Result<()> {
        let seg = st.active().clone();
        let seg_size = seg.size();
        if seg_size == 0 {
            return Ok(());
        }
        let roll = {
            let m = seg.meta();
            let waited = match m.first_timestamp {
                Some(t) if t >= 0 => max_timestamp.saturating_sub(t),
                _ => now_ms.saturating_sub(m.created_ms),
            };
            seg_size + size > cfg.segment_bytes
                || waited > cfg.segment_ms
                || m.index_full(cfg.index_entries(8), cfg.index_entries(12))
                || last_offset - seg.base_offset > i32::MAX as i64
        };
        if roll {
            self.roll(st, now_ms)?;
        }
        Ok(())
    }

    /// roll starts a new active segment at the log end offset, after taking a producer
    /// snapshot there (Kafka's `roll`).
    fn roll(&self, st: &mut State, now_ms: i64) -> Result<()> {
        let base = st.next_offset;
        let old = st.active().clone();
        if old.base_offset == base {
            return Ok(());
        }
        old.on_inactive();
        self.write_snapshot(st, base, false)?;
        let seg = Segment::create(segment::log_path(&self.dir, base), base, now_ms)?;
        st.segments.push(Arc::new(seg));
        st.dir_dirty = true;
        Ok(())
    }

    /// write_snapshot writes the producer state as of `offset` (at the log end offset) and
    /// deletes all but the two latest snapshots. A roll does not fsync it (no fsync under the
    /// lock on the append path): a snapshot cut short by a crash fails its CRC, and opening then
    /// falls back to an older one, or to the log start, and replays the log from there.
    fn write_snapshot(&self, st: &mut State, offset: i64, sync: bool) -> Result<()> {
        let path = self.dir.join(files::name(offset, files::SNAPSHOT_SUFFIX));
        files::write_atomic(&path, &st.producers.encode(offset), sync)?;
        st.dir_dirty = true;
        let mut snaps = list_suffix(&self.dir, files::SNAPSHOT_SUFFIX)?;
        snaps.sort_unstable();
        let n = snaps.len();
        for (o, _) in snaps.into_iter().take(n.saturating_sub(2)) {
            files::remove(&self.dir.join(files::name(o, files::SNAPSHOT_SUFFIX)))?;
        }
        Ok(())
    }

    /// read is Kafka's `LogSegment.read` for a fetch at `offset`: whole batches from the one
    /// segment holding it, starting with the batch that contains `offset`, at most `max_bytes`
    /// (or the first batch whatever its size if `min_one`), none at or past `max_offset` (the
    /// high watermark). OFFSET_OUT_OF_RANGE below the log start offset or past the log end
    /// offset; an empty slice at the end. Records are never re-encoded.
    pub fn read(
        &self,
        offset: i64,
        max_bytes: usize,
        max_offset: i64,
        min_one: bool,
    ) -> Result<FileSlice> {
        let candidates: Vec<(Arc<Segment>, u64)> = {
            let st = self.read_state();
            st.check_open()?;
            if offset < st.log_start_offset || offset > st.next_offset {
                return Err(Error::kafka(
                    ErrorCode::OffsetOutOfRange,
                    format!(
                        "fetch offset {offset} is out of range: log start offset {}, log end offset {}",
                        st.log_start_offset, st.next_offset
                    ),
                ));
            }
            let i = st.segment_index(offset);
            st.segments[i..]
                .iter()
                .map(|s| (s.clone(), s.size()))
                .collect()
        };
        let max_offset = max_offset.max(0);
        for (seg, size) in candidates {
            if offset >= max_offset {
                break;
            }
            let Some(h) = seg.find(offset, size)? else {
                continue;
            };
            if h.base_offset >= max_offset && h.base_offset > offset {
                break;
            }
            let limit = if max_offset >= seg.next_offset() {
                size
            } else {
                match seg.find(max_offset, size)? {
                    Some(m) => m.position,
                    None => size,
                }
            };
            if limit <= h.position {
                break;
            }
            let want = h.position.saturating_add(max_bytes as u64).min(limit);
            let mut end = seg.end_of_whole_batches(h.position, want, size)?;
            if end == h.position && min_one {
                end = (h.position + h.size).min(limit);
            }
            return Ok(FileSlice {
                segment: Some(seg),
                position: h.position,
                len: (end - h.position) as usize,
            });
        }
        Ok(FileSlice::empty())
    }

    /// flush fsyncs every segment with unsynced data, the index and snapshot files and (when
    /// files were created or deleted) the folder, then advances the recovery point. It holds
    /// the log's lock only to list what to sync: appends and reads go on meanwhile, and many
    /// produces waiting for acks=all share one flush (group commit). Returns the offset the log
    /// is durable up to: every append that returned before the call started is below it.
    pub fn flush(&self) -> Result<i64> {
        let _one = self.flush_lock.lock().unwrap_or_else(|e| e.into_inner());
        let (segments, end, dir_dirty) = {
            let mut st = self.write_state();
            st.check_open()?;
            let i = st.segment_index(st.recovery_point);
            let segs: Vec<Arc<Segment>> = st.segments[i..].to_vec();
            let dirty = std::mem::take(&mut st.dir_dirty);
            (segs, st.next_offset, dirty)
        };
        let r = (|| {
            let (active, rolled) = segments.split_last().expect("a log has a segment");
            for s in rolled {
                if s.is_dirty() {
                    s.sync()?;
                }
            }
            if active.is_data_dirty() {
                active.sync_data()?;
            }
            if dir_dirty {
                files::sync_dir(&self.dir)?;
            }
            Ok(())
        })();
        let mut st = self.write_state();
        if let Err(e) = r {
            st.dir_dirty |= dir_dirty;
            if matches!(&e, Error::Io(f) if f.sync) {
                // The kernel may have dropped what it could not write and marked it clean: a
                // later fsync would succeed without it. Nothing written since the last good
                // fsync is ever called durable; recovery at the next start checks it.
                st.failed = Some(e.to_string());
            }
            return Err(e);
        }
        if end > st.recovery_point {
            // The checkpoint only bounds how much recovery scans: it is written after the data
            // it covers was synced, and needs no fsync of its own. Recovery scans the whole
            // segment holding the checkpoint anyway, so it is written only when the recovery
            // point moves to another segment: a flush within one segment writes one file.
            let moved = st.segment_index(end) != st.segment_index(st.recovery_point);
            st.recovery_point = end;
            if moved || st.recovery_ckpt.value().is_none() {
                let created = st.recovery_ckpt.write(end, false)?;
                st.dir_dirty |= created;
            }
        }
        st.last_flush_ms = now_wall_ms();
        Ok(st.recovery_point)
    }

    /// log_start_offset is the first offset a fetch may ask for.
    pub fn log_start_offset(&self) -> i64 {
        self.read_state().log_start_offset
    }

    /// log_end_offset is the offset the next record will get.
    pub fn log_end_offset(&self) -> i64 {
        self.read_state().next_offset
    }

    /// recovery_point is the offset the log is known durable up to.
    pub fn recovery_point(&self) -> i64 {
        self.read_state().recovery_point
    }

    /// unflushed_messages is how many offsets were appended since the last flush (for
    /// flush.messages).
    pub fn unflushed_messages(&self) -> i64 {
        let st = self.read_state();
        st.next_offset - st.recovery_point
    }

    /// last_flush_ms is the wall-clock time of the last flush (for flush.ms); the open time at
    /// first.
    pub fn last_flush_ms(&self) -> i64 {
        self.read_state().last_flush_ms
    }

    /// size is the log's size in bytes.
    pub fn size(&self) -> u64 {
        self.read_state().size()
    }

    /// segment_count is the number of segments, the active one included.
    pub fn segment_count(&self) -> usize {
        self.read_state().segments.len()
    }

    /// segment_bases is the base offset of every segment, oldest first.
    pub fn segment_bases(&self) -> Vec<i64> {
        self.read_state()
            .segments
            .iter()
            .map(|s| s.base_offset)
            .collect()
    }

    /// producer_count is how many producers the log remembers.
    pub fn producer_count(&self) -> usize {
        self.read_state().producers.producers.len()
    }

    fn segments_and_start(&self) -> Result<(Vec<Arc<Segment>>, i64)> {
        let st = self.read_state();
        st.check_open()?;
        Ok((st.segments.clone(), st.log_start_offset))
    }

    /// offset_for_timestamp is ListOffsets for a timestamp (Kafka's `fetchOffsetByTimestamp`):
    /// the first record at or after the log start offset whose timestamp is at least
    /// `timestamp`, found through the time index and a scan; None if there is none.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<TimestampOffset>> {
        let (segments, start) = self.segments_and_start()?;
        for seg in segments {
            let (max, from) = {
                let m = seg.meta();
                if m.max_timestamp < timestamp {
                    continue;
                }
                let o = m
                    .times
                    .lookup(timestamp)
                    .map_or(seg.base_offset, |e| e.offset);
                (
                    m.max_timestamp,
                    m.offsets.lookup(o.max(start)).position as u64,
                )
            };
            let _ = max;
            let size = seg.size();
            let mut pos = from;
            while pos < size {
                let Some(h) = seg.header(pos)? else { break };
                if h.max_timestamp >= timestamp && h.last_offset >= start {
                    let bytes = seg.read(pos, h.size as usize)?;
                    let d = validate::decode_one(&bytes)?;
                    for r in d.records() {
                        if r.timestamp >= timestamp && r.offset >= start {
                            return Ok(Some(TimestampOffset {
                                timestamp: r.timestamp,
                                offset: r.offset,
                                leader_epoch: d.batch.partition_leader_epoch,
                            }));
                        }
                    }
                }
                pos += h.size;
            }
        }
        Ok(None)
    }

    /// max_timestamp is ListOffsets -3 (KIP-734): the record with the largest timestamp (the
    /// first such) and that timestamp; None for a log without timestamps.
    pub fn max_timestamp(&self) -> Result<Option<TimestampOffset>> {
        let (segments, _) = self.segments_and_start()?;
        let mut best: Option<(Arc<Segment>, i64, i64)> = None;
        for s in segments {
            let (ts, off) = {
                let m = s.meta();
                (m.max_timestamp, m.offset_of_max_timestamp)
            };
            if ts >= 0 && best.as_ref().is_none_or(|b| ts > b.1) {
                best = Some((s, ts, off));
            }
        }
        let Some((seg, ts, off)) = best else {
            return Ok(None);
        };
        let size = seg.size();
        let mut pos = seg.meta().offsets.lookup(off).position as u64;
        while pos < size {
            let Some(h) = seg.header(pos)? else { break };
            if h.max_timestamp == ts {
                let bytes = seg.read(pos, h.size as usize)?;
                let d = validate::decode_one(&bytes)?;
                let epoch = d.batch.partition_leader_epoch;
                if d.batch.timestamp_type == TimestampType::LogAppendTime {
                    return Ok(Some(TimestampOffset {
                        timestamp: ts,
                        offset: d.batch.base_offset,
                        leader_epoch: epoch,
                    }));
                }
                let found = d.records().find(|r| r.timestamp == ts).map(|r| r.offset);
                if let Some(offset) = found {
                    return Ok(Some(TimestampOffset {
                        timestamp: ts,
                        offset,
                        leader_epoch: epoch,
                    }));
                }
            }
            pos += h.size;
        }
        Ok(None)
    }

    /// delete_records is DeleteRecords: it moves the log start offset up to `offset` (never
    /// down), persists it, and deletes the segments wholly below it. `offset` past
    /// `high_watermark` is OFFSET_OUT_OF_RANGE. Returns the new log start offset.
    pub fn delete_records(&self, offset: i64, high_watermark: i64) -> Result<i64> {
        if offset > high_watermark || offset < 0 {
            return Err(Error::kafka(
                ErrorCode::OffsetOutOfRange,
                format!(
                    "cannot increment the log start offset to {offset}: it is outside [0, {high_watermark}] (the high watermark)"
                ),
            ));
        }
        let (removed, start) = {
            let mut st = self.write_state();
            st.check_open()?;
            if offset > st.log_start_offset {
                st.log_start_offset = offset;
                let created = st.start_ckpt.write(offset, true)?;
                st.dir_dirty |= created;
            }
            let removed = remove_below_start(&mut st);
            (removed, st.log_start_offset)
        };
        self.delete_segments(removed, now_wall_ms())?;
        Ok(start)
    }

    /// delete_segments disposes of segments already taken out of the log (Kafka's
    /// `deleteSegmentFiles`): their files are renamed `.deleted` and removed by
    /// [`purge`](Self::purge) once file.delete.delay.ms passed (at once if it is 0). Readers
    /// holding one keep reading its open file; the file closes when the last lets go.
    fn delete_segments(&self, removed: Vec<Arc<Segment>>, now_ms: i64) -> Result<()> {
        if removed.is_empty() {
            return Ok(());
        }
        let delay = self.config().file_delete_delay_ms;
        let mut later = Vec::new();
        let mut result = Ok(());
        for s in removed {
            let r = if delay == 0 {
                s.delete_files()
            } else {
                let r = s.mark_deleted();
                later.push((now_ms.saturating_add(delay), s));
                r
            };
            if result.is_ok() {
                result = r;
            }
        }
        let first = {
            let mut st = self.write_state();
            st.trash.extend(later);
            st.dir_dirty = true;
            st.segments.first().map(|s| s.base_offset)
        };
        result?;
        if let Some(first) = first {
            self.delete_snapshots_below(first)?;
        }
        Ok(())
    }

    /// purge removes the files of the deleted segments due at `now_ms` (see
    /// [`delete_segments`](Self::delete_segments)) and lets go of them. Returns how many.
    pub fn purge(&self, now_ms: i64) -> Result<usize> {
        let due: Vec<Arc<Segment>> = {
            let mut st = self.write_state();
            if st.trash.iter().all(|(t, _)| *t > now_ms) {
                return Ok(0);
            }
            let (due, keep) = std::mem::take(&mut st.trash)
                .into_iter()
                .partition(|(t, _)| *t <= now_ms);
            st.trash = keep;
            due.into_iter().map(|(_, s)| s).collect()
        };
        let n = due.len();
        let mut result = Ok(n);
        for s in due {
            if let Err(e) = s.delete_files() {
                // Tried again at the next purge.
                self.write_state().trash.push((now_ms, s));
                result = Err(e);
            }
        }
        result
    }

    /// next_purge_ms is when the next deleted segment is due to be removed, if any.
    pub fn next_purge_ms(&self) -> Option<i64> {
        self.read_state().trash.iter().map(|(t, _)| *t).min()
    }

    /// failure says why the log is offline, if it is (see [`State::failed`]).
    pub fn failure(&self) -> Option<String> {
        self.read_state().failed.clone()
    }

    /// delete_snapshots_below deletes producer snapshots older than `offset`, keeping the latest.
    fn delete_snapshots_below(&self, offset: i64) -> Result<()> {
        let mut snaps = list_suffix(&self.dir, files::SNAPSHOT_SUFFIX)?;
        snaps.sort_unstable();
        snaps.pop();
        for (o, _) in snaps {
            if o < offset {
                files::remove(&self.dir.join(files::name(o, files::SNAPSHOT_SUFFIX)))?;
            }
        }
        Ok(())
    }

    /// maintenance is the broker's periodic work for this log at `now_ms`: roll the active
    /// segment after segment.ms, forget producers idle for producer.id.expiration.ms, and, for
    /// cleanup.policy delete, delete the oldest segments past retention.ms (the active one too,
    /// by rolling it first, as Kafka does) and past retention.bytes, and those below the log
    /// start offset.
    pub fn maintenance(&self, now_ms: i64) -> Result<MaintenanceReport> {
        let cfg = self.config();
        let mut report = MaintenanceReport::default();
        let removed = {
            let mut st = self.write_state();
            st.check_open()?;
            report.producers_expired = st.producers.expire(now_ms, cfg.producer_id_expiration_ms);
            let active = st.active().clone();
            if active.size() > 0 {
                let waited = {
                    let m = active.meta();
                    match m.first_timestamp {
                        Some(t) if t >= 0 => now_ms.saturating_sub(t),
                        _ => now_ms.saturating_sub(m.created_ms),
                    }
                };
                if waited > cfg.segment_ms {
                    self.roll(&mut st, now_ms)?;
                    report.rolled = true;
                }
            }
            let mut n_delete = 0;
            if cfg.cleanup_policy.delete {
                if cfg.retention_ms >= 0 {
                    let expired = |s: &Segment| {
                        now_ms.saturating_sub(s.largest_timestamp()) > cfg.retention_ms
                    };
                    let n = st.segments.iter().take_while(|s| expired(s)).count();
                    if n == st.segments.len() && st.active().size() > 0 {
                        self.roll(&mut st, now_ms)?;
                        report.rolled = true;
                    }
                    n_delete = n.min(st.segments.len() - 1);
                }
                if cfg.retention_bytes >= 0 {
                    let mut diff = st.size() as i64 - cfg.retention_bytes;
                    let mut n = 0;
                    for s in &st.segments[..st.segments.len() - 1] {
                        let size = s.size() as i64;
                        if diff - size < 0 {
                            break;
                        }
                        diff -= size;
                        n += 1;
                    }
                    n_delete = n_delete.max(n);
                }
            }
            let mut removed: Vec<Arc<Segment>> = st.segments.drain(..n_delete).collect();
            if !removed.is_empty() {
                let first = st.segments[0].base_offset;
                if first > st.log_start_offset {
                    st.log_start_offset = first;
                    let created = st.start_ckpt.write(first, true)?;
                    st.dir_dirty |= created;
                }
            }
            removed.extend(remove_below_start(&mut st));
            report.log_start_offset = st.log_start_offset;
            removed
        };
        report.segments_deleted = removed.len();
        report.bytes_deleted = removed.iter().map(|s| s.size()).sum();
        self.delete_segments(removed, now_ms)?;
        Ok(report)
    }

    /// close flushes everything, writes a producer snapshot at the log end offset and the
    /// clean-shutdown marker; the next open then skips recovery. Later calls fail.
    pub fn close(&self) -> Result<()> {
        {
            let mut st = self.write_state();
            if st.closed {
                return Ok(());
            }
            if let Some(why) = st.failed.clone() {
                // Never marked clean: the next open recovers it from its last durable point.
                st.closed = true;
                release(&mut st);
                return Err(Error::kafka(
                    ErrorCode::KafkaStorageError,
                    format!("the log was offline ({why}): not closed cleanly"),
                ));
            }
        }
        self.flush()?;
        let _one = self.flush_lock.lock().unwrap_or_else(|e| e.into_inner());
        let _clean = self.clean_lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut st = self.write_state();
        let active = st.active().clone();
        active.on_inactive();
        active.sync()?;
        let end = st.next_offset;
        self.write_snapshot(&mut st, end, true)?;
        st.recovery_ckpt.write(end, true)?;
        st.recovery_point = end;
        let marker = self.dir.join(files::CLEAN_SHUTDOWN);
        vfs::write(&marker, b"").ctx("writing", &marker)?;
        files::sync_dir(&self.dir)?;
        st.dir_dirty = false;
        st.closed = true;
        let trash = std::mem::take(&mut st.trash);
        drop(st);
        // What retention left for later goes now (recovery would delete it at the next start).
        for (_, s) in trash {
            s.delete_files()?;
        }
        Ok(())
    }

    /// delete closes the log and lets go of every file it holds open (readers of a fetch in
    /// flight keep theirs until done). With `rename_to`, the folder is renamed there (Kafka's
    /// `<topic>-<partition>.<id>-delete`) for the host to remove after file.delete.delay.ms;
    /// without, it is removed now (DeleteTopics).
    pub fn delete(&self, rename_to: Option<&Path>) -> Result<()> {
        let _one = self.flush_lock.lock().unwrap_or_else(|e| e.into_inner());
        let _clean = self.clean_lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut st = self.write_state();
        st.closed = true;
        release(&mut st);
        drop(st);
        if let Some(to) = rename_to {
            files::rename(&self.dir, to)?;
            if let Some(parent) = to.parent() {
                files::sync_dir(parent)?;
            }
            return Ok(());
        }
        match vfs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(files::io(e, "deleting", &self.dir))
            }
            _ => Ok(()),
        }
    }
}

/// release lets go of a closed log's segments, deleted segments and checkpoint files, so that
/// none of its files stays open (a segment's file closes when the last reader lets go).
fn release(st: &mut State) {
    st.segments.clear();
    st.trash.clear();
    st.recovery_ckpt.close();
    st.start_ckpt.close();
    st.cleaner_ckpt.close();
}

/// remove_below_start takes out the segments whose next segment starts at or below the log
/// start offset (Kafka's `deleteLogStartOffsetBreachedSegments`).
fn remove_below_start(st: &mut State) -> Vec<Arc<Segment>> {
    let n = st
        .segments
        .windows(2)
        .take_while(|w| w[1].base_offset <= st.log_start_offset)
        .count();
    st.segments.drain(..n).collect()
}

/// list_suffix lists the files of `dir` named `<offset><suffix>`.
fn list_suffix(dir: &Path, suffix: &str) -> Result<Vec<(i64, PathBuf)>> {
    let mut out = Vec::new();
    for (name, path) in vfs::read_dir(dir).ctx("listing", dir)? {
        if let Some((o, s)) = files::parse(&name) {
            if s == suffix {
                out.push((o, path));
            }
        }
    }
    Ok(out)
}

mod open;
