//! Bindings for record batches (`kgroup.protocol.records` wraps these).
//!
//! Decoding runs in two steps: the batches are read into Rust values with the GIL released
//! (for inputs of 16 KiB and more: CRCs, decompression and parsing), then turned into Python
//! objects with it held.

use std::sync::Arc;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};

use crate::errors::Error;
use crate::protocol::primitives::Writer;
use crate::protocol::records::{
    self as rec, BatchFields, BatchHeader, Compression, ControlRecordKey, DecodeOptions,
    DecodedBatch, EndTransactionMarker, Record, RecordBatch, RecordRef, RecordSpan, TimestampType,
};
use crate::py::errors::{to_pyerr, IntoPyResult};
use crate::py::partitioners::keys::key_bytes;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRecord>()?;
    m.add_class::<PyRecordBatch>()?;
    m.add_class::<PyBatchHeader>()?;
    m.add_function(wrap_pyfunction!(encode_batch, m)?)?;
    m.add_function(wrap_pyfunction!(decode_batches, m)?)?;
    m.add_function(wrap_pyfunction!(read_batch_headers, m)?)?;
    m.add_function(wrap_pyfunction!(set_base_offset, m)?)?;
    m.add_function(wrap_pyfunction!(set_last_offset, m)?)?;
    m.add_function(wrap_pyfunction!(set_partition_leader_epoch, m)?)?;
    m.add_function(wrap_pyfunction!(set_max_timestamp, m)?)?;
    m.add_function(wrap_pyfunction!(encode_end_transaction_marker, m)?)?;
    m.add_function(wrap_pyfunction!(parse_control_record, m)?)?;
    m.add(
        "DEFAULT_MAX_DECOMPRESSED_SIZE",
        rec::DEFAULT_MAX_DECOMPRESSED_SIZE,
    )?;
    m.add("COMPRESSION_TYPES", rec::COMPRESSION_NAMES.to_vec())?;
    Ok(())
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

fn ts_name(t: TimestampType) -> &'static str {
    match t {
        TimestampType::NoTimestampType => "NO_TIMESTAMP_TYPE",
        TimestampType::CreateTime => "CREATE_TIME",
        TimestampType::LogAppendTime => "LOG_APPEND_TIME",
    }
}

/// DETACH_AT is the input size from which decoding releases the GIL.
const DETACH_AT: usize = 16 * 1024;

static TIMESTAMP_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// timestamp_type_obj is the `kgroup.protocol.records.TimestampType` member for `t`.
fn timestamp_type_obj(py: Python<'_>, t: TimestampType) -> PyResult<Py<PyAny>> {
    let cls = TIMESTAMP_TYPE.import(py, "kgroup.protocol.records", "TimestampType")?;
    Ok(cls.call1((t.id(),))?.unbind())
}

fn invalid(py: Python<'_>, m: String) -> PyErr {
    to_pyerr(py, Error::InvalidArgument(m))
}

/// Record(offset=0, timestamp=-1, key=None, value=None, headers=()): one record. `headers` is a
/// sequence of (key, value) pairs: str keys, bytes-or-None values.
///
/// A decoded record holds no Python objects: it points into its batch's bytes (shared by the
/// batch's records) and makes `key`, `value` and `headers` when they are read.
#[pyclass(
    name = "Record",
    module = "kgroup.protocol.records",
    frozen,
    freelist = 4096
)]
pub struct PyRecord {
    data: Arc<Vec<u8>>,
    span: RecordSpan,
}

