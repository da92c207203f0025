//! Tests of the log through its public API, named after the Kafka behaviour they pin.

use std::path::{Path, PathBuf};

/// TempDir is a folder under /tmp removed on drop, or (from [`TempDir::memory`]) a memory root
/// dropped on drop.
pub struct TempDir(PathBuf, bool);

impl TempDir {
    /// memory is a fresh memory root (see [`vfs`]): nothing under it touches the disk.
    pub fn memory() -> Self {
        TempDir(vfs::register_root(None).unwrap(), true)
    }

    pub fn new() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "kgroup-log-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p, false)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if self.1 {
            vfs::drop_root(&self.0);
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// There is what the tests ask of a path, answered through [`vfs`] (memory or disk).
trait There {
    fn is_there(&self) -> bool;
    fn is_folder(&self) -> bool;
}

impl<P: AsRef<Path>> There for P {
    fn is_there(&self) -> bool {
        vfs::exists(self.as_ref())
    }
    fn is_folder(&self) -> bool {
        vfs::is_dir(self.as_ref())
    }
}

use std::sync::Arc;

use super::*;
use crate::errors::{Error, ErrorCode};
use crate::protocol::records::{BatchFields, Compression, Record, RecordBatch, TimestampType};
use crate::rng::Rng;

const NOW: i64 = 1_700_000_000_000;

/// disk_and_memory runs each named test (a function of how it makes its folders) twice: in
/// `on_disk::` on a temporary folder, in `in_memory::` on a memory root (see [`vfs`]), which
/// must behave the same.
macro_rules! disk_and_memory {
    ($($name:ident),* $(,)?) => {
        mod on_disk {
            $(#[test]
            fn $name() {
                super::$name(super::TempDir::new)
            })*
        }
        mod in_memory {
            $(#[test]
            fn $name() {
                super::$name(super::TempDir::memory)
            })*
        }
    };
}

disk_and_memory!(
    append_read_round_trip_across_rolls,
    index_lookups_find_every_offset,
    a_flush_after_a_roll_syncs_the_rolled_segments_indexes,
    recovery_cuts_a_torn_tail_at_the_last_whole_batch,
    recovery_drops_segments_after_a_cut,
    clean_close_skips_recovery_and_flushed_segments_are_trusted,
    damaged_indexes_are_rebuilt_from_the_log,
    retention_by_size_keeps_the_newest_segments,
    producer_state_survives_restart_with_and_without_a_snapshot,
    compaction_keeps_the_latest_record_per_key_and_offsets,
    compaction_beside_an_appender_and_a_reader,
    an_interrupted_compaction_is_finished_or_undone_on_open,
    random_damage_never_panics_and_recovery_keeps_exactly_the_valid_prefix,
    rolls_when_the_index_is_full_and_after_segment_ms,
    deleted_leftovers_go_at_the_next_open_and_delay_zero_deletes_at_once,
    a_failed_write_leaves_the_log_as_it_was_and_it_serves_on,
    a_failed_fsync_takes_the_log_offline_and_recovery_checks_it,
    a_torn_append_takes_the_log_offline_and_recovery_cuts_it,
    aborted_transactions_are_indexed_and_collected_for_fetches,
    a_crash_keeps_open_transactions_open_and_rebuilds_the_aborted_index,
    a_compaction_swap_finished_on_open_keeps_the_aborted_index,
    txn_indexes_go_with_their_segments_and_below_the_log_start,
);

/// Producer describes the producer fields of a test batch.
#[derive(Clone, Copy)]
struct Producer {
    id: i64,
    epoch: i16,
    seq: i32,
}

const NO_PRODUCER: Producer = Producer {
    id: -1,
    epoch: -1,
    seq: -1,
};

fn encode(records: Vec<Record>, compression: Compression, p: Producer) -> Vec<u8> {
    let mut b = RecordBatch {
        fields: BatchFields {
            compression,
            producer_id: p.id,
            producer_epoch: p.epoch,
            base_sequence: p.seq,
            ..BatchFields::default()
        },
        records,
    };
    b.derive_from_records().unwrap();
    b.encode(None).unwrap()
}

/// keyed is a batch of (key, value) records at `ts`, `ts + 1`...
fn keyed(kvs: &[(&str, Option<&str>)], ts: i64) -> Vec<u8> {
    let records = kvs
        .iter()
        .enumerate()
        .map(|(i, (k, v))| Record {
            offset: i as i64,
            timestamp: ts + i as i64,
            key: Some(k.as_bytes().to_vec()),
            value: v.map(|v| v.as_bytes().to_vec()),
            headers: vec![],
        })
        .collect();
    encode(records, Compression::None, NO_PRODUCER)
}

/// values is a batch of `n` records of `size` bytes each, keyed `k<i>`.
fn values(n: usize, size: usize, ts: i64, compression: Compression, p: Producer) -> Vec<u8> {
    let records = (0..n)
        .map(|i| Record {
            offset: i as i64,
            timestamp: ts,
            key: Some(format!("k{i}").into_bytes()),
            value: Some(vec![b'a' + (i % 26) as u8; size]),
            headers: vec![],
        })
        .collect();
    encode(records, compression, p)
}

fn cfg(pairs: &[(&str, &str)]) -> LogConfig {
    LogConfig::from_pairs(pairs.iter().copied()).unwrap()
}

fn open(dir: &Path, c: LogConfig) -> (Log, RecoveryReport) {
    Log::open(dir, c, NOW).unwrap()
}

fn code(e: Error) -> ErrorCode {
    e.error_code().unwrap_or_else(|| panic!("no code: {e:?}"))
}

/// all_records reads every record from `from` on, through read, as (offset, key, value).
type Row = (i64, Option<Vec<u8>>, Option<Vec<u8>>);

fn all_records(log: &Log, from: i64) -> Vec<Row> {
    let mut out = Vec::new();
    let mut offset = from;
    let end = log.log_end_offset();
    while offset < end {
        let slice = log.read(offset, 1 << 20, end, true).unwrap();
        if slice.is_empty() {
            break;
        }
        let bytes = slice.bytes().unwrap();
        for b in crate::protocol::records::decode_batches(&bytes, &Default::default()).unwrap() {
            for r in &b.records {
                if r.offset >= offset {
                    out.push((r.offset, r.key.clone(), r.value.clone()));
                }
            }
            offset = b.next_offset();
        }
    }
    out
}

fn seg_path(dir: &Path, base: i64, suffix: &str) -> PathBuf {
    dir.join(files::name(base, suffix))
}

fn append_read_round_trip_across_rolls(mk: fn() -> TempDir) {
    // Kafka's UnifiedLogTest.testAppendAndReadWithSequentialOffsets and testLogRolls shape.
    let dir = mk();
    let (log, report) = open(dir.path(), cfg(&[("segment.bytes", "2000")]));
    assert_eq!(report.log_end_offset, 0);
    let mut expected = Vec::new();
    for i in 0..40 {
        let b = values(3, 100, NOW, Compression::None, NO_PRODUCER);
        let a = log.append(&b, NOW, 7).unwrap();
        assert_eq!((a.base_offset, a.last_offset), (i * 3, i * 3 + 2));
        assert_eq!(a.log_append_time, -1);
        assert!(!a.duplicate);
        expected.extend((0..3).map(|k| i * 3 + k));
    }
    assert!(log.segment_count() > 5, "{}", log.segment_count());
    assert_eq!(log.log_end_offset(), 120);
    let got: Vec<i64> = all_records(&log, 0).into_iter().map(|r| r.0).collect();
    assert_eq!(got, expected);
    // From inside a batch: the batch holding the offset comes first.
    let s = log.read(40, 1 << 20, 120, true).unwrap();
    let first = crate::protocol::records::BatchHeader::parse(&s.bytes().unwrap()).unwrap();
    assert_eq!(first.base_offset, 39);
    assert_eq!(first.partition_leader_epoch, 7);
    // Whole batches only; min_one returns the first batch even over max_bytes.
    let s = log.read(0, 10, 120, false).unwrap();
    assert!(s.is_empty());
    let s = log.read(0, 10, 120, true).unwrap();
    assert_eq!(s.len(), first.size());
    let s = log.read(0, first.size() * 2 + 5, 120, false).unwrap();
    assert_eq!(s.len(), first.size() * 2);
    // Never at or past max_offset (the high watermark).
    let s = log.read(0, 1 << 20, 3, true).unwrap();
    assert_eq!(s.len(), first.size());
    assert!(log.read(3, 1 << 20, 3, true).unwrap().is_empty());
    // The end is empty, past it is out of range.
    assert!(log.read(120, 100, 120, true).unwrap().is_empty());
    assert_eq!(
        code(log.read(121, 100, 121, true).unwrap_err()),
        ErrorCode::OffsetOutOfRange
    );
}

fn index_lookups_find_every_offset(mk: fn() -> TempDir) {
    // Kafka's LogSegmentTest.testReadBeforeFirstOffset / testReadAfterLast and index density.
    let dir = mk();
    let (log, _) = open(dir.path(), cfg(&[("index.interval.bytes", "300")]));
    for _ in 0..200 {
        log.append(&values(2, 50, NOW, Compression::None, NO_PRODUCER), NOW, 0)
            .unwrap();
    }
    let seg = log.read_state().active().clone();
    let entries = seg.meta().offsets.len();
    assert!(entries > 50, "{entries}");
    for offset in 0..400 {
        let s = log.read(offset, 1, 400, true).unwrap();
        let h = crate::protocol::records::BatchHeader::parse(&s.bytes().unwrap()).unwrap();
        assert!(
            h.base_offset <= offset && offset <= h.last_offset(),
            "{offset}"
        );
    }
    // A flush syncs the active segment's data only (recovery rebuilds its indexes); close
    // writes them.
    log.flush().unwrap();
    let index = seg_path(dir.path(), 0, files::INDEX_SUFFIX);
    assert!(vfs::read(&index).map_or(true, |b| b.len() < entries * 8));
    log.close().unwrap();
    assert_eq!(vfs::read(&index).unwrap().len(), entries * 8);
}

fn a_flush_after_a_roll_syncs_the_rolled_segments_indexes(mk: fn() -> TempDir) {
    let dir = mk();
    let (log, _) = open(
        dir.path(),
        cfg(&[("index.interval.bytes", "100"), ("segment.bytes", "2000")]),
    );
    for _ in 0..30 {
        log.append(&values(2, 50, NOW, Compression::None, NO_PRODUCER), NOW, 0)
            .unwrap();
    }
    let bases = log.segment_bases();
    assert!(bases.len() > 2, "{bases:?}");
    log.flush().unwrap();
    for base in &bases[..bases.len() - 1] {
        let bytes = vfs::read(seg_path(dir.path(), *base, files::INDEX_SUFFIX)).unwrap();
        assert!(!bytes.is_empty(), "segment {base}");
    }
}

/// batch_ends appends `n` single-batch produces and returns each batch's end position.
fn fill(log: &Log, n: usize) -> Vec<u64> {
    let mut ends = Vec::new();
    for i in 0..n {
        log.append(
            &values(2, 40 + i, NOW, Compression::None, NO_PRODUCER),
            NOW,
            0,
        )
        .unwrap();
        ends.push(log.size());
    }
    ends
}

fn recovery_cuts_a_torn_tail_at_the_last_whole_batch(mk: fn() -> TempDir) {
    // Kafka's LogLoaderTest.testCorruptLog / LogSegmentTest.testRecoveryFixesCorruptIndex:
    // a partial batch, garbage and a flipped CRC byte, each cut exactly.
    for damage in ["partial", "garbage", "crc"] {
        let dir = mk();
        let (log, _) = open(dir.path(), cfg(&[]));
        let ends = fill(&log, 10);
        drop(log); // kill -9: no close, no flush
        let path = seg_path(dir.path(), 0, files::LOG_SUFFIX);
        let mut data = vfs::read(&path).unwrap();
        let expect_end = match damage {
            "partial" => {
                data.truncate(ends[9] as usize - 7);
                ends[8]
            }
            "garbage" => {
                data.extend_from_slice(&[0xAB; 100]);
                ends[9]
            }
            _ => {
                data[ends[5] as usize + 30] ^= 1;
                ends[5]
            }
        };
        let before = data.len() as u64;
        vfs::write(&path, &data).unwrap();
        let (log, report) = open(dir.path(), cfg(&[]));
        assert!(!report.clean);
        assert_eq!(report.bytes_truncated, before - expect_end, "{damage}");
        assert_eq!(log.size(), expect_end, "{damage}");
        let batches = ends.iter().filter(|&&e| e <= expect_end).count() as i64;
        assert_eq!(log.log_end_offset(), batches * 2, "{damage}");
        // The log takes appends again right after the cut.
        let a = log
            .append(&values(1, 10, NOW, Compression::None, NO_PRODUCER), NOW, 0)
            .unwrap();
        assert_eq!(a.base_offset, batches * 2);
        assert_eq!(all_records(&log, 0).len() as i64, batches * 2 + 1);
    }
}

fn recovery_drops_segments_after_a_cut(mk: fn() -> TempDir) {
    let dir = mk();
    let (log, _) = open(dir.path(), cfg(&[("segment.bytes", "1000")]));
    fill(&log, 30);
    let bases = log.segment_bases();
    assert!(bases.len() >= 4);
    drop(log);
    // Corrupt the second segment's first batch: it and every later segment go.
    let path = seg_path(dir.path(), bases[1], files::LOG_SUFFIX);
    let mut data = vfs::read(&path).unwrap();
    data[40] ^= 0xff;
    vfs::write(&path, &data).unwrap();
    let (log, report) = open(dir.path(), cfg(&[("segment.bytes", "1000")]));
    assert_eq!(report.segments_deleted, bases.len() - 2);
    assert_eq!(log.log_end_offset(), bases[1]);
    assert_eq!(log.segment_bases(), &bases[..2]);
}

fn clean_close_skips_recovery_and_flushed_segments_are_trusted(mk: fn() -> TempDir) {
    let dir = mk();
    let c = cfg(&[("segment.bytes", "1000")]);
    let (log, _) = open(dir.path(), c.clone());
    fill(&log, 30);
    log.close().unwrap();
    assert_eq!(
        code(
            log.append(&keyed(&[("a", Some("b"))], NOW), NOW, 0)
                .unwrap_err()
        ),
        ErrorCode::KafkaStorageError
    );
    let (log, report) = open(dir.path(), c.clone());
    assert!(report.clean);
    assert_eq!(report.indexes_rebuilt, 0);
    assert_eq!(log.log_end_offset(), 60);
    // Unclean stop after a flush: only the segment holding the recovery point is scanned.
    fill(&log, 3);
    log.flush().unwrap();
    fill(&log, 3);
    drop(log);
    let (log, report) = open(dir.path(), c);
    assert!(!report.clean);
    // Only the segments from the one holding the recovery point were recovered.
    assert!(report.indexes_rebuilt <= 2, "{report:?}");
    assert_eq!(log.log_end_offset(), 72);
}

fn damaged_indexes_are_rebuilt_from_the_log(mk: fn() -> TempDir) {
    // Kafka's LogLoaderTest.testRebuildIndexesOnCorruption / testCorruptIndexRebuild: deleted,
    // cut and garbage index files after a clean close.
    for damage in ["deleted", "truncated", "garbage", "past-end"] {
        let dir = mk();
        let c = cfg(&[("segment.bytes", "3000"), ("index.interval.bytes", "100")]);
        let (log, _) = open(dir.path(), c.clone());
        fill(&log, 60);
        let before = all_records(&log, 0);
        log.close().unwrap();
        let index = seg_path(dir.path(), 0, files::INDEX_SUFFIX);
        let mut data = vfs::read(&index).unwrap();
        assert!(data.len() >= 16);
        match damage {
            "deleted" => vfs::remove_file(&index).unwrap(),
            "truncated" => vfs::write(&index, &data[..data.len() - 3]).unwrap(),
            "garbage" => {
                data[8..16].copy_from_slice(&[0; 8]);
                vfs::write(&index, &data).unwrap()
            }
            _ => {
                let n = data.len();
                data[n - 4..].copy_from_slice(&u32::MAX.to_be_bytes());
                vfs::write(&index, &data).unwrap()
            }
        }
        let (log, report) = open(dir.path(), c);
        assert!(report.clean);
        assert_eq!(report.indexes_rebuilt, 1, "{damage}");
        assert_eq!(report.bytes_truncated, 0);
        assert_eq!(all_records(&log, 0), before, "{damage}");
        log.flush().unwrap();
        assert_eq!(vfs::read(&index).unwrap().len() % 8, 0);
    }
}

#[test]
fn retention_by_time_rolls_and_deletes_the_active_segment_too() {
    // Kafka's UnifiedLogTest.shouldDeleteTimeBasedSegmentsReadyToBeDeleted and
    // testRollSegmentThatAlreadyExists-style active segment roll on retention.
    let dir = TempDir::new();
    let (log, _) = open(
        dir.path(),
        cfg(&[("segment.bytes", "1000"), ("retention.ms", "1000")]),
    );
    for i in 0..10 {
        log.append(
            &values(2, 100, NOW + i * 100, Compression::None, NO_PRODUCER),
            NOW,
            0,
        )
        .unwrap();
    }
    let n = log.segment_count();
    assert!(n >= 3);
    // At NOW + 1500 the batches of NOW..NOW+499 are past retention.ms.
    let r = log.maintenance(NOW + 1500).unwrap();
    assert!(r.segments_deleted >= 1 && r.segments_deleted < n, "{r:?}");
    assert_eq!(r.log_start_offset, log.segment_bases()[0]);
    assert_eq!(log.log_start_offset(), r.log_start_offset);
    // Everything expired: the active segment is rolled and deleted too.
    let r = log.maintenance(NOW + 100_000).unwrap();
    assert!(r.rolled);
    assert_eq!(log.segment_count(), 1);
    assert_eq!(log.log_start_offset(), 20);
    assert_eq!(log.log_end_offset(), 20);
    assert_eq!(
        code(log.read(0, 100, 20, true).unwrap_err()),
        ErrorCode::OffsetOutOfRange
    );
    drop(log);
    let (log, _) = open(dir.path(), cfg(&[]));
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (20, 20));
}

