//! vfs: the one door of the log's file I/O. A path under a registered memory root is served
//! from an in-process memory filesystem; every other path from the disk, as `std::fs` does.
//!
//! The memory filesystem keeps the semantics the log relies on: files are growable byte buffers
//! shared by every handle open on them (a removed file stays readable through a handle, as an
//! unlinked inode does), folders must exist before files are created in them, a rename is atomic
//! and replaces its target, a listing names a folder's direct children, and a file's length may
//! run past the bytes it holds (a file extended by `set_len` reads zeros there and holds no
//! memory for them, as a sparse file on disk). fsync is a no-op; the fault checks of
//! [`super::files`] run before it all the same, so injected faults apply to memory files too.
//!
//! Memory roots are process-wide ([`register_root`], [`drop_root`]). With none registered, the
//! check that routes a path costs one relaxed atomic load.
//!
//! Thread safety: every function and [`File`] is safe to use from any thread. A memory file's
//! bytes sit behind a read-write lock held for one read or write; a root's folder tree behind a
//! mutex held for one operation (a rename of a folder moves its whole subtree under it).

use std::collections::BTreeMap;
use std::io::{Error, ErrorKind, Result};
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// ROOT_PREFIX is where [`register_root`] with no path puts a fresh root (it never exists on
/// disk: nothing under it is written there).
pub const ROOT_PREFIX: &str = "/kgroup-memory";

/// File is an open file: one on disk or one in memory.
#[derive(Debug)]
pub enum File {
    Disk(std::fs::File),
    Memory(Arc<MemFile>),
}

/// Mode is how [`open`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// ReadWrite: an existing file, for reading and writing.
    ReadWrite,
    /// Create: for reading and writing, created if missing, kept as it is if not.
    Create,
    /// CreateNew: for reading and writing, created if missing, emptied if not.
    Truncate,
}

impl File {
    /// read_exact_at fills `buf` from `pos`; UnexpectedEof if the file ends before.
    pub fn read_exact_at(&self, buf: &mut [u8], pos: u64) -> Result<()> {
        match self {
            File::Disk(f) => f.read_exact_at(buf, pos),
            File::Memory(m) => m.read_exact_at(buf, pos),
        }
    }

    /// write_all_at writes all of `data` at `pos`, growing the file as needed.
    pub fn write_all_at(&self, data: &[u8], pos: u64) -> Result<()> {
        match self {
            File::Disk(f) => f.write_all_at(data, pos),
            File::Memory(m) => {
                m.write_at(data, pos);
                Ok(())
            }
        }
    }

    /// set_len cuts or extends the file to `len` bytes (an extension reads as zeros).
    pub fn set_len(&self, len: u64) -> Result<()> {
        match self {
            File::Disk(f) => f.set_len(len),
            File::Memory(m) => {
                m.set_len(len);
                Ok(())
            }
        }
    }

    /// sync_data fsyncs the file's data (nothing to do in memory).
    pub fn sync_data(&self) -> Result<()> {
        match self {
            File::Disk(f) => f.sync_data(),
            File::Memory(_) => Ok(()),
        }
    }

    /// len is the file's length in bytes.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> Result<u64> {
        match self {
            File::Disk(f) => Ok(f.metadata()?.len()),
            File::Memory(m) => Ok(m.len()),
        }
    }

    /// modified_ms is the file's last modification time in milliseconds since the epoch.
    pub fn modified_ms(&self) -> Result<i64> {
        match self {
            File::Disk(f) => {
                let t = f.metadata()?.modified()?;
                Ok(t.duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64))
            }
            File::Memory(m) => Ok(m.data().modified_ms),
        }
    }

    /// raw_fd is the descriptor of a disk file (None for a memory file, which cannot be sent
    /// with sendfile).
    pub fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        match self {
            File::Disk(f) => Some(f.as_raw_fd()),
            File::Memory(_) => None,
        }
    }
}

