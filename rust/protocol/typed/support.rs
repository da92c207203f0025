//! What the generated typed messages share: reading and writing each kind of field with the
//! generic codec's checks and errors, so that a typed message and the generic interpreter
//! accept the same bytes, reject the same bytes with the same kind of error, and write the same
//! bytes.

use std::borrow::Cow;

pub use crate::errors::{Error, Result};
pub use crate::protocol::primitives::{Buf, Reader, Writer};
pub use crate::protocol::schema::Message;

/// at puts `name` in front of the path of an error met inside a field.
#[cold]
#[inline(never)]
pub fn at(e: Error, name: &str) -> Error {
    match e {
        Error::Malformed(mut m) => {
            m.path = join(name, &m.path);
            Error::Malformed(m)
        }
        Error::InvalidArgument(t) => Error::InvalidArgument(format!("{name}: {t}")),
        e => e,
    }
}

/// at_index puts `[i]` in front of the path of an error met inside an array's element.
#[cold]
#[inline(never)]
pub fn at_index(e: Error, i: usize) -> Error {
    at(e, &format!("[{i}]"))
}

fn join(head: &str, path: &str) -> String {
    if path.is_empty() {
        head.to_string()
    } else if path.starts_with('[') || head.is_empty() {
        format!("{head}{path}")
    } else {
        format!("{head}.{path}")
    }
}

/// finish names the message and version in an error, as the generic codec does:
/// `JoinGroupRequest v5: protocols[0].name: truncated string: ...`.
#[cold]
#[inline(never)]
pub fn finish(e: Error, msg: &Message, version: i16) -> Error {
    match e {
        Error::Malformed(mut m) => {
            if m.context.is_empty() {
                m.context = format!("{} v{version}", msg.name);
            }
            Error::Malformed(m)
        }
        Error::InvalidArgument(t) => {
            Error::InvalidArgument(format!("{} v{version}: {t}", msg.name))
        }
        e => e,
    }
}

/// check_version fails for a version the message does not define.
#[inline]
pub fn check_version(msg: &Message, version: i16) -> Result<()> {
    if msg.valid.contains(version) {
        Ok(())
    } else {
        Err(unsupported(msg, version))
    }
}

#[cold]
#[inline(never)]
fn unsupported(msg: &Message, version: i16) -> Error {
    Error::unsupported_version(
        msg.api_key,
        version,
        Some((msg.name, msg.valid.to_string())),
    )
}

/// left_over fails when a whole body left bytes unread.
#[inline]
pub fn left_over(r: &Reader<'_>, msg: &Message, version: i16) -> Result<()> {
    if r.remaining() == 0 {
        Ok(())
    } else {
        Err(finish(
            Error::malformed(format!("{} bytes left over after the body", r.remaining())),
            msg,
            version,
        ))
    }
}

/// tagged_done fails when a known tagged field did not fill the size it declared.
#[inline]
pub fn tagged_done(r: &Reader<'_>, tag: u32, name: &str) -> Result<()> {
    if r.remaining() == 0 {
        Ok(())
    } else {
        Err(at(
            Error::malformed(format!(
                "tagged field {tag} has {} bytes past its value",
                r.remaining()
            )),
            name,
        ))
    }
}

/// absent fails for a field a version lacks that holds a value other than its default.
#[cold]
#[inline(never)]
pub fn absent(version: i16, name: &str, versions: &str) -> Error {
    Error::InvalidArgument(format!(
        "{name}: version {version} has no such field (versions {versions}); it must be left at \
         its default"
    ))
}

/// not_flexible fails for unknown tagged fields in a version without a tagged section.
#[cold]
#[inline(never)]
pub fn not_flexible(version: i16) -> Error {
    Error::InvalidArgument(format!(
        "version {version} is not flexible and cannot carry tagged fields"
    ))
}

#[cold]
#[inline(never)]
fn not_nullable(version: i16) -> Error {
    Error::InvalidArgument(format!("is not nullable in version {version}"))
}

// ---------------------------------------------------------------------------------------------
// reading

/// get_opt_str reads a string that may be null in this version.
#[inline(always)]
pub fn get_opt_str<'a>(
    r: &mut Reader<'a>,
    flexible: bool,
    nullable: bool,
) -> Result<Option<Cow<'a, str>>> {
    let s = if flexible {
        r.compact_nullable_string()?
    } else {
        r.nullable_string()?
    };
    match s {
        Some(s) => Ok(Some(Cow::Borrowed(s))),
        None if nullable => Ok(None),
        None => Err(Error::malformed("non-nullable string is null")),
    }
}

