//! Bindings for the consumer's per-record work: `Message` (confluent-kafka's `Message` API) and
//! `FetchQueue`, the buffer between the network thread, which pushes each partition's fetched
//! `records`, and the application's thread, which polls messages or Arrow batches.
//!
//! A consumed `Message` holds its batch's bytes (shared) and its record's span: key, value,
//! topic and headers become Python objects when first asked for, so `pop()` makes one object.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PySet, PyString, PyTuple};

use crate::client::arrow;
use crate::client::fetch::{decode_fetch, BatchData, FetchQueue, Waited};
use crate::errors::Error;
use crate::protocol::records::{RecordSpan, TimestampType};
use crate::py::errors::{to_pyerr, IntoPyResult};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMessage>()?;
    m.add_class::<PyFetchQueue>()?;
    m.add("TIMESTAMP_NOT_AVAILABLE", TIMESTAMP_NOT_AVAILABLE)?;
    m.add("TIMESTAMP_CREATE_TIME", TIMESTAMP_CREATE_TIME)?;
    m.add("TIMESTAMP_LOG_APPEND_TIME", TIMESTAMP_LOG_APPEND_TIME)?;
    Ok(())
}

/// confluent-kafka's timestamp types (librdkafka's `rd_kafka_timestamp_type_t`).
const TIMESTAMP_NOT_AVAILABLE: i32 = 0;
const TIMESTAMP_CREATE_TIME: i32 = 1;
const TIMESTAMP_LOG_APPEND_TIME: i32 = 2;

/// Slot is a field of a message: read from its record when first asked for, or a Python value
/// (given, set, or cached after the first read).
enum Slot {
    Record,
    Value(Option<Py<PyAny>>),
}

/// Message is one message of confluent-kafka's API: a consumed record, or one the client makes
/// itself (an error, a partition EOF, a delivery report). Not thread-safe to mutate from two
/// threads at once (PyO3's borrow check raises), like any Python object of the same use.
#[pyclass(name = "Message", module = "kgroup._native.client")]
pub struct PyMessage {
    /// record is the consumed record's batch and span.
    record: Option<(Arc<BatchData>, RecordSpan)>,
    topic_name: Option<Arc<str>>,
    topic: Slot,
    key: Slot,
    value: Slot,
    headers: Slot,
    partition: Option<i32>,
    offset: Option<i64>,
    error: Option<Py<PyAny>>,
    timestamp: (i32, i64),
    leader_epoch: Option<i32>,
    latency: Option<f64>,
}

impl PyMessage {
    /// consumed is the message of a fetched record.
    fn consumed(topic: Arc<str>, partition: i32, batch: Arc<BatchData>, span: RecordSpan) -> Self {
        let timestamp = match batch.timestamp_type {
            TimestampType::NoTimestampType => (TIMESTAMP_NOT_AVAILABLE, -1),
            TimestampType::CreateTime => (TIMESTAMP_CREATE_TIME, span.timestamp),
            TimestampType::LogAppendTime => (TIMESTAMP_LOG_APPEND_TIME, span.timestamp),
        };
        let epoch = batch.partition_leader_epoch;
        PyMessage {
            record: Some((batch, span)),
            topic_name: Some(topic),
            topic: Slot::Record,
            key: Slot::Record,
            value: Slot::Record,
            headers: Slot::Record,
            partition: Some(partition),
            offset: Some(span.offset),
            error: None,
            timestamp,
            leader_epoch: (epoch >= 0).then_some(epoch),
            latency: None,
        }
    }

    /// field reads slot `which` (0 key, 1 value) from the record, caching the bytes.
    fn bytes_field(&mut self, py: Python<'_>, which: u8) -> Option<Py<PyAny>> {
        let slot = if which == 0 {
            &mut self.key
        } else {
            &mut self.value
        };
        if let Slot::Value(v) = slot {
            return v.as_ref().map(|v| v.clone_ref(py));
        }
        let v = self.record.as_ref().and_then(|(b, s)| {
            let r = b.record(s);
            let bytes = if which == 0 { r.key } else { r.value };
            bytes.map(|x| PyBytes::new(py, x).into_any().unbind())
        });
        *slot = Slot::Value(v.as_ref().map(|v| v.clone_ref(py)));
        v
    }
}