fn retention_by_size_keeps_the_newest_segments(mk: fn() -> TempDir) {
    // Kafka's UnifiedLogTest.shouldDeleteSizeBasedSegments.
    let dir = mk();
    let (log, _) = open(
        dir.path(),
        cfg(&[("segment.bytes", "1000"), ("retention.bytes", "2500")]),
    );
    fill(&log, 40);
    let size = log.size();
    let r = log.maintenance(NOW).unwrap();
    assert!(r.segments_deleted > 0);
    assert!(log.size() <= size - r.bytes_deleted);
    assert!(log.size() >= 2500 - 1000, "{}", log.size());
    assert!(log.size() - log.read_state().segments[0].size() < 2500 + 1000);
    // compact only: no deletion.
    let dir = mk();
    let (log, _) = open(
        dir.path(),
        cfg(&[
            ("segment.bytes", "1000"),
            ("retention.bytes", "10"),
            ("cleanup.policy", "compact"),
        ]),
    );
    fill(&log, 20);
    assert_eq!(log.maintenance(NOW).unwrap().segments_deleted, 0);
}

#[test]
fn delete_records_moves_the_start_and_survives_reopen() {
    // Kafka's UnifiedLogTest.testDeleteRecords... (maybeIncrementLogStartOffset).
    let dir = TempDir::new();
    let (log, _) = open(dir.path(), cfg(&[("segment.bytes", "1000")]));
    fill(&log, 30);
    let bases = log.segment_bases();
    assert_eq!(
        code(log.delete_records(61, 60).unwrap_err()),
        ErrorCode::OffsetOutOfRange
    );
    let target = bases[2] + 1;
    assert_eq!(log.delete_records(target, 60).unwrap(), target);
    assert_eq!(log.segment_bases()[0], bases[2]);
    assert!(!seg_path(dir.path(), bases[0], files::LOG_SUFFIX).is_there());
    assert_eq!(
        code(log.read(target - 1, 100, 60, true).unwrap_err()),
        ErrorCode::OffsetOutOfRange
    );
    assert!(!log.read(target, 100, 60, true).unwrap().is_empty());
    // Never backwards.
    assert_eq!(log.delete_records(3, 60).unwrap(), target);
    drop(log);
    let (log, report) = open(dir.path(), cfg(&[("segment.bytes", "1000")]));
    assert_eq!(report.log_start_offset, target);
    assert_eq!(log.log_start_offset(), target);
}

fn idem(seq: i32, epoch: i16) -> Producer {
    Producer {
        id: 1000,
        epoch,
        seq,
    }
}