/// MemFile is a memory file's contents, in chunks of [`CHUNK`] bytes (every chunk but the last
/// full), so that a growing segment never reallocates and copies all it holds, nor keeps twice
/// its size; the last chunk grows as a `Vec`, so a small file holds about its size. The length
/// may run past the chunks: a sparse tail of zeros that holds no memory.
#[derive(Debug, Default)]
pub struct MemFile {
    data: RwLock<MemData>,
}

/// CHUNK is the size of a memory file's full chunks.
const CHUNK: usize = 1 << 20;

#[derive(Debug, Default)]
struct MemData {
    chunks: Vec<Vec<u8>>,
    len: u64,
    modified_ms: i64,
}

impl MemData {
    /// held is the bytes the chunks hold (written, or zeros before a written byte).
    fn held(&self) -> u64 {
        match self.chunks.last() {
            None => 0,
            Some(last) => ((self.chunks.len() - 1) * CHUNK + last.len()) as u64,
        }
    }

    fn read(&self, buf: &mut [u8], pos: u64) {
        let mut done = 0;
        while done < buf.len() {
            let at = pos as usize + done;
            let (ci, off) = (at / CHUNK, at % CHUNK);
            let n = (CHUNK - off).min(buf.len() - done);
            match self.chunks.get(ci) {
                Some(c) if off < c.len() => {
                    let m = n.min(c.len() - off);
                    buf[done..done + m].copy_from_slice(&c[off..off + m]);
                    done += m;
                }
                // Past what the chunks hold: the sparse tail.
                _ => {
                    buf[done..done + n].fill(0);
                    done += n;
                }
            }
        }
    }

