//! The generic interpreter: decode, encode and size any message from its definition alone.
//!
//! Decoding never panics and never allocates beyond what the input can justify: every count
//! is checked against the bytes left (times the least an element can take) before anything is
//! reserved, strings must be UTF-8, tagged fields must come in ascending order, and a known
//! tagged field must fill exactly the size it declares. Encoding checks every value against
//! its field (type, nullability, length limits, and Kafka's rule that a non-ignorable field
//! cannot carry a non-default value in a version that lacks it).

use std::borrow::Cow;

use super::primitives::{unsigned_varint_len, Buf, Reader, Writer};
use super::schema::{DefaultValue, Field, Message, Type};
use super::value::{default_value, is_default, shared_defaults, Arena, Seq, Struct, Value};
use crate::errors::{Error, Malformed, Result};

/// Located is an error on its way out of a nested value, collecting where it happened. Boxed,
/// so that the results moved around on the hot path stay as small as the values they carry.
struct Located(Box<LocatedError>);

struct LocatedError {
    err: Error,
    path: Vec<Seg>,
}

enum Seg {
    Name(&'static str),
    Index(usize),
}

impl From<Error> for Located {
    #[cold]
    fn from(err: Error) -> Self {
        Located(Box::new(LocatedError {
            err,
            path: Vec::new(),
        }))
    }
}

type Res<T> = std::result::Result<T, Located>;

#[cold]
fn at(mut e: Located, name: &'static str) -> Located {
    e.0.path.push(Seg::Name(name));
    e
}

#[cold]
fn at_index(mut e: Located, i: usize) -> Located {
    e.0.path.push(Seg::Index(i));
    e
}

/// finish turns a located error into the core error, naming the message and the path:
/// `JoinGroupRequest v5: protocols[0].name: truncated string: ...`.
#[cold]
fn finish(e: Located, msg: &Message, version: i16) -> Error {
    place(e, Some(format!("{} v{version}", msg.name)))
}

/// place puts a located error's path (and the message it was in, when known) into the error:
/// into the fields of a [`Error::Malformed`], into the text of an argument error. Other kinds
/// say all they need already.
#[cold]
fn place(e: Located, context: Option<String>) -> Error {
    let e = *e.0;
    let mut path = String::new();
    for seg in e.path.iter().rev() {
        match seg {
            Seg::Name(n) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(n);
            }
            Seg::Index(i) => path.push_str(&format!("[{i}]")),
        }
    }
    let prefix = |text: String| {
        let mut out = String::new();
        for part in [context.as_deref().unwrap_or(""), &path] {
            if !part.is_empty() {
                out.push_str(part);
                out.push_str(": ");
            }
        }
        out + &text
    };
    match e.err {
        Error::Malformed(mut m) => {
            if m.path.is_empty() {
                m.path = path;
            }
            if m.context.is_empty() {
                m.context = context.unwrap_or_default();
            }
            Error::Malformed(m)
        }
        Error::InvalidArgument(t) => Error::InvalidArgument(prefix(t)),
        Error::InvalidType(t) => Error::InvalidType(prefix(t)),
        other => other,
    }
}

/// Ctx is the version being read or written and whether it is flexible.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    version: i16,
    flexible: bool,
    /// mem is where decoding puts the tree (unused when encoding).
    mem: Mem<'a>,
}

impl Ctx<'_> {
    /// new is a context that allocates on the heap (encoding and sizing allocate nothing).
    fn new(version: i16, flexible: bool) -> Self {
        Ctx {
            version,
            flexible,
            mem: Mem::Heap,
        }
    }

    /// field_flexible is the encoding a field uses: its own override, else the message's.
    #[inline]
    fn field_flexible(&self, f: &Field) -> bool {
        match f.flexible {
            Some(v) => v.contains(self.version),
            None => self.flexible,
        }
    }
}

fn check_version(msg: &Message, version: i16) -> Result<()> {
    if msg.valid.contains(version) {
        Ok(())
    } else {
        Err(Error::unsupported_version(
            msg.api_key,
            version,
            Some((msg.name, msg.valid.to_string())),
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// decode

/// decode_message decodes a whole body of `msg` at `version`; every byte must be used. The
/// tree is allocated on the heap; [`decode_message_in`] allocates it in an arena.
pub fn decode_message<'a>(msg: &Message, version: i16, buf: &'a [u8]) -> Result<Struct<'a>> {
    decode_whole(Mem::Heap, msg, version, buf)
}

/// decode_message_in decodes a whole body as [`decode_message`] does, with the tree's values
/// in `arena`: much faster for a large body, which is then freed all at once.
pub fn decode_message_in<'a>(
    arena: &'a Arena<'a>,
    msg: &Message,
    version: i16,
    buf: &'a [u8],
) -> Result<Struct<'a>> {
    decode_whole(Mem::Arena(arena), msg, version, buf)
}

pub(crate) fn decode_whole<'a>(
    mem: Mem<'a>,
    msg: &Message,
    version: i16,
    buf: &'a [u8],
) -> Result<Struct<'a>> {
    check_version(msg, version)?;
    let mut r = Reader::new(buf);
    let s = decode_body_in(mem, &mut r, msg, version)?;
    if r.remaining() != 0 {
        return Err(Error::Malformed(Box::new(Malformed {
            context: format!("{} v{version}", msg.name),
            path: String::new(),
            reason: format!("{} bytes left over after the body", r.remaining()),
        })));
    }
    Ok(s)
}

/// decode_body decodes a body of `msg` at `version` from the reader, leaving what follows.
pub fn decode_body<'a>(r: &mut Reader<'a>, msg: &Message, version: i16) -> Result<Struct<'a>> {
    decode_body_in(Mem::Heap, r, msg, version)
}