#[test]
fn idempotent_retries_of_the_last_five_batches_are_duplicates() {
    // Kafka's UnifiedLogTest.testDuplicateAppends / ProducerStateManagerTest.
    let dir = TempDir::new();
    let (log, _) = open(
        dir.path(),
        cfg(&[("message.timestamp.type", "LogAppendTime")]),
    );
    let mut sent = Vec::new();
    for i in 0..7 {
        let b = values(2, 10, NOW, Compression::None, idem(i * 2, 0));
        let a = log.append(&b, NOW + i as i64, 0).unwrap();
        assert_eq!(a.log_append_time, NOW + i as i64);
        sent.push((b, a));
    }
    for (b, a) in &sent[2..] {
        let d = log.append(b, NOW + 99, 0).unwrap();
        assert!(d.duplicate);
        assert_eq!(
            (d.base_offset, d.last_offset, d.log_append_time),
            (a.base_offset, a.last_offset, a.log_append_time)
        );
    }
    assert_eq!(log.log_end_offset(), 14);
    assert_eq!(
        code(log.append(&sent[0].0, NOW, 0).unwrap_err()),
        ErrorCode::OutOfOrderSequenceNumber
    );
    let gap = values(1, 10, NOW, Compression::None, idem(15, 0));
    assert_eq!(
        code(log.append(&gap, NOW, 0).unwrap_err()),
        ErrorCode::OutOfOrderSequenceNumber
    );
    let fenced = values(1, 10, NOW, Compression::None, idem(14, -0));
    log.append(&values(1, 10, NOW, Compression::None, idem(0, 1)), NOW, 0)
        .unwrap();
    assert_eq!(
        code(log.append(&fenced, NOW, 0).unwrap_err()),
        ErrorCode::InvalidProducerEpoch
    );
    let bad_new_epoch = values(1, 10, NOW, Compression::None, idem(5, 2));
    assert_eq!(
        code(log.append(&bad_new_epoch, NOW, 0).unwrap_err()),
        ErrorCode::OutOfOrderSequenceNumber
    );
    // Unknown producer, non-zero first sequence: accepted (Kafka 3.9).
    let other = values(
        1,
        10,
        NOW,
        Compression::None,
        Producer {
            id: 2000,
            epoch: 0,
            seq: 77,
        },
    );
    assert!(!log.append(&other, NOW, 0).unwrap().duplicate);
}

fn producer_state_survives_restart_with_and_without_a_snapshot(mk: fn() -> TempDir) {
    // Kafka's UnifiedLogTest.testProducerIdMapTruncateFullyAndStartAt... / LogLoaderTest
    // .testSkipLoadingIfEmptyProducerStateBeforeTruncation shape: retries after a kill -9.
    for mode in ["kill", "close", "kill-no-snapshot", "kill-torn-snapshot"] {
        let dir = mk();
        let c = cfg(&[("segment.bytes", "600")]);
        let (log, _) = open(dir.path(), c.clone());
        let mut sent = Vec::new();
        for i in 0..12 {
            let b = values(1, 100, NOW, Compression::None, idem(i, 0));
            sent.push((b.clone(), log.append(&b, NOW, 0).unwrap()));
        }
        assert!(log.segment_count() > 3);
        match mode {
            "close" => log.close().unwrap(),
            "kill" => drop(log),
            "kill-torn-snapshot" => {
                drop(log);
                let mut snaps = list_suffix(dir.path(), files::SNAPSHOT_SUFFIX).unwrap();
                snaps.sort();
                let (_, last) = snaps.pop().unwrap();
                let data = vfs::read(&last).unwrap();
                vfs::write(&last, &data[..data.len() / 2]).unwrap();
            }
            _ => {
                drop(log);
                for (o, p) in list_suffix(dir.path(), files::SNAPSHOT_SUFFIX).unwrap() {
                    let _ = o;
                    vfs::remove_file(p).unwrap();
                }
            }
        }
        let (log, report) = open(dir.path(), c);
        if mode == "kill-no-snapshot" {
            assert_eq!(report.snapshot_offset, None);
            assert_eq!(report.batches_replayed, 12);
        } else {
            assert!(report.snapshot_offset.is_some(), "{mode}");
        }
        for (b, a) in &sent[7..] {
            let d = log.append(b, NOW, 0).unwrap();
            assert!(d.duplicate, "{mode}");
            assert_eq!(d.base_offset, a.base_offset, "{mode}");
        }
        let next = values(1, 100, NOW, Compression::None, idem(12, 0));
        assert_eq!(log.append(&next, NOW, 0).unwrap().base_offset, 12, "{mode}");
        let gap = values(1, 100, NOW, Compression::None, idem(20, 0));
        assert_eq!(
            code(log.append(&gap, NOW, 0).unwrap_err()),
            ErrorCode::OutOfOrderSequenceNumber
        );
    }
}

#[test]
fn producers_expire_on_maintenance() {
    let dir = TempDir::new();
    let (log, _) = open(dir.path(), cfg(&[("producer.id.expiration.ms", "1000")]));
    log.append(&values(1, 10, NOW, Compression::None, idem(0, 0)), NOW, 0)
        .unwrap();
    assert_eq!(log.producer_count(), 1);
    assert_eq!(log.maintenance(NOW + 999).unwrap().producers_expired, 0);
    assert_eq!(log.maintenance(NOW + 1000).unwrap().producers_expired, 1);
    // A forgotten producer may continue at any sequence.
    log.append(&values(1, 10, NOW, Compression::None, idem(9, 0)), NOW, 0)
        .unwrap();
}

fn with_fields(records: Vec<Record>, f: impl FnOnce(&mut BatchFields)) -> Vec<u8> {
    let mut b = RecordBatch {
        fields: BatchFields::default(),
        records,
    };
    f(&mut b.fields);
    b.derive_from_records().unwrap();
    b.encode(None).unwrap()
}

fn rec(offset: i64, ts: i64, key: Option<&str>) -> Record {
    Record {
        offset,
        timestamp: ts,
        key: key.map(|k| k.as_bytes().to_vec()),
        value: Some(b"v".to_vec()),
        headers: vec![],
    }
}

