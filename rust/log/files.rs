//! Files of a log folder: Kafka's names (`<offset, 20 digits>.<suffix>`), the small checkpoint
//! files, and the one helper that turns an `std::io::Error` into [`Error::Io`].

use std::path::{Path, PathBuf};

use super::faults::{self, Op};
use super::vfs::{self, File, Mode};
use crate::errors::{Error, Result};

pub const LOG_SUFFIX: &str = ".log";
pub const INDEX_SUFFIX: &str = ".index";
pub const TIME_INDEX_SUFFIX: &str = ".timeindex";
/// TXN_INDEX_SUFFIX is the aborted-transaction index (see [`super::txnindex`]).
pub const TXN_INDEX_SUFFIX: &str = ".txnindex";
pub const SNAPSHOT_SUFFIX: &str = ".snapshot";
/// CLEANED_SUFFIX marks a segment compaction is still writing; recovery deletes it.
pub const CLEANED_SUFFIX: &str = ".cleaned";
/// DELETED_SUFFIX marks the files of a segment removed from its log, deleted once
/// `file.delete.delay.ms` passed; recovery deletes any it finds.
pub const DELETED_SUFFIX: &str = ".deleted";
/// SWAP_SUFFIX marks a complete cleaned segment not yet swapped in; recovery finishes the swap.
pub const SWAP_SUFFIX: &str = ".swap";
/// CLEAN_SHUTDOWN is Kafka's marker of a clean close (`.kafka_cleanshutdown`), here per log.
pub const CLEAN_SHUTDOWN: &str = ".kafka_cleanshutdown";
pub const RECOVERY_POINT: &str = "recovery-point-offset-checkpoint";
pub const LOG_START_OFFSET: &str = "log-start-offset-checkpoint";
pub const CLEANER_OFFSET: &str = "cleaner-offset-checkpoint";

/// name is Kafka's file name of `offset` with `suffix`: `00000000000000000042.log`.
pub fn name(offset: i64, suffix: &str) -> String {
    format!("{offset:020}{suffix}")
}

/// parse reads a file name as (offset, suffix after the 20 digits).
pub fn parse(name: &str) -> Option<(i64, &str)> {
    let digits = name.get(..20)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((digits.parse().ok()?, &name[20..]))
}

/// io wraps a std error with what was being done to which file.
/// A failed fsync (`what` starting with "syncing") is marked as such ([`IoFailure::sync`]).
///
/// [`IoFailure::sync`]: crate::errors::IoFailure
pub fn io(e: std::io::Error, what: &str, path: &Path) -> Error {
    let mut err = Error::io(&e, format_args!("{what} {}", path.display()));
    if let Error::Io(f) = &mut err {
        f.sync = what.starts_with("syncing");
    }
    err
}

/// IoContext gives `std::io::Result` a `.ctx(what, path)`.
pub trait IoContext<T> {
    fn ctx(self, what: &str, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn ctx(self, what: &str, path: &Path) -> Result<T> {
        self.map_err(|e| io(e, what, path))
    }
}

/// sync_dir fsyncs a folder, making the creation, rename and deletion of its files durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    faults::check(Op::Sync, dir)
        .and_then(|_| vfs::sync_dir(dir))
        .ctx("syncing folder", dir)
}

/// write_at writes all of `data` at `pos` of `file` (whose path is `path`).
pub fn write_at(file: &File, data: &[u8], pos: u64, path: &Path) -> std::io::Result<()> {
    if let Err(e) = faults::check(Op::Write, path) {
        // As a write that runs out of space: part of it lands.
        let _ = file.write_all_at(&data[..data.len() / 2], pos);
        return Err(e);
    }
    file.write_all_at(data, pos)
}

/// set_len cuts (or extends) a file to `len` bytes.
pub fn set_len(file: &File, len: u64, path: &Path) -> std::io::Result<()> {
    faults::check(Op::Truncate, path)?;
    file.set_len(len)
}

/// sync_data fsyncs a file's data (whose path is `path`).
pub fn sync_data(file: &File, path: &Path) -> std::io::Result<()> {
    faults::check(Op::Sync, path)?;
    file.sync_data()
}

/// rename renames a file or folder.
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    faults::check(Op::Rename, from)
        .and_then(|_| vfs::rename(from, to))
        .ctx("renaming", from)
}

/// create_rw creates (or empties) a file for reading and writing.
pub fn create_rw(path: &Path) -> Result<File> {
    faults::check(Op::Create, path)
        .and_then(|_| vfs::open(path, Mode::Truncate))
        .ctx("creating", path)
}

/// remove deletes a file; one already gone is not an error.
pub fn remove(path: &Path) -> Result<()> {
    faults::check(Op::Remove, path).ctx("deleting", path)?;
    match vfs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e, "deleting", path)),
        _ => Ok(()),
    }
}

