//! Segment: one `.log` file of record batches as appended, with its offset, time and
//! aborted-transaction indexes (Kafka's `LogSegment`).
//!
//! Thread safety: the bytes below [`Segment::size`] never change once written (appends go past
//! it, and a segment is only ever cut short while its log is being opened), so readers read them
//! with `read_at` holding no lock. Appends are serialised by the log; the indexes and counters
//! sit behind the segment's own mutex, held for a lookup or an update, never for I/O on the log
//! file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::files::{
    self, IoContext, DELETED_SUFFIX, INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX,
};
use super::index::{Index, OffsetEntry, TimeEntry};
use super::txnindex::{AbortedTxn, TxnIndex};
use super::vfs::{self, File, Mode};
use crate::errors::Result;
use crate::protocol::records::{BatchHeader, BATCH_OVERHEAD, LOG_OVERHEAD};

/// HeaderInfo is what a scan reads of a batch header without checking it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderInfo {
    pub position: u64,
    pub base_offset: i64,
    pub last_offset: i64,
    pub size: u64,
    pub max_timestamp: i64,
}

impl HeaderInfo {
    /// read decodes the first 43 bytes of a v2 batch header; None if `b` is too short.
    pub fn read(position: u64, b: &[u8]) -> Option<HeaderInfo> {
        if b.len() < 43 {
            return None;
        }
        let base = i64::from_be_bytes(b[..8].try_into().ok()?);
        let length = i32::from_be_bytes(b[8..12].try_into().ok()?);
        let delta = i32::from_be_bytes(b[23..27].try_into().ok()?);
        let max_ts = i64::from_be_bytes(b[35..43].try_into().ok()?);
        Some(HeaderInfo {
            position,
            base_offset: base,
            last_offset: base + delta as i64,
            size: LOG_OVERHEAD as u64 + length.max(0) as u64,
            max_timestamp: max_ts,
        })
    }
}

/// Meta is a segment's mutable bookkeeping: indexes, next offset, largest timestamp.
#[derive(Debug)]
pub struct Meta {
    pub offsets: Index<OffsetEntry>,
    pub times: Index<TimeEntry>,
    /// txns is the aborted-transaction index: the transactions aborted by markers here.
    pub txns: TxnIndex,
    bytes_since_index: u64,
    /// next_offset is the offset after the segment's last batch (the base offset when empty).
    pub next_offset: i64,
    /// max_timestamp is the largest batch max timestamp (-1: none), at offset_of_max_timestamp.
    pub max_timestamp: i64,
    pub offset_of_max_timestamp: i64,
    /// first_timestamp is the first batch's max timestamp, which segment.ms counts from.
    pub first_timestamp: Option<i64>,
    pub created_ms: i64,
    synced_size: u64,
}

/// Paths is where the segment's files are; `deleted` once they were deleted; `installing`
/// while a cleaned segment is being renamed into place (its index files are not written then,
/// as their names are still the replaced segment's).
#[derive(Debug)]
struct Paths {
    log: PathBuf,
    deleted: bool,
    installing: bool,
}

/// Segment is one segment file and its indexes. See the module doc for what is safe to do
/// concurrently.
#[derive(Debug)]
pub struct Segment {
    pub base_offset: i64,
    file: File,
    paths: Mutex<Paths>,
    size: AtomicU64,
    /// torn says a failed append could not be cut back: the file may hold part of a batch past
    /// [`size`](Self::size), and the log must take no more appends until it is recovered.
    torn: AtomicBool,
    pub meta: Mutex<Meta>,
}

/// Batch is one appended batch as a segment records it in its indexes.
#[derive(Debug, Clone, Copy)]
pub struct BatchInfo {
    pub base_offset: i64,
    pub last_offset: i64,
    pub max_timestamp: i64,
    pub offset_of_max_timestamp: i64,
}