#[test]
fn validation_answers_with_kafkas_codes() {
    // Cases of Kafka's LogValidatorTest and UnifiedLogTest for AppendOrigin.CLIENT.
    let dir = TempDir::new();
    let (log, _) = open(
        dir.path(),
        cfg(&[
            ("max.message.bytes", "2000"),
            ("message.timestamp.before.max.ms", "1000"),
            ("message.timestamp.after.max.ms", "1000"),
        ]),
    );
    let ok = keyed(&[("a", Some("1"))], NOW);
    // testInvalidOffsetRangeAndRecordCount / base offset 0 from clients.
    let mut b = ok.clone();
    crate::protocol::records::set_base_offset(&mut b, 5).unwrap();
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    // CRC (UnifiedLogTest.testCorruptMessage...): CORRUPT_MESSAGE.
    let mut b = ok.clone();
    let n = b.len();
    b[n - 1] ^= 1;
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::CorruptMessage
    );
    // Record count disagreeing with lastOffsetDelta.
    let mut b = keyed(&[("a", Some("1")), ("b", Some("2"))], NOW);
    b[57..61].copy_from_slice(&3i32.to_be_bytes());
    let crc = crate::protocol::records::compute_crc(&b);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    // Control batches from clients (testControlRecordsNotAllowedFromClients).
    let b = with_fields(vec![rec(0, NOW, Some("k"))], |f| f.is_control = true);
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    // Too large (testMessageSizeCheck).
    let b = values(1, 3000, NOW, Compression::None, NO_PRODUCER);
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::MessageTooLarge
    );
    // Timestamps out of range (testInvalidCreateTimeNonCompressedV2).
    for ts in [NOW - 1001, NOW + 1001] {
        let b = keyed(&[("a", Some("1"))], ts);
        assert_eq!(
            code(log.append(&b, NOW, 0).unwrap_err()),
            ErrorCode::InvalidTimestamp
        );
    }
    assert!(log
        .append(&keyed(&[("a", Some("1"))], NOW - 1000), NOW, 0)
        .is_ok());
    // A producer must not send LogAppendTime with no timestamp.
    let b = with_fields(vec![rec(0, -1, Some("k"))], |f| {
        f.timestamp_type = TimestampType::LogAppendTime
    });
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::InvalidTimestamp
    );
    // More than one v2 batch (testMultipleBatches... "more than one batch").
    let two = [ok.clone(), ok.clone()].concat();
    assert_eq!(
        code(log.append(&two, NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    // Idempotent batch without a sequence.
    let b = with_fields(vec![rec(0, NOW, Some("k"))], |f| {
        f.producer_id = 5;
        f.producer_epoch = 0;
        f.base_sequence = -1;
    });
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    assert_eq!(
        code(log.append(&[], NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    // Nothing was appended by the failures.
    assert_eq!(log.log_end_offset(), 1);
}

#[test]
fn compacted_topics_refuse_records_without_key() {
    // LogValidatorTest.testCompactedTopicWithoutKey... .
    let dir = TempDir::new();
    let (log, _) = open(
        dir.path(),
        cfg(&[
            ("cleanup.policy", "compact"),
            ("message.timestamp.before.max.ms", "1000"),
        ]),
    );
    let b = encode(vec![rec(0, NOW, None)], Compression::None, NO_PRODUCER);
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    let b = encode(vec![rec(0, NOW, None)], Compression::Zstd, NO_PRODUCER);
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    // Every failing record is named by its index (LogValidatorTest's record errors, KIP-467);
    // a timestamp error anywhere makes the whole INVALID_TIMESTAMP.
    let records = vec![
        rec(0, NOW, Some("a")),
        rec(1, NOW, None),
        rec(2, NOW, Some("b")),
        rec(3, NOW, None),
    ];
    let Error::Kafka(k) = log
        .append(&encode(records, Compression::None, NO_PRODUCER), NOW, 0)
        .unwrap_err()
    else {
        panic!("not a Kafka error")
    };
    let indexes: Vec<i32> = k.record_errors.iter().map(|r| r.batch_index).collect();
    assert_eq!((k.code, indexes), (ErrorCode::InvalidRecord, vec![1, 3]));
    let folder = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        k.record_errors[0].message,
        format!("Compacted topic cannot accept message without key in topic partition {folder}")
    );
    assert!(k
        .message
        .starts_with("One or more records have been rejected due to 2 record errors in total"));
    let records = vec![rec(0, NOW, None), rec(1, NOW - 2000, Some("a"))];
    let Error::Kafka(k) = log
        .append(&encode(records, Compression::None, NO_PRODUCER), NOW, 0)
        .unwrap_err()
    else {
        panic!("not a Kafka error")
    };
    let indexes: Vec<i32> = k.record_errors.iter().map(|r| r.batch_index).collect();
    assert_eq!((k.code, indexes), (ErrorCode::InvalidTimestamp, vec![0, 1]));
    assert_eq!(log.log_end_offset(), 0);
}

#[test]
fn log_append_time_and_recompression_keep_the_records() {
    // LogValidatorTest.testLogAppendTimeNonCompressedV2 / testRecompressionV2 shape.
    let dir = TempDir::new();
    let (log, _) = open(
        dir.path(),
        cfg(&[
            ("message.timestamp.type", "LogAppendTime"),
            ("compression.type", "zstd"),
        ]),
    );
    let p = Producer {
        id: 42,
        epoch: 3,
        seq: 10,
    };
    let sent = values(5, 200, NOW - 50, Compression::Gzip, p);
    let a = log.append(&sent, NOW, 9).unwrap();
    assert_eq!(a.log_append_time, NOW);
    let bytes = log.read(0, 1 << 20, 5, true).unwrap().bytes().unwrap();
    let got = &crate::protocol::records::decode_batches(&bytes, &Default::default()).unwrap()[0];
    assert_eq!(got.compression, Compression::Zstd);
    assert_eq!(got.timestamp_type, TimestampType::LogAppendTime);
    assert_eq!(got.max_timestamp, NOW);
    assert_eq!(
        (got.producer_id, got.producer_epoch, got.base_sequence),
        (42, 3, 10)
    );
    assert_eq!(got.partition_leader_epoch, 9);
    let orig = &crate::protocol::records::decode_batches(&sent, &Default::default()).unwrap()[0];
    for (g, o) in got.records.iter().zip(&orig.records) {
        assert_eq!((&g.key, &g.value), (&o.key, &o.value));
    }
    // producer: the batch's own codec stays, bytes as sent but for offsets, epoch, timestamps.
    let dir = TempDir::new();
    let (log, _) = open(dir.path(), cfg(&[]));
    log.append(&keyed(&[("x", Some("y"))], NOW), NOW, 0)
        .unwrap();
    let sent = values(3, 20, NOW, Compression::Lz4, NO_PRODUCER);
    log.append(&sent, NOW, 0).unwrap();
    let bytes = log.read(1, 1 << 20, 4, true).unwrap().bytes().unwrap();
    assert_eq!(&bytes[61..], &sent[61..]);
    assert_eq!(i64::from_be_bytes(bytes[..8].try_into().unwrap()), 1);
}

#[test]
fn compressed_inner_offsets_that_are_not_sequential_are_rebuilt() {
    // LogValidatorTest.testInvalidInnerOffsets... (Kafka rewrites rather than rejects).
    let dir = TempDir::new();
    let (log, _) = open(dir.path(), cfg(&[]));
    let b = encode(
        vec![rec(0, NOW, Some("a")), rec(5, NOW, Some("b"))],
        Compression::Gzip,
        NO_PRODUCER,
    );
    // lastOffsetDelta 5 but 2 records: refused.
    assert_eq!(
        code(log.append(&b, NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    let mut r = RecordBatch {
        fields: BatchFields {
            compression: Compression::Gzip,
            ..BatchFields::default()
        },
        records: vec![rec(0, NOW, Some("a")), rec(3, NOW, Some("b"))],
    };
    r.derive_from_records().unwrap();
    r.last_offset_delta = 1;
    let b = r.encode(None).unwrap();
    let a = log.append(&b, NOW, 0).unwrap();
    assert_eq!((a.base_offset, a.last_offset), (0, 1));
    let offsets: Vec<i64> = all_records(&log, 0).iter().map(|r| r.0).collect();
    assert_eq!(offsets, [0, 1]);
}

#[test]
fn legacy_message_sets_are_converted_to_v2() {
    // Produce v0-2 may carry magic 0/1: Kafka 3.x converts them (LogValidatorTest
    // .testUncompressedV1ToV2 / testCompressedV1ToV2 shape).
    for compression in [Compression::None, Compression::Gzip] {
        let dir = TempDir::new();
        let (log, _) = open(dir.path(), cfg(&[]));
        let mut b = RecordBatch {
            fields: BatchFields {
                magic: 1,
                compression,
                ..BatchFields::default()
            },
            records: vec![rec(0, NOW, Some("a")), rec(1, NOW + 1, Some("b"))],
        };
        b.derive_from_records().unwrap();
        let bytes = b.encode(None).unwrap();
        let a = log.append(&bytes, NOW, 0).unwrap();
        assert_eq!((a.base_offset, a.last_offset), (0, 1));
        let out = log.read(0, 1 << 20, 2, true).unwrap().bytes().unwrap();
        let h = crate::protocol::records::BatchHeader::parse(&out).unwrap();
        assert_eq!((h.magic, h.records_count, h.max_timestamp), (2, 2, NOW + 1));
        assert_eq!(h.compression().unwrap(), compression);
    }
}

fn compaction_keeps_the_latest_record_per_key_and_offsets(mk: fn() -> TempDir) {
    // Kafka's LogCleanerTest.testCleanSegments / testCleaningWithDeletes.
    let dir = mk();
    let c = cfg(&[
        ("cleanup.policy", "compact"),
        ("segment.bytes", "400"),
        ("delete.retention.ms", "1000"),
    ]);
    let (log, _) = open(dir.path(), c);
    for i in 0..60i64 {
        let k = format!("key{}", i % 7);
        let v = format!("v{i}");
        let value = if i == 50 { None } else { Some(v.as_str()) };
        log.append(&keyed(&[(k.as_str(), value)], NOW), NOW, 0)
            .unwrap();
    }
    let end = log.log_end_offset();
    let active_base = *log.segment_bases().last().unwrap();
    // Only what lies below the active segment is cleaned: the latest per key there.
    let mut latest = std::collections::BTreeMap::new();
    for i in 0..active_base {
        latest.insert(format!("key{}", i % 7), (i, ()));
    }
    let r = log.compact(NOW, false).unwrap();
    assert!(r.cleaned, "{r:?}");
    assert_eq!(r.end_offset, active_base);
    assert!(r.bytes_after < r.bytes_before);
    assert_eq!(log.log_end_offset(), end);
    let got = all_records(&log, 0);
    // Below the active segment one record per key remains, at its original offset.
    let mut seen = std::collections::HashMap::new();
    for (offset, key, value) in &got {
        let key = String::from_utf8(key.clone().unwrap()).unwrap();
        if *offset < active_base {
            assert_eq!(latest[&key].0, *offset, "{key}");
            assert!(seen.insert(key.clone(), *offset).is_none());
        }
        let _ = value;
    }
    // The tombstone of key1 (offset 50) is kept until delete.retention.ms after its cleaning.
    assert!(got.iter().any(|r| r.0 == 50 && r.2.is_none()));
    let again = log.compact(NOW + 500, true).unwrap();
    assert_eq!(again.tombstones_removed, 0);
    assert!(all_records(&log, 0).iter().any(|r| r.0 == 50));
    let later = log.compact(NOW + 1001, false).unwrap();
    assert!(
        later.cleaned,
        "the delete horizon makes the log due: {later:?}"
    );
    assert_eq!(later.tombstones_removed, 1);
    assert!(!all_records(&log, 0).iter().any(|r| r.0 == 50));
    // Reopen: the same records, offsets unchanged.
    let before = all_records(&log, 0);
    log.close().unwrap();
    let (log, report) = open(dir.path(), cfg(&[("cleanup.policy", "compact")]));
    assert!(report.clean);
    assert_eq!(all_records(&log, 0), before);
}

#[test]
fn compaction_keeps_each_producers_last_batch() {
    // LogCleanerTest.testCleanEmptyProducerBatch... / testPartialSegmentClean...: the last
    // batch of an active producer is kept (emptied) so its sequence survives.
    let dir = TempDir::new();
    let (log, _) = open(
        dir.path(),
        cfg(&[("cleanup.policy", "compact"), ("segment.bytes", "300")]),
    );
    let p = |seq| Producer {
        id: 5,
        epoch: 0,
        seq,
    };
    for seq in 0..3 {
        log.append(
            &encode(vec![rec(0, NOW, Some("same"))], Compression::None, p(seq)),
            NOW,
            0,
        )
        .unwrap();
    }
    // Another producer overwrites the key afterwards.
    for i in 0..8 {
        log.append(&keyed(&[("same", Some("x"))], NOW + i), NOW, 0)
            .unwrap();
    }
    log.compact(NOW, true).unwrap();
    // The retry of producer 5's last batch is still a duplicate, its next sequence still fits.
    let d = log
        .append(
            &encode(vec![rec(0, NOW, Some("same"))], Compression::None, p(2)),
            NOW,
            0,
        )
        .unwrap();
    assert!(d.duplicate);
    assert_eq!(d.base_offset, 2);
    let bytes = log
        .read(0, 1 << 20, log.log_end_offset(), true)
        .unwrap()
        .bytes()
        .unwrap();
    let first = crate::protocol::records::BatchHeader::parse(&bytes).unwrap();
    assert_eq!(
        (first.producer_id, first.base_offset, first.records_count),
        (5, 2, 0)
    );
    assert!(
        !log.append(
            &encode(vec![rec(0, NOW, Some("z"))], Compression::None, p(3)),
            NOW,
            0
        )
        .unwrap()
        .duplicate
    );
    drop(log);
    let (log, _) = open(dir.path(), cfg(&[("cleanup.policy", "compact")]));
    assert!(
        log.append(
            &encode(vec![rec(0, NOW, Some("z"))], Compression::None, p(3)),
            NOW,
            0
        )
        .unwrap()
        .duplicate
    );
}

fn compaction_beside_an_appender_and_a_reader(mk: fn() -> TempDir) {
    let dir = mk();
    let log = Arc::new(
        open(
            dir.path(),
            cfg(&[
                ("cleanup.policy", "compact"),
                ("segment.bytes", "2000"),
                ("min.cleanable.dirty.ratio", "0.01"),
            ]),
        )
        .0,
    );
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let appender = {
        let (log, stop) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            for n in 0..3000 {
                let k = format!("k{}", n % 13);
                log.append(&keyed(&[(k.as_str(), Some("value"))], NOW), NOW, 0)
                    .unwrap();
                if n % 100 == 0 {
                    std::thread::yield_now();
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            3000
        })
    };
    let reader = {
        let (log, stop) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let start = log.log_start_offset();
                let end = log.log_end_offset();
                let offsets: Vec<i64> = all_records(&log, start).iter().map(|r| r.0).collect();
                assert!(offsets.windows(2).all(|w| w[0] < w[1]));
                assert!(offsets
                    .last()
                    .is_none_or(|&o| o < log.log_end_offset().max(end)));
                reads += 1;
            }
            reads
        })
    };
    let flusher = {
        let (log, stop) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                log.flush().unwrap();
            }
        })
    };
    let mut cleanings = 0;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) || cleanings == 0 {
        if log.compact(NOW, false).unwrap().cleaned {
            cleanings += 1;
        }
    }
    flusher.join().unwrap();
    let appended = appender.join().unwrap();
    assert!(reader.join().unwrap() > 0);
    assert!(cleanings > 0);
    assert_eq!(log.log_end_offset(), appended as i64);
    log.compact(NOW, true).unwrap();
    let keys: Vec<_> = all_records(&log, 0)
        .into_iter()
        .filter(|r| r.0 < *log.segment_bases().last().unwrap())
        .map(|r| r.1)
        .collect();
    let unique: std::collections::HashSet<_> = keys.iter().collect();
    assert_eq!(unique.len(), keys.len());
    // Flushes raced the swaps: every index file on disk still matches its segment.
    let before = all_records(&log, 0);
    log.close().unwrap();
    let (log, report) = open(dir.path(), cfg(&[("cleanup.policy", "compact")]));
    assert_eq!(report.indexes_rebuilt, 0, "{report:?}");
    assert_eq!(all_records(&log, 0), before);
}

