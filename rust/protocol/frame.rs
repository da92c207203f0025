//! Frames and headers: a message on the wire is an INT32 size, then a header, then a body.
//!
//! Requests use header v1 (api key, api version, correlation id, client id), or v2 (v1 plus a
//! tagged-field section) when the request version is flexible. Responses use header v0
//! (correlation id), or v1 (plus tagged fields) when the response version is flexible, except
//! ApiVersions responses, which always use v0. The header version follows from the api key and
//! version, which are the first four bytes of every request.

use std::borrow::Cow;

use super::codec::{decode_body, decode_body_in, decode_whole, encode_message, message_size, Mem};
use super::messages::{api, API_VERSIONS_KEY, REQUEST_HEADER, RESPONSE_HEADER};
use super::primitives::{put_vec, Buf, Reader, SliceBuf, Writer};
use super::schema::{Api, Message};
use super::value::{Arena, Fields, Struct, Value};
use crate::errors::{Error, Result};

/// MAX_FRAME is Kafka's default `socket.request.max.bytes` (100 MiB): the largest frame
/// [`frame_size`] accepts unless told otherwise.
pub const MAX_FRAME: usize = 104_857_600;

/// frame_size reads the INT32 size prefix of a frame and checks it, so that a reader never
/// waits for or reserves an absurd amount: above `max` is [`Error::FrameTooLarge`], negative is
/// [`Error::Malformed`]. Either way nothing after the prefix can be read, and Kafka's broker
/// closes the connection.
pub fn frame_size(prefix: [u8; 4], max: usize) -> Result<usize> {
    let n = i32::from_be_bytes(prefix);
    if n < 0 {
        return Err(Error::malformed(format!("frame size {n} is negative")));
    }
    if n as usize > max {
        return Err(Error::FrameTooLarge {
            size: n as i64,
            max,
        });
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
    /// header_size is the header's length in the frame.
    pub header_size: usize,
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

/// lookup finds the api and checks the version: an unknown key or a version outside the
/// range kgroup speaks is [`Error::UnsupportedVersion`], which a broker answers with
/// UNSUPPORTED_VERSION.
pub fn lookup(api_key: i16, version: i16) -> Result<&'static Api> {
    let Some(a) = api(api_key) else {
        return Err(Error::unsupported_version(api_key, version, None));
    };
    if !a.versions().contains(version) {
        return Err(Error::unsupported_version(
            api_key,
            version,
            Some((a.name, a.versions().to_string())),
        ));
    }
    Ok(a)
}

fn header_from<'a>(s: Struct<'a>) -> Result<RequestHeader<'a>> {
    let mut it = s.fields.into_vec().into_iter();
    let (
        Some(Value::Int16(api_key)),
        Some(Value::Int16(api_version)),
        Some(Value::Int32(correlation_id)),
        Some(client),
    ) = (it.next(), it.next(), it.next(), it.next())
    else {
        return Err(Error::malformed("malformed request header"));
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
        unknown_tagged: s.unknown_tagged.into_vec(),
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
    request_from(Mem::Heap, frame, true)
}

/// decode_request_in decodes a request frame as [`decode_request`] does, with the body's
/// values in `arena`.
pub fn decode_request_in<'a>(arena: &'a Arena<'a>, frame: &'a [u8]) -> Result<Request<'a>> {
    request_from(Mem::Arena(arena), frame, true)
}

/// decode_request_lenient decodes a request frame as [`decode_request_in`] does, but ignores
/// bytes after the body, as Kafka's broker does (its parser never checks for them, and some
/// clients send them: librdkafka's Metadata v12 for all topics carries three).
pub fn decode_request_lenient<'a>(arena: &'a Arena<'a>, frame: &'a [u8]) -> Result<Request<'a>> {
    request_from(Mem::Arena(arena), frame, false)
}

fn request_from<'a>(mem: Mem<'a>, frame: &'a [u8], whole: bool) -> Result<Request<'a>> {
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
    let header_size = r.position();
    let body = decode_body_in(mem, &mut r, api.request, version)?;
    if whole && r.remaining() != 0 {
        return Err(
            Error::malformed(format!("{} bytes left over after the body", r.remaining()))
                .in_context(|| format!("{} v{version}", api.request.name)),
        );
    }
    Ok(Request {
        header,
        header_size,
        api,
        body,
    })
}