    fn write(&mut self, data: &[u8], pos: u64) {
        let mut done = 0;
        while done < data.len() {
            let at = pos as usize + done;
            let (ci, off) = (at / CHUNK, at % CHUNK);
            let n = (CHUNK - off).min(data.len() - done);
            while self.chunks.len() <= ci {
                if let Some(last) = self.chunks.last_mut() {
                    last.resize(CHUNK, 0);
                }
                self.chunks.push(Vec::new());
            }
            let c = &mut self.chunks[ci];
            if c.len() < off + n {
                c.resize(off + n, 0);
            }
            c[off..off + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
        self.len = self.len.max(pos + data.len() as u64);
    }

    fn cut(&mut self, len: u64) {
        if self.held() > len {
            let len = len as usize;
            let keep = len.div_ceil(CHUNK);
            self.chunks.truncate(keep);
            if let Some(last) = self.chunks.last_mut() {
                last.truncate(len - (keep - 1) * CHUNK);
                // Give back what a big cut freed.
                if last.capacity() > 2 * last.len() + (64 << 10) {
                    last.shrink_to_fit();
                }
            }
        }
        self.len = len;
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl MemFile {
    fn new() -> Arc<MemFile> {
        Arc::new(MemFile {
            data: RwLock::new(MemData {
                modified_ms: now_ms(),
                ..MemData::default()
            }),
        })
    }

    fn data(&self) -> std::sync::RwLockReadGuard<'_, MemData> {
        self.data.read().unwrap_or_else(|e| e.into_inner())
    }

    fn data_mut(&self) -> std::sync::RwLockWriteGuard<'_, MemData> {
        self.data.write().unwrap_or_else(|e| e.into_inner())
    }

    fn len(&self) -> u64 {
        self.data().len
    }

    /// held is the bytes of memory the file holds (its sparse tail holds none).
    fn held(&self) -> u64 {
        self.data().held()
    }

    fn read_exact_at(&self, buf: &mut [u8], pos: u64) -> Result<()> {
        let d = self.data();
        if pos.checked_add(buf.len() as u64).is_none_or(|e| e > d.len) {
            return Err(Error::new(
                ErrorKind::UnexpectedEof,
                "failed to fill whole buffer",
            ));
        }
        d.read(buf, pos);
        Ok(())
    }

    fn write_at(&self, data: &[u8], pos: u64) {
        let mut d = self.data_mut();
        d.write(data, pos);
        d.modified_ms = now_ms();
    }

    fn set_len(&self, len: u64) {
        let mut d = self.data_mut();
        d.cut(len);
        d.modified_ms = now_ms();
    }

    fn contents(&self) -> Vec<u8> {
        let d = self.data();
        let mut out = vec![0u8; d.len as usize];
        d.read(&mut out, 0);
        out
    }
}

#[derive(Debug, Clone)]
enum Node {
    Dir,
    File(Arc<MemFile>),
}

/// MemFs is one memory root's tree: every folder and file under it by normalised path (the
/// root itself included), ordered so a folder's subtree is one contiguous range.
#[derive(Debug)]
struct MemFs {
    root: PathBuf,
    nodes: Mutex<BTreeMap<PathBuf, Node>>,
}

impl MemFs {
    fn nodes(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, Node>> {
        self.nodes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// ROOTS is the registry of memory roots; COUNT mirrors its length so that a path is checked
/// against it only when it is not empty.
static ROOTS: RwLock<Vec<Arc<MemFs>>> = RwLock::new(Vec::new());
static COUNT: AtomicUsize = AtomicUsize::new(0);
static NEXT_ROOT: AtomicU64 = AtomicU64::new(1);

/// normalise makes `path` absolute and resolves `.` and `..` by their names (no symlinks are
/// followed: memory roots hold none).
fn normalise(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// memory finds the memory root serving `path`, with the path normalised.
#[inline]
fn memory(path: &Path) -> Option<(Arc<MemFs>, PathBuf)> {
    if COUNT.load(Ordering::Relaxed) == 0 {
        return None;
    }
    memory_slow(path)
}

#[cold]
fn memory_slow(path: &Path) -> Option<(Arc<MemFs>, PathBuf)> {
    let p = normalise(path);
    let roots = ROOTS.read().unwrap_or_else(|e| e.into_inner());
    let fs = roots.iter().find(|r| p.starts_with(&r.root))?.clone();
    Some((fs, p))
}

/// register_root makes `path` (a fresh `/kgroup-memory/<n>` if None) a memory root: from now
/// on every path under it is served from memory, starting with an empty folder. A root already
/// registered is kept with its contents. Returns the root's normalised path. Fails with
/// InvalidInput for a root inside or around another one.
pub fn register_root(path: Option<&Path>) -> Result<PathBuf> {
    let root = match path {
        Some(p) => normalise(p),
        None => {
            let n = NEXT_ROOT.fetch_add(1, Ordering::Relaxed);
            PathBuf::from(format!("{ROOT_PREFIX}/{}-{n}", std::process::id()))
        }
    };
    let mut roots = ROOTS.write().unwrap_or_else(|e| e.into_inner());
    if roots.iter().any(|r| r.root == root) {
        return Ok(root);
    }
    if let Some(r) = roots
        .iter()
        .find(|r| r.root.starts_with(&root) || root.starts_with(&r.root))
    {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "memory root {} overlaps memory root {}",
                root.display(),
                r.root.display()
            ),
        ));
    }
    let mut nodes = BTreeMap::new();
    nodes.insert(root.clone(), Node::Dir);
    roots.push(Arc::new(MemFs {
        root: root.clone(),
        nodes: Mutex::new(nodes),
    }));
    COUNT.store(roots.len(), Ordering::Release);
    Ok(root)
}

/// drop_root unregisters the memory root at `path` and frees its memory (files still open keep
/// theirs until closed). Returns whether it was registered.
pub fn drop_root(path: &Path) -> bool {
    let root = normalise(path);
    let mut roots = ROOTS.write().unwrap_or_else(|e| e.into_inner());
    let Some(i) = roots.iter().position(|r| r.root == root) else {
        return false;
    };
    let fs = roots.remove(i);
    COUNT.store(roots.len(), Ordering::Release);
    drop(roots);
    fs.nodes().clear();
    true
}

/// is_memory says whether `path` is served from memory.
pub fn is_memory(path: &Path) -> bool {
    memory(path).is_some()
}

/// roots lists the registered memory roots.
pub fn roots() -> Vec<PathBuf> {
    let roots = ROOTS.read().unwrap_or_else(|e| e.into_inner());
    roots.iter().map(|r| r.root.clone()).collect()
}

/// memory_used is the bytes of file contents held by the memory root serving `path` (None if
/// `path` is on disk).
pub fn memory_used(path: &Path) -> Option<u64> {
    let (fs, _) = memory(path)?;
    let nodes = fs.nodes();
    Some(
        nodes
            .values()
            .map(|n| match n {
                Node::File(f) => f.held(),
                Node::Dir => 0,
            })
            .sum(),
    )
}

fn not_found(p: &Path) -> Error {
    Error::new(
        ErrorKind::NotFound,
        format!("{}: no such file or folder", p.display()),
    )
}

fn parent_is_dir(nodes: &BTreeMap<PathBuf, Node>, p: &Path) -> Result<()> {
    match p.parent().and_then(|d| nodes.get(d)) {
        Some(Node::Dir) => Ok(()),
        Some(Node::File(_)) => Err(Error::new(
            ErrorKind::NotADirectory,
            format!("{}: not a folder", p.display()),
        )),
        None => Err(not_found(p)),
    }
}

/// open opens the file at `path` as `mode` says.
pub fn open(path: &Path, mode: Mode) -> Result<File> {
    let Some((fs, p)) = memory(path) else {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true);
        match mode {
            Mode::ReadWrite => {}
            Mode::Create => {
                o.create(true).truncate(false);
            }
            Mode::Truncate => {
                o.create(true).truncate(true);
            }
        }
        return o.open(path).map(File::Disk);
    };
    let mut nodes = fs.nodes();
    match nodes.get(&p) {
        Some(Node::File(f)) => {
            if mode == Mode::Truncate {
                f.set_len(0);
            }
            Ok(File::Memory(f.clone()))
        }
        Some(Node::Dir) => Err(Error::new(
            ErrorKind::IsADirectory,
            format!("{}: is a folder", p.display()),
        )),
        None if mode == Mode::ReadWrite => Err(not_found(&p)),
        None => {
            parent_is_dir(&nodes, &p)?;
            let f = MemFile::new();
            nodes.insert(p, Node::File(f.clone()));
            Ok(File::Memory(f))
        }
    }
}

/// read is a whole file's contents.
pub fn read(path: impl AsRef<Path>) -> Result<Vec<u8>> {
    let path = path.as_ref();
    let Some((fs, p)) = memory(path) else {
        return std::fs::read(path);
    };
    let f = match fs.nodes().get(&p) {
        Some(Node::File(f)) => f.clone(),
        Some(Node::Dir) => {
            return Err(Error::new(ErrorKind::IsADirectory, "is a folder"));
        }
        None => return Err(not_found(&p)),
    };
    Ok(f.contents())
}

/// write creates (or empties) the file at `path` and writes `data` to it (not atomically: see
/// `files::write_atomic`).
pub fn write(path: impl AsRef<Path>, data: impl AsRef<[u8]>) -> Result<()> {
    let (path, data) = (path.as_ref(), data.as_ref());
    if memory(path).is_none() {
        return std::fs::write(path, data);
    }
    open(path, Mode::Truncate)?.write_all_at(data, 0)
}

/// write_atomically replaces the file at `path` with `data` through `<path>.tmp` renamed into
/// place, so a reader (or a restart after a crash, with `sync`) finds the old contents or the
/// new ones; with `sync` the file is fsynced before the rename and its folder after. For the
/// broker's small state files; no fault is injected here (see `files::write_atomic` for the
/// log's own).
pub fn write_atomically(path: &Path, data: &[u8], sync: bool) -> Result<()> {
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let f = open(&tmp, Mode::Truncate)?;
    f.write_all_at(data, 0)?;
    if sync {
        f.sync_data()?;
    }
    drop(f);
    rename(&tmp, path)?;
    match path.parent() {
        Some(dir) if sync => sync_dir(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        }),
        _ => Ok(()),
    }
}

/// exists says whether a file or folder is at `path`.
pub fn exists(path: impl AsRef<Path>) -> bool {
    let path = path.as_ref();
    match memory(path) {
        None => path.exists(),
        Some((fs, p)) => fs.nodes().contains_key(&p),
    }
}

/// is_dir says whether a folder is at `path`.
pub fn is_dir(path: impl AsRef<Path>) -> bool {
    let path = path.as_ref();
    match memory(path) {
        None => path.is_dir(),
        Some((fs, p)) => matches!(fs.nodes().get(&p), Some(Node::Dir)),
    }
}

/// file_len is the length of the file at `path`.
pub fn file_len(path: impl AsRef<Path>) -> Result<u64> {
    let path = path.as_ref();
    let Some((fs, p)) = memory(path) else {
        return Ok(std::fs::metadata(path)?.len());
    };
    let nodes = fs.nodes();
    match nodes.get(&p) {
        Some(Node::File(f)) => Ok(f.len()),
        Some(Node::Dir) => Ok(0),
        None => Err(not_found(&p)),
    }
}

/// create_dir_all creates a folder and every missing parent (up to the memory root, which
/// always exists while registered).
pub fn create_dir_all(path: &Path) -> Result<()> {
    let Some((fs, p)) = memory(path) else {
        return std::fs::create_dir_all(path);
    };
    let mut nodes = fs.nodes();
    let mut missing = Vec::new();
    let mut at = Some(p.as_path());
    while let Some(d) = at {
        match nodes.get(d) {
            Some(Node::Dir) => break,
            Some(Node::File(_)) => {
                return Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!("{}: a file is in the way", d.display()),
                ))
            }
            None if d == fs.root || !d.starts_with(&fs.root) => break,
            None => missing.push(d.to_path_buf()),
        }
        at = d.parent();
    }
    if !nodes.contains_key(&fs.root) {
        nodes.insert(fs.root.clone(), Node::Dir);
    }
    for d in missing {
        nodes.insert(d, Node::Dir);
    }
    Ok(())
}

