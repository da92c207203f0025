//! Kafka's primitive types, written once: fixed-width integers, varints, strings, bytes,
//! arrays, UUIDs and tagged fields, in their classic and compact (flexible-version) forms.
//!
//! [`Reader`] never panics and never allocates more than the bytes it was given can justify:
//! every length and count is checked against what remains before anything is read or reserved.

use crate::errors::{Error, Result};

/// short is the error for a value cut off: the rare case, kept out of line.
#[cold]
#[inline(never)]
fn short(what: &str, need: usize, have: usize) -> Error {
    Error::malformed(format!("truncated {what}: needs {need} bytes, {have} left"))
}

/// negative is the error for a length below -1.
#[cold]
#[inline(never)]
fn negative(what: &str, n: i64) -> Error {
    Error::malformed(format!("{what} length {n} is negative"))
}

/// utf8_beyond_ascii checks a string that is not all ASCII: the rare case, kept out of line so
/// that the ASCII check inlines where strings are read.
#[cold]
#[inline(never)]
fn utf8_beyond_ascii<'a>(b: &'a [u8], what: &str) -> Result<&'a str> {
    std::str::from_utf8(b).map_err(|_| Error::malformed(format!("{what} is not valid UTF-8")))
}

/// Reader reads primitives from a byte slice, front to back.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

macro_rules! fixed {
    ($name:ident, $t:ty) => {
        #[doc = concat!(stringify!($name), " reads a big-endian ", stringify!($t), ".")]
        #[inline(always)]
        pub fn $name(&mut self) -> Result<$t> {
            const N: usize = std::mem::size_of::<$t>();
            let b = self.take(N, stringify!($t))?;
            let mut a = [0u8; N];
            a.copy_from_slice(b);
            Ok(<$t>::from_be_bytes(a))
        }
    };
}

impl<'a> Reader<'a> {
    /// new reads `buf` from its start.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// position is how many bytes were read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// remaining is how many bytes are left.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// rest returns the unread bytes without consuming them.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// take consumes exactly `n` bytes.
    #[inline(always)]
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(short(what, n, self.remaining()));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fixed!(i8, i8);
    fixed!(i16, i16);
    fixed!(i32, i32);
    fixed!(i64, i64);
    fixed!(u16, u16);
    fixed!(u32, u32);
    fixed!(f64, f64);

    /// boolean reads one byte; any non-zero value is true, as Kafka reads it.
    pub fn boolean(&mut self) -> Result<bool> {
        Ok(self.take(1, "boolean")?[0] != 0)
    }

    /// uuid reads 16 bytes.
    pub fn uuid(&mut self) -> Result<[u8; 16]> {
        let mut a = [0u8; 16];
        a.copy_from_slice(self.take(16, "uuid")?);
        Ok(a)
    }

