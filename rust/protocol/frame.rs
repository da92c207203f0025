//! Frames and headers: a message on the wire is an INT32 size, then a header, then a body.
//!
//! Requests use header v1 (api key, api version, correlation id, client id), or v2 (v1 plus a
//! tagged-field section) when the request version is flexible. Responses use header v0
//! (correlation id), or v1 (plus tagged fields) when the response version is flexible, except
//! ApiVersions responses, which always use v0. The header version follows from the api key and
//! version, which are the first four bytes of every request.

use std::borrow::Cow;

use super::codec::{decode_body, encode_message, message_size};
use super::messages::{api, API_VERSIONS_KEY, REQUEST_HEADER, RESPONSE_HEADER};
use super::primitives::{Reader, Writer};
use super::schema::{Api, Message};
use super::value::{Struct, Value};
use crate::error::{Error, Result};

/// MAX_FRAME is Kafka's default `socket.request.max.bytes` (100 MiB): the largest frame
/// [`frame_size`] accepts unless told otherwise.
pub const MAX_FRAME: usize = 104_857_600;

/// frame_size reads the INT32 size prefix of a frame and checks it: negative or above `max`
/// is an error, so a reader never waits for or reserves an absurd amount.
pub fn frame_size(prefix: [u8; 4], max: usize) -> Result<usize> {
    let n = i32::from_be_bytes(prefix);
    if n < 0 {
        return Err(Error::Decode(format!("frame size {n} is negative")));
    }
    if n as usize > max {
        return Err(Error::Decode(format!(
            "frame size {n} is above the limit of {max} bytes"
        )));
    }
    Ok(n as usize)
}

/// RequestHeader is a decoded request header.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestHeader<'a> {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub client_id: Option<Cow<'a, str>>,
    /// unknown_tagged are the v2 header's tagged fields (Kafka defines none yet).
    pub unknown_tagged: Vec<(u32, Cow<'a, [u8]>)>,
}

impl RequestHeader<'_> {
    /// into_owned ends the borrow of the frame.
    pub fn into_owned(self) -> RequestHeader<'static> {
        RequestHeader {
            client_id: self.client_id.map(|c| Cow::Owned(c.into_owned())),
            unknown_tagged: self
                .unknown_tagged
                .into_iter()
                .map(|(t, b)| (t, Cow::Owned(b.into_owned())))
                .collect(),
            ..self
        }
    }
}

/// Request is a decoded request: its header and its body, shaped by the api's definition.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub header: RequestHeader<'a>,
    pub api: &'static Api,
    pub body: Struct<'a>,
}

/// Response is a decoded response body and its header.
#[derive(Debug, Clone, PartialEq)]
pub struct Response<'a> {
    pub correlation_id: i32,
    pub unknown_tagged: Vec<(u32, Cow<'a, [u8]>)>,
    /// version is the version the body was read at: the one asked for, except for an
    /// ApiVersions response that only parses as v0 (a broker answers a version it does not
    /// know with a v0 body).
    pub version: i16,
    pub body: Struct<'a>,
}

/// lookup finds the api and checks the version, with the errors a broker reports.
pub fn lookup(api_key: i16, version: i16) -> Result<&'static Api> {
    let a = api(api_key).ok_or_else(|| Error::Decode(format!("unknown api key {api_key}")))?;
    if !a.versions().contains(version) {
        return Err(Error::Decode(format!(
            "{} (api key {api_key}) version {version} is not supported (versions {})",
            a.name,
            a.versions()
        )));
    }
    Ok(a)
}

fn header_from<'a>(s: Struct<'a>) -> Result<RequestHeader<'a>> {
    let mut it = s.fields.into_iter();
    let (
        Some(Value::Int16(api_key)),
        Some(Value::Int16(api_version)),
        Some(Value::Int32(correlation_id)),
        Some(client),
    ) = (it.next(), it.next(), it.next(), it.next())
    else {
        return Err(Error::Decode("malformed request header".into()));
    };
    let client_id = match client {
        Value::String(s) => Some(s),
        _ => None,
    };
    Ok(RequestHeader {
        api_key,
        api_version,
        correlation_id,
        client_id,
        unknown_tagged: s.unknown_tagged,
    })
}

