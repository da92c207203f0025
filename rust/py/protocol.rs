//! Bindings for the Kafka wire protocol (`kgroup.protocol` wraps these).
//!
//! Bodies cross as plain Python values shaped by the definitions: a struct is a `dict` keyed by
//! the snake_case field names of its version, an array a `list`, strings `str`, bytes and
//! records `bytes`, UUIDs `uuid.UUID`, integers `int`, booleans `bool`, null `None`. Tagged
//! fields a definition does not know travel under the key `unknown_tagged_fields` as
//! `{tag: bytes}` (present only when there are some).
//!
//! Decoding runs in two steps: the frame is decoded into a Rust value tree with the GIL
//! released, then the Python objects are built. Encoding reads the Python values into a value
//! tree, then writes it.

use std::borrow::Cow;
use std::collections::HashMap;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple, PyType};

use super::errors::{to_pyerr, IntoPyResult};
use crate::error::Error;
use crate::protocol::codec::{decode_message, encode_to_vec, message_size};
use crate::protocol::frame::{self, RequestHeader};
use crate::protocol::messages::{api, APIS, REQUEST_HEADER, RESPONSE_HEADER};
use crate::protocol::schema::{DefaultValue, Field, Kind, Message, Type, Versions};
use crate::protocol::value::{default_value, Struct, Value};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(protocol_decode_request, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_decode_request_header, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_encode_request, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_decode_response, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_encode_response, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_decode_body, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_encode_body, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_body_size, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_frame_size, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_apis, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_schema, m)?)?;
    Ok(())
}

const UNKNOWN_TAGGED: &str = "unknown_tagged_fields";

// ---------------------------------------------------------------------------------------------
// interned names and the uuid class

/// KEYS holds the interned field names of every struct, by the address of its field list, so a
/// dict is built without creating a key string per field.
static KEYS: PyOnceLock<HashMap<usize, Vec<Py<PyString>>>> = PyOnceLock::new();
static UUID_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn keys(py: Python<'_>) -> &HashMap<usize, Vec<Py<PyString>>> {
    KEYS.get_or_init(py, || {
        fn walk(py: Python<'_>, fields: &'static [Field], map: &mut HashMap<usize, Vec<Py<PyString>>>) {
            map.entry(fields.as_ptr() as usize)
                .or_insert_with(|| fields.iter().map(|f| PyString::intern(py, f.name).unbind()).collect());
            for f in fields {
                if !f.fields.is_empty() {
                    walk(py, f.fields, map);
                }
            }
        }
        let mut map = HashMap::new();
        for a in APIS {
            walk(py, a.request.fields, &mut map);
            walk(py, a.response.fields, &mut map);
        }
        walk(py, REQUEST_HEADER.fields, &mut map);
        walk(py, RESPONSE_HEADER.fields, &mut map);
        map
    })
}

fn names_of<'a>(py: Python<'_>, map: &'a HashMap<usize, Vec<Py<PyString>>>, fields: &'static [Field]) -> PyResult<&'a [Py<PyString>]> {
    map.get(&(fields.as_ptr() as usize))
        .map(|v| v.as_slice())
        .ok_or_else(|| to_pyerr(py, Error::InvalidArgument("struct not in the definitions".into())))
}

fn uuid_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UUID_CLASS.import(py, "uuid", "UUID")
}

// ---------------------------------------------------------------------------------------------
// Value -> Python

struct ToPy<'py> {
    py: Python<'py>,
    keys: &'py HashMap<usize, Vec<Py<PyString>>>,
    version: i16,
}

