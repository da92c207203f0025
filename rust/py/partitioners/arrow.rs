//! Zero-copy reading of Arrow arrays through the Arrow PyCapsule interface
//! (`__arrow_c_array__` / `__arrow_c_stream__`), so pyarrow, polars, and any other Arrow
//! producer hand their buffers over without a copy and without an Arrow crate.
//!
//! The C structs are read, never moved: the capsules keep ownership and release them.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;

use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyTuple};

use crate::client::headers::{HeaderColumn, ListOffsets};
use crate::errors::Error;
use crate::partitioners::keys::{Bitmap, KeyColumn};

#[repr(C)]
pub struct FfiSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FfiSchema,
    dictionary: *mut FfiSchema,
    release: Option<unsafe extern "C" fn(*mut FfiSchema)>,
    private_data: *mut c_void,
}

#[repr(C)]
pub struct FfiArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut FfiArray,
    dictionary: *mut FfiArray,
    release: Option<unsafe extern "C" fn(*mut FfiArray)>,
    private_data: *mut c_void,
}

#[repr(C)]
struct FfiStream {
    get_schema: Option<unsafe extern "C" fn(*mut FfiStream, *mut FfiSchema) -> i32>,
    get_next: Option<unsafe extern "C" fn(*mut FfiStream, *mut FfiArray) -> i32>,
    get_last_error: Option<unsafe extern "C" fn(*mut FfiStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut FfiStream)>,
    private_data: *mut c_void,
}

fn decode(msg: impl Into<String>) -> Error {
    Error::malformed(msg.into())
}

/// Keys is one Arrow array of keys viewed as a [`KeyColumn`]: plain, or dictionary-encoded
/// (indices into a column of distinct keys), or all null.
pub enum Keys<'a> {
    Column(KeyColumn<'a>),
    Dictionary {
        values: KeyColumn<'a>,
        indices: Indices<'a>,
    },
    AllNull(usize),
}

/// Indices are the index buffer of a dictionary array, of any integer width.
pub struct Indices<'a> {
    kind: u8,
    data: *const u8,
    offset: usize,
    len: usize,
    validity: Option<Bitmap<'a>>,
}

// SAFETY: Indices only reads a buffer the producer keeps alive and unchanged for the call.
unsafe impl Send for Indices<'_> {}
unsafe impl Sync for Indices<'_> {}

impl Indices<'_> {
    /// get returns index `i` (already offset), or None for a null slot.
    pub fn get(&self, i: usize) -> Option<i64> {
        if let Some(v) = &self.validity {
            let j = v.offset + i;
            if v.bits[j >> 3] & (1 << (j & 7)) == 0 {
                return None;
            }
        }
        let j = self.offset + i;
        // SAFETY: the producer promised `offset + len` elements of this width.
        unsafe {
            Some(match self.kind {
                b'c' => *(self.data as *const i8).add(j) as i64,
                b'C' => *self.data.add(j) as i64,
                b's' => ptr::read_unaligned((self.data as *const i16).add(j)) as i64,
                b'S' => ptr::read_unaligned((self.data as *const u16).add(j)) as i64,
                b'i' => ptr::read_unaligned((self.data as *const i32).add(j)) as i64,
                b'I' => ptr::read_unaligned((self.data as *const u32).add(j)) as i64,
                b'l' => ptr::read_unaligned((self.data as *const i64).add(j)),
                _ => ptr::read_unaligned((self.data as *const u64).add(j)) as i64,
            })
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

/// type_name describes an Arrow format string for error messages.
fn type_name(format: &str) -> String {
    let known = match format {
        "n" => "null",
        "b" => "bool",
        "c" | "C" | "s" | "S" | "i" | "I" | "l" | "L" => "integer",
        "e" | "f" | "g" => "floating point",
        "z" => "binary",
        "Z" => "large_binary",
        "u" => "string",
        "U" => "large_string",
        "vz" => "binary_view",
        "vu" => "string_view",
        f if f.starts_with("t") => "temporal",
        f if f.starts_with("d:") => "decimal",
        f if f.starts_with("w:") => "fixed_size_binary",
        "+l" | "+L" | "+vl" | "+vL" => "list",
        "+s" => "struct",
        _ => "",
    };
    if known.is_empty() {
        format!("Arrow format {format:?}")
    } else {
        format!("Arrow {known} ({format:?})")
    }
}

unsafe fn buffer(array: &FfiArray, i: usize) -> Result<*const u8, Error> {
    if (array.n_buffers as usize) <= i || array.buffers.is_null() {
        return Err(decode(format!(
            "Arrow array has {} buffers, needs more than {i}",
            array.n_buffers
        )));
    }
    Ok(*array.buffers.add(i) as *const u8)
}

unsafe fn slice<'a, T>(p: *const u8, len: usize) -> Result<&'a [T], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(decode("Arrow buffer is missing"));
    }
    if (p as usize) % std::mem::align_of::<T>() != 0 {
        return Err(decode("Arrow buffer is not aligned"));
    }
    Ok(std::slice::from_raw_parts(p as *const T, len))
}