/// decode_request_header reads the header of any request frame (the bytes after the size
/// prefix), even one whose api key or version kgroup does not speak: then it reads the v1
/// header that every request starts with, so that a broker can still answer (with
/// UNSUPPORTED_VERSION) under the right correlation id. Returns the header and its length.
pub fn decode_request_header(frame: &[u8]) -> Result<(RequestHeader<'_>, usize)> {
    let mut r = Reader::new(frame);
    let mut peek = r.clone();
    let key = peek.i16()?;
    let version = peek.i16()?;
    let header_version = match lookup(key, version) {
        Ok(a) => a.request_header_version(version),
        Err(_) => 1,
    };
    let s = decode_body(&mut r, &REQUEST_HEADER, header_version)?;
    Ok((header_from(s)?, r.position()))
}

/// decode_request decodes a request frame (the bytes after the size prefix). An unknown api key
/// or version, a malformed header or body, or bytes left over are all decode errors.
pub fn decode_request(frame: &[u8]) -> Result<Request<'_>> {
    let mut r = Reader::new(frame);
    let mut peek = r.clone();
    let key = peek.i16()?;
    let version = peek.i16()?;
    let api = lookup(key, version)?;
    let header = header_from(decode_body(
        &mut r,
        &REQUEST_HEADER,
        api.request_header_version(version),
    )?)?;
    let body = decode_body(&mut r, api.request, version)?;
    if r.remaining() != 0 {
        return Err(Error::Decode(format!(
            "{} v{version}: {} bytes left over after the body",
            api.request.name,
            r.remaining()
        )));
    }
    Ok(Request { header, api, body })
}

fn request_header_struct<'h>(h: &'h RequestHeader<'_>) -> Struct<'h> {
    Struct {
        fields: vec![
            Value::Int16(h.api_key),
            Value::Int16(h.api_version),
            Value::Int32(h.correlation_id),
            match &h.client_id {
                Some(c) => Value::String(Cow::Borrowed(c)),
                None => Value::Null,
            },
        ],
        unknown_tagged: h
            .unknown_tagged
            .iter()
            .map(|(t, b)| (*t, Cow::Borrowed(&b[..])))
            .collect(),
    }
}

/// frame writes a size prefix, a header and a body into one vector of exactly their size.
fn frame(
    header: (&Message, i16, &Struct<'_>),
    body: (&Message, i16, &Struct<'_>),
) -> Result<Vec<u8>> {
    let header_size = message_size(header.0, header.1, header.2)?;
    let body_size = message_size(body.0, body.1, body.2)?;
    let size = header_size + body_size;
    if size > i32::MAX as usize {
        return Err(Error::InvalidArgument(format!(
            "message of {size} bytes is too large for a frame"
        )));
    }
    let mut w = Writer::with_capacity(4 + size);
    w.i32(size as i32);
    encode_message(&mut w, header.0, header.1, header.2)?;
    encode_message(&mut w, body.0, body.1, body.2)?;
    debug_assert_eq!(w.buf.len(), 4 + size);
    Ok(w.into_inner())
}

fn to_argument(e: Error) -> Error {
    match e {
        Error::Decode(m) => Error::InvalidArgument(m),
        e => e,
    }
}

/// encode_request writes a whole request frame, size prefix included. The header version
/// follows from the api key and version in `header`.
pub fn encode_request(header: &RequestHeader<'_>, body: &Struct<'_>) -> Result<Vec<u8>> {
    let api = lookup(header.api_key, header.api_version).map_err(to_argument)?;
    let hs = request_header_struct(header);
    frame(
        (
            &REQUEST_HEADER,
            api.request_header_version(header.api_version),
            &hs,
        ),
        (api.request, header.api_version, body),
    )
}

/// request_size is the size of the frame [`encode_request`] writes, prefix excluded.
pub fn request_size(header: &RequestHeader<'_>, body: &Struct<'_>) -> Result<usize> {
    let api = lookup(header.api_key, header.api_version).map_err(to_argument)?;
    let hs = request_header_struct(header);
    Ok(message_size(
        &REQUEST_HEADER,
        api.request_header_version(header.api_version),
        &hs,
    )? + message_size(api.request, header.api_version, body)?)
}

fn response_header_struct<'h>(
    correlation_id: i32,
    tagged: &'h [(u32, Cow<'_, [u8]>)],
) -> Struct<'h> {
    Struct {
        fields: vec![Value::Int32(correlation_id)],
        unknown_tagged: tagged
            .iter()
            .map(|(t, b)| (*t, Cow::Borrowed(&b[..])))
            .collect(),
    }
}

