//! Direct: the encoder for bodies given as plain Python values (dicts and lists).
//!
//! It walks the definition and the Python values together and writes bytes as it goes, with no
//! value tree in between: for a large body (a Metadata response of thousands of partitions)
//! building that tree would cost more than the encoding itself. It writes the common shapes
//! itself (dicts, lists, exact ints, strs, bytes, bools) and hands everything else, one field
//! at a time, to the codec through a value tree of that field only: missing fields (their
//! defaults), tagged fields, fields the version lacks, nulls, UUIDs, other types, and any value
//! the codec's limits would refuse. So the codec alone decides what is an error, and tests
//! check that both encoders write the same bytes.
//!
//! Large byte strings (record sets) are not copied into the output buffer: [`Rope`] keeps a
//! reference and copies them once, into the final `bytes`.

use pyo3::exceptions::PyIndexError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString};

use super::convert::{
    at, names_of, py_err, tagged_from_py, unknown_key, Conv, ConvResult, FromPy, Keep, Keys,
    UNKNOWN_TAGGED,
};
use crate::errors::Error;
use crate::protocol::codec::{encode_field_value, encode_scalar_value, encode_struct_value};
use crate::protocol::primitives::{put_vec, Buf, Writer};
use crate::protocol::schema::{Field, Type};
use crate::protocol::value::{default_value, is_default, Value};

/// BLOB is the size from which a byte string is referenced rather than copied.
const BLOB: usize = 4096;

/// Rope is an output buffer that copies small writes and references large byte strings.
pub(super) struct Rope<'k> {
    head: Vec<u8>,
    /// blobs are (position in `head` where the blob goes, the blob).
    blobs: Vec<(usize, &'k [u8])>,
    blob_bytes: usize,
}

impl<'k> Rope<'k> {
    pub(super) fn new() -> Self {
        Rope {
            head: Vec::with_capacity(256),
            blobs: Vec::new(),
            blob_bytes: 0,
        }
    }

    /// len is the total length written.
    pub(super) fn len(&self) -> usize {
        self.head.len() + self.blob_bytes
    }

    fn bytes(&mut self, b: &'k [u8]) {
        if b.len() >= BLOB {
            self.blobs.push((self.head.len(), b));
            self.blob_bytes += b.len();
        } else {
            self.head.extend_from_slice(b);
        }
    }

    /// mark is where the rope ends now, to [`reset`](Self::reset) it to.
    pub(super) fn mark(&self) -> (usize, usize, usize) {
        (self.head.len(), self.blobs.len(), self.blob_bytes)
    }

    /// reset drops everything written since `mark`.
    pub(super) fn reset(&mut self, mark: (usize, usize, usize)) {
        self.head.truncate(mark.0);
        self.blobs.truncate(mark.1);
        self.blob_bytes = mark.2;
    }

    /// patch overwrites bytes already written at `at` (a frame's size prefix).
    pub(super) fn patch(&mut self, at: usize, b: &[u8]) {
        if let Some(dst) = self.head.get_mut(at..at + b.len()) {
            dst.copy_from_slice(b);
        }
    }

    /// into_bytes copies everything, in order, into one new `bytes` object.
    pub(super) fn into_bytes(self, py: Python<'_>) -> PyResult<Bound<'_, PyBytes>> {
        let total = self.len();
        // SAFETY: PyBytes_FromStringAndSize(NULL, n) returns a new bytes object of n
        // uninitialized bytes (or NULL with an exception set). Every one of them is written
        // below through raw pointers (no reference to uninitialized memory is made), within
        // bounds since the parts add up to `total`, before anyone else sees the object.
        unsafe {
            let raw = ffi::PyBytes_FromStringAndSize(std::ptr::null(), total as ffi::Py_ssize_t);
            let obj = Bound::from_owned_ptr_or_err(py, raw)?;
            let dst = ffi::PyBytes_AsString(obj.as_ptr()) as *mut u8;
            let mut written = 0;
            let mut from = 0;
            for (pos, blob) in &self.blobs {
                let part = &self.head[from..*pos];
                std::ptr::copy_nonoverlapping(part.as_ptr(), dst.add(written), part.len());
                written += part.len();
                std::ptr::copy_nonoverlapping(blob.as_ptr(), dst.add(written), blob.len());
                written += blob.len();
                from = *pos;
            }
            let rest = &self.head[from..];
            std::ptr::copy_nonoverlapping(rest.as_ptr(), dst.add(written), rest.len());
            debug_assert_eq!(written + rest.len(), total);
            Ok(obj.cast_into_unchecked())
        }
    }
}

impl Buf for Rope<'_> {
    #[inline]
    fn extend_from_slice(&mut self, b: &[u8]) {
        self.head.extend_from_slice(b)
    }
    #[inline(always)]
    fn put<const N: usize>(&mut self, b: [u8; N]) {
        put_vec(&mut self.head, b)
    }
    #[inline]
    fn push(&mut self, b: u8) {
        self.head.push(b)
    }
}

