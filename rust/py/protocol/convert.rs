//! Conversions between value trees and Python values, both driven by the definitions.
//!
//! Python values: a struct is a `dict` keyed by snake_case field names (only the fields of the
//! version), an array a `list`, strings `str`, bytes and records `bytes`, UUIDs `uuid.UUID`,
//! integers `int`, booleans `bool`, null `None`. Tagged fields the definitions do not know are
//! `{tag: bytes}` under `unknown_tagged_fields`, present only when there are some.

use std::borrow::Cow;
use std::cell::RefCell;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple, PyType};

use super::views::{ArrayView, StructView};
use crate::errors::Error;
use crate::protocol::messages::{APIS, REQUEST_HEADER, RESPONSE_HEADER};
use crate::protocol::schema::{Field, Message, Type};
use crate::protocol::value::{default_value, AddressMap, Fields, Hole, Struct, Value};
use crate::py::log::FileSlice;

pub(super) const UNKNOWN_TAGGED: &str = "unknown_tagged_fields";

// ---------------------------------------------------------------------------------------------
// interned names, the uuid class, the garbage collector

/// KEYS holds the interned field names of every struct, by the address of its field list, so
/// that building a dict creates no key strings.
static KEYS: PyOnceLock<Keys> = PyOnceLock::new();
static UUID_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

pub(super) type Keys = AddressMap<Vec<Py<PyString>>>;

pub(super) fn keys(py: Python<'_>) -> &Keys {
    KEYS.get_or_init(py, || {
        fn walk(py: Python<'_>, fields: &'static [Field], map: &mut Keys) {
            map.entry(fields.as_ptr() as usize).or_insert_with(|| {
                fields
                    .iter()
                    .map(|f| PyString::intern(py, f.name).unbind())
                    .collect()
            });
            for f in fields {
                if !f.fields.is_empty() {
                    walk(py, f.fields, map);
                }
            }
        }
        let mut map = Keys::default();
        for a in APIS {
            walk(py, a.request.fields, &mut map);
            walk(py, a.response.fields, &mut map);
        }
        walk(py, REQUEST_HEADER.fields, &mut map);
        walk(py, RESPONSE_HEADER.fields, &mut map);
        map
    })
}

/// names_of is the interned names of a struct's fields.
pub(super) fn names_of<'a>(keys: &'a Keys, fields: &'static [Field]) -> &'a [Py<PyString>] {
    // Every struct of every definition is in the map; an empty list would only mean a struct
    // without fields, which has no names to look up.
    keys.get(&(fields.as_ptr() as usize))
        .map_or(&[], |v| v.as_slice())
}

pub(super) fn uuid_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UUID_CLASS.import(py, "uuid", "UUID")
}

/// GcPause keeps Python's cyclic garbage collector off while a large tree of containers is
/// built, then restores it. The containers built are all new and acyclic; without the pause
/// the collector would walk them again and again as they are allocated.
pub(super) struct GcPause {
    was_enabled: bool,
}

impl GcPause {
    pub(super) fn new(_py: Python<'_>) -> GcPause {
        // SAFETY: called with the GIL held (the token proves it).
        let was_enabled = unsafe { pyo3::ffi::PyGC_Disable() } != 0;
        GcPause { was_enabled }
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.was_enabled {
            // SAFETY: a GcPause only exists while the GIL is held: it is created from a Python
            // token and never leaves the function that made it.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Value -> Python

/// scalar_to_py converts a value that is neither a struct nor an array.
pub(super) fn scalar_to_py<'py>(py: Python<'py>, v: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int8(x) => x.into_pyobject(py)?.into_any(),
        Value::Int16(x) => x.into_pyobject(py)?.into_any(),
        Value::Int32(x) => x.into_pyobject(py)?.into_any(),
        Value::Int64(x) => x.into_pyobject(py)?.into_any(),
        Value::Uint16(x) => x.into_pyobject(py)?.into_any(),
        Value::Float64(x) => x.into_pyobject(py)?.into_any(),
        Value::Uuid(u) => uuid_to_py(py, u)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        Value::Struct(_) | Value::Array(_) | Value::Int32s(_) | Value::Int64s(_) => {
            return Err(PyTypeError::new_err("a struct or array is not a scalar"));
        }
        // Holes are only built for encoding; a decoded tree has none.
        Value::Hole(_) => return Err(PyTypeError::new_err("a records hole has no value here")),
    })
}

