//! Bindings of the producer's accumulator (`kgroup._native.client.Accumulator`): the hot path
//! of `Producer.produce()`, one call per record, no Python-level work in it.
//!
//! `Accumulator` is a frozen class around a mutex, so the application's thread appends while
//! the sender's thread drains. Compression and Arrow appends run with the GIL released.

use std::borrow::Cow;
use std::sync::{Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::client::accumulator::{
    Accumulator, AccumulatorConfig, AppendError, DrainedBatch, PartitionerKind, Record, Report,
};
use crate::errors::{Error, ErrorCode};
use crate::partitioners::keys::KeyColumn;
use crate::protocol::records::Compression;
use crate::py::errors::{detached, to_pyerr, IntoPyResult};
use crate::py::partitioners::arrow::{self, Keys};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAccumulator>()?;
    m.add_class::<PyProducerBatch>()?;
    m.add_class::<PyDeliveredMessage>()?;
    m.add(
        "PARTITIONER_NAMES",
        crate::client::accumulator::PARTITIONER_NAMES.to_vec(),
    )?;
    Ok(())
}

/// Token is what a record with a delivery callback keeps for its report.
struct Token {
    callback: Py<PyAny>,
    key: Option<Py<PyAny>>,
    value: Option<Py<PyAny>>,
    headers: Option<Py<PyAny>>,
}

type Core = Accumulator<Token>;

/// Clock is `time.monotonic()` in ms, read without Python: the monotonic clock Rust's
/// `Instant` also reads, anchored once to Python's value.
struct Clock {
    start: Instant,
    start_ms: f64,
}

impl Clock {
    fn now_ms(&self) -> f64 {
        self.start_ms + self.start.elapsed().as_secs_f64() * 1000.0
    }
}

fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Accumulator: see `kgroup._native.client.Accumulator` in the stubs.
#[pyclass(name = "Accumulator", module = "kgroup._native.client", frozen)]
pub struct PyAccumulator {
    inner: Mutex<Core>,
    clock: Clock,
}

impl PyAccumulator {
    fn lock(&self) -> MutexGuard<'_, Core> {
        // A panic cannot leave the accumulator half-updated in a way worse than losing it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// bytes_of reads a key or value: bytes as they are, str as UTF-8, None as null.
#[inline]
fn bytes_of<'a>(o: Option<&'a Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Cow<'a, [u8]>>> {
    let Some(o) = o else { return Ok(None) };
    if let Ok(b) = o.cast::<PyBytes>() {
        return Ok(Some(Cow::Borrowed(b.as_bytes())));
    }
    if let Ok(s) = o.cast::<PyString>() {
        return Ok(Some(Cow::Borrowed(s.to_str()?.as_bytes())));
    }
    if o.is_none() {
        return Ok(None);
    }
    if let Ok(b) = o.extract::<Vec<u8>>() {
        return Ok(Some(Cow::Owned(b)));
    }
    Err(to_pyerr(
        o.py(),
        Error::InvalidType(format!(
            "{what} must be bytes, str or None, got {}",
            o.get_type().name()?
        )),
    ))
}

/// OwnedHeaders are a record's headers read from Python.
type OwnedHeaders = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// headers_of reads a list of (str, bytes | str | None) pairs or a dict.
fn headers_of(h: &Bound<'_, PyAny>) -> PyResult<OwnedHeaders> {
    let py = h.py();
    let bad = |m: &str| to_pyerr(py, Error::InvalidType(m.into()));
    let items: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = if let Ok(d) = h.cast::<PyDict>() {
        d.iter().collect()
    } else {
        let mut v = Vec::new();
        for item in h.try_iter()? {
            let item = item?;
            let t = item
                .cast::<PyTuple>()
                .map_err(|_| bad("headers must be (key, value) pairs or a dict"))?;
            if t.len() != 2 {
                return Err(bad("headers must be (key, value) pairs"));
            }
            v.push((t.get_item(0)?, t.get_item(1)?));
        }
        v
    };
    let mut out = Vec::with_capacity(items.len());
    for (k, v) in items {
        let key = bytes_of(Some(&k), "header key")?
            .map(Cow::into_owned)
            .unwrap_or_default();
        let value = bytes_of(Some(&v), "header value")?.map(Cow::into_owned);
        out.push((key, value));
    }
    Ok(out)
}