/// next_entry is the dict's next (key, value) after `pos`, as borrowed pointers, or None at the
/// end.
#[inline]
fn next_entry(
    d: &Bound<'_, PyDict>,
    pos: &mut ffi::Py_ssize_t,
) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
    let mut k = std::ptr::null_mut();
    let mut v = std::ptr::null_mut();
    // SAFETY: `d` is a live dict and `pos` a cursor that only PyDict_Next advances; the
    // pointers written are borrowed references, used while the dict (held by the caller) lives.
    // PyDict_Next stays in bounds even if the dict changed since the last call.
    (unsafe { ffi::PyDict_Next(d.as_ptr(), pos, &mut k, &mut v) } != 0).then_some((k, v))
}

/// int_fast writes an exact int that fits `ty` (an integer type), and tells whether it did;
/// anything else is left to [`Direct::scalar`]. Inlined into the loops: most values are these.
#[inline(always)]
fn int_fast<B: Buf>(w: &mut Writer<B>, p: *mut ffi::PyObject, ty: Type) -> bool {
    // SAFETY: `p` is a valid object pointer; for an exact int, PyLong_AsLongLongAndOverflow
    // runs no Python code and sets no exception (it flags overflow instead).
    unsafe {
        if ffi::PyLong_CheckExact(p) == 0 {
            return false;
        }
        let mut overflow = 0;
        let x = ffi::PyLong_AsLongLongAndOverflow(p, &mut overflow);
        if overflow != 0 {
            return false;
        }
        match ty {
            Type::Int32 => i32::try_from(x).map(|x| w.i32(x)).is_ok(),
            Type::Int16 => i16::try_from(x).map(|x| w.i16(x)).is_ok(),
            Type::Int64 => {
                w.i64(x);
                true
            }
            Type::Int8 => i8::try_from(x).map(|x| w.i8(x)).is_ok(),
            Type::Uint16 => u16::try_from(x).map(|x| w.u16(x)).is_ok(),
            _ => false,
        }
    }
}

/// int_list_fast writes a list of exact ints that all fit `elem` (an `[]int32` or `[]int64`
/// field), and tells whether it did; it writes nothing otherwise (then the general path, which
/// holds the list, takes over). It runs no Python code, so the list is read borrowed.
#[inline]
fn int_list_fast(
    w: &mut Writer<Rope<'_>>,
    p: *mut ffi::PyObject,
    elem: Type,
    flexible: bool,
) -> bool {
    // SAFETY: `p` is a valid object pointer; for an exact list, its size and items are read in
    // bounds while nothing else runs (int_fast runs no Python code).
    unsafe {
        if ffi::PyList_CheckExact(p) == 0 {
            return false;
        }
        let n = ffi::PyList_GET_SIZE(p);
        if n >= i32::MAX as ffi::Py_ssize_t {
            return false;
        }
        let mark = w.buf.mark();
        if flexible {
            w.compact_array_len(Some(n as usize));
        } else {
            w.array_len(Some(n as usize));
        }
        for i in 0..n {
            if !int_fast(w, ffi::PyList_GET_ITEM(p, i), elem) {
                w.buf.reset(mark);
                return false;
            }
        }
        true
    }
}

/// Direct encodes plain Python values at one version of one message.
pub(super) struct Direct<'py, 'k> {
    pub py: Python<'py>,
    pub keys: &'py Keys,
    pub keep: &'k Keep<'py>,
    pub version: i16,
    /// flexible is the message version's encoding.
    pub flexible: bool,
}

fn core(e: Error) -> Conv {
    Conv::from(e)
}

fn named(c: Conv, f: &Field) -> Conv {
    at(c, f.name.to_string())
}

impl<'py, 'k> Direct<'py, 'k> {
    fn reader(&self) -> FromPy<'py, 'k> {
        FromPy {
            py: self.py,
            keys: self.keys,
            keep: self.keep,
        }
    }

    /// codec writes one field's value with the codec.
    fn codec(&self, w: &mut Writer<Rope<'k>>, v: &Value<'k>, f: &'static Field) -> ConvResult<()> {
        encode_field_value(w, v, f, self.version, self.flexible).map_err(core)
    }

