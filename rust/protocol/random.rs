//! Random values shaped by a definition: the generator behind the round-trip property tests,
//! the fuzz harness's seeds and the benchmarks. Deterministic for a given [`Rng`] seed.

use std::borrow::Cow;

use super::schema::{Field, Message, Type};
use super::value::{default_value, Fields, Struct, Value};
use crate::rng::Rng;

/// Gen draws random values for definitions; `max_len` bounds arrays, strings and bytes.
pub struct Gen {
    pub rng: Rng,
    pub max_len: usize,
}

impl Gen {
    /// new seeds a generator.
    pub fn new(seed: u64) -> Gen {
        Gen {
            rng: Rng::new(Some(seed)),
            max_len: 4,
        }
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.rng.next_u64() % n
        }
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// body draws a body of `msg` at `version`: every field of the version random, tagged fields
    /// sometimes left at their default (so not sent), and sometimes unknown tagged fields.
    pub fn body(&mut self, msg: &Message, version: i16) -> Struct<'static> {
        let flexible = msg.is_flexible(version);
        self.structure(msg.fields, version, flexible)
    }

    fn structure(
        &mut self,
        fields: &'static [Field],
        version: i16,
        flexible: bool,
    ) -> Struct<'static> {
        let mut out = Vec::with_capacity(fields.len());
        for f in fields {
            if !f.versions.contains(version) || (f.is_tagged_in(version) && self.chance(3)) {
                out.push(default_value(f));
            } else {
                out.push(self.field(f, version, flexible));
            }
        }
        let mut unknown_tagged = Vec::new();
        if flexible && self.chance(4) {
            // Tags the definition does not use at this version.
            let mut tag = self.below(4) as u32;
            for _ in 0..1 + self.below(2) {
                while fields
                    .iter()
                    .any(|f| f.tag == Some(tag) && f.is_tagged_in(version))
                {
                    tag += 1;
                }
                let len = self.below(6) as usize;
                unknown_tagged.push((tag, Cow::Owned(self.bytes(len))));
                tag += 1 + self.below(200) as u32;
            }
        }
        Struct {
            fields: Fields::Owned(out),
            unknown_tagged: unknown_tagged.into(),
        }
    }

    fn field(&mut self, f: &'static Field, version: i16, flexible: bool) -> Value<'static> {
        if f.nullable.contains(version) && self.chance(4) {
            return Value::Null;
        }
        match f.ty {
            Type::Struct => Value::Struct(self.structure(f.fields, version, flexible)),
            Type::Array(Type::Int32) => {
                let n = self.below(self.max_len as u64 + 1) as usize;
                Value::Int32s((0..n).map(|_| self.int() as i32).collect::<Vec<_>>().into())
            }
            Type::Array(Type::Int64) => {
                let n = self.below(self.max_len as u64 + 1) as usize;
                Value::Int64s((0..n).map(|_| self.int()).collect::<Vec<_>>().into())
            }
            Type::Array(elem) => {
                let n = self.below(self.max_len as u64 + 1) as usize;
                let items = (0..n)
                    .map(|_| match elem {
                        Type::Struct => Value::Struct(self.structure(f.fields, version, flexible)),
                        t => self.scalar(*t),
                    })
                    .collect::<Vec<_>>();
                Value::Array(items.into())
            }
            t => self.scalar(t),
        }
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.rng.next_u64() as u8).collect()
    }

    fn int(&mut self) -> i64 {
        // Mostly small numbers, sometimes the edges.
        match self.below(6) {
            0 => -1,
            1 => i64::MAX,
            2 => i64::MIN,
            _ => self.below(1000) as i64,
        }
    }

    /// scalar draws one value of a non-struct, non-array type.
    pub fn scalar(&mut self, ty: Type) -> Value<'static> {
        match ty {
            Type::Bool => Value::Bool(self.chance(2)),
            Type::Int8 => Value::Int8(self.int() as i8),
            Type::Int16 => Value::Int16(self.int() as i16),
            Type::Int32 => Value::Int32(self.int() as i32),
            Type::Int64 => Value::Int64(self.int()),
            Type::Uint16 => Value::Uint16(self.int() as u16),
            Type::Float64 => Value::Float64((self.int() as f64) / 3.0),
            Type::Uuid => {
                let mut u = [0u8; 16];
                if !self.chance(4) {
                    u.copy_from_slice(&self.bytes(16));
                }
                Value::Uuid(u)
            }
            Type::String => {
                const PIECES: [&str; 6] = ["a", "kafka", "-", "é", "群", "0"];
                let n = self.below(self.max_len as u64 + 2);
                let s: String = (0..n)
                    .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
                    .collect();
                Value::String(Cow::Owned(s))
            }
            Type::Bytes | Type::Records => {
                let n = self.below(self.max_len as u64 * 4) as usize;
                Value::Bytes(Cow::Owned(self.bytes(n)))
            }
            // Not scalars: their zero, so that a misuse still yields a value.
            Type::Struct => Value::Struct(Struct::default()),
            Type::Array(_) => Value::Array(Vec::new().into()),
        }
    }
}