/// Mem is where a decoded tree's values go.
#[derive(Clone, Copy)]
pub(crate) enum Mem<'a> {
    Heap,
    Arena(&'a Arena<'a>),
}

impl<'a> Mem<'a> {
    /// slots gives `n` null slots, fills them with `fill` and returns them.
    #[inline(always)]
    fn slots<E>(
        self,
        n: usize,
        fill: impl FnOnce(&mut [Value<'a>]) -> std::result::Result<(), E>,
    ) -> std::result::Result<Seq<'a, Value<'a>>, E> {
        match self {
            Mem::Heap => {
                let mut v: Vec<Value<'a>> = Vec::with_capacity(n);
                v.resize_with(n, || Value::Null);
                fill(&mut v)?;
                Ok(Seq::Owned(v))
            }
            Mem::Arena(a) => {
                let s = a.nulls(n);
                fill(s)?;
                Ok(Seq::Borrowed(s))
            }
        }
    }
}

pub(crate) fn decode_body_in<'a>(
    mem: Mem<'a>,
    r: &mut Reader<'a>,
    msg: &Message,
    version: i16,
) -> Result<Struct<'a>> {
    check_version(msg, version)?;
    let ctx = Ctx {
        version,
        flexible: msg.is_flexible(version),
        mem,
    };
    decode_struct(r, msg.fields, shared_defaults(msg.fields), ctx)
        .map_err(|e| finish(e, msg, version))
}

// The decoders write each value straight into its slot in the slice that holds it, rather
// than returning it: moving 48-byte values out of calls and into vectors cost more than the
// decoding itself (the CPU stalls on reloading what it has just stored).

/// put writes a value into a slot that holds `Value::Null`, without dropping it (there is
/// nothing to drop): the decoders fill slots created as nulls.
#[inline(always)]
fn put<'a>(slot: &mut Value<'a>, v: Value<'a>) {
    debug_assert!(matches!(slot, Value::Null));
    // SAFETY: `slot` is a valid, aligned, exclusive reference; the value it held (a null)
    // owns nothing, so overwriting it without dropping it leaks nothing.
    unsafe { std::ptr::write(slot, v) }
}

/// decode_struct reads a struct of `fields`; `defaults` are its fields' default values when it
/// is one of the definitions' structs (looked up by the caller, once for a whole array).
fn decode_struct<'a>(
    r: &mut Reader<'a>,
    fields: &'static [Field],
    defaults: Option<&'static [Value<'static>]>,
    ctx: Ctx<'a>,
) -> Res<Struct<'a>> {
    let mut unknown_tagged = Vec::new();
    let values = ctx.mem.slots(fields.len(), |out| {
        for (i, (f, slot)) in fields.iter().zip(out.iter_mut()).enumerate() {
            if !f.versions.contains(ctx.version) || f.is_tagged_in(ctx.version) {
                if !matches!(f.default, DefaultValue::Null) {
                    put(
                        slot,
                        match defaults {
                            // SAFETY: shared defaults own nothing (checked when they are
                            // built), so this bitwise copy is a clone that needs no drop.
                            Some(d) => unsafe { std::ptr::read(&d[i]) },
                            None => default_value(f),
                        },
                    );
                }
            } else if matches!(f.ty, Type::Array(_) | Type::Struct) {
                decode_field(r, f, ctx, slot).map_err(|e| at(e, f.name))?;
            } else {
                // Scalars, the most common fields, without the call.
                let nullable = f.nullable.contains(ctx.version);
                decode_scalar(r, f.ty, nullable, ctx.field_flexible(f), slot)
                    .map_err(|e| at(e.into(), f.name))?;
            }
        }
        if ctx.flexible && !r.skip_empty_tagged_fields() {
            for (tag, raw) in r.tagged_fields()? {
                let known = fields.iter().position(|f| {
                    f.tag == Some(tag)
                        && f.is_tagged_in(ctx.version)
                        && f.versions.contains(ctx.version)
                });
                match known {
                    Some(i) => {
                        let f = &fields[i];
                        let mut sub = Reader::new(raw);
                        out[i] = Value::Null;
                        decode_field(&mut sub, f, ctx, &mut out[i]).map_err(|e| at(e, f.name))?;
                        if sub.remaining() != 0 {
                            let e = Error::malformed(format!(
                                "tagged field {tag} has {} bytes past its value",
                                sub.remaining()
                            ));
                            return Err(at(e.into(), f.name));
                        }
                    }
                    None => unknown_tagged.push((tag, Cow::Borrowed(raw))),
                }
            }
        }
        Ok(())
    })?;
    let unknown_tagged = match ctx.mem {
        Mem::Arena(a) if !unknown_tagged.is_empty() => Seq::Borrowed(a.tagged(unknown_tagged)),
        _ => Seq::Owned(unknown_tagged),
    };
    Ok(Struct {
        fields: values,
        unknown_tagged,
    })
}