/// Scan is how a scan of a segment ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// valid_end is the position after the last valid batch.
    pub valid_end: u64,
    /// invalid says why the bytes at valid_end are not a valid batch (None: the scan reached
    /// the end).
    pub invalid: Option<String>,
    pub batches: u64,
    /// controls counts the control batches seen (set by [`Segment::recover`] only).
    pub controls: u64,
}

const CHUNK: usize = 1 << 20;

/// scan reads the batches of `file` between `from` and `end`, checking each as Kafka's
/// `LogSegment.recover` does (a whole v2 batch, a valid CRC, offsets increasing from
/// `min_offset`), and calls `f` with each valid batch; it stops at the first that is not.
pub fn scan(
    file: &File,
    path: &Path,
    from: u64,
    end: u64,
    mut min_offset: i64,
    mut f: impl FnMut(u64, &[u8], &BatchHeader) -> Result<()>,
) -> Result<Scan> {
    let mut buf: Vec<u8> = Vec::new();
    let mut buf_at = from;
    let mut pos = from;
    let mut batches = 0;
    let stop = |pos: u64, why: String, batches: u64| Scan {
        valid_end: pos,
        invalid: Some(why),
        batches,
        controls: 0,
    };
    while pos < end {
        let need_header = (end - pos).min(BATCH_OVERHEAD as u64) as usize;
        if pos + need_header as u64 > buf_at + buf.len() as u64 {
            buf_at = pos;
            let n = ((end - pos) as usize).min(CHUNK);
            buf.resize(n, 0);
            file.read_exact_at(&mut buf, pos).ctx("reading", path)?;
        }
        let rel = (pos - buf_at) as usize;
        if end - pos < BATCH_OVERHEAD as u64 {
            return Ok(stop(pos, format!("torn batch header at {pos}"), batches));
        }
        let length = i32::from_be_bytes(buf[rel + 8..rel + 12].try_into().unwrap_or_default());
        let magic = buf[rel + 16] as i8;
        if magic != 2 {
            return Ok(stop(pos, format!("magic {magic} at {pos}"), batches));
        }
        if length < (BATCH_OVERHEAD - LOG_OVERHEAD) as i32 {
            return Ok(stop(
                pos,
                format!("batch length {length} at {pos}"),
                batches,
            ));
        }
        let size = LOG_OVERHEAD as u64 + length as u64;
        if pos + size > end {
            return Ok(stop(pos, format!("torn batch at {pos}"), batches));
        }
        if pos + size > buf_at + buf.len() as u64 {
            buf_at = pos;
            let n = ((end - pos) as usize).min(CHUNK.max(size as usize));
            buf.resize(n, 0);
            file.read_exact_at(&mut buf, pos).ctx("reading", path)?;
        }
        let rel = (pos - buf_at) as usize;
        let batch = &buf[rel..rel + size as usize];
        let h = match BatchHeader::parse(batch) {
            Ok(h) => h,
            Err(e) => return Ok(stop(pos, format!("{e} at {pos}"), batches)),
        };
        if h.base_offset < min_offset || h.last_offset_delta < 0 {
            return Ok(stop(
                pos,
                format!(
                    "offset {} at {pos} does not follow {}",
                    h.base_offset,
                    min_offset - 1
                ),
                batches,
            ));
        }
        f(pos, batch, &h)?;
        min_offset = h.next_offset();
        batches += 1;
        pos += size;
    }
    Ok(Scan {
        valid_end: pos,
        invalid: None,
        batches,
        controls: 0,
    })
}

