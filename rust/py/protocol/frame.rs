//! Bindings for frames and headers (`rust/protocol/frame.rs`): decoded requests and responses
//! are small typed objects ([`PyRequestHeader`], [`PyRequest`], [`PyResponse`]) and whole
//! frames are encoded straight into a new `bytes`.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use super::convert::{bytes_from_py, optional_tagged};
use super::fast::Rope;
use super::views::{body_view, Decoded};
use super::{body_from_py, direct, header_tagged, message_of, owner_of, same_view, Keep};
use crate::errors::Error;
use crate::protocol::frame::{self, Prepared, RequestHeader, Segment, MAX_FRAME};
use crate::protocol::messages::api;
use crate::protocol::primitives::{SliceBuf, Writer};
use crate::py::errors::{to_pyerr, IntoPyResult};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRequestHeader>()?;
    m.add_class::<PyRequest>()?;
    m.add_class::<PyResponse>()?;
    m.add_function(wrap_pyfunction!(decode_request, m)?)?;
    m.add_function(wrap_pyfunction!(decode_request_header, m)?)?;
    m.add_function(wrap_pyfunction!(encode_request, m)?)?;
    m.add_function(wrap_pyfunction!(decode_response, m)?)?;
    m.add_function(wrap_pyfunction!(encode_response, m)?)?;
    m.add_function(wrap_pyfunction!(encode_response_segments, m)?)?;
    m.add_function(wrap_pyfunction!(frame_size, m)?)?;
    m.add("MAX_FRAME_SIZE", MAX_FRAME)?;
    Ok(())
}

fn tagged_dict<'py>(py: Python<'py>, tagged: &[(u32, Cow<'_, [u8]>)]) -> PyResult<Py<PyDict>> {
    Ok(optional_tagged(py, tagged)?
        .unwrap_or_else(|| PyDict::new(py))
        .unbind())
}

fn api_name(api_key: i16) -> Option<&'static str> {
    api(api_key).map(|a| a.name)
}

/// RequestHeader is the header of a request: what a broker needs to answer it, even when it
/// cannot decode the body. `size` is the header's length in the frame; `tagged_fields` the v2
/// header's tagged fields (Kafka defines none). Immutable.
#[pyclass(frozen, subclass, name = "RequestHeader", module = "kgroup.protocol")]
pub struct PyRequestHeader {
    #[pyo3(get)]
    api_key: i16,
    #[pyo3(get)]
    api_version: i16,
    #[pyo3(get)]
    correlation_id: i32,
    #[pyo3(get)]
    client_id: Option<String>,
    #[pyo3(get)]
    tagged_fields: Py<PyDict>,
    #[pyo3(get)]
    size: usize,
}

impl PyRequestHeader {
    /// parts are the api key, version, correlation id and client id, for other bindings.
    pub(crate) fn parts(&self) -> (i16, i16, i32, Option<&str>) {
        (
            self.api_key,
            self.api_version,
            self.correlation_id,
            self.client_id.as_deref(),
        )
    }

    fn same(&self, py: Python<'_>, o: &PyRequestHeader) -> PyResult<bool> {
        Ok((
            self.api_key,
            self.api_version,
            self.correlation_id,
            &self.client_id,
        ) == (o.api_key, o.api_version, o.correlation_id, &o.client_id)
            && self.size == o.size
            && self.tagged_fields.bind(py).eq(o.tagged_fields.bind(py))?)
    }

    fn fields_repr(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "api_key={}, api_version={}, correlation_id={}, client_id={}, tagged_fields={}",
            self.api_key,
            self.api_version,
            self.correlation_id,
            match &self.client_id {
                Some(c) => format!("{c:?}"),
                None => "None".into(),
            },
            self.tagged_fields.bind(py).repr()?
        ))
    }
}