fn an_interrupted_compaction_is_finished_or_undone_on_open(mk: fn() -> TempDir) {
    // Kafka's LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase... / swap file handling.
    let dir = mk();
    let c = cfg(&[("cleanup.policy", "compact"), ("segment.bytes", "400")]);
    let (log, _) = open(dir.path(), c.clone());
    for i in 0..40i64 {
        let k = format!("k{}", i % 3);
        log.append(&keyed(&[(k.as_str(), Some("v"))], NOW), NOW, 0)
            .unwrap();
    }
    let bases = log.segment_bases();
    log.close().unwrap();
    // A half-written .cleaned file: deleted.
    let cleaned = dir
        .path()
        .join(format!("{}.cleaned", files::name(0, files::LOG_SUFFIX)));
    vfs::write(&cleaned, b"partial").unwrap();
    // A complete .swap of the first two segments: it replaces them.
    let (log, _) = open(dir.path(), c.clone());
    let keep: Vec<u8> = {
        let s = log.read(bases[1], 1 << 20, bases[2], true).unwrap();
        s.bytes().unwrap()
    };
    drop(log);
    let swap = dir
        .path()
        .join(format!("{}.swap", files::name(0, files::LOG_SUFFIX)));
    vfs::write(&swap, &keep).unwrap();
    vfs::write(&cleaned, b"partial").unwrap();
    let (log, report) = open(dir.path(), c);
    assert_eq!(report.swaps_completed, 1);
    assert!(!cleaned.is_there() && !swap.is_there());
    assert_eq!(log.segment_bases()[0], 0);
    assert_eq!(log.segment_bases()[1], bases[2]);
    let offsets: Vec<i64> = all_records(&log, 0).iter().map(|r| r.0).collect();
    assert_eq!(offsets[0], bases[1]);
    assert_eq!(*offsets.last().unwrap(), 39);
}

#[test]
fn flush_runs_beside_appends_and_advances_the_recovery_point() {
    let dir = TempDir::new();
    let log = Arc::new(open(dir.path(), cfg(&[("segment.bytes", "5000")])).0);
    let appender = {
        let log = log.clone();
        std::thread::spawn(move || fill(&log, 300))
    };
    let mut last = 0;
    for _ in 0..20 {
        let durable = log.flush().unwrap();
        assert!(durable >= last);
        last = durable;
    }
    appender.join().unwrap();
    assert_eq!(log.flush().unwrap(), 600);
    assert_eq!(log.unflushed_messages(), 0);
    assert_eq!(log.recovery_point(), 600);
}

#[test]
fn offsets_for_timestamps_and_the_max_timestamp() {
    // Kafka's UnifiedLogTest.testFetchOffsetByTimestampIncludesLeaderEpoch /
    // testFetchLatestTieredTimestamp... (KIP-734) shape.
    let dir = TempDir::new();
    let (log, _) = open(
        dir.path(),
        cfg(&[("segment.bytes", "500"), ("index.interval.bytes", "1")]),
    );
    let ts = [100, 300, 200, 500, 400, 500];
    for (i, t) in ts.iter().enumerate() {
        let records = vec![rec(0, NOW + t, Some("a")), rec(1, NOW + t - 50, Some("b"))];
        log.append(
            &encode(records, Compression::None, NO_PRODUCER),
            NOW,
            i as i32,
        )
        .unwrap();
    }
    let at = |t: i64| {
        log.offset_for_timestamp(NOW + t)
            .unwrap()
            .map(|x| (x.offset, x.timestamp - NOW, x.leader_epoch))
    };
    assert_eq!(at(0), Some((0, 100, 0)));
    assert_eq!(at(100), Some((0, 100, 0)));
    assert_eq!(at(101), Some((2, 300, 1)));
    assert_eq!(at(260), Some((2, 300, 1)));
    assert_eq!(at(420), Some((6, 500, 3)));
    assert_eq!(at(501), None);
    let m = log.max_timestamp().unwrap().unwrap();
    assert_eq!((m.offset, m.timestamp - NOW, m.leader_epoch), (6, 500, 3));
}

/// valid_prefix is an oracle for recovery written with the records module: the end of the
/// longest run of whole v2 batches with valid CRCs and increasing offsets, and the next offset.
fn valid_prefix(data: &[u8]) -> (u64, i64) {
    let (mut end, mut next) = (0u64, 0i64);
    for b in crate::protocol::records::batches(data) {
        let Ok(b) = b else { break };
        match crate::protocol::records::BatchHeader::parse(b.bytes) {
            Ok(h) if h.base_offset >= next && h.last_offset_delta >= 0 => {
                end = (b.position + b.bytes.len()) as u64;
                next = h.next_offset();
            }
            _ => break,
        }
    }
    (end, next)
}

fn random_damage_never_panics_and_recovery_keeps_exactly_the_valid_prefix(mk: fn() -> TempDir) {
    let mut rng = Rng::new(Some(20240917));
    for round in 0..60 {
        let dir = mk();
        let (log, _) = open(dir.path(), cfg(&[("index.interval.bytes", "200")]));
        fill(&log, 12);
        if round % 3 == 0 {
            log.close().unwrap();
            // A clean marker with damaged data: the index check or the tail scan finds it.
            vfs::remove_file(dir.path().join(files::CLEAN_SHUTDOWN)).unwrap();
        }
        drop(log);
        let path = seg_path(dir.path(), 0, files::LOG_SUFFIX);
        let mut data = vfs::read(&path).unwrap();
        for _ in 0..1 + rng.next_u64() % 3 {
            let at = (rng.next_u64() % data.len() as u64) as usize;
            match rng.next_u64() % 3 {
                0 => data.truncate(at),
                1 => data[at] ^= 1 << (rng.next_u64() % 8),
                _ => data[at] = rng.next_u64() as u8,
            }
            if data.is_empty() {
                break;
            }
        }
        vfs::write(&path, &data).unwrap();
        let (end, next) = valid_prefix(&data);
        let (log, report) = open(dir.path(), cfg(&[("index.interval.bytes", "200")]));
        assert_eq!(
            report.bytes_truncated,
            data.len() as u64 - end,
            "round {round}"
        );
        assert_eq!(log.size(), end, "round {round}");
        assert_eq!(log.log_end_offset(), next, "round {round}");
        let n = all_records(&log, 0).len() as i64;
        assert!(n <= next, "round {round}");
    }
}

#[test]
#[ignore = "run by a_full_disk_is_a_storage_error_and_leaves_the_log_consistent in a child"]
fn full_disk_child() {
    extern "C" {
        fn setrlimit(resource: i32, rlim: *const [u64; 2]) -> i32;
        fn getrlimit(resource: i32, rlim: *mut [u64; 2]) -> i32;
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const RLIMIT_FSIZE: i32 = 1;
    const SIGXFSZ: i32 = 25;
    const SIG_IGN: usize = 1;
    let dir = TempDir::new();
    let (log, _) = open(dir.path(), cfg(&[]));
    fill(&log, 10);
    let size = log.size();
    let end = log.log_end_offset();
    let mut old = [0u64; 2];
    // SAFETY: plain libc calls on this child process; SIGXFSZ ignored makes writes past the
    // (soft) limit fail with EFBIG instead of killing the process.
    unsafe {
        assert_eq!(getrlimit(RLIMIT_FSIZE, &mut old), 0);
    }
    let limit = [size + 30, old[1]];
    unsafe {
        signal(SIGXFSZ, SIG_IGN);
        assert_eq!(setrlimit(RLIMIT_FSIZE, &limit), 0);
    }
    let e = log
        .append(&values(2, 100, NOW, Compression::None, NO_PRODUCER), NOW, 0)
        .unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e:?}");
    assert_eq!(code(e), ErrorCode::KafkaStorageError);
    assert_eq!(log.log_end_offset(), end);
    assert_eq!(log.size(), size);
    assert_eq!(
        vfs::file_len(seg_path(dir.path(), 0, files::LOG_SUFFIX)).unwrap(),
        size
    );
    assert_eq!(all_records(&log, 0).len() as i64, end);
    // SAFETY: as above.
    unsafe {
        assert_eq!(setrlimit(RLIMIT_FSIZE, &old), 0);
    }
    let a = log
        .append(&values(2, 100, NOW, Compression::None, NO_PRODUCER), NOW, 0)
        .unwrap();
    assert_eq!(a.base_offset, end);
    drop(log);
    let (log, report) = open(dir.path(), cfg(&[]));
    assert_eq!(report.bytes_truncated, 0);
    assert_eq!(log.log_end_offset(), end + 2);
    println!("full-disk-ok");
}

#[test]
fn a_full_disk_is_a_storage_error_and_leaves_the_log_consistent() {
    // RLIMIT_FSIZE stands in for a full disk (write fails with EFBIG as with ENOSPC), in a child
    // process so the limit touches no other test.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "log::tests::full_disk_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("full-disk-ok"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn log_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Log>();
    check::<FileSlice>();
}

fn rolls_when_the_index_is_full_and_after_segment_ms(mk: fn() -> TempDir) {
    // Kafka's UnifiedLogTest.testIndexRollOnFullIndex... / testTimeBasedLogRoll.
    let dir = mk();
    let (log, _) = open(
        dir.path(),
        cfg(&[("segment.index.bytes", "32"), ("index.interval.bytes", "0")]),
    );
    for _ in 0..12 {
        log.append(&keyed(&[("a", Some("b"))], NOW), NOW, 0)
            .unwrap();
    }
    // 4 offset entries (32 / 8) per segment, the first batch of each unindexed: 5 batches.
    assert_eq!(log.segment_bases(), [0, 5, 10]);
    let dir = mk();
    let (log, _) = open(dir.path(), cfg(&[("segment.ms", "1000")]));
    log.append(&keyed(&[("a", Some("b"))], NOW), NOW, 0)
        .unwrap();
    log.append(&keyed(&[("a", Some("b"))], NOW + 1000), NOW, 0)
        .unwrap();
    assert_eq!(log.segment_count(), 1);
    log.append(&keyed(&[("a", Some("b"))], NOW + 1001), NOW, 0)
        .unwrap();
    assert_eq!(log.segment_bases(), [0, 2]);
    // maintenance rolls an idle active segment too.
    assert!(!log.maintenance(NOW + 1500).unwrap().rolled);
    assert!(log.maintenance(NOW + 2002).unwrap().rolled);
    assert_eq!(log.segment_bases(), [0, 2, 3]);
}

#[test]
fn min_compaction_lag_leaves_recent_segments_dirty() {
    // Kafka's LogCleanerManagerTest.testCleanableOffsetsForTime shape.
    let dir = TempDir::new();
    let (log, _) = open(
        dir.path(),
        cfg(&[
            ("cleanup.policy", "compact"),
            ("segment.bytes", "300"),
            ("min.compaction.lag.ms", "1000"),
        ]),
    );
    for i in 0..20 {
        log.append(&keyed(&[("k", Some("v"))], NOW + i * 100), NOW, 0)
            .unwrap();
    }
    let r = log.compact(NOW + 1500, true).unwrap();
    // Segments with a record newer than NOW + 500 are not cleaned.
    let bases = log.segment_bases();
    let first_young = bases.iter().position(|&b| b >= r.end_offset).unwrap();
    assert!(r.end_offset <= 7, "{r:?}");
    assert!(first_young >= 1);
    let kept: Vec<i64> = all_records(&log, 0).iter().map(|r| r.0).collect();
    assert_eq!(kept[0], r.end_offset - 1);
    assert!(kept.contains(&19));
}

