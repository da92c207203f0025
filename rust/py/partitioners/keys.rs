//! Bindings for key hashing and batch partitioning (`kgroup.partitioners` wraps these).

use std::borrow::Cow;

use pyo3::buffer::PyBuffer;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyTuple};

use super::arrow::{self, Keys};
use crate::errors::Error;
use crate::partitioners::hash::{check_partitions, crc32, fnv1a, murmur2, FastMod, KeyHash};
use crate::partitioners::keys::{
    java_utf8_from_utf16, partition_column, KeyColumn, NULL_PARTITION,
};
use crate::py::errors::{detached, to_pyerr, IntoPyResult};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_murmur2, m)?)?;
    m.add_function(wrap_pyfunction!(py_crc32, m)?)?;
    m.add_function(wrap_pyfunction!(py_fnv1a, m)?)?;
    m.add_function(wrap_pyfunction!(partition_for_key, m)?)?;
    m.add_function(wrap_pyfunction!(partition_seq_into, m)?)?;
    m.add_function(wrap_pyfunction!(partition_arrow_into, m)?)?;
    m.add_function(wrap_pyfunction!(partition_fixed_into, m)?)?;
    m.add_function(wrap_pyfunction!(partition_ucs4_into, m)?)?;
    #[cfg(feature = "bench")]
    m.add_function(wrap_pyfunction!(_bench_raw_murmur2, m)?)?;
    m.add("HASH_NAMES", crate::partitioners::hash::HASH_NAMES.to_vec())?;
    Ok(())
}

/// java_string_bytes is what Java's StringSerializer sends for a string: UTF-8, with unpaired
/// surrogates (which Python strings can hold) encoded as `?`.
fn java_string_bytes<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    match s.to_str() {
        Ok(text) => Ok(Cow::Borrowed(text.as_bytes())),
        Err(_) => {
            let utf16 = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
            let raw = utf16.cast::<PyBytes>()?.as_bytes();
            let units: Vec<u16> = raw
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            let mut out = Vec::with_capacity(units.len() * 3);
            java_utf8_from_utf16(&units, &mut out);
            Ok(Cow::Owned(out))
        }
    }
}

fn type_error(py: Python<'_>, what: String) -> PyErr {
    to_pyerr(py, Error::InvalidType(what))
}

/// key_bytes reads one key: bytes and bytearray as they are, str as UTF-8; None is a null key.
pub(crate) fn key_bytes<'a>(item: &'a Bound<'_, PyAny>) -> PyResult<Option<Cow<'a, [u8]>>> {
    if let Ok(b) = item.cast::<PyBytes>() {
        return Ok(Some(Cow::Borrowed(b.as_bytes())));
    }
    if let Ok(s) = item.cast::<PyString>() {
        return java_string_bytes(s).map(Some);
    }
    if item.is_none() {
        return Ok(None);
    }
    if let Ok(b) = item.cast::<PyByteArray>() {
        return Ok(Some(Cow::Owned(b.to_vec())));
    }
    Err(type_error(
        item.py(),
        format!(
            "expected bytes, bytearray, str or None, got {}",
            item.get_type().name()?
        ),
    ))
}

fn data_bytes<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    match key_bytes(data)? {
        Some(b) => Ok(b),
        None => Err(type_error(
            data.py(),
            "expected bytes, bytearray or str, got None".into(),
        )),
    }
}

/// murmur2(data) -> int: Kafka's murmur2 of the bytes, as Java's signed int.
#[pyfunction(name = "murmur2")]
fn py_murmur2(data: &Bound<'_, PyAny>) -> PyResult<i32> {
    Ok(murmur2(&data_bytes(data)?))
}

/// crc32(data) -> int: zlib's CRC-32, unsigned (librdkafka's `consistent` hash).
#[pyfunction(name = "crc32")]
fn py_crc32(data: &Bound<'_, PyAny>) -> PyResult<u32> {
    Ok(crc32(&data_bytes(data)?))
}

/// fnv1a(data) -> int: librdkafka's FNV-1a 32 (absolute value of the signed result).
#[pyfunction(name = "fnv1a")]
fn py_fnv1a(data: &Bound<'_, PyAny>) -> PyResult<u32> {
    Ok(fnv1a(&data_bytes(data)?))
}

