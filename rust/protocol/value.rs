//! Value: a decoded message as a tree of plain Rust values, shaped by its definition.
//!
//! A [`Struct`] holds one value per field of its definition, in definition order and for every
//! version (a field absent from the version being read holds its default), plus the tagged
//! fields the definition does not know, kept as raw bytes so that a message round-trips.
//! Strings and bytes borrow from the decoded frame where they can (`Cow`), and runs of values
//! ([`Seq`]) from an [`Arena`] when the tree was decoded into one.

use std::borrow::Cow;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use super::messages::{APIS, REQUEST_HEADER, RESPONSE_HEADER};
use super::schema::{DefaultValue, Field, Type};

/// AddressHasher hashes a map key that is an address (of a static field list): the address is
/// already unique, so a multiply spreads it well enough, far faster than SipHash.
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
}

/// AddressMap is a map keyed by the address of a static field list.
pub type AddressMap<V> = HashMap<usize, V, BuildHasherDefault<AddressHasher>>;

/// DEFAULTS holds the default field values of every struct in the definitions, by the address of
/// its field list; built once, on first use, and never freed (a few kilobytes).
static DEFAULTS: OnceLock<AddressMap<&'static [Value<'static>]>> = OnceLock::new();

fn build_defaults() -> AddressMap<&'static [Value<'static>]> {
    // Children first, so that a parent's default borrows its children's shared defaults.
    fn walk(
        fields: &'static [Field],
        map: &mut AddressMap<&'static [Value<'static>]>,
    ) -> &'static [Value<'static>] {
        if let Some(done) = map.get(&(fields.as_ptr() as usize)) {
            return done;
        }
        let values: Vec<Value<'static>> = fields
            .iter()
            .map(|f| match (f.ty, f.default) {
                (Type::Struct, DefaultValue::Zero) => Value::Struct(Struct {
                    fields: Seq::Borrowed(walk(f.fields, map)),
                    unknown_tagged: Seq::default(),
                }),
                _ => {
                    if !f.fields.is_empty() {
                        walk(f.fields, map);
                    }
                    default_value(f)
                }
            })
            .collect();
        // Decoders copy these bit for bit (see shared_defaults): none may own memory.
        assert!(
            values.iter().all(owns_nothing),
            "a shared default owns memory"
        );
        let leaked: &'static [Value<'static>] = Vec::leak(values);
        map.insert(fields.as_ptr() as usize, leaked);
        leaked
    }
    let mut map = AddressMap::default();
    for a in APIS {
        walk(a.request.fields, &mut map);
        walk(a.response.fields, &mut map);
    }
    walk(REQUEST_HEADER.fields, &mut map);
    walk(RESPONSE_HEADER.fields, &mut map);
    map
}

/// owns_nothing tells whether a value holds no heap memory of its own (everything in it is
/// borrowed or inline), so that a bitwise copy of it is as good as a clone and never needs
/// dropping.
pub(crate) fn owns_nothing(v: &Value<'_>) -> bool {
    match v {
        Value::String(Cow::Owned(_)) | Value::Bytes(Cow::Owned(_)) => false,
        Value::Array(Seq::Owned(_))
        | Value::Int32s(Seq::Owned(_))
        | Value::Int64s(Seq::Owned(_)) => false,
        Value::Array(Seq::Borrowed(a)) => a.iter().all(owns_nothing),
        Value::Struct(s) => {
            matches!(s.fields, Seq::Borrowed(_))
                && matches!(s.unknown_tagged, Seq::Borrowed(_))
                && s.fields.iter().all(owns_nothing)
                && s.unknown_tagged
                    .iter()
                    .all(|(_, b)| matches!(b, Cow::Borrowed(_)))
        }
        _ => true,
    }
}

