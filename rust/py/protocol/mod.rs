//! Bindings for the Kafka wire protocol (`kgroup.protocol` wraps these).
//!
//! Decoding reads a frame into a Rust value tree with the GIL released and returns a view of it
//! (`views.rs`); encoding reads Python values (or a view) into a value tree that borrows their
//! bytes and strings, then writes the frame straight into a new Python `bytes`.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

mod convert;
mod fast;
pub(super) mod frame;
mod records;
pub(super) mod views;

use self::convert::{bytes_from_py, finish, keys, tagged_from_py, FromPy, Keep};
use self::fast::{Direct, Rope};
use self::views::{body_view, ArrayView, Decoded, Owner, StructView};
use super::errors::{to_pyerr, IntoPyResult};
use crate::errors::Error;
use crate::protocol::codec::{decode_message_in, encode_message, message_size};
use crate::protocol::frame as core_frame;
use crate::protocol::messages::coordinator_records::RECORDS;
use crate::protocol::messages::{APIS, REQUEST_HEADER, RESPONSE_HEADER};
use crate::protocol::primitives::{SliceBuf, Writer};
use crate::protocol::schema::{Api, DefaultValue, Field, Kind, Message};
use crate::protocol::value::Struct;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StructView>()?;
    m.add_class::<ArrayView>()?;
    self::frame::register(m)?;
    m.add_function(wrap_pyfunction!(decode_body, m)?)?;
    m.add_function(wrap_pyfunction!(encode_body, m)?)?;
    m.add_function(wrap_pyfunction!(body_size, m)?)?;
    m.add_function(wrap_pyfunction!(is_supported, m)?)?;
    m.add_function(wrap_pyfunction!(request_header_version, m)?)?;
    m.add_function(wrap_pyfunction!(response_header_version, m)?)?;
    m.add_function(wrap_pyfunction!(definitions, m)?)?;
    api_tables(m)?;
    super::submodule(m, "records", records::register)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// helpers

/// message_of is the request or response definition of `api_key` at `version`; a key or version
/// kgroup does not speak is the caller's error here (decoding reports it as
/// UnsupportedApiVersion instead).
fn message_of(
    py: Python<'_>,
    api_key: i16,
    version: i16,
    request: bool,
) -> PyResult<&'static Message> {
    let a = core_frame::lookup(api_key, version).map_err(|e| to_pyerr(py, e.into_argument()))?;
    Ok(if request { a.request } else { a.response })
}

fn owner_of(obj: &Bound<'_, PyAny>) -> PyResult<Owner> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Owner::Bytes(b.clone().unbind()));
    }
    bytes_from_py(obj)
        .map(|v| Owner::Copied(v.into_boxed_slice()))
        .map_err(|c| to_pyerr(obj.py(), Error::InvalidType(format!("frame: {}", c.err))))
}

/// Body is a body to encode: a view of the same message is written from its own tree.
enum Body<'k> {
    Tree(Struct<'k>),
    View(&'k Struct<'k>),
}

impl<'k> Body<'k> {
    fn get(&self) -> &Struct<'k> {
        match self {
            Body::Tree(s) => s,
            Body::View(s) => s,
        }
    }
}

/// body_from_py reads a body (plain values or a view of the same message) into a value tree
/// that borrows its bytes and strings; `msg` is checked to hold `version`.
fn body_from_py<'py, 'k>(
    py: Python<'py>,
    keep: &'k Keep<'py>,
    msg: &'static Message,
    version: i16,
    body: &Bound<'py, PyAny>,
) -> PyResult<Body<'k>> {
    if let Some(tree) = same_view(keep, msg, body) {
        return Ok(Body::View(tree));
    }
    FromPy {
        py,
        keys: keys(py),
        keep,
    }
    .structure(body, msg.fields)
    .map(Body::Tree)
    .map_err(|c| to_pyerr(py, finish(c, msg, version)))
}