/// list_of builds a list of exactly `n` items.
pub(super) fn list_of<'py, I>(py: Python<'py>, n: usize, items: I) -> PyResult<Bound<'py, PyList>>
where
    I: Iterator<Item = PyResult<Bound<'py, PyAny>>>,
{
    // SAFETY: PyList_New(n) makes a list of n NULL slots; each is filled exactly once by
    // PyList_SetItem (which steals the reference) before the list is used. If a conversion
    // fails, the slots left NULL are allowed: list_dealloc skips them.
    unsafe {
        let raw = pyo3::ffi::PyList_New(n as pyo3::ffi::Py_ssize_t);
        let list = Bound::from_owned_ptr_or_err(py, raw)?.cast_into_unchecked::<PyList>();
        let mut filled = 0;
        for (i, item) in items.enumerate().take(n) {
            pyo3::ffi::PyList_SetItem(list.as_ptr(), i as pyo3::ffi::Py_ssize_t, item?.into_ptr());
            filled += 1;
        }
        if filled != n {
            return Err(PyTypeError::new_err("list length changed while building"));
        }
        Ok(list)
    }
}

/// int_list makes the list of an `[]int32` or `[]int64` array.
pub(super) fn int_list<'py>(py: Python<'py>, v: &Value<'_>) -> PyResult<Bound<'py, PyList>> {
    match v {
        Value::Int32s(a) => list_of(
            py,
            a.len(),
            a.iter().map(|x| Ok(x.into_pyobject(py)?.into_any())),
        ),
        Value::Int64s(a) => list_of(
            py,
            a.len(),
            a.iter().map(|x| Ok(x.into_pyobject(py)?.into_any())),
        ),
        _ => Err(PyTypeError::new_err("not an integer array")),
    }
}

/// Materialize builds plain dicts and lists for a whole tree.
pub(super) struct Materialize<'py> {
    pub py: Python<'py>,
    pub keys: &'py Keys,
    pub version: i16,
}

impl<'py> Materialize<'py> {
    pub(super) fn structure(
        &self,
        s: &Struct<'_>,
        fields: &'static [Field],
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = self.py;
        let names = names_of(self.keys, fields);
        let d = PyDict::new(py);
        for ((f, v), name) in fields.iter().zip(s.fields.iter()).zip(names) {
            if f.versions.contains(self.version) {
                d.set_item(name.bind(py), self.value(v, f)?)?;
            }
        }
        if !s.unknown_tagged.is_empty() {
            d.set_item(
                pyo3::intern!(py, UNKNOWN_TAGGED),
                tagged_to_py(py, &s.unknown_tagged)?,
            )?;
        }
        Ok(d)
    }

    pub(super) fn value(&self, v: &Value<'_>, f: &'static Field) -> PyResult<Bound<'py, PyAny>> {
        match v {
            Value::Struct(s) => Ok(self.structure(s, f.fields)?.into_any()),
            Value::Array(items) => self.array(items, f).map(Bound::into_any),
            Value::Int32s(_) | Value::Int64s(_) => int_list(self.py, v).map(Bound::into_any),
            v => scalar_to_py(self.py, v),
        }
    }

    pub(super) fn array(
        &self,
        items: &[Value<'_>],
        f: &'static Field,
    ) -> PyResult<Bound<'py, PyList>> {
        list_of(
            self.py,
            items.len(),
            items.iter().map(|item| self.value(item, f)),
        )
    }
}