/// shared_defaults is the shared default values of a struct of the definitions. None of them
/// owns memory ([`owns_nothing`]): a bitwise copy of one is a valid clone.
pub(crate) fn shared_defaults(fields: &'static [Field]) -> Option<&'static [Value<'static>]> {
    DEFAULTS
        .get_or_init(build_defaults)
        .get(&(fields.as_ptr() as usize))
        .copied()
}

/// Value is one field's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// Null: a null string, bytes, records or array (only where the field is nullable).
    Null,
    Bool(bool),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Uint16(u16),
    Float64(f64),
    Uuid([u8; 16]),
    String(Cow<'a, str>),
    /// Bytes: a `bytes` or `records` field.
    Bytes(Cow<'a, [u8]>),
    /// Array: an array of structs, strings, UUIDs and other scalars but INT32 and INT64.
    Array(Seq<'a, Value<'a>>),
    /// Int32s: an `[]int32` array (kept compact: partition lists can be long).
    Int32s(Seq<'a, i32>),
    /// Int64s: an `[]int64` array.
    Int64s(Seq<'a, i64>),
    Struct(Struct<'a>),
    /// Hole: a `records` value held outside the tree, written by the buffer the message is
    /// encoded into (see [`Buf::hole`](super::primitives::Buf::hole)): a fetch's batches in a
    /// segment file, sent with `sendfile`. Encoding counts its length in every size and length
    /// prefix; decoding never makes one.
    Hole(Hole),
}

/// Hole is a `records` value of `len` bytes that the tree does not hold; `index` names it for
/// the buffer that writes it (holes are numbered by whoever builds the tree).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hole {
    pub index: u32,
    pub len: usize,
}

/// Struct is one struct: the message body itself or a struct inside it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Struct<'a> {
    /// fields are aligned with the definition's field list. A struct of defaults borrows a
    /// shared, static list (see [`Struct::defaults`]); use `fields.to_mut()` to change one.
    pub fields: Fields<'a>,
    /// unknown_tagged are tagged fields the definition does not know at this version, by
    /// ascending tag, as they arrived.
    pub unknown_tagged: Seq<'a, Tagged<'a>>,
}

/// Seq is a run of values: owned, or borrowed from an [`Arena`] or from static defaults.
#[derive(Debug, Clone)]
pub enum Seq<'a, T> {
    Owned(Vec<T>),
    Borrowed(&'a [T]),
}

/// Fields are a struct's values: its own, or borrowed (from an arena, or the shared defaults of
/// its definition).
pub type Fields<'a> = Seq<'a, Value<'a>>;

impl<T> Default for Seq<'_, T> {
    /// default is empty, and owns nothing.
    fn default() -> Self {
        Seq::Borrowed(&[])
    }
}

impl<T> std::ops::Deref for Seq<'_, T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Seq::Owned(v) => v,
            Seq::Borrowed(s) => s,
        }
    }
}

impl<T> FromIterator<T> for Seq<'_, T> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
        Seq::Owned(it.into_iter().collect())
    }
}

impl<'s, T> IntoIterator for &'s Seq<'_, T> {
    type Item = &'s T;
    type IntoIter = std::slice::Iter<'s, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: PartialEq> PartialEq for Seq<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T> From<Vec<T>> for Seq<'_, T> {
    fn from(v: Vec<T>) -> Self {
        Seq::Owned(v)
    }
}

impl<T: Clone> Seq<'_, T> {
    /// to_mut gives the values to change, copying borrowed ones first.
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if let Seq::Borrowed(s) = *self {
            *self = Seq::Owned(s.to_vec());
        }
        match self {
            Seq::Owned(v) => v,
            Seq::Borrowed(_) => unreachable!("made owned above"),
        }
    }

    /// into_vec gives the values, copying borrowed ones.
    pub fn into_vec(self) -> Vec<T> {
        match self {
            Seq::Owned(v) => v,
            Seq::Borrowed(s) => s.to_vec(),
        }
    }
}

/// Tagged is an unknown tagged field: its tag and its raw value.
pub type Tagged<'a> = (u32, Cow<'a, [u8]>);