unsafe fn validity<'a>(
    array: &FfiArray,
    offset: usize,
    len: usize,
) -> Result<Option<Bitmap<'a>>, Error> {
    if array.null_count == 0 {
        return Ok(None);
    }
    let p = buffer(array, 0)?;
    if p.is_null() {
        return Ok(None);
    }
    let bits = slice::<u8>(p, (offset + len).div_ceil(8))?;
    Ok(Some(Bitmap { bits, offset }))
}

/// column views a plain binary/string array. SAFETY: `schema` and `array` are valid, unreleased
/// Arrow C structs that outlive `'a`.
unsafe fn column<'a>(format: &str, array: &FfiArray) -> Result<Option<KeyColumn<'a>>, Error> {
    if array.length < 0 || array.offset < 0 {
        return Err(decode("Arrow array has a negative length or offset"));
    }
    let (len, off) = (array.length as usize, array.offset as usize);
    let valid = validity(array, off, len)?;
    Ok(Some(match format {
        "z" | "u" => {
            let offsets = slice::<i32>(buffer(array, 1)?, off + len + 1)?;
            let offsets = &offsets[off.min(offsets.len())..];
            let end = offsets.last().copied().unwrap_or(0).max(0) as usize;
            let data = slice::<u8>(buffer(array, 2)?, end)?;
            KeyColumn::Offsets32 {
                offsets,
                data,
                validity: valid,
            }
        }
        "Z" | "U" => {
            let offsets = slice::<i64>(buffer(array, 1)?, off + len + 1)?;
            let offsets = &offsets[off.min(offsets.len())..];
            let end = offsets.last().copied().unwrap_or(0).max(0) as usize;
            let data = slice::<u8>(buffer(array, 2)?, end)?;
            KeyColumn::Offsets64 {
                offsets,
                data,
                validity: valid,
            }
        }
        "vz" | "vu" => {
            let views = slice::<[u8; 16]>(buffer(array, 1)?, off + len)?;
            let views = &views[off.min(views.len())..];
            // Buffers: validity, views, data buffers..., and last the int64 sizes of the data buffers.
            let n_data = (array.n_buffers as usize)
                .checked_sub(3)
                .ok_or_else(|| decode("Arrow view array lacks its sizes buffer"))?;
            let sizes = slice::<i64>(buffer(array, 2 + n_data)?, n_data)?;
            let mut buffers = Vec::with_capacity(n_data);
            for (j, &size) in sizes.iter().enumerate() {
                buffers.push(slice::<u8>(buffer(array, 2 + j)?, size.max(0) as usize)?);
            }
            KeyColumn::Views {
                views,
                buffers,
                validity: valid,
            }
        }
        _ => return Ok(None),
    }))
}

