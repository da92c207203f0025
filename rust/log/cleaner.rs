//! Compaction: Kafka's `LogCleaner` for one log with cleanup.policy compact.
//!
//! From the first dirty offset (the cleaner checkpoint) to the first uncleanable offset (the
//! active segment's base, the first segment with records younger than min.compaction.lag.ms,
//! or the first segment reaching the first unstable offset: nothing of an open transaction is
//! ever cleaned), a map of each key's latest offset is built; then every segment below
//! the first uncleanable offset is rewritten, in groups up to segment.bytes, keeping a record
//! only if it is its key's latest. Offsets are kept (the holes are legal), and so are the
//! batches' producer id, epoch and sequence; the last batch of each producer the log remembers
//! is kept even when emptied, so its sequence state survives. Records without a key are
//! dropped. A tombstone (null value) is kept, and its batch gets a delete horizon (KIP-534:
//! attribute bit 6, base timestamp = cleaning time + delete.retention.ms) the first time it is
//! cleaned; a later cleaning after that horizon drops it.
//!
//! Transactions, by a simpler rule than Kafka's (which drops aborted data and, after a delete
//! horizon, markers): control batches are always kept, and so are the batches of aborted
//! transactions (found in the aborted-transaction indexes), whole and as they are; their
//! records never enter the key map, so an aborted record never displaces a committed one. The
//! records of committed transactions are cleaned as any others. The aborted-transaction index
//! entries of a group's segments are carried over to its cleaned segment.
//!
//! Each group is written to `<base>.log.cleaned` and synced with no lock held (with its
//! aborted-transaction index, if any, written and synced as `<base>.txnindex.swap`), renamed to
//! `.log.swap` (now complete: recovery would finish the swap), then swapped in under the log's
//! lock (a list splice); then the old segments are renamed `.deleted` (removed after
//! file.delete.delay.ms), the folder synced and the swap files renamed `.txnindex` and `.log`. Appends and fetches wait only for the splice.

use std::collections::HashMap;
use std::sync::Arc;

use super::files;
use super::segment::{scan, BatchInfo, Segment};
use super::validate::decode_one;
use super::Log;
use crate::errors::Result;
use crate::protocol::records::{BatchHeader, RecordBatch, RecordRef, TimestampType};

/// CompactionReport says what [`Log::compact`] found and did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactionReport {
    /// cleaned says a cleaning ran.
    pub cleaned: bool,
    pub first_dirty_offset: i64,
    /// end_offset is the first uncleanable offset: the new first dirty offset.
    pub end_offset: i64,
    /// dirty_ratio is dirty bytes / cleanable bytes before cleaning.
    pub dirty_ratio: f64,
    pub segments_before: usize,
    pub segments_after: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
    pub records_removed: u64,
    pub tombstones_removed: u64,
    /// groups_skipped counts groups not swapped in because retention or DeleteRecords removed
    /// one of their segments meanwhile.
    pub groups_skipped: usize,
}

struct Plan {
    cleanable: Vec<Arc<Segment>>,
    first_dirty: i64,
    end: i64,
    producer_last: HashMap<i64, i64>,
    /// aborted maps a producer id to the (first offset, marker offset) of its aborted
    /// transactions.
    aborted: HashMap<i64, Vec<(i64, i64)>>,
}

/// is_aborted says the data batch `h` belongs to an aborted transaction.
fn is_aborted(aborted: &HashMap<i64, Vec<(i64, i64)>>, h: &BatchHeader) -> bool {
    h.is_transactional()
        && !h.is_control()
        && aborted.get(&h.producer_id).is_some_and(|r| {
            r.iter()
                .any(|&(first, last)| first <= h.base_offset && h.base_offset <= last)
        })
}

