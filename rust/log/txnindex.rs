//! The aborted-transaction index of a segment (`<base offset>.txnindex`), in Kafka's layout
//! (`TransactionIndex`, `AbortedTxn`): one 34-byte entry per transaction aborted by a marker in
//! the segment, big-endian: version i16 (0), producer id i64, first offset i64, last offset i64
//! (the ABORT marker's offset), last stable offset i64 (the log's first unstable offset right
//! after the abort: the earliest other open transaction's first offset, else the marker's offset
//! + 1). Entries are in increasing last offset.
//!
//! As the other indexes, the entries live in memory and the file is written from them on flush;
//! a segment with no aborted transaction has no file. Recovery rebuilds the index of every
//! segment it rescans by replaying the producer state over it (see `open.rs`).

use std::path::PathBuf;

use super::files;
use super::index::{Entry, Index};
use super::vfs;
use crate::errors::Result;

/// AbortedTxn is one entry of the index (Kafka's `AbortedTxn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

/// VERSION is Kafka's `AbortedTxn.CURRENT_VERSION`.
const VERSION: i16 = 0;

fn be8(b: &[u8]) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    i64::from_be_bytes(a)
}

impl Entry for AbortedTxn {
    const SIZE: usize = 34;
    fn encode(&self, _base: i64, out: &mut [u8]) {
        out[..2].copy_from_slice(&VERSION.to_be_bytes());
        out[2..10].copy_from_slice(&self.producer_id.to_be_bytes());
        out[10..18].copy_from_slice(&self.first_offset.to_be_bytes());
        out[18..26].copy_from_slice(&self.last_offset.to_be_bytes());
        out[26..34].copy_from_slice(&self.last_stable_offset.to_be_bytes());
    }
    fn decode(_base: i64, b: &[u8]) -> Self {
        AbortedTxn {
            producer_id: be8(&b[2..]),
            first_offset: be8(&b[10..]),
            last_offset: be8(&b[18..]),
            last_stable_offset: be8(&b[26..]),
        }
    }
    fn offset(&self) -> i64 {
        self.last_offset
    }
}

/// TxnIndex is a segment's aborted-transaction index: its entries in memory and whether its
/// file exists.
#[derive(Debug)]
pub struct TxnIndex {
    index: Index<AbortedTxn>,
    /// has_file says the file exists (it is created by the first persist with entries, and
    /// deleted by a persist that finds none left).
    has_file: bool,
}

impl TxnIndex {
    /// new is an empty index with no file.
    pub fn new(path: PathBuf, base: i64) -> Self {
        TxnIndex {
            index: Index::new(path, base),
            has_file: false,
        }
    }