impl<'py> ToPy<'py> {
    fn structure(&self, s: &Struct<'_>, fields: &'static [Field]) -> PyResult<Bound<'py, PyDict>> {
        let py = self.py;
        let names = names_of(py, self.keys, fields)?;
        let d = PyDict::new(py);
        for ((f, v), name) in fields.iter().zip(&s.fields).zip(names) {
            if f.versions.contains(self.version) {
                d.set_item(name.bind(py), self.value(v, f)?)?;
            }
        }
        if !s.unknown_tagged.is_empty() {
            d.set_item(UNKNOWN_TAGGED, tagged_to_py(py, &s.unknown_tagged)?)?;
        }
        Ok(d)
    }

    fn value(&self, v: &Value<'_>, f: &'static Field) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match v {
            Value::Null => py.None().into_bound(py),
            Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
            Value::Int8(x) => x.into_pyobject(py)?.into_any(),
            Value::Int16(x) => x.into_pyobject(py)?.into_any(),
            Value::Int32(x) => x.into_pyobject(py)?.into_any(),
            Value::Int64(x) => x.into_pyobject(py)?.into_any(),
            Value::Uint16(x) => x.into_pyobject(py)?.into_any(),
            Value::Float64(x) => x.into_pyobject(py)?.into_any(),
            Value::Uuid(u) => uuid_to_py(py, u)?,
            Value::String(s) => PyString::new(py, s).into_any(),
            Value::Bytes(b) => PyBytes::new(py, b).into_any(),
            Value::Struct(s) => self.structure(s, f.fields)?.into_any(),
            Value::Array(items) => {
                let list = PyList::empty(py);
                for item in items {
                    list.append(self.value(item, f)?)?;
                }
                list.into_any()
            }
        })
    }
}

fn uuid_to_py<'py>(py: Python<'py>, u: &[u8; 16]) -> PyResult<Bound<'py, PyAny>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item(pyo3::intern!(py, "int"), u128::from_be_bytes(*u))?;
    uuid_class(py)?.call((), Some(&kwargs))
}

fn tagged_to_py<'py>(py: Python<'py>, tagged: &[(u32, Cow<'_, [u8]>)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (tag, raw) in tagged {
        d.set_item(tag, PyBytes::new(py, raw))?;
    }
    Ok(d)
}

fn body_to_py<'py>(py: Python<'py>, msg: &Message, version: i16, body: &Struct<'_>) -> PyResult<Bound<'py, PyDict>> {
    let keys = keys(py);
    ToPy { py, keys, version }.structure(body, msg.fields)
}

// ---------------------------------------------------------------------------------------------
// Python -> Value

/// Conv is a conversion error with the path to the value that caused it.
struct Conv {
    err: Error,
    path: Vec<String>,
}

impl From<Error> for Conv {
    fn from(err: Error) -> Self {
        Conv { err, path: Vec::new() }
    }
}

type ConvResult<T> = Result<T, Conv>;

fn at(mut c: Conv, seg: String) -> Conv {
    c.path.push(seg);
    c
}