fn append_error(py: Python<'_>, e: AppendError) -> PyErr {
    match e {
        AppendError::BufferFull => PyBufferError::new_err("Local: Queue full"),
        AppendError::TooLarge(size) => to_pyerr(
            py,
            Error::kafka(
                ErrorCode::MessageTooLarge,
                format!(
                    "the record is {size} bytes as a batch, over max.request.size or buffer.memory"
                ),
            ),
        ),
        AppendError::Failed(e) => to_pyerr(py, e),
    }
}

static ERROR_FOR_CODE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn kafka_error(py: Python<'_>, code: i16) -> PyResult<Py<PyAny>> {
    if code == 0 {
        return Ok(py.None());
    }
    let f = ERROR_FOR_CODE.import(py, "kgroup.errors", "error_for_code")?;
    Ok(f.call1((code,))?.call0()?.unbind())
}

#[pymethods]
impl PyAccumulator {
    #[new]
    #[pyo3(signature = (*, batch_size=16384, linger_ms=5.0, compression="none", compression_level=-1,
                        partitioner="murmur2_builtin", buffer_memory=33554432, max_request_size=1048576, seed=None),
           text_signature = "(*, batch_size=16384, linger_ms=5.0, compression='none', compression_level=-1, partitioner='murmur2_builtin', buffer_memory=33554432, max_request_size=1048576, seed=None)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        batch_size: usize,
        linger_ms: f64,
        compression: &str,
        compression_level: i32,
        partitioner: &str,
        buffer_memory: usize,
        max_request_size: usize,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let cfg = AccumulatorConfig {
            batch_size,
            linger_ms,
            compression: Compression::from_name(compression).py_err(py)?,
            compression_level: (compression_level != -1).then_some(compression_level),
            partitioner: PartitionerKind::from_name(partitioner).py_err(py)?,
            buffer_memory,
            max_request_size,
            seed,
        };
        let start_s: f64 = py.import("time")?.call_method0("monotonic")?.extract()?;
        Ok(PyAccumulator {
            inner: Mutex::new(Accumulator::new(cfg).py_err(py)?),
            clock: Clock {
                start: Instant::now(),
                start_ms: start_s * 1000.0,
            },
        })
    }

    /// now_ms is the accumulator's clock: `time.monotonic() * 1000`.
    fn now_ms(&self) -> f64 {
        self.clock.now_ms()
    }

    fn set_partitions(&self, py: Python<'_>, topic: &str, count: i64) -> PyResult<()> {
        let now = self.clock.now_ms();
        self.lock().set_partitions(topic, count, now).py_err(py)?;
        Ok(())
    }

    fn partitions(&self, topic: &str) -> Option<i32> {
        self.lock().partitions(topic)
    }

    /// appended is the number of records placed in each partition of `topic` so far.
    fn appended(&self, topic: &str) -> Option<Vec<u64>> {
        self.lock().appended(topic)
    }

    #[pyo3(signature = (topic, value=None, key=None, partition=-1, timestamp=0, headers=None, on_delivery=None),
           text_signature = "(self, /, topic, value=None, key=None, partition=-1, timestamp=0, headers=None, on_delivery=None)")]
    #[allow(clippy::too_many_arguments)]
    fn append(
        &self,
        py: Python<'_>,
        topic: &str,
        value: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
        partition: i32,
        timestamp: i64,
        headers: Option<&Bound<'_, PyAny>>,
        on_delivery: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u8> {
        let v = bytes_of(value, "value")?;
        let k = bytes_of(key, "key")?;
        let owned_headers = match headers {
            Some(h) if !h.is_none() => headers_of(h)?,
            _ => Vec::new(),
        };
        let hs: Vec<(&[u8], Option<&[u8]>)> = owned_headers
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_deref()))
            .collect();
        let timestamp = if timestamp == 0 { wall_ms() } else { timestamp };
        let r = Record {
            key: k.as_deref(),
            value: v.as_deref(),
            headers: &hs,
            partition: if partition < 0 { -1 } else { partition },
            timestamp,
        };
        let token = match on_delivery {
            Some(cb) if !cb.is_none() => Some(Token {
                callback: cb.clone().unbind(),
                key: key.filter(|k| !k.is_none()).map(|k| k.clone().unbind()),
                value: value.filter(|v| !v.is_none()).map(|v| v.clone().unbind()),
                headers: headers.filter(|h| !h.is_none()).map(|h| h.clone().unbind()),
            }),
            _ => None,
        };
        let now = self.clock.now_ms();
        let r = self.lock().append(topic, &r, token, now);
        r.map(|a| a as u8).map_err(|e| append_error(py, e))
    }

    #[pyo3(signature = (topic, data, *, key=Some("key"), value="value", partition=None, headers=None, timestamp=None),
           text_signature = "(self, /, topic, data, *, key='key', value='value', partition=None, headers=None, timestamp=None)")]
    #[allow(clippy::too_many_arguments)]
    fn append_arrow(
        &self,
        py: Python<'_>,
        topic: &str,
        data: &Bound<'_, PyAny>,
        key: Option<&str>,
        value: &str,
        partition: Option<&str>,
        headers: Option<&str>,
        timestamp: Option<&str>,
    ) -> PyResult<usize> {
        let names = ArrowNames {
            key,
            value,
            partition,
            headers,
            timestamp,
        };
        let mut rows = 0usize;
        let mut chunk = |schema: &arrow::FfiSchema, array: &arrow::FfiArray| -> PyResult<()> {
            let job = ArrowJob {
                schema,
                array,
                names: &names,
                topic,
                acc: self,
            };
            rows += detached(py, move || job.run())?;
            Ok(())
        };
        if data.hasattr("__arrow_c_stream__")? {
            arrow::for_each_chunk(py, data, chunk)?;
        } else if data.hasattr("__arrow_c_array__")? {
            arrow::with_array(data, |s, a| chunk(s, a))?;
        } else {
            return Err(to_pyerr(
                py,
                Error::InvalidType(format!(
                    "data must have __arrow_c_stream__ or __arrow_c_array__, got {}",
                    data.get_type().name()?
                )),
            ));
        }
        Ok(rows)
    }

    fn ready(&self, now_ms: f64) -> (Vec<(String, i32)>, f64) {
        let (list, next) = self.lock().ready(now_ms);
        (
            list.into_iter().map(|(t, p)| (t.to_string(), p)).collect(),
            next,
        )
    }

    #[pyo3(signature = (partitions=None, max_bytes=None))]
    fn drain(
        &self,
        py: Python<'_>,
        partitions: Option<Vec<(String, i32)>>,
        max_bytes: Option<usize>,
    ) -> PyResult<Vec<PyProducerBatch>> {
        let now = self.clock.now_ms();
        let mut batches = {
            let mut g = self.lock();
            let max = max_bytes.unwrap_or(g.config().max_request_size);
            g.drain(partitions.as_deref(), max, now)
        };
        let encoded = detached(py, move || {
            for b in &mut batches {
                b.encode()?;
            }
            Ok(batches)
        });
        let batches = encoded?;
        batches
            .into_iter()
            .map(|mut b| {
                let records = PyBytes::new(py, &b.encoded).unbind();
                b.encoded = Vec::new();
                Ok(PyProducerBatch {
                    topic: b.topic().to_string(),
                    partition: b.partition(),
                    record_count: b.record_count(),
                    base_sequence: b.base_sequence,
                    size: records.bind(py).as_bytes().len(),
                    created_ms: b.created_ms(),
                    attempts: b.attempts(),
                    records,
                    inner: Mutex::new(Some(b)),
                })
            })
            .collect()
    }

    fn begin_flush(&self) {
        self.lock().begin_flush();
    }

    fn set_producer_id(&self, producer_id: i64, epoch: i16) {
        self.lock().set_producer_id(producer_id, epoch);
    }

    /// set_transactional: batches drained from now on carry the transactional attribute.
    fn set_transactional(&self, transactional: bool) {
        self.lock().set_transactional(transactional);
    }

    #[pyo3(signature = (batch, error_code, base_offset=-1, log_append_time=-1),
           text_signature = "(self, /, batch, error_code, base_offset=-1, log_append_time=-1)")]
    fn complete(
        &self,
        batch: &PyProducerBatch,
        error_code: i16,
        base_offset: i64,
        log_append_time: i64,
    ) -> PyResult<()> {
        let b = batch.take()?;
        let now = self.clock.now_ms();
        self.lock()
            .complete(b, error_code, base_offset, log_append_time, now);
        Ok(())
    }

    fn reenqueue(&self, py: Python<'_>, batch: &PyProducerBatch) -> PyResult<()> {
        let mut b = batch.take()?;
        b.encoded = batch.records.bind(py).as_bytes().to_vec();
        self.lock().reenqueue(b).py_err(py)
    }

    fn fail_all(&self, error_code: i16) {
        let now = self.clock.now_ms();
        self.lock().fail_all(error_code, now);
    }

    fn fail_topic(&self, topic: &str, error_code: i16) {
        let now = self.clock.now_ms();
        self.lock().fail_topic(topic, error_code, now);
    }

    #[pyo3(signature = (max=-1), text_signature = "(self, /, max=-1)")]
    fn pop_reports<'py>(&self, py: Python<'py>, max: i64) -> PyResult<Bound<'py, PyList>> {
        let reports = self.lock().pop_reports((max >= 0).then_some(max as usize));
        let out = PyList::empty(py);
        for r in reports {
            let Report {
                token,
                topic,
                partition,
                offset,
                timestamp,
                log_append_time,
                error_code,
                latency_ms,
            } = r;
            let err = kafka_error(py, error_code)?;
            let msg = PyDeliveredMessage {
                topic: topic.to_string(),
                partition,
                offset,
                timestamp,
                timestamp_type: if log_append_time { 2 } else { 1 },
                key: token.key,
                value: token.value,
                headers: token.headers,
                error: err.clone_ref(py),
                latency_s: latency_ms / 1000.0,
            };
            out.append((token.callback, err, msg))?;
        }
        Ok(out)
    }

    fn __len__(&self) -> usize {
        self.lock().len()
    }

    #[getter]
    fn buffered_bytes(&self) -> usize {
        self.lock().buffered_bytes()
    }

    /// unreported counts completed records that had no callback.
    #[getter]
    fn unreported(&self) -> u64 {
        self.lock().unreported
    }

    /// unreported_failed counts the records of `unreported` that failed.
    #[getter]
    fn unreported_failed(&self) -> u64 {
        self.lock().unreported_failed
    }

    /// unreported_error is the error code of the last of them (0: none failed).
    #[getter]
    fn unreported_error(&self) -> i16 {
        self.lock().unreported_error
    }
}

