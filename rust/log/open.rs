//! Opening a log: Kafka's `LogLoader`. Leftovers of an interrupted compaction are resolved,
//! segments are loaded (clean close, or wholly below the recovery point: indexes read and
//! sanity-checked, rebuilt if bad) or recovered (every batch from the recovery point's segment
//! on is checked; the log is cut at the first bad or torn one and later segments dropped), and
//! the producer state is loaded from the latest snapshot and the batches (transaction markers
//! included) after it. The aborted-transaction index of every segment that was rescanned (or
//! whose `.txnindex` is damaged) is rebuilt by that replay, which then starts from a snapshot
//! no later than the first such segment (Kafka's `LogSegment.recover` with a producer state
//! rebuilt up to the segment).

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use super::files::{self, Checkpoint, IoContext};
use super::producer::ProducerState;
use super::segment::{self, scan, Segment};
use super::txnindex::AbortedTxn;
use super::validate::read_marker;
use super::vfs;
use super::{list_suffix, now_wall_ms, Log, LogConfig, RecoveryReport, State};
use crate::errors::Result;

impl Log {
    /// open opens (or creates) the log in `dir` with `config` at `now_ms`, recovering it after
    /// an unclean stop; see the module doc of `open.rs` for what it checks. I/O failures are
    /// [`Error::Io`](crate::Error::Io).
    pub fn open(dir: &Path, config: LogConfig, now_ms: i64) -> Result<(Log, RecoveryReport)> {
        vfs::create_dir_all(dir).ctx("creating", dir)?;
        let mut report = RecoveryReport::default();
        let interval = config.index_interval_bytes;
        let marker = dir.join(files::CLEAN_SHUTDOWN);
        report.clean = vfs::exists(&marker);

        resolve_leftovers(dir, &mut report)?;

        let mut logs = list_suffix(dir, files::LOG_SUFFIX)?;
        logs.sort_unstable();
        let recovery_ckpt = Checkpoint::open(dir.join(files::RECOVERY_POINT));
        let start_ckpt = Checkpoint::open(dir.join(files::LOG_START_OFFSET));
        let cleaner_ckpt = Checkpoint::open(dir.join(files::CLEANER_OFFSET));
        let recovery_point = if report.clean {
            i64::MAX
        } else {
            recovery_ckpt.value().unwrap_or(0)
        };

        let mut segments: Vec<Arc<Segment>> = Vec::with_capacity(logs.len());
        // rebuild_txns[i]: segment i's aborted-transaction index is rebuilt by the replay.
        let mut rebuild_txns: Vec<bool> = Vec::with_capacity(logs.len());
        let mut cut_at: Option<usize> = None;
        let mut next_min = 0i64;
        for (i, (base, path)) in logs.iter().enumerate() {
            let seg = Segment::open(path.clone(), *base)?;
            let next_base = logs.get(i + 1).map_or(i64::MAX, |l| l.0);
            let flushed = next_base <= recovery_point;
            let (rebuilt, scan, cut) = if flushed {
                seg.load(interval)?
            } else {
                let (scan, cut) = seg.recover(next_min, interval)?;
                (true, scan, cut)
            };
            // A rescanned segment without markers has an empty index: no replay needed for it.
            rebuild_txns.push(if rebuilt {
                scan.controls > 0
            } else {
                !seg.load_txn_index()
            });
            report.batches_checked += scan.batches;
            report.indexes_rebuilt += rebuilt as usize;
            report.bytes_truncated += cut;
            next_min = seg.next_offset();
            segments.push(Arc::new(seg));
            if cut > 0 {
                cut_at = Some(i + 1);
                break;
            }
        }
        if let Some(n) = cut_at {
            for (base, path) in &logs[n..] {
                let seg = Segment::open(path.clone(), *base)?;
                seg.delete_files()?;
                report.segments_deleted += 1;
            }
        }
        // Everything recovered is made durable before the recovery point moves past it.
        for s in &segments {
            if s.is_dirty() {
                s.sync()?;
            }
            s.set_synced();
        }
        if segments.is_empty() {
            let base = start_ckpt.value().unwrap_or(0).max(0);
            let seg = Segment::create(segment::log_path(dir, base), base, now_ms)?;
            segments.push(Arc::new(seg));
            rebuild_txns.push(false);
        }
        let next_offset = segments.last().map_or(0, |s| s.next_offset());
        let first_base = segments[0].base_offset;
        let log_start_offset = start_ckpt
            .value()
            .unwrap_or(first_base)
            .max(first_base)
            .min(next_offset);

        let mut producers = ProducerState::default();
        let (snap, replayed) =
            load_producers(dir, &segments, &rebuild_txns, next_offset, &mut producers)?;
        report.snapshot_offset = snap;
        report.batches_replayed = replayed;
        // The rebuilt aborted-transaction indexes are written before the recovery point moves
        // past their segments: a later open trusts those.
        for (s, _) in segments.iter().zip(&rebuild_txns).filter(|(_, r)| **r) {
            if s.is_dirty() {
                s.sync()?;
            }
        }
        producers.expire(now_ms, config.producer_id_expiration_ms);

        report.segments = segments.len();
        report.log_start_offset = log_start_offset;
        report.log_end_offset = next_offset;

        let mut recovery_ckpt = recovery_ckpt;
        recovery_ckpt.write(next_offset, true)?;
        files::remove(&marker)?;
        files::sync_dir(dir)?;

        let state = State {
            segments,
            log_start_offset,
            next_offset,
            recovery_point: next_offset,
            producers,
            dir_dirty: false,
            last_flush_ms: now_wall_ms(),
            recovery_ckpt,
            start_ckpt,
            cleaner_ckpt,
            closed: false,
            failed: None,
            trash: Vec::new(),
            delete_horizon: None,
        };
        let log = Log {
            dir: dir.to_path_buf(),
            config: RwLock::new(Arc::new(config)),
            state: RwLock::new(state),
            flush_lock: Mutex::new(()),
            clean_lock: Mutex::new(()),
        };
        Ok((log, report))
    }
}