fn finish(c: Conv, msg: &Message, version: i16) -> Error {
    let mut place = format!("{} v{version}", msg.name);
    for (i, seg) in c.path.iter().rev().enumerate() {
        if !seg.starts_with('[') {
            place.push_str(if i == 0 { ": " } else { "." });
        }
        place.push_str(seg);
    }
    let text = format!("{place}: {}", c.err);
    match c.err {
        Error::Decode(_) | Error::InvalidArgument(_) => Error::InvalidArgument(text),
        Error::InvalidType(_) => Error::InvalidType(text),
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

fn wrong_type(expected: &str, obj: &Bound<'_, PyAny>) -> Conv {
    Error::InvalidType(format!("expected {expected}, got {}", type_name(obj))).into()
}

/// py_err turns a Python exception raised while reading a value into a conversion error.
fn py_err(py: Python<'_>, e: PyErr) -> Conv {
    let text = e.value(py).to_string();
    if e.is_instance_of::<PyOverflowError>(py) {
        Error::InvalidArgument(format!("out of range: {text}")).into()
    } else if e.is_instance_of::<PyTypeError>(py) {
        Error::InvalidType(text).into()
    } else {
        Error::InvalidArgument(text).into()
    }
}

struct FromPy<'py> {
    py: Python<'py>,
    keys: &'py HashMap<usize, Vec<Py<PyString>>>,
}

impl<'py> FromPy<'py> {
    fn structure(&self, obj: &Bound<'py, PyAny>, fields: &'static [Field]) -> ConvResult<Struct<'static>> {
        let py = self.py;
        let names = names_of(py, self.keys, fields).map_err(|e| py_err(py, e))?;
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
            if let Some(t) = d.get_item(UNKNOWN_TAGGED).map_err(|e| py_err(py, e))? {
                found += 1;
                unknown_tagged = tagged_from_py(&t).map_err(|c| at(c, UNKNOWN_TAGGED.to_string()))?;
            }
            if found != d.len() {
                return Err(unknown_key(d, fields));
            }
        } else if obj.is_none() {
            return Err(wrong_type("a dict", obj));
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
                    unknown_tagged = tagged_from_py(&t).map_err(|c| at(c, UNKNOWN_TAGGED.to_string()))?;
                }
            }
        }
        Ok(Struct { fields: out, unknown_tagged })
    }

    fn field(&self, v: &Bound<'py, PyAny>, f: &'static Field) -> ConvResult<Value<'static>> {
        if v.is_none() {
            return match f.ty {
                // None for a struct means its defaults.
                Type::Struct => Ok(default_value(f)),
                // Nullability is checked against the version by the encoder.
                _ => Ok(Value::Null),
            };
        }
        match f.ty {
            Type::Struct => Ok(Value::Struct(self.structure(v, f.fields)?)),
            Type::Array(elem) => {
                let mut items = Vec::new();
                let mut push = |i: usize, item: &Bound<'py, PyAny>| -> ConvResult<()> {
                    let value = match elem {
                        Type::Struct => self.structure(item, f.fields).map(Value::Struct),
                        t => self.scalar(item, *t),
                    };
                    items.push(value.map_err(|c| at(c, format!("[{i}]")))?);
                    Ok(())
                };
                if let Ok(list) = v.cast::<PyList>() {
                    for (i, item) in list.iter().enumerate() {
                        push(i, &item)?;
                    }
                } else if let Ok(tuple) = v.cast::<PyTuple>() {
                    for (i, item) in tuple.iter().enumerate() {
                        push(i, &item)?;
                    }
                } else if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() || v.is_instance_of::<PyDict>() {
                    return Err(wrong_type("a list", v));
                } else {
                    let it = v.try_iter().map_err(|_| wrong_type("a list", v))?;
                    for (i, item) in it.enumerate() {
                        push(i, &item.map_err(|e| py_err(self.py, e))?)?;
                    }
                }
                Ok(Value::Array(items))
            }
            t => self.scalar(v, t),
        }
    }

    fn scalar(&self, v: &Bound<'py, PyAny>, ty: Type) -> ConvResult<Value<'static>> {
        let py = self.py;
        let int = |what: &str| -> ConvResult<()> {
            if v.is_instance_of::<pyo3::types::PyInt>() {
                Ok(())
            } else {
                Err(wrong_type(what, v))
            }
        };
        Ok(match ty {
            Type::Bool => {
                Value::Bool(v.cast::<pyo3::types::PyBool>().map_err(|_| wrong_type("bool", v))?.is_true())
            }
            Type::Int8 => {
                int("int")?;
                Value::Int8(v.extract().map_err(|e| py_err(py, e))?)
            }
            Type::Int16 => {
                int("int")?;
                Value::Int16(v.extract().map_err(|e| py_err(py, e))?)
            }
            Type::Int32 => {
                int("int")?;
                Value::Int32(v.extract().map_err(|e| py_err(py, e))?)
            }
            Type::Int64 => {
                int("int")?;
                Value::Int64(v.extract().map_err(|e| py_err(py, e))?)
            }
            Type::Uint16 => {
                int("int")?;
                Value::Uint16(v.extract().map_err(|e| py_err(py, e))?)
            }
            Type::Float64 => Value::Float64(v.extract().map_err(|_| wrong_type("float", v))?),
            Type::Uuid => Value::Uuid(uuid_from_py(v)?),
            Type::String => {
                let s = v.cast::<PyString>().map_err(|_| wrong_type("str", v))?;
                let text = s.to_str().map_err(|_| Conv::from(Error::InvalidArgument("string is not valid UTF-8 (it holds a lone surrogate)".into())))?;
                Value::String(Cow::Owned(text.to_owned()))
            }
            Type::Bytes | Type::Records => Value::Bytes(Cow::Owned(bytes_from_py(v)?)),
            Type::Struct | Type::Array(_) => return Err(wrong_type("a scalar", v)),
        })
    }
}