/// encode_response writes a whole response frame, size prefix included.
pub fn encode_response(
    api_key: i16,
    version: i16,
    correlation_id: i32,
    body: &Struct<'_>,
) -> Result<Vec<u8>> {
    encode_response_tagged(api_key, version, correlation_id, &[], body)
}

/// encode_response_tagged is [`encode_response`] with tagged fields in a v1 response header.
pub fn encode_response_tagged(
    api_key: i16,
    version: i16,
    correlation_id: i32,
    header_tagged: &[(u32, Cow<'_, [u8]>)],
    body: &Struct<'_>,
) -> Result<Vec<u8>> {
    let api = lookup(api_key, version).map_err(to_argument)?;
    let hs = response_header_struct(correlation_id, header_tagged);
    frame(
        (&RESPONSE_HEADER, api.response_header_version(version), &hs),
        (api.response, version, body),
    )
}

/// decode_response decodes a response frame (after the size prefix) to a request of `api_key`
/// at `version`.
///
/// An ApiVersions body that does not parse at `version` is read again as v0, as Kafka's
/// `ApiVersionsResponse.parse` does: a broker answers an ApiVersions version it does not know
/// with a v0 body carrying UNSUPPORTED_VERSION.
pub fn decode_response(api_key: i16, version: i16, frame: &[u8]) -> Result<Response<'_>> {
    let api = lookup(api_key, version)?;
    let mut r = Reader::new(frame);
    let header = decode_body(
        &mut r,
        &RESPONSE_HEADER,
        api.response_header_version(version),
    )?;
    let correlation_id = match header.fields.first() {
        Some(Value::Int32(c)) => *c,
        _ => return Err(Error::Decode("malformed response header".into())),
    };
    let body_bytes = r.rest();
    let parsed = read_whole(api.response, version, body_bytes);
    let (version, body) = match parsed {
        Ok(body) => (version, body),
        Err(e) if api_key == API_VERSIONS_KEY && version != 0 => {
            match read_whole(api.response, 0, body_bytes) {
                Ok(body) => (0, body),
                Err(_) => return Err(e),
            }
        }
        Err(e) => return Err(e),
    };
    Ok(Response {
        correlation_id,
        unknown_tagged: header.unknown_tagged,
        version,
        body,
    })
}

fn read_whole<'a>(msg: &Message, version: i16, buf: &'a [u8]) -> Result<Struct<'a>> {
    super::codec::decode_message(msg, version, buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_size_rejects_negative_and_huge() {
        assert_eq!(frame_size([0, 0, 1, 0], MAX_FRAME).unwrap(), 256);
        assert!(frame_size([0xff, 0xff, 0xff, 0xff], MAX_FRAME).is_err());
        assert!(frame_size([0x7f, 0xff, 0xff, 0xff], MAX_FRAME).is_err());
    }
}