// -- deleted files and failing storage (issue 19) --------------------------------------------

/// open_fds_under counts this process's open files whose path contains `dir`'s.
fn open_fds_under(dir: &Path) -> usize {
    let needle = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|t| t.to_string_lossy().contains(&needle))
        .count()
}

fn names_with(dir: &Path, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = vfs::read_dir(dir)
        .unwrap()
        .into_iter()
        .map(|e| e.0)
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}

#[test]
fn removed_segments_wait_renamed_for_file_delete_delay_then_go() {
    // Kafka's LocalLog.deleteSegmentFiles: `.deleted` at once, removed after
    // file.delete.delay.ms, their files closed then.
    let dir = TempDir::new();
    let (log, _) = open(
        dir.path(),
        cfg(&[
            ("segment.bytes", "1000"),
            ("retention.bytes", "2500"),
            ("file.delete.delay.ms", "60000"),
        ]),
    );
    fill(&log, 40);
    log.flush().unwrap();
    let before = log.segment_bases();
    let r = log.maintenance(NOW).unwrap();
    assert!(r.segments_deleted > 0);
    let gone = &before[..r.segments_deleted];
    let deleted = names_with(dir.path(), ".log.deleted");
    assert_eq!(deleted.len(), gone.len(), "{deleted:?}");
    for base in gone {
        assert!(!seg_path(dir.path(), *base, files::LOG_SUFFIX).is_there());
        assert!(seg_path(dir.path(), *base, ".log.deleted").is_there());
    }
    assert_eq!(log.next_purge_ms(), Some(NOW + 60_000));
    assert_eq!(log.purge(NOW + 59_999).unwrap(), 0);
    assert_eq!(names_with(dir.path(), ".deleted").len(), deleted.len() * 3);
    assert_eq!(log.purge(NOW + 60_000).unwrap(), gone.len());
    assert!(names_with(dir.path(), ".deleted").is_empty());
    assert_eq!(log.next_purge_ms(), None);
    // No file of a removed segment is open any more.
    let open_deleted = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|t| {
            let t = t.to_string_lossy();
            t.contains(&*dir.path().to_string_lossy()) && t.contains(".deleted")
        })
        .count();
    assert_eq!(open_deleted, 0);
}

fn deleted_leftovers_go_at_the_next_open_and_delay_zero_deletes_at_once(mk: fn() -> TempDir) {
    let dir = mk();
    let c = || {
        cfg(&[
            ("segment.bytes", "1000"),
            ("retention.bytes", "2500"),
            ("file.delete.delay.ms", "60000"),
        ])
    };
    let (log, _) = open(dir.path(), c());
    fill(&log, 40);
    assert!(log.maintenance(NOW).unwrap().segments_deleted > 0);
    assert!(!names_with(dir.path(), ".deleted").is_empty());
    let start = log.log_start_offset();
    drop(log);
    let (log, _) = open(dir.path(), c());
    assert!(names_with(dir.path(), ".deleted").is_empty());
    assert_eq!(log.log_start_offset(), start);
    drop(log);
    let dir = mk();
    let (log, _) = open(
        dir.path(),
        cfg(&[
            ("segment.bytes", "1000"),
            ("retention.bytes", "2500"),
            ("file.delete.delay.ms", "0"),
        ]),
    );
    fill(&log, 40);
    assert!(log.maintenance(NOW).unwrap().segments_deleted > 0);
    assert!(names_with(dir.path(), ".deleted").is_empty());
    assert_eq!(log.next_purge_ms(), None);
}

#[test]
fn a_deleted_log_closes_every_file_at_once() {
    let dir = TempDir::new();
    let folder = dir.path().join("t-0");
    let (log, _) = open(&folder, cfg(&[("segment.bytes", "1000")]));
    fill(&log, 40);
    log.flush().unwrap();
    assert!(log.maintenance(NOW).is_ok());
    assert!(open_fds_under(&folder) > 0);
    let to = dir.path().join("t-0.abc-delete");
    log.delete(Some(&to)).unwrap();
    assert!(!folder.is_there() && to.is_folder());
    assert_eq!(open_fds_under(dir.path()), 0);
    assert_eq!(
        code(
            log.append(&keyed(&[("k", Some("v"))], NOW), NOW, 0)
                .unwrap_err()
        ),
        ErrorCode::KafkaStorageError
    );
    // Removed now without a target.
    let folder = dir.path().join("u-0");
    let (log, _) = open(&folder, cfg(&[]));
    fill(&log, 3);
    log.delete(None).unwrap();
    assert!(!folder.is_there());
    assert_eq!(open_fds_under(&folder), 0);
}

fn a_failed_write_leaves_the_log_as_it_was_and_it_serves_on(mk: fn() -> TempDir) {
    let dir = mk();
    let (log, _) = open(dir.path(), cfg(&[]));
    fill(&log, 3);
    let (end, size) = (log.log_end_offset(), log.size());
    let needle = dir.path().to_string_lossy().into_owned();
    faults::inject(faults::Op::Write, &needle, 28, Some(1));
    let e = log
        .append(&keyed(&[("a", Some("1"))], NOW), NOW, 0)
        .unwrap_err();
    assert!(
        matches!(&e, Error::Io(f) if f.os_error == Some(28) && !f.sync),
        "{e:?}"
    );
    assert_eq!(code(e), ErrorCode::KafkaStorageError);
    assert_eq!((log.log_end_offset(), log.size()), (end, size));
    assert_eq!(log.failure(), None);
    let r = log
        .append(&keyed(&[("b", Some("2"))], NOW), NOW, 0)
        .unwrap();
    assert_eq!(r.base_offset, end);
    log.close().unwrap();
    let (log, report) = open(dir.path(), cfg(&[]));
    assert!(report.clean);
    let rows = all_records(&log, 0);
    assert_eq!(rows.len() as i64, end + 1);
    assert_eq!(rows.last().unwrap().1.as_deref(), Some(&b"b"[..]));
}

fn a_failed_fsync_takes_the_log_offline_and_recovery_checks_it(mk: fn() -> TempDir) {
    // A failed fsync is never retried into a success: the log takes nothing more, is not
    // closed cleanly, and the next open recovers it from its last good fsync.
    let dir = mk();
    let (log, _) = open(dir.path(), cfg(&[]));
    fill(&log, 3);
    log.flush().unwrap();
    let durable = log.recovery_point();
    fill(&log, 2);
    let needle = dir.path().to_string_lossy().into_owned();
    faults::inject(faults::Op::Sync, &needle, 5, Some(1));
    let e = log.flush().unwrap_err();
    assert!(matches!(&e, Error::Io(f) if f.sync), "{e:?}");
    assert!(log.failure().is_some());
    assert_eq!(log.recovery_point(), durable);
    for e in [
        log.append(&keyed(&[("a", Some("1"))], NOW), NOW, 0)
            .unwrap_err(),
        log.read(0, 100, 5, true).unwrap_err(),
        log.flush().unwrap_err(),
    ] {
        assert_eq!(code(e), ErrorCode::KafkaStorageError);
    }
    // The fault is spent: a later fsync would succeed, and still the log stays offline.
    assert_eq!(code(log.flush().unwrap_err()), ErrorCode::KafkaStorageError);
    assert_eq!(code(log.close().unwrap_err()), ErrorCode::KafkaStorageError);
    assert!(!dir.path().join(files::CLEAN_SHUTDOWN).is_there());
    drop(log);
    let (log, report) = open(dir.path(), cfg(&[]));
    assert!(!report.clean);
    assert!(report.batches_checked > 0);
    // What the page cache kept is checked batch by batch, and here it is whole.
    assert_eq!(log.log_end_offset(), 10);
    log.append(&keyed(&[("a", Some("1"))], NOW), NOW, 0)
        .unwrap();
}

fn a_torn_append_takes_the_log_offline_and_recovery_cuts_it(mk: fn() -> TempDir) {
    // Part of a batch written and not cut back: the log takes nothing more (a later append
    // would sit after the partial batch), and the next open cuts it.
    let dir = mk();
    let (log, _) = open(dir.path(), cfg(&[]));
    fill(&log, 3);
    let (end, size) = (log.log_end_offset(), log.size());
    let needle = dir.path().to_string_lossy().into_owned();
    faults::inject(faults::Op::Write, &needle, 28, Some(1));
    faults::inject(faults::Op::Truncate, &needle, 5, Some(1));
    let batch = values(5, 200, NOW, Compression::None, NO_PRODUCER);
    assert!(log.append(&batch, NOW, 0).is_err());
    assert!(log.failure().is_some());
    let file = seg_path(dir.path(), 0, files::LOG_SUFFIX);
    assert_eq!(vfs::file_len(&file).unwrap(), size + batch.len() as u64 / 2);
    assert_eq!(
        code(
            log.append(&keyed(&[("a", Some("1"))], NOW), NOW, 0)
                .unwrap_err()
        ),
        ErrorCode::KafkaStorageError
    );
    assert!(log.close().is_err());
    drop(log);
    let (log, report) = open(dir.path(), cfg(&[]));
    assert!(!report.clean);
    assert_eq!(report.bytes_truncated, batch.len() as u64 / 2);
    assert_eq!((log.log_end_offset(), log.size()), (end, size));
    let r = log
        .append(&keyed(&[("b", Some("2"))], NOW), NOW, 0)
        .unwrap();
    assert_eq!(r.base_offset, end);
    assert_eq!(all_records(&log, 0).len() as i64, end + 1);
}

// Transactions.

/// txn_batch is a transactional batch of producer `pid` (epoch `epoch`, sequence `seq`) with
/// `keys` as records, values `v<key>`.
fn txn_batch(pid: i64, epoch: i16, seq: i32, keys: &[&str]) -> Vec<u8> {
    let records = keys
        .iter()
        .enumerate()
        .map(|(i, k)| Record {
            offset: i as i64,
            timestamp: NOW,
            key: Some(k.as_bytes().to_vec()),
            value: Some(format!("v{k}").into_bytes()),
            headers: vec![],
        })
        .collect();
    with_fields(records, |f| {
        f.producer_id = pid;
        f.producer_epoch = epoch;
        f.base_sequence = seq;
        f.is_transactional = true;
    })
}

fn aborted(log: &Log, from: i64, to: i64) -> Vec<(i64, i64)> {
    log.aborted_transactions(from, to)
        .into_iter()
        .map(|t| (t.producer_id, t.first_offset))
        .collect()
}