fn decode_field<'a>(
    r: &mut Reader<'a>,
    f: &'static Field,
    ctx: Ctx<'a>,
    slot: &mut Value<'a>,
) -> Res<()> {
    let nullable = f.nullable.contains(ctx.version);
    let flexible = ctx.field_flexible(f);
    match f.ty {
        Type::Array(elem) => {
            let n = if flexible {
                r.compact_array_len(1)?
            } else {
                r.array_len(1)?
            };
            let Some(n) = n else {
                return if nullable {
                    put(slot, Value::Null);
                    Ok(())
                } else {
                    Err(Error::malformed("non-nullable array is null").into())
                };
            };
            if n == 0 {
                put(
                    slot,
                    match elem {
                        Type::Int32 => Value::Int32s(Seq::Borrowed(&[])),
                        Type::Int64 => Value::Int64s(Seq::Borrowed(&[])),
                        _ => Value::Array(Seq::Borrowed(&[])),
                    },
                );
                return Ok(());
            }
            // Check the count against the least its elements can take, before reserving room.
            let min = match elem {
                Type::Struct => min_size(elem, f.fields, ctx),
                t => min_size(t, &[], Ctx { flexible, ..ctx }),
            };
            r.check_count(n, min)?;
            match elem {
                Type::Int32 => {
                    let raw = r.take(n * 4, "int32 array")?;
                    let items = raw
                        .chunks_exact(4)
                        .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]));
                    let items = match ctx.mem {
                        Mem::Heap => Seq::Owned(items.collect()),
                        Mem::Arena(a) => Seq::Borrowed(a.i32s(items)),
                    };
                    put(slot, Value::Int32s(items));
                    return Ok(());
                }
                Type::Int64 => {
                    let raw = r.take(n * 8, "int64 array")?;
                    let items = raw.chunks_exact(8).map(|c| {
                        i64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                    });
                    let items = match ctx.mem {
                        Mem::Heap => Seq::Owned(items.collect()),
                        Mem::Arena(a) => Seq::Borrowed(a.i64s(items)),
                    };
                    put(slot, Value::Int64s(items));
                    return Ok(());
                }
                _ => {}
            }
            // Looked up once for all elements.
            let defaults = match elem {
                Type::Struct => shared_defaults(f.fields),
                _ => None,
            };
            let items = ctx.mem.slots(n, |items| {
                for (i, item) in items.iter_mut().enumerate() {
                    match elem {
                        Type::Struct => match decode_struct(r, f.fields, defaults, ctx) {
                            Ok(s) => put(item, Value::Struct(s)),
                            Err(e) => return Err(at_index(e, i)),
                        },
                        t => decode_scalar(r, *t, false, flexible, item)
                            .map_err(|e| at_index(e.into(), i))?,
                    }
                }
                Ok(())
            })?;
            put(slot, Value::Array(items));
            Ok(())
        }
        Type::Struct => {
            // A nullable struct starts with a marker byte: negative for null, else 1.
            if nullable && r.i8()? < 0 {
                put(slot, Value::Null);
                return Ok(());
            }
            let defaults = shared_defaults(f.fields);
            put(
                slot,
                Value::Struct(decode_struct(r, f.fields, defaults, ctx)?),
            );
            Ok(())
        }
        t => Ok(decode_scalar(r, t, nullable, flexible, slot)?),
    }
}

#[inline(always)]
fn decode_scalar<'a>(
    r: &mut Reader<'a>,
    ty: Type,
    nullable: bool,
    flexible: bool,
    slot: &mut Value<'a>,
) -> Result<()> {
    match ty {
        Type::Bool => put(slot, Value::Bool(r.boolean()?)),
        Type::Int8 => put(slot, Value::Int8(r.i8()?)),
        Type::Int16 => put(slot, Value::Int16(r.i16()?)),
        Type::Int32 => put(slot, Value::Int32(r.i32()?)),
        Type::Int64 => put(slot, Value::Int64(r.i64()?)),
        Type::Uint16 => put(slot, Value::Uint16(r.u16()?)),
        Type::Float64 => put(slot, Value::Float64(r.f64()?)),
        Type::Uuid => put(slot, Value::Uuid(r.uuid()?)),
        Type::String => {
            let s = if flexible {
                r.compact_nullable_string()?
            } else {
                r.nullable_string()?
            };
            match s {
                Some(s) => put(slot, Value::String(Cow::Borrowed(s))),
                None if nullable => put(slot, Value::Null),
                None => return Err(Error::malformed("non-nullable string is null")),
            }
        }
        Type::Bytes | Type::Records => {
            let b = if flexible {
                r.compact_nullable_bytes()?
            } else {
                r.nullable_bytes()?
            };
            match b {
                Some(b) => put(slot, Value::Bytes(Cow::Borrowed(b))),
                None if nullable => put(slot, Value::Null),
                None => return Err(Error::malformed("non-nullable bytes are null")),
            }
        }
        Type::Struct | Type::Array(_) => {
            return Err(Error::malformed(format!(
                "{} is not a scalar type",
                ty.kafka_name()
            )));
        }
    }
    Ok(())
}

/// min_size is the fewest bytes one value of `ty` can take at this version: what a count is
/// checked against before it is trusted.
fn min_size(ty: &Type, fields: &'static [Field], ctx: Ctx) -> usize {
    match ty {
        Type::Bool | Type::Int8 => 1,
        Type::Int16 | Type::Uint16 => 2,
        Type::Int32 => 4,
        Type::Int64 | Type::Float64 => 8,
        Type::Uuid => 16,
        // A compact length takes at least one byte, a classic string two and bytes four.
        Type::String => {
            if ctx.flexible {
                1
            } else {
                2
            }
        }
        Type::Bytes | Type::Records => {
            if ctx.flexible {
                1
            } else {
                4
            }
        }
        Type::Array(_) => {
            if ctx.flexible {
                1
            } else {
                4
            }
        }
        Type::Struct => {
            let own: usize = fields
                .iter()
                .filter(|f| f.versions.contains(ctx.version) && !f.is_tagged_in(ctx.version))
                .map(|f| match f.ty {
                    // A nullable struct may be its marker byte alone.
                    Type::Struct if f.nullable.contains(ctx.version) => 1,
                    Type::Struct => min_size(&Type::Struct, f.fields, ctx),
                    Type::Array(_) => min_size(
                        &f.ty,
                        f.fields,
                        Ctx {
                            flexible: ctx.field_flexible(f),
                            ..ctx
                        },
                    ),
                    t => min_size(
                        &t,
                        f.fields,
                        Ctx {
                            flexible: ctx.field_flexible(f),
                            ..ctx
                        },
                    ),
                })
                .sum();
            own + ctx.flexible as usize
        }
    }
}