fn request_header_struct<'h>(h: &'h RequestHeader<'_>) -> Struct<'h> {
    Struct {
        fields: Fields::Owned(vec![
            Value::Int16(h.api_key),
            Value::Int16(h.api_version),
            Value::Int32(h.correlation_id),
            match &h.client_id {
                Some(c) => Value::String(Cow::Borrowed(c)),
                None => Value::Null,
            },
        ]),
        unknown_tagged: h
            .unknown_tagged
            .iter()
            .map(|(t, b)| (*t, Cow::Borrowed(&b[..])))
            .collect(),
    }
}

/// Prepared is a frame checked and sized, ready to be written into any buffer: the INT32 size
/// prefix, a header and a body.
pub struct Prepared<'a> {
    header_msg: &'static Message,
    header_version: i16,
    header: Struct<'a>,
    body_msg: &'static Message,
    body_version: i16,
    body: &'a Struct<'a>,
    size: usize,
}

impl Prepared<'_> {
    fn new<'a>(
        header: (&'static Message, i16, Struct<'a>),
        body: (&'static Message, i16, &'a Struct<'a>),
    ) -> Result<Prepared<'a>> {
        let size =
            message_size(header.0, header.1, &header.2)? + message_size(body.0, body.1, body.2)?;
        if size > i32::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "message of {size} bytes is too large for a frame"
            )));
        }
        Ok(Prepared {
            header_msg: header.0,
            header_version: header.1,
            header: header.2,
            body_msg: body.0,
            body_version: body.1,
            body: body.2,
            size,
        })
    }

    /// len is the whole frame's length, size prefix included.
    pub fn len(&self) -> usize {
        4 + self.size
    }

    /// is_empty is never true: a frame has at least its prefix.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// write writes the frame: exactly [`len`](Self::len) bytes.
    pub fn write<B: Buf>(&self, w: &mut Writer<B>) -> Result<()> {
        w.i32(self.size as i32);
        encode_message(w, self.header_msg, self.header_version, &self.header)?;
        encode_message(w, self.body_msg, self.body_version, self.body)
    }

    /// to_vec writes the frame into a new vector of exactly its length.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut w = Writer::with_capacity(self.len());
        self.write(&mut w)?;
        debug_assert_eq!(w.buf.len(), self.len());
        Ok(w.into_inner())
    }
}

/// Segment is one piece of a frame written by [`Prepared::segments`]: bytes, or a records hole
/// ([`Value::Hole`]) that the caller sends from where its bytes are (a segment file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Bytes(Vec<u8>),
    Hole { index: u32, len: usize },
}

/// Segments is a buffer that writes a frame as [`Segment`]s: bytes until a hole, the hole, bytes
/// after it. `inline` may write a hole's bytes itself instead (into the bytes around it, given
/// to it): it returns true when it did, false to leave the hole for the caller.
struct Segments<F> {
    done: Vec<Segment>,
    cur: Vec<u8>,
    inline: F,
}

impl<F: FnMut(u32, usize, &mut Vec<u8>) -> Result<bool>> Buf for Segments<F> {
    #[inline]
    fn extend_from_slice(&mut self, b: &[u8]) {
        self.cur.extend_from_slice(b)
    }
    #[inline(always)]
    fn put<const N: usize>(&mut self, b: [u8; N]) {
        put_vec(&mut self.cur, b)
    }
    #[inline]
    fn push(&mut self, b: u8) {
        self.cur.push(b)
    }
    fn hole(&mut self, index: u32, len: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let before = self.cur.len();
        if (self.inline)(index, len, &mut self.cur)? {
            if self.cur.len() != before + len {
                return Err(Error::InvalidArgument(format!(
                    "records hole {index} of {len} bytes was filled with {}",
                    self.cur.len() - before
                )));
            }
            return Ok(());
        }
        if !self.cur.is_empty() {
            self.done
                .push(Segment::Bytes(std::mem::take(&mut self.cur)));
        }
        self.done.push(Segment::Hole { index, len });
        Ok(())
    }
}