/// header_bytes reads one (key, value) header given from Python.
fn header_bytes(py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<(Vec<u8>, Option<Vec<u8>>)> {
    let pair = item
        .cast::<PyTuple>()
        .ok()
        .filter(|t| t.len() == 2)
        .ok_or_else(|| {
            to_pyerr(
                py,
                Error::InvalidType("each header must be a (key, value) tuple".into()),
            )
        })?;
    let k = pair.get_item(0)?;
    let key = if let Ok(s) = k.cast::<PyString>() {
        s.to_str()?.as_bytes().to_vec()
    } else if let Ok(b) = k.cast::<PyBytes>() {
        std::str::from_utf8(b.as_bytes())
            .map_err(|_| invalid(py, "header key bytes are not UTF-8".into()))?
            .as_bytes()
            .to_vec()
    } else {
        return Err(to_pyerr(
            py,
            Error::InvalidType("header keys must be str".into()),
        ));
    };
    let value = bytes_arg(&pair.get_item(1)?, "header value")?;
    Ok((key, value))
}

/// bytes_arg reads bytes, bytearray, str (UTF-8) or None.
fn bytes_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<Vec<u8>>> {
    let py = v.py();
    match key_bytes(v) {
        Ok(b) => Ok(b.map(|b| b.into_owned())),
        Err(e) if e.is_instance_of::<PyTypeError>(py) => Err(to_pyerr(
            py,
            Error::InvalidType(format!(
                "{what} must be bytes, bytearray, str or None, got {}",
                v.get_type().name()?
            )),
        )),
        Err(e) => Err(e),
    }
}

fn opt_pybytes<'py>(py: Python<'py>, b: Option<&[u8]>) -> Bound<'py, PyAny> {
    match b {
        Some(b) => PyBytes::new(py, b).into_any(),
        None => py.None().into_bound(py),
    }
}

fn len_arg(py: Python<'_>, n: usize) -> PyResult<i32> {
    i32::try_from(n).map_err(|_| invalid(py, format!("{n} bytes is over the 2^31-1 limit")))
}

/// put_arg appends bytes, bytearray or str (UTF-8) to `data` and returns where they are; None
/// (or no argument) is null.
fn put_arg(
    data: &mut Vec<u8>,
    v: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<(usize, usize)>> {
    let Some(v) = v else { return Ok(None) };
    let at = data.len();
    if let Ok(b) = v.cast::<PyBytes>() {
        data.extend_from_slice(b.as_bytes());
    } else {
        match bytes_arg(v, what)? {
            Some(b) => data.extend_from_slice(&b),
            None => return Ok(None),
        }
    }
    len_arg(v.py(), data.len() - at)?;
    Ok(Some((at, data.len() - at)))
}

/// lay_out appends a record's key, value and headers (in their wire form) to `data` and returns
/// its span there.
fn lay_out(
    py: Python<'_>,
    data: &mut Vec<u8>,
    offset: i64,
    timestamp: i64,
    key: Option<&Bound<'_, PyAny>>,
    value: Option<&Bound<'_, PyAny>>,
    headers: Option<&Bound<'_, PyAny>>,
) -> PyResult<RecordSpan> {
    let key = put_arg(data, key, "key")?;
    let value = put_arg(data, value, "value")?;
    let headers_at = data.len();
    let mut header_count = 0;
    if let Some(h) = headers.filter(|h| !h.is_none()) {
        let items = h.try_iter().map_err(|_| {
            to_pyerr(
                py,
                Error::InvalidType("headers must be a sequence of (key, value)".into()),
            )
        })?;
        let mut w = Writer {
            buf: std::mem::take(data),
        };
        let put = || -> PyResult<()> {
            for item in items {
                let (k, v) = header_bytes(py, &item?)?;
                w.varint(len_arg(py, k.len())?);
                w.raw(&k);
                match v {
                    Some(v) => {
                        w.varint(len_arg(py, v.len())?);
                        w.raw(&v);
                    }
                    None => w.varint(-1),
                }
                header_count += 1;
            }
            Ok(())
        };
        let r = put();
        *data = w.into_inner();
        r?;
    }
    Ok(RecordSpan {
        offset,
        timestamp,
        key,
        value,
        headers: (headers_at, data.len() - headers_at),
        header_count,
    })
}

impl PyRecord {
    fn get(&self) -> RecordRef<'_> {
        self.span.get(&self.data)
    }

    fn same(&self, o: &PyRecord) -> bool {
        let (a, b) = (self.get(), o.get());
        a.offset == b.offset
            && a.timestamp == b.timestamp
            && a.key == b.key
            && a.value == b.value
            && a.headers().eq(b.headers())
    }
}