pub(super) fn uuid_to_py<'py>(py: Python<'py>, u: &[u8; 16]) -> PyResult<Bound<'py, PyAny>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item(pyo3::intern!(py, "int"), u128::from_be_bytes(*u))?;
    uuid_class(py)?.call((), Some(&kwargs))
}

pub(super) fn tagged_to_py<'py>(
    py: Python<'py>,
    tagged: &[(u32, Cow<'_, [u8]>)],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (tag, raw) in tagged {
        d.set_item(tag, PyBytes::new(py, raw))?;
    }
    Ok(d)
}

pub(super) fn optional_tagged<'py>(
    py: Python<'py>,
    tagged: &[(u32, Cow<'_, [u8]>)],
) -> PyResult<Option<Bound<'py, PyDict>>> {
    if tagged.is_empty() {
        Ok(None)
    } else {
        tagged_to_py(py, tagged).map(Some)
    }
}

// ---------------------------------------------------------------------------------------------
// Python -> Value

/// Conv is a conversion error with the path to the value that caused it.
pub(super) struct Conv {
    pub err: Error,
    path: Vec<String>,
}

impl From<Error> for Conv {
    fn from(err: Error) -> Self {
        Conv {
            err,
            path: Vec::new(),
        }
    }
}

pub(super) type ConvResult<T> = Result<T, Conv>;

pub(super) fn at(mut c: Conv, seg: String) -> Conv {
    c.path.push(seg);
    c
}

/// finish turns a conversion error into the core error, naming the message and the path.
pub(super) fn finish(c: Conv, msg: &Message, version: i16) -> Error {
    let mut place = format!("{} v{version}", msg.name);
    for (i, seg) in c.path.iter().rev().enumerate() {
        if !seg.starts_with('[') {
            place.push_str(if i == 0 { ": " } else { "." });
        }
        place.push_str(seg);
    }
    let text = format!("{place}: {}", c.err);
    match c.err {
        Error::InvalidType(_) => Error::InvalidType(text),
        _ => Error::InvalidArgument(text),
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn wrong_type(expected: &str, obj: &Bound<'_, PyAny>) -> Conv {
    Error::InvalidType(format!("expected {expected}, got {}", type_name(obj))).into()
}

/// py_err turns a Python exception raised while reading a value into a conversion error.
pub(super) fn py_err(py: Python<'_>, e: PyErr) -> Conv {
    let text = e.value(py).to_string();
    if e.is_instance_of::<PyOverflowError>(py) {
        Error::InvalidArgument(format!("out of range: {text}")).into()
    } else if e.is_instance_of::<PyTypeError>(py) {
        Error::InvalidType(text).into()
    } else {
        Error::InvalidArgument(text).into()
    }
}

/// Keep holds every Python object whose memory a value tree borrows (the buffers of `bytes`,
/// the UTF-8 of `str`, the trees of views), so that the tree can point into them without
/// copying. Both `bytes` and `str` are immutable and a view's tree never changes, so holding
/// the object is enough to keep the borrowed memory valid and unchanged.
///
/// A Keep made [`with_holes`](Keep::with_holes) also takes the FileSlices met as records values
/// and numbers them: the tree then holds each as a [`Value::Hole`] of its length, for a frame
/// written in segments. Any other Keep has their bytes read into the tree.
pub(super) struct Keep<'py> {
    held: RefCell<Vec<Bound<'py, PyAny>>>,
    holes: Option<RefCell<Vec<Bound<'py, FileSlice>>>>,
}

impl<'py> Keep<'py> {
    pub(super) fn new() -> Self {
        Keep {
            held: RefCell::new(Vec::new()),
            holes: None,
        }
    }

    pub(super) fn with_holes() -> Self {
        Keep {
            held: RefCell::new(Vec::new()),
            holes: Some(RefCell::new(Vec::new())),
        }
    }

    /// hole is the FileSlice taken as hole `index`.
    pub(super) fn hole(&self, index: u32) -> Option<Bound<'py, FileSlice>> {
        self.holes.as_ref()?.borrow().get(index as usize).cloned()
    }

    /// any_hole tells whether the slice of any hole passes `test`.
    pub(super) fn any_hole(&self, test: impl Fn(&crate::log::FileSlice) -> bool) -> bool {
        self.holes
            .as_ref()
            .is_some_and(|h| h.borrow().iter().any(|s| test(s.get().slice())))
    }

    /// take_hole numbers a FileSlice as the next hole, or None for a Keep without holes (or
    /// past the 2^32 a hole index can name).
    fn take_hole(&self, s: &Bound<'py, FileSlice>) -> Option<u32> {
        let mut holes = self.holes.as_ref()?.borrow_mut();
        let index = u32::try_from(holes.len()).ok()?;
        holes.push(s.clone());
        Some(index)
    }

    pub(super) fn bytes<'k>(&'k self, b: &Bound<'py, PyBytes>) -> &'k [u8] {
        let data: *const [u8] = b.as_bytes();
        self.held.borrow_mut().push(b.clone().into_any());
        // SAFETY: a bytes object's buffer is immutable and lives as long as the object, which
        // `self` now holds for at least 'k.
        unsafe { &*data }
    }

    fn str<'k>(&'k self, s: &Bound<'py, PyString>) -> PyResult<&'k str> {
        let data: *const str = s.to_str()?;
        self.held.borrow_mut().push(s.clone().into_any());
        // SAFETY: the UTF-8 form of a str is cached inside the object and never changes or
        // moves while it lives; `self` holds the object for at least 'k.
        Ok(unsafe { &*data })
    }

    /// view borrows the tree of a view, whose root `self` then holds.
    pub(super) fn view<'k>(&'k self, v: &Bound<'py, StructView>) -> &'k Struct<'k> {
        let node: *const Struct<'static> = v.get().node();
        self.held.borrow_mut().push(v.clone().into_any());
        // SAFETY: a view's tree is immutable and owned (through an Arc) by the view, which
        // `self` holds for at least 'k; the tree's own borrows live as long as that root.
        unsafe { &*node }
    }

    fn array_view<'k>(&'k self, v: &Bound<'py, ArrayView>) -> &'k [Value<'k>] {
        let items: *const [Value<'static>] = v.get().items();
        self.held.borrow_mut().push(v.clone().into_any());
        // SAFETY: as for `view`.
        unsafe { &*items }
    }
}