fn timeout_of(timeout: Option<f64>) -> Option<Duration> {
    match timeout {
        None => None,
        Some(t) if t.is_nan() => Some(Duration::ZERO),
        Some(t) if t < 0.0 => None,
        Some(t) => Duration::try_from_secs_f64(t).ok(),
    }
}

#[pymethods]
impl PyMessage {
    #[new]
    #[pyo3(signature = (topic=None, partition=None, offset=None, key=None, value=None, *, error=None, timestamp=(0, -1), headers=None, leader_epoch=None, latency=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        topic: Option<Py<PyAny>>,
        partition: Option<i32>,
        offset: Option<i64>,
        key: Option<Py<PyAny>>,
        value: Option<Py<PyAny>>,
        error: Option<Py<PyAny>>,
        timestamp: (i32, i64),
        headers: Option<Py<PyAny>>,
        leader_epoch: Option<i32>,
        latency: Option<f64>,
    ) -> Self {
        PyMessage {
            record: None,
            topic_name: None,
            topic: Slot::Value(topic),
            key: Slot::Value(key),
            value: Slot::Value(value),
            headers: Slot::Value(headers),
            partition,
            offset,
            error,
            timestamp,
            leader_epoch,
            latency,
        }
    }

    /// error() is the message's `kgroup.errors.KafkaError`, or None for a record.
    fn error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.error.as_ref().map(|e| e.clone_ref(py))
    }

    fn topic(&mut self, py: Python<'_>) -> Option<Py<PyAny>> {
        if let Slot::Value(v) = &self.topic {
            return v.as_ref().map(|v| v.clone_ref(py));
        }
        let v = self
            .topic_name
            .as_ref()
            .map(|t| PyString::new(py, t).into_any().unbind());
        self.topic = Slot::Value(v.as_ref().map(|v| v.clone_ref(py)));
        v
    }

    fn partition(&self) -> Option<i32> {
        self.partition
    }

    fn offset(&self) -> Option<i64> {
        self.offset
    }

    fn key(&mut self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.bytes_field(py, 0)
    }

    fn value(&mut self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.bytes_field(py, 1)
    }

    /// timestamp() is (type, ms): type TIMESTAMP_NOT_AVAILABLE (0), TIMESTAMP_CREATE_TIME (1)
    /// or TIMESTAMP_LOG_APPEND_TIME (2); (0, -1) when the record has none.
    fn timestamp(&self) -> (i32, i64) {
        self.timestamp
    }

    /// headers() is the list of (key, value) headers, or None when there are none.
    fn headers(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        if let Slot::Value(v) = &self.headers {
            return Ok(v.as_ref().map(|v| v.clone_ref(py)));
        }
        let mut v = None;
        if let Some((b, s)) = &self.record {
            let r = b.record(s);
            if r.header_count() > 0 {
                let list = PyList::empty(py);
                for (k, val) in r.headers() {
                    let k = PyString::new(py, &String::from_utf8_lossy(k));
                    let val = val.map(|x| PyBytes::new(py, x));
                    list.append(PyTuple::new(py, [k.into_any(), val.into_pyobject(py)?])?)?;
                }
                v = Some(list.into_any().unbind());
            }
        }
        self.headers = Slot::Value(v.as_ref().map(|v| v.clone_ref(py)));
        Ok(v)
    }

    /// leader_epoch() is the batch's partition leader epoch, None when it has none.
    fn leader_epoch(&self) -> Option<i32> {
        self.leader_epoch
    }

    /// latency() is a delivery report's latency in seconds; None for consumed messages.
    fn latency(&self) -> Option<f64> {
        self.latency
    }

    fn set_headers(&mut self, headers: Option<Py<PyAny>>) {
        self.headers = Slot::Value(headers);
    }

    fn set_key(&mut self, key: Option<Py<PyAny>>) {
        self.key = Slot::Value(key);
    }

    fn set_value(&mut self, value: Option<Py<PyAny>>) {
        self.value = Slot::Value(value);
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        match &self.value {
            Slot::Record => Ok(self
                .record
                .as_ref()
                .and_then(|(b, s)| b.record(s).value.map(<[u8]>::len))
                .unwrap_or(0)),
            Slot::Value(None) => Ok(0),
            Slot::Value(Some(v)) => v.bind(py).len(),
        }
    }

    fn __repr__(&mut self, py: Python<'_>) -> PyResult<String> {
        let topic = self.topic(py);
        let key = self.key(py);
        let repr = |v: Option<Py<PyAny>>| -> PyResult<String> {
            match v {
                None => Ok("None".into()),
                Some(v) => Ok(v.bind(py).repr()?.to_string()),
            }
        };
        let opt = |v: Option<i64>| v.map_or("None".to_string(), |x| x.to_string());
        Ok(format!(
            "Message(topic={}, partition={}, offset={}, key={}, len={}, timestamp={:?}, error={})",
            repr(topic)?,
            opt(self.partition.map(i64::from)),
            opt(self.offset),
            repr(key)?,
            self.__len__(py)?,
            self.timestamp,
            repr(self.error(py))?,
        ))
    }
}