// ---------------------------------------------------------------------------------------------
// size and encode

/// message_size is the exact number of bytes [`encode_message`] writes for this body.
pub fn message_size(msg: &Message, version: i16, body: &Struct<'_>) -> Result<usize> {
    check_version(msg, version).map_err(Error::into_argument)?;
    let ctx = Ctx::new(version, msg.is_flexible(version));
    size_struct(body, msg.fields, ctx).map_err(|e| finish(e, msg, version))
}

/// encode_message appends the body of `msg` at `version` to `w`.
pub fn encode_message<B: Buf>(
    w: &mut Writer<B>,
    msg: &Message,
    version: i16,
    body: &Struct<'_>,
) -> Result<()> {
    check_version(msg, version).map_err(Error::into_argument)?;
    let ctx = Ctx::new(version, msg.is_flexible(version));
    encode_struct(w, body, msg.fields, ctx).map_err(|e| finish(e, msg, version))
}

/// encode_field_value writes one field's value exactly as [`encode_message`] writes it inside a
/// struct at `version`, where `flexible` tells whether the message version is flexible. Errors
/// name the path inside the value (`partitions[2].name: ...`).
pub fn encode_field_value<B: Buf>(
    w: &mut Writer<B>,
    v: &Value<'_>,
    f: &'static Field,
    version: i16,
    flexible: bool,
) -> Result<()> {
    encode_field(w, v, f, Ctx::new(version, flexible)).map_err(finish_path)
}

/// encode_struct_value writes a struct of `fields` exactly as [`encode_message`] writes a nested
/// struct at `version`.
pub fn encode_struct_value<B: Buf>(
    w: &mut Writer<B>,
    s: &Struct<'_>,
    fields: &'static [Field],
    version: i16,
    flexible: bool,
) -> Result<()> {
    encode_struct(w, s, fields, Ctx::new(version, flexible)).map_err(finish_path)
}

/// encode_scalar_value writes a scalar of type `ty` (an array element: never null), in the
/// compact encoding when `flexible`.
pub fn encode_scalar_value<B: Buf>(
    w: &mut Writer<B>,
    v: &Value<'_>,
    ty: Type,
    flexible: bool,
) -> Result<()> {
    encode_scalar(w, v, ty, flexible)
}

/// field_value_size is the size [`encode_field_value`] writes.
pub fn field_value_size(
    v: &Value<'_>,
    f: &'static Field,
    version: i16,
    flexible: bool,
) -> Result<usize> {
    size_field(v, f, Ctx::new(version, flexible)).map_err(finish_path)
}

/// finish_path turns a located error into the core error, naming only the path inside.
#[cold]
fn finish_path(e: Located) -> Error {
    place(e, None)
}

/// encode_to_vec encodes a body into a new vector of exactly its size.
pub fn encode_to_vec(msg: &Message, version: i16, body: &Struct<'_>) -> Result<Vec<u8>> {
    let mut w = Writer::with_capacity(message_size(msg, version, body)?);
    encode_message(&mut w, msg, version, body)?;
    Ok(w.into_inner())
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

fn type_name(v: &Value<'_>) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Int8(_) => "int8",
        Value::Int16(_) => "int16",
        Value::Int32(_) => "int32",
        Value::Int64(_) => "int64",
        Value::Uint16(_) => "uint16",
        Value::Float64(_) => "float64",
        Value::Uuid(_) => "uuid",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::Array(_) => "array",
        Value::Int32s(_) => "int32 array",
        Value::Int64s(_) => "int64 array",
        Value::Struct(_) => "struct",
        Value::Hole(_) => "records hole",
    }
}

fn mismatch(ty: &Type, v: &Value<'_>) -> Error {
    Error::InvalidType(format!(
        "expected {}, got {}",
        ty.kafka_name(),
        type_name(v)
    ))
}

/// Tagged is one entry of a tagged-field section being written: a known field or raw bytes.
enum Tagged<'v, 'a> {
    Known(&'static Field, &'v Value<'a>),
    Raw(&'v [u8]),
}

/// present_fields checks the fields a version lacks and yields the rest with their values.
fn check_absent(s: &Struct<'_>, fields: &'static [Field], ctx: Ctx) -> Res<()> {
    if s.fields.len() != fields.len() {
        return Err(bad(format!(
            "struct has {} values for {} fields",
            s.fields.len(),
            fields.len()
        ))
        .into());
    }
    for (f, v) in fields.iter().zip(s.fields.iter()) {
        if !f.versions.contains(ctx.version) && !f.ignorable && !is_default(v, f) {
            let e = bad(format!(
                "version {} has no such field (versions {}); it must be left at its default",
                ctx.version, f.versions
            ));
            return Err(at(e.into(), f.name));
        }
    }
    Ok(())
}

/// tagged_entries lists the tagged section of a struct, sorted by tag; a tag given twice is an
/// error.
fn tagged_entries<'v, 'a>(
    s: &'v Struct<'a>,
    fields: &'static [Field],
    ctx: Ctx,
) -> Res<Vec<(u32, Tagged<'v, 'a>)>> {
    let mut out: Vec<(u32, Tagged<'v, 'a>)> = Vec::new();
    for (f, v) in fields.iter().zip(s.fields.iter()) {
        if f.versions.contains(ctx.version) && f.is_tagged_in(ctx.version) && !is_default(v, f) {
            out.push((f.tag.unwrap_or_default(), Tagged::Known(f, v)));
        }
    }
    for (tag, raw) in &s.unknown_tagged {
        out.push((*tag, Tagged::Raw(raw)));
    }
    out.sort_by_key(|(t, _)| *t);
    for w in out.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(bad(format!("tagged field {} is given twice", w[0].0)).into());
        }
    }
    Ok(out)
}