/// resolve_leftovers finishes or undoes an interrupted compaction as Kafka's LogLoader does:
/// `.cleaned` files are incomplete and deleted; a `.log.swap` file is a complete cleaned
/// segment, so the segments it replaces are deleted and it is renamed to `.log`. Temporary
/// files, the `.deleted` files of segments taken out of the log, and index files without a
/// segment go too.
fn resolve_leftovers(dir: &Path, report: &mut RecoveryReport) -> Result<()> {
    let mut swaps = Vec::new();
    let mut indexes = Vec::new();
    for (name, path) in vfs::read_dir(dir).ctx("listing", dir)? {
        if name.ends_with(files::CLEANED_SUFFIX)
            || name.ends_with(".tmp")
            || name.ends_with(files::DELETED_SUFFIX)
        {
            files::remove(&path)?;
            report.segments_deleted += name.contains(".log") as usize;
        } else if name.ends_with(files::SWAP_SUFFIX) {
            match files::parse(&name) {
                Some((base, ".log.swap")) => swaps.push((base, path)),
                // Put in place with its segment's swap below, or deleted if it has none.
                Some((_, ".txnindex.swap")) => {}
                _ => files::remove(&path)?,
            }
        } else if let Some((base, s)) = files::parse(&name) {
            if s == files::INDEX_SUFFIX
                || s == files::TIME_INDEX_SUFFIX
                || s == files::TXN_INDEX_SUFFIX
            {
                indexes.push((base, path));
            }
        }
    }
    swaps.sort_unstable();
    for (base, swap) in swaps {
        let seg = Segment::open(swap.clone(), base)?;
        seg.recover(base, u64::MAX)?;
        let end = seg.next_offset();
        for (o, path) in list_suffix(dir, files::LOG_SUFFIX)? {
            if o >= base && (o < end || o == base) {
                Segment::open(path, o)?.delete_files()?;
            }
        }
        drop(seg);
        let txn_swap = super::cleaner::txn_swap_path(dir, base);
        if vfs::exists(&txn_swap) {
            files::rename(
                &txn_swap,
                &dir.join(files::name(base, files::TXN_INDEX_SUFFIX)),
            )?;
        }
        let target = segment::log_path(dir, base);
        files::rename(&swap, &target)?;
        report.swaps_completed += 1;
    }
    for (_, path) in list_suffix(dir, ".txnindex.swap")? {
        // A cleaned segment's index whose segment never became complete.
        files::remove(&path)?;
    }
    let logs: std::collections::HashSet<i64> = list_suffix(dir, files::LOG_SUFFIX)?
        .into_iter()
        .map(|l| l.0)
        .collect();
    for (base, path) in indexes {
        if !logs.contains(&base) {
            files::remove(&path)?;
        }
    }
    files::sync_dir(dir)
}

/// load_producers loads the latest readable snapshot at or below `end` (deleting later or
/// damaged ones) and no later than the first segment with `rebuild_txns` set, and replays the
/// batches after it, rebuilding the aborted-transaction indexes of those segments. Returns the
/// snapshot's offset and the batches replayed.
fn load_producers(
    dir: &Path,
    segments: &[Arc<Segment>],
    rebuild_txns: &[bool],
    end: i64,
    producers: &mut ProducerState,
) -> Result<(Option<i64>, u64)> {
    let limit = segments
        .iter()
        .zip(rebuild_txns)
        .find(|(_, r)| **r)
        .map_or(end, |(s, _)| s.base_offset.min(end));
    let mut snaps = list_suffix(dir, files::SNAPSHOT_SUFFIX)?;
    snaps.sort_unstable();
    let mut from = None;
    while let Some((o, path)) = snaps.pop() {
        if o > end {
            files::remove(&path)?;
            continue;
        }
        if o > limit {
            // Valid, but past a segment whose index the replay must rebuild.
            continue;
        }
        match vfs::read(&path)
            .ok()
            .and_then(|d| ProducerState::decode(&d).ok())
        {
            Some((offset, s)) if offset == o => {
                *producers = s;
                from = Some(o);
                break;
            }
            _ => files::remove(&path)?,
        }
    }
    let start = from.unwrap_or(i64::MIN);
    let mut replayed = 0;
    for (seg, rebuild) in segments.iter().zip(rebuild_txns) {
        if seg.next_offset() <= start {
            continue;
        }
        let pos = if start > seg.base_offset {
            seg.find(start, seg.size())?
                .map_or(seg.size(), |h| h.position)
        } else {
            0
        };
        scan(
            seg.file(),
            &seg.path(),
            pos,
            seg.size(),
            i64::MIN,
            |_, batch, h| {
                if h.base_offset < start {
                    return Ok(());
                }
                replayed += 1;
                if !h.is_control() {
                    producers.update(h);
                    return Ok(());
                }
                let Some((commit, coordinator_epoch)) = read_marker(batch) else {
                    return Ok(());
                };
                let done = producers.complete_txn(
                    h.producer_id,
                    h.producer_epoch,
                    coordinator_epoch,
                    commit,
                    h.base_offset,
                    h.max_timestamp,
                );
                if let Some(t) = done.filter(|t| t.aborted && *rebuild) {
                    seg.push_aborted(AbortedTxn {
                        producer_id: t.producer_id,
                        first_offset: t.first_offset,
                        last_offset: t.last_offset,
                        last_stable_offset: t.last_stable_offset,
                    });
                }
                Ok(())
            },
        )?;
    }
    Ok((from, replayed))
}