fn parse(py: Python<'_>, num_partitions: i64, hash: &str) -> PyResult<(u32, KeyHash)> {
    let n = check_partitions(num_partitions).py_err(py)?;
    let h = KeyHash::from_name(hash).py_err(py)?;
    Ok((n, h))
}

/// partition_for_key(key, num_partitions, hash) -> int: -1 for a None key.
#[pyfunction]
fn partition_for_key(
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    num_partitions: i64,
    hash: &str,
) -> PyResult<i32> {
    let (n, h) = parse(py, num_partitions, hash)?;
    Ok(match key_bytes(key)? {
        Some(k) => h.partition(&k, n),
        None => NULL_PARTITION,
    })
}

/// OutBuf is a writable, C-contiguous int32 buffer (a numpy array) the caller allocated.
struct OutBuf {
    buf: PyBuffer<i32>,
}

impl OutBuf {
    fn new(py: Python<'_>, out: &Bound<'_, PyAny>, len: usize) -> PyResult<Self> {
        let buf = PyBuffer::<i32>::get(out)?;
        if buf.readonly() || !buf.is_c_contiguous() || buf.item_count() != len {
            return Err(to_pyerr(
                py,
                Error::InvalidArgument(format!(
                    "out must be a writable contiguous int32 array of {len} items"
                )),
            ));
        }
        Ok(OutBuf { buf })
    }

    fn slice(&mut self) -> &mut [i32] {
        let len = self.buf.item_count();
        if len == 0 {
            return &mut [];
        }
        // SAFETY: checked writable, contiguous and `len` items in `new`; the buffer is held.
        unsafe { std::slice::from_raw_parts_mut(self.buf.buf_ptr() as *mut i32, len) }
    }
}

/// fast_key reads a key straight through the C API for the two common exact types: bytes
/// and str (when its UTF-8 form is available). `None` means "take the general path".
///
/// SAFETY: `item` is a live object and the GIL is held; the returned slice borrows the
/// object's own buffer, valid while the object lives and is not mutated (bytes and str are
/// immutable).
#[inline(always)]
unsafe fn fast_key<'a>(item: *mut ffi::PyObject) -> Option<&'a [u8]> {
    let ty = ffi::Py_TYPE(item);
    if ty == std::ptr::addr_of_mut!(ffi::PyBytes_Type) {
        let p = ffi::PyBytes_AsString(item);
        let n = ffi::PyBytes_Size(item);
        return Some(std::slice::from_raw_parts(p as *const u8, n as usize));
    }
    if ty == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
        let mut n: ffi::Py_ssize_t = 0;
        let p = ffi::PyUnicode_AsUTF8AndSize(item, &mut n);
        if p.is_null() {
            // Lone surrogates: clear the error and let the general path encode as Java does.
            ffi::PyErr_Clear();
            return None;
        }
        return Some(std::slice::from_raw_parts(p as *const u8, n as usize));
    }
    None
}

/// fill_seq_fast partitions a list or tuple, reading items by borrowed reference.
fn fill_seq_fast(
    py: Python<'_>,
    seq: &Bound<'_, PyAny>,
    len: usize,
    get: unsafe extern "C" fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject,
    n: u32,
    h: KeyHash,
    out: &mut [i32],
) -> PyResult<()> {
    let fm = FastMod::new(n);
    let none = unsafe { ffi::Py_None() };
    for (i, slot) in out.iter_mut().enumerate().take(len) {
        // SAFETY: i < len of a list/tuple we hold; the item is borrowed from it and the GIL is
        // held for the whole loop, so nothing can remove it.
        let item = unsafe { get(seq.as_ptr(), i as ffi::Py_ssize_t) };
        if item.is_null() {
            return Err(PyErr::fetch(py));
        }
        if let Some(k) = unsafe { fast_key(item) } {
            *slot = h.partition_fast(k, fm);
            continue;
        }
        if item == none {
            *slot = NULL_PARTITION;
            continue;
        }
        // SAFETY: borrowed, live object (see above).
        let obj = unsafe { Bound::from_borrowed_ptr(py, item) };
        *slot = match key_bytes(&obj).map_err(|e| index_error(py, i, e))? {
            Some(k) => h.partition(&k, n),
            None => NULL_PARTITION,
        };
    }
    Ok(())
}