/// get_str reads a string that is never null.
#[inline(always)]
pub fn get_str<'a>(r: &mut Reader<'a>, flexible: bool) -> Result<Cow<'a, str>> {
    get_opt_str(r, flexible, false).map(Option::unwrap_or_default)
}

/// get_opt_struct reads a struct that may be null in this version: there it starts with a
/// marker byte, negative for null (Kafka writes -1) and 1 for a struct that follows.
#[inline]
pub fn get_opt_struct<'a, T>(
    r: &mut Reader<'a>,
    nullable: bool,
    read: impl FnOnce(&mut Reader<'a>) -> Result<T>,
) -> Result<Option<T>> {
    if nullable && r.i8()? < 0 {
        return Ok(None);
    }
    read(r).map(Some)
}

/// get_opt_bytes reads bytes (or records) that may be null in this version.
#[inline]
pub fn get_opt_bytes<'a>(
    r: &mut Reader<'a>,
    flexible: bool,
    nullable: bool,
) -> Result<Option<Cow<'a, [u8]>>> {
    let b = if flexible {
        r.compact_nullable_bytes()?
    } else {
        r.nullable_bytes()?
    };
    match b {
        Some(b) => Ok(Some(Cow::Borrowed(b))),
        None if nullable => Ok(None),
        None => Err(Error::malformed("non-nullable bytes are null")),
    }
}

/// get_bytes reads bytes that are never null.
#[inline]
pub fn get_bytes<'a>(r: &mut Reader<'a>, flexible: bool) -> Result<Cow<'a, [u8]>> {
    get_opt_bytes(r, flexible, false).map(Option::unwrap_or_default)
}

/// get_opt_array reads an array that may be null in this version, each element with `item`.
/// The count is checked against the bytes left (at least `min` bytes an element) before
/// anything is reserved.
#[inline]
pub fn get_opt_array<'a, T>(
    r: &mut Reader<'a>,
    flexible: bool,
    nullable: bool,
    min: usize,
    mut item: impl FnMut(&mut Reader<'a>) -> Result<T>,
) -> Result<Option<Vec<T>>> {
    let n = if flexible {
        r.compact_array_len(min)?
    } else {
        r.array_len(min)?
    };
    let Some(n) = n else {
        return if nullable {
            Ok(None)
        } else {
            Err(Error::malformed("non-nullable array is null"))
        };
    };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(item(r).map_err(|e| at_index(e, i))?);
    }
    Ok(Some(out))
}

/// get_array reads an array that is never null.
#[inline]
pub fn get_array<'a, T>(
    r: &mut Reader<'a>,
    flexible: bool,
    min: usize,
    item: impl FnMut(&mut Reader<'a>) -> Result<T>,
) -> Result<Vec<T>> {
    get_opt_array(r, flexible, false, min, item).map(Option::unwrap_or_default)
}

/// get_i32s reads an array of int32s.
#[inline]
pub fn get_opt_i32s(
    r: &mut Reader<'_>,
    flexible: bool,
    nullable: bool,
) -> Result<Option<Vec<i32>>> {
    get_opt_array(r, flexible, nullable, 4, |r| r.i32())
}

// ---------------------------------------------------------------------------------------------
// writing

#[inline]
fn put_len<B: Buf>(w: &mut Writer<B>, n: Option<usize>, flexible: bool) {
    if flexible {
        w.compact_array_len(n)
    } else {
        w.array_len(n)
    }
}

/// put_str writes a string, checking its length as the generic codec does.
#[inline]
pub fn put_str<B: Buf>(w: &mut Writer<B>, s: &str, flexible: bool) -> Result<()> {
    if flexible {
        if s.len() >= u32::MAX as usize {
            return Err(Error::InvalidArgument("string is too long".into()));
        }
        w.compact_string(s);
    } else {
        if s.len() > i16::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "string of {} bytes is longer than the 32767 an INT16 length allows",
                s.len()
            )));
        }
        w.string(s);
    }
    Ok(())
}

/// put_opt_str writes a string or a null, which the version must allow.
#[inline]
pub fn put_opt_str<B: Buf>(
    w: &mut Writer<B>,
    s: Option<&str>,
    flexible: bool,
    nullable: bool,
    version: i16,
) -> Result<()> {
    match s {
        Some(s) => put_str(w, s, flexible),
        None if !nullable => Err(not_nullable(version)),
        None if flexible => {
            w.compact_nullable_string(None);
            Ok(())
        }
        None => {
            w.nullable_string(None);
            Ok(())
        }
    }
}