struct ArrowNames<'a> {
    key: Option<&'a str>,
    value: &'a str,
    partition: Option<&'a str>,
    headers: Option<&'a str>,
    timestamp: Option<&'a str>,
}

/// ArrowJob is one record batch to append with the GIL released.
struct ArrowJob<'a> {
    schema: &'a arrow::FfiSchema,
    array: &'a arrow::FfiArray,
    names: &'a ArrowNames<'a>,
    topic: &'a str,
    acc: &'a PyAccumulator,
}

// SAFETY: the Arrow structs are only read, and their producer keeps them alive and unchanged
// for the call; the accumulator is behind its mutex.
unsafe impl Send for ArrowJob<'_> {}

enum Bin<'a> {
    Col(KeyColumn<'a>),
    Dict(KeyColumn<'a>, arrow::Indices<'a>),
    Null,
}

impl<'a> Bin<'a> {
    fn get(&self, i: usize) -> Result<Option<&'a [u8]>, Error> {
        match self {
            Bin::Col(c) => c.get(i),
            Bin::Dict(values, idx) => match idx.get(i) {
                Some(j) if j >= 0 => values.get(j as usize),
                Some(j) => Err(Error::malformed(format!(
                    "dictionary index {j} is negative"
                ))),
                None => Ok(None),
            },
            Bin::Null => Ok(None),
        }
    }
}