impl Log {
    /// compact cleans the log at `now_ms` if cleanup.policy includes compact and the log is
    /// due: its dirty ratio is at least min.cleanable.dirty.ratio, a dirty record is older than
    /// max.compaction.lag.ms, a cleaned tombstone's delete horizon has passed, or `force`.
    /// Safe to run beside appends, reads, flushes and maintenance; one compaction runs at a
    /// time.
    pub fn compact(&self, now_ms: i64, force: bool) -> Result<CompactionReport> {
        let cfg = self.config();
        let mut report = CompactionReport::default();
        if !cfg.cleanup_policy.compact {
            return Ok(report);
        }
        let _one = self.clean_lock.lock().unwrap_or_else(|e| e.into_inner());
        let (plan, horizon_due) = {
            let st = self.read_state();
            st.check_open()?;
            let n = st.segments.len() - 1;
            let mut end_idx = n;
            if cfg.min_compaction_lag_ms > 0 {
                let limit = now_ms.saturating_sub(cfg.min_compaction_lag_ms);
                if let Some(i) = st.segments[..n]
                    .iter()
                    .position(|s| s.largest_timestamp() > limit)
                {
                    end_idx = i;
                }
            }
            if let Some(fuo) = st.producers.first_unstable_offset() {
                if let Some(i) = st.segments[..end_idx]
                    .iter()
                    .position(|s| s.next_offset() > fuo)
                {
                    end_idx = i;
                }
            }
            let mut aborted: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
            for s in &st.segments {
                for t in s.aborted() {
                    aborted
                        .entry(t.producer_id)
                        .or_default()
                        .push((t.first_offset, t.last_offset));
                }
            }
            let first_base = st.segments[0].base_offset;
            let first_dirty = st
                .cleaner_ckpt
                .value()
                .unwrap_or(first_base)
                .max(first_base);
            let plan = Plan {
                cleanable: st.segments[..end_idx].to_vec(),
                first_dirty,
                end: st.segments[end_idx].base_offset,
                producer_last: st
                    .producers
                    .producers
                    .iter()
                    .map(|(id, e)| (*id, e.last_offset()))
                    .collect(),
                aborted,
            };
            (plan, st.delete_horizon.is_some_and(|h| h <= now_ms))
        };
        report.first_dirty_offset = plan.first_dirty;
        report.end_offset = plan.end;
        report.segments_before = plan.cleanable.len();
        let dirty: u64 = plan
            .cleanable
            .iter()
            .filter(|s| s.base_offset >= plan.first_dirty)
            .map(|s| s.size())
            .sum();
        let total: u64 = plan.cleanable.iter().map(|s| s.size()).sum();
        report.bytes_before = total;
        report.dirty_ratio = if total == 0 {
            0.0
        } else {
            dirty as f64 / total as f64
        };
        let lag_due = plan
            .cleanable
            .iter()
            .find(|s| s.base_offset >= plan.first_dirty)
            .and_then(|s| s.meta().first_timestamp)
            .is_some_and(|t| t >= 0 && now_ms.saturating_sub(t) > cfg.max_compaction_lag_ms);
        let due = force
            || horizon_due
            || lag_due
            || (dirty > 0 && report.dirty_ratio >= cfg.min_cleanable_dirty_ratio);
        if plan.cleanable.is_empty() || !due {
            return Ok(report);
        }
        report.cleaned = true;

        // The offset map: each key's latest offset in the dirty section.
        let mut map: HashMap<Box<[u8]>, i64> = HashMap::new();
        for seg in plan
            .cleanable
            .iter()
            .filter(|s| s.base_offset >= plan.first_dirty)
        {
            for_each_batch(seg, |_, bytes, h| {
                if h.is_control() || is_aborted(&plan.aborted, h) {
                    return Ok(());
                }
                let d = decode_one(bytes)?;
                for r in d.records() {
                    if let Some(k) = r.key {
                        map.insert(k.into(), r.offset);
                    }
                }
                Ok(())
            })?;
        }

        let ctx = Filter {
            map: &map,
            producer_last: &plan.producer_last,
            aborted: &plan.aborted,
            now_ms,
            horizon: now_ms.saturating_add(cfg.delete_retention_ms),
        };
        let mut next_horizon: Option<i64> = None;
        for group in groups(&plan.cleanable, cfg.segment_bytes, cfg.index_entries(12)) {
            let cleaned = self.clean_group(&group, &ctx, &mut report, &mut next_horizon)?;
            if !self.swap_in(&group, cleaned)? {
                report.groups_skipped += 1;
            }
        }
        let mut st = self.write_state();
        // A group left out stays dirty: the checkpoint moves only when every group was cleaned.
        if report.groups_skipped == 0 {
            let created = st.cleaner_ckpt.write(plan.end, true)?;
            st.dir_dirty |= created;
        }
        st.delete_horizon = next_horizon;
        report.segments_after = st
            .segments
            .iter()
            .take_while(|s| s.base_offset < plan.end)
            .count();
        report.bytes_after = st
            .segments
            .iter()
            .take_while(|s| s.base_offset < plan.end)
            .map(|s| s.size())
            .sum();
        Ok(report)
    }