#[pymethods]
impl PyRequestHeader {
    #[new]
    #[pyo3(signature = (api_key, api_version, correlation_id, client_id=None, tagged_fields=None, size=0))]
    fn new(
        py: Python<'_>,
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
        client_id: Option<String>,
        tagged_fields: Option<Bound<'_, PyDict>>,
        size: usize,
    ) -> Self {
        PyRequestHeader {
            api_key,
            api_version,
            correlation_id,
            client_id,
            tagged_fields: tagged_fields.unwrap_or_else(|| PyDict::new(py)).unbind(),
            size,
        }
    }

    /// Kafka's name of the api (`"JoinGroup"`), or None for a key kgroup does not speak.
    #[getter]
    fn api_name(&self) -> Option<&'static str> {
        api_name(self.api_key)
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        // A header equals a header, not the request it came with: compare exact types.
        if !other.get_type().is(slf.get_type()) {
            return Ok(false);
        }
        match other.cast::<PyRequestHeader>() {
            Ok(o) => slf.get().same(slf.py(), o.get()),
            Err(_) => Ok(false),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "RequestHeader({}, size={})",
            self.fields_repr(py)?,
            self.size
        ))
    }
}

/// Request is a decoded request: its header (a [`PyRequestHeader`]) and its body, a read-only
/// view of the decoded fields.
#[pyclass(frozen, extends = PyRequestHeader, name = "Request", module = "kgroup.protocol")]
pub struct PyRequest {
    #[pyo3(get)]
    body: Py<PyAny>,
}

impl PyRequest {
    /// body_object is the body (a StructView when decoded), for other bindings.
    pub(crate) fn body_object(&self) -> &Py<PyAny> {
        &self.body
    }
}

#[pymethods]
impl PyRequest {
    #[new]
    #[pyo3(signature = (api_key, api_version, correlation_id, client_id, body, tagged_fields=None, size=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
        client_id: Option<String>,
        body: Py<PyAny>,
        tagged_fields: Option<Bound<'_, PyDict>>,
        size: usize,
    ) -> PyClassInitializer<Self> {
        PyClassInitializer::from(PyRequestHeader::new(
            py,
            api_key,
            api_version,
            correlation_id,
            client_id,
            tagged_fields,
            size,
        ))
        .add_subclass(PyRequest { body })
    }

    /// Kafka's name of the api (`"JoinGroup"`).
    #[getter]
    fn api_name(slf: &Bound<'_, Self>) -> &'static str {
        api_name(slf.as_super().get().api_key).unwrap_or("")
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(o) = other.cast::<PyRequest>() else {
            return Ok(false);
        };
        let py = slf.py();
        Ok(slf.as_super().get().same(py, o.as_super().get())?
            && slf.get().body.bind(py).eq(o.get().body.bind(py))?)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        Ok(format!(
            "Request({}, body={})",
            slf.as_super().get().fields_repr(py)?,
            slf.get().body.bind(py).repr()?
        ))
    }
}

/// Response is a decoded response. `api_version` is the version its body was read at: the one
/// asked for, except an ApiVersions answer that only parses as v0 (a broker answers an
/// ApiVersions version it does not speak with a v0 body carrying UNSUPPORTED_VERSION).
#[pyclass(frozen, name = "Response", module = "kgroup.protocol")]
pub struct PyResponse {
    #[pyo3(get)]
    api_key: i16,
    #[pyo3(get)]
    api_version: i16,
    #[pyo3(get)]
    correlation_id: i32,
    #[pyo3(get)]
    body: Py<PyAny>,
    #[pyo3(get)]
    tagged_fields: Py<PyDict>,
}

