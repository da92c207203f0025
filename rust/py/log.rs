//! Bindings for the log (`kgroup.log` wraps these): `Log` and the small result classes its
//! methods return. Opening, flushing, compacting, maintenance and large appends and reads run
//! with the GIL released; `Log` is safe to share between threads (the broker's asyncio thread
//! appends and reads while executor threads flush and compact).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};

use crate::errors::Error;
use crate::log::{self, Log, LogConfig};
use crate::py::errors::{detached, to_pyerr, IntoPyResult};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLog>()?;
    m.add_class::<AppendResult>()?;
    m.add_class::<RecoveryReport>()?;
    m.add_class::<MaintenanceReport>()?;
    m.add_class::<CompactionReport>()?;
    m.add_class::<TimestampOffset>()?;
    m.add_class::<ProducerInfo>()?;
    m.add_class::<FileSlice>()?;
    m.add_function(wrap_pyfunction!(inject_fault, m)?)?;
    m.add_function(wrap_pyfunction!(clear_faults, m)?)?;
    m.add_function(wrap_pyfunction!(memory_root, m)?)?;
    m.add_function(wrap_pyfunction!(drop_memory_root, m)?)?;
    m.add_function(wrap_pyfunction!(is_memory, m)?)?;
    m.add_function(wrap_pyfunction!(memory_used, m)?)?;
    m.add_function(wrap_pyfunction!(read_file, m)?)?;
    m.add_function(wrap_pyfunction!(write_file_atomically, m)?)?;
    m.add_function(wrap_pyfunction!(file_exists, m)?)?;
    m.add_function(wrap_pyfunction!(is_dir, m)?)?;
    m.add_function(wrap_pyfunction!(make_dirs, m)?)?;
    m.add_function(wrap_pyfunction!(list_dir, m)?)?;
    m.add_function(wrap_pyfunction!(remove_file, m)?)?;
    m.add_function(wrap_pyfunction!(remove_tree, m)?)?;
    Ok(())
}

// -- storage: memory roots and the file helpers of the broker's Python side -------------------

/// memory_root(path=None): make `path` (a fresh `/kgroup-memory/<pid>-<n>` if None) a memory
/// root of this process and return its normalised path: every file under it, the log's and
/// the helpers below alike, lives in memory. A root already registered is kept with its files.
/// ValueError if it would sit inside or around another root.
#[pyfunction]
#[pyo3(signature = (path=None))]
fn memory_root(path: Option<PathBuf>) -> PyResult<PathBuf> {
    log::vfs::register_root(path.as_deref()).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidInput {
            pyo3::exceptions::PyValueError::new_err(e.to_string())
        } else {
            e.into()
        }
    })
}

/// drop_memory_root(path): unregister the memory root and free its files (logs still open on
/// it keep theirs until closed). Returns whether it was a root.
#[pyfunction]
fn drop_memory_root(path: PathBuf) -> bool {
    log::vfs::drop_root(&path)
}

/// is_memory(path): whether `path` is under a memory root.
#[pyfunction]
fn is_memory(path: PathBuf) -> bool {
    log::vfs::is_memory(&path)
}

/// memory_used(path): the bytes held by the files of the memory root serving `path` (None if
/// it is on disk). A file extended without being written (a sparse tail) holds nothing.
#[pyfunction]
fn memory_used(path: PathBuf) -> Option<u64> {
    log::vfs::memory_used(&path)
}

/// read_file(path): the file's bytes (OSError as `open` raises it: FileNotFoundError...).
#[pyfunction]
fn read_file<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyBytes>> {
    let data = log::vfs::read(&path)?;
    Ok(PyBytes::new(py, &data))
}

/// write_file_atomically(path, data, sync=True): replace the file through `<path>.tmp` renamed
/// into place, fsynced (file, then folder) if `sync`.
#[pyfunction]
#[pyo3(signature = (path, data, sync=true))]
fn write_file_atomically(path: PathBuf, data: &[u8], sync: bool) -> PyResult<()> {
    Ok(log::vfs::write_atomically(&path, data, sync)?)
}

/// file_exists(path): whether a file or folder is there.
#[pyfunction]
fn file_exists(path: PathBuf) -> bool {
    log::vfs::exists(&path)
}