impl Segment {
    fn new(base_offset: i64, file: File, log: PathBuf, size: u64, created_ms: i64) -> Segment {
        let dir = log.parent().unwrap_or(Path::new(".")).to_path_buf();
        let meta = Meta {
            offsets: Index::new(
                dir.join(files::name(base_offset, INDEX_SUFFIX)),
                base_offset,
            ),
            times: Index::new(
                dir.join(files::name(base_offset, TIME_INDEX_SUFFIX)),
                base_offset,
            ),
            txns: TxnIndex::new(
                dir.join(files::name(base_offset, TXN_INDEX_SUFFIX)),
                base_offset,
            ),
            bytes_since_index: 0,
            next_offset: base_offset,
            max_timestamp: -1,
            offset_of_max_timestamp: -1,
            first_timestamp: None,
            created_ms,
            synced_size: size,
        };
        Segment {
            base_offset,
            file,
            paths: Mutex::new(Paths {
                log,
                deleted: false,
                installing: false,
            }),
            size: AtomicU64::new(size),
            torn: AtomicBool::new(false),
            meta: Mutex::new(meta),
        }
    }

    /// create makes an empty segment file at `path` (an existing file there is emptied).
    pub fn create(path: PathBuf, base_offset: i64, now_ms: i64) -> Result<Segment> {
        let file = files::create_rw(&path)?;
        let mut s = Segment::new(base_offset, file, path, 0, now_ms);
        s.meta
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .synced_size = 0;
        Ok(s)
    }

    /// open opens an existing segment file; its indexes are loaded by [`load`](Self::load) or
    /// rebuilt by [`recover`](Self::recover).
    pub fn open(path: PathBuf, base_offset: i64) -> Result<Segment> {
        let file = vfs::open(&path, Mode::ReadWrite).ctx("opening", &path)?;
        let len = file.len().ctx("reading metadata of", &path)?;
        let created = file.modified_ms().unwrap_or(0);
        Ok(Segment::new(base_offset, file, path, len, created))
    }

    /// size is the segment's committed length in bytes: everything below it is whole batches.
    pub fn size(&self) -> u64 {
        self.size.load(Ordering::Acquire)
    }

    pub fn meta(&self) -> std::sync::MutexGuard<'_, Meta> {
        self.meta.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// path is the segment file's current path.
    pub fn path(&self) -> PathBuf {
        self.paths
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .log
            .clone()
    }

    /// file is the open segment file (for sendfile, if on disk: valid while the segment is
    /// held).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// next_offset is the offset after the last batch.
    pub fn next_offset(&self) -> i64 {
        self.meta().next_offset
    }

    /// append writes one batch at the end and indexes it (Kafka's `LogSegment.append`). On a
    /// write error the file is cut back and nothing changes; if even the cut fails the
    /// segment is [`torn`](Self::is_torn). The caller serialises appends.
    pub fn append(&self, batch: &[u8], info: &BatchInfo, index_interval: u64) -> Result<()> {
        let pos = self.size();
        // The path (a lock and a copy) only when a fault may apply or the write failed.
        let written = if super::faults::armed() {
            files::write_at(&self.file, batch, pos, &self.path())
        } else {
            self.file.write_all_at(batch, pos)
        };
        if let Err(e) = written {
            let path = self.path();
            let mut err = files::io(e, "appending to", &path);
            // Nothing to cut if nothing was written (a read-only filesystem fails the write
            // and the cut alike); torn only if part of the batch stays past `pos`.
            let longer = self.file.len().map_or(true, |l| l > pos);
            if let Err(cut) =
                files::set_len(&self.file, pos, &path).or_else(
                    |e| {
                        if longer {
                            Err(e)
                        } else {
                            Ok(())
                        }
                    },
                )
            {
                self.torn.store(true, Ordering::Release);
                err = files::io(
                    cut,
                    &format!("{err}; then cutting back a partial batch in"),
                    &path,
                );
            }
            return Err(err);
        }
        let mut m = self.meta();
        m.index_batch(pos, batch.len() as u64, info, index_interval);
        drop(m);
        self.size.store(pos + batch.len() as u64, Ordering::Release);
        Ok(())
    }