fn size_struct(s: &Struct<'_>, fields: &'static [Field], ctx: Ctx) -> Res<usize> {
    check_absent(s, fields, ctx)?;
    let mut n = 0;
    for (f, v) in fields.iter().zip(s.fields.iter()) {
        if f.versions.contains(ctx.version) && !f.is_tagged_in(ctx.version) {
            n += size_field(v, f, ctx).map_err(|e| at(e, f.name))?;
        }
    }
    if ctx.flexible {
        let entries = tagged_entries(s, fields, ctx)?;
        n += unsigned_varint_len(entries.len() as u32);
        for (tag, e) in entries {
            let len = match e {
                Tagged::Known(f, v) => size_field(v, f, ctx).map_err(|e| at(e, f.name))?,
                Tagged::Raw(b) => b.len(),
            };
            n += unsigned_varint_len(tag) + unsigned_varint_len(len as u32) + len;
        }
    } else if !s.unknown_tagged.is_empty() {
        return Err(bad(format!(
            "version {} is not flexible and cannot carry tagged fields",
            ctx.version
        ))
        .into());
    }
    Ok(n)
}

fn encode_struct<B: Buf>(
    w: &mut Writer<B>,
    s: &Struct<'_>,
    fields: &'static [Field],
    ctx: Ctx,
) -> Res<()> {
    check_absent(s, fields, ctx)?;
    for (f, v) in fields.iter().zip(s.fields.iter()) {
        if f.versions.contains(ctx.version) && !f.is_tagged_in(ctx.version) {
            encode_field(w, v, f, ctx).map_err(|e| at(e, f.name))?;
        }
    }
    if ctx.flexible {
        let entries = tagged_entries(s, fields, ctx)?;
        w.unsigned_varint(entries.len() as u32);
        for (tag, e) in entries {
            w.unsigned_varint(tag);
            match e {
                Tagged::Known(f, v) => {
                    w.unsigned_varint(size_field(v, f, ctx).map_err(|e| at(e, f.name))? as u32);
                    encode_field(w, v, f, ctx).map_err(|e| at(e, f.name))?;
                }
                Tagged::Raw(b) => {
                    w.unsigned_varint(b.len() as u32);
                    w.raw(b);
                }
            }
        }
    } else if !s.unknown_tagged.is_empty() {
        return Err(bad(format!(
            "version {} is not flexible and cannot carry tagged fields",
            ctx.version
        ))
        .into());
    }
    Ok(())
}

fn length_size(n: usize, flexible: bool, classic: usize) -> usize {
    if flexible {
        unsigned_varint_len(n as u32 + 1)
    } else {
        classic
    }
}

fn check_null(f: &Field, ctx: Ctx) -> Result<()> {
    if f.nullable.contains(ctx.version) {
        Ok(())
    } else {
        Err(bad(format!("is not nullable in version {}", ctx.version)))
    }
}

fn size_field(v: &Value<'_>, f: &'static Field, ctx: Ctx) -> Res<usize> {
    let flexible = ctx.field_flexible(f);
    match (f.ty, v) {
        (Type::Struct, Value::Struct(s)) => {
            Ok(f.nullable.contains(ctx.version) as usize + size_struct(s, f.fields, ctx)?)
        }
        (Type::Struct, Value::Null) => {
            check_null(f, ctx)?;
            Ok(1)
        }
        (Type::Array(_), Value::Null)
        | (Type::String | Type::Bytes | Type::Records, Value::Null) => {
            check_null(f, ctx)?;
            Ok(if flexible {
                1
            } else if f.ty == Type::String {
                2
            } else {
                4
            })
        }
        (Type::Array(Type::Int32), Value::Int32s(items)) => {
            check_count(items.len())?;
            Ok(length_size(items.len(), flexible, 4) + 4 * items.len())
        }
        (Type::Array(Type::Int64), Value::Int64s(items)) => {
            check_count(items.len())?;
            Ok(length_size(items.len(), flexible, 4) + 8 * items.len())
        }
        (Type::Array(elem), Value::Array(items)) => {
            check_count(items.len())?;
            let mut n = length_size(items.len(), flexible, 4);
            for (i, item) in items.iter().enumerate() {
                n += match (elem, item) {
                    (Type::Struct, Value::Struct(s)) => size_struct(s, f.fields, ctx),
                    (Type::Struct, other) => Err(mismatch(&Type::Struct, other).into()),
                    (t, item) => size_scalar(item, *t, flexible).map_err(Located::from),
                }
                .map_err(|e| at_index(e, i))?;
            }
            Ok(n)
        }
        (t, v) => Ok(size_scalar(v, t, flexible)?),
    }
}

fn check_count(n: usize) -> Result<()> {
    if n > i32::MAX as usize - 1 {
        Err(bad(format!("{n} elements are more than an array can hold")))
    } else {
        Ok(())
    }
}

fn check_string(s: &str, flexible: bool) -> Result<()> {
    if !flexible && s.len() > i16::MAX as usize {
        Err(bad(format!(
            "string of {} bytes is longer than the 32767 an INT16 length allows",
            s.len()
        )))
    } else if s.len() >= u32::MAX as usize {
        Err(bad("string is too long".to_string()))
    } else {
        Ok(())
    }
}

fn check_bytes(b: &[u8]) -> Result<()> {
    check_len(b.len())
}