/// keys_from_c views an Arrow array as keys. SAFETY: as for [`column`], for the array, its
/// schema, and their dictionaries.
pub unsafe fn keys_from_c<'a>(schema: &FfiSchema, array: &FfiArray) -> Result<Keys<'a>, Error> {
    if schema.format.is_null() {
        return Err(decode("Arrow schema has no format"));
    }
    let format = CStr::from_ptr(schema.format)
        .to_str()
        .map_err(|_| decode("Arrow format is not UTF-8"))?;
    if array.release.is_none() {
        return Err(decode("Arrow array was already released"));
    }
    if !schema.dictionary.is_null() {
        if array.dictionary.is_null() {
            return Err(decode("Arrow dictionary array has no dictionary"));
        }
        let dict_schema = &*schema.dictionary;
        let dict_array = &*array.dictionary;
        let vformat = CStr::from_ptr(dict_schema.format)
            .to_str()
            .map_err(|_| decode("Arrow format is not UTF-8"))?;
        let values = column(vformat, dict_array)?.ok_or_else(|| {
            Error::InvalidType(format!(
                "keys must be binary or string, got a dictionary of {}",
                type_name(vformat)
            ))
        })?;
        let kind = match format.as_bytes() {
            [k @ (b'c' | b'C' | b's' | b'S' | b'i' | b'I' | b'l' | b'L')] => *k,
            _ => {
                return Err(decode(format!(
                    "Arrow dictionary index format {format:?} is not an integer"
                )))
            }
        };
        let (len, off) = (array.length.max(0) as usize, array.offset.max(0) as usize);
        let data = buffer(array, 1)?;
        if data.is_null() && len > 0 {
            return Err(decode("Arrow buffer is missing"));
        }
        let indices = Indices {
            kind,
            data,
            offset: off,
            len,
            validity: validity(array, off, len)?,
        };
        return Ok(Keys::Dictionary { values, indices });
    }
    if format == "n" {
        return Ok(Keys::AllNull(array.length.max(0) as usize));
    }
    match column(format, array)? {
        Some(c) => Ok(Keys::Column(c)),
        None => Err(Error::InvalidType(format!(
            "keys must be binary or string, got {}",
            type_name(format)
        ))),
    }
}

fn capsule_ptr<T>(cap: &Bound<'_, PyAny>, name: &CStr) -> PyResult<*mut T> {
    let cap = cap.cast::<PyCapsule>()?;
    Ok(cap.pointer_checked(Some(name))?.as_ptr() as *mut T)
}

/// with_array calls `f` with the schema and array of `obj.__arrow_c_array__()`.
pub fn with_array<R>(
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(&FfiSchema, &FfiArray) -> PyResult<R>,
) -> PyResult<R> {
    let pair = obj.call_method0("__arrow_c_array__")?;
    let pair = pair.cast::<PyTuple>()?;
    let schema = capsule_ptr::<FfiSchema>(&pair.get_item(0)?, c"arrow_schema")?;
    let array = capsule_ptr::<FfiArray>(&pair.get_item(1)?, c"arrow_array")?;
    // SAFETY: the capsules (kept alive by `pair`) own valid structs until they are destroyed.
    unsafe { f(&*schema, &*array) }
}

/// ReleasedArray owns an array taken from a stream and releases it when dropped.
struct OwnedArray(FfiArray);

impl Drop for OwnedArray {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: we own this struct; release is the producer's callback for it.
            unsafe { release(&mut self.0) };
        }
    }
}

struct OwnedSchema(FfiSchema);

impl Drop for OwnedSchema {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: as for OwnedArray.
            unsafe { release(&mut self.0) };
        }
    }
}

fn empty_schema() -> FfiSchema {
    FfiSchema {
        format: ptr::null(),
        name: ptr::null(),
        metadata: ptr::null(),
        flags: 0,
        n_children: 0,
        children: ptr::null_mut(),
        dictionary: ptr::null_mut(),
        release: None,
        private_data: ptr::null_mut(),
    }
}

fn empty_array() -> FfiArray {
    FfiArray {
        length: 0,
        null_count: 0,
        offset: 0,
        n_buffers: 0,
        n_children: 0,
        buffers: ptr::null_mut(),
        children: ptr::null_mut(),
        dictionary: ptr::null_mut(),
        release: None,
        private_data: ptr::null_mut(),
    }
}

unsafe fn stream_error(stream: *mut FfiStream, code: i32) -> Error {
    let msg = (*stream)
        .get_last_error
        .map(|f| f(stream))
        .filter(|p| !p.is_null())
        .map(|p| CStr::from_ptr(p).to_string_lossy().into_owned())
        .unwrap_or_default();
    decode(format!("Arrow stream failed (errno {code}): {msg}"))
}

