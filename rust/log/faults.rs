//! Faults: storage failures injected on purpose, for tests of what the broker does when its
//! disk fails (a failed fsync above all, which no filesystem here can be made to produce).
//!
//! A fault names an operation, a piece of the path it applies to and the OS error to fail with;
//! it fails the next `times` matching operations (every one while armed, if `times` is None).
//! A failed write writes the first half of its bytes before failing, as a write that runs out
//! of space does.
//! The log's I/O calls [`check`] before each write, fsync, creation, rename and removal; with
//! no fault armed that costs one relaxed atomic load. Faults are process-wide: a test that arms
//! one must [`clear`] it (the test kit's fixtures do).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Op is a kind of storage operation a fault can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Write: appending to a segment, writing an index, a checkpoint or a snapshot.
    Write,
    /// Sync: fsync of a file or a folder.
    Sync,
    /// Create: creating a file (a new segment at a roll).
    Create,
    /// Rename: renaming a file or folder (deletion, compaction's swap).
    Rename,
    /// Remove: deleting a file or folder.
    Remove,
    /// Truncate: cutting a file short (a failed append's partial batch cut back).
    Truncate,
}

impl Op {
    /// parse reads an op's name: `write`, `sync`, `create`, `rename`, `remove`.
    pub fn parse(name: &str) -> Option<Op> {
        Some(match name {
            "write" => Op::Write,
            "sync" | "fsync" => Op::Sync,
            "create" => Op::Create,
            "rename" => Op::Rename,
            "remove" | "delete" => Op::Remove,
            "truncate" => Op::Truncate,
            _ => return None,
        })
    }
}

#[derive(Debug)]
struct Fault {
    op: Op,
    path_contains: String,
    errno: i32,
    remaining: Option<u64>,
}

static ARMED: AtomicBool = AtomicBool::new(false);
static FAULTS: Mutex<Vec<Fault>> = Mutex::new(Vec::new());

/// inject arms a fault: the next `times` operations `op` on a path containing `path_contains`
/// fail with OS error `errno` (each one while armed if `times` is None).
pub fn inject(op: Op, path_contains: &str, errno: i32, times: Option<u64>) {
    let mut f = FAULTS.lock().unwrap_or_else(|e| e.into_inner());
    f.push(Fault {
        op,
        path_contains: path_contains.to_string(),
        errno,
        remaining: times,
    });
    ARMED.store(true, Ordering::Release);
}

/// clear disarms every fault.
pub fn clear() {
    let mut f = FAULTS.lock().unwrap_or_else(|e| e.into_inner());
    f.clear();
    ARMED.store(false, Ordering::Release);
}

/// armed says whether any fault is armed (one relaxed load): hot paths check it before
/// building a path for [`check`].
#[inline]
pub fn armed() -> bool {
    ARMED.load(Ordering::Relaxed)
}

/// check fails with the armed fault matching `op` on `path`, if any.
#[inline]
pub fn check(op: Op, path: &Path) -> std::io::Result<()> {
    if !ARMED.load(Ordering::Relaxed) {
        return Ok(());
    }
    check_slow(op, path)
}

#[cold]
fn check_slow(op: Op, path: &Path) -> std::io::Result<()> {
    let mut faults = FAULTS.lock().unwrap_or_else(|e| e.into_inner());
    let text = path.to_string_lossy();
    let Some(i) = faults
        .iter()
        .position(|f| f.op == op && text.contains(f.path_contains.as_str()))
    else {
        return Ok(());
    };
    let errno = faults[i].errno;
    if let Some(n) = faults[i].remaining.as_mut() {
        *n = n.saturating_sub(1);
        if *n == 0 {
            faults.remove(i);
            if faults.is_empty() {
                ARMED.store(false, Ordering::Release);
            }
        }
    }
    Err(std::io::Error::from_raw_os_error(errno))
}
