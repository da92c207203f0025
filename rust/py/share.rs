//! Bindings for the share partition of share groups (`rust/share/`): `kgroup._native.share`,
//! used by the broker's ShareFetch and ShareAcknowledge handlers (`kgroup.broker.share`).
//!
//! The hot path crosses once per partition and fetch: `acquire` takes the fetched log batches'
//! offsets as `(base, last)` pairs (from `batch_bounds`, which reads them off the bytes the log
//! returned) and gives back the acquired ranges as `(first, last, delivery_count)` tuples;
//! `acknowledge` takes one partition's AcknowledgementBatches as `(first, last, types)` tuples.
//! Errors come back as `kgroup.errors` classes (INVALID_REQUEST, INVALID_RECORD_STATE), which
//! the handler answers as the partition's AcknowledgeErrorCode.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::errors::IntoPyResult;
use crate::errors::{Error, ErrorCode};
use crate::share::{
    validate_acknowledgement_batches as validate, AcknowledgementBatch, AcquireMode, FetchedBatch,
    PersistedState, RecordState, SessionRelease, ShareConfig, SharePartition, ShareUpdate,
    StateBatch, UNINITIALIZED_START_OFFSET,
};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySharePartition>()?;
    m.add_class::<PyShareUpdate>()?;
    m.add_class::<PyPersistedState>()?;
    m.add_function(wrap_pyfunction!(validate_acknowledgement_batches, m)?)?;
    m.add_function(wrap_pyfunction!(batch_bounds, m)?)?;
    m.add("UNINITIALIZED_START_OFFSET", UNINITIALIZED_START_OFFSET)?;
    Ok(())
}

/// A state batch as Python sees it: `(first_offset, last_offset, delivery_state,
/// delivery_count)`, the state as its id (0 AVAILABLE, 2 ACKNOWLEDGED, 4 ARCHIVED).
type StateTuple = (i64, i64, i8, i16);

fn state_tuples(batches: &[StateBatch]) -> Vec<StateTuple> {
    batches
        .iter()
        .map(|b| {
            (
                b.first_offset,
                b.last_offset,
                b.delivery_state.id(),
                b.delivery_count,
            )
        })
        .collect()
}

fn invalid_argument(message: String) -> Error {
    Error::InvalidArgument(message)
}

fn state_batches(tuples: Vec<StateTuple>) -> Result<Vec<StateBatch>, Error> {
    tuples
        .into_iter()
        .map(|(first, last, state, count)| {
            let delivery_state = RecordState::from_id(state)
                .ok_or_else(|| invalid_argument(format!("unknown record state {state}")))?;
            Ok(StateBatch {
                first_offset: first,
                last_offset: last,
                delivery_state,
                delivery_count: count,
            })
        })
        .collect()
}

fn ack_batches(batches: Vec<(i64, i64, Vec<i8>)>) -> Vec<AcknowledgementBatch> {
    batches
        .into_iter()
        .map(
            |(first_offset, last_offset, acknowledge_types)| AcknowledgementBatch {
                first_offset,
                last_offset,
                acknowledge_types,
            },
        )
        .collect()
}

/// validate_acknowledgement_batches checks one partition's acknowledgement batches, `(first,
/// last, types)` each, as Kafka's `KafkaApis.validateAcknowledgementBatches` does; raises
/// `kgroup.errors.InvalidRequest` for the first bad one.
#[pyfunction]
#[pyo3(signature = (batches, supports_renew = false, is_renew_ack = false))]
fn validate_acknowledgement_batches(
    py: Python<'_>,
    batches: Vec<(i64, i64, Vec<i8>)>,
    supports_renew: bool,
    is_renew_ack: bool,
) -> PyResult<()> {
    validate(&ack_batches(batches), supports_renew, is_renew_ack).py_err(py)
}