/// for_each_chunk calls `f` on every array of `obj.__arrow_c_stream__()`, in order.
pub fn for_each_chunk(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    mut f: impl FnMut(&FfiSchema, &FfiArray) -> PyResult<()>,
) -> PyResult<()> {
    let cap = obj.call_method0("__arrow_c_stream__")?;
    let stream = capsule_ptr::<FfiStream>(&cap, c"arrow_array_stream")?;
    let to_py = |e| crate::py::errors::to_pyerr(py, e);
    // SAFETY: the capsule (alive in `cap`) owns a valid stream; arrays and schema it hands out
    // are ours to release, which the Owned* guards do.
    unsafe {
        let get_schema = (*stream)
            .get_schema
            .ok_or_else(|| to_py(decode("Arrow stream has no get_schema")))?;
        let get_next = (*stream)
            .get_next
            .ok_or_else(|| to_py(decode("Arrow stream has no get_next")))?;
        let mut schema = OwnedSchema(empty_schema());
        let rc = get_schema(stream, &mut schema.0);
        if rc != 0 {
            return Err(to_py(stream_error(stream, rc)));
        }
        loop {
            let mut array = OwnedArray(empty_array());
            let rc = get_next(stream, &mut array.0);
            if rc != 0 {
                return Err(to_py(stream_error(stream, rc)));
            }
            if array.0.release.is_none() {
                return Ok(());
            }
            f(&schema.0, &array.0)?;
        }
    }
}

/// format_of is a schema's Arrow format string.
///
/// # Safety
/// `schema` is a valid, unreleased Arrow C schema.
pub unsafe fn format_of(schema: &FfiSchema) -> Result<&str, Error> {
    if schema.format.is_null() {
        return Err(decode("Arrow schema has no format"));
    }
    CStr::from_ptr(schema.format)
        .to_str()
        .map_err(|_| decode("Arrow format is not UTF-8"))
}

/// StructView is a struct array (a record batch) seen as named columns; row `i` of a column is
/// item `offset + i` of the child.
pub struct StructView<'a> {
    pub len: usize,
    pub offset: usize,
    pub columns: Vec<(String, &'a FfiSchema, &'a FfiArray)>,
}

/// struct_view reads a record batch's columns.
///
/// # Safety
/// `schema` and `array` are valid, unreleased Arrow C structs that outlive `'a`.
pub unsafe fn struct_view<'a>(
    schema: &'a FfiSchema,
    array: &'a FfiArray,
) -> Result<StructView<'a>, Error> {
    let format = format_of(schema)?;
    if format != "+s" {
        return Err(Error::InvalidType(format!(
            "expected a table or record batch (an Arrow struct), got {}",
            type_name(format)
        )));
    }
    if array.length < 0 || array.offset < 0 || array.n_children != schema.n_children {
        return Err(decode("Arrow struct array does not match its schema"));
    }
    let n = schema.n_children.max(0) as usize;
    let mut columns = Vec::with_capacity(n);
    for i in 0..n {
        let s = &**schema.children.add(i);
        let a = &**array.children.add(i);
        let name = if s.name.is_null() {
            String::new()
        } else {
            CStr::from_ptr(s.name).to_string_lossy().into_owned()
        };
        if a.length < array.offset + array.length {
            return Err(decode(format!(
                "Arrow column {name:?} is shorter than its batch"
            )));
        }
        columns.push((name, s, a));
    }
    Ok(StructView {
        len: array.length as usize,
        offset: array.offset as usize,
        columns,
    })
}

/// int_column views an integer column (any width) or a `timestamp[ms]` column as integers.
///
/// # Safety
/// As for [`struct_view`].
pub unsafe fn int_column<'a>(
    schema: &FfiSchema,
    array: &FfiArray,
) -> Result<Option<Indices<'a>>, Error> {
    let format = format_of(schema)?;
    let kind = match format.as_bytes() {
        [k @ (b'c' | b'C' | b's' | b'S' | b'i' | b'I' | b'l' | b'L')] => *k,
        _ if format.starts_with("tsm:") => b'l',
        _ => return Ok(None),
    };
    let (len, off) = (array.length.max(0) as usize, array.offset.max(0) as usize);
    let data = buffer(array, 1)?;
    if data.is_null() && len > 0 {
        return Err(decode("Arrow buffer is missing"));
    }
    Ok(Some(Indices {
        kind,
        data,
        offset: off,
        len,
        validity: validity(array, off, len)?,
    }))
}