/// read_dir lists the direct children of the folder at `path`: (name, path) pairs, in no
/// promised order.
pub fn read_dir(path: &Path) -> Result<Vec<(String, PathBuf)>> {
    let Some((fs, p)) = memory(path) else {
        let mut out = Vec::new();
        for e in std::fs::read_dir(path)? {
            let e = e?;
            out.push((e.file_name().to_string_lossy().into_owned(), e.path()));
        }
        return Ok(out);
    };
    let nodes = fs.nodes();
    match nodes.get(&p) {
        Some(Node::Dir) => {}
        Some(Node::File(_)) => {
            return Err(Error::new(ErrorKind::NotADirectory, "not a folder"));
        }
        None => return Err(not_found(&p)),
    }
    let out = nodes
        .range(p.clone()..)
        .skip(1)
        .take_while(|(k, _)| k.starts_with(&p))
        .filter(|(k, _)| k.parent() == Some(p.as_path()))
        .map(|(k, _)| {
            let name = k
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            // The path as the caller spelled its folder.
            (name.clone(), path.join(&name))
        })
        .collect();
    Ok(out)
}

/// rename moves a file or folder atomically, replacing a file (or an empty folder) at `to`.
/// Across a memory root's boundary it fails as across filesystems (CrossesDevices).
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    let (src, dst) = (memory(from), memory(to));
    let (Some((fs, f)), Some((fs2, t))) = (&src, &dst) else {
        if src.is_none() && dst.is_none() {
            return std::fs::rename(from, to);
        }
        return Err(Error::new(
            ErrorKind::CrossesDevices,
            "rename between memory and disk",
        ));
    };
    if !Arc::ptr_eq(fs, fs2) {
        return Err(Error::new(
            ErrorKind::CrossesDevices,
            "rename between memory roots",
        ));
    }
    let mut nodes = fs.nodes();
    let node = nodes.get(f).cloned().ok_or_else(|| not_found(f))?;
    if f == t {
        return Ok(());
    }
    parent_is_dir(&nodes, t)?;
    match (&node, nodes.get(t)) {
        (_, None) | (Node::File(_), Some(Node::File(_))) => {}
        (Node::File(_), Some(Node::Dir)) => {
            return Err(Error::new(ErrorKind::IsADirectory, "target is a folder"));
        }
        (Node::Dir, Some(Node::File(_))) => {
            return Err(Error::new(ErrorKind::NotADirectory, "target is a file"));
        }
        (Node::Dir, Some(Node::Dir)) => {
            if nodes
                .range(t.clone()..)
                .nth(1)
                .is_some_and(|(k, _)| k.starts_with(t))
            {
                return Err(Error::new(
                    ErrorKind::DirectoryNotEmpty,
                    "target folder is not empty",
                ));
            }
        }
    }
    if matches!(node, Node::Dir) && t.starts_with(f) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "cannot move a folder into itself",
        ));
    }
    let moved: Vec<PathBuf> = nodes
        .range(f.clone()..)
        .take_while(|(k, _)| k.starts_with(f))
        .map(|(k, _)| k.clone())
        .collect();
    let mut taken = Vec::with_capacity(moved.len());
    for k in moved {
        if let Some(n) = nodes.remove(&k) {
            let rel = k.strip_prefix(f).unwrap_or(Path::new("")).to_path_buf();
            taken.push((rel, n));
        }
    }
    for (rel, n) in taken {
        let to = if rel.as_os_str().is_empty() {
            t.clone()
        } else {
            t.join(rel)
        };
        nodes.insert(to, n);
    }
    Ok(())
}