#[pymethods]
impl PyRecord {
    #[new]
    #[pyo3(
        signature = (offset=0, timestamp=-1, key=None, value=None, headers=None),
        text_signature = "(offset=0, timestamp=-1, key=None, value=None, headers=None)"
    )]
    fn new(
        py: Python<'_>,
        offset: i64,
        timestamp: i64,
        key: Option<&Bound<'_, PyAny>>,
        value: Option<&Bound<'_, PyAny>>,
        headers: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut data = Vec::new();
        let span = lay_out(py, &mut data, offset, timestamp, key, value, headers)?;
        Ok(PyRecord {
            data: Arc::new(data),
            span,
        })
    }

    #[getter]
    fn offset(&self) -> i64 {
        self.span.offset
    }

    #[getter]
    fn timestamp(&self) -> i64 {
        self.span.timestamp
    }

    /// key is the key's bytes, or None.
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        opt_pybytes(py, self.get().key)
    }

    /// value is the value's bytes, or None.
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        opt_pybytes(py, self.get().value)
    }

    /// headers is a tuple of (str, bytes | None); invalid UTF-8 in a key is replaced, as Java
    /// reads it.
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let r = self.get();
        if r.header_count() == 0 {
            return Ok(PyTuple::empty(py));
        }
        let pairs = r
            .headers()
            .map(|(k, v)| {
                let k = PyString::new(py, &String::from_utf8_lossy(k)).into_any();
                PyTuple::new(py, [k, opt_pybytes(py, v)])
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, pairs)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyRecord>().is_ok_and(|o| self.same(o.get()))
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let r = self.get();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (r.offset, r.timestamp, r.key, r.value).hash(&mut h);
        r.headers().for_each(|kv| kv.hash(&mut h));
        // Python reserves -1 for errors; keep the hash non-negative as an isize.
        h.finish() >> 1
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let r = self.get();
        Ok(format!(
            "Record(offset={}, timestamp={}, key={}, value={}, headers={})",
            r.offset,
            r.timestamp,
            opt_pybytes(py, r.key).repr()?,
            opt_pybytes(py, r.value).repr()?,
            self.headers(py)?.repr()?
        ))
    }
}

/// RecordBatch: a decoded batch, its header fields (the core's `BatchFields`) and its records (a
/// tuple of Record).
#[pyclass(name = "RecordBatch", module = "kgroup.protocol.records", frozen)]
pub struct PyRecordBatch {
    fields: BatchFields,
    #[pyo3(get)]
    records: Py<PyTuple>,
}