/// Filled is a buffer that fills a slice as [`SliceBuf`] does, and each records hole in place
/// with `fill(index, bytes)`.
struct Filled<'a, F> {
    inner: SliceBuf<'a>,
    fill: F,
}

impl<F: FnMut(u32, &mut [u8]) -> Result<()>> Buf for Filled<'_, F> {
    #[inline]
    fn extend_from_slice(&mut self, b: &[u8]) {
        self.inner.extend_from_slice(b)
    }
    #[inline(always)]
    fn put<const N: usize>(&mut self, b: [u8; N]) {
        self.inner.put(b)
    }
    #[inline]
    fn push(&mut self, b: u8) {
        self.inner.push(b)
    }
    fn hole(&mut self, index: u32, len: usize) -> Result<()> {
        match self.inner.next(len) {
            Some(dst) => (self.fill)(index, dst),
            None => Ok(()), // overflowed: the caller's check reports it
        }
    }
}

impl Prepared<'_> {
    /// write_filled writes the frame into `buf`, which must be exactly [`len`](Self::len) bytes,
    /// with each records hole's bytes written in their place by `fill(index, bytes)`: the frame
    /// [`write`](Self::write) would write were the holes' bytes in the body.
    pub fn write_filled(
        &self,
        buf: &mut [u8],
        fill: impl FnMut(u32, &mut [u8]) -> Result<()>,
    ) -> Result<()> {
        let len = buf.len();
        let mut w = Writer::over(Filled {
            inner: SliceBuf::new(buf),
            fill,
        });
        self.write(&mut w)?;
        if w.buf.inner.overflowed() || w.buf.inner.written() != len || len != self.len() {
            return Err(Error::InvalidArgument(
                "encoded frame does not match its computed size".into(),
            ));
        }
        Ok(())
    }

    /// segments writes the frame as pieces, in order: [`Segment::Bytes`] and, for each records
    /// hole in the body ([`Value::Hole`]) that `inline` does not fill, a [`Segment::Hole`].
    /// The size prefix and every length prefix count the holes, so the pieces, the holes'
    /// bytes in their place, are exactly the frame [`write`](Self::write) would write were
    /// the holes' bytes in the body. `inline(index, len, bytes)` may append a hole's `len`
    /// bytes to `bytes` and return true (a hole too small to be worth sending on its own).
    pub fn segments(
        &self,
        inline: impl FnMut(u32, usize, &mut Vec<u8>) -> Result<bool>,
    ) -> Result<Vec<Segment>> {
        let mut w = Writer::over(Segments {
            done: Vec::new(),
            cur: Vec::new(),
            inline,
        });
        self.write(&mut w)?;
        let mut out = w.buf.done;
        if !w.buf.cur.is_empty() {
            out.push(Segment::Bytes(w.buf.cur));
        }
        Ok(out)
    }
}

/// encode_request writes a whole request frame, size prefix included. The header version
/// follows from the api key and version in `header`.
pub fn encode_request(header: &RequestHeader<'_>, body: &Struct<'_>) -> Result<Vec<u8>> {
    prepare_request(header, body)?.to_vec()
}

/// prepare_request checks and sizes a request frame; see [`Prepared`].
pub fn prepare_request<'a>(
    header: &'a RequestHeader<'_>,
    body: &'a Struct<'a>,
) -> Result<Prepared<'a>> {
    let api = lookup(header.api_key, header.api_version).map_err(Error::into_argument)?;
    let hs = request_header_struct(header);
    Prepared::new(
        (
            &REQUEST_HEADER,
            api.request_header_version(header.api_version),
            hs,
        ),
        (api.request, header.api_version, body),
    )
}

/// request_size is the size of the frame [`encode_request`] writes, prefix excluded.
pub fn request_size(header: &RequestHeader<'_>, body: &Struct<'_>) -> Result<usize> {
    let api = lookup(header.api_key, header.api_version).map_err(Error::into_argument)?;
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
        fields: Fields::Owned(vec![Value::Int32(correlation_id)]),
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
    prepare_response(api_key, version, correlation_id, header_tagged, body)?.to_vec()
}