    /// unsigned_varint reads an unsigned LEB128 value of at most 5 bytes (32 bits).
    #[inline(always)]
    pub fn unsigned_varint(&mut self) -> Result<u32> {
        // Most varints (lengths, counts, empty tagged sections) are one byte.
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                Ok(b as u32)
            }
            _ => self.unsigned_varint_long(),
        }
    }

    fn unsigned_varint_long(&mut self) -> Result<u32> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let b = self.take(1, "varint")?[0];
            if i == 4 && b > 0x0f {
                return Err(Error::malformed("varint is longer than 32 bits"));
            }
            value |= ((b & 0x7f) as u32) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Error::malformed("varint is longer than 5 bytes"))
    }

    /// unsigned_varlong reads an unsigned LEB128 value of at most 10 bytes (64 bits).
    pub fn unsigned_varlong(&mut self) -> Result<u64> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let b = self.take(1, "varlong")?[0];
            if i == 9 && b > 0x01 {
                return Err(Error::malformed("varlong is longer than 64 bits"));
            }
            value |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Error::malformed("varlong is longer than 10 bytes"))
    }

    /// varint reads a zigzag-encoded signed 32-bit varint.
    pub fn varint(&mut self) -> Result<i32> {
        let u = self.unsigned_varint()?;
        Ok(((u >> 1) as i32) ^ -((u & 1) as i32))
    }

    /// varlong reads a zigzag-encoded signed 64-bit varint.
    pub fn varlong(&mut self) -> Result<i64> {
        let u = self.unsigned_varlong()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    #[inline(always)]
    fn utf8(&mut self, n: usize, what: &str) -> Result<&'a str> {
        let b = self.take(n, what)?;
        if b.is_ascii() {
            // SAFETY: ASCII is valid UTF-8. (Most of Kafka's strings are ASCII, and this check
            // is cheaper than the general one on short strings.)
            return Ok(unsafe { std::str::from_utf8_unchecked(b) });
        }
        utf8_beyond_ascii(b, what)
    }

    /// string reads an INT16-length string; -1 (null) is an error here.
    #[inline(always)]
    pub fn string(&mut self) -> Result<&'a str> {
        self.nullable_string()?
            .ok_or_else(|| Error::malformed("non-nullable string is null"))
    }

    /// nullable_string reads an INT16-length string, `None` for length -1.
    #[inline(always)]
    pub fn nullable_string(&mut self) -> Result<Option<&'a str>> {
        let n = self.i16()?;
        match n {
            -1 => Ok(None),
            n if n < 0 => Err(negative("string", n.into())),
            n => self.utf8(n as usize, "string").map(Some),
        }
    }

    /// compact_string reads an UNSIGNED_VARINT (length + 1) string; null is an error here.
    #[inline(always)]
    pub fn compact_string(&mut self) -> Result<&'a str> {
        self.compact_nullable_string()?
            .ok_or_else(|| Error::malformed("non-nullable compact string is null"))
    }

    /// compact_nullable_string reads an UNSIGNED_VARINT (length + 1) string, `None` for 0.
    #[inline(always)]
    pub fn compact_nullable_string(&mut self) -> Result<Option<&'a str>> {
        match self.unsigned_varint()? {
            0 => Ok(None),
            n => self.utf8((n - 1) as usize, "compact string").map(Some),
        }
    }

    /// bytes reads INT32-length bytes; null is an error here.
    #[inline]
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        self.nullable_bytes()?
            .ok_or_else(|| Error::malformed("non-nullable bytes are null"))
    }

    /// nullable_bytes reads INT32-length bytes, `None` for length -1.
    #[inline]
    pub fn nullable_bytes(&mut self) -> Result<Option<&'a [u8]>> {
        match self.i32()? {
            -1 => Ok(None),
            n if n < 0 => Err(negative("bytes", n.into())),
            n => self.take(n as usize, "bytes").map(Some),
        }
    }

    /// compact_bytes reads UNSIGNED_VARINT (length + 1) bytes; null is an error here.
    #[inline]
    pub fn compact_bytes(&mut self) -> Result<&'a [u8]> {
        self.compact_nullable_bytes()?
            .ok_or_else(|| Error::malformed("non-nullable compact bytes are null"))
    }

    /// compact_nullable_bytes reads UNSIGNED_VARINT (length + 1) bytes, `None` for 0.
    #[inline]
    pub fn compact_nullable_bytes(&mut self) -> Result<Option<&'a [u8]>> {
        match self.unsigned_varint()? {
            0 => Ok(None),
            n => self.take((n - 1) as usize, "compact bytes").map(Some),
        }
    }

    /// array_len reads an INT32 array count (`None` for -1, null) and checks it against the
    /// bytes left, assuming every element takes at least `min_elem` bytes (at least 1).
    pub fn array_len(&mut self, min_elem: usize) -> Result<Option<usize>> {
        match self.i32()? {
            -1 => Ok(None),
            n if n < 0 => Err(Error::malformed(format!("array count {n} is negative"))),
            n => self.check_count(n as usize, min_elem).map(Some),
        }
    }

    /// compact_array_len reads an UNSIGNED_VARINT (count + 1) array count, `None` for 0 (null),
    /// checked as [`array_len`](Self::array_len) does.
    pub fn compact_array_len(&mut self, min_elem: usize) -> Result<Option<usize>> {
        match self.unsigned_varint()? {
            0 => Ok(None),
            n => self.check_count((n - 1) as usize, min_elem).map(Some),
        }
    }

    /// check_count checks that `n` elements of at least `min_elem` bytes each (at least 1) fit
    /// in the bytes left.
    pub fn check_count(&self, n: usize, min_elem: usize) -> Result<usize> {
        if n.saturating_mul(min_elem.max(1)) > self.remaining() {
            return Err(Error::malformed(format!(
                "array count {n} cannot fit in the {} bytes left",
                self.remaining()
            )));
        }
        Ok(n)
    }

    /// skip_empty_tagged_fields consumes a tagged-field section if it is empty (a single zero
    /// byte, as nearly all are) and tells whether it did.
    #[inline]
    pub fn skip_empty_tagged_fields(&mut self) -> bool {
        if self.buf.get(self.pos) == Some(&0) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// tagged_fields reads a tagged-field section: (tag, raw value) pairs in the order sent.
    /// Tags must be strictly increasing, as Kafka requires.
    pub fn tagged_fields(&mut self) -> Result<Vec<(u32, &'a [u8])>> {
        let n = self.unsigned_varint()? as usize;
        self.check_count(n, 2)?;
        let mut out = Vec::with_capacity(n);
        let mut last: Option<u32> = None;
        for _ in 0..n {
            let tag = self.unsigned_varint()?;
            if last.is_some_and(|l| tag <= l) {
                return Err(Error::malformed(format!(
                    "tagged field {tag} is out of order"
                )));
            }
            last = Some(tag);
            let size = self.unsigned_varint()? as usize;
            out.push((tag, self.take(size, "tagged field")?));
        }
        Ok(out)
    }
}