impl PyRecordBatch {
    /// from_decoded wraps a decoded batch; its records share one copy of the batch's bytes.
    fn from_decoded(py: Python<'_>, d: DecodedBatch<'_>) -> PyResult<Self> {
        let data = Arc::new(d.data.into_owned());
        let records = d
            .spans
            .iter()
            .map(|&span| {
                Bound::new(
                    py,
                    PyRecord {
                        data: Arc::clone(&data),
                        span,
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyRecordBatch {
            fields: d.batch.fields,
            records: PyTuple::new(py, records)?.unbind(),
        })
    }
}

#[pymethods]
impl PyRecordBatch {
    #[getter]
    fn base_offset(&self) -> i64 {
        self.fields.base_offset
    }

    #[getter]
    fn partition_leader_epoch(&self) -> i32 {
        self.fields.partition_leader_epoch
    }

    #[getter]
    fn magic(&self) -> i8 {
        self.fields.magic
    }

    /// compression is the codec's `compression.type` name.
    #[getter]
    fn compression(&self) -> &'static str {
        self.fields.compression.name()
    }

    #[getter]
    fn timestamp_type(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        timestamp_type_obj(py, self.fields.timestamp_type)
    }

    #[getter]
    fn is_transactional(&self) -> bool {
        self.fields.is_transactional
    }

    #[getter]
    fn is_control_batch(&self) -> bool {
        self.fields.is_control
    }

    #[getter]
    fn has_delete_horizon(&self) -> bool {
        self.fields.has_delete_horizon
    }

    #[getter]
    fn last_offset_delta(&self) -> i32 {
        self.fields.last_offset_delta
    }

    #[getter]
    fn base_timestamp(&self) -> i64 {
        self.fields.base_timestamp
    }

    #[getter]
    fn max_timestamp(&self) -> i64 {
        self.fields.max_timestamp
    }

    #[getter]
    fn producer_id(&self) -> i64 {
        self.fields.producer_id
    }

    #[getter]
    fn producer_epoch(&self) -> i16 {
        self.fields.producer_epoch
    }

    #[getter]
    fn base_sequence(&self) -> i32 {
        self.fields.base_sequence
    }

    #[getter]
    fn last_offset(&self) -> i64 {
        self.fields.last_offset()
    }

    #[getter]
    fn next_offset(&self) -> i64 {
        self.fields.next_offset()
    }

    #[getter]
    fn last_sequence(&self) -> i32 {
        self.fields.last_sequence()
    }

    /// encode(compression_level=None) -> bytes: this batch written back with its fields as they
    /// are (the records' offsets and timestamps become deltas from the base ones).
    #[pyo3(signature = (compression_level=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        compression_level: Option<i32>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let records = self
            .records
            .bind(py)
            .iter()
            .map(|r| r.cast_into::<PyRecord>().map_err(PyErr::from))
            .collect::<PyResult<Vec<_>>>()?;
        let refs: Vec<RecordRef<'_>> = records.iter().map(|r| r.get().get()).collect();
        let header = RecordBatch {
            fields: self.fields,
            records: Vec::new(),
        };
        let out = encode_refs(py, &header, &refs, compression_level)?;
        Ok(PyBytes::new(py, &out))
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.records.bind(py).len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.records
            .bind(py)
            .as_any()
            .try_iter()
            .map(Bound::into_any)
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(o) = other.cast::<PyRecordBatch>() else {
            return Ok(false);
        };
        let o = o.get();
        Ok(self.fields == o.fields && self.records.bind(py).eq(o.records.bind(py))?)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let f = &self.fields;
        format!(
            "RecordBatch(magic={}, offsets=[{}, {}], records={}, compression={}, timestamp_type={}, \
             transactional={}, control={}, producer_id={}, producer_epoch={}, base_sequence={})",
            f.magic,
            f.base_offset,
            f.last_offset(),
            self.records.bind(py).len(),
            f.compression.name(),
            ts_name(f.timestamp_type),
            py_bool(f.is_transactional),
            py_bool(f.is_control),
            f.producer_id,
            f.producer_epoch,
            f.base_sequence
        )
    }
}

/// BatchHeader: the header of a v2 batch, read without its records; `position` is where the
/// batch starts in the buffer it was read from.
#[pyclass(name = "BatchHeader", module = "kgroup.protocol.records", frozen, eq)]
#[derive(PartialEq)]
pub struct PyBatchHeader {
    inner: BatchHeader,
    #[pyo3(get)]
    position: usize,
}

/// BufView borrows bytes without a copy, or holds a copy of any other buffer (which another
/// thread could otherwise change while the GIL is released).
enum BufView<'a> {
    Bytes(&'a [u8]),
    Owned(Vec<u8>),
}

impl BufView<'_> {
    fn slice(&self) -> &[u8] {
        match self {
            BufView::Bytes(b) => b,
            BufView::Owned(v) => v,
        }
    }
}

fn read_buf<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<BufView<'a>> {
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(BufView::Bytes(b.as_bytes()));
    }
    let py = data.py();
    let buf = PyBuffer::<u8>::get(data).map_err(|_| {
        to_pyerr(
            py,
            Error::InvalidType(
                "data must be bytes or a buffer of bytes (bytearray, memoryview)".into(),
            ),
        )
    })?;
    Ok(BufView::Owned(buf.to_vec(py)?))
}