#[test]
fn first_unstable_offset_follows_open_transactions() {
    // Kafka's UnifiedLogTest.testFirstUnstableOffsetNoTransactionalData,
    // testFirstUnstableOffsetWithTransactionalData and testFirstUnstableOffsetDoesNotExceed...:
    // the earliest open transaction's first offset, None once all are complete.
    let dir = TempDir::new();
    let (log, _) = open(dir.path(), cfg(&[]));
    log.append(&values(3, 10, NOW, Compression::None, NO_PRODUCER), NOW, 0)
        .unwrap();
    assert_eq!(log.first_unstable_offset(), None);
    let a = log
        .append(&txn_batch(1, 0, 0, &["a", "b"]), NOW, 0)
        .unwrap();
    assert_eq!(a.base_offset, 3);
    let b = log.append(&txn_batch(2, 0, 0, &["c"]), NOW, 0).unwrap();
    log.append(&txn_batch(1, 0, 2, &["d"]), NOW, 0).unwrap();
    assert_eq!(log.first_unstable_offset(), Some(3));
    assert_eq!(log.ongoing_transaction(1), Some(3));
    assert_eq!(log.ongoing_transaction(2), Some(b.base_offset));
    let m = log.append_marker(1, 0, true, 0, NOW, 0).unwrap();
    assert_eq!((m.base_offset, m.last_offset), (7, 7));
    assert_eq!(log.log_end_offset(), 8);
    assert_eq!(log.first_unstable_offset(), Some(b.base_offset));
    assert_eq!(log.ongoing_transaction(1), None);
    log.append_marker(2, 0, false, 0, NOW, 0).unwrap();
    assert_eq!(log.first_unstable_offset(), None);
    // The marker is a control batch of one COMMIT record with the coordinator epoch.
    let bytes = log.read(7, 1 << 20, 8, true).unwrap().bytes().unwrap();
    let h = crate::protocol::records::BatchHeader::parse(&bytes).unwrap();
    assert!(h.is_control() && h.is_transactional());
    assert_eq!(
        (h.producer_id, h.producer_epoch, h.base_sequence),
        (1, 0, -1)
    );
    assert_eq!(validate::read_marker(&bytes), Some((true, 0)));
    // DescribeProducers.
    let ps = log.producers();
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0].producer_id, 1);
    assert_eq!(
        (ps[0].last_sequence, ps[0].current_txn_start_offset),
        (2, -1)
    );
}

fn aborted_transactions_are_indexed_and_collected_for_fetches(mk: fn() -> TempDir) {
    // Kafka's UnifiedLogTest.testTransactionIndexUpdated and testCollectAbortedTransactions...:
    // every aborted transaction overlapping the fetched range, across segments; commits are not
    // indexed; a fetch past a transaction's marker does not see it.
    let dir = mk();
    let (log, _) = open(dir.path(), cfg(&[("segment.bytes", "300")]));
    // pid 1: 0..=1 aborted at 3; pid 2: 2 committed at 4; pid 3: 5..=6 aborted at 8 with
    // pid 4 open from 7 (so the entry's last stable offset is 7).
    log.append(&txn_batch(1, 0, 0, &["a"]), NOW, 0).unwrap();
    log.append(&txn_batch(1, 0, 1, &["b"]), NOW, 0).unwrap();
    log.append(&txn_batch(2, 0, 0, &["c"]), NOW, 0).unwrap();
    log.append_marker(1, 0, false, 0, NOW, 0).unwrap();
    log.append_marker(2, 0, true, 0, NOW, 0).unwrap();
    log.append(&txn_batch(3, 0, 0, &["d", "e"]), NOW, 0)
        .unwrap();
    log.append(&txn_batch(4, 0, 0, &["f"]), NOW, 0).unwrap();
    let m = log.append_marker(3, 0, false, 0, NOW, 0).unwrap();
    assert_eq!(m.base_offset, 8);
    assert!(log.segment_count() > 2, "markers and data across segments");
    assert_eq!(aborted(&log, 0, 9), vec![(1, 0), (3, 5)]);
    assert_eq!(aborted(&log, 0, 2), vec![(1, 0)]);
    assert_eq!(aborted(&log, 2, 5), vec![(1, 0)]);
    assert_eq!(aborted(&log, 4, 6), vec![(3, 5)]);
    assert_eq!(aborted(&log, 9, 10), vec![]);
    let all = log.aborted_transactions(0, 100);
    assert_eq!(all[1].last_offset, 8);
    assert_eq!(all[1].last_stable_offset, 7);
    assert_eq!(
        all[0].last_stable_offset, 2,
        "pid 2 was open from 2 when pid 1 aborted"
    );
    // The entries live in the .txnindex of the markers' segments, written on flush.
    log.flush().unwrap();
    log.close().unwrap();
    let idx = names_with(dir.path(), ".txnindex");
    assert_eq!(idx.len(), 2, "{idx:?}");
    let (log, report) = open(dir.path(), cfg(&[("segment.bytes", "300")]));
    assert!(report.clean);
    assert_eq!(
        report.batches_replayed, 0,
        "the index files are trusted: {report:?}"
    );
    assert_eq!(aborted(&log, 0, 9), vec![(1, 0), (3, 5)]);
    assert_eq!(log.first_unstable_offset(), Some(7));
}