/// write_atomic writes `data` to `path` through a temporary file renamed into place, fsynced
/// first if `sync` (then the file holds its old or its new content after a crash; without it, a
/// crash may leave it cut short, which a reader must detect). The folder is not synced.
pub fn write_atomic(path: &Path, data: &[u8], sync: bool) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let f = create_rw(&tmp)?;
    write_at(&f, data, 0, &tmp).ctx("writing", &tmp)?;
    if sync {
        sync_data(&f, &tmp).ctx("syncing", &tmp)?;
    }
    rename(&tmp, path)
}

/// SLOT is one checkpoint slot: sequence u64, value i64, CRC-32C of the 16 bytes before it.
const SLOT: usize = 20;

/// Checkpoint is a file holding one offset (the recovery point, the log start offset, the
/// cleaner's first dirty offset) in two slots written in turn, each with a sequence number and
/// a CRC: a torn write spoils only the slot being written, and reading takes the newest valid
/// slot. Kafka keeps these per data directory in text files; one log here owns its own.
#[derive(Debug)]
pub struct Checkpoint {
    path: PathBuf,
    file: Option<File>,
    seq: u64,
    value: Option<i64>,
}

impl Checkpoint {
    /// open reads the checkpoint at `path`; a missing or unreadable one has no value.
    pub fn open(path: PathBuf) -> Checkpoint {
        let mut best: Option<(u64, i64)> = None;
        if let Ok(data) = vfs::read(&path) {
            for slot in data.chunks_exact(SLOT).take(2) {
                let seq = u64::from_be_bytes(slot[..8].try_into().unwrap_or_default());
                let value = i64::from_be_bytes(slot[8..16].try_into().unwrap_or_default());
                let crc = u32::from_be_bytes(slot[16..20].try_into().unwrap_or_default());
                if crc32c::crc32c(&slot[..16]) == crc && best.is_none_or(|(s, _)| seq > s) {
                    best = Some((seq, value));
                }
            }
        }
        Checkpoint {
            path,
            file: None,
            seq: best.map_or(0, |b| b.0),
            value: best.map(|b| b.1),
        }
    }

    /// close closes the file (the next write opens it again).
    pub fn close(&mut self) {
        self.file = None;
    }

    /// value is the last value written, if any.
    pub fn value(&self) -> Option<i64> {
        self.value
    }

    /// write stores `value` in the older slot, fsyncing it if `sync`. Returns whether the file
    /// was created (its folder then needs a sync to keep it).
    pub fn write(&mut self, value: i64, sync: bool) -> Result<bool> {
        let created = self.file.is_none() && !vfs::exists(&self.path);
        if self.file.is_none() {
            faults::check(Op::Create, &self.path).ctx("opening", &self.path)?;
            let f = vfs::open(&self.path, Mode::Create).ctx("opening", &self.path)?;
            self.file = Some(f);
        }
        let seq = self.seq + 1;
        let mut slot = [0u8; SLOT];
        slot[..8].copy_from_slice(&seq.to_be_bytes());
        slot[8..16].copy_from_slice(&value.to_be_bytes());
        let crc = crc32c::crc32c(&slot[..16]);
        slot[16..].copy_from_slice(&crc.to_be_bytes());
        let f = self.file.as_ref().expect("opened above");
        write_at(f, &slot, (seq % 2) * SLOT as u64, &self.path).ctx("writing", &self.path)?;
        if sync {
            sync_data(f, &self.path).ctx("syncing", &self.path)?;
        }
        self.seq = seq;
        self.value = Some(value);
        Ok(created)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kafkas() {
        assert_eq!(name(42, LOG_SUFFIX), "00000000000000000042.log");
        assert_eq!(
            parse("00000000000000000042.timeindex"),
            Some((42, ".timeindex"))
        );
        assert_eq!(parse("recovery-point-offset-checkpoint"), None);
    }

    #[test]
    fn checkpoint_survives_a_torn_slot() {
        let dir = crate::log::tests::TempDir::new();
        let path = dir.path().join("cp");
        let mut c = Checkpoint::open(path.clone());
        assert_eq!(c.value(), None);
        for v in [5, 7, 9] {
            c.write(v, true).unwrap();
        }
        assert_eq!(Checkpoint::open(path.clone()).value(), Some(9));
        // Tear the slot of the last write: the one before it is read.
        let mut data = vfs::read(&path).unwrap();
        // The third write went to slot 1.
        let at = SLOT + 10;
        data[at] ^= 0xff;
        vfs::write(&path, &data).unwrap();
        assert_eq!(Checkpoint::open(path).value(), Some(7));
    }
}