/// with_writable runs `f` on the writable, contiguous bytes of `buf` (a bytearray, a writable
/// memoryview...) from `position` on.
fn with_writable<T>(
    buf: &Bound<'_, PyAny>,
    position: usize,
    f: impl FnOnce(&mut [u8]) -> crate::errors::Result<T>,
) -> PyResult<T> {
    let py = buf.py();
    let b = PyBuffer::<u8>::get(buf).map_err(|_| {
        to_pyerr(
            py,
            Error::InvalidType("buf must be a writable buffer of bytes".into()),
        )
    })?;
    if b.readonly() || !b.is_c_contiguous() {
        return Err(to_pyerr(
            py,
            Error::InvalidType("buf must be writable and contiguous (a bytearray)".into()),
        ));
    }
    let len = b.item_count();
    if position > len {
        return Err(invalid(
            py,
            format!("position {position} is past the buffer's {len} bytes"),
        ));
    }
    // SAFETY: checked writable, contiguous and `len` bytes long; the buffer is held (and the GIL,
    // so no Python code runs) until `f` returns.
    let s = unsafe { std::slice::from_raw_parts_mut(b.buf_ptr() as *mut u8, len) };
    f(&mut s[position..]).py_err(py)
}

#[pymethods]
impl PyBatchHeader {
    /// parse(data, position=0, *, verify_crc=True): the v2 batch starting at `position`.
    #[staticmethod]
    #[pyo3(signature = (data, position=0, *, verify_crc=true))]
    fn parse(data: &Bound<'_, PyAny>, position: usize, verify_crc: bool) -> PyResult<Self> {
        let py = data.py();
        let view = read_buf(data)?;
        let s = view.slice();
        if position > s.len() {
            return Err(invalid(
                py,
                format!("position {position} is past the buffer's {} bytes", s.len()),
            ));
        }
        let inner = BatchHeader::parse_with(&s[position..], verify_crc).py_err(py)?;
        Ok(PyBatchHeader { inner, position })
    }

    #[getter]
    fn base_offset(&self) -> i64 {
        self.inner.base_offset
    }
    #[getter]
    fn length(&self) -> i32 {
        self.inner.length
    }
    /// size is the whole batch's size in bytes.
    #[getter]
    fn size(&self) -> usize {
        self.inner.size()
    }
    #[getter]
    fn partition_leader_epoch(&self) -> i32 {
        self.inner.partition_leader_epoch
    }
    #[getter]
    fn magic(&self) -> i8 {
        self.inner.magic
    }
    #[getter]
    fn crc(&self) -> u32 {
        self.inner.crc
    }
    #[getter]
    fn attributes(&self) -> i16 {
        self.inner.attributes
    }
    #[getter]
    fn last_offset_delta(&self) -> i32 {
        self.inner.last_offset_delta
    }
    #[getter]
    fn base_timestamp(&self) -> i64 {
        self.inner.base_timestamp
    }
    #[getter]
    fn max_timestamp(&self) -> i64 {
        self.inner.max_timestamp
    }
    #[getter]
    fn producer_id(&self) -> i64 {
        self.inner.producer_id
    }
    #[getter]
    fn producer_epoch(&self) -> i16 {
        self.inner.producer_epoch
    }
    #[getter]
    fn base_sequence(&self) -> i32 {
        self.inner.base_sequence
    }
    #[getter]
    fn records_count(&self) -> i32 {
        self.inner.records_count
    }
    #[getter]
    fn compression(&self) -> &'static str {
        // parse checked the codec id.
        self.inner.compression().map_or("none", Compression::name)
    }
    #[getter]
    fn timestamp_type(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        timestamp_type_obj(py, self.inner.timestamp_type())
    }
    #[getter]
    fn is_transactional(&self) -> bool {
        self.inner.is_transactional()
    }
    #[getter]
    fn is_control_batch(&self) -> bool {
        self.inner.is_control()
    }
    #[getter]
    fn has_delete_horizon(&self) -> bool {
        self.inner.has_delete_horizon()
    }
    #[getter]
    fn last_offset(&self) -> i64 {
        self.inner.last_offset()
    }
    #[getter]
    fn next_offset(&self) -> i64 {
        self.inner.next_offset()
    }
    #[getter]
    fn last_sequence(&self) -> i32 {
        self.inner.last_sequence()
    }

    fn __repr__(&self) -> String {
        let h = &self.inner;
        format!(
            "BatchHeader(position={}, size={}, offsets=[{}, {}], records_count={}, compression={}, \
             timestamp_type={}, max_timestamp={}, producer_id={}, producer_epoch={}, base_sequence={}, \
             transactional={}, control={})",
            self.position,
            h.size(),
            h.base_offset,
            h.last_offset(),
            h.records_count,
            self.compression(),
            ts_name(h.timestamp_type()),
            h.max_timestamp,
            h.producer_id,
            h.producer_epoch,
            h.base_sequence,
            py_bool(h.is_transactional()),
            py_bool(h.is_control())
        )
    }
}