/// is_dir(path): whether a folder is there.
#[pyfunction]
fn is_dir(path: PathBuf) -> bool {
    log::vfs::is_dir(&path)
}

/// make_dirs(path): create the folder and its missing parents (an existing one is fine).
#[pyfunction]
fn make_dirs(path: PathBuf) -> PyResult<()> {
    Ok(log::vfs::create_dir_all(&path)?)
}

/// list_dir(path): the names in a folder, sorted.
#[pyfunction]
fn list_dir(path: PathBuf) -> PyResult<Vec<String>> {
    let mut names: Vec<String> = log::vfs::read_dir(&path)?
        .into_iter()
        .map(|e| e.0)
        .collect();
    names.sort_unstable();
    Ok(names)
}

/// remove_file(path): delete a file.
#[pyfunction]
fn remove_file(path: PathBuf) -> PyResult<()> {
    Ok(log::vfs::remove_file(&path)?)
}

/// remove_tree(path): delete a folder and everything in it.
#[pyfunction]
fn remove_tree(path: PathBuf) -> PyResult<()> {
    Ok(log::vfs::remove_dir_all(&path)?)
}

/// inject_fault(op, path_contains, errno, times=None): fail the next `times` storage
/// operations `op` (write, sync, create, rename, remove, truncate) of this process on a path containing
/// `path_contains` with OS error `errno` (every one until cleared if `times` is None). For
/// tests of what a broker does when its disk fails; `clear_faults()` disarms them all.
#[pyfunction]
#[pyo3(signature = (op, path_contains, errno, times=None))]
fn inject_fault(op: &str, path_contains: &str, errno: i32, times: Option<u64>) -> PyResult<()> {
    let op = log::faults::Op::parse(op).ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "unknown storage operation {op:?}: write, sync, create, rename, remove or truncate"
        ))
    })?;
    if times == Some(0) {
        return Ok(());
    }
    log::faults::inject(op, path_contains, errno, times);
    Ok(())
}

/// clear_faults(): disarm every fault `inject_fault` armed.
#[pyfunction]
fn clear_faults() {
    log::faults::clear();
}

/// DETACH_AT is the size from which an append or read releases the GIL.
const DETACH_AT: usize = 16 * 1024;

fn config_value(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(if v.extract::<bool>()? {
            "true"
        } else {
            "false"
        }
        .into());
    }
    if v.is_instance_of::<PyString>()
        || v.is_instance_of::<PyInt>()
        || v.is_instance_of::<PyFloat>()
    {
        return Ok(v.str()?.to_string());
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let parts: Vec<String> = v.extract()?;
        return Ok(parts.join(","));
    }
    Err(to_pyerr(
        v.py(),
        Error::InvalidType(format!(
            "a config value must be str, int, float, bool or a list of str, not {}",
            v.get_type().name()?
        )),
    ))
}