/// Arena holds the values of decoded trees in a few large blocks, so that decoding a body of
/// ten thousand structs is not ten thousand allocations (and as many frees when it is
/// dropped). Values allocated in it live, and stay in place, as long as the arena.
///
/// Values in an arena are never dropped: only put there values that own nothing (whose strings,
/// byte strings and runs are borrowed, from the input or from the arena), as the decoder does.
/// Any other would leak.
pub struct Arena<'a> {
    values: Blocks<Value<'a>>,
    i32s: Blocks<i32>,
    i64s: Blocks<i64>,
    tagged: Blocks<Tagged<'a>>,
}

impl Default for Arena<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Arena<'a> {
    pub fn new() -> Self {
        Self::for_bytes(0)
    }

    /// for_bytes is an arena sized for decoding `n` bytes: its first block is sized from the
    /// input, and each further one doubles.
    pub fn for_bytes(n: usize) -> Self {
        Arena {
            values: Blocks::new((n / 16).clamp(32, 4096)),
            i32s: Blocks::new((n / 32).clamp(16, 4096)),
            i64s: Blocks::new(16),
            tagged: Blocks::new(4),
        }
    }

    /// nulls allocates `n` nulls, to be filled in place.
    #[inline]
    pub fn nulls(&'a self, n: usize) -> &'a mut [Value<'a>] {
        self.values.alloc(n, || Value::Null)
    }

    /// i32s allocates the values of `it` (of exact length).
    #[inline]
    pub fn i32s(&'a self, mut it: impl ExactSizeIterator<Item = i32>) -> &'a [i32] {
        self.i32s.alloc(it.len(), || it.next().unwrap_or(0))
    }

    /// i64s allocates the values of `it` (of exact length).
    #[inline]
    pub fn i64s(&'a self, mut it: impl ExactSizeIterator<Item = i64>) -> &'a [i64] {
        self.i64s.alloc(it.len(), || it.next().unwrap_or(0))
    }

    /// tagged moves unknown tagged fields (that borrow their bytes) into the arena.
    pub fn tagged(&'a self, v: Vec<Tagged<'a>>) -> &'a [Tagged<'a>] {
        let mut it = v.into_iter();
        self.tagged
            .alloc(it.len(), || it.next().unwrap_or((0, Cow::Borrowed(&[]))))
    }
}

/// Blocks is a bump allocator of `T`s: a list of vectors, each filled up to its capacity and
/// never grown past it, so that nothing in it ever moves. It never drops what it holds.
struct Blocks<T> {
    blocks: std::cell::UnsafeCell<Vec<Vec<std::mem::ManuallyDrop<T>>>>,
    first: usize,
}

impl<T> Blocks<T> {
    fn new(first: usize) -> Self {
        Blocks {
            blocks: std::cell::UnsafeCell::new(Vec::new()),
            first,
        }
    }

    /// alloc appends `n` values made by `make` and returns them. The slice stays valid, and in
    /// place, as long as the Blocks: a block is never grown past its capacity (so its buffer
    /// never moves), never shrunk, and only ever written past its length.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    fn alloc(&self, n: usize, mut make: impl FnMut() -> T) -> &mut [T] {
        // SAFETY: Blocks is not Sync (UnsafeCell), so only this thread is here, and `make`
        // cannot reach this Blocks (it is a private type that closures here never capture), so
        // this is the only live reference to the list itself. Earlier slices point into the
        // blocks' buffers, which nothing below moves or rewrites: only slots past a block's
        // length are written. ManuallyDrop<T> has the layout of T.
        unsafe {
            let blocks = &mut *self.blocks.get();
            let fits = blocks.last().is_some_and(|b| b.capacity() - b.len() >= n);
            if !fits {
                let next = blocks.last().map_or(self.first, |b| b.capacity() * 2);
                blocks.push(Vec::with_capacity(next.max(n)));
            }
            let block = blocks.last_mut().unwrap_unchecked();
            let start = block.len();
            let dst = block.as_mut_ptr().add(start) as *mut T;
            for i in 0..n {
                // Should `make` panic, the values written are simply forgotten: nothing here
                // is ever dropped.
                std::ptr::write(dst.add(i), make());
            }
            block.set_len(start + n);
            std::slice::from_raw_parts_mut(dst, n)
        }
    }
}