fn check_len(n: usize) -> Result<()> {
    if n > i32::MAX as usize - 1 {
        Err(bad(format!(
            "{n} bytes are more than an INT32 length allows"
        )))
    } else {
        Ok(())
    }
}

fn size_scalar(v: &Value<'_>, ty: Type, flexible: bool) -> Result<usize> {
    Ok(match (ty, v) {
        (Type::Bool, Value::Bool(_)) | (Type::Int8, Value::Int8(_)) => 1,
        (Type::Int16, Value::Int16(_)) | (Type::Uint16, Value::Uint16(_)) => 2,
        (Type::Int32, Value::Int32(_)) => 4,
        (Type::Int64, Value::Int64(_)) | (Type::Float64, Value::Float64(_)) => 8,
        (Type::Uuid, Value::Uuid(_)) => 16,
        (Type::String, Value::String(s)) => {
            check_string(s, flexible)?;
            length_size(s.len(), flexible, 2) + s.len()
        }
        (Type::Bytes | Type::Records, Value::Bytes(b)) => {
            check_bytes(b)?;
            length_size(b.len(), flexible, 4) + b.len()
        }
        (Type::Records, Value::Hole(h)) => {
            check_len(h.len)?;
            length_size(h.len, flexible, 4) + h.len
        }
        (t, v) => return Err(mismatch(&t, v)),
    })
}

fn encode_field<B: Buf>(w: &mut Writer<B>, v: &Value<'_>, f: &'static Field, ctx: Ctx) -> Res<()> {
    let flexible = ctx.field_flexible(f);
    match (f.ty, v) {
        (Type::Struct, Value::Struct(s)) => {
            if f.nullable.contains(ctx.version) {
                w.i8(1);
            }
            encode_struct(w, s, f.fields, ctx)
        }
        (Type::Struct, Value::Null) => {
            check_null(f, ctx)?;
            w.i8(-1);
            Ok(())
        }
        (Type::Array(_), Value::Null) => {
            check_null(f, ctx)?;
            if flexible {
                w.compact_array_len(None)
            } else {
                w.array_len(None)
            }
            Ok(())
        }
        (Type::String, Value::Null) => {
            check_null(f, ctx)?;
            if flexible {
                w.compact_nullable_string(None)
            } else {
                w.nullable_string(None)
            }
            Ok(())
        }
        (Type::Bytes | Type::Records, Value::Null) => {
            check_null(f, ctx)?;
            if flexible {
                w.compact_nullable_bytes(None)
            } else {
                w.nullable_bytes(None)
            }
            Ok(())
        }
        (Type::Array(Type::Int32), Value::Int32s(items)) => {
            check_count(items.len())?;
            if flexible {
                w.compact_array_len(Some(items.len()))
            } else {
                w.array_len(Some(items.len()))
            }
            for x in items {
                w.i32(*x);
            }
            Ok(())
        }
        (Type::Array(Type::Int64), Value::Int64s(items)) => {
            check_count(items.len())?;
            if flexible {
                w.compact_array_len(Some(items.len()))
            } else {
                w.array_len(Some(items.len()))
            }
            for x in items {
                w.i64(*x);
            }
            Ok(())
        }
        (Type::Array(elem), Value::Array(items)) => {
            check_count(items.len())?;
            if flexible {
                w.compact_array_len(Some(items.len()))
            } else {
                w.array_len(Some(items.len()))
            }
            for (i, item) in items.iter().enumerate() {
                match (elem, item) {
                    (Type::Struct, Value::Struct(s)) => encode_struct(w, s, f.fields, ctx),
                    (Type::Struct, other) => Err(mismatch(&Type::Struct, other).into()),
                    (t, item) => encode_scalar(w, item, *t, flexible).map_err(Located::from),
                }
                .map_err(|e| at_index(e, i))?;
            }
            Ok(())
        }
        (t, v) => Ok(encode_scalar(w, v, t, flexible)?),
    }
}