/// Held is one record given to encode_batch: a Record, or a tuple laid out in a scratch buffer.
enum Held<'py> {
    Record(Bound<'py, PyRecord>),
    Tuple(RecordSpan),
}

/// records_from_py reads Records and (offset, timestamp, key, value[, headers]) tuples; tuples
/// go into `scratch`.
fn records_from_py<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyAny>,
    scratch: &mut Vec<u8>,
) -> PyResult<Vec<Held<'py>>> {
    let type_err = |got: &Bound<'_, PyAny>| -> PyErr {
        let name = got
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        to_pyerr(
            py,
            Error::InvalidType(format!(
                "records must hold Record objects or (offset, timestamp, key, value[, headers]) tuples, got {name}"
            )),
        )
    };
    let it = records.try_iter().map_err(|_| {
        to_pyerr(
            py,
            Error::InvalidType("records must be an iterable of Record".into()),
        )
    })?;
    it.map(|item| {
        let item = item?;
        if let Ok(r) = item.cast::<PyRecord>() {
            return Ok(Held::Record(r.clone()));
        }
        let t = item.cast::<PyTuple>().map_err(|_| type_err(&item))?;
        if !(4..=5).contains(&t.len()) {
            return Err(type_err(&item));
        }
        let offset: i64 = t.get_item(0)?.extract()?;
        let timestamp: i64 = t.get_item(1)?.extract()?;
        let headers = if t.len() == 5 {
            Some(t.get_item(4)?)
        } else {
            None
        };
        let span = lay_out(
            py,
            scratch,
            offset,
            timestamp,
            Some(&t.get_item(2)?),
            Some(&t.get_item(3)?),
            headers.as_ref(),
        )?;
        Ok(Held::Tuple(span))
    })
    .collect()
}

fn refs<'a>(held: &'a [Held<'_>], scratch: &'a [u8]) -> Vec<RecordRef<'a>> {
    held.iter()
        .map(|h| match h {
            Held::Record(r) => r.get().get(),
            Held::Tuple(span) => span.get(scratch),
        })
        .collect()
}

/// encode_refs encodes `b`'s header fields with `records`, without the GIL.
fn encode_refs(
    py: Python<'_>,
    b: &RecordBatch,
    records: &[RecordRef<'_>],
    level: Option<i32>,
) -> PyResult<Vec<u8>> {
    py.detach(|| {
        let mut out = Vec::new();
        b.encode_with(records, &mut out, level).map(|()| out)
    })
    .py_err(py)
}

/// encode_batch(records, ...) -> bytes: builds a batch as Kafka's `MemoryRecordsBuilder` does
/// (see kgroup.protocol.records.encode_batch).
#[pyfunction]
#[pyo3(signature = (
    records, *, compression="none", compression_level=None, magic=2, base_offset=0,
    partition_leader_epoch=-1, timestamp_type=0, max_timestamp=None, transactional=false,
    control=false, producer_id=-1, producer_epoch=-1, base_sequence=-1, last_offset_delta=None,
    delete_horizon=None
), text_signature = "(records, *, compression='none', compression_level=None, magic=2, \
    base_offset=0, partition_leader_epoch=-1, timestamp_type=0, max_timestamp=None, \
    transactional=False, control=False, producer_id=-1, producer_epoch=-1, base_sequence=-1, \
    last_offset_delta=None, delete_horizon=None)")]