/// Buf is where a [`Writer`] puts bytes: a growing `Vec<u8>`, or a [`SliceBuf`] of fixed
/// size (to write straight into memory allocated elsewhere, such as a Python `bytes`).
pub trait Buf {
    fn extend_from_slice(&mut self, b: &[u8]);
    fn push(&mut self, b: u8);
    /// put writes a few bytes of a size known when compiling (a fixed-width integer).
    #[inline(always)]
    fn put<const N: usize>(&mut self, b: [u8; N]) {
        self.extend_from_slice(&b)
    }
    /// hole writes the `len` bytes of a records value the message does not hold
    /// ([`Value::Hole`](super::value::Value::Hole) number `index`), after its length prefix. A
    /// buffer that cannot supply them refuses, as these do: only a frame written in segments
    /// ([`Prepared::segments`](super::frame::Prepared::segments)) takes holes.
    fn hole(&mut self, index: u32, len: usize) -> Result<()> {
        let _ = len;
        Err(Error::InvalidArgument(format!(
            "records hole {index} can only be written into a frame of segments"
        )))
    }
}

/// put_vec appends `N` bytes to a vector as one store, where `extend_from_slice` would call
/// memcpy for a 4-byte integer.
#[inline(always)]
pub fn put_vec<const N: usize>(v: &mut Vec<u8>, b: [u8; N]) {
    v.reserve(N);
    let len = v.len();
    // SAFETY: `reserve` made room for N more bytes past `len`; they are written (unaligned, as
    // a byte array) before the length covers them.
    unsafe {
        std::ptr::write_unaligned(v.as_mut_ptr().add(len) as *mut [u8; N], b);
        v.set_len(len + N);
    }
}

impl Buf for Vec<u8> {
    #[inline]
    fn extend_from_slice(&mut self, b: &[u8]) {
        Vec::extend_from_slice(self, b)
    }
    #[inline(always)]
    fn put<const N: usize>(&mut self, b: [u8; N]) {
        put_vec(self, b)
    }
    #[inline]
    fn push(&mut self, b: u8) {
        Vec::push(self, b)
    }
}

/// SliceBuf fills a slice from its start. It never writes past the end: bytes that do not fit
/// are dropped and [`overflowed`](SliceBuf::overflowed) turns true.
#[derive(Debug)]
pub struct SliceBuf<'a> {
    buf: &'a mut [u8],
    pos: usize,
    overflow: bool,
}

impl<'a> SliceBuf<'a> {
    pub fn new(buf: &'a mut [u8]) -> Self {
        SliceBuf {
            buf,
            pos: 0,
            overflow: false,
        }
    }
    /// written is how many bytes were written.
    pub fn written(&self) -> usize {
        self.pos
    }
    /// overflowed tells whether anything was dropped for lack of room.
    pub fn overflowed(&self) -> bool {
        self.overflow
    }
    /// next gives the next `n` bytes to fill in place, counted as written, or None (and
    /// overflowed) when they do not fit.
    pub fn next(&mut self, n: usize) -> Option<&mut [u8]> {
        match self.buf.get_mut(self.pos..self.pos + n) {
            Some(dst) => {
                self.pos += n;
                Some(dst)
            }
            None => {
                self.overflow = true;
                None
            }
        }
    }
}

impl Buf for SliceBuf<'_> {
    #[inline]
    fn extend_from_slice(&mut self, b: &[u8]) {
        match self.buf.get_mut(self.pos..self.pos + b.len()) {
            Some(dst) => {
                dst.copy_from_slice(b);
                self.pos += b.len();
            }
            None => self.overflow = true,
        }
    }
    #[inline]
    fn push(&mut self, b: u8) {
        match self.buf.get_mut(self.pos) {
            Some(dst) => {
                *dst = b;
                self.pos += 1;
            }
            None => self.overflow = true,
        }
    }
}