/// remove_file deletes a file (open handles keep reading it).
pub fn remove_file(path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let Some((fs, p)) = memory(path) else {
        return std::fs::remove_file(path);
    };
    let mut nodes = fs.nodes();
    match nodes.get(&p) {
        Some(Node::File(_)) => {
            nodes.remove(&p);
            Ok(())
        }
        Some(Node::Dir) => Err(Error::new(ErrorKind::IsADirectory, "is a folder")),
        None => Err(not_found(&p)),
    }
}

/// remove_dir_all deletes a folder and everything in it.
pub fn remove_dir_all(path: &Path) -> Result<()> {
    let Some((fs, p)) = memory(path) else {
        return std::fs::remove_dir_all(path);
    };
    let mut nodes = fs.nodes();
    match nodes.get(&p) {
        Some(Node::Dir) => {}
        Some(Node::File(_)) => {
            return Err(Error::new(ErrorKind::NotADirectory, "not a folder"));
        }
        None => return Err(not_found(&p)),
    }
    let gone: Vec<PathBuf> = nodes
        .range(p.clone()..)
        .take_while(|(k, _)| k.starts_with(&p))
        .map(|(k, _)| k.clone())
        .collect();
    for k in gone {
        nodes.remove(&k);
    }
    Ok(())
}