    /// clean_group writes the retained batches of `group` to `<base>.log.cleaned`, syncs it and
    /// renames it `.log.swap`.
    fn clean_group(
        &self,
        group: &[Arc<Segment>],
        f: &Filter<'_>,
        report: &mut CompactionReport,
        next_horizon: &mut Option<i64>,
    ) -> Result<Arc<Segment>> {
        let base = group[0].base_offset;
        let cleaned = self.dir.join(format!(
            "{}{}",
            files::name(base, files::LOG_SUFFIX),
            files::CLEANED_SUFFIX
        ));
        let out = Segment::create(cleaned, base, f.now_ms)?;
        let interval = self.config().index_interval_bytes;
        let mut buf = Vec::new();
        for seg in group {
            for_each_batch(seg, |_, bytes, h| {
                let kept = f.filter(bytes, h, &mut buf, report, next_horizon)?;
                if let Some(bytes) = kept {
                    let h = BatchHeader::parse_with(bytes, false)?;
                    let info = BatchInfo {
                        base_offset: h.base_offset,
                        last_offset: h.last_offset(),
                        max_timestamp: h.max_timestamp,
                        offset_of_max_timestamp: h.last_offset(),
                    };
                    out.append(bytes, &info, interval)?;
                }
                Ok(())
            })?;
            for t in seg.aborted() {
                out.push_aborted(t);
            }
        }
        out.on_inactive();
        let path = out.path();
        files::sync_data(out.file(), &path).map_err(|e| files::io(e, "syncing", &path))?;
        let txns = out.encoded_txn_index();
        if txns.is_empty() {
            // One left by a group that was not swapped in must not come with this one.
            files::remove(&txn_swap_path(&self.dir, base))?;
        } else {
            files::write_atomic(&txn_swap_path(&self.dir, base), &txns, true)?;
        }
        let swap = self.dir.join(format!(
            "{}{}",
            files::name(base, files::LOG_SUFFIX),
            files::SWAP_SUFFIX
        ));
        out.rename_to(swap)?;
        files::sync_dir(&self.dir)?;
        Ok(Arc::new(out))
    }

    /// swap_in replaces `group` by `cleaned` under the log's lock, unless one of the group's
    /// segments is gone (then the cleaned file is deleted). Returns whether it swapped.
    fn swap_in(&self, group: &[Arc<Segment>], cleaned: Arc<Segment>) -> Result<bool> {
        let mut st = self.write_state();
        let at = st.segments.iter().position(|s| Arc::ptr_eq(s, &group[0]));
        let intact = at.is_some_and(|i| {
            st.segments.len() > i + group.len()
                && group
                    .iter()
                    .zip(&st.segments[i..])
                    .all(|(a, b)| Arc::ptr_eq(a, b))
        });
        let Some(i) = at.filter(|_| intact) else {
            drop(st);
            cleaned.discard()?;
            files::remove(&txn_swap_path(&self.dir, cleaned.base_offset))?;
            return Ok(false);
        };
        cleaned.set_installing(true);
        st.segments
            .splice(i..i + group.len(), std::iter::once(cleaned.clone()));
        st.dir_dirty = true;
        drop(st);
        // Fetches read the cleaned segment from here on (through its open file). The old
        // segments must be gone for good before the swap file takes their name, or a crash
        // could leave both; recovery finishes the swap from any point of this sequence.
        self.delete_segments(group.to_vec(), super::now_wall_ms())?;
        files::sync_dir(&self.dir)?;
        let txn_swap = txn_swap_path(&self.dir, cleaned.base_offset);
        if super::vfs::exists(&txn_swap) {
            files::rename(
                &txn_swap,
                &self
                    .dir
                    .join(files::name(cleaned.base_offset, files::TXN_INDEX_SUFFIX)),
            )?;
            cleaned.adopt_txn_index();
        }
        cleaned.rename_to(super::segment::log_path(&self.dir, cleaned.base_offset))?;
        cleaned.set_installing(false);
        cleaned.sync()?;
        Ok(true)
    }
}

/// txn_swap_path is where a cleaned segment's aborted-transaction index waits for its swap.
pub(super) fn txn_swap_path(dir: &std::path::Path, base: i64) -> std::path::PathBuf {
    dir.join(format!(
        "{}{}",
        files::name(base, files::TXN_INDEX_SUFFIX),
        files::SWAP_SUFFIX
    ))
}