/// Writer appends primitives to a buffer (a byte vector by default). Writing never fails.
#[derive(Debug, Default, Clone)]
pub struct Writer<B: Buf = Vec<u8>> {
    pub buf: B,
}

impl Writer {
    pub fn new() -> Self {
        Writer { buf: Vec::new() }
    }

    pub fn with_capacity(n: usize) -> Self {
        Writer {
            buf: Vec::with_capacity(n),
        }
    }

    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }
}

impl<B: Buf> Writer<B> {
    /// over writes into any buffer.
    pub fn over(buf: B) -> Self {
        Writer { buf }
    }

    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }
    #[inline]
    pub fn i16(&mut self, v: i16) {
        self.buf.put(v.to_be_bytes());
    }
    #[inline]
    pub fn i32(&mut self, v: i32) {
        self.buf.put(v.to_be_bytes());
    }
    #[inline]
    pub fn i64(&mut self, v: i64) {
        self.buf.put(v.to_be_bytes());
    }
    #[inline]
    pub fn u16(&mut self, v: u16) {
        self.buf.put(v.to_be_bytes());
    }
    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.buf.put(v.to_be_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn boolean(&mut self, v: bool) {
        self.buf.push(v as u8);
    }
    pub fn uuid(&mut self, v: &[u8; 16]) {
        self.buf.extend_from_slice(v);
    }
    pub fn raw(&mut self, v: &[u8]) {
        self.buf.extend_from_slice(v);
    }

    #[inline]
    pub fn unsigned_varint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    pub fn unsigned_varlong(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    pub fn varint(&mut self, v: i32) {
        self.unsigned_varint(((v << 1) ^ (v >> 31)) as u32);
    }

    pub fn varlong(&mut self, v: i64) {
        self.unsigned_varlong(((v << 1) ^ (v >> 63)) as u64);
    }

    pub fn string(&mut self, v: &str) {
        self.i16(v.len() as i16);
        self.raw(v.as_bytes());
    }
    pub fn nullable_string(&mut self, v: Option<&str>) {
        match v {
            None => self.i16(-1),
            Some(s) => self.string(s),
        }
    }
    pub fn compact_string(&mut self, v: &str) {
        self.unsigned_varint(v.len() as u32 + 1);
        self.raw(v.as_bytes());
    }
    pub fn compact_nullable_string(&mut self, v: Option<&str>) {
        match v {
            None => self.unsigned_varint(0),
            Some(s) => self.compact_string(s),
        }
    }
    pub fn bytes(&mut self, v: &[u8]) {
        self.i32(v.len() as i32);
        self.raw(v);
    }
    pub fn nullable_bytes(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.i32(-1),
            Some(b) => self.bytes(b),
        }
    }
    pub fn compact_bytes(&mut self, v: &[u8]) {
        self.unsigned_varint(v.len() as u32 + 1);
        self.raw(v);
    }
    pub fn compact_nullable_bytes(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.unsigned_varint(0),
            Some(b) => self.compact_bytes(b),
        }
    }
    /// array_len writes an INT32 count, -1 for a null array.
    pub fn array_len(&mut self, n: Option<usize>) {
        self.i32(n.map_or(-1, |n| n as i32));
    }
    /// compact_array_len writes an UNSIGNED_VARINT count + 1, 0 for a null array.
    #[inline]
    pub fn compact_array_len(&mut self, n: Option<usize>) {
        self.unsigned_varint(n.map_or(0, |n| n as u32 + 1));
    }
    /// tagged_fields writes a tagged-field section; `fields` must be sorted by tag.
    pub fn tagged_fields(&mut self, fields: &[(u32, &[u8])]) {
        self.unsigned_varint(fields.len() as u32);
        for (tag, v) in fields {
            self.unsigned_varint(*tag);
            self.unsigned_varint(v.len() as u32);
            self.raw(v);
        }
    }
}

/// unsigned_varint_len is the encoded size of `v` as an UNSIGNED_VARINT.
pub fn unsigned_varint_len(v: u32) -> usize {
    match v {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0xfff_ffff => 4,
        _ => 5,
    }
}

/// varint_len is the encoded size of `v` as a zigzag VARINT.
pub fn varint_len(v: i32) -> usize {
    unsigned_varint_len(((v << 1) ^ (v >> 31)) as u32)
}