    /// read reads `len` bytes at `position`.
    pub fn read(&self, position: u64, len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; len];
        self.read_into(position, &mut out)?;
        Ok(out)
    }

    /// read_into fills `out` with the bytes at `position`.
    pub fn read_into(&self, position: u64, out: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(out, position)
            .map_err(|e| files::io(e, "reading", &self.path()))
    }

    /// header reads the header of the batch at `position` (which must be a batch start below
    /// `size`).
    pub fn header(&self, position: u64) -> Result<Option<HeaderInfo>> {
        let mut b = [0u8; 43];
        if position + 43 > self.size() {
            return Ok(None);
        }
        self.file
            .read_exact_at(&mut b, position)
            .map_err(|e| files::io(e, "reading", &self.path()))?;
        Ok(HeaderInfo::read(position, &b))
    }

    /// find is Kafka's `translateOffset`: the first batch at or after the index entry for
    /// `offset` whose last offset is at least `offset`, below `size`.
    pub fn find(&self, offset: i64, size: u64) -> Result<Option<HeaderInfo>> {
        let mut pos = self.meta().offsets.lookup(offset).position as u64;
        while pos < size {
            let Some(h) = self.header(pos)? else {
                return Ok(None);
            };
            if h.last_offset >= offset {
                return Ok(Some(h));
            }
            pos += h.size;
        }
        Ok(None)
    }

    /// end_of_whole_batches is the end of the last whole batch between `from` (a batch start)
    /// and `limit`, never below the end of the first batch when `min_one`.
    pub fn end_of_whole_batches(&self, from: u64, limit: u64, size: u64) -> Result<u64> {
        let hint = self.meta().offsets.lookup_position(limit).position as u64;
        let mut pos = if hint > from { hint } else { from };
        while pos < size {
            let Some(h) = self.header(pos)? else { break };
            if pos + h.size > limit {
                break;
            }
            pos += h.size;
        }
        Ok(pos)
    }

    /// recover rescans the whole segment from `min_offset` on, rebuilds its indexes, and cuts
    /// the file at the first batch that is not valid (Kafka's `LogSegment.recover`). Returns
    /// the scan and the bytes cut.
    pub fn recover(&self, min_offset: i64, index_interval: u64) -> Result<(Scan, u64)> {
        let path = self.path();
        let size = self.file.len().ctx("reading metadata of", &path)?;
        let mut m = self.meta();
        m.offsets.reset();
        m.times.reset();
        // Rebuilt by the replay of the producer state over the segment (see `open.rs`); a file
        // left from before is rewritten or deleted at the next sync.
        m.txns.reset();
        m.txns.assume_file();
        let mut controls = 0;
        m.bytes_since_index = 0;
        m.next_offset = self.base_offset;
        m.max_timestamp = -1;
        m.offset_of_max_timestamp = -1;
        m.first_timestamp = None;
        let scan = scan(
            &self.file,
            &path,
            0,
            size,
            min_offset.max(self.base_offset),
            |pos, batch, h| {
                let info = BatchInfo {
                    base_offset: h.base_offset,
                    last_offset: h.last_offset(),
                    max_timestamp: h.max_timestamp,
                    offset_of_max_timestamp: h.last_offset(),
                };
                m.index_batch(pos, batch.len() as u64, &info, index_interval);
                controls += h.is_control() as u64;
                Ok(())
            },
        )?;
        let scan = Scan { controls, ..scan };
        let cut = size - scan.valid_end;
        if cut > 0 {
            self.file.set_len(scan.valid_end).ctx("truncating", &path)?;
            files::sync_data(&self.file, &path).ctx("syncing", &path)?;
        }
        m.synced_size = scan.valid_end;
        drop(m);
        self.size.store(scan.valid_end, Ordering::Release);
        Ok((scan, cut))
    }

    /// load reads the index files written by an earlier flush; if both pass Kafka's sanity
    /// checks it scans only the batches after the last offset index entry, otherwise it
    /// rebuilds them with [`recover`](Self::recover). Returns whether it rebuilt, and the cut.
    pub fn load(&self, index_interval: u64) -> Result<(bool, Scan, u64)> {
        let size = self.size();
        let base = self.base_offset;
        let (opath, tpath) = {
            let m = self.meta();
            (m.offsets.path.clone(), m.times.path.clone())
        };
        let offsets = Index::<OffsetEntry>::load(opath, base, |e| {
            Index::<OffsetEntry>::is_valid(base, size, e)
        });
        let from = offsets
            .as_ref()
            .and_then(|o| o.last().copied())
            .map_or(0, |e| e.position as u64);
        let from_offset = offsets
            .as_ref()
            .and_then(|o| o.last().copied())
            .map_or(base, |e| e.offset);
        // The batch at the last index entry must be there and hold that entry's offset.
        let tail_ok = match (&offsets, from) {
            (Some(_), 0) => true,
            (Some(_), p) => self
                .header(p)?
                .is_some_and(|h| h.last_offset == from_offset),
            _ => false,
        };
        let Some(offsets) = offsets.filter(|_| tail_ok) else {
            let (scan, cut) = self.recover(base, index_interval)?;
            return Ok((true, scan, cut));
        };
        let mut tail = Vec::new();
        let scan = scan(&self.file, &self.path(), from, size, base, |pos, _, h| {
            tail.push((pos, *h));
            Ok(())
        })?;
        let mut times = None;
        if let Some((_, last)) = tail.last() {
            let next = last.next_offset();
            let t = Index::<TimeEntry>::load(tpath.clone(), base, |e| {
                Index::<TimeEntry>::is_valid(base, next, e)
            });
            times = t;
        }
        if scan.invalid.is_some() || (times.is_none() && !tail.is_empty()) {
            let (scan, cut) = self.recover(base, index_interval)?;
            return Ok((true, scan, cut));
        }
        let mut m = self.meta();
        m.offsets = offsets;
        if let Some(t) = times {
            m.times = t;
        }
        if let Some(l) = m.times.last().copied() {
            m.max_timestamp = l.timestamp;
            m.offset_of_max_timestamp = l.offset;
        }
        let mut first = true;
        for (pos, h) in &tail {
            if first && *pos == 0 {
                m.first_timestamp = Some(h.max_timestamp);
            }
            first = false;
            m.next_offset = h.next_offset();
            if h.max_timestamp > m.max_timestamp {
                m.max_timestamp = h.max_timestamp;
                m.offset_of_max_timestamp = h.last_offset();
            }
        }
        m.bytes_since_index = size - from;
        m.synced_size = size;
        if m.first_timestamp.is_none() && size > 0 {
            m.first_timestamp = self.header(0)?.map(|h| h.max_timestamp);
        }
        Ok((false, scan, 0))
    }

    /// sync fsyncs the segment file if it grew since the last sync and writes (and fsyncs) its
    /// index files; nothing once the segment was deleted (so a flush racing a deletion never
    /// brings its index files back). Holds the meta lock only to copy the index entries.
    pub fn sync(&self) -> Result<()> {
        self.sync_with(true)
    }

    /// sync_data is [`sync`](Self::sync) for the active segment in a flush: its data is made
    /// durable, its indexes are left in memory. Recovery after a crash rebuilds the indexes of
    /// every segment at or past the recovery point, so until a later flush (after the roll)
    /// syncs them, no one reads them from disk; skipping them saves one or two fsyncs per
    /// acks=all flush (the time index gains an entry with nearly every batch).
    pub fn sync_data(&self) -> Result<()> {
        self.sync_with(false)
    }

    /// is_data_dirty says whether [`sync_data`](Self::sync_data) has anything to do.
    pub fn is_data_dirty(&self) -> bool {
        self.size() > self.meta().synced_size
    }

    fn sync_with(&self, indexes: bool) -> Result<()> {
        let paths = self.paths.lock().unwrap_or_else(|e| e.into_inner());
        if paths.deleted || paths.installing {
            return Ok(());
        }
        let size = self.size();
        let synced = self.meta().synced_size;
        if size > synced {
            files::sync_data(&self.file, &paths.log)
                .map_err(|e| files::io(e, "syncing", &paths.log))?;
        }
        let mut m = self.meta();
        if size > m.synced_size {
            m.synced_size = size;
        }
        if indexes && m.offsets.needs_persist() {
            m.offsets.persist(true)?;
        }
        if indexes && m.times.needs_persist() {
            m.times.persist(true)?;
        }
        if indexes && m.txns.needs_persist() {
            m.txns.persist(true)?;
        }
        Ok(())
    }

    /// is_dirty says whether [`sync`](Self::sync) has anything to do.
    pub fn is_dirty(&self) -> bool {
        let m = self.meta();
        self.size() > m.synced_size
            || m.offsets.needs_persist()
            || m.times.needs_persist()
            || m.txns.needs_persist()
    }

    /// load_txn_index reads the aborted-transaction index file of a segment trusted as flushed;
    /// false (and an empty index) if it is damaged, when it must be rebuilt from the log.
    pub fn load_txn_index(&self) -> bool {
        let mut m = self.meta();
        let path = m.txns.path().clone();
        match TxnIndex::load(path, self.base_offset, m.next_offset) {
            Some(t) => {
                m.txns = t;
                true
            }
            None => {
                m.txns.reset();
                false
            }
        }
    }

    /// push_aborted adds an aborted transaction whose marker is in this segment.
    pub fn push_aborted(&self, e: AbortedTxn) {
        self.meta().txns.push(e);
    }

    /// encoded_txn_index is the aborted-transaction index file's bytes (empty: no entries).
    pub fn encoded_txn_index(&self) -> Vec<u8> {
        self.meta().txns.encode()
    }

    /// adopt_txn_index records that the index file was put in place (a swap) and will be
    /// rewritten at the next sync.
    pub fn adopt_txn_index(&self) {
        self.meta().txns.assume_file();
    }

    /// aborted is the segment's aborted-transaction index entries.
    pub fn aborted(&self) -> Vec<AbortedTxn> {
        self.meta().txns.entries().to_vec()
    }

    /// on_inactive adds the time index's final entry when the segment stops being active
    /// (Kafka's `onBecomeInactiveSegment`), so its last entry is the segment's max timestamp.
    pub fn on_inactive(&self) {
        let mut m = self.meta();
        let (ts, off) = (m.max_timestamp, m.offset_of_max_timestamp);
        if ts >= 0 {
            m.times.maybe_append(ts, off);
        }
    }

    /// largest_timestamp is Kafka's `largestTimestamp`: the max timestamp, or the file's last
    /// modification time when no batch has a timestamp.
    pub fn largest_timestamp(&self) -> i64 {
        let ts = self.meta().max_timestamp;
        if ts >= 0 {
            return ts;
        }
        self.file.modified_ms().unwrap_or(0)
    }

    /// rename_to moves the segment file (and points its indexes at their new names, written on
    /// the next sync); nothing happens once the segment was deleted.
    pub fn rename_to(&self, log: PathBuf) -> Result<()> {
        let mut p = self.paths.lock().unwrap_or_else(|e| e.into_inner());
        if p.deleted {
            return Ok(());
        }
        files::rename(&p.log, &log)?;
        p.log = log;
        Ok(())
    }

    /// is_torn says a failed append left part of a batch that could not be cut (see
    /// [`append`](Self::append)).
    pub fn is_torn(&self) -> bool {
        self.torn.load(Ordering::Acquire)
    }

    /// mark_deleted takes the segment out of the log's files as Kafka's
    /// `changeFileSuffixes("", ".deleted")` does: its files get the `.deleted` suffix (which
    /// recovery deletes) and are removed later by [`delete_files`](Self::delete_files); readers
    /// holding the segment keep reading its open file meanwhile.
    pub fn mark_deleted(&self) -> Result<()> {
        let mut p = self.paths.lock().unwrap_or_else(|e| e.into_inner());
        if p.deleted {
            return Ok(());
        }
        p.deleted = true;
        let mut guard = self.meta();
        let m = &mut *guard;
        let log = with_suffix(&p.log, DELETED_SUFFIX);
        files::rename(&p.log, &log)?;
        p.log = log;
        let mut txns = m.txns.path().clone();
        for path in [&mut m.offsets.path, &mut m.times.path, &mut txns] {
            let to = with_suffix(path, DELETED_SUFFIX);
            match files::rename(path, &to) {
                Err(crate::errors::Error::Io(e)) if e.kind == std::io::ErrorKind::NotFound => {}
                r => r?,
            }
            *path = to;
        }
        m.txns.set_path(txns);
        m.offsets.close();
        m.times.close();
        m.txns.close();
        Ok(())
    }

    /// set_installing marks a cleaned segment being swapped in (see [`Paths`]).
    pub fn set_installing(&self, installing: bool) {
        self.paths
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .installing = installing;
    }

    /// discard deletes only the segment file: for a cleaned segment that was not swapped in,
    /// whose index names are still those of the live segment it would have replaced.
    pub fn discard(&self) -> Result<()> {
        let mut p = self.paths.lock().unwrap_or_else(|e| e.into_inner());
        p.deleted = true;
        files::remove(&p.log)
    }

    /// delete_files deletes the segment's files; readers holding the segment keep reading its
    /// open file.
    pub fn delete_files(&self) -> Result<()> {
        let mut p = self.paths.lock().unwrap_or_else(|e| e.into_inner());
        p.deleted = true;
        files::remove(&p.log)?;
        let mut m = self.meta();
        m.offsets.close();
        m.times.close();
        m.txns.close();
        files::remove(&m.offsets.path)?;
        files::remove(&m.times.path)?;
        files::remove(m.txns.path())
    }

    /// set_synced records the whole file as synced (after recovery synced it).
    pub fn set_synced(&self) {
        let size = self.size();
        self.meta().synced_size = size;
    }
}