/// sync_dir fsyncs a folder (in memory: checks it exists).
pub fn sync_dir(path: &Path) -> Result<()> {
    let Some((fs, p)) = memory(path) else {
        return std::fs::File::open(path)?.sync_all();
    };
    let nodes = fs.nodes();
    match nodes.get(&p) {
        Some(Node::Dir) => Ok(()),
        Some(Node::File(_)) => Err(Error::new(ErrorKind::NotADirectory, "not a folder")),
        None => Err(not_found(&p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Root is a memory root dropped at the end of a test.
    struct Root(PathBuf);

    impl Root {
        fn new() -> Root {
            Root(register_root(None).unwrap())
        }
    }

    impl Drop for Root {
        fn drop(&mut self) {
            drop_root(&self.0);
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = read_dir(dir).unwrap().into_iter().map(|e| e.0).collect();
        v.sort();
        v
    }

    #[test]
    fn files_and_folders_live_in_memory_only() {
        let r = Root::new();
        let dir = r.0.join("t-0");
        assert!(is_memory(&dir) && !is_memory(Path::new("/tmp")));
        assert_eq!(
            open(&dir.join("a"), Mode::Create).unwrap_err().kind(),
            ErrorKind::NotFound,
            "the folder must exist first"
        );
        create_dir_all(&dir.join("x/y")).unwrap();
        write(dir.join("a"), b"hello").unwrap();
        write(dir.join("x/b"), b"").unwrap();
        assert_eq!(names(&dir), ["a", "x"]);
        assert_eq!(names(&dir.join("x")), ["b", "y"]);
        assert_eq!(read(dir.join("a")).unwrap(), b"hello");
        assert!(!Path::new(ROOT_PREFIX).exists(), "nothing on disk");
        // `..` and `.` resolve by name.
        assert_eq!(read(dir.join("x/../a")).unwrap(), b"hello");
        remove_file(dir.join("a")).unwrap();
        assert!(!exists(dir.join("a")));
        assert_eq!(
            remove_file(dir.join("a")).unwrap_err().kind(),
            ErrorKind::NotFound
        );
        remove_dir_all(&dir).unwrap();
        assert!(!exists(&dir) && exists(&r.0));
    }

    #[test]
    fn rename_is_atomic_and_moves_whole_folders() {
        let r = Root::new();
        let d = r.0.join("p-0");
        create_dir_all(&d).unwrap();
        write(d.join("new.tmp"), b"new").unwrap();
        write(d.join("state"), b"old").unwrap();
        let reader = open(&d.join("state"), Mode::ReadWrite).unwrap();
        rename(&d.join("new.tmp"), &d.join("state")).unwrap();
        assert_eq!(read(d.join("state")).unwrap(), b"new");
        assert_eq!(names(&d), ["state"]);
        // A handle on the replaced file reads it still, as an unlinked inode.
        let mut b = [0u8; 3];
        reader.read_exact_at(&mut b, 0).unwrap();
        assert_eq!(&b, b"old");
        // A folder moves with its subtree; its old name is gone.
        create_dir_all(&d.join("sub")).unwrap();
        write(d.join("sub/f"), b"1").unwrap();
        let to = r.0.join("p-0.abc-delete");
        rename(&d, &to).unwrap();
        assert!(!exists(&d) && !exists(d.join("sub/f")));
        assert_eq!(read(to.join("sub/f")).unwrap(), b"1");
        // A sibling whose name starts with the folder's is not part of it.
        create_dir_all(&r.0.join("q")).unwrap();
        create_dir_all(&r.0.join("q-1")).unwrap();
        write(r.0.join("q-1/f"), b"2").unwrap();
        rename(&r.0.join("q"), &r.0.join("z")).unwrap();
        assert_eq!(read(r.0.join("q-1/f")).unwrap(), b"2");
        // No target folder, a missing source, across to the disk: refused.
        assert_eq!(
            rename(&to.join("state"), &r.0.join("none/state"))
                .unwrap_err()
                .kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            rename(&r.0.join("missing"), &r.0.join("m2"))
                .unwrap_err()
                .kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            rename(&to.join("state"), Path::new("/tmp/kgroup-vfs-x"))
                .unwrap_err()
                .kind(),
            ErrorKind::CrossesDevices
        );
        assert!(!Path::new("/tmp/kgroup-vfs-x").exists());
    }

    #[test]
    fn a_reader_beside_atomic_replacements_sees_old_or_new_never_neither() {
        let r = Root::new();
        let p = r.0.join("topics.json");
        write_atomically(&p, &[b'a'; 5000], true).unwrap();
        let writer = {
            let p = p.clone();
            std::thread::spawn(move || {
                for i in 0..2000u32 {
                    let b = if i % 2 == 0 { b'b' } else { b'a' };
                    let n = 1000 + (i as usize % 7) * 1000;
                    write_atomically(&p, &vec![b; n], i % 3 == 0).unwrap();
                }
            })
        };
        let mut reads = 0;
        while !writer.is_finished() || reads == 0 {
            let data = read(&p).expect("always there");
            assert!(!data.is_empty() && data.iter().all(|&c| c == data[0]));
            reads += 1;
        }
        writer.join().unwrap();
        assert_eq!(names(&r.0), ["topics.json"]);
    }

    #[test]
    fn truncation_and_sparse_length_hold_no_memory() {
        let r = Root::new();
        let p = r.0.join("00000000000000000000.index");
        let f = open(&p, Mode::Truncate).unwrap();
        // Kafka preallocates an index to segment.index.bytes: the length is there, the
        // memory is not.
        f.set_len(10 << 20).unwrap();
        assert_eq!(f.len().unwrap(), 10 << 20);
        assert_eq!(memory_used(&r.0), Some(0));
        let mut b = [1u8; 8];
        f.read_exact_at(&mut b, 5 << 20).unwrap();
        assert_eq!(b, [0; 8]);
        f.write_all_at(&[7; 16], 0).unwrap();
        assert_eq!(memory_used(&r.0), Some(16));
        assert_eq!(f.len().unwrap(), 10 << 20);
        // Trimmed to its entries, as Kafka's index does on close.
        f.set_len(8).unwrap();
        assert_eq!(read(&p).unwrap(), [7; 8]);
        assert_eq!(
            f.read_exact_at(&mut [0u8; 4], 6).unwrap_err().kind(),
            ErrorKind::UnexpectedEof
        );
        // A write past the end grows the file; the gap reads as zeros.
        f.write_all_at(b"xy", 10).unwrap();
        assert_eq!(
            read(&p).unwrap(),
            [7, 7, 7, 7, 7, 7, 7, 7, 0, 0, b'x', b'y']
        );
        // Opening to truncate empties it for every handle.
        let g = open(&p, Mode::Truncate).unwrap();
        assert_eq!((f.len().unwrap(), g.len().unwrap()), (0, 0));
    }

    #[test]
    fn random_writes_cuts_and_reads_match_a_plain_buffer() {
        // Chunk boundaries, sparse tails and cuts against a Vec<u8> model of the file.
        let mut rng = crate::rng::Rng::new(Some(20261128));
        let f = MemFile::new();
        let mut model: Vec<u8> = Vec::new();
        let span = (3 * CHUNK) as u64;
        for round in 0..400 {
            let pos = rng.next_u64() % span;
            match rng.next_u64() % 4 {
                0 | 1 => {
                    let n = (rng.next_u64() % (CHUNK as u64 / 2)) as usize;
                    let data: Vec<u8> = (0..n).map(|i| (i as u8) ^ (round as u8)).collect();
                    f.write_at(&data, pos);
                    let end = pos as usize + n;
                    if model.len() < end {
                        model.resize(end, 0);
                    }
                    model[pos as usize..end].copy_from_slice(&data);
                }
                2 => {
                    f.set_len(pos);
                    model.resize(pos as usize, 0);
                }
                _ => {
                    let n = (rng.next_u64() % (CHUNK as u64 + 7)) as usize;
                    let mut buf = vec![0xAAu8; n];
                    let r = f.read_exact_at(&mut buf, pos);
                    if pos as usize + n <= model.len() {
                        r.unwrap();
                        assert_eq!(buf, model[pos as usize..pos as usize + n], "{round}");
                    } else {
                        assert_eq!(r.unwrap_err().kind(), ErrorKind::UnexpectedEof);
                    }
                }
            }
            assert_eq!(f.len(), model.len() as u64, "{round}");
            assert!(f.held() <= f.len());
        }
        assert_eq!(f.contents(), model);
    }

    #[test]
    fn dropping_a_root_frees_it_and_roots_do_not_overlap() {
        let r = register_root(None).unwrap();
        write(r.join("f"), [1; 1000]).unwrap();
        assert_eq!(memory_used(&r), Some(1000));
        assert_eq!(
            register_root(Some(&r)).unwrap(),
            r,
            "registered twice: kept"
        );
        assert!(exists(r.join("f")));
        assert_eq!(
            register_root(Some(&r.join("inner"))).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert!(drop_root(&r));
        assert!(!drop_root(&r));
        assert!(!is_memory(&r) && !exists(r.join("f")));
    }
}