impl ArrowJob<'_> {
    fn run(self) -> Result<usize, Error> {
        // SAFETY: see the Send impl.
        let view = unsafe { arrow::struct_view(self.schema, self.array)? };
        let find = |name: &str| {
            view.columns
                .iter()
                .find(|(n, _, _)| n == name)
                .map(|(_, s, a)| (*s, *a))
                .ok_or_else(|| {
                    let have: Vec<&str> = view.columns.iter().map(|(n, _, _)| n.as_str()).collect();
                    Error::InvalidArgument(format!(
                        "no column {name:?} in the data (columns: {have:?})"
                    ))
                })
        };
        let bin = |name: &str| -> Result<Bin<'_>, Error> {
            let (s, a) = find(name)?;
            // SAFETY: children of a valid struct array.
            let keys = unsafe { arrow::keys_from_c(s, a) }.map_err(|e| match e {
                Error::InvalidType(m) => Error::InvalidType(format!(
                    "column {name:?} must be binary or string: {}",
                    m.trim_start_matches("keys must be binary or string, got ")
                )),
                e => e,
            })?;
            Ok(match keys {
                Keys::Column(c) => Bin::Col(c),
                Keys::Dictionary { values, indices } => Bin::Dict(values, indices),
                Keys::AllNull(_) => Bin::Null,
            })
        };
        let ints = |name: &str| -> Result<arrow::Indices<'_>, Error> {
            let (s, a) = find(name)?;
            // SAFETY: as above.
            unsafe {
                arrow::int_column(s, a)?.ok_or_else(|| {
                    let f = arrow::format_of(s).unwrap_or("?");
                    Error::InvalidType(format!(
                        "column {name:?} must be an integer or timestamp[ms] column, got {}",
                        arrow::describe(f)
                    ))
                })
            }
        };
        let values = bin(self.names.value)?;
        let keys = self.names.key.map(bin).transpose()?;
        let parts = self.names.partition.map(ints).transpose()?;
        let stamps = self.names.timestamp.map(ints).transpose()?;
        let headers = self
            .names
            .headers
            .map(|name| {
                let (s, a) = find(name)?;
                // SAFETY: as above.
                unsafe { arrow::headers_from_c(s, a) }.map_err(|e| match e {
                    Error::InvalidType(m) => Error::InvalidType(format!("column {name:?}: {m}")),
                    e => e,
                })
            })
            .transpose()?;
        let mut row_headers = Vec::new();
        if let Some(h) = headers.as_ref().filter(|h| h.may_refuse()) {
            // A null key or header fails the whole batch before any of its rows is appended.
            for i in 0..view.len {
                h.get_into(view.offset + i, &mut row_headers)?;
            }
        }
        let now_wall = wall_ms();
        let now = self.acc.clock.now_ms();
        let mut g = self.acc.lock();
        for i in 0..view.len {
            let j = view.offset + i;
            if let Some(h) = &headers {
                h.get_into(j, &mut row_headers)?;
            }
            let r = Record {
                key: match &keys {
                    Some(k) => k.get(j)?,
                    None => None,
                },
                value: values.get(j)?,
                headers: &row_headers,
                partition: parts
                    .as_ref()
                    .and_then(|p| p.get(j))
                    .map_or(-1, |p| p.clamp(-1, i32::MAX as i64) as i32),
                timestamp: stamps
                    .as_ref()
                    .and_then(|t| t.get(j))
                    .filter(|&t| t != 0)
                    .unwrap_or(now_wall),
            };
            match g.append(self.topic, &r, None, now) {
                Ok(_) => {}
                Err(AppendError::BufferFull) => {
                    return Err(Error::InvalidArgument(format!(
                        "buffer.memory is full after {i} rows of this batch"
                    )))
                }
                Err(AppendError::TooLarge(n)) => {
                    return Err(Error::kafka(
                        ErrorCode::MessageTooLarge,
                        format!(
                        "row {i} is {n} bytes as a batch, over max.request.size or buffer.memory"
                    ),
                    ))
                }
                Err(AppendError::Failed(e)) => return Err(e),
            }
        }
        Ok(view.len)
    }
}