pub(super) struct FromPy<'py, 'k> {
    pub py: Python<'py>,
    pub keys: &'py Keys,
    pub keep: &'k Keep<'py>,
}

impl<'py, 'k> FromPy<'py, 'k> {
    pub(super) fn structure(
        &self,
        obj: &Bound<'py, PyAny>,
        fields: &'static [Field],
    ) -> ConvResult<Struct<'k>> {
        let py = self.py;
        if let Ok(view) = obj.cast::<StructView>() {
            if std::ptr::eq(view.get().fields(), fields) {
                return Ok(self.keep.view(view).clone());
            }
        }
        let names = names_of(self.keys, fields);
        let mut out = Vec::with_capacity(fields.len());
        let mut unknown_tagged = Vec::new();
        if let Ok(d) = obj.cast::<PyDict>() {
            let mut found = 0;
            for (f, name) in fields.iter().zip(names) {
                match d.get_item(name.bind(py)).map_err(|e| py_err(py, e))? {
                    Some(v) => {
                        found += 1;
                        out.push(self.field(&v, f).map_err(|c| at(c, f.name.to_string()))?);
                    }
                    None => out.push(default_value(f)),
                }
            }
            if let Some(t) = d
                .get_item(pyo3::intern!(py, UNKNOWN_TAGGED))
                .map_err(|e| py_err(py, e))?
            {
                found += 1;
                unknown_tagged = self
                    .tagged(&t)
                    .map_err(|c| at(c, UNKNOWN_TAGGED.to_string()))?;
            }
            if found != d.len() {
                return Err(unknown_key(d, fields));
            }
        } else if obj.is_none()
            || obj.is_instance_of::<PyString>()
            || obj.is_instance_of::<PyBytes>()
        {
            return Err(wrong_type("a dict", obj));
        } else if obj.hasattr("keys").unwrap_or(false)
            && obj.hasattr("__getitem__").unwrap_or(false)
        {
            // Any other mapping (a view of another struct, a Mapping): read by key.
            for f in fields {
                match obj.get_item(f.name) {
                    Ok(v) => out.push(self.field(&v, f).map_err(|c| at(c, f.name.to_string()))?),
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(py) => {
                        out.push(default_value(f))
                    }
                    Err(e) => return Err(py_err(py, e)),
                }
            }
            if let Ok(t) = obj.get_item(UNKNOWN_TAGGED) {
                unknown_tagged = self
                    .tagged(&t)
                    .map_err(|c| at(c, UNKNOWN_TAGGED.to_string()))?;
            }
        } else {
            // A light object: fields are read as attributes, missing ones take their default.
            for (f, name) in fields.iter().zip(names) {
                match obj.getattr_opt(name.bind(py)).map_err(|e| py_err(py, e))? {
                    Some(v) => out.push(self.field(&v, f).map_err(|c| at(c, f.name.to_string()))?),
                    None => out.push(default_value(f)),
                }
            }
            if let Some(t) = obj.getattr_opt(UNKNOWN_TAGGED).map_err(|e| py_err(py, e))? {
                if !t.is_none() {
                    unknown_tagged = self
                        .tagged(&t)
                        .map_err(|c| at(c, UNKNOWN_TAGGED.to_string()))?;
                }
            }
        }
        Ok(Struct {
            fields: Fields::Owned(out),
            unknown_tagged: unknown_tagged.into(),
        })
    }

    pub(super) fn field(&self, v: &Bound<'py, PyAny>, f: &'static Field) -> ConvResult<Value<'k>> {
        if v.is_none() {
            return match f.ty {
                // None for a nullable struct is null (its version checked by the encoder);
                // for another struct it means its defaults.
                Type::Struct if !f.nullable.is_empty() => Ok(Value::Null),
                Type::Struct => Ok(default_value(f)),
                // Nullability is checked against the version by the encoder.
                _ => Ok(Value::Null),
            };
        }
        match f.ty {
            Type::Struct => Ok(Value::Struct(self.structure(v, f.fields)?)),
            Type::Array(elem) => {
                if let Ok(view) = v.cast::<ArrayView>() {
                    if std::ptr::eq(view.get().fields(), f.fields) {
                        return Ok(Value::Array(self.keep.array_view(view).to_vec().into()));
                    }
                }
                if matches!(elem, Type::Int32 | Type::Int64) {
                    return self.int_array(v, *elem);
                }
                let convert = |i: usize, item: &Bound<'py, PyAny>| -> ConvResult<Value<'k>> {
                    match elem {
                        Type::Struct => self.structure(item, f.fields).map(Value::Struct),
                        t => self.scalar(item, *t),
                    }
                    .map_err(|c| at(c, format!("[{i}]")))
                };
                let mut items = Vec::new();
                if let Ok(list) = v.cast::<PyList>() {
                    items.reserve(list.len());
                    for (i, item) in list.iter().enumerate() {
                        items.push(convert(i, &item)?);
                    }
                } else if let Ok(tuple) = v.cast::<PyTuple>() {
                    items.reserve(tuple.len());
                    for (i, item) in tuple.iter().enumerate() {
                        items.push(convert(i, &item)?);
                    }
                } else if v.is_instance_of::<PyString>()
                    || v.is_instance_of::<PyBytes>()
                    || v.is_instance_of::<PyDict>()
                {
                    return Err(wrong_type("a list", v));
                } else {
                    let it = v.try_iter().map_err(|_| wrong_type("a list", v))?;
                    for (i, item) in it.enumerate() {
                        items.push(convert(i, &item.map_err(|e| py_err(self.py, e))?)?);
                    }
                }
                Ok(Value::Array(items.into()))
            }
            t => self.scalar(v, t),
        }
    }

    /// int_array reads a sequence of ints for an `[]int32` or `[]int64` field.
    fn int_array(&self, v: &Bound<'py, PyAny>, elem: Type) -> ConvResult<Value<'k>> {
        if v.is_instance_of::<PyString>()
            || v.is_instance_of::<PyBytes>()
            || v.is_instance_of::<PyDict>()
        {
            return Err(wrong_type("a list", v));
        }
        let it = v.try_iter().map_err(|_| wrong_type("a list", v))?;
        let mut i32s = Vec::new();
        let mut i64s = Vec::new();
        for (i, item) in it.enumerate() {
            let item = item.map_err(|e| py_err(self.py, e))?;
            match self
                .scalar(&item, elem)
                .map_err(|c| at(c, format!("[{i}]")))?
            {
                Value::Int32(x) => i32s.push(x),
                Value::Int64(x) => i64s.push(x),
                _ => return Err(wrong_type("int", &item)),
            }
        }
        Ok(if elem == Type::Int32 {
            Value::Int32s(i32s.into())
        } else {
            Value::Int64s(i64s.into())
        })
    }

    pub(super) fn scalar(&self, v: &Bound<'py, PyAny>, ty: Type) -> ConvResult<Value<'k>> {
        let py = self.py;
        let int = || -> ConvResult<i64> {
            if !v.is_instance_of::<PyInt>() {
                return Err(wrong_type("int", v));
            }
            v.extract::<i64>().map_err(|e| py_err(py, e))
        };
        let ranged = |x: i64, lo: i64, hi: i64| -> ConvResult<i64> {
            if x < lo || x > hi {
                Err(
                    Error::InvalidArgument(format!("out of range: {x} is not in [{lo}, {hi}]"))
                        .into(),
                )
            } else {
                Ok(x)
            }
        };
        Ok(match ty {
            Type::Bool => Value::Bool(
                v.cast::<PyBool>()
                    .map_err(|_| wrong_type("bool", v))?
                    .is_true(),
            ),
            Type::Int8 => Value::Int8(ranged(int()?, i8::MIN as i64, i8::MAX as i64)? as i8),
            Type::Int16 => Value::Int16(ranged(int()?, i16::MIN as i64, i16::MAX as i64)? as i16),
            Type::Int32 => Value::Int32(ranged(int()?, i32::MIN as i64, i32::MAX as i64)? as i32),
            Type::Int64 => Value::Int64(int()?),
            Type::Uint16 => Value::Uint16(ranged(int()?, 0, u16::MAX as i64)? as u16),
            Type::Float64 => Value::Float64(v.extract().map_err(|_| wrong_type("float", v))?),
            Type::Uuid => Value::Uuid(uuid_from_py(v)?),
            Type::String => {
                let s = v.cast::<PyString>().map_err(|_| wrong_type("str", v))?;
                let text = self.keep.str(s).map_err(|_| {
                    Conv::from(Error::InvalidArgument(
                        "string is not valid UTF-8 (it holds a lone surrogate)".into(),
                    ))
                })?;
                Value::String(Cow::Borrowed(text))
            }
            Type::Records if v.is_exact_instance_of::<FileSlice>() => self.file_slice(v)?,
            Type::Bytes | Type::Records => {
                if let Ok(b) = v.cast::<PyBytes>() {
                    Value::Bytes(Cow::Borrowed(self.keep.bytes(b)))
                } else {
                    Value::Bytes(Cow::Owned(bytes_from_py(v)?))
                }
            }
            Type::Struct | Type::Array(_) => return Err(wrong_type("a scalar", v)),
        })
    }

    /// file_slice is a records value held in a segment file: a hole where the Keep takes them
    /// (an empty slice is just empty records), else its bytes, read now.
    fn file_slice(&self, v: &Bound<'py, PyAny>) -> ConvResult<Value<'k>> {
        let s = v
            .cast::<FileSlice>()
            .map_err(|_| wrong_type("FileSlice", v))?;
        let slice = s.get().slice();
        if slice.is_empty() {
            return Ok(Value::Bytes(Cow::Borrowed(&[])));
        }
        if let Some(index) = self.keep.take_hole(s) {
            return Ok(Value::Hole(Hole {
                index,
                len: slice.len(),
            }));
        }
        Ok(Value::Bytes(Cow::Owned(slice.bytes()?)))
    }

    fn tagged(&self, t: &Bound<'py, PyAny>) -> ConvResult<Vec<(u32, Cow<'k, [u8]>)>> {
        tagged_from_py(t).map(|v| v.into_iter().map(|(t, b)| (t, Cow::Owned(b))).collect())
    }
}

pub(super) fn unknown_key(d: &Bound<'_, PyDict>, fields: &'static [Field]) -> Conv {
    for k in d.keys() {
        let known = k
            .cast::<PyString>()
            .ok()
            .and_then(|s| {
                s.to_str()
                    .ok()
                    .map(|s| s == UNKNOWN_TAGGED || fields.iter().any(|f| f.name == s))
            })
            .unwrap_or(false);
        if !known {
            let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
            return Error::InvalidArgument(format!(
                "unknown field {k:?} (fields: {})",
                names.join(", ")
            ))
            .into();
        }
    }
    Error::InvalidArgument("unknown field".into()).into()
}

fn uuid_from_py(v: &Bound<'_, PyAny>) -> ConvResult<[u8; 16]> {
    let py = v.py();
    if let Ok(b) = v.cast::<PyBytes>() {
        return b
            .as_bytes()
            .try_into()
            .map_err(|_| Error::InvalidArgument("a UUID needs 16 bytes".into()).into());
    }
    let cls = uuid_class(py).map_err(|e| py_err(py, e))?;
    if !v.is_instance(cls).map_err(|e| py_err(py, e))? {
        return Err(wrong_type("uuid.UUID", v));
    }
    let int = v
        .getattr(pyo3::intern!(py, "int"))
        .map_err(|e| py_err(py, e))?;
    if int.is_exact_instance_of::<pyo3::types::PyInt>() {
        let mut out = [0u8; 16];
        // SAFETY: `int` is an exact int; _PyLong_AsByteArray writes at most the 16 bytes given
        // (big-endian, unsigned) and runs no Python code. Non-zero means it did not fit, with
        // OverflowError set, which the extraction below reports in the usual way.
        let r = unsafe {
            pyo3::ffi::_PyLong_AsByteArray(
                int.as_ptr() as *mut pyo3::ffi::PyLongObject,
                out.as_mut_ptr(),
                16,
                0,
                0,
            )
        };
        if r == 0 {
            return Ok(out);
        }
        drop(PyErr::take(py));
    }
    let n: u128 = int.extract().map_err(|e| py_err(py, e))?;
    Ok(n.to_be_bytes())
}

/// bytes_from_py copies bytes, a bytearray or any buffer of bytes.
pub(super) fn bytes_from_py(v: &Bound<'_, PyAny>) -> ConvResult<Vec<u8>> {
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = v.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    if v.is_instance_of::<PyString>() {
        return Err(wrong_type("bytes", v));
    }
    let buf = PyBuffer::<u8>::get(v).map_err(|_| wrong_type("bytes", v))?;
    buf.to_vec(v.py()).map_err(|e| py_err(v.py(), e))
}

pub(super) fn tagged_from_py(t: &Bound<'_, PyAny>) -> ConvResult<Vec<(u32, Vec<u8>)>> {
    let d = t
        .cast::<PyDict>()
        .map_err(|_| wrong_type("a dict of {tag: bytes}", t))?;
    let mut out = Vec::with_capacity(d.len());
    for (k, v) in d.iter() {
        let tag: u32 = k.extract().map_err(|_| wrong_type("an int tag", &k))?;
        out.push((
            tag,
            bytes_from_py(&v).map_err(|c| at(c, format!("[{tag}]")))?,
        ));
    }
    out.sort_by_key(|(t, _)| *t);
    Ok(out)
}
