//! The sparse indexes of a segment, as Kafka lays them out: the offset index (`.index`: relative
//! offset u32, file position u32, big-endian) and the time index (`.timeindex`: timestamp i64,
//! relative offset u32). Entries live in memory (a few MB per GB of log); the files are written
//! from memory on flush and read back, checked, on open.

use std::path::{Path, PathBuf};

use super::files::IoContext;
use super::vfs::{self, File, Mode};
use crate::errors::Result;

/// OffsetEntry: the last offset of a batch and the batch's position in the segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetEntry {
    pub offset: i64,
    pub position: u32,
}

/// TimeEntry: a timestamp and the offset of the batch that brought it (the largest so far).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeEntry {
    pub timestamp: i64,
    pub offset: i64,
}

/// Entry is how one kind of index entry is stored.
pub trait Entry: Copy {
    const SIZE: usize;
    fn encode(&self, base: i64, out: &mut [u8]);
    fn decode(base: i64, b: &[u8]) -> Self;
    /// offset is the absolute offset the entry points at.
    fn offset(&self) -> i64;
}

fn be4(b: &[u8]) -> [u8; 4] {
    [b[0], b[1], b[2], b[3]]
}

impl Entry for OffsetEntry {
    const SIZE: usize = 8;
    fn encode(&self, base: i64, out: &mut [u8]) {
        out[..4].copy_from_slice(&((self.offset - base) as u32).to_be_bytes());
        out[4..8].copy_from_slice(&self.position.to_be_bytes());
    }
    fn decode(base: i64, b: &[u8]) -> Self {
        OffsetEntry {
            offset: base + u32::from_be_bytes(be4(b)) as i64,
            position: u32::from_be_bytes(be4(&b[4..])),
        }
    }
    fn offset(&self) -> i64 {
        self.offset
    }
}

impl Entry for TimeEntry {
    const SIZE: usize = 12;
    fn encode(&self, base: i64, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.timestamp.to_be_bytes());
        out[8..12].copy_from_slice(&((self.offset - base) as u32).to_be_bytes());
    }
    fn decode(base: i64, b: &[u8]) -> Self {
        let mut t = [0u8; 8];
        t.copy_from_slice(&b[..8]);
        TimeEntry {
            timestamp: i64::from_be_bytes(t),
            offset: base + u32::from_be_bytes(be4(&b[8..])) as i64,
        }
    }
    fn offset(&self) -> i64 {
        self.offset
    }
}

/// Index is one index of a segment: its entries in memory and how many of them its file holds.
#[derive(Debug)]
pub struct Index<E: Entry> {
    pub path: PathBuf,
    base: i64,
    pub entries: Vec<E>,
    /// persisted is how many entries the file holds as they are in memory.
    persisted: usize,
    /// rewrite says the file must be written whole (after a rebuild or a move).
    rewrite: bool,
    file: Option<File>,
}

impl<E: Entry> Index<E> {
    /// new is an empty index whose file is written from scratch on the next persist.
    pub fn new(path: PathBuf, base: i64) -> Self {
        Index {
            path,
            base,
            entries: Vec::new(),
            persisted: 0,
            rewrite: true,
            file: None,
        }
    }

    /// load reads the index file; `None` when it is missing, its size is not a whole number of
    /// entries, or `check` rejects its entries (Kafka's `sanityCheck`: rebuild it then).
    pub fn load(path: PathBuf, base: i64, check: impl Fn(&[E]) -> bool) -> Option<Self> {
        let data = vfs::read(&path).ok()?;
        if data.len() % E::SIZE != 0 {
            return None;
        }
        let entries: Vec<E> = data
            .chunks_exact(E::SIZE)
            .map(|c| E::decode(base, c))
            .collect();
        if !check(&entries) {
            return None;
        }
        let persisted = entries.len();
        Some(Index {
            path,
            base,
            entries,
            persisted,
            rewrite: false,
            file: None,
        })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn last(&self) -> Option<&E> {
        self.entries.last()
    }

    /// needs_persist says whether the file lags behind memory.
    pub fn needs_persist(&self) -> bool {
        self.rewrite || self.persisted != self.entries.len()
    }

    /// pending is what persist would write: the entries the file lacks, encoded, and where.
    pub fn pending(&self) -> (u64, Vec<u8>, usize) {
        let from = if self.rewrite {
            0
        } else {
            self.persisted.min(self.entries.len())
        };
        let mut out = vec![0u8; (self.entries.len() - from) * E::SIZE];
        for (e, chunk) in self.entries[from..]
            .iter()
            .zip(out.chunks_exact_mut(E::SIZE))
        {
            e.encode(self.base, chunk);
        }
        ((from * E::SIZE) as u64, out, self.entries.len())
    }

    /// persist writes the entries the file lacks (the whole file after a rebuild) and fsyncs it
    /// if `sync`.
    pub fn persist(&mut self, sync: bool) -> Result<()> {
        if !self.needs_persist() && !sync {
            return Ok(());
        }
        let (at, data, upto) = self.pending();
        let f = match self.file.take() {
            Some(f) => f,
            None => open_rw(&self.path)?,
        };
        let f = self.file.insert(f);
        f.set_len(at).ctx("truncating", &self.path)?;
        super::files::write_at(f, &data, at, &self.path).ctx("writing", &self.path)?;
        if sync {
            super::files::sync_data(f, &self.path).ctx("syncing", &self.path)?;
        }
        self.persisted = upto;
        self.rewrite = false;
        Ok(())
    }

    /// close closes the index file, if open (the next persist opens it again).
    pub fn close(&mut self) {
        self.file = None;
    }

    /// reset forgets the entries and makes the next persist rewrite the file.
    pub fn reset(&mut self) {
        self.entries.clear();
        self.persisted = 0;
        self.rewrite = true;
    }

    /// retarget points the index at another file (a swapped-in segment's final name), to be
    /// written whole on the next persist.
    pub fn retarget(&mut self, path: PathBuf) {
        self.path = path;
        self.file = None;
        self.persisted = 0;
        self.rewrite = true;
    }
}

fn open_rw(path: &Path) -> Result<File> {
    vfs::open(path, Mode::Create).ctx("opening", path)
}

impl Index<OffsetEntry> {
    /// lookup is Kafka's `OffsetIndex.lookup`: the entry with the largest offset at or below
    /// `offset`, or (base offset, position 0).
    pub fn lookup(&self, offset: i64) -> OffsetEntry {
        let i = self.entries.partition_point(|e| e.offset <= offset);
        if i == 0 {
            OffsetEntry {
                offset: self.base,
                position: 0,
            }
        } else {
            self.entries[i - 1]
        }
    }

