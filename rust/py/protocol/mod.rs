//! Bindings for the Kafka wire protocol (`kgroup.protocol` wraps these).
//!
//! Decoding reads a frame into a Rust value tree with the GIL released and returns a view of it
//! (`views.rs`); encoding reads Python values (or a view) into a value tree that borrows their
//! bytes and strings, then writes the frame straight into a new Python `bytes`.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

mod convert;
mod fast;
mod views;

use self::convert::{bytes_from_py, finish, keys, optional_tagged, tagged_from_py, FromPy, Keep};
use self::fast::{Direct, Rope};
use self::views::{body_view, ArrayView, Decoded, Owner, StructView};
use super::errors::{to_pyerr, IntoPyResult};
use crate::error::Error;
use crate::protocol::codec::{decode_message_in, encode_message, message_size};
use crate::protocol::frame::{self, Prepared, RequestHeader};
use crate::protocol::messages::{api, APIS, REQUEST_HEADER, RESPONSE_HEADER};
use crate::protocol::primitives::{SliceBuf, Writer};
use crate::protocol::schema::{DefaultValue, Field, Kind, Message, Versions};
use crate::protocol::value::Struct;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StructView>()?;
    m.add_class::<ArrayView>()?;
    m.add_function(wrap_pyfunction!(protocol_decode_request, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_decode_request_header, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_encode_request, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_decode_response, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_encode_response, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_decode_body, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_encode_body, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_encode_body_tree, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_body_size, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_frame_size, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_apis, m)?)?;
    m.add_function(wrap_pyfunction!(protocol_schema, m)?)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// helpers