impl Meta {
    fn index_batch(&mut self, pos: u64, len: u64, info: &BatchInfo, index_interval: u64) {
        // Kafka's LogSegment.append: an entry when more than index.interval.bytes were written
        // since the last one, keyed by the batch's last offset.
        if self.bytes_since_index > index_interval {
            self.offsets.entries.push(OffsetEntry {
                offset: info.last_offset,
                position: pos as u32,
            });
            let (ts, off) = (self.max_timestamp, self.offset_of_max_timestamp);
            if info.max_timestamp > ts {
                self.times
                    .maybe_append(info.max_timestamp, info.offset_of_max_timestamp);
            } else if ts >= 0 {
                self.times.maybe_append(ts, off);
            }
            self.bytes_since_index = 0;
        }
        self.bytes_since_index += len;
        if self.first_timestamp.is_none() {
            self.first_timestamp = Some(info.max_timestamp);
        }
        if info.max_timestamp > self.max_timestamp {
            self.max_timestamp = info.max_timestamp;
            self.offset_of_max_timestamp = info.offset_of_max_timestamp;
        }
        self.next_offset = info.last_offset + 1;
    }

    /// index_full says whether either index holds `max_entries` of its size.
    pub fn index_full(&self, offset_entries: usize, time_entries: usize) -> bool {
        self.offsets.len() >= offset_entries || self.times.len() >= time_entries
    }
}

/// with_suffix is `path` with `suffix` added to its name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// log_path is the path of the segment file of `base` in `dir`.
pub fn log_path(dir: &Path, base: i64) -> PathBuf {
    dir.join(files::name(base, LOG_SUFFIX))
}