/// WAIT_SLICE is how long a waiting pop stays away from the interpreter: it checks for signals
/// (Ctrl-C) between slices.
const WAIT_SLICE: Duration = Duration::from_millis(100);

static IMPORT_RECORD_BATCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// FetchQueue buffers fetched records between the consumer's network thread (`push`) and the
/// application's thread (`pop`, `pop_many`, `pop_arrow`). Thread-safe; records come out in the
/// order they were pushed, so each partition's in offset order. Decoding and the Arrow columns
/// are built with the GIL released; waits release it too.
#[pyclass(name = "FetchQueue", module = "kgroup._native.client", frozen)]
pub struct PyFetchQueue {
    inner: FetchQueue,
}

impl PyFetchQueue {
    /// wait waits for records up to `timeout` (see `pop`); true when some are buffered.
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let timeout = timeout_of(timeout);
        if timeout == Some(Duration::ZERO) {
            return Ok(self.inner.wait(timeout) == Waited::Ready);
        }
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        loop {
            let step = match deadline {
                None => WAIT_SLICE,
                Some(d) => d.saturating_duration_since(Instant::now()).min(WAIT_SLICE),
            };
            match py.detach(|| self.inner.wait(Some(step))) {
                Waited::Ready => return Ok(true),
                Waited::Woken => return Ok(false),
                Waited::TimedOut => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Ok(false);
                    }
                    py.check_signals()?;
                }
            }
        }
    }
}

/// BufArg holds a Python buffer's bytes for the call: borrowed from `bytes`, or copied from any
/// other buffer (which another thread could change while the GIL is released).
enum BufArg<'a> {
    Bytes(&'a [u8]),
    Owned(Vec<u8>),
}

fn buf_arg<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<BufArg<'a>> {
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(BufArg::Bytes(b.as_bytes()));
    }
    let py = data.py();
    let buf = PyBuffer::<u8>::get(data).map_err(|_| {
        to_pyerr(
            py,
            Error::InvalidType(
                "records must be bytes or a buffer of bytes (bytearray, memoryview)".into(),
            ),
        )
    })?;
    Ok(BufArg::Owned(buf.to_vec(py)?))
}

#[pymethods]
impl PyFetchQueue {
    #[new]
    fn new() -> Self {
        PyFetchQueue {
            inner: FetchQueue::new(),
        }
    }

    /// push decodes one partition's Fetch `records` and appends its records from
    /// `fetch_offset` on; returns (next_fetch_offset, records_added).
    #[pyo3(signature = (topic, partition, records, fetch_offset, *, read_committed=false, aborted=None))]
    #[allow(clippy::too_many_arguments)]
    fn push(
        &self,
        py: Python<'_>,
        topic: &str,
        partition: i32,
        records: &Bound<'_, PyAny>,
        fetch_offset: i64,
        read_committed: bool,
        aborted: Option<Vec<(i64, i64)>>,
    ) -> PyResult<(i64, usize)> {
        let buf = buf_arg(records)?;
        let data: &[u8] = match &buf {
            BufArg::Bytes(b) => b,
            BufArg::Owned(v) => v,
        };
        let topic: Arc<str> = Arc::from(topic);
        let aborted = aborted.unwrap_or_default();
        py.detach(|| {
            let chunk = decode_fetch(data, fetch_offset, read_committed, &aborted)?;
            let next = chunk.next_fetch_offset;
            Ok((next, self.inner.push(topic, partition, chunk)))
        })
        .py_err(py)
    }