/// ProducerBatch: one drained batch, encoded, for a ProduceRequest; give it back to
/// `complete` or `reenqueue` exactly once.
#[pyclass(name = "ProducerBatch", module = "kgroup._native.client", frozen)]
pub struct PyProducerBatch {
    #[pyo3(get)]
    topic: String,
    #[pyo3(get)]
    partition: i32,
    #[pyo3(get)]
    record_count: i32,
    #[pyo3(get)]
    base_sequence: i32,
    #[pyo3(get)]
    size: usize,
    #[pyo3(get)]
    created_ms: f64,
    #[pyo3(get)]
    attempts: u32,
    records: Py<PyBytes>,
    inner: Mutex<Option<DrainedBatch<Token>>>,
}

impl PyProducerBatch {
    fn take(&self) -> PyResult<DrainedBatch<Token>> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                PyRuntimeError::new_err("this batch was already completed or reenqueued")
            })
    }
}

#[pymethods]
impl PyProducerBatch {
    /// records is the encoded RecordBatch v2.
    fn records(&self, py: Python<'_>) -> Py<PyBytes> {
        self.records.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "ProducerBatch(topic={:?}, partition={}, record_count={}, base_sequence={}, size={}, attempts={})",
            self.topic, self.partition, self.record_count, self.base_sequence, self.size, self.attempts
        )
    }
}