/// groups splits the cleanable segments into runs whose total size fits `max_bytes`, whose
/// offsets fit a segment's relative offsets, and whose time index entries fit one index
/// (Kafka's `groupSegmentsBySize`).
fn groups(segs: &[Arc<Segment>], max_bytes: u64, max_entries: usize) -> Vec<Vec<Arc<Segment>>> {
    let mut out: Vec<Vec<Arc<Segment>>> = Vec::new();
    let mut size = 0u64;
    let mut entries = 0usize;
    for s in segs {
        let (s_size, s_entries, s_next) = {
            let m = s.meta();
            (s.size(), m.times.len() + m.offsets.len(), m.next_offset)
        };
        let fits = out.last().is_some_and(|g| {
            size + s_size <= max_bytes
                && entries + s_entries <= max_entries
                && s_next - g[0].base_offset <= i32::MAX as i64
        });
        if fits {
            out.last_mut().expect("checked").push(s.clone());
            size += s_size;
            entries += s_entries;
        } else {
            out.push(vec![s.clone()]);
            size = s_size;
            entries = s_entries;
        }
    }
    out
}

fn for_each_batch(
    seg: &Segment,
    mut f: impl FnMut(u64, &[u8], &BatchHeader) -> Result<()>,
) -> Result<()> {
    scan(
        seg.file(),
        &seg.path(),
        0,
        seg.size(),
        i64::MIN,
        |p, b, h| f(p, b, h),
    )?;
    Ok(())
}

struct Filter<'a> {
    map: &'a HashMap<Box<[u8]>, i64>,
    producer_last: &'a HashMap<i64, i64>,
    aborted: &'a HashMap<i64, Vec<(i64, i64)>>,
    now_ms: i64,
    /// horizon is the delete horizon given to batches whose tombstones are cleaned first now.
    horizon: i64,
}

impl Filter<'_> {
    /// filter is Kafka's `MemoryRecords.filterTo` with the cleaner's `RecordFilter` for one
    /// batch: the batch as it is, rebuilt with the records kept (into `buf`), or None.
    fn filter<'b>(
        &self,
        bytes: &'b [u8],
        h: &BatchHeader,
        buf: &'b mut Vec<u8>,
        report: &mut CompactionReport,
        next_horizon: &mut Option<i64>,
    ) -> Result<Option<&'b [u8]>> {
        let retain_empty =
            h.producer_id >= 0 && self.producer_last.get(&h.producer_id) == Some(&h.last_offset());
        if h.is_control() || is_aborted(self.aborted, h) {
            // Transaction markers and aborted transactions' data are kept as they are.
            return Ok(Some(bytes));
        }
        let d = decode_one(bytes)?;
        let horizon = h.has_delete_horizon().then_some(h.base_timestamp);
        let mut kept: Vec<RecordRef<'_>> = Vec::with_capacity(d.spans.len());
        let mut tombstones = false;
        for r in d.records() {
            let keep = match r.key {
                None => false,
                Some(k) => {
                    let latest = self.map.get(k).is_none_or(|&o| r.offset >= o);
                    let keep_delete = horizon.is_none_or(|t| self.now_ms < t);
                    latest && (r.value.is_some() || keep_delete)
                }
            };
            if keep {
                tombstones |= r.value.is_none();
                kept.push(r);
            } else {
                report.records_removed += 1;
                if r.value.is_none() && r.key.is_some() {
                    report.tombstones_removed += 1;
                }
            }
        }
        if kept.is_empty() && !retain_empty {
            return Ok(None);
        }
        let set_horizon = tombstones && horizon.is_none();
        if tombstones {
            let t = horizon.unwrap_or(self.horizon);
            *next_horizon = Some(next_horizon.map_or(t, |n: i64| n.min(t)));
        }
        if kept.len() == d.spans.len() && !set_horizon {
            return Ok(Some(bytes));
        }
        let mut b = RecordBatch {
            fields: d.batch.fields,
            records: Vec::new(),
        };
        if set_horizon {
            b.has_delete_horizon = true;
            b.base_timestamp = self.horizon;
        }
        b.derive_from(&kept).map_err(|e| {
            crate::errors::Error::corrupt(crate::errors::Corruption::Record, e.to_string())
        })?;
        // Kafka keeps the original last offset, so the producer's last sequence stays.
        b.last_offset_delta = h.last_offset_delta;
        if b.timestamp_type == TimestampType::LogAppendTime || kept.is_empty() {
            b.max_timestamp = h.max_timestamp;
        }
        buf.clear();
        b.encode_with(&kept, buf, None)?;
        Ok(Some(&buf[..]))
    }
}