    /// pop takes the next message, waiting up to `timeout` seconds (None or negative: no limit)
    /// for a push or a wake; None if there is none.
    #[pyo3(signature = (timeout=0.0))]
    fn pop(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<Py<PyMessage>>> {
        let p = match self.inner.pop() {
            Some(p) => p,
            None => {
                if !self.wait(py, timeout)? {
                    return Ok(None);
                }
                match self.inner.pop() {
                    Some(p) => p,
                    None => return Ok(None),
                }
            }
        };
        Py::new(
            py,
            PyMessage::consumed(p.topic, p.partition, p.batch, p.span),
        )
        .map(Some)
    }

    /// pop_many takes up to `max_messages` messages, waiting up to `timeout` only while there
    /// are none.
    #[pyo3(signature = (max_messages, timeout=0.0))]
    fn pop_many<'py>(
        &self,
        py: Python<'py>,
        max_messages: usize,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if max_messages == 0 || (self.inner.is_empty() && !self.wait(py, timeout)?) {
            return Ok(out);
        }
        for run in self.inner.pop_runs(max_messages, usize::MAX) {
            for r in &run.records {
                let m = PyMessage::consumed(
                    run.topic.clone(),
                    run.partition,
                    run.batches[r.batch as usize].clone(),
                    r.span,
                );
                out.append(Py::new(py, m)?)?;
            }
        }
        Ok(out)
    }

    /// pop_arrow takes up to `max_records` records as one `pyarrow.RecordBatch` of Spark's
    /// Kafka source schema, built without a Python object per record; an empty batch (same
    /// schema) when none came within `timeout`.
    #[pyo3(signature = (max_records, timeout=0.0))]
    fn pop_arrow<'py>(
        &self,
        py: Python<'py>,
        max_records: usize,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // Before taking records: without pyarrow they would be lost.
        let import = IMPORT_RECORD_BATCH.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(py
                .import("pyarrow")?
                .getattr("RecordBatch")?
                .getattr("_import_from_c")?
                .unbind())
        })?;
        let ready = max_records > 0 && (!self.inner.is_empty() || self.wait(py, timeout)?);
        let mut exported = py.detach(|| {
            let runs = if ready {
                // The binary columns have int32 offsets.
                self.inner.pop_runs(max_records, i32::MAX as usize)
            } else {
                Vec::new()
            };
            arrow::export(&runs)
        });
        let array = &mut *exported.array as *mut arrow::ArrowArray as usize;
        let schema = &mut *exported.schema as *mut arrow::ArrowSchema as usize;
        // pyarrow moves both structs out (their release becomes None); dropping `exported`
        // releases whatever it did not take.
        let batch = import.bind(py).call1((array, schema));
        drop(exported);
        batch
    }

    /// wake makes a waiting pop return now (or the next pop that would wait).
    fn wake(&self) {
        self.inner.wake();
    }

    /// purge drops the buffered records of one partition; returns how many.
    fn purge(&self, topic: &str, partition: i32) -> usize {
        self.inner.purge(topic, partition)
    }

    fn clear(&self) {
        self.inner.clear();
    }

    /// positions: per partition popped from, the offset of its last popped record + 1.
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (t, p, o) in self.inner.positions() {
            d.set_item((&*t, p), o)?;
        }
        Ok(d)
    }

    fn forget(&self, topic: &str, partition: i32) {
        self.inner.forget(topic, partition);
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// buffered_bytes: key, value and header bytes of the buffered records.
    #[getter]
    fn buffered_bytes(&self) -> usize {
        self.inner.buffered_bytes()
    }

    fn buffered_partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PySet>> {
        let s = PySet::empty(py)?;
        for (t, p) in self.inner.buffered_partitions() {
            s.add((&*t, p))?;
        }
        Ok(s)
    }
}