    /// lookup_position is the entry with the largest position at or below `position`.
    pub fn lookup_position(&self, position: u64) -> OffsetEntry {
        let i = self
            .entries
            .partition_point(|e| e.position as u64 <= position);
        if i == 0 {
            OffsetEntry {
                offset: self.base,
                position: 0,
            }
        } else {
            self.entries[i - 1]
        }
    }

    /// is_valid is Kafka's sanity check, tightened: offsets and positions strictly increasing,
    /// offsets from the base and positions inside a segment of `size` bytes.
    pub fn is_valid(base: i64, size: u64, entries: &[OffsetEntry]) -> bool {
        entries
            .iter()
            .all(|e| e.offset >= base && (e.position as u64) < size)
            && entries
                .windows(2)
                .all(|w| w[0].offset < w[1].offset && w[0].position < w[1].position)
    }
}

impl Index<TimeEntry> {
    /// lookup is Kafka's `TimeIndex.lookup`: the entry with the largest timestamp at or below
    /// `timestamp`, or None.
    pub fn lookup(&self, timestamp: i64) -> Option<TimeEntry> {
        let i = self.entries.partition_point(|e| e.timestamp <= timestamp);
        (i > 0).then(|| self.entries[i - 1])
    }

    /// maybe_append adds an entry when `timestamp` is above the last one's (Kafka's
    /// `maybeAppend`): the index stays increasing in both fields.
    pub fn maybe_append(&mut self, timestamp: i64, offset: i64) {
        match self.entries.last() {
            Some(l) if timestamp <= l.timestamp => {}
            Some(l) if offset < l.offset => {}
            _ => self.entries.push(TimeEntry { timestamp, offset }),
        }
    }

    /// is_valid: offsets from the base and before `next_offset`, both fields non-decreasing.
    pub fn is_valid(base: i64, next_offset: i64, entries: &[TimeEntry]) -> bool {
        entries
            .iter()
            .all(|e| e.offset >= base && e.offset < next_offset)
            && entries
                .windows(2)
                .all(|w| w[0].timestamp < w[1].timestamp && w[0].offset <= w[1].offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(entries: &[(i64, u32)]) -> Index<OffsetEntry> {
        let mut i = Index::new(PathBuf::from("/nonexistent"), 100);
        i.entries = entries
            .iter()
            .map(|&(offset, position)| OffsetEntry { offset, position })
            .collect();
        i
    }

    #[test]
    fn offset_lookup_is_kafkas_largest_lower_bound() {
        // After Kafka's OffsetIndexTest.lookupExtremeCases / randomLookupTest.
        let i = index(&[(105, 4096), (110, 8200), (130, 12300)]);
        assert_eq!(i.lookup(50).position, 0);
        assert_eq!(i.lookup(100).position, 0);
        assert_eq!(i.lookup(105).position, 4096);
        assert_eq!(i.lookup(129).position, 8200);
        assert_eq!(i.lookup(i64::MAX).position, 12300);
        assert_eq!(i.lookup_position(8199).offset, 105);
        assert!(Index::<OffsetEntry>::is_valid(100, 20000, &i.entries));
        assert!(!Index::<OffsetEntry>::is_valid(100, 12300, &i.entries));
        assert!(!Index::<OffsetEntry>::is_valid(
            100,
            20000,
            &index(&[(110, 5), (105, 9)]).entries
        ));
    }

    #[test]
    fn time_index_only_grows() {
        let mut t = Index::<TimeEntry>::new(PathBuf::from("/nonexistent"), 0);
        t.maybe_append(10, 0);
        t.maybe_append(5, 3);
        t.maybe_append(20, 4);
        t.maybe_append(20, 9);
        assert_eq!(t.entries.len(), 2);
        assert_eq!(t.lookup(9), None);
        assert_eq!(t.lookup(19).unwrap().offset, 0);
        assert_eq!(t.lookup(25).unwrap().offset, 4);
    }

    #[test]
    fn entries_round_trip_through_their_file_layout() {
        let dir = crate::log::tests::TempDir::new();
        let path = dir.path().join("x.index");
        let mut i = Index::<OffsetEntry>::new(path.clone(), 1000);
        i.entries.push(OffsetEntry {
            offset: 1005,
            position: 77,
        });
        i.persist(true).unwrap();
        i.entries.push(OffsetEntry {
            offset: 1010,
            position: 999,
        });
        i.persist(true).unwrap();
        let bytes = vfs::read(&path).unwrap();
        assert_eq!(bytes, [0, 0, 0, 5, 0, 0, 0, 77, 0, 0, 0, 10, 0, 0, 3, 231]);
        let l = Index::<OffsetEntry>::load(path, 1000, |_| true).unwrap();
        assert_eq!(l.entries, i.entries);
    }
}