fn index_error(py: Python<'_>, i: usize, e: PyErr) -> PyErr {
    if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
        type_error(py, format!("key at index {i}: {}", e.value(py)))
    } else {
        e
    }
}

/// partition_seq_into(keys, num_partitions, hash, out): keys is a list or tuple. Holds the GIL
/// (it reads Python objects); the hashing itself is a few ns per key.
#[pyfunction]
fn partition_seq_into(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    num_partitions: i64,
    hash: &str,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let (n, h) = parse(py, num_partitions, hash)?;
    if let Ok(list) = keys.cast::<PyList>() {
        let len = list.len();
        let mut o = OutBuf::new(py, out, len)?;
        fill_seq_fast(py, keys, len, ffi::PyList_GetItem, n, h, o.slice())
    } else if let Ok(t) = keys.cast::<PyTuple>() {
        let len = t.len();
        let mut o = OutBuf::new(py, out, len)?;
        fill_seq_fast(py, keys, len, ffi::PyTuple_GetItem, n, h, o.slice())
    } else {
        Err(type_error(
            py,
            format!("expected a list or tuple, got {}", keys.get_type().name()?),
        ))
    }
}

fn fill_keys(keys: &Keys<'_>, h: KeyHash, n: u32, out: &mut [i32]) -> Result<(), Error> {
    match keys {
        Keys::Column(c) => partition_column(c, h, n, out),
        Keys::AllNull(len) => {
            if *len != out.len() {
                return Err(Error::InvalidArgument("output length mismatch".into()));
            }
            out.fill(NULL_PARTITION);
            Ok(())
        }
        Keys::Dictionary { values, indices } => {
            if indices.len() != out.len() {
                return Err(Error::InvalidArgument("output length mismatch".into()));
            }
            // Hash each distinct key once, then gather.
            let mut parts = vec![0i32; values.len()];
            partition_column(values, h, n, &mut parts)?;
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = match indices.get(i) {
                    None => NULL_PARTITION,
                    Some(ix) => *usize::try_from(ix)
                        .ok()
                        .and_then(|ix| parts.get(ix))
                        .ok_or_else(|| {
                            Error::malformed(format!("dictionary index {ix} out of range"))
                        })?,
                };
            }
            Ok(())
        }
    }
}

/// partition_arrow_into(keys, num_partitions, hash, out): keys exposes `__arrow_c_array__` or
/// `__arrow_c_stream__` (pyarrow Array / ChunkedArray, polars Series, ...). Buffers are read in
/// place and the GIL is released while hashing.
#[pyfunction]
fn partition_arrow_into(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    num_partitions: i64,
    hash: &str,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let (n, h) = parse(py, num_partitions, hash)?;
    let total = keys.len()?;
    let mut o = OutBuf::new(py, out, total)?;
    let out = o.slice();
    let mut pos = 0usize;
    let mut run_one = |schema: &arrow::FfiSchema, array: &arrow::FfiArray| -> PyResult<()> {
        // SAFETY: schema and array come straight from a live capsule or an owned stream chunk.
        let keys = unsafe { arrow::keys_from_c(schema, array) }.py_err(py)?;
        let len = match &keys {
            Keys::Column(c) => c.len(),
            Keys::Dictionary { indices, .. } => indices.len(),
            Keys::AllNull(l) => *l,
        };
        let dest = out.get_mut(pos..pos + len).ok_or_else(|| {
            to_pyerr(
                py,
                Error::malformed(format!(
                    "Arrow data holds more than the {total} keys len() reported"
                )),
            )
        })?;
        detached(py, || fill_keys(&keys, h, n, dest))?;
        pos += len;
        Ok(())
    };
    if keys.hasattr("__arrow_c_array__")? {
        arrow::with_array(keys, |s, a| run_one(s, a))?;
    } else if keys.hasattr("__arrow_c_stream__")? {
        arrow::for_each_chunk(py, keys, |s, a| run_one(s, a))?;
    } else {
        return Err(type_error(py, "expected an Arrow array or stream".into()));
    }
    if pos != total {
        return Err(to_pyerr(
            py,
            Error::malformed(format!("Arrow data held {pos} keys, len() said {total}")),
        ));
    }
    Ok(())
}