impl<'a> Struct<'a> {
    /// defaults is a struct whose every field holds its default. It allocates nothing: the
    /// defaults of every struct in the definitions are built once and shared.
    #[inline]
    pub fn defaults(fields: &'static [Field]) -> Struct<'static> {
        Struct {
            fields: match shared_defaults(fields) {
                Some(values) => Seq::Borrowed(values),
                // Not from the definitions: build them.
                None => Fields::Owned(fields.iter().map(default_value).collect()),
            },
            unknown_tagged: Seq::default(),
        }
    }

    /// get finds a field's value by name in the struct described by `fields`.
    pub fn get(&self, fields: &'static [Field], name: &str) -> Option<&Value<'a>> {
        fields
            .iter()
            .position(|f| f.name == name)
            .and_then(|i| self.fields.get(i))
    }

    /// set replaces a field's value by name; false when the definition has no such field.
    pub fn set(&mut self, fields: &'static [Field], name: &str, value: Value<'a>) -> bool {
        match fields.iter().position(|f| f.name == name) {
            Some(i) if i < self.fields.len() => {
                self.fields.to_mut()[i] = value;
                true
            }
            _ => false,
        }
    }

    /// into_owned copies every borrowed string and byte string, ending the borrow.
    pub fn into_owned(self) -> Struct<'static> {
        Struct {
            fields: Fields::Owned(
                self.fields
                    .into_vec()
                    .into_iter()
                    .map(Value::into_owned)
                    .collect(),
            ),
            unknown_tagged: Seq::Owned(
                self.unknown_tagged
                    .into_vec()
                    .into_iter()
                    .map(|(t, b)| (t, Cow::Owned(b.into_owned())))
                    .collect(),
            ),
        }
    }
}

impl<'a> Value<'a> {
    /// into_owned copies every borrowed string and byte string, ending the borrow.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(v) => Value::Bool(v),
            Value::Int8(v) => Value::Int8(v),
            Value::Int16(v) => Value::Int16(v),
            Value::Int32(v) => Value::Int32(v),
            Value::Int64(v) => Value::Int64(v),
            Value::Uint16(v) => Value::Uint16(v),
            Value::Float64(v) => Value::Float64(v),
            Value::Uuid(v) => Value::Uuid(v),
            Value::String(s) => Value::String(Cow::Owned(s.into_owned())),
            Value::Bytes(b) => Value::Bytes(Cow::Owned(b.into_owned())),
            Value::Array(a) => Value::Array(Seq::Owned(
                a.into_vec().into_iter().map(Value::into_owned).collect(),
            )),
            Value::Int32s(a) => Value::Int32s(Seq::Owned(a.into_vec())),
            Value::Int64s(a) => Value::Int64s(Seq::Owned(a.into_vec())),
            Value::Struct(s) => Value::Struct(s.into_owned()),
            Value::Hole(h) => Value::Hole(h),
        }
    }

    /// as_i64 reads any integer variant.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int8(v) => Some(v as i64),
            Value::Int16(v) => Some(v as i64),
            Value::Int32(v) => Some(v as i64),
            Value::Int64(v) => Some(v),
            Value::Uint16(v) => Some(v as i64),
            _ => None,
        }
    }

    /// as_str reads a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// as_bytes reads bytes or records.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// as_array reads an array's elements.
    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// as_struct reads a struct.
    pub fn as_struct(&self) -> Option<&Struct<'a>> {
        match self {
            Value::Struct(s) => Some(s),
            _ => None,
        }
    }
}