fn encode_scalar<B: Buf>(w: &mut Writer<B>, v: &Value<'_>, ty: Type, flexible: bool) -> Result<()> {
    match (ty, v) {
        (Type::Bool, Value::Bool(b)) => w.boolean(*b),
        (Type::Int8, Value::Int8(x)) => w.i8(*x),
        (Type::Int16, Value::Int16(x)) => w.i16(*x),
        (Type::Uint16, Value::Uint16(x)) => w.u16(*x),
        (Type::Int32, Value::Int32(x)) => w.i32(*x),
        (Type::Int64, Value::Int64(x)) => w.i64(*x),
        (Type::Float64, Value::Float64(x)) => w.f64(*x),
        (Type::Uuid, Value::Uuid(u)) => w.uuid(u),
        (Type::String, Value::String(s)) => {
            check_string(s, flexible)?;
            if flexible {
                w.compact_string(s)
            } else {
                w.string(s)
            }
        }
        (Type::Bytes | Type::Records, Value::Bytes(b)) => {
            check_bytes(b)?;
            if flexible {
                w.compact_bytes(b)
            } else {
                w.bytes(b)
            }
        }
        (Type::Records, Value::Hole(h)) => {
            check_len(h.len)?;
            // The length prefix of bytes that are not here: as compact_bytes and bytes write it.
            if flexible {
                w.unsigned_varint(h.len as u32 + 1);
            } else {
                w.i32(h.len as i32);
            }
            w.buf.hole(h.index, h.len)?;
        }
        (t, v) => return Err(mismatch(&t, v)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::{api, APIS};
    use crate::protocol::random::Gen;
    use crate::protocol::schema::Kind;

    /// Property: for every api, version and direction, decode(encode(x)) == x and the computed
    /// size is the encoded length.
    #[test]
    fn every_message_round_trips() {
        let mut g = Gen::new(5);
        for a in APIS {
            for msg in [a.request, a.response] {
                for v in msg.valid.lo..=msg.valid.hi {
                    for _ in 0..60 {
                        let x = g.body(msg, v);
                        let bytes = encode_to_vec(msg, v, &x).unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(
                            message_size(msg, v, &x).unwrap(),
                            bytes.len(),
                            "{} v{v}",
                            msg.name
                        );
                        let y = decode_message(msg, v, &bytes).unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(x, y, "{} v{v}", msg.name);
                        // Decoding into an arena gives the same tree.
                        let arena = Arena::new();
                        let z = decode_message_in(&arena, msg, v, &bytes)
                            .unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(x, z, "{} v{v} in an arena", msg.name);
                    }
                }
            }
        }
    }

    /// One arena holds many trees, decoded one after another: earlier trees stay intact while
    /// later ones grow the arena by new blocks. (Small enough to run under Miri, which checks
    /// the arena's unsafe code: `cargo +nightly miri test --lib arena_`.)
    #[test]
    fn arena_holds_many_trees() {
        let mut g = Gen::new(11);
        let arena = Arena::new();
        let mut kept = Vec::new();
        for (key, v) in [(3, 12), (1, 12), (1, 16), (11, 9), (8, 9), (2, 9)] {
            let msg = api(key).unwrap().response;
            for _ in 0..3 {
                let x = g.body(msg, v);
                let bytes = encode_to_vec(msg, v, &x).unwrap();
                kept.push((msg, v, x, bytes));
            }
        }
        let trees: Vec<_> = kept
            .iter()
            .map(|(msg, v, _, bytes)| decode_message_in(&arena, msg, *v, bytes).unwrap())
            .collect();
        for ((msg, v, x, bytes), t) in kept.iter().zip(&trees) {
            assert_eq!(x, t, "{} v{v}", msg.name);
            assert_eq!(&encode_to_vec(msg, *v, t).unwrap(), bytes);
        }
    }

    /// No struct array can have elements of zero bytes in any version, or a count could not be
    /// checked against the bytes left.
    #[test]
    fn every_struct_takes_at_least_one_byte() {
        fn walk(fields: &'static [Field], v: i16, flexible: bool, name: &str) {
            for f in fields {
                if f.versions.contains(v)
                    && matches!(f.ty, Type::Array(Type::Struct) | Type::Struct)
                {
                    let ctx = Ctx::new(v, flexible);
                    assert!(
                        min_size(&Type::Struct, f.fields, ctx) > 0,
                        "{name}.{} v{v}",
                        f.name
                    );
                    walk(f.fields, v, flexible, name);
                }
            }
        }
        for a in APIS {
            for msg in [a.request, a.response] {
                for v in msg.valid.lo..=msg.valid.hi {
                    walk(msg.fields, v, msg.is_flexible(v), msg.name);
                }
            }
        }
    }

    // JoinGroupRequest v0, written out from the layout in JoinGroupRequest.json: group_id
    // "g", session_timeout_ms 30000, member_id "", protocol_type "consumer", one protocol
    // "range" with metadata 0x01 0x02.
    const JOIN_V0: &[u8] = &[
        0, 1, b'g', 0, 0, 0x75, 0x30, 0, 0, 0, 8, b'c', b'o', b'n', b's', b'u', b'm', b'e', b'r',
        0, 0, 0, 1, 0, 5, b'r', b'a', b'n', b'g', b'e', 0, 0, 0, 2, 1, 2,
    ];

    #[test]
    fn join_group_v0_bytes() {
        let msg = api(11).unwrap().request;
        let s = decode_message(msg, 0, JOIN_V0).unwrap();
        assert_eq!(
            s.get(msg.fields, "group_id"),
            Some(&Value::String("g".into()))
        );
        assert_eq!(
            s.get(msg.fields, "session_timeout_ms"),
            Some(&Value::Int32(30000))
        );
        // Absent in v0: its default.
        assert_eq!(
            s.get(msg.fields, "rebalance_timeout_ms"),
            Some(&Value::Int32(-1))
        );
        assert_eq!(s.get(msg.fields, "group_instance_id"), Some(&Value::Null));
        assert_eq!(encode_to_vec(msg, 0, &s).unwrap(), JOIN_V0);
    }

    // HeartbeatRequest v4 (flexible): compact strings, a null compact string, tagged sections.
    #[test]
    fn heartbeat_v4_compact_bytes() {
        let bytes: &[u8] = &[
            2, b'g', // group_id "g" (length + 1)
            0, 0, 0, 7, // generation_id 7
            2, b'm', // member_id "m"
            0,    // group_instance_id null
            1, 3, 2, 0xab, 0xcd, // one unknown tagged field: tag 3, 2 bytes
        ];
        let msg = api(12).unwrap().request;
        let s = decode_message(msg, 4, bytes).unwrap();
        assert_eq!(s.get(msg.fields, "group_instance_id"), Some(&Value::Null));
        assert_eq!(
            s.unknown_tagged,
            Seq::Owned(vec![(3, Cow::Borrowed(&[0xab, 0xcd][..]))])
        );
        // The same in an arena: the unknown field is kept there too.
        let arena = Arena::new();
        let t = decode_message_in(&arena, msg, 4, bytes).unwrap();
        assert_eq!(t, s);
        assert!(matches!(t.unknown_tagged, Seq::Borrowed(_)));
        assert_eq!(encode_to_vec(msg, 4, &t).unwrap(), bytes);
        assert_eq!(encode_to_vec(msg, 4, &s).unwrap(), bytes);
    }

    // ApiVersionsResponse v3: a known tagged field (finalized_features_epoch, tag 1) is decoded
    // into its field and written back in place.
    #[test]
    fn known_tagged_field_is_decoded() {
        let bytes: &[u8] = &[
            0, 0, // error_code
            2, 0, 18, 0, 0, 0, 4, 0, // api_keys: [{18, 0, 4}], empty tagged section
            0, 0, 0, 0, // throttle_time_ms
            1, 1, 8, 0, 0, 0, 0, 0, 0, 0, 9, // tag 1, 8 bytes: epoch 9
        ];
        let msg = api(18).unwrap().response;
        let s = decode_message(msg, 3, bytes).unwrap();
        assert_eq!(
            s.get(msg.fields, "finalized_features_epoch"),
            Some(&Value::Int64(9))
        );
        assert!(s.unknown_tagged.is_empty());
        assert_eq!(encode_to_vec(msg, 3, &s).unwrap(), bytes);
        // A known tag whose declared size is longer than its value is an error.
        let mut bad = bytes.to_vec();
        bad[15] = 9;
        bad.push(0);
        assert!(decode_message(msg, 3, &bad).is_err());
    }

    #[test]
    fn encode_checks_values() {
        let msg = api(11).unwrap().request;
        let mut s = decode_message(msg, 0, JOIN_V0).unwrap().into_owned();
        // A non-ignorable field absent from v0 cannot hold a non-default value.
        assert!(s.set(msg.fields, "group_instance_id", Value::String("i".into())));
        let e = encode_to_vec(msg, 0, &s).unwrap_err();
        assert!(e.to_string().contains("group_instance_id"), "{e}");
        assert!(encode_to_vec(msg, 5, &s).is_ok());
        // An ignorable one is dropped.
        s.set(msg.fields, "group_instance_id", Value::Null);
        s.set(msg.fields, "reason", Value::String("why".into()));
        assert_eq!(encode_to_vec(msg, 0, &s).unwrap(), JOIN_V0);
        // Null where the version does not allow it, and a wrong type.
        s.set(msg.fields, "member_id", Value::Null);
        assert!(matches!(
            encode_to_vec(msg, 0, &s),
            Err(Error::InvalidArgument(_))
        ));
        s.set(msg.fields, "member_id", Value::Int32(1));
        assert!(matches!(
            encode_to_vec(msg, 0, &s),
            Err(Error::InvalidType(_))
        ));
        s.set(
            msg.fields,
            "member_id",
            Value::String("x".repeat(40_000).into()),
        );
        assert!(matches!(
            encode_to_vec(msg, 0, &s),
            Err(Error::InvalidArgument(_))
        ));
        assert!(encode_to_vec(msg, 6, &s).is_ok()); // compact strings have no INT16 limit
        assert!(matches!(
            encode_to_vec(msg, 10, &s),
            Err(Error::InvalidArgument(_))
        ));
    }

    /// A records hole counts its length in the size, and only a buffer of segments takes it;
    /// a hole where the definition has plain bytes is a type error.
    #[test]
    fn a_hole_is_records_only_and_sized() {
        use crate::protocol::value::Hole;
        let join = api(11).unwrap().request;
        let mut s = decode_message(join, 0, JOIN_V0).unwrap().into_owned();
        let Some(Value::Array(protocols)) = s.get(join.fields, "protocols").cloned() else {
            panic!("no protocols")
        };
        let Value::Struct(mut p) = protocols[0].clone() else {
            panic!()
        };
        let pf = join.fields.iter().find(|f| f.name == "protocols").unwrap();
        p.set(
            pf.fields,
            "metadata",
            Value::Hole(Hole { index: 0, len: 2 }),
        );
        s.set(
            join.fields,
            "protocols",
            Value::Array(vec![Value::Struct(p)].into()),
        );
        let e = message_size(join, 0, &s).unwrap_err();
        assert!(matches!(e, Error::InvalidType(_)), "{e}");

        let fetch = api(1).unwrap().response;
        let mut g = crate::protocol::random::Gen::new(1);
        let body = g.body(fetch, 4);
        let rf = fetch.fields.iter().find(|f| f.name == "responses").unwrap();
        let pf = rf.fields.iter().find(|f| f.name == "partitions").unwrap();
        let partition = |records: Value<'static>| {
            let mut p = Struct::defaults(pf.fields);
            p.set(pf.fields, "records", records);
            Value::Struct(p)
        };
        let topic = |records: Value<'static>| {
            let mut t = Struct::defaults(rf.fields);
            t.set(
                rf.fields,
                "partitions",
                Value::Array(vec![partition(records)].into()),
            );
            Value::Struct(t)
        };
        let mut with_bytes = body.clone();
        with_bytes.set(
            fetch.fields,
            "responses",
            Value::Array(vec![topic(Value::Bytes(vec![7; 300].into()))].into()),
        );
        let mut with_hole = body;
        with_hole.set(
            fetch.fields,
            "responses",
            Value::Array(vec![topic(Value::Hole(Hole { index: 0, len: 300 }))].into()),
        );
        let size = message_size(fetch, 4, &with_hole).unwrap();
        assert_eq!(size, message_size(fetch, 4, &with_bytes).unwrap());
        let e = encode_to_vec(fetch, 4, &with_hole).unwrap_err();
        assert!(e.to_string().contains("frame of segments"), "{e}");
    }

    #[test]
    fn errors_name_the_field() {
        let msg = api(11).unwrap().request;
        let e = decode_message(msg, 0, &JOIN_V0[..JOIN_V0.len() - 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "JoinGroupRequest v0: protocols[0].metadata: truncated bytes: needs 2 bytes, 1 left"
        );
        let _ = Kind::Request;
    }
}