#[pymethods]
impl PyResponse {
    #[new]
    #[pyo3(signature = (api_key, api_version, correlation_id, body, tagged_fields=None))]
    fn new(
        py: Python<'_>,
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
        body: Py<PyAny>,
        tagged_fields: Option<Bound<'_, PyDict>>,
    ) -> Self {
        PyResponse {
            api_key,
            api_version,
            correlation_id,
            body,
            tagged_fields: tagged_fields.unwrap_or_else(|| PyDict::new(py)).unbind(),
        }
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(o) = other.cast::<PyResponse>() else {
            return Ok(false);
        };
        let o = o.get();
        Ok((self.api_key, self.api_version, self.correlation_id)
            == (o.api_key, o.api_version, o.correlation_id)
            && self.body.bind(py).eq(o.body.bind(py))?
            && self.tagged_fields.bind(py).eq(o.tagged_fields.bind(py))?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Response(api_key={}, api_version={}, correlation_id={}, body={}, tagged_fields={})",
            self.api_key,
            self.api_version,
            self.correlation_id,
            self.body.bind(py).repr()?,
            self.tagged_fields.bind(py).repr()?
        ))
    }
}

fn frame_bytes<'a>(frame: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    match frame.cast::<PyBytes>() {
        Ok(b) => Ok(Cow::Borrowed(b.as_bytes())),
        Err(_) => Ok(Cow::Owned(bytes_from_py(frame).map_err(|c| {
            to_pyerr(frame.py(), Error::InvalidType(format!("frame: {}", c.err)))
        })?)),
    }
}

/// Decode a request frame (the bytes after its size prefix) into a Request.
///
/// An unknown api key or version raises UnsupportedApiVersion; a truncated or malformed frame,
/// or bytes left over, MalformedMessage. With `strict=False` bytes after the body are ignored,
/// as Kafka's broker ignores them (some clients send them). decode_request_header still reads
/// the header of a frame that does not decode. The frame is decoded with the GIL released.
#[pyfunction]
#[pyo3(signature = (frame, *, strict=true))]
fn decode_request<'py>(
    py: Python<'py>,
    frame: &Bound<'py, PyAny>,
    strict: bool,
) -> PyResult<Bound<'py, PyRequest>> {
    let ((header, size), root) = Decoded::decode(py, owner_of(frame)?, |data, arena| {
        let req = if strict {
            frame::decode_request_in(arena, data)?
        } else {
            frame::decode_request_lenient(arena, data)?
        };
        let version = req.header.api_version;
        Ok((
            (req.header.into_owned(), req.header_size),
            req.api.request,
            version,
            req.body,
        ))
    })?;
    let body = body_view(py, root)?;
    let init = PyClassInitializer::from(PyRequestHeader {
        api_key: header.api_key,
        api_version: header.api_version,
        correlation_id: header.correlation_id,
        client_id: header.client_id.map(|c| c.into_owned()),
        tagged_fields: tagged_dict(py, &header.unknown_tagged)?,
        size,
    })
    .add_subclass(PyRequest {
        body: body.into_any().unbind(),
    });
    Bound::new(py, init)
}

/// Read only the header of a request frame, whatever its api key and version, so that a broker
/// can answer a request it cannot decode (UNSUPPORTED_VERSION, under its correlation id).
#[pyfunction]
fn decode_request_header<'py>(
    py: Python<'py>,
    frame: &Bound<'py, PyAny>,
) -> PyResult<PyRequestHeader> {
    let data = frame_bytes(frame)?;
    let (h, size) = frame::decode_request_header(&data).py_err(py)?;
    Ok(PyRequestHeader {
        api_key: h.api_key,
        api_version: h.api_version,
        correlation_id: h.correlation_id,
        client_id: h.client_id.map(|c| c.into_owned()),
        tagged_fields: tagged_dict(py, &h.unknown_tagged)?,
        size,
    })
}