/// same_view is the tree of `body` when it is a view of this very message.
fn same_view<'py, 'k>(
    keep: &'k Keep<'py>,
    msg: &Message,
    body: &Bound<'py, PyAny>,
) -> Option<&'k Struct<'k>> {
    let view = body.cast::<StructView>().ok()?;
    std::ptr::eq(view.get().fields(), msg.fields).then(|| keep.view(view))
}

/// direct writes a body given as plain Python values after whatever `w` holds.
fn direct<'py, 'k>(
    py: Python<'py>,
    keep: &'k Keep<'py>,
    w: &mut Writer<Rope<'k>>,
    msg: &'static Message,
    version: i16,
    body: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let d = Direct {
        py,
        keys: keys(py),
        keep,
        version,
        flexible: msg.is_flexible(version),
    };
    d.structure(w, body, msg.fields)
        .map_err(|c| to_pyerr(py, finish(c, msg, version)))
}

fn header_tagged(tagged: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(u32, Cow<'static, [u8]>)>> {
    match tagged {
        None => Ok(Vec::new()),
        Some(t) if t.is_none() => Ok(Vec::new()),
        Some(t) => tagged_from_py(t)
            .map(|v| v.into_iter().map(|(t, b)| (t, Cow::Owned(b))).collect())
            .map_err(|c| {
                to_pyerr(
                    t.py(),
                    Error::InvalidArgument(format!("header tagged fields: {}", c.err)),
                )
            }),
    }
}

// ---------------------------------------------------------------------------------------------
// bodies

/// Decode a request or response body alone (no header, no size prefix); every byte must be
/// used. The body is decoded with the GIL released.
#[pyfunction]
#[pyo3(signature = (api_key, version, data, *, request))]
fn decode_body<'py>(
    py: Python<'py>,
    api_key: i16,
    version: i16,
    data: &Bound<'py, PyAny>,
    request: bool,
) -> PyResult<Bound<'py, StructView>> {
    let a = core_frame::lookup(api_key, version).py_err(py)?;
    let msg = if request { a.request } else { a.response };
    let ((), root) = Decoded::decode(py, owner_of(data)?, |bytes, arena| {
        Ok((
            (),
            msg,
            version,
            decode_message_in(arena, msg, version, bytes)?,
        ))
    })?;
    body_view(py, root)
}

/// Encode a request or response body alone, without header or size prefix.
#[pyfunction]
#[pyo3(signature = (api_key, version, body, *, request))]
fn encode_body<'py>(
    py: Python<'py>,
    api_key: i16,
    version: i16,
    body: &Bound<'py, PyAny>,
    request: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let msg = message_of(py, api_key, version, request)?;
    let keep = Keep::new();
    let Some(tree) = same_view(&keep, msg, body) else {
        let mut w = Writer::over(Rope::new());
        direct(py, &keep, &mut w, msg, version, body)?;
        return w.buf.into_bytes(py);
    };
    let size = message_size(msg, version, tree).py_err(py)?;
    PyBytes::new_with(py, size, |buf| {
        let mut w = Writer::over(SliceBuf::new(buf));
        encode_message(&mut w, msg, version, tree).py_err(py)?;
        if w.buf.overflowed() || w.buf.written() != size {
            return Err(to_pyerr(
                py,
                Error::InvalidArgument("encoded body does not match its computed size".into()),
            ));
        }
        Ok(())
    })
}

/// The encoded size of a body, computed without encoding it.
#[pyfunction]
#[pyo3(signature = (api_key, version, body, *, request))]
fn body_size(
    py: Python<'_>,
    api_key: i16,
    version: i16,
    body: &Bound<'_, PyAny>,
    request: bool,
) -> PyResult<usize> {
    let msg = message_of(py, api_key, version, request)?;
    let keep = Keep::new();
    let body = body_from_py(py, &keep, msg, version, body)?;
    message_size(msg, version, body.get()).py_err(py)
}