/// batch_bounds reads the v2 batch headers of `records` (whole batches as a log read returns
/// them; a truncated last one is left out) and gives `(base_offset, last_offset, end)` for
/// each, `end` being the position just past the batch: what `SharePartition.acquire` takes and
/// where to cut the bytes to the batches that cover the acquired ranges.
#[pyfunction]
fn batch_bounds(records: &[u8]) -> Vec<(i64, i64, usize)> {
    // v2 header: base offset (8 bytes), batch length (4; bytes after these 12), ...,
    // last offset delta at byte 23.
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos + 27 <= records.len() {
        let base = i64::from_be_bytes(records[pos..pos + 8].try_into().unwrap());
        let length = i32::from_be_bytes(records[pos + 8..pos + 12].try_into().unwrap());
        let delta = i32::from_be_bytes(records[pos + 23..pos + 27].try_into().unwrap());
        let end = pos + 12 + length.max(0) as usize;
        if length < 0 || end > records.len() {
            break;
        }
        out.push((base, base + delta as i64, end));
        pos = end;
    }
    out
}

/// ShareUpdate is one change a share partition asks to persist (Kafka's WriteShareGroupState,
/// the value of a ShareUpdate record of `__share_group_state`).
#[pyclass(frozen, name = "ShareUpdate", module = "kgroup.share")]
pub struct PyShareUpdate {
    inner: ShareUpdate,
}

#[pymethods]
impl PyShareUpdate {
    #[getter]
    fn state_epoch(&self) -> i32 {
        self.inner.state_epoch
    }

    #[getter]
    fn leader_epoch(&self) -> i32 {
        self.inner.leader_epoch
    }

    /// start_offset is the share-partition start offset after the change.
    #[getter]
    fn start_offset(&self) -> i64 {
        self.inner.start_offset
    }

    #[getter]
    fn delivery_complete_count(&self) -> i32 {
        self.inner.delivery_complete_count
    }

    /// state_batches are the ranges that changed, `(first, last, state id, delivery count)`.
    #[getter]
    fn state_batches(&self) -> Vec<StateTuple> {
        state_tuples(&self.inner.state_batches)
    }

    fn __repr__(&self) -> String {
        format!(
            "ShareUpdate(start_offset={}, state_batches={:?})",
            self.inner.start_offset,
            state_tuples(&self.inner.state_batches)
        )
    }
}

fn update(u: Option<ShareUpdate>) -> Option<PyShareUpdate> {
    u.map(|inner| PyShareUpdate { inner })
}

/// PersistedState is a share partition's whole persisted state (a ShareSnapshot's value, what
/// ReadShareGroupState answers): updates merge into it with `apply`.
#[pyclass(name = "PersistedState", module = "kgroup.share")]
pub struct PyPersistedState {
    inner: PersistedState,
}

#[pymethods]
impl PyPersistedState {
    #[new]
    #[pyo3(signature = (state_epoch, start_offset, leader_epoch = -1, state_batches = Vec::new()))]
    fn new(
        py: Python<'_>,
        state_epoch: i32,
        start_offset: i64,
        leader_epoch: i32,
        state_batches: Vec<StateTuple>,
    ) -> PyResult<Self> {
        let batches = self::state_batches(state_batches).py_err(py)?;
        Ok(PyPersistedState {
            inner: PersistedState {
                state_epoch,
                leader_epoch,
                start_offset,
                state_batches: batches,
            },
        })
    }

    /// apply merges one update, as the share coordinator does.
    fn apply(&mut self, update: &PyShareUpdate) {
        self.inner.apply(&update.inner);
    }

    #[getter]
    fn state_epoch(&self) -> i32 {
        self.inner.state_epoch
    }

    #[getter]
    fn leader_epoch(&self) -> i32 {
        self.inner.leader_epoch
    }

    #[getter]
    fn start_offset(&self) -> i64 {
        self.inner.start_offset
    }

    #[getter]
    fn state_batches(&self) -> Vec<StateTuple> {
        state_tuples(&self.inner.state_batches)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyPersistedState>()
            .is_ok_and(|o| o.borrow().inner == self.inner)
    }

    fn __repr__(&self) -> String {
        format!(
            "PersistedState(state_epoch={}, start_offset={}, state_batches={:?})",
            self.inner.state_epoch,
            self.inner.start_offset,
            state_tuples(&self.inner.state_batches)
        )
    }
}