fn unknown_key(d: &Bound<'_, PyDict>, fields: &'static [Field]) -> Conv {
    for k in d.keys() {
        let known = k
            .cast::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok().map(|s| s == UNKNOWN_TAGGED || fields.iter().any(|f| f.name == s)))
            .unwrap_or(false);
        if !known {
            let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
            return Error::InvalidArgument(format!("unknown field {k:?} (fields: {})", names.join(", "))).into();
        }
    }
    Error::InvalidArgument("unknown field".into()).into()
}

fn uuid_from_py(v: &Bound<'_, PyAny>) -> ConvResult<[u8; 16]> {
    let py = v.py();
    if let Ok(b) = v.cast::<PyBytes>() {
        return b.as_bytes().try_into().map_err(|_| Error::InvalidArgument("a UUID needs 16 bytes".into()).into());
    }
    let cls = uuid_class(py).map_err(|e| py_err(py, e))?;
    if !v.is_instance(cls).map_err(|e| py_err(py, e))? {
        return Err(wrong_type("uuid.UUID", v));
    }
    let n: u128 = v.getattr(pyo3::intern!(py, "int")).and_then(|i| i.extract()).map_err(|e| py_err(py, e))?;
    Ok(n.to_be_bytes())
}

fn bytes_from_py(v: &Bound<'_, PyAny>) -> ConvResult<Vec<u8>> {
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

fn tagged_from_py(t: &Bound<'_, PyAny>) -> ConvResult<Vec<(u32, Cow<'static, [u8]>)>> {
    let d = t.cast::<PyDict>().map_err(|_| wrong_type("a dict of {tag: bytes}", t))?;
    let mut out = Vec::with_capacity(d.len());
    for (k, v) in d.iter() {
        let tag: u32 = k.extract().map_err(|_| wrong_type("an int tag", &k))?;
        out.push((tag, Cow::Owned(bytes_from_py(&v).map_err(|c| at(c, format!("[{tag}]")))?)));
    }
    out.sort_by_key(|(t, _)| *t);
    Ok(out)
}

fn body_from_py(py: Python<'_>, msg: &Message, version: i16, body: &Bound<'_, PyAny>) -> PyResult<Struct<'static>> {
    if !msg.valid.contains(version) {
        return Err(to_pyerr(
            py,
            Error::InvalidArgument(format!("{} version {version} is not supported (versions {})", msg.name, msg.valid)),
        ));
    }
    let keys = keys(py);
    FromPy { py, keys }.structure(body, msg.fields).map_err(|c| to_pyerr(py, finish(c, msg, version)))
}

// ---------------------------------------------------------------------------------------------
// frames

/// Frame is the bytes to decode: a `bytes` object is read in place (it is immutable, so the GIL
/// can be released while reading it); anything else is copied first.
enum Frame<'py> {
    Bytes(Bound<'py, PyBytes>),
    Copied(Vec<u8>),
}

impl Frame<'_> {
    fn new<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Frame<'py>> {
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(Frame::Bytes(b.clone()));
        }
        bytes_from_py(obj)
            .map(Frame::Copied)
            .map_err(|c| to_pyerr(obj.py(), Error::InvalidType(format!("frame: {}", c.err))))
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Frame::Bytes(b) => b.as_bytes(),
            Frame::Copied(v) => v,
        }
    }
}