/// prepare_response checks and sizes a response frame; see [`Prepared`].
pub fn prepare_response<'a>(
    api_key: i16,
    version: i16,
    correlation_id: i32,
    header_tagged: &'a [(u32, Cow<'_, [u8]>)],
    body: &'a Struct<'a>,
) -> Result<Prepared<'a>> {
    let api = lookup(api_key, version).map_err(Error::into_argument)?;
    let hs = response_header_struct(correlation_id, header_tagged);
    Prepared::new(
        (&RESPONSE_HEADER, api.response_header_version(version), hs),
        (api.response, version, body),
    )
}

/// write_request_header writes the header of a request (its version follows from the api key
/// and version), for a caller that writes the size prefix and the body itself.
pub fn write_request_header<B: Buf>(w: &mut Writer<B>, header: &RequestHeader<'_>) -> Result<()> {
    let api = lookup(header.api_key, header.api_version).map_err(Error::into_argument)?;
    let hs = request_header_struct(header);
    encode_message(
        w,
        &REQUEST_HEADER,
        api.request_header_version(header.api_version),
        &hs,
    )
}

/// write_response_header writes the header of a response, as [`write_request_header`] does.
pub fn write_response_header<B: Buf>(
    w: &mut Writer<B>,
    api_key: i16,
    version: i16,
    correlation_id: i32,
    header_tagged: &[(u32, Cow<'_, [u8]>)],
) -> Result<()> {
    let api = lookup(api_key, version).map_err(Error::into_argument)?;
    let hs = response_header_struct(correlation_id, header_tagged);
    encode_message(
        w,
        &RESPONSE_HEADER,
        api.response_header_version(version),
        &hs,
    )
}

/// decode_response decodes a response frame (after the size prefix) to a request of `api_key`
/// at `version`.
///
/// An ApiVersions body that does not parse at `version` is read again as v0, as Kafka's
/// `ApiVersionsResponse.parse` does: a broker answers an ApiVersions version it does not know
/// with a v0 body carrying UNSUPPORTED_VERSION.
pub fn decode_response(api_key: i16, version: i16, frame: &[u8]) -> Result<Response<'_>> {
    response_from(Mem::Heap, api_key, version, frame)
}

/// decode_response_in decodes a response frame as [`decode_response`] does, with the body's
/// values in `arena`.
pub fn decode_response_in<'a>(
    arena: &'a Arena<'a>,
    api_key: i16,
    version: i16,
    frame: &'a [u8],
) -> Result<Response<'a>> {
    response_from(Mem::Arena(arena), api_key, version, frame)
}