/// Encode a request frame, size prefix included; the header version follows from the api key
/// and version.
#[pyfunction]
#[pyo3(signature = (api_key, version, correlation_id, client_id, body, *, tagged_fields=None))]
fn encode_request<'py>(
    py: Python<'py>,
    api_key: i16,
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &Bound<'py, PyAny>,
    tagged_fields: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let msg = message_of(py, api_key, version, true)?;
    let keep = Keep::new();
    let header = RequestHeader {
        api_key,
        api_version: version,
        correlation_id,
        client_id: client_id.map(Cow::Borrowed),
        unknown_tagged: header_tagged(tagged_fields)?,
    };
    if let Some(tree) = same_view(&keep, msg, body) {
        let prepared = frame::prepare_request(&header, tree).py_err(py)?;
        return write_frame(py, &prepared);
    }
    let mut w = Writer::over(Rope::new());
    w.i32(0);
    frame::write_request_header(&mut w, &header).py_err(py)?;
    direct(py, &keep, &mut w, msg, version, body)?;
    finish_frame(py, w)
}

/// Decode a response frame (the bytes after its size prefix) to a request of `api_key` sent at
/// `version`.
#[pyfunction]
fn decode_response<'py>(
    py: Python<'py>,
    api_key: i16,
    version: i16,
    frame: &Bound<'py, PyAny>,
) -> PyResult<PyResponse> {
    let msg = frame::lookup(api_key, version).py_err(py)?.response;
    let ((correlation_id, tagged), root) = Decoded::decode(py, owner_of(frame)?, |data, arena| {
        let resp = frame::decode_response_in(arena, api_key, version, data)?;
        let tagged: Vec<(u32, Cow<'static, [u8]>)> = resp
            .unknown_tagged
            .into_iter()
            .map(|(t, b)| (t, Cow::Owned(b.into_owned())))
            .collect();
        Ok(((resp.correlation_id, tagged), msg, resp.version, resp.body))
    })?;
    let read_version = root.version;
    let body = body_view(py, root)?;
    Ok(PyResponse {
        api_key,
        api_version: read_version,
        correlation_id,
        body: body.into_any().unbind(),
        tagged_fields: tagged_dict(py, &tagged)?,
    })
}

/// Encode the response to `request` (a Request or RequestHeader: its api key, version and
/// correlation id), size prefix included. A records value may be a FileSlice, read into the
/// frame (encode_response_segments leaves it out instead).
///
/// `version` overrides the body's version: an ApiVersions request at a version the broker does
/// not speak is answered with a v0 body (`error_code` 35, UNSUPPORTED_VERSION, and the broker's
/// `api_keys`), as Kafka does.
#[pyfunction]
#[pyo3(signature = (request, body, *, version=None, tagged_fields=None))]
fn encode_response<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    body: &Bound<'py, PyAny>,
    version: Option<i16>,
    tagged_fields: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (api_key, asked, correlation_id) = request_ids(request)?;
    let version = version.unwrap_or(asked);
    let msg = message_of(py, api_key, version, false)?;
    let keep = Keep::new();
    let tagged = header_tagged(tagged_fields)?;
    if api_key == FETCH_KEY {
        // Fetch's records may be FileSlices, read straight into the frame by the tree's writer.
        let body = body_from_py(py, &keep, msg, version, body)?;
        let prepared =
            frame::prepare_response(api_key, version, correlation_id, &tagged, body.get())
                .py_err(py)?;
        return write_frame(py, &prepared);
    }
    if let Some(tree) = same_view(&keep, msg, body) {
        let prepared =
            frame::prepare_response(api_key, version, correlation_id, &tagged, tree).py_err(py)?;
        return write_frame(py, &prepared);
    }
    // Plain Python values: written straight from them (the direct encoder), no tree built.
    let mut w = Writer::over(Rope::new());
    w.i32(0);
    frame::write_response_header(&mut w, api_key, version, correlation_id, &tagged).py_err(py)?;
    direct(py, &keep, &mut w, msg, version, body)?;
    finish_frame(py, w)
}