/// config_pairs reads a mapping of Kafka config names to values as (name, string) pairs.
fn config_pairs(config: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(c) = config else {
        return Ok(Vec::new());
    };
    if c.is_none() {
        return Ok(Vec::new());
    }
    let m = c.cast::<PyMapping>().map_err(|_| {
        to_pyerr(
            c.py(),
            Error::InvalidType("config must be a mapping of Kafka config names to values".into()),
        )
    })?;
    let mut out = Vec::new();
    for item in m.items()?.iter() {
        let (k, v): (String, Bound<'_, PyAny>) = item.extract()?;
        out.push((k, config_value(&v)?));
    }
    Ok(out)
}

fn build_config(py: Python<'_>, pairs: &[(String, String)]) -> PyResult<LogConfig> {
    LogConfig::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).py_err(py)
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// AppendResult: what an append answers a producer with.
#[pyclass(frozen, get_all, name = "AppendResult", module = "kgroup.log")]
pub struct AppendResult {
    base_offset: i64,
    last_offset: i64,
    log_append_time: i64,
    log_start_offset: i64,
    duplicate: bool,
    records: i64,
}

#[pymethods]
impl AppendResult {
    fn __repr__(&self) -> String {
        format!(
            "AppendResult(base_offset={}, last_offset={}, log_append_time={}, log_start_offset={}, duplicate={}, records={})",
            self.base_offset,
            self.last_offset,
            self.log_append_time,
            self.log_start_offset,
            if self.duplicate { "True" } else { "False" },
            self.records
        )
    }
}

/// RecoveryReport: what opening the log found and did.
#[pyclass(frozen, get_all, name = "RecoveryReport", module = "kgroup.log")]
pub struct RecoveryReport {
    clean: bool,
    segments: usize,
    batches_checked: u64,
    bytes_truncated: u64,
    indexes_rebuilt: usize,
    segments_deleted: usize,
    swaps_completed: usize,
    snapshot_offset: Option<i64>,
    batches_replayed: u64,
    log_start_offset: i64,
    log_end_offset: i64,
}

/// MaintenanceReport: what a maintenance pass did.
#[pyclass(frozen, get_all, name = "MaintenanceReport", module = "kgroup.log")]
pub struct MaintenanceReport {
    rolled: bool,
    segments_deleted: usize,
    bytes_deleted: u64,
    log_start_offset: i64,
    producers_expired: usize,
}

/// CompactionReport: what a compaction found and did.
#[pyclass(frozen, get_all, name = "CompactionReport", module = "kgroup.log")]
pub struct CompactionReport {
    cleaned: bool,
    first_dirty_offset: i64,
    end_offset: i64,
    dirty_ratio: f64,
    segments_before: usize,
    segments_after: usize,
    bytes_before: u64,
    bytes_after: u64,
    records_removed: u64,
    tombstones_removed: u64,
    groups_skipped: usize,
}

/// TimestampOffset: a record's timestamp and offset, and its batch's leader epoch.
#[pyclass(frozen, get_all, name = "TimestampOffset", module = "kgroup.log")]
pub struct TimestampOffset {
    timestamp: i64,
    offset: i64,
    leader_epoch: i32,
}

#[pymethods]
impl TimestampOffset {
    fn __repr__(&self) -> String {
        format!(
            "TimestampOffset(timestamp={}, offset={}, leader_epoch={})",
            self.timestamp, self.offset, self.leader_epoch
        )
    }
}

/// ProducerInfo: what DescribeProducers tells of one producer of the partition.
#[pyclass(frozen, get_all, name = "ProducerInfo", module = "kgroup.log")]
pub struct ProducerInfo {
    producer_id: i64,
    producer_epoch: i16,
    last_sequence: i32,
    last_timestamp: i64,
    coordinator_epoch: i32,
    current_txn_start_offset: i64,
}

#[pymethods]
impl ProducerInfo {
    fn __repr__(&self) -> String {
        format!(
            "ProducerInfo(producer_id={}, producer_epoch={}, last_sequence={}, last_timestamp={}, coordinator_epoch={}, current_txn_start_offset={})",
            self.producer_id,
            self.producer_epoch,
            self.last_sequence,
            self.last_timestamp,
            self.coordinator_epoch,
            self.current_txn_start_offset
        )
    }
}

fn append_result(a: log::AppendInfo) -> AppendResult {
    AppendResult {
        base_offset: a.base_offset,
        last_offset: a.last_offset,
        log_append_time: a.log_append_time,
        log_start_offset: a.log_start_offset,
        duplicate: a.duplicate,
        records: a.records,
    }
}

fn ts_offset(t: Option<log::TimestampOffset>) -> Option<TimestampOffset> {
    t.map(|t| TimestampOffset {
        timestamp: t.timestamp,
        offset: t.offset,
        leader_epoch: t.leader_epoch,
    })
}

/// FileSlice: whole batches of one segment file, for `os.sendfile`. While it lives, its file
/// stays open and the bytes at `position` for `length` stay the same, even if the segment is
/// deleted or compacted meanwhile.
#[pyclass(frozen, name = "FileSlice", module = "kgroup.log")]
pub struct FileSlice {
    inner: log::FileSlice,
}

impl FileSlice {
    /// slice is the range, for the protocol bindings that send it.
    pub(crate) fn slice(&self) -> &log::FileSlice {
        &self.inner
    }
}

#[pymethods]
impl FileSlice {
    /// position is where the bytes start in the file.
    #[getter]
    fn position(&self) -> u64 {
        self.inner.position()
    }

    /// length is how many bytes.
    #[getter]
    fn length(&self) -> usize {
        self.inner.len()
    }

    /// path is the segment file's path (None when empty).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.inner.path()
    }

    /// fileno is the segment file's descriptor (-1 when empty or in memory), valid while the
    /// slice lives.
    fn fileno(&self) -> i32 {
        self.inner.file().and_then(|f| f.raw_fd()).unwrap_or(-1)
    }

    /// read reads the bytes.
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = if self.inner.len() >= DETACH_AT {
            detached(py, || self.inner.bytes())?
        } else {
            self.inner.bytes().py_err(py)?
        };
        Ok(PyBytes::new(py, &bytes))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// Log(path, config=None, now_ms=None): the log of one topic-partition in the folder `path`,
/// opened (created if missing, recovered after an unclean stop) with `config`, a mapping of
/// Kafka topic config names to values. `recovery` says what opening did.
#[pyclass(frozen, name = "Log", module = "kgroup.log")]
pub struct PyLog {
    inner: Log,
    #[pyo3(get)]
    recovery: Py<RecoveryReport>,
}

#[pymethods]
impl PyLog {
    #[new]
    #[pyo3(signature = (path, config=None, now_ms=None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        config: Option<&Bound<'_, PyAny>>,
        now_ms: Option<i64>,
    ) -> PyResult<Self> {
        let cfg = build_config(py, &config_pairs(config)?)?;
        let now = now_ms.unwrap_or_else(wall_ms);
        let (inner, r) = detached(py, || Log::open(&path, cfg, now))?;
        let recovery = Py::new(
            py,
            RecoveryReport {
                clean: r.clean,
                segments: r.segments,
                batches_checked: r.batches_checked,
                bytes_truncated: r.bytes_truncated,
                indexes_rebuilt: r.indexes_rebuilt,
                segments_deleted: r.segments_deleted,
                swaps_completed: r.swaps_completed,
                snapshot_offset: r.snapshot_offset,
                batches_replayed: r.batches_replayed,
                log_start_offset: r.log_start_offset,
                log_end_offset: r.log_end_offset,
            },
        )?;
        Ok(PyLog { inner, recovery })
    }

    /// path is the log's folder.
    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.dir().to_path_buf()
    }

    /// append(records, now_ms, leader_epoch=0, origin="client"): append a Produce request's
    /// record set; `origin="coordinator"` for a coordinator's own batch to its internal topic
    /// (Kafka's AppendOrigin.COORDINATOR: the producer epoch is checked, not the sequence).
    #[pyo3(signature = (records, now_ms, leader_epoch=0, origin="client"))]
    fn append(
        &self,
        py: Python<'_>,
        records: &Bound<'_, PyBytes>,
        now_ms: i64,
        leader_epoch: i32,
        origin: &str,
    ) -> PyResult<AppendResult> {
        let origin = match origin {
            "client" => log::AppendOrigin::Client,
            "coordinator" => log::AppendOrigin::Coordinator,
            o => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown append origin {o:?}: client or coordinator"
                )))
            }
        };
        let b = records.as_bytes();
        let a = if b.len() >= DETACH_AT {
            detached(py, || {
                self.inner.append_from(b, now_ms, leader_epoch, origin)
            })?
        } else {
            self.inner
                .append_from(b, now_ms, leader_epoch, origin)
                .py_err(py)?
        };
        Ok(append_result(a))
    }

    /// append_marker(producer_id, producer_epoch, commit, coordinator_epoch, now_ms,
    /// leader_epoch=0): write a transaction's COMMIT or ABORT marker (one control batch, one
    /// offset) and complete the producer's open transaction.
    #[pyo3(signature = (producer_id, producer_epoch, commit, coordinator_epoch, now_ms, leader_epoch=0))]
    #[allow(clippy::too_many_arguments)]
    fn append_marker(
        &self,
        py: Python<'_>,
        producer_id: i64,
        producer_epoch: i16,
        commit: bool,
        coordinator_epoch: i32,
        now_ms: i64,
        leader_epoch: i32,
    ) -> PyResult<AppendResult> {
        let a = self
            .inner
            .append_marker(
                producer_id,
                producer_epoch,
                commit,
                coordinator_epoch,
                now_ms,
                leader_epoch,
            )
            .py_err(py)?;
        Ok(append_result(a))
    }

    /// first_unstable_offset: the first offset of the earliest open transaction, or None.
    #[getter]
    fn first_unstable_offset(&self) -> Option<i64> {
        self.inner.first_unstable_offset()
    }

    /// aborted_transactions(start_offset, end_offset): (producer id, first offset) of every
    /// aborted transaction overlapping [start_offset, end_offset), for a read_committed fetch.
    fn aborted_transactions(&self, start_offset: i64, end_offset: i64) -> Vec<(i64, i64)> {
        self.inner
            .aborted_transactions(start_offset, end_offset)
            .into_iter()
            .map(|t| (t.producer_id, t.first_offset))
            .collect()
    }

    /// ongoing_transaction(producer_id): the first offset of its open transaction, or None.
    fn ongoing_transaction(&self, producer_id: i64) -> Option<i64> {
        self.inner.ongoing_transaction(producer_id)
    }

    /// producers(): the producers the log remembers, by id (DescribeProducers).
    fn producers(&self) -> Vec<ProducerInfo> {
        self.inner
            .producers()
            .into_iter()
            .map(|p| ProducerInfo {
                producer_id: p.producer_id,
                producer_epoch: p.producer_epoch,
                last_sequence: p.last_sequence,
                last_timestamp: p.last_timestamp,
                coordinator_epoch: p.coordinator_epoch,
                current_txn_start_offset: p.current_txn_start_offset,
            })
            .collect()
    }

    /// read(offset, max_bytes, max_offset, min_one=True): the bytes of whole batches a fetch
    /// at `offset` returns.
    #[pyo3(signature = (offset, max_bytes, max_offset, min_one=true))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        offset: i64,
        max_bytes: usize,
        max_offset: i64,
        min_one: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = if max_bytes >= DETACH_AT {
            detached(py, || {
                self.inner
                    .read(offset, max_bytes, max_offset, min_one)?
                    .bytes()
            })?
        } else {
            self.inner
                .read(offset, max_bytes, max_offset, min_one)
                .and_then(|s| s.bytes())
                .py_err(py)?
        };
        Ok(PyBytes::new(py, &bytes))
    }

    /// read_slice(offset, max_bytes, max_offset, min_one=True): the same range as `read`, as a
    /// FileSlice to send with `os.sendfile`.
    #[pyo3(signature = (offset, max_bytes, max_offset, min_one=true))]
    fn read_slice(
        &self,
        py: Python<'_>,
        offset: i64,
        max_bytes: usize,
        max_offset: i64,
        min_one: bool,
    ) -> PyResult<FileSlice> {
        let inner = self
            .inner
            .read(offset, max_bytes, max_offset, min_one)
            .py_err(py)?;
        Ok(FileSlice { inner })
    }

    /// flush(): fsync what was appended; returns the offset the log is durable up to.
    fn flush(&self, py: Python<'_>) -> PyResult<i64> {
        detached(py, || self.inner.flush())
    }

    #[getter]
    fn log_start_offset(&self) -> i64 {
        self.inner.log_start_offset()
    }

    #[getter]
    fn log_end_offset(&self) -> i64 {
        self.inner.log_end_offset()
    }

    #[getter]
    fn recovery_point(&self) -> i64 {
        self.inner.recovery_point()
    }

    #[getter]
    fn unflushed_messages(&self) -> i64 {
        self.inner.unflushed_messages()
    }

    #[getter]
    fn last_flush_ms(&self) -> i64 {
        self.inner.last_flush_ms()
    }

    #[getter]
    fn size(&self) -> u64 {
        self.inner.size()
    }

    #[getter]
    fn segment_count(&self) -> usize {
        self.inner.segment_count()
    }

    #[getter]
    fn producer_count(&self) -> usize {
        self.inner.producer_count()
    }

    /// flush_messages and flush_ms: the topic's flush.messages and flush.ms, for the host.
    #[getter]
    fn flush_messages(&self) -> i64 {
        self.inner.config().flush_messages
    }

    #[getter]
    fn flush_ms(&self) -> i64 {
        self.inner.config().flush_ms
    }

    /// offset_for_timestamp(timestamp): the first record at or after it (ListOffsets).
    fn offset_for_timestamp(
        &self,
        py: Python<'_>,
        timestamp: i64,
    ) -> PyResult<Option<TimestampOffset>> {
        Ok(ts_offset(detached(py, || {
            self.inner.offset_for_timestamp(timestamp)
        })?))
    }

    /// max_timestamp(): the record with the largest timestamp (ListOffsets -3).
    fn max_timestamp(&self, py: Python<'_>) -> PyResult<Option<TimestampOffset>> {
        Ok(ts_offset(detached(py, || self.inner.max_timestamp())?))
    }

    /// delete_records(offset, high_watermark): DeleteRecords (offset -1: the high watermark, as
    /// Kafka reads it); returns the new log start offset.
    fn delete_records(&self, py: Python<'_>, offset: i64, high_watermark: i64) -> PyResult<i64> {
        let offset = if offset == -1 { high_watermark } else { offset };
        detached(py, || self.inner.delete_records(offset, high_watermark))
    }

    /// maintenance(now_ms): roll by time, expire producers, apply retention.
    fn maintenance(&self, py: Python<'_>, now_ms: i64) -> PyResult<MaintenanceReport> {
        let r = detached(py, || self.inner.maintenance(now_ms))?;
        Ok(MaintenanceReport {
            rolled: r.rolled,
            segments_deleted: r.segments_deleted,
            bytes_deleted: r.bytes_deleted,
            log_start_offset: r.log_start_offset,
            producers_expired: r.producers_expired,
        })
    }

    /// compact(now_ms, force=False): clean the log if it is due (cleanup.policy compact).
    #[pyo3(signature = (now_ms, force=false))]
    fn compact(&self, py: Python<'_>, now_ms: i64, force: bool) -> PyResult<CompactionReport> {
        let r = detached(py, || self.inner.compact(now_ms, force))?;
        Ok(CompactionReport {
            cleaned: r.cleaned,
            first_dirty_offset: r.first_dirty_offset,
            end_offset: r.end_offset,
            dirty_ratio: r.dirty_ratio,
            segments_before: r.segments_before,
            segments_after: r.segments_after,
            bytes_before: r.bytes_before,
            bytes_after: r.bytes_after,
            records_removed: r.records_removed,
            tombstones_removed: r.tombstones_removed,
            groups_skipped: r.groups_skipped,
        })
    }

    /// update_config(config): apply changed topic configs, all or nothing.
    fn update_config(&self, py: Python<'_>, config: &Bound<'_, PyAny>) -> PyResult<()> {
        let pairs = config_pairs(Some(config))?;
        self.inner
            .update_config(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .py_err(py)
    }

    /// close(): flush, snapshot the producer state, mark the close clean.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.close())
    }

    /// delete(rename_to=None): close, let go of every file, and remove the folder now, or
    /// rename it to `rename_to` for removal later (DeleteTopics).
    #[pyo3(signature = (rename_to=None))]
    fn delete(&self, py: Python<'_>, rename_to: Option<PathBuf>) -> PyResult<()> {
        detached(py, || self.inner.delete(rename_to.as_deref()))
    }

    /// purge(now_ms): remove the files of deleted segments due by now (file.delete.delay.ms);
    /// returns how many segments went.
    fn purge(&self, py: Python<'_>, now_ms: i64) -> PyResult<usize> {
        detached(py, || self.inner.purge(now_ms))
    }

    /// next_purge_ms: when the next deleted segment's files are due to go, or None.
    #[getter]
    fn next_purge_ms(&self) -> Option<i64> {
        self.inner.next_purge_ms()
    }

    /// failure: why the log is offline (a failed fsync...), or None while it serves.
    #[getter]
    fn failure(&self) -> Option<String> {
        self.inner.failure()
    }

    fn __repr__(&self) -> String {
        format!(
            "Log({:?}, log_start_offset={}, log_end_offset={})",
            self.inner.dir(),
            self.inner.log_start_offset(),
            self.inner.log_end_offset()
        )
    }
}