fn kind_of(py: Python<'_>, api_key: i16, request: bool) -> PyResult<&'static Message> {
    let a = api(api_key).ok_or_else(|| to_pyerr(py, Error::InvalidArgument(format!("unknown api key {api_key}"))))?;
    Ok(if request { a.request } else { a.response })
}

fn header_tagged_from_py(tagged: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(u32, Cow<'static, [u8]>)>> {
    match tagged {
        None => Ok(Vec::new()),
        Some(t) if t.is_none() => Ok(Vec::new()),
        Some(t) => tagged_from_py(t).map_err(|c| to_pyerr(t.py(), Error::InvalidArgument(format!("header tagged fields: {}", c.err)))),
    }
}

fn optional_tagged<'py>(py: Python<'py>, tagged: &[(u32, Cow<'_, [u8]>)]) -> PyResult<Option<Bound<'py, PyDict>>> {
    if tagged.is_empty() {
        Ok(None)
    } else {
        tagged_to_py(py, tagged).map(Some)
    }
}

/// protocol_decode_request(frame) -> (api_key, api_version, correlation_id, client_id,
/// header_tagged_fields | None, body): decode one request frame (after its size prefix).
#[pyfunction]
fn protocol_decode_request<'py>(py: Python<'py>, frame: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let frame = Frame::new(frame)?;
    let data = frame.as_slice();
    let req = py.detach(|| frame::decode_request(data)).py_err(py)?;
    let body = body_to_py(py, req.api.request, req.header.api_version, &req.body)?;
    let h = &req.header;
    (h.api_key, h.api_version, h.correlation_id, h.client_id.as_deref(), optional_tagged(py, &h.unknown_tagged)?, body)
        .into_pyobject(py)
}

/// protocol_decode_request_header(frame) -> (api_key, api_version, correlation_id, client_id,
/// header_tagged_fields | None, header_length): read only the header, whatever the api.
#[pyfunction]
fn protocol_decode_request_header<'py>(py: Python<'py>, frame: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let frame = Frame::new(frame)?;
    let (h, n) = frame::decode_request_header(frame.as_slice()).py_err(py)?;
    (h.api_key, h.api_version, h.correlation_id, h.client_id.as_deref(), optional_tagged(py, &h.unknown_tagged)?, n)
        .into_pyobject(py)
}

/// protocol_encode_request(api_key, api_version, correlation_id, client_id, body,
/// header_tagged_fields=None) -> bytes: a whole request frame, size prefix included.
#[pyfunction]
#[pyo3(signature = (api_key, api_version, correlation_id, client_id, body, header_tagged_fields=None))]
fn protocol_encode_request<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &Bound<'py, PyAny>,
    header_tagged_fields: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let msg = kind_of(py, api_key, true)?;
    let body = body_from_py(py, msg, api_version, body)?;
    let header = RequestHeader {
        api_key,
        api_version,
        correlation_id,
        client_id: client_id.map(Cow::Borrowed),
        unknown_tagged: header_tagged_from_py(header_tagged_fields)?,
    };
    let out = frame::encode_request(&header, &body).py_err(py)?;
    Ok(PyBytes::new(py, &out))
}

/// protocol_decode_response(api_key, api_version, frame) -> (correlation_id,
/// header_tagged_fields | None, version_read, body).
#[pyfunction]
fn protocol_decode_response<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    frame: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let frame = Frame::new(frame)?;
    let data = frame.as_slice();
    let resp = py.detach(|| frame::decode_response(api_key, api_version, data)).py_err(py)?;
    let msg = kind_of(py, api_key, false)?;
    let body = body_to_py(py, msg, resp.version, &resp.body)?;
    (resp.correlation_id, optional_tagged(py, &resp.unknown_tagged)?, resp.version, body).into_pyobject(py)
}

/// protocol_encode_response(api_key, api_version, correlation_id, body,
/// header_tagged_fields=None) -> bytes: a whole response frame, size prefix included.
#[pyfunction]
#[pyo3(signature = (api_key, api_version, correlation_id, body, header_tagged_fields=None))]
fn protocol_encode_response<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    body: &Bound<'py, PyAny>,
    header_tagged_fields: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let msg = kind_of(py, api_key, false)?;
    let body = body_from_py(py, msg, api_version, body)?;
    let tagged = header_tagged_from_py(header_tagged_fields)?;
    let out = frame::encode_response_tagged(api_key, api_version, correlation_id, &tagged, &body).py_err(py)?;
    Ok(PyBytes::new(py, &out))
}

/// protocol_decode_body(api_key, api_version, request, data) -> dict: a body without header.
#[pyfunction]
fn protocol_decode_body<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    request: bool,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let msg = kind_of(py, api_key, request)?;
    let frame = Frame::new(data)?;
    let bytes = frame.as_slice();
    let body = py.detach(|| decode_message(msg, api_version, bytes)).py_err(py)?;
    body_to_py(py, msg, api_version, &body)
}