    /// structure writes a struct given as any Python value.
    pub(super) fn structure(
        &self,
        w: &mut Writer<Rope<'k>>,
        obj: &Bound<'py, PyAny>,
        fields: &'static [Field],
    ) -> ConvResult<()> {
        self.structure_named(w, obj, fields, names_of(self.keys, fields))
    }

    /// structure_named writes a struct of `fields`, whose interned names are `names` (looked
    /// up by the caller, once for a whole array).
    fn structure_named(
        &self,
        w: &mut Writer<Rope<'k>>,
        obj: &Bound<'py, PyAny>,
        fields: &'static [Field],
        names: &[Py<PyString>],
    ) -> ConvResult<()> {
        let Ok(d) = obj.cast_exact::<PyDict>() else {
            // Views, mappings, light objects: through a value tree.
            let s = self.reader().structure(obj, fields)?;
            return encode_struct_value(w, &s, fields, self.version, self.flexible).map_err(core);
        };
        let mark = w.buf.mark();
        if self.dict(w, d, fields, names, true)? {
            return Ok(());
        }
        // A field taken as absent was there after all (the dict is out of order): again,
        // looking every field up.
        w.buf.reset(mark);
        self.dict(w, d, fields, names, false).map(|_| ())
    }

    /// dict writes a struct given as a dict. Dicts are usually written in the definition's
    /// order, with literal (interned) keys: it walks the dict's entries alongside the fields and
    /// takes an entry whose key is the very name object expected, without hashing; any other
    /// key falls back to a lookup.
    ///
    /// With `speculate`, a field whose name is not the next key, when that key is a later
    /// field's, is taken as absent without a lookup (the common case: a tagged field left out).
    /// That holds if, at the end, every key of the dict was used; if not, dict returns false
    /// and the caller writes the struct again without speculating.
    fn dict(
        &self,
        w: &mut Writer<Rope<'k>>,
        d: &Bound<'py, PyDict>,
        fields: &'static [Field],
        names: &[Py<PyString>],
        speculate: bool,
    ) -> ConvResult<bool> {
        let py = self.py;
        let mut found = 0;
        let mut tagged: Vec<(u32, Vec<u8>)> = Vec::new();
        // An entry is read just before it is used (and its value made an owned reference at
        // once). It is kept for the next field only across fields taken as absent, which run no
        // Python code; otherwise it is read again, since encoding a field may run Python code.
        let mut pos: ffi::Py_ssize_t = 0;
        let mut peeked = None;
        let mut skipped = false;
        for (i, (f, name)) in fields.iter().zip(names).enumerate() {
            let entry = peeked.take().or_else(|| {
                let mut next = pos;
                next_entry(d, &mut next).map(|(k, v)| (k, v, next))
            });
            let raw = match entry {
                Some((k, v, next)) if k == name.as_ptr() => {
                    pos = next;
                    v
                }
                Some((k, v, next))
                    if speculate && names[i + 1..].iter().any(|n| n.as_ptr() == k) =>
                {
                    skipped = true;
                    peeked = Some((k, v, next));
                    std::ptr::null_mut()
                }
                // SAFETY: `d` is a dict and `name` a str; the result is a borrowed reference,
                // or NULL (with an exception set on error).
                _ => unsafe { ffi::PyDict_GetItemWithError(d.as_ptr(), name.as_ptr()) },
            };
            let present = f.versions.contains(self.version);
            let is_tagged = f.is_tagged_in(self.version);
            if raw.is_null() {
                // SAFETY: the GIL is held. (Checked before fetching: a missing key sets none.)
                if !unsafe { ffi::PyErr_Occurred() }.is_null() {
                    if let Some(e) = PyErr::take(py) {
                        return Err(py_err(py, e));
                    }
                }
                if present && !is_tagged {
                    // Rust only: a peeked entry stays valid.
                    self.codec(w, &default_value(f), f)
                        .map_err(|c| named(c, f))?;
                }
                continue;
            }
            found += 1;
            if present && !is_tagged && !matches!(f.ty, Type::Struct | Type::Array(_)) {
                // A scalar is written (or, on the slow path, made an owned reference) before
                // any Python code can run: it is read borrowed.
                if int_fast(w, raw, f.ty) {
                    continue;
                }
                // SAFETY: `raw` is a valid borrowed reference to a value of the dict, which the
                // caller holds, used only within the call below (see `scalar`).
                let v = unsafe { Borrowed::from_ptr(py, raw) };
                self.scalar(w, &v, f.ty, self.field_flexible(f), Some(f))
                    .map_err(|c| named(c, f))?;
                continue;
            }
            if present
                && !is_tagged
                && matches!(f.ty, Type::Array(Type::Int32 | Type::Int64))
                && int_list_fast(w, raw, f.element(), self.field_flexible(f))
            {
                continue;
            }
            // SAFETY: `raw` is a valid borrowed reference to a value of the dict.
            let v = unsafe { Bound::from_borrowed_ptr(py, raw) };
            if present && !is_tagged {
                self.field(w, &v, f).map_err(|c| named(c, f))?;
                continue;
            }
            let value = self.reader().field(&v, f).map_err(|c| named(c, f))?;
            if !present {
                if !f.ignorable && !is_default(&value, f) {
                    let e = Error::InvalidArgument(format!(
                        "version {} has no such field (versions {}); it must be left at its default",
                        self.version, f.versions
                    ));
                    return Err(named(core(e), f));
                }
            } else if !is_default(&value, f) {
                let mut sub = Writer::new();
                encode_field_value(&mut sub, &value, f, self.version, self.flexible)
                    .map_err(|e| named(core(e), f))?;
                tagged.push((f.tag.unwrap_or_default(), sub.into_inner()));
            }
        }
        if skipped && found != d.len() {
            return Ok(false);
        }
        let key = pyo3::intern!(py, UNKNOWN_TAGGED);
        let raw = if found == d.len() {
            // Every key is a field: there is no unknown_tagged_fields to look for.
            std::ptr::null_mut()
        } else {
            // SAFETY: as above.
            unsafe { ffi::PyDict_GetItemWithError(d.as_ptr(), key.as_ptr()) }
        };
        if raw.is_null() {
            if let Some(e) = PyErr::take(py) {
                return Err(py_err(py, e));
            }
        } else {
            found += 1;
            // SAFETY: a valid borrowed reference.
            let t = unsafe { Bound::from_borrowed_ptr(py, raw) };
            tagged.extend(tagged_from_py(&t).map_err(|c| at(c, UNKNOWN_TAGGED.to_string()))?);
        }
        if found != d.len() {
            return Err(unknown_key(d, fields));
        }
        if self.flexible {
            tagged.sort_by_key(|(t, _)| *t);
            if let Some(pair) = tagged.windows(2).find(|pair| pair[0].0 == pair[1].0) {
                return Err(core(Error::InvalidArgument(format!(
                    "tagged field {} is given twice",
                    pair[0].0
                ))));
            }
            w.unsigned_varint(tagged.len() as u32);
            for (tag, bytes) in &tagged {
                w.unsigned_varint(*tag);
                w.unsigned_varint(bytes.len() as u32);
                w.raw(bytes);
            }
        } else if !tagged.is_empty() {
            let e = Error::InvalidArgument(format!(
                "version {} is not flexible and cannot carry tagged fields",
                self.version
            ));
            return Err(core(e));
        }
        Ok(true)
    }