/// varlong_len is the encoded size of `v` as a zigzag VARLONG.
pub fn varlong_len(v: i64) -> usize {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    let mut n = 1;
    while u >= 0x80 {
        u >>= 7;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors from Kafka's ByteUtilsTest (testUnsignedVarintSerde / testVarintSerde /
    // testVarlongSerde).
    #[test]
    fn varints_match_kafka_byte_utils_test() {
        let unsigned: [(u32, &[u8]); 5] = [
            (0, &[0x00]),
            (0x7f, &[0x7f]),
            (0x80, &[0x80, 0x01]),
            (0x3fff, &[0xff, 0x7f]),
            (u32::MAX, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ];
        for (v, bytes) in unsigned {
            let mut w = Writer::new();
            w.unsigned_varint(v);
            assert_eq!(w.buf, bytes);
            assert_eq!(unsigned_varint_len(v), bytes.len());
            assert_eq!(Reader::new(bytes).unsigned_varint().unwrap(), v);
        }
        let signed: [(i32, &[u8]); 5] = [
            (0, &[0x00]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (i32::MAX, &[0xfe, 0xff, 0xff, 0xff, 0x0f]),
            (i32::MIN, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ];
        for (v, bytes) in signed {
            let mut w = Writer::new();
            w.varint(v);
            assert_eq!(w.buf, bytes);
            assert_eq!(varint_len(v), bytes.len());
            assert_eq!(Reader::new(bytes).varint().unwrap(), v);
        }
        for v in [0i64, -1, 1, i64::MAX, i64::MIN, 1 << 40] {
            let mut w = Writer::new();
            w.varlong(v);
            assert_eq!(varlong_len(v), w.buf.len());
            assert_eq!(Reader::new(&w.buf).varlong().unwrap(), v);
        }
    }

    #[test]
    fn bad_varints_are_errors() {
        assert!(Reader::new(&[0x80, 0x80]).unsigned_varint().is_err());
        assert!(Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x1f])
            .unsigned_varint()
            .is_err());
        assert!(Reader::new(&[0xff; 11]).unsigned_varlong().is_err());
    }

    #[test]
    fn strings_bytes_and_nulls_round_trip() {
        let mut w = Writer::new();
        w.string("kafka");
        w.nullable_string(None);
        w.compact_string("é");
        w.compact_nullable_string(None);
        w.bytes(b"\x00\x01");
        w.nullable_bytes(None);
        w.compact_bytes(b"");
        w.compact_nullable_bytes(None);
        let mut r = Reader::new(&w.buf);
        assert_eq!(r.string().unwrap(), "kafka");
        assert_eq!(r.nullable_string().unwrap(), None);
        assert_eq!(r.compact_string().unwrap(), "é");
        assert_eq!(r.compact_nullable_string().unwrap(), None);
        assert_eq!(r.bytes().unwrap(), b"\x00\x01");
        assert_eq!(r.nullable_bytes().unwrap(), None);
        assert_eq!(r.compact_bytes().unwrap(), b"");
        assert_eq!(r.compact_nullable_bytes().unwrap(), None);
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn hostile_lengths_are_errors_not_allocations() {
        assert!(Reader::new(&[0x7f, 0xff, 0xff, 0xff]).array_len(1).is_err());
        assert!(Reader::new(&[0xff, 0xff, 0xff, 0xfe]).array_len(1).is_err());
        assert!(Reader::new(&[0x00, 0x05, b'a']).string().is_err());
        assert!(Reader::new(&[0xff, 0xfe]).nullable_string().is_err());
        assert!(Reader::new(&[0x02, 0xff]).compact_string().is_err()); // invalid UTF-8
        assert!(Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f])
            .compact_array_len(1)
            .is_err());
        // Tagged fields: out of order, and a size past the end.
        assert!(Reader::new(&[0x02, 0x01, 0x00, 0x00, 0x00])
            .tagged_fields()
            .is_err());
        assert!(Reader::new(&[0x01, 0x00, 0x09, 0x00])
            .tagged_fields()
            .is_err());
    }

    #[test]
    fn tagged_fields_round_trip() {
        let mut w = Writer::new();
        w.tagged_fields(&[(0, b"ab"), (7, b"")]);
        let got = Reader::new(&w.buf).tagged_fields().unwrap();
        assert_eq!(got, vec![(0u32, &b"ab"[..]), (7, &b""[..])]);
    }
}