fn message_of(py: Python<'_>, api_key: i16, request: bool) -> PyResult<&'static Message> {
    let a = api(api_key).ok_or_else(|| {
        to_pyerr(
            py,
            Error::InvalidArgument(format!("unknown api key {api_key}")),
        )
    })?;
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

fn body_from_py<'py, 'k>(
    py: Python<'py>,
    keep: &'k Keep<'py>,
    msg: &'static Message,
    version: i16,
    body: &Bound<'py, PyAny>,
) -> PyResult<Body<'k>> {
    if !msg.valid.contains(version) {
        return Err(to_pyerr(
            py,
            Error::InvalidArgument(format!(
                "{} version {version} is not supported (versions {})",
                msg.name, msg.valid
            )),
        ));
    }
    if let Ok(view) = body.cast::<StructView>() {
        if std::ptr::eq(view.get().fields(), msg.fields) {
            return Ok(Body::View(keep.view(view)));
        }
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

fn check_version(py: Python<'_>, msg: &Message, version: i16) -> PyResult<()> {
    if msg.valid.contains(version) {
        Ok(())
    } else {
        Err(to_pyerr(
            py,
            Error::InvalidArgument(format!(
                "{} version {version} is not supported (versions {})",
                msg.name, msg.valid
            )),
        ))
    }
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

/// finish_frame writes the size prefix over the placeholder at the start and makes the bytes.
fn finish_frame<'py>(py: Python<'py>, mut w: Writer<Rope<'_>>) -> PyResult<Bound<'py, PyBytes>> {
    let size = w.buf.len() - 4;
    if size > i32::MAX as usize {
        return Err(to_pyerr(
            py,
            Error::InvalidArgument(format!("message of {size} bytes is too large for a frame")),
        ));
    }
    w.buf.patch(0, &(size as i32).to_be_bytes());
    w.buf.into_bytes(py)
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

/// write_frame writes a prepared frame straight into a new `bytes` of its exact length.
fn write_frame<'py>(py: Python<'py>, prepared: &Prepared<'_>) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, prepared.len(), |buf| {
        let mut w = Writer::over(SliceBuf::new(buf));
        prepared.write(&mut w).py_err(py)?;
        if w.buf.overflowed() || w.buf.written() != prepared.len() {
            return Err(to_pyerr(
                py,
                Error::InvalidArgument("encoded frame does not match its computed size".into()),
            ));
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// requests and responses

/// protocol_decode_request(frame) -> (api_key, api_version, correlation_id, client_id,
/// header_tagged_fields | None, body view): decode one request frame (after its size prefix).
#[pyfunction]
fn protocol_decode_request<'py>(
    py: Python<'py>,
    frame: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (header, root) = Decoded::decode(py, owner_of(frame)?, |data, arena| {
        let req = frame::decode_request_in(arena, data)?;
        let version = req.header.api_version;
        Ok((req.header.into_owned(), req.api.request, version, req.body))
    })?;
    let body = body_view(py, root)?;
    let h = header;
    (
        h.api_key,
        h.api_version,
        h.correlation_id,
        h.client_id.as_deref(),
        optional_tagged(py, &h.unknown_tagged)?,
        body,
    )
        .into_pyobject(py)
}

/// protocol_decode_request_header(frame) -> (api_key, api_version, correlation_id, client_id,
/// header_tagged_fields | None, header_length): read only the header, whatever the api.
#[pyfunction]
fn protocol_decode_request_header<'py>(
    py: Python<'py>,
    frame: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let data = match frame.cast::<PyBytes>() {
        Ok(b) => Cow::Borrowed(b.as_bytes()),
        Err(_) => Cow::Owned(
            bytes_from_py(frame)
                .map_err(|c| to_pyerr(py, Error::InvalidType(format!("frame: {}", c.err))))?,
        ),
    };
    let (h, n) = frame::decode_request_header(&data).py_err(py)?;
    (
        h.api_key,
        h.api_version,
        h.correlation_id,
        h.client_id.as_deref(),
        optional_tagged(py, &h.unknown_tagged)?,
        n,
    )
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
    let msg = message_of(py, api_key, true)?;
    check_version(py, msg, api_version)?;
    let keep = Keep::new();
    let header = RequestHeader {
        api_key,
        api_version,
        correlation_id,
        client_id: client_id.map(Cow::Borrowed),
        unknown_tagged: header_tagged(header_tagged_fields)?,
    };
    if let Some(tree) = same_view(&keep, msg, body) {
        let prepared = frame::prepare_request(&header, tree).py_err(py)?;
        return write_frame(py, &prepared);
    }
    let mut w = Writer::over(Rope::new());
    w.i32(0);
    frame::write_request_header(&mut w, &header).py_err(py)?;
    direct(py, &keep, &mut w, msg, api_version, body)?;
    finish_frame(py, w)
}

/// protocol_decode_response(api_key, api_version, frame) -> (correlation_id,
/// header_tagged_fields | None, version_read, body view).
#[pyfunction]
fn protocol_decode_response<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    frame: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let msg = message_of(py, api_key, false)
        .map_err(|_| to_pyerr(py, Error::Decode(format!("unknown api key {api_key}"))))?;
    let ((correlation_id, tagged), root) = Decoded::decode(py, owner_of(frame)?, |data, arena| {
        let resp = frame::decode_response_in(arena, api_key, api_version, data)?;
        let tagged: Vec<(u32, Cow<'static, [u8]>)> = resp
            .unknown_tagged
            .into_iter()
            .map(|(t, b)| (t, Cow::Owned(b.into_owned())))
            .collect();
        Ok(((resp.correlation_id, tagged), msg, resp.version, resp.body))
    })?;
    let version = root.version;
    let body = body_view(py, root)?;
    (correlation_id, optional_tagged(py, &tagged)?, version, body).into_pyobject(py)
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
    let msg = message_of(py, api_key, false)?;
    let keep = Keep::new();
    let body = body_from_py(py, &keep, msg, api_version, body)?;
    let tagged = header_tagged(header_tagged_fields)?;
    let prepared =
        frame::prepare_response(api_key, api_version, correlation_id, &tagged, body.get())
            .py_err(py)?;
    write_frame(py, &prepared)
}

/// protocol_decode_body(api_key, api_version, request, data) -> body view: a body without
/// header; every byte must be used.
#[pyfunction]
fn protocol_decode_body<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    request: bool,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, StructView>> {
    let msg = message_of(py, api_key, request)?;
    let ((), root) = Decoded::decode(py, owner_of(data)?, |bytes, arena| {
        Ok((
            (),
            msg,
            api_version,
            decode_message_in(arena, msg, api_version, bytes)?,
        ))
    })?;
    body_view(py, root)
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
    let msg = message_of(py, api_key, request)?;
    check_version(py, msg, api_version)?;
    let keep = Keep::new();
    if same_view(&keep, msg, body).is_none() {
        let mut w = Writer::over(Rope::new());
        direct(py, &keep, &mut w, msg, api_version, body)?;
        return w.buf.into_bytes(py);
    }
    tree_body(py, &keep, msg, api_version, body)
}

/// protocol_encode_body_tree(api_key, api_version, request, body) -> bytes: as
/// protocol_encode_body, always through a value tree (for tests comparing the two encoders).
#[pyfunction]
fn protocol_encode_body_tree<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    request: bool,
    body: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let msg = message_of(py, api_key, request)?;
    let keep = Keep::new();
    tree_body(py, &keep, msg, api_version, body)
}

fn tree_body<'py>(
    py: Python<'py>,
    keep: &Keep<'py>,
    msg: &'static Message,
    api_version: i16,
    body: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let body = body_from_py(py, keep, msg, api_version, body)?;
    let size = message_size(msg, api_version, body.get()).py_err(py)?;
    PyBytes::new_with(py, size, |buf| {
        let mut w = Writer::over(SliceBuf::new(buf));
        encode_message(&mut w, msg, api_version, body.get()).py_err(py)?;
        if w.buf.overflowed() || w.buf.written() != size {
            return Err(to_pyerr(
                py,
                Error::InvalidArgument("encoded body does not match its computed size".into()),
            ));
        }
        Ok(())
    })
}

/// protocol_body_size(api_key, api_version, request, body) -> int: the encoded size of a body,
/// computed without encoding it.
#[pyfunction]
fn protocol_body_size(
    py: Python<'_>,
    api_key: i16,
    api_version: i16,
    request: bool,
    body: &Bound<'_, PyAny>,
) -> PyResult<usize> {
    let msg = message_of(py, api_key, request)?;
    let keep = Keep::new();
    let body = body_from_py(py, &keep, msg, api_version, body)?;
    message_size(msg, api_version, body.get()).py_err(py)
}

/// protocol_frame_size(prefix, max_size) -> int: the size a 4-byte frame prefix announces.
#[pyfunction]
fn protocol_frame_size(
    py: Python<'_>,
    prefix: &Bound<'_, PyAny>,
    max_size: usize,
) -> PyResult<usize> {
    let data = bytes_from_py(prefix)
        .map_err(|c| to_pyerr(py, Error::InvalidType(format!("prefix: {}", c.err))))?;
    let b: [u8; 4] = data.as_slice().try_into().map_err(|_| {
        to_pyerr(
            py,
            Error::Decode(format!(
                "a frame size prefix is 4 bytes, got {}",
                data.len()
            )),
        )
    })?;
    frame::frame_size(b, max_size).py_err(py)
}

/// protocol_apis() -> list of (api_key, name, min_version, max_version, first_flexible_request
/// | None, first_flexible_response | None).
#[pyfunction]
fn protocol_apis(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    let first = |v: Versions| if v.is_empty() { None } else { Some(v.lo) };
    for a in APIS {
        list.append((
            a.key,
            a.name,
            a.versions().lo,
            a.versions().hi,
            first(a.request.flexible),
            first(a.response.flexible),
        ))?;
    }
    Ok(list)
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