fn response_from<'a>(
    mem: Mem<'a>,
    api_key: i16,
    version: i16,
    frame: &'a [u8],
) -> Result<Response<'a>> {
    let api = lookup(api_key, version)?;
    let mut r = Reader::new(frame);
    let header = decode_body(
        &mut r,
        &RESPONSE_HEADER,
        api.response_header_version(version),
    )?;
    let correlation_id = match header.fields.first() {
        Some(Value::Int32(c)) => *c,
        _ => return Err(Error::malformed("malformed response header")),
    };
    let body_bytes = r.rest();
    let parsed = decode_whole(mem, api.response, version, body_bytes);
    let (version, body) = match parsed {
        Ok(body) => (version, body),
        Err(e) if api_key == API_VERSIONS_KEY && version != 0 => {
            match decode_whole(mem, api.response, 0, body_bytes) {
                Ok(body) => (0, body),
                Err(_) => return Err(e),
            }
        }
        Err(e) => return Err(e),
    };
    Ok(Response {
        correlation_id,
        unknown_tagged: header.unknown_tagged.into_vec(),
        version,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::APIS;
    use crate::protocol::random::Gen;
    use crate::rng::Rng;

    #[test]
    fn frame_size_rejects_negative_and_huge() {
        assert_eq!(frame_size([0, 0, 1, 0], MAX_FRAME).unwrap(), 256);
        assert!(frame_size([0xff, 0xff, 0xff, 0xff], MAX_FRAME).is_err());
        assert!(frame_size([0x7f, 0xff, 0xff, 0xff], MAX_FRAME).is_err());
    }

    fn header(api: &Api, v: i16, correlation_id: i32) -> RequestHeader<'static> {
        RequestHeader {
            api_key: api.key,
            api_version: v,
            correlation_id,
            client_id: Some("rust-test".into()),
            unknown_tagged: Vec::new(),
        }
    }

    /// every_request_frame: one random request per api and version.
    fn every_request_frame(g: &mut Gen) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for api in APIS {
            for v in api.versions().lo..=api.versions().hi {
                let frame =
                    encode_request(&header(api, v, v as i32), &g.body(api.request, v)).unwrap();
                out.push(frame[4..].to_vec());
            }
        }
        out
    }

    #[test]
    fn requests_and_responses_round_trip_through_frames() {
        let mut g = Gen::new(11);
        for api in APIS {
            for v in api.versions().lo..=api.versions().hi {
                let h = header(api, v, 42);
                let body = g.body(api.request, v);
                let frame = encode_request(&h, &body).unwrap();
                assert_eq!(request_size(&h, &body).unwrap() + 4, frame.len());
                assert_eq!(
                    frame_size(frame[..4].try_into().unwrap(), MAX_FRAME).unwrap(),
                    frame.len() - 4
                );
                let req = decode_request(&frame[4..]).unwrap();
                assert_eq!((req.header.clone(), &req.body), (h.clone(), &body));
                let (only, n) = decode_request_header(&frame[4..]).unwrap();
                assert_eq!(only, h);
                let want = 10 + "rust-test".len() + (api.request_header_version(v) == 2) as usize;
                assert_eq!(n, want, "{} v{v}", api.name);

                let body = g.body(api.response, v);
                let frame = encode_response(api.key, v, 42, &body).unwrap();
                let resp = decode_response(api.key, v, &frame[4..]).unwrap();
                assert_eq!(
                    (resp.correlation_id, resp.version, &resp.body),
                    (42, v, &body)
                );
            }
        }
    }

    /// punch replaces every records value in `s` with a hole of a length drawn from `lens`,
    /// and gives the body with those bytes in place (what the holes stand for) and the bytes.
    fn punch(
        s: &Struct<'static>,
        fields: &'static [crate::protocol::schema::Field],
        rng: &mut Rng,
        holes: &mut Vec<Vec<u8>>,
    ) -> (Struct<'static>, Struct<'static>) {
        use crate::protocol::schema::Type;
        use crate::protocol::value::Hole;
        const LENS: [usize; 9] = [0, 1, 61, 127, 128, 300, 16_383, 16_384, 70_000];
        let (mut holed, mut filled) = (s.clone(), s.clone());
        let (hv, fv) = (holed.fields.to_mut(), filled.fields.to_mut());
        for (i, f) in fields.iter().enumerate() {
            match (f.ty, &s.fields[i]) {
                (Type::Records, Value::Bytes(_)) => {
                    let len = LENS[(rng.next_u64() % LENS.len() as u64) as usize];
                    let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                    let index = holes.len() as u32;
                    hv[i] = Value::Hole(Hole { index, len });
                    fv[i] = Value::Bytes(bytes.clone().into());
                    holes.push(bytes);
                }
                (Type::Struct, Value::Struct(sub)) => {
                    let (h, b) = punch(sub, f.fields, rng, holes);
                    hv[i] = Value::Struct(h);
                    fv[i] = Value::Struct(b);
                }
                (Type::Array(Type::Struct), Value::Array(items)) => {
                    let (mut hs, mut bs) = (Vec::new(), Vec::new());
                    for item in items.iter() {
                        let Value::Struct(sub) = item else {
                            panic!("a struct array holds structs")
                        };
                        let (h, b) = punch(sub, f.fields, rng, holes);
                        hs.push(Value::Struct(h));
                        bs.push(Value::Struct(b));
                    }
                    hv[i] = Value::Array(hs.into());
                    fv[i] = Value::Array(bs.into());
                }
                _ => {}
            }
        }
        (holed, filled)
    }

    /// Property: a frame written in segments, each hole's bytes put back in its place, is the
    /// frame written whole from the body holding those bytes: the size prefix and every length
    /// prefix (INT32 and compact varints of one to three bytes) count the holes. Whether each
    /// hole is inlined or left does not change the bytes, nor does filling them in place.
    #[test]
    fn segments_with_their_holes_filled_are_the_whole_frame() {
        let mut g = Gen::new(23);
        let mut rng = Rng::new(Some(5));
        let mut with_holes = 0;
        for api in APIS {
            for v in api.versions().lo..=api.versions().hi {
                for (msg, request) in [(api.response, false), (api.request, true)] {
                    for _ in 0..8 {
                        let body = g.body(msg, v);
                        let mut holes = Vec::new();
                        let (holed, filled) = punch(&body, msg.fields, &mut rng, &mut holes);
                        let h = header(api, v, 9);
                        let (whole, prepared) = if request {
                            (
                                encode_request(&h, &filled).unwrap(),
                                prepare_request(&h, &holed).unwrap(),
                            )
                        } else {
                            (
                                encode_response(api.key, v, 9, &filled).unwrap(),
                                prepare_response(api.key, v, 9, &[], &holed).unwrap(),
                            )
                        };
                        assert_eq!(prepared.len(), whole.len(), "{} v{v}", msg.name);
                        // Writing holes into a plain buffer is refused, never written wrong.
                        if holes.iter().any(|b| !b.is_empty()) {
                            with_holes += 1;
                            assert!(prepared.to_vec().is_err());
                        }
                        let mut inlined = 0;
                        let segs = prepared
                            .segments(|index, len, out| {
                                if rng.next_u64() % 2 == 0 {
                                    assert_eq!(holes[index as usize].len(), len);
                                    out.extend_from_slice(&holes[index as usize]);
                                    inlined += 1;
                                    return Ok(true);
                                }
                                Ok(false)
                            })
                            .unwrap();
                        let mut joined = Vec::new();
                        for s in &segs {
                            match s {
                                Segment::Bytes(b) => {
                                    assert!(!b.is_empty());
                                    joined.extend_from_slice(b)
                                }
                                Segment::Hole { index, len } => {
                                    assert!(*len > 0);
                                    assert_eq!(holes[*index as usize].len(), *len);
                                    joined.extend_from_slice(&holes[*index as usize]);
                                }
                            }
                        }
                        assert_eq!(joined, whole, "{} v{v}", msg.name);
                        let mut filled = vec![0u8; prepared.len()];
                        prepared
                            .write_filled(&mut filled, |index, dst| {
                                dst.copy_from_slice(&holes[index as usize]);
                                Ok(())
                            })
                            .unwrap();
                        assert_eq!(filled, whole, "{} v{v} filled", msg.name);
                    }
                }
            }
        }
        assert!(with_holes > 100, "{with_holes}");
    }

    #[test]
    fn an_inline_that_fills_the_wrong_length_is_an_error() {
        let fetch = api(1).unwrap();
        let mut g = Gen::new(3);
        let mut rng = Rng::new(Some(1));
        for _ in 0..50 {
            let body = g.body(fetch.response, 12);
            let mut holes = Vec::new();
            let (holed, _) = punch(&body, fetch.response.fields, &mut rng, &mut holes);
            let p = prepare_response(1, 12, 1, &[], &holed).unwrap();
            let r = p.segments(|_, len, out| {
                out.resize(out.len() + len + 1, 0);
                Ok(true)
            });
            if holes.iter().any(|b| !b.is_empty()) {
                assert!(r.is_err());
                return;
            }
        }
        panic!("no fetch response with a non-empty records value was drawn");
    }

    #[test]
    fn unknown_keys_and_versions_are_decode_errors() {
        let mut w = Writer::new();
        w.i16(99);
        w.i16(0);
        w.i32(7);
        w.nullable_string(Some("c"));
        let e = decode_request(&w.buf).unwrap_err();
        assert_eq!(e, Error::unsupported_version(99, 0, None));
        assert_eq!(e.to_string(), "unknown api key 99");
        // The header of that frame still reads, so a broker can answer it.
        let (h, n) = decode_request_header(&w.buf).unwrap();
        assert_eq!((h.api_key, h.correlation_id, n), (99, 7, 11));

        let mut w = Writer::new();
        w.i16(11);
        w.i16(10);
        w.i32(8);
        w.nullable_string(None);
        let e = decode_request(&w.buf).unwrap_err().to_string();
        assert_eq!(
            e,
            "JoinGroup (api key 11) version 10 is not supported (versions 0-9)"
        );
        assert_eq!(decode_request_header(&w.buf).unwrap().0.correlation_id, 8);
        assert!(decode_response(11, 10, &[0, 0, 0, 1]).is_err());
        assert!(decode_request(&[0, 11]).is_err());
        assert!(decode_request(&[]).is_err());
    }

    /// A broker answers from the error's kind, never from its text: UNSUPPORTED_VERSION for an
    /// unknown version, CORRUPT_MESSAGE for a produced batch that fails its CRC, and a closed
    /// connection for a body cut short.
    #[test]
    fn a_broker_tells_bad_requests_apart_by_kind() {
        use crate::errors::{Corruption, ErrorCode};
        use crate::protocol::records::{read_headers, DecodeOptions, Record, RecordBatch};
        use crate::protocol::schema::Field;
        use crate::protocol::value::Seq;

        // An unknown version: the header still reads, for the answer's correlation id.
        let mut w = Writer::new();
        w.i16(11);
        w.i16(10);
        w.i32(5);
        w.nullable_string(Some("c"));
        let unsupported = decode_request(&w.buf).unwrap_err();
        assert!(matches!(&unsupported,
            Error::UnsupportedVersion(u) if (u.api_key, u.version) == (11, 10)));
        assert_eq!(decode_request_header(&w.buf).unwrap().0.correlation_id, 5);

        // A produce request whose batch fails its CRC: the frame decodes, its records do not.
        let mut batch = RecordBatch {
            records: vec![Record {
                timestamp: 1,
                value: Some(b"v".to_vec()),
                ..Record::default()
            }],
            ..RecordBatch::default()
        };
        batch.derive_from_records().unwrap();
        let mut bytes = batch.encode(None).unwrap();
        *bytes.last_mut().unwrap() ^= 0xff;
        let produce = api(0).unwrap();
        let msg = produce.request;
        let sub = |fields: &'static [Field], name: &str| {
            fields.iter().find(|f| f.name == name).unwrap().fields
        };
        let (tf, pf) = (sub(msg.fields, "topic_data"), {
            sub(sub(msg.fields, "topic_data"), "partition_data")
        });
        let mut part = Struct::defaults(pf);
        part.set(pf, "records", Value::Bytes(bytes.into()));
        let mut topic = Struct::defaults(tf);
        topic.set(tf, "name", Value::String("t".into()));
        topic.set(
            tf,
            "partition_data",
            Value::Array(Seq::from(vec![Value::Struct(part)])),
        );
        let mut body = Struct::defaults(msg.fields);
        body.set(msg.fields, "acks", Value::Int16(-1));
        body.set(
            msg.fields,
            "topic_data",
            Value::Array(Seq::from(vec![Value::Struct(topic)])),
        );
        let frame = encode_request(&header(produce, 9, 6), &body).unwrap();
        let req = decode_request(&frame[4..]).unwrap();
        let Some(Value::Array(topics)) = req.body.get(msg.fields, "topic_data") else {
            panic!("no topic_data")
        };
        let Value::Struct(topic) = &topics[0] else {
            panic!()
        };
        let Some(Value::Array(parts)) = topic.get(tf, "partition_data") else {
            panic!()
        };
        let Value::Struct(part) = &parts[0] else {
            panic!()
        };
        let Some(Value::Bytes(records)) = part.get(pf, "records") else {
            panic!()
        };
        let corrupt = read_headers(records, &DecodeOptions::default(), true).unwrap_err();
        assert!(matches!(&corrupt, Error::CorruptRecord(c) if c.kind == Corruption::Crc));

        // The same frame cut inside its records.
        let truncated = decode_request(&frame[4..frame.len() - 10]).unwrap_err();
        assert!(matches!(&truncated, Error::Malformed(m)
            if m.context == "ProduceRequest v9"
            && m.path == "topic_data[0].partition_data[0].records"));

        // What a broker does with each: three different answers.
        assert_eq!(
            [&unsupported, &corrupt, &truncated].map(|e| e.error_code()),
            [
                Some(ErrorCode::UnsupportedVersion),
                Some(ErrorCode::CorruptMessage),
                None
            ]
        );
    }

    #[test]
    fn hostile_counts_and_varints_are_errors() {
        // MetadataResponse v0 claiming 2^31-1 brokers in a 20-byte frame.
        let mut w = Writer::new();
        w.i32(1); // correlation id
        w.i32(i32::MAX);
        w.raw(&[0; 12]);
        let e = decode_response(3, 0, &w.buf).unwrap_err().to_string();
        assert!(e.contains("cannot fit"), "{e}");
        // A negative count other than -1, where null is not allowed.
        let mut w = Writer::new();
        w.i32(1);
        w.i32(-2);
        assert!(decode_response(3, 0, &w.buf)
            .unwrap_err()
            .to_string()
            .contains("negative"));
        // Heartbeat v4 (flexible): a group id whose compact length is a varint of 6 bytes.
        let mut w = Writer::new();
        w.i16(12);
        w.i16(4);
        w.i32(1);
        w.nullable_string(None);
        w.unsigned_varint(0); // header tagged fields
        w.raw(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        let e = decode_request(&w.buf).unwrap_err().to_string();
        assert!(e.contains("HeartbeatRequest v4: group_id: varint"), "{e}");
        // A compact length past the end, and 5-byte varints at the 32-bit limit.
        let mut w = Writer::new();
        w.i16(12);
        w.i16(4);
        w.i32(1);
        w.nullable_string(None);
        w.unsigned_varint(0);
        w.unsigned_varint(u32::MAX);
        assert!(decode_request(&w.buf).is_err());
    }

    #[test]
    fn every_truncation_is_an_error() {
        let mut g = Gen::new(3);
        for frame in every_request_frame(&mut g) {
            for cut in 0..frame.len() {
                assert!(
                    decode_request(&frame[..cut]).is_err(),
                    "a {cut}-byte prefix decoded"
                );
            }
            // And a byte too many.
            let mut longer = frame.clone();
            longer.push(0);
            assert!(decode_request(&longer).is_err());
        }
    }

    /// A short seeded mutation run: flipped, inserted, deleted and overwritten bytes in valid
    /// frames never panic, and whatever still decodes re-encodes and decodes to itself.
    #[test]
    fn mutated_frames_never_panic() {
        let mut g = Gen::new(17);
        let frames = every_request_frame(&mut g);
        let mut rng = Rng::new(Some(99));
        let mut decoded = 0;
        for i in 0..40_000 {
            let mut f = frames[i % frames.len()].clone();
            for _ in 0..1 + rng.next_u64() % 4 {
                let at = (rng.next_u64() as usize) % (f.len() + 1);
                let byte = rng.next_u64() as u8;
                match rng.next_u64() % 5 {
                    0 if at < f.len() => f[at] ^= 1 << (byte % 8),
                    1 => f.insert(at, byte),
                    2 if at < f.len() => {
                        f.remove(at);
                    }
                    3 if at + 4 <= f.len() => {
                        f[at..at + 4].copy_from_slice(&[0x7f, 0xff, 0xff, byte])
                    }
                    _ if at < f.len() => f[at] = byte,
                    _ => {}
                }
            }
            let _ = decode_request_header(&f);
            if let Ok(req) = decode_request(&f) {
                decoded += 1;
                let again = encode_request(&req.header, &req.body).unwrap();
                let back = decode_request(&again[4..]).unwrap();
                // Compared as bytes: a FLOAT64 may be NaN (AlterClientQuotas), never equal
                // to itself as a value.
                assert_eq!(encode_request(&back.header, &back.body).unwrap(), again);
            }
            let api = &APIS[i % APIS.len()];
            let v = api.versions().lo + (i as i16 % (api.versions().hi - api.versions().lo + 1));
            let _ = decode_response(api.key, v, &f);
        }
        // Many mutations land in values and leave a valid frame: the loop checks both paths.
        assert!(decoded > 1_000, "{decoded}");
    }
}