#[test]
fn markers_are_fenced_by_producer_and_coordinator_epochs() {
    // Kafka's UnifiedLogTest.testOldProducerEpochForControlRecord... / ProducerStateManagerTest
    // .testCoordinatorFencing through the log: nothing is written for a fenced marker.
    let dir = TempDir::new();
    let (log, _) = open(dir.path(), cfg(&[]));
    log.append(&txn_batch(1, 5, 0, &["a"]), NOW, 0).unwrap();
    let e = log.append_marker(1, 4, true, 0, NOW, 0).unwrap_err();
    assert_eq!(code(e), ErrorCode::InvalidProducerEpoch);
    log.append_marker(1, 5, false, 3, NOW, 0).unwrap();
    log.append(&txn_batch(1, 5, 1, &["b"]), NOW, 0).unwrap();
    let e = log.append_marker(1, 5, true, 2, NOW, 0).unwrap_err();
    assert_eq!(code(e), ErrorCode::TransactionCoordinatorFenced);
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(log.ongoing_transaction(1), Some(2));
    // A marker for a producer with no open transaction is written and completes nothing.
    let m = log.append_marker(9, 0, false, 3, NOW, 0).unwrap();
    assert_eq!(m.base_offset, 3);
    assert_eq!(aborted(&log, 0, 10), vec![(1, 0)]);
    assert_eq!(log.first_unstable_offset(), Some(2));
    // A non-transactional batch while the transaction is open: INVALID_TXN_STATE.
    let plain = encode(
        vec![rec(0, NOW, Some("x"))],
        Compression::None,
        Producer {
            id: 1,
            epoch: 5,
            seq: 2,
        },
    );
    assert_eq!(
        code(log.append(&plain, NOW, 0).unwrap_err()),
        ErrorCode::InvalidTxnState
    );
    // Negative ids are no markers.
    assert_eq!(
        code(log.append_marker(-1, 0, true, 0, NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
}

#[test]
fn coordinator_batches_skip_client_only_checks() {
    // Kafka's AppendOrigin.COORDINATOR: the group coordinator's transactional offset commits
    // carry a producer id and epoch with sequence -1, which a client may not send.
    let dir = TempDir::new();
    let (log, _) = open(dir.path(), cfg(&[("cleanup.policy", "compact")]));
    let commit = |epoch| {
        with_fields(vec![rec(0, NOW, Some("g"))], |f| {
            f.producer_id = 7;
            f.producer_epoch = epoch;
            f.base_sequence = -1;
            f.is_transactional = true;
        })
    };
    assert_eq!(
        code(log.append(&commit(1), NOW, 0).unwrap_err()),
        ErrorCode::InvalidRecord
    );
    let a = log
        .append_from(&commit(1), NOW, 0, AppendOrigin::Coordinator)
        .unwrap();
    let b = log
        .append_from(&commit(1), NOW, 0, AppendOrigin::Coordinator)
        .unwrap();
    assert!(!b.duplicate && b.base_offset == a.base_offset + 1);
    assert_eq!(log.ongoing_transaction(7), Some(0));
    assert_eq!(
        code(
            log.append_from(&commit(0), NOW, 0, AppendOrigin::Coordinator)
                .unwrap_err()
        ),
        ErrorCode::InvalidProducerEpoch
    );
    let control = with_fields(vec![rec(0, NOW, Some("g"))], |f| {
        f.producer_id = 7;
        f.producer_epoch = 1;
        f.is_control = true;
        f.is_transactional = true;
    });
    for origin in [AppendOrigin::Client, AppendOrigin::Coordinator] {
        assert_eq!(
            code(log.append_from(&control, NOW, 0, origin).unwrap_err()),
            ErrorCode::InvalidRecord
        );
    }
    log.append_marker(7, 1, true, 0, NOW, 0).unwrap();
    assert_eq!(log.first_unstable_offset(), None);
}

fn a_crash_keeps_open_transactions_open_and_rebuilds_the_aborted_index(mk: fn() -> TempDir) {
    // Kafka's LogLoaderTest.testRecoveryRebuildsTransactionIndex... /
    // UnifiedLogTest.testRecoverTransactionIndex shape: kill -9 (no close, no flush) after
    // segments were cut, then reopen: the open transaction still bounds the LSO, the aborted
    // transactions are collected again, and a second crash after the reopen keeps them.
    for damage in ["none", "rescan-all", "corrupt-txnindex"] {
        let dir = mk();
        let c = cfg(&[("segment.bytes", "300")]);
        let (log, _) = open(dir.path(), c.clone());
        log.append(&txn_batch(1, 0, 0, &["a", "b"]), NOW, 0)
            .unwrap();
        log.append(&txn_batch(2, 0, 0, &["c"]), NOW, 0).unwrap();
        log.append_marker(1, 0, false, 4, NOW, 0).unwrap();
        for i in 0..4 {
            log.append(&values(1, 60, NOW, Compression::None, NO_PRODUCER), NOW, 0)
                .unwrap();
            let _ = i;
        }
        log.append(&txn_batch(3, 0, 0, &["d"]), NOW, 0).unwrap();
        log.append_marker(3, 0, false, 4, NOW, 0).unwrap();
        log.flush().unwrap();
        assert!(log.segment_count() > 2);
        let want_aborted = aborted(&log, 0, 100);
        assert_eq!(want_aborted, vec![(1, 0), (3, 8)]);
        let fuo = log.first_unstable_offset();
        assert_eq!(fuo, Some(2));
        drop(log);
        match damage {
            "rescan-all" | "corrupt-txnindex" => {
                // The index of a flushed segment is gone or torn: the replay rebuilds it.
                let idx = names_with(dir.path(), ".txnindex");
                assert!(!idx.is_empty());
                for n in idx {
                    let p = dir.path().join(n);
                    if damage == "rescan-all" {
                        vfs::remove_file(&p).unwrap();
                    } else {
                        vfs::write(&p, [0u8; 20]).unwrap();
                    }
                }
                // Kafka trusts a flushed segment without a .txnindex; kgroup only rescans
                // when told by a damaged file, so drop the recovery point as a crash before
                // the flush would.
                if damage == "rescan-all" {
                    vfs::remove_file(dir.path().join(files::RECOVERY_POINT)).unwrap();
                }
            }
            _ => {}
        }
        let (log, report) = open(dir.path(), c.clone());
        assert!(!report.clean, "{damage}");
        assert_eq!(log.first_unstable_offset(), fuo, "{damage}");
        assert_eq!(log.ongoing_transaction(2), Some(2), "{damage}");
        assert_eq!(aborted(&log, 0, 100), want_aborted, "{damage}");
        // The reopened log goes on: pid 2 commits, and a second crash keeps it all.
        log.append_marker(2, 0, true, 4, NOW, 0).unwrap();
        assert_eq!(log.first_unstable_offset(), None);
        drop(log);
        let (log, _) = open(dir.path(), c);
        assert_eq!(log.first_unstable_offset(), None, "{damage}");
        assert_eq!(aborted(&log, 0, 100), want_aborted, "{damage}");
        let p = log.producers();
        assert_eq!(p.iter().map(|p| p.coordinator_epoch).max(), Some(4));
    }
}

fn txn_indexes_go_with_their_segments_and_below_the_log_start(mk: fn() -> TempDir) {
    // Kafka's UnifiedLogTest.testDeleteOldSegments... with transactions: retention deletes a
    // segment's .txnindex with it; DeleteRecords hides the aborted transactions below the log
    // start offset.
    let dir = mk();
    let c = cfg(&[("segment.bytes", "250"), ("retention.bytes", "1")]);
    let (log, _) = open(dir.path(), c.clone());
    log.append(&txn_batch(1, 0, 0, &["a"]), NOW, 0).unwrap();
    log.append_marker(1, 0, false, 0, NOW, 0).unwrap();
    for _ in 0..3 {
        log.append(&values(1, 60, NOW, Compression::None, NO_PRODUCER), NOW, 0)
            .unwrap();
    }
    log.append(&txn_batch(2, 0, 0, &["b"]), NOW, 0).unwrap();
    log.append_marker(2, 0, false, 0, NOW, 0).unwrap();
    log.flush().unwrap();
    assert_eq!(aborted(&log, 0, 100), vec![(1, 0), (2, 5)]);
    assert_eq!(
        names_with(dir.path(), ".txnindex").len(),
        1,
        "the active one is unwritten"
    );
    let end = log.log_end_offset();
    let r = log.maintenance(NOW).unwrap();
    assert!(r.segments_deleted > 0);
    assert!(log.log_start_offset() > 1);
    assert_eq!(aborted(&log, 0, 100), vec![(2, 5)]);
    assert!(names_with(dir.path(), ".txnindex").is_empty());
    // DeleteRecords past the second marker: nothing left to report.
    log.delete_records(end, end).unwrap();
    assert_eq!(aborted(&log, 0, 100), vec![]);
}

#[test]
fn compaction_stops_at_the_first_unstable_offset_and_keeps_transactions() {
    // Kafka's LogCleanerTest.testBasicTransactionAwareCleaning /
    // testCleanWithTransactionsSpanningSegments shape, under kgroup's simpler rule: nothing at
    // or past the first unstable offset is cleaned, aborted data and markers are kept whole,
    // aborted records never displace committed ones, and the aborted index survives cleaning.
    let dir = TempDir::new();
    let c = cfg(&[("cleanup.policy", "compact"), ("segment.bytes", "250")]);
    let (log, _) = open(dir.path(), c.clone());
    let put = |k: &str, v: &str| {
        log.append(&keyed(&[(k, Some(v))], NOW), NOW, 0).unwrap();
    };
    put("k", "committed-1"); // 0
    log.append(&txn_batch(1, 0, 0, &["k"]), NOW, 0).unwrap(); // 1, aborted
    log.append_marker(1, 0, false, 0, NOW, 0).unwrap(); // 2
    log.append(&txn_batch(2, 0, 0, &["j"]), NOW, 0).unwrap(); // 3, committed
    log.append_marker(2, 0, true, 0, NOW, 0).unwrap(); // 4
    put("j", "plain-2"); // 5
    log.append(&txn_batch(3, 0, 0, &["j"]), NOW, 0).unwrap(); // 6, open
    for i in 0..6 {
        put(&format!("x{}", i % 2), "filler"); // 7..
    }
    assert_eq!(log.first_unstable_offset(), Some(6));
    let r = log.compact(NOW, true).unwrap();
    assert!(r.cleaned);
    assert!(r.end_offset <= 6, "{r:?}");
    let rows = all_records(&log, 0);
    let at = |o: i64| rows.iter().find(|r| r.0 == o).map(|r| r.2.clone().unwrap());
    assert_eq!(
        at(0),
        Some(b"committed-1".to_vec()),
        "aborted k@1 does not displace k@0"
    );
    assert_eq!(at(1), Some(b"vk".to_vec()), "aborted data is kept");
    assert!(
        rows.iter().any(|r| r.0 == 6),
        "the open transaction is untouched"
    );
    let bytes = log.read(2, 1 << 20, 3, true).unwrap().bytes().unwrap();
    assert_eq!(
        validate::read_marker(&bytes),
        Some((false, 0)),
        "markers are kept"
    );
    if r.end_offset > 5 {
        assert_eq!(at(3), None, "committed j@3 is superseded by j@5");
    }
    assert_eq!(aborted(&log, 0, 100), vec![(1, 1)]);
    // Once the transaction completes the rest is cleanable; the index survives a reopen.
    log.append_marker(3, 0, true, 0, NOW, 0).unwrap();
    for _ in 0..4 {
        put("x0", "filler");
    }
    let r = log.compact(NOW, true).unwrap();
    assert!(r.end_offset > 6, "{r:?}");
    let rows = all_records(&log, 0);
    assert!(rows.iter().any(|r| r.0 == 6), "j@6 is the latest j");
    assert!(!rows.iter().any(|r| r.0 == 5), "j@5 is superseded");
    assert!(rows.iter().any(|r| r.0 == 1));
    assert_eq!(aborted(&log, 0, 100), vec![(1, 1)]);
    log.close().unwrap();
    assert_eq!(names_with(dir.path(), ".txnindex").len(), 1);
    assert!(names_with(dir.path(), ".swap").is_empty());
    let (log, _) = open(dir.path(), c);
    assert_eq!(aborted(&log, 0, 100), vec![(1, 1)]);
}

fn a_compaction_swap_finished_on_open_keeps_the_aborted_index(mk: fn() -> TempDir) {
    // Kafka's LogLoaderTest swap recovery with a transaction index: a complete `.log.swap`
    // (with its `.txnindex.swap`) replaces the segment, and its aborted transactions are there
    // after the open; a `.txnindex.swap` without its segment's swap is deleted.
    let dir = mk();
    let c = cfg(&[("cleanup.policy", "compact"), ("segment.bytes", "300")]);
    let (log, _) = open(dir.path(), c.clone());
    log.append(&txn_batch(1, 0, 0, &["a"]), NOW, 0).unwrap();
    log.append_marker(1, 0, false, 0, NOW, 0).unwrap();
    for i in 0..8 {
        let k = format!("k{i}");
        log.append(&keyed(&[(k.as_str(), Some("v"))], NOW), NOW, 0)
            .unwrap();
    }
    let bases = log.segment_bases();
    assert!(bases.len() > 2);
    let seg0 = vfs::read(seg_path(dir.path(), 0, files::LOG_SUFFIX)).unwrap();
    log.close().unwrap();
    let idx = seg_path(dir.path(), 0, files::TXN_INDEX_SUFFIX);
    let entries = vfs::read(&idx).unwrap();
    assert_eq!(entries.len(), 34);
    vfs::remove_file(&idx).unwrap();
    vfs::write(seg_path(dir.path(), 0, ".log.swap"), &seg0).unwrap();
    vfs::write(seg_path(dir.path(), 0, ".txnindex.swap"), &entries).unwrap();
    let orphan = seg_path(dir.path(), bases[1], ".txnindex.swap");
    vfs::write(&orphan, &entries).unwrap();
    let (log, report) = open(dir.path(), c);
    assert_eq!(report.swaps_completed, 1);
    assert!(!orphan.is_there());
    assert_eq!(vfs::read(&idx).unwrap(), entries);
    assert_eq!(aborted(&log, 0, 100), vec![(1, 0)]);
}

#[test]
fn random_transactions_match_a_model_across_rolls_and_crashes() {
    // Kafka's invariants under random interleavings of four producers: the first unstable
    // offset is the earliest open transaction's first offset, a fetch's aborted list holds
    // exactly the aborted transactions overlapping its range, and both survive a kill -9 at
    // any point (recovery replays markers) and a clean close.
    let mut rng = Rng::new(Some(20261128));
    for round in 0..6 {
        let dir = TempDir::new();
        let c = cfg(&[("segment.bytes", "500")]);
        let (mut log, _) = open(dir.path(), c.clone());
        let mut seq = [0i32; 4];
        let mut open_txn: [Option<i64>; 4] = [None; 4];
        // (pid, first offset, marker offset) of every aborted transaction.
        let mut aborted_model: Vec<(i64, i64, i64)> = Vec::new();
        for step in 0..120 {
            let p = (rng.next_u64() % 4) as usize;
            let pid = 100 + p as i64;
            match rng.next_u64() % 10 {
                0..=5 => {
                    let n = 1 + (rng.next_u64() % 3) as usize;
                    let keys: Vec<String> = (0..n).map(|i| format!("s{step}-{i}")).collect();
                    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                    let a = log
                        .append(&txn_batch(pid, 0, seq[p], &keys), NOW, 0)
                        .unwrap();
                    seq[p] += n as i32;
                    open_txn[p].get_or_insert(a.base_offset);
                }
                6..=8 => {
                    let commit = rng.next_u64() % 2 == 0;
                    let m = log.append_marker(pid, 0, commit, 0, NOW, 0).unwrap();
                    if let (Some(first), false) = (open_txn[p].take(), commit) {
                        aborted_model.push((pid, first, m.base_offset));
                    }
                }
                _ => {
                    if rng.next_u64() % 3 == 0 {
                        log.flush().unwrap();
                    }
                    if rng.next_u64() % 2 == 0 {
                        log.close().unwrap();
                    }
                    drop(log);
                    log = open(dir.path(), c.clone()).0;
                }
            }
            let fuo = open_txn.iter().flatten().min().copied();
            assert_eq!(
                log.first_unstable_offset(),
                fuo,
                "round {round} step {step}"
            );
            let end = log.log_end_offset();
            for _ in 0..3 {
                let from = (rng.next_u64() % (end as u64 + 1)) as i64;
                let to = from + (rng.next_u64() % 20) as i64;
                let want: Vec<(i64, i64)> = aborted_model
                    .iter()
                    .filter(|(_, first, last)| *last >= from && *first < to)
                    .map(|(pid, first, _)| (*pid, *first))
                    .collect();
                let got = aborted(&log, from, to);
                // Kafka's early stop (at an entry whose last stable offset reaches `to`) never
                // leaves out an overlapping transaction.
                assert_eq!(got, want, "round {round} step {step} [{from}, {to})");
            }
        }
    }
}