#[allow(clippy::too_many_arguments)]
fn encode_batch<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyAny>,
    compression: &str,
    compression_level: Option<i32>,
    magic: i8,
    base_offset: i64,
    partition_leader_epoch: i32,
    timestamp_type: i64,
    max_timestamp: Option<i64>,
    transactional: bool,
    control: bool,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    last_offset_delta: Option<i32>,
    delete_horizon: Option<i64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let compression = Compression::from_name(compression).py_err(py)?;
    let timestamp_type = TimestampType::from_id(timestamp_type).py_err(py)?;
    if magic == 2 && timestamp_type == TimestampType::NoTimestampType {
        return Err(invalid(
            py,
            "a magic 2 batch needs CREATE_TIME or LOG_APPEND_TIME".into(),
        ));
    }
    if timestamp_type == TimestampType::LogAppendTime && max_timestamp.is_none() {
        return Err(invalid(
            py,
            "LOG_APPEND_TIME needs max_timestamp (the append time)".into(),
        ));
    }
    if magic < 2 && (transactional || control || producer_id != -1 || delete_horizon.is_some()) {
        return Err(invalid(
            py,
            format!("magic {magic} has no producer, transaction or control fields"),
        ));
    }
    let mut b = RecordBatch {
        fields: BatchFields {
            base_offset,
            partition_leader_epoch,
            magic,
            compression,
            timestamp_type: if magic == 0 {
                TimestampType::NoTimestampType
            } else {
                timestamp_type
            },
            is_transactional: transactional,
            is_control: control,
            has_delete_horizon: delete_horizon.is_some(),
            base_timestamp: delete_horizon.unwrap_or(rec::NO_TIMESTAMP),
            max_timestamp: max_timestamp.unwrap_or(rec::NO_TIMESTAMP),
            producer_id,
            producer_epoch,
            base_sequence,
            ..BatchFields::default()
        },
        records: Vec::new(),
    };
    let mut scratch = Vec::new();
    let held = records_from_py(py, records, &mut scratch)?;
    let refs = refs(&held, &scratch);
    b.derive_from(&refs).py_err(py)?;
    if let Some(m) = max_timestamp {
        b.max_timestamp = m;
    }
    if let Some(d) = last_offset_delta {
        b.last_offset_delta = d;
    }
    let out = encode_refs(py, &b, &refs, compression_level)?;
    Ok(PyBytes::new(py, &out))
}

/// decode_batches(data, *, max_decompressed_size, verify_crc=True) -> list[RecordBatch].
#[pyfunction]
#[pyo3(signature = (data, *, max_decompressed_size=rec::DEFAULT_MAX_DECOMPRESSED_SIZE, verify_crc=true))]
fn decode_batches<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    max_decompressed_size: usize,
    verify_crc: bool,
) -> PyResult<Bound<'py, PyList>> {
    let view = read_buf(data)?;
    let s = view.slice();
    let opts = DecodeOptions {
        max_decompressed_size,
        verify_crc,
    };
    let batches = if s.len() >= DETACH_AT {
        py.detach(|| rec::decode_batch_views(s, &opts))
    } else {
        rec::decode_batch_views(s, &opts)
    }
    .py_err(py)?;
    let items = batches
        .into_iter()
        .map(|b| Bound::new(py, PyRecordBatch::from_decoded(py, b)?))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// read_batch_headers(data, *, verify_crc=True, verify_records=False, max_decompressed_size)