/// DeliveredMessage: a delivery report's message, with confluent-kafka's `Message` accessors.
#[pyclass(name = "DeliveredMessage", module = "kgroup._native.client", frozen)]
pub struct PyDeliveredMessage {
    topic: String,
    partition: i32,
    offset: i64,
    timestamp: i64,
    timestamp_type: i32,
    key: Option<Py<PyAny>>,
    value: Option<Py<PyAny>>,
    headers: Option<Py<PyAny>>,
    error: Py<PyAny>,
    latency_s: f64,
}

/// as_bytes gives back what was produced as confluent does: bytes (str encoded as UTF-8).
fn as_bytes(py: Python<'_>, o: &Option<Py<PyAny>>) -> PyResult<Option<Py<PyAny>>> {
    let Some(o) = o else { return Ok(None) };
    let b = o.bind(py);
    if let Ok(s) = b.cast::<PyString>() {
        return Ok(Some(
            PyBytes::new(py, s.to_str()?.as_bytes()).into_any().unbind(),
        ));
    }
    Ok(Some(o.clone_ref(py)))
}

#[pymethods]
impl PyDeliveredMessage {
    fn topic(&self) -> &str {
        &self.topic
    }
    fn partition(&self) -> i32 {
        self.partition
    }
    fn offset(&self) -> i64 {
        self.offset
    }
    /// timestamp is confluent's (type, ms): 1 CreateTime, 2 LogAppendTime.
    fn timestamp(&self) -> (i32, i64) {
        (self.timestamp_type, self.timestamp)
    }
    fn key(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        as_bytes(py, &self.key)
    }
    fn value(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        as_bytes(py, &self.value)
    }
    /// headers is a list of (str, bytes | None), as confluent gives them; None without headers.
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(h) = &self.headers else {
            return Ok(None);
        };
        let h = h.bind(py);
        let out = PyList::empty(py);
        let items: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = if let Ok(d) = h.cast::<PyDict>() {
            d.iter().collect()
        } else {
            h.try_iter()?
                .map(|i| i.and_then(|i| i.extract()))
                .collect::<PyResult<_>>()?
        };
        for (k, v) in items {
            out.append((k, as_bytes(py, &(!v.is_none()).then(|| v.unbind()))?))?;
        }
        Ok(Some(out))
    }
    fn error(&self, py: Python<'_>) -> Py<PyAny> {
        self.error.clone_ref(py)
    }
    /// latency is seconds from produce() to the delivery.
    fn latency(&self) -> f64 {
        self.latency_s
    }
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.value(py)?.map_or(Ok(0), |v| v.bind(py).len())
    }
    fn __repr__(&self) -> String {
        format!(
            "DeliveredMessage(topic={:?}, partition={}, offset={})",
            self.topic, self.partition, self.offset
        )
    }
}