/// fixed_width_into partitions numpy fixed-width keys: `data` is the array viewed as `T`
/// (uint8 for `S`, uint32 for `U`), `width` elements per key; `column` wraps the slice.
fn fixed_width_into<T: pyo3::buffer::Element + Sync>(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    width: usize,
    num_partitions: i64,
    hash: &str,
    out: &Bound<'_, PyAny>,
    column: for<'a> fn(&'a [T], usize) -> KeyColumn<'a>,
) -> PyResult<()> {
    let (n, h) = parse(py, num_partitions, hash)?;
    let buf = PyBuffer::<T>::get(data)?;
    if !buf.is_c_contiguous() || width == 0 || buf.item_count() % width != 0 {
        return Err(to_pyerr(
            py,
            Error::InvalidArgument("data must be contiguous rows of `width` elements".into()),
        ));
    }
    let count = buf.item_count() / width;
    let mut o = OutBuf::new(py, out, count)?;
    let out = o.slice();
    let items: &[T] = if count == 0 {
        &[]
    } else {
        // SAFETY: a contiguous buffer of item_count elements of T, held for the call.
        unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const T, buf.item_count()) }
    };
    let col = column(items, width);
    detached(py, || partition_column(&col, h, n, out))
}

/// partition_fixed_into(data, width, num_partitions, hash, out): numpy `S<width>` keys viewed as
/// uint8; trailing NUL bytes are stripped as numpy does.
#[pyfunction]
fn partition_fixed_into(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    width: usize,
    num_partitions: i64,
    hash: &str,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    fixed_width_into::<u8>(py, data, width, num_partitions, hash, out, |data, width| {
        KeyColumn::FixedBytes { data, width }
    })
}

/// partition_ucs4_into(data, width, num_partitions, hash, out): numpy `U<width>` keys viewed as
/// uint32 code points; encoded to UTF-8 as Java's StringSerializer would.
#[pyfunction]
fn partition_ucs4_into(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    width: usize,
    num_partitions: i64,
    hash: &str,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    fixed_width_into::<u32>(py, data, width, num_partitions, hash, out, |data, width| {
        KeyColumn::FixedUcs4 { data, width }
    })
}

/// _bench_raw_murmur2(offsets, data, num_partitions, out): the benchmarks' one-core baseline,
/// `keys::raw_murmur2_loop` over int32 offsets and bytes (both buffers), GIL released. Private;
/// only in a build with the `bench` feature (`make bench`).
#[cfg(feature = "bench")]
#[pyfunction]
fn _bench_raw_murmur2(
    py: Python<'_>,
    offsets: &Bound<'_, PyAny>,
    data: &Bound<'_, PyAny>,
    num_partitions: i32,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let offs = PyBuffer::<i32>::get(offsets)?.to_vec(py)?;
    let bytes = PyBuffer::<u8>::get(data)?;
    if offs.is_empty() || num_partitions < 1 || !bytes.is_c_contiguous() {
        return Err(to_pyerr(
            py,
            Error::InvalidArgument("bad benchmark input".into()),
        ));
    }
    let mut o = OutBuf::new(py, out, offs.len() - 1)?;
    let out = o.slice();
    // SAFETY: contiguous buffer held for the call.
    let d = unsafe { std::slice::from_raw_parts(bytes.buf_ptr() as *const u8, bytes.item_count()) };
    if offs.windows(2).any(|w| w[0] < 0 || w[1] < w[0])
        || *offs.last().unwrap_or(&0) as usize > d.len()
    {
        return Err(to_pyerr(
            py,
            Error::InvalidArgument("bad benchmark offsets".into()),
        ));
    }
    py.detach(|| crate::partitioners::keys::raw_murmur2_loop(&offs, d, num_partitions, out));
    Ok(())
}