/// put_opt_struct writes a struct that may be null in this version: its marker byte (-1 for
/// null, 1 for a struct), then the struct.
#[inline]
pub fn put_opt_struct<B: Buf, T>(
    w: &mut Writer<B>,
    x: Option<&T>,
    nullable: bool,
    version: i16,
    write: impl FnOnce(&mut Writer<B>, &T) -> Result<()>,
) -> Result<()> {
    match x {
        Some(x) => {
            if nullable {
                w.i8(1);
            }
            write(w, x)
        }
        None if !nullable => Err(not_nullable(version)),
        None => {
            w.i8(-1);
            Ok(())
        }
    }
}

/// put_bytes writes bytes, checking their length.
#[inline]
pub fn put_bytes<B: Buf>(w: &mut Writer<B>, b: &[u8], flexible: bool) -> Result<()> {
    if b.len() > i32::MAX as usize - 1 {
        return Err(Error::InvalidArgument(format!(
            "{} bytes are more than an INT32 length allows",
            b.len()
        )));
    }
    if flexible {
        w.compact_bytes(b)
    } else {
        w.bytes(b)
    }
    Ok(())
}

/// put_opt_bytes writes bytes or a null, which the version must allow.
#[inline]
pub fn put_opt_bytes<B: Buf>(
    w: &mut Writer<B>,
    b: Option<&[u8]>,
    flexible: bool,
    nullable: bool,
    version: i16,
) -> Result<()> {
    match b {
        Some(b) => put_bytes(w, b, flexible),
        None if !nullable => Err(not_nullable(version)),
        None if flexible => {
            w.compact_nullable_bytes(None);
            Ok(())
        }
        None => {
            w.nullable_bytes(None);
            Ok(())
        }
    }
}

/// put_opt_array writes an array or a null, which the version must allow, each element with
/// `item`.
#[inline]
pub fn put_opt_array<B: Buf, T>(
    w: &mut Writer<B>,
    items: Option<&[T]>,
    flexible: bool,
    nullable: bool,
    version: i16,
    mut item: impl FnMut(&mut Writer<B>, &T) -> Result<()>,
) -> Result<()> {
    let Some(items) = items else {
        if !nullable {
            return Err(not_nullable(version));
        }
        put_len(w, None, flexible);
        return Ok(());
    };
    if items.len() > i32::MAX as usize - 1 {
        return Err(Error::InvalidArgument(format!(
            "{} elements are more than an array can hold",
            items.len()
        )));
    }
    put_len(w, Some(items.len()), flexible);
    for (i, x) in items.iter().enumerate() {
        item(w, x).map_err(|e| at_index(e, i))?;
    }
    Ok(())
}

/// put_array writes an array that is never null.
#[inline]
pub fn put_array<B: Buf, T>(
    w: &mut Writer<B>,
    items: &[T],
    flexible: bool,
    version: i16,
    item: impl FnMut(&mut Writer<B>, &T) -> Result<()>,
) -> Result<()> {
    put_opt_array(w, Some(items), flexible, false, version, item)
}

/// Tagged is a tagged-field section being written: the known fields that hold a value other
/// than their default, each already encoded, and the unknown ones kept from a decode.
pub type Unknown<'a> = Vec<(u32, Cow<'a, [u8]>)>;

/// put_tagged writes a tagged-field section: `known` (encoded values) and `unknown`, sorted by
/// tag; a tag given twice is an error.
#[inline]
pub fn put_tagged<B: Buf>(
    w: &mut Writer<B>,
    known: Vec<(u32, Vec<u8>)>,
    unknown: &[(u32, Cow<'_, [u8]>)],
) -> Result<()> {
    if known.is_empty() && unknown.is_empty() {
        w.unsigned_varint(0);
        return Ok(());
    }
    let mut all: Vec<(u32, &[u8])> = known
        .iter()
        .map(|(t, b)| (*t, b.as_slice()))
        .chain(unknown.iter().map(|(t, b)| (*t, b.as_ref())))
        .collect();
    all.sort_by_key(|(t, _)| *t);
    for pair in all.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(Error::InvalidArgument(format!(
                "tagged field {} is given twice",
                pair[0].0
            )));
        }
    }
    w.tagged_fields(&all);
    Ok(())
}

/// read_tagged reads a tagged-field section when there is one: `known` takes each field it
/// knows and returns false for the others, which go to `unknown`.
#[inline(always)]
pub fn read_tagged<'a>(
    r: &mut Reader<'a>,
    unknown: &mut Unknown<'a>,
    mut known: impl FnMut(u32, &'a [u8]) -> Result<bool>,
) -> Result<()> {
    if r.skip_empty_tagged_fields() {
        return Ok(());
    }
    for (tag, raw) in r.tagged_fields()? {
        if !known(tag, raw)? {
            unknown.push((tag, Cow::Borrowed(raw)));
        }
    }
    Ok(())
}