/// -> list[BatchHeader]: every complete v2 batch of `data`; a truncated last batch is left out.
/// With `verify_records` each batch's records are read and checked too (decompressed, with no
/// Python object made), as a broker checks a produced batch before appending it.
#[pyfunction]
#[pyo3(signature = (
    data, *, verify_crc=true, verify_records=false,
    max_decompressed_size=rec::DEFAULT_MAX_DECOMPRESSED_SIZE
))]
fn read_batch_headers<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    verify_crc: bool,
    verify_records: bool,
    max_decompressed_size: usize,
) -> PyResult<Bound<'py, PyList>> {
    let view = read_buf(data)?;
    let s = view.slice();
    let opts = DecodeOptions {
        max_decompressed_size,
        verify_crc,
    };
    let run = || rec::read_headers(s, &opts, verify_records);
    let headers = if s.len() >= DETACH_AT {
        py.detach(run)
    } else {
        run()
    }
    .py_err(py)?;
    let items = headers
        .into_iter()
        .map(|h| {
            Bound::new(
                py,
                PyBatchHeader {
                    inner: h.header,
                    position: h.position,
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// set_base_offset(buf, base_offset, position=0): rewrites a v2 batch's base offset in place.
#[pyfunction]
#[pyo3(signature = (buf, base_offset, position=0))]
fn set_base_offset(buf: &Bound<'_, PyAny>, base_offset: i64, position: usize) -> PyResult<()> {
    with_writable(buf, position, |s| rec::set_base_offset(s, base_offset))
}

/// set_last_offset(buf, last_offset, position=0): Kafka's `setLastOffset`, in place.
#[pyfunction]
#[pyo3(signature = (buf, last_offset, position=0))]
fn set_last_offset(buf: &Bound<'_, PyAny>, last_offset: i64, position: usize) -> PyResult<()> {
    with_writable(buf, position, |s| rec::set_last_offset(s, last_offset))
}

/// set_partition_leader_epoch(buf, epoch, position=0): in place.
#[pyfunction]
#[pyo3(signature = (buf, epoch, position=0))]
fn set_partition_leader_epoch(buf: &Bound<'_, PyAny>, epoch: i32, position: usize) -> PyResult<()> {
    with_writable(buf, position, |s| rec::set_partition_leader_epoch(s, epoch))
}

/// set_max_timestamp(buf, timestamp_type, max_timestamp, position=0): Kafka's `setMaxTimestamp`,
/// in place, recomputing the CRC.
#[pyfunction]
#[pyo3(signature = (buf, timestamp_type, max_timestamp, position=0))]
fn set_max_timestamp(
    buf: &Bound<'_, PyAny>,
    timestamp_type: i64,
    max_timestamp: i64,
    position: usize,
) -> PyResult<()> {
    let t = TimestampType::from_id(timestamp_type).py_err(buf.py())?;
    with_writable(buf, position, |s| {
        rec::set_max_timestamp(s, t, max_timestamp)
    })
}

/// encode_end_transaction_marker(commit, *, ...) -> bytes: a control batch with one commit or
/// abort marker, as a transaction coordinator writes it.
#[pyfunction]
#[pyo3(signature = (
    commit, *, producer_id, producer_epoch, coordinator_epoch, timestamp, base_offset=0,
    partition_leader_epoch=-1
), text_signature = "(commit, *, producer_id, producer_epoch, coordinator_epoch, timestamp, \
    base_offset=0, partition_leader_epoch=-1)")]
#[allow(clippy::too_many_arguments)]
fn encode_end_transaction_marker<'py>(
    py: Python<'py>,
    commit: bool,
    producer_id: i64,
    producer_epoch: i16,
    coordinator_epoch: i32,
    timestamp: i64,
    base_offset: i64,
    partition_leader_epoch: i32,
) -> PyResult<Bound<'py, PyBytes>> {
    let marker = EndTransactionMarker {
        commit,
        coordinator_epoch,
    };
    let b = marker.batch(
        base_offset,
        timestamp,
        partition_leader_epoch,
        producer_id,
        producer_epoch,
    );
    Ok(PyBytes::new(py, &b.encode(None).py_err(py)?))
}

/// parse_control_record(key, value=None) -> (version, type, coordinator_epoch | None): the
/// key of a control record, and for a commit or abort marker its coordinator epoch.
#[pyfunction]
#[pyo3(signature = (key, value=None))]
fn parse_control_record(
    py: Python<'_>,
    key: Option<&Bound<'_, PyAny>>,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<(i16, i16, Option<i32>)> {
    let as_bytes = |v: Option<&Bound<'_, PyAny>>, what: &str| -> PyResult<Option<Vec<u8>>> {
        match v {
            None => Ok(None),
            Some(v) => bytes_arg(v, what),
        }
    };
    let key = as_bytes(key, "key")?;
    let k = ControlRecordKey::parse(key.as_deref()).py_err(py)?;
    let epoch = match k.kind {
        rec::ControlRecordType::Commit | rec::ControlRecordType::Abort => {
            let r = Record {
                key,
                value: as_bytes(value, "value")?,
                ..Record::default()
            };
            Some(
                EndTransactionMarker::parse(&r)
                    .py_err(py)?
                    .coordinator_epoch,
            )
        }
        _ => None,
    };
    Ok((k.version, k.kind.id(), epoch))
}