/// protocol_encode_body(api_key, api_version, request, body) -> bytes: a body without header.
#[pyfunction]
fn protocol_encode_body<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    request: bool,
    body: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let msg = kind_of(py, api_key, request)?;
    let body = body_from_py(py, msg, api_version, body)?;
    let out = encode_to_vec(msg, api_version, &body).py_err(py)?;
    Ok(PyBytes::new(py, &out))
}

/// protocol_body_size(api_key, api_version, request, body) -> int: the encoded size of a body,
/// computed without encoding it.
#[pyfunction]
fn protocol_body_size(py: Python<'_>, api_key: i16, api_version: i16, request: bool, body: &Bound<'_, PyAny>) -> PyResult<usize> {
    let msg = kind_of(py, api_key, request)?;
    let body = body_from_py(py, msg, api_version, body)?;
    message_size(msg, api_version, &body).py_err(py)
}

/// protocol_frame_size(prefix, max_size) -> int: the size a 4-byte frame prefix announces.
#[pyfunction]
fn protocol_frame_size(py: Python<'_>, prefix: &Bound<'_, PyAny>, max_size: usize) -> PyResult<usize> {
    let frame = Frame::new(prefix)?;
    let b: [u8; 4] = frame
        .as_slice()
        .try_into()
        .map_err(|_| to_pyerr(py, Error::Decode(format!("a frame size prefix is 4 bytes, got {}", frame.as_slice().len()))))?;
    frame::frame_size(b, max_size).py_err(py)
}

/// protocol_apis() -> list of (api_key, name, min_version, max_version, first_flexible_request
/// | None, first_flexible_response | None).
#[pyfunction]
fn protocol_apis(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    let first = |v: Versions| if v.is_empty() { None } else { Some(v.lo) };
    for a in APIS {
        list.append((a.key, a.name, a.versions().lo, a.versions().hi, first(a.request.flexible), first(a.response.flexible)))?;
    }
    Ok(list)
}

fn versions_str(v: Versions) -> String {
    v.to_string()
}

fn fields_to_py<'py>(py: Python<'py>, fields: &'static [Field]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for f in fields {
        let d = PyDict::new(py);
        d.set_item("name", f.name)?;
        d.set_item("type", f.ty.kafka_name())?;
        d.set_item("versions", versions_str(f.versions))?;
        d.set_item("nullable_versions", versions_str(f.nullable))?;
        d.set_item("tag", f.tag)?;
        d.set_item("tagged_versions", versions_str(f.tagged))?;
        d.set_item("flexible_versions", f.flexible.map(versions_str))?;
        let default: Option<String> = match f.default {
            DefaultValue::Zero => None,
            DefaultValue::Null => Some("null".into()),
            DefaultValue::Int(i) => Some(i.to_string()),
            DefaultValue::Bool(b) => Some(b.to_string()),
            DefaultValue::Float(x) => Some(x.to_string()),
            DefaultValue::Str(s) => Some(s.to_string()),
        };
        d.set_item("default", default)?;
        d.set_item("ignorable", f.ignorable)?;
        d.set_item("fields", fields_to_py(py, f.fields)?)?;
        list.append(d)?;
    }
    Ok(list)
}

fn message_to_py<'py>(py: Python<'py>, m: &'static Message) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", m.name)?;
    d.set_item("api_key", m.api_key)?;
    d.set_item(
        "type",
        match m.kind {
            Kind::Request => "request",
            Kind::Response => "response",
            Kind::Header => "header",
        },
    )?;
    d.set_item("valid_versions", versions_str(m.valid))?;
    d.set_item("flexible_versions", versions_str(m.flexible))?;
    d.set_item("fields", fields_to_py(py, m.fields)?)?;
    Ok(d)
}

/// protocol_schema() -> list of dicts: every definition (requests, responses, the two
/// headers) with its fields, versions in Kafka's syntax; for tests and the spec check.
#[pyfunction]
fn protocol_schema(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for a in APIS {
        list.append(message_to_py(py, a.request)?)?;
        list.append(message_to_py(py, a.response)?)?;
    }
    list.append(message_to_py(py, &REQUEST_HEADER)?)?;
    list.append(message_to_py(py, &RESPONSE_HEADER)?)?;
    Ok(list)
}