/// Whether kgroup speaks this api key at this version.
#[pyfunction]
fn is_supported(api_key: i16, api_version: i16) -> bool {
    core_frame::lookup(api_key, api_version).is_ok()
}

/// The request header version of a request: 2 when its version is flexible, else 1.
#[pyfunction]
fn request_header_version(py: Python<'_>, api_key: i16, api_version: i16) -> PyResult<i16> {
    let a = message_api(py, api_key, api_version)?;
    Ok(a.request_header_version(api_version))
}

/// The response header version: 1 when flexible, else 0; always 0 for ApiVersions.
#[pyfunction]
fn response_header_version(py: Python<'_>, api_key: i16, api_version: i16) -> PyResult<i16> {
    let a = message_api(py, api_key, api_version)?;
    Ok(a.response_header_version(api_version))
}

fn message_api(py: Python<'_>, api_key: i16, version: i16) -> PyResult<&'static Api> {
    core_frame::lookup(api_key, version).map_err(|e| to_pyerr(py, e.into_argument()))
}

/// screaming turns Kafka's api name (`JoinGroup`) into its `ApiKeys` name (`JOIN_GROUP`).
fn screaming(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// api_tables adds what the api table says to the module: `API_VERSIONS` (key -> (min, max)),
/// `API_NAMES` (key -> name) and the `ApiKey` enum, named as in Kafka's `ApiKeys`.
fn api_tables(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let versions = PyDict::new(py);
    let names = PyDict::new(py);
    let members = PyList::empty(py);
    for a in APIS {
        versions.set_item(a.key, (a.versions().lo, a.versions().hi))?;
        names.set_item(a.key, a.name)?;
        members.append((screaming(a.name), a.key))?;
    }
    m.add("API_VERSIONS", versions)?;
    m.add("API_NAMES", names)?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("module", "kgroup.protocol")?;
    let enum_ = py
        .import("enum")?
        .getattr("IntEnum")?
        .call(("ApiKey", members), Some(&kwargs))?;
    enum_.setattr(
        "__doc__",
        "The api keys kgroup speaks, named as in Kafka's ApiKeys enum.",
    )?;
    m.add("ApiKey", enum_)?;
    Ok(())
}

fn fields_to_py<'py>(py: Python<'py>, fields: &'static [Field]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for f in fields {
        let d = PyDict::new(py);
        d.set_item("name", f.name)?;
        d.set_item("type", f.ty.kafka_name())?;
        d.set_item("versions", f.versions.to_string())?;
        d.set_item("nullable_versions", f.nullable.to_string())?;
        d.set_item("tag", f.tag)?;
        d.set_item("tagged_versions", f.tagged.to_string())?;
        d.set_item("flexible_versions", f.flexible.map(|v| v.to_string()))?;
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
    let kind = match m.kind {
        Kind::Request => "request",
        Kind::Response => "response",
        Kind::Header => "header",
    };
    d.set_item("type", kind)?;
    d.set_item("valid_versions", m.valid.to_string())?;
    d.set_item("flexible_versions", m.flexible.to_string())?;
    d.set_item("fields", fields_to_py(py, m.fields)?)?;
    Ok(d)
}

/// Every message definition (requests, responses, the two headers, then the coordinators'
/// record schemas, which are header-kind tables) as plain data: name,
/// api key, type, valid and flexible versions, and fields with their versions, nullable
/// versions, tags, defaults and nested fields, in Kafka's version syntax (`"3+"`).
#[pyfunction]
fn definitions(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for a in APIS {
        list.append(message_to_py(py, a.request)?)?;
        list.append(message_to_py(py, a.response)?)?;
    }
    list.append(message_to_py(py, &REQUEST_HEADER)?)?;
    list.append(message_to_py(py, &RESPONSE_HEADER)?)?;
    for m in RECORDS {
        list.append(message_to_py(py, m)?)?;
    }
    Ok(list)
}