    /// field_flexible is the encoding a field uses: its own override, else the message's.
    #[inline]
    fn field_flexible(&self, f: &Field) -> bool {
        f.flexible
            .map_or(self.flexible, |fv| fv.contains(self.version))
    }

    fn field(
        &self,
        w: &mut Writer<Rope<'k>>,
        v: &Bound<'py, PyAny>,
        f: &'static Field,
    ) -> ConvResult<()> {
        let flexible = self.field_flexible(f);
        match f.ty {
            Type::Struct if !v.is_none() => {
                // A nullable struct starts with its marker byte: 1, present.
                if f.nullable.contains(self.version) {
                    w.i8(1);
                }
                self.structure(w, v, f.fields)
            }
            // None: null for a nullable struct (its version checked by the encoder), else the
            // struct's defaults, as the tree path reads it.
            Type::Struct if !f.nullable.is_empty() => self.codec(w, &Value::Null, f),
            Type::Struct => self.codec(w, &default_value(f), f),
            Type::Array(elem) => {
                let list = match v.cast_exact::<PyList>() {
                    Ok(list) if list.len() < i32::MAX as usize => list,
                    _ => {
                        let value = self.reader().field(v, f)?;
                        return self.codec(w, &value, f);
                    }
                };
                if flexible {
                    w.compact_array_len(Some(list.len()));
                } else {
                    w.array_len(Some(list.len()));
                }
                let n = list.len();
                let names = match elem {
                    Type::Struct if n > 0 => names_of(self.keys, f.fields),
                    _ => &[],
                };
                for i in 0..n {
                    let lp = list.as_ptr();
                    // SAFETY: `list` is a live list (held by the caller). Its size is read again
                    // at each step, since Python code run by an element's conversion could
                    // shrink it; the index is then in bounds and the item a borrowed reference.
                    let raw = unsafe {
                        if i as ffi::Py_ssize_t >= ffi::PyList_GET_SIZE(lp) {
                            let e = PyIndexError::new_err("the list changed size while encoding");
                            return Err(py_err(self.py, e));
                        }
                        ffi::PyList_GET_ITEM(lp, i as ffi::Py_ssize_t)
                    };
                    match elem {
                        Type::Struct => {
                            // SAFETY: as above; owned at once, since encoding a struct may run
                            // Python code.
                            let item = unsafe { Bound::from_borrowed_ptr(self.py, raw) };
                            self.structure_named(w, &item, f.fields, names)
                        }
                        t if int_fast(w, raw, *t) => Ok(()),
                        t => {
                            // SAFETY: as above; a scalar is read borrowed (see `scalar`).
                            let item = unsafe { Borrowed::from_ptr(self.py, raw) };
                            self.scalar(w, &item, *t, flexible, None)
                        }
                    }
                    .map_err(|c| at(c, format!("[{i}]")))?;
                }
                Ok(())
            }
            t => self.scalar(w, v, t, flexible, Some(f)),
        }
    }