/// zero is the zero value of a scalar type (structs and arrays are handled by the caller).
pub fn zero(ty: Type) -> Value<'static> {
    match ty {
        Type::Bool => Value::Bool(false),
        Type::Int8 => Value::Int8(0),
        Type::Int16 => Value::Int16(0),
        Type::Int32 => Value::Int32(0),
        Type::Int64 => Value::Int64(0),
        Type::Uint16 => Value::Uint16(0),
        Type::Float64 => Value::Float64(0.0),
        Type::Uuid => Value::Uuid([0; 16]),
        Type::String => Value::String(Cow::Borrowed("")),
        Type::Bytes | Type::Records => Value::Bytes(Cow::Borrowed(&[])),
        Type::Array(Type::Int32) => Value::Int32s(Seq::Borrowed(&[])),
        Type::Array(Type::Int64) => Value::Int64s(Seq::Borrowed(&[])),
        Type::Array(_) => Value::Array(Seq::Borrowed(&[])),
        Type::Struct => Value::Struct(Struct::default()),
    }
}

/// int_of builds the integer variant of `ty` from `v` (which the definitions keep in range).
fn int_of(ty: Type, v: i64) -> Value<'static> {
    match ty {
        Type::Int8 => Value::Int8(v as i8),
        Type::Int16 => Value::Int16(v as i16),
        Type::Int32 => Value::Int32(v as i32),
        Type::Uint16 => Value::Uint16(v as u16),
        _ => Value::Int64(v),
    }
}

/// default_value is the value a field holds when it is absent: its declared default, else the
/// zero of its type (a struct of defaults for a struct).
#[inline]
pub fn default_value(field: &Field) -> Value<'static> {
    match field.default {
        DefaultValue::Null => Value::Null,
        DefaultValue::Int(v) => int_of(field.ty, v),
        DefaultValue::Bool(b) => Value::Bool(b),
        DefaultValue::Float(x) => Value::Float64(x),
        DefaultValue::Str(s) => Value::String(Cow::Borrowed(s)),
        DefaultValue::Zero => match field.ty {
            Type::Struct => Value::Struct(Struct::defaults(field.fields)),
            ty => zero(ty),
        },
    }
}

/// is_default tells whether `value` equals the field's default, as Kafka decides whether to
/// write a tagged field: only values other than the default are sent.
pub fn is_default(value: &Value<'_>, field: &Field) -> bool {
    match (field.default, value) {
        (DefaultValue::Null, v) => matches!(v, Value::Null),
        (DefaultValue::Int(d), v) => v.as_i64() == Some(d),
        (DefaultValue::Bool(d), Value::Bool(b)) => *b == d,
        (DefaultValue::Float(d), Value::Float64(x)) => x.to_bits() == d.to_bits(),
        (DefaultValue::Str(d), Value::String(s)) => s == d,
        (DefaultValue::Zero, v) => match (field.ty, v) {
            (Type::Struct, Value::Struct(s)) => {
                s.unknown_tagged.is_empty()
                    && s.fields.len() == field.fields.len()
                    && s.fields
                        .iter()
                        .zip(field.fields)
                        .all(|(v, f)| is_default(v, f))
            }
            (Type::Array(_), Value::Array(a)) => a.is_empty(),
            (Type::Array(_), Value::Int32s(a)) => a.is_empty(),
            (Type::Array(_), Value::Int64s(a)) => a.is_empty(),
            (Type::Bool, Value::Bool(b)) => !b,
            (Type::Float64, Value::Float64(x)) => x.to_bits() == 0,
            (Type::Uuid, Value::Uuid(u)) => *u == [0; 16],
            (Type::String, Value::String(s)) => s.is_empty(),
            (Type::Bytes | Type::Records, Value::Bytes(b)) => b.is_empty(),
            (_, v) => v.as_i64() == Some(0),
        },
        _ => false,
    }
}