/// Encode the response to `request` as encode_response does, as a list of pieces to send in
/// order: `bytes`, and the FileSlices that the body's records values are (a Fetch response's
/// batches, left in their segment files to be sent with `os.sendfile`). The size prefix and
/// every length prefix count the FileSlices' lengths: the pieces, each FileSlice's bytes in
/// its place, are exactly the frame encode_response writes for the same body with the bytes
/// in place of the FileSlices. A FileSlice shorter than `inline_below` bytes is read into the
/// bytes around it instead (a sendfile call costs more than copying a few kilobytes), so with
/// none left the list is one `bytes`, the whole frame. Empty FileSlices are empty records.
#[pyfunction]
#[pyo3(signature = (request, body, *, inline_below=0, version=None, tagged_fields=None))]
fn encode_response_segments<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    body: &Bound<'py, PyAny>,
    inline_below: usize,
    version: Option<i16>,
    tagged_fields: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let (api_key, asked, correlation_id) = request_ids(request)?;
    let version = version.unwrap_or(asked);
    let msg = message_of(py, api_key, version, false)?;
    let keep = Keep::with_holes();
    let tree = body_from_py(py, &keep, msg, version, body)?;
    let tagged = header_tagged(tagged_fields)?;
    let prepared = frame::prepare_response(api_key, version, correlation_id, &tagged, tree.get())
        .py_err(py)?;
    if !keep.any_hole(|s| s.len() >= inline_below) {
        // Every slice is inlined: the frame is one piece, each slice read straight into it.
        let frame = PyBytes::new_with(py, prepared.len(), |buf| {
            prepared
                .write_filled(buf, |index, dst| match keep.hole(index) {
                    Some(h) => h.get().slice().read_into(dst),
                    None => Err(Error::InvalidArgument(format!("no records hole {index}"))),
                })
                .py_err(py)
        })?;
        return PyList::new(py, [frame]);
    }
    let segments = prepared
        .segments(|index, len, out| {
            if len >= inline_below {
                return Ok(false);
            }
            let Some(hole) = keep.hole(index) else {
                return Err(Error::InvalidArgument(format!("no records hole {index}")));
            };
            hole.get().slice().append_to(out)?;
            Ok(true)
        })
        .py_err(py)?;
    let list = PyList::empty(py);
    for s in segments {
        match s {
            Segment::Bytes(b) => list.append(PyBytes::new(py, &b))?,
            Segment::Hole { index, .. } => match keep.hole(index) {
                Some(h) => list.append(h)?,
                None => {
                    return Err(to_pyerr(
                        py,
                        Error::InvalidArgument(format!("no records hole {index}")),
                    ))
                }
            },
        }
    }
    Ok(list)
}

/// request_ids are the api key, version and correlation id of a Request or RequestHeader, or
/// of any object with those attributes.
fn request_ids(request: &Bound<'_, PyAny>) -> PyResult<(i16, i16, i32)> {
    Ok(match request.cast::<PyRequestHeader>() {
        Ok(h) => {
            let h = h.get();
            (h.api_key, h.api_version, h.correlation_id)
        }
        Err(_) => (
            request.getattr("api_key")?.extract()?,
            request.getattr("api_version")?.extract()?,
            request.getattr("correlation_id")?.extract()?,
        ),
    })
}

/// The size announced by a frame's 4-byte prefix. Above `max_size` (Kafka's
/// `socket.request.max.bytes`, 100 MiB by default) raises FrameTooLarge; a negative size,
/// MalformedMessage.
#[pyfunction]
#[pyo3(signature = (prefix, max_size=MAX_FRAME))]
fn frame_size(py: Python<'_>, prefix: &Bound<'_, PyAny>, max_size: usize) -> PyResult<usize> {
    let data = frame_bytes(prefix)?;
    let b: [u8; 4] = data.as_ref().try_into().map_err(|_| {
        to_pyerr(
            py,
            Error::malformed(format!(
                "a frame size prefix is 4 bytes, got {}",
                data.len()
            )),
        )
    })?;
    frame::frame_size(b, max_size).py_err(py)
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

/// FETCH_KEY is Fetch's api key.
const FETCH_KEY: i16 = 1;

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