    /// scalar writes one scalar: a field's value (`field` given) or an array's element.
    ///
    /// `v` may be a borrowed reference: the fast paths run no Python code, and the slow path
    /// makes it an owned reference before any can run.
    fn scalar(
        &self,
        w: &mut Writer<Rope<'k>>,
        v: &Bound<'py, PyAny>,
        ty: Type,
        flexible: bool,
        field: Option<&'static Field>,
    ) -> ConvResult<()> {
        let p = v.as_ptr();
        // A null string or byte string where the field's version allows it.
        if p == unsafe { ffi::Py_None() }
            && matches!(ty, Type::String | Type::Bytes | Type::Records)
            && field.is_some_and(|f| f.nullable.contains(self.version))
        {
            match (flexible, ty) {
                (true, Type::String) => w.compact_nullable_string(None),
                (false, Type::String) => w.nullable_string(None),
                (true, _) => w.compact_nullable_bytes(None),
                (false, _) => w.nullable_bytes(None),
            }
            return Ok(());
        }
        match ty {
            // SAFETY (all arms): type checks and reads on a valid object pointer; no Python code
            // runs for exact ints, strs and bytes.
            // Exact ints that fit; any other (out of range, a subclass) is the codec's to judge.
            Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 | Type::Uint16
                if int_fast(w, p, ty) =>
            {
                return Ok(());
            }
            Type::String if unsafe { ffi::PyUnicode_CheckExact(p) } != 0 => {
                if let Ok(Ok(text)) = v.cast::<PyString>().map(|s| s.to_str()) {
                    if flexible {
                        w.compact_string(text);
                        return Ok(());
                    }
                    if text.len() <= i16::MAX as usize {
                        w.string(text);
                        return Ok(());
                    }
                }
            }
            Type::Bytes | Type::Records if unsafe { ffi::PyBytes_CheckExact(p) } != 0 => {
                if let Ok(b) = v.cast::<PyBytes>() {
                    let len = b.as_bytes().len();
                    if len < i32::MAX as usize {
                        if flexible {
                            w.unsigned_varint(len as u32 + 1);
                        } else {
                            w.i32(len as i32);
                        }
                        if len < BLOB {
                            // Copied into the output at once: nothing to keep.
                            w.raw(b.as_bytes());
                        } else {
                            w.buf.bytes(self.keep.bytes(b));
                        }
                        return Ok(());
                    }
                }
            }
            Type::Bool if v.is_instance_of::<PyBool>() => {
                w.boolean(v.is_truthy().map_err(|e| py_err(self.py, e))?);
                return Ok(());
            }
            _ => {}
        }
        self.slow(w, v, ty, flexible, field)
    }

    /// slow writes a scalar through the codec.
    fn slow(
        &self,
        w: &mut Writer<Rope<'k>>,
        v: &Bound<'py, PyAny>,
        ty: Type,
        flexible: bool,
        field: Option<&'static Field>,
    ) -> ConvResult<()> {
        // Owned from here: converting may run Python code.
        let v = v.clone();
        let value = if v.is_none() {
            Value::Null
        } else {
            self.reader().scalar(&v, ty)?
        };
        match field {
            Some(f) => self.codec(w, &value, f),
            None => encode_scalar_value(w, &value, ty, flexible).map_err(core),
        }
    }
}