/// headers_from_c views a `list<struct<key, value>>` (or `large_list`) column as record headers:
/// keys `string`, `large_string` or `string_view`; values binary or string of any width, or of
/// the null type. Errors name what was found instead.
///
/// # Safety
/// As for [`struct_view`], for the array, its child and grandchildren.
pub unsafe fn headers_from_c<'a>(
    schema: &'a FfiSchema,
    array: &'a FfiArray,
) -> Result<HeaderColumn<'a>, Error> {
    const WANT: &str = "list<struct<key: string, value: binary>>";
    let format = format_of(schema)?;
    let wrong = |what: String| Error::InvalidType(format!("must be {WANT}, got {what}"));
    if format != "+l" && format != "+L" {
        return Err(wrong(type_name(format)));
    }
    if !schema.dictionary.is_null() {
        return Err(wrong("a dictionary".into()));
    }
    if schema.n_children != 1 || array.n_children != 1 {
        return Err(decode("Arrow list array does not have one child"));
    }
    if array.length < 0 || array.offset < 0 {
        return Err(decode("Arrow array has a negative length or offset"));
    }
    let entry_schema = &**schema.children;
    let entry = &**array.children;
    let entry_format = format_of(entry_schema)?;
    if entry_format != "+s" {
        return Err(wrong(format!("a list of {}", type_name(entry_format))));
    }
    if entry.n_children != entry_schema.n_children || entry.offset < 0 || entry.length < 0 {
        return Err(decode("Arrow struct array does not match its schema"));
    }
    let mut key = None;
    let mut value = None;
    let mut names = Vec::new();
    for i in 0..entry_schema.n_children.max(0) as usize {
        let s = &**entry_schema.children.add(i);
        let a = &**entry.children.add(i);
        let name = if s.name.is_null() {
            String::new()
        } else {
            CStr::from_ptr(s.name).to_string_lossy().into_owned()
        };
        match name.as_str() {
            "key" => key = Some((s, a)),
            "value" => value = Some((s, a)),
            _ => {}
        }
        names.push(name);
    }
    let (Some((ks, ka)), Some((vs, va))) = (key, value) else {
        return Err(wrong(format!("a list of struct with fields {names:?}")));
    };
    let kf = format_of(ks)?;
    if !matches!(kf, "u" | "U" | "vu") || !ks.dictionary.is_null() {
        return Err(Error::InvalidType(format!(
            "header key must be string or large_string, got {}",
            if ks.dictionary.is_null() {
                type_name(kf)
            } else {
                "a dictionary".into()
            }
        )));
    }
    let keys = column(kf, ka)?.expect("a string format");
    let vf = format_of(vs)?;
    let values = if vf == "n" {
        None
    } else {
        let c = if vs.dictionary.is_null() {
            column(vf, va)?
        } else {
            None
        };
        Some(c.ok_or_else(|| {
            Error::InvalidType(format!(
                "header value must be binary or string, got {}",
                if vs.dictionary.is_null() {
                    type_name(vf)
                } else {
                    "a dictionary".into()
                }
            ))
        })?)
    };
    let (len, off) = (array.length as usize, array.offset as usize);
    let offsets = if format == "+l" {
        let o = slice::<i32>(buffer(array, 1)?, off + len + 1)?;
        ListOffsets::I32(&o[off.min(o.len())..])
    } else {
        let o = slice::<i64>(buffer(array, 1)?, off + len + 1)?;
        ListOffsets::I64(&o[off.min(o.len())..])
    };
    let entry_offset = entry.offset as usize;
    Ok(HeaderColumn {
        offsets,
        validity: validity(array, off, len)?,
        entry_offset,
        entry_validity: validity(entry, 0, entry_offset + entry.length as usize)?,
        keys,
        values,
    })
}

/// describe is an Arrow format string as error messages name it.
pub fn describe(format: &str) -> String {
    type_name(format)
}