fn config(
    max_delivery_count: i16,
    max_in_flight_records: i32,
    record_lock_duration_ms: i64,
    undo_delivery_on_release: bool,
) -> ShareConfig {
    ShareConfig {
        max_delivery_count,
        max_in_flight_records,
        record_lock_duration_ms,
        session_release: if undo_delivery_on_release {
            SessionRelease::UndoDelivery
        } else {
            SessionRelease::CountDelivery
        },
    }
}

/// SharePartition is the in-flight window of one (share group, topic-partition): Kafka 4.2's
/// `SharePartition` (see `crate::share`). Not thread safe; the broker's event loop owns it.
#[pyclass(name = "SharePartition", module = "kgroup.share")]
pub struct PySharePartition {
    inner: SharePartition,
}

#[pymethods]
impl PySharePartition {
    /// A partition starting at `start_offset` with nothing in flight (its start offset
    /// resolved from `share.auto.offset.reset`), or, with `state`, one recovered from its
    /// persisted state (`start_offset` is then ignored). `undo_delivery_on_release` is Kafka
    /// 4.1's session release (the delivery does not count); 4.2's counts it.
    #[new]
    #[pyo3(signature = (
        start_offset = 0,
        *,
        state = None,
        state_epoch = 0,
        leader_epoch = 0,
        max_delivery_count = 5,
        max_in_flight_records = 2000,
        record_lock_duration_ms = 30_000,
        undo_delivery_on_release = false,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        start_offset: i64,
        state: Option<PyRef<'_, PyPersistedState>>,
        state_epoch: i32,
        leader_epoch: i32,
        max_delivery_count: i16,
        max_in_flight_records: i32,
        record_lock_duration_ms: i64,
        undo_delivery_on_release: bool,
    ) -> PyResult<Self> {
        let c = config(
            max_delivery_count,
            max_in_flight_records,
            record_lock_duration_ms,
            undo_delivery_on_release,
        );
        let inner = match state {
            Some(s) => SharePartition::recover(c, leader_epoch, &s.inner).py_err(py)?,
            None => {
                if start_offset < 0 {
                    return Err(Error::kafka(
                        ErrorCode::InvalidRequest,
                        "The share partition's start offset is uninitialized.",
                    ))
                    .py_err(py);
                }
                SharePartition::new(c, state_epoch, leader_epoch, start_offset)
            }
        };
        Ok(PySharePartition { inner })
    }

    /// start_offset is the SPSO: every offset below it is acknowledged or archived.
    #[getter]
    fn start_offset(&self) -> i64 {
        self.inner.start_offset()
    }

    /// end_offset is the SPEO: the last offset acquired so far.
    #[getter]
    fn end_offset(&self) -> i64 {
        self.inner.end_offset()
    }

    #[getter]
    fn state_epoch(&self) -> i32 {
        self.inner.state_epoch()
    }

    #[getter]
    fn in_flight_records(&self) -> i64 {
        self.inner.in_flight_records()
    }

    #[getter]
    fn delivery_complete_count(&self) -> i32 {
        self.inner.delivery_complete_count()
    }

    /// next_deadline is the earliest acquisition-lock deadline (ms), or None.
    #[getter]
    fn next_deadline(&self) -> Option<i64> {
        self.inner.next_deadline()
    }

    /// record_lock_duration_ms is the lock duration of new locks; settable, as the group's
    /// `share.record.lock.duration.ms` may change (running locks keep their deadline).
    #[getter]
    fn record_lock_duration_ms(&self) -> i64 {
        self.inner.config().record_lock_duration_ms
    }

    #[setter]
    fn set_record_lock_duration_ms(&mut self, value: i64) {
        self.inner.set_record_lock_duration_ms(value)
    }

    /// next_fetch_offset is where the next log read starts.
    fn next_fetch_offset(&mut self) -> i64 {
        self.inner.next_fetch_offset()
    }

    /// can_acquire_records says whether a fetch may acquire now.
    fn can_acquire_records(&mut self) -> bool {
        self.inner.can_acquire_records()
    }

    /// acquire takes records for `member` from the log batches a read at `fetch_offset`
    /// returned (`batches`: `(base, last)` pairs, or `batch_bounds`' triples, ascending), at
    /// most `max_records` (soft unless `record_limit`), split into ranges of about
    /// `batch_size`; locked until `now_ms` plus the lock duration. Returns the ranges
    /// `(first, last, delivery_count)` and how many records they count. Writes nothing.
    #[pyo3(signature = (member, batch_size, max_records, fetch_offset, batches, now_ms, record_limit = false))]
    #[allow(clippy::too_many_arguments)]
    fn acquire<'py>(
        &mut self,
        py: Python<'py>,
        member: &str,
        batch_size: i32,
        max_records: i32,
        fetch_offset: i64,
        batches: &Bound<'py, PyAny>,
        now_ms: i64,
        record_limit: bool,
    ) -> PyResult<(Bound<'py, PyList>, i32)> {
        let mut fetched = Vec::new();
        for item in batches.try_iter()? {
            let item = item?;
            let t = item.cast::<PyTuple>()?;
            fetched.push(FetchedBatch {
                base_offset: t.get_item(0)?.extract()?,
                last_offset: t.get_item(1)?.extract()?,
            });
        }
        let mode = if record_limit {
            AcquireMode::RecordLimit
        } else {
            AcquireMode::BatchOptimized
        };
        let got = self.inner.acquire(
            member,
            mode,
            batch_size,
            max_records,
            fetch_offset,
            &fetched,
            now_ms,
        );
        let list = PyList::empty(py);
        for r in &got.records {
            list.append((r.first_offset, r.last_offset, r.delivery_count))?;
        }
        Ok((list, got.count))
    }

    /// acknowledge applies `member`'s acknowledgement batches (`(first, last, types)`),
    /// all or nothing; raises InvalidRequest or InvalidRecordState (the partition's
    /// AcknowledgeErrorCode). The update to persist, or None.
    fn acknowledge(
        &mut self,
        py: Python<'_>,
        member: &str,
        batches: Vec<(i64, i64, Vec<i8>)>,
        now_ms: i64,
    ) -> PyResult<Option<PyShareUpdate>> {
        let batches = ack_batches(batches);
        Ok(update(
            self.inner
                .acknowledge(member, &batches, now_ms)
                .py_err(py)?,
        ))
    }

    /// release_member releases every record `member` holds (session close, disconnect).
    fn release_member(&mut self, member: &str) -> Option<PyShareUpdate> {
        update(self.inner.release_member(member))
    }

    /// expire releases the records whose lock ended at or before `now_ms`.
    fn expire(&mut self, now_ms: i64) -> Option<PyShareUpdate> {
        update(self.inner.expire(now_ms))
    }

    /// update_log_start_offset follows the log start offset past the start offset.
    fn update_log_start_offset(&mut self, log_start_offset: i64) {
        self.inner.update_log_start_offset(log_start_offset)
    }

    /// record is one offset's state `(state id, delivery_count, member, lock_deadline_ms)`,
    /// or None when the window does not hold it.
    fn record(&self, offset: i64) -> Option<(i8, i16, Option<String>, Option<i64>)> {
        self.inner.record(offset).map(|r| {
            (
                r.state.id(),
                r.delivery_count,
                r.member.map(str::to_owned),
                r.lock_deadline_ms,
            )
        })
    }

    /// state_batches is the window's durable view, `(first, last, state id, count)` each.
    fn state_batches(&self) -> Vec<StateTuple> {
        state_tuples(&self.inner.state_batches())
    }

    /// snapshot is the whole state a share coordinator would hold for this window now.
    fn snapshot(&self) -> PyPersistedState {
        PyPersistedState {
            inner: self.inner.snapshot(),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "SharePartition(start_offset={}, end_offset={})",
            self.inner.start_offset(),
            self.inner.end_offset()
        )
    }
}