    /// load reads the index file of a segment from `base` to `next_offset`: Ok(empty index) if
    /// there is none, None if it is damaged (not whole entries, an unknown version, last offsets
    /// not increasing or outside the segment), when the segment's index must be rebuilt.
    pub fn load(path: PathBuf, base: i64, next_offset: i64) -> Option<Self> {
        let data = match vfs::read(&path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Some(TxnIndex::new(path, base))
            }
            Err(_) => return None,
        };
        if data
            .chunks(AbortedTxn::SIZE)
            .any(|c| c.len() != AbortedTxn::SIZE || c[..2] != VERSION.to_be_bytes())
        {
            return None;
        }
        let index = Index::load(path, base, |es: &[AbortedTxn]| {
            es.iter().all(|e| {
                e.last_offset >= base
                    && e.last_offset < next_offset
                    && (0..=e.last_offset).contains(&e.first_offset)
                    // An earlier open transaction of another producer may hold it lower.
                    && (0..=e.last_offset + 1).contains(&e.last_stable_offset)
            }) && es.windows(2).all(|w| w[0].last_offset < w[1].last_offset)
        })?;
        Some(TxnIndex {
            index,
            has_file: true,
        })
    }

    pub fn path(&self) -> &PathBuf {
        &self.index.path
    }

    pub fn set_path(&mut self, path: PathBuf) {
        self.index.path = path;
    }

    pub fn entries(&self) -> &[AbortedTxn] {
        &self.index.entries
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// push adds an entry; its last offset must be past the last entry's (Kafka refuses
    /// otherwise; the log only appends markers at its end, so it never happens).
    pub fn push(&mut self, e: AbortedTxn) {
        debug_assert!(self
            .index
            .last()
            .is_none_or(|l| l.last_offset < e.last_offset));
        self.index.entries.push(e);
    }

    /// needs_persist says the file lags behind memory (no file is needed for no entries).
    pub fn needs_persist(&self) -> bool {
        self.index.needs_persist() && (self.has_file || !self.index.is_empty())
    }

    /// persist writes the file (deleting it when no entries are left) and fsyncs it if `sync`.
    pub fn persist(&mut self, sync: bool) -> Result<()> {
        if !self.needs_persist() {
            return Ok(());
        }
        if self.index.is_empty() {
            self.index.close();
            files::remove(&self.index.path)?;
            self.index.reset();
            self.has_file = false;
            return Ok(());
        }
        self.index.persist(sync)?;
        self.has_file = true;
        Ok(())
    }

    /// has_file says whether the index has a file on disk.
    pub fn has_file(&self) -> bool {
        self.has_file
    }

    /// encode is the whole file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.entries().len() * AbortedTxn::SIZE];
        for (e, c) in self
            .entries()
            .iter()
            .zip(out.chunks_exact_mut(AbortedTxn::SIZE))
        {
            e.encode(0, c);
        }
        out
    }

    /// assume_file makes the next persist write (or delete) the file, whether or not one
    /// exists: for an index rebuilt over a file left from before.
    pub fn assume_file(&mut self) {
        self.has_file = true;
    }

    /// close closes the file, if open.
    pub fn close(&mut self) {
        self.index.close();
    }

    /// reset forgets every entry (a rescan rebuilds them); the next persist rewrites the file.
    pub fn reset(&mut self) {
        self.index.reset();
    }

    /// collect is Kafka's `TransactionIndex.collectAbortedTxns`: the entries whose range
    /// overlaps [`from`, `upper`) go into `out`; returns true once an entry's last stable offset
    /// reaches `upper`, when no later segment can hold more.
    pub fn collect(&self, from: i64, upper: i64, out: &mut Vec<AbortedTxn>) -> bool {
        for e in self.entries() {
            if e.last_offset >= from && e.first_offset < upper {
                out.push(*e);
            }
            if e.last_stable_offset >= upper {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::tests::TempDir;

    fn txn(pid: i64, first: i64, last: i64, lso: i64) -> AbortedTxn {
        AbortedTxn {
            producer_id: pid,
            first_offset: first,
            last_offset: last,
            last_stable_offset: lso,
        }
    }

    #[test]
    fn entries_round_trip_in_kafkas_34_byte_layout() {
        // Kafka's TransactionIndexTest.testPositionSetCorrectlyWhenOpened / testSanityCheck
        // shape: entries written, reopened and read back; a torn tail is refused.
        let dir = TempDir::new();
        let path = dir.path().join(files::name(0, files::TXN_INDEX_SUFFIX));
        let mut t = TxnIndex::new(path.clone(), 0);
        assert!(!t.needs_persist(), "no file for no entries");
        t.persist(true).unwrap();
        assert!(!path.exists());
        t.push(txn(0, 0, 2, 3));
        t.push(txn(1, 5, 6, 7));
        t.persist(true).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 68);
        assert_eq!(&bytes[..2], &[0, 0]);
        assert_eq!(&bytes[34 + 2..34 + 10], &1i64.to_be_bytes());
        assert_eq!(&bytes[34 + 26..], &7i64.to_be_bytes());
        let back = TxnIndex::load(path.clone(), 0, 10).unwrap();
        assert_eq!(back.entries(), t.entries());
        // An earlier open transaction keeps the last stable offset below the first offset.
        let mut low = TxnIndex::new(dir.path().join("low.txnindex"), 0);
        low.push(txn(2, 4, 6, 1));
        low.persist(false).unwrap();
        let low_back = TxnIndex::load(low.path().clone(), 0, 10).unwrap();
        assert_eq!(low_back.entries(), low.entries());
        // Offsets past the segment, a torn entry or another version: rebuild.
        assert!(TxnIndex::load(path.clone(), 0, 6).is_none());
        std::fs::write(&path, &bytes[..50]).unwrap();
        assert!(TxnIndex::load(path.clone(), 0, 10).is_none());
        let mut v1 = bytes.clone();
        v1[1] = 1;
        std::fs::write(&path, &v1).unwrap();
        assert!(TxnIndex::load(path.clone(), 0, 10).is_none());
        // A reset index that stays empty deletes its file.
        let mut back = TxnIndex::load(dir.path().join("none.txnindex"), 0, 10).unwrap();
        assert!(back.is_empty() && !back.has_file());
        back.set_path(path.clone());
        back.has_file = true;
        back.reset();
        back.persist(false).unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn collect_finds_overlapping_entries_and_stops_at_the_last_stable_offset() {
        // Kafka's TransactionIndexTest.testCollectAbortedTransactions.
        let dir = TempDir::new();
        let mut t = TxnIndex::new(dir.path().join("x.txnindex"), 0);
        let all = [
            txn(0, 0, 10, 11),
            txn(1, 5, 15, 13),
            txn(2, 18, 35, 25),
            txn(3, 32, 50, 40),
        ];
        for e in all {
            t.push(e);
        }
        let run = |from, upper| {
            let mut out = Vec::new();
            let done = t.collect(from, upper, &mut out);
            (out, done)
        };
        assert_eq!(run(0, 32).0, all[..3].to_vec());
        assert_eq!(run(0, 100), (all.to_vec(), false));
        assert_eq!(run(11, 18).0, vec![all[1]]);
        assert_eq!(run(16, 18), (vec![], true));
        // The first entry's last stable offset (11) reaches the upper bound: done.
        assert_eq!(run(0, 11), (vec![all[0]], true));
    }
}
