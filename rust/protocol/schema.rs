//! The shape of Kafka's message definitions: the types, versions, defaults and tags that each
//! field of a request, response or header declares.
//!
//! Definitions are static tables built with `const fn`s (see `messages/`), one per message,
//! transcribed from Kafka's JSON message specs (`clients/src/main/resources/common/message/`).
//! The generic interpreter in [`codec`](super::codec) encodes, decodes and sizes every message
//! from these tables alone, so the tables are the single source of truth;
//! `scripts/check_protocol_spec.py` compares them with Kafka's JSON files.

/// Versions is an inclusive range of message versions; it is empty when `lo > hi` (Kafka's
/// `"none"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Versions {
    pub lo: i16,
    pub hi: i16,
}

impl Versions {
    /// NONE holds no version.
    pub const NONE: Versions = Versions { lo: 1, hi: 0 };
    /// ALL holds every version from 0 up.
    pub const ALL: Versions = Versions {
        lo: 0,
        hi: i16::MAX,
    };

    /// parse reads Kafka's version syntax: `"none"`, `"N"`, `"N+"` or `"N-M"`. It runs at
    /// compile time; a malformed range stops the build.
    pub const fn parse(s: &str) -> Versions {
        let b = s.as_bytes();
        if b.len() == 4 && b[0] == b'n' && b[1] == b'o' && b[2] == b'n' && b[3] == b'e' {
            return Versions::NONE;
        }
        let (lo, mut i) = number(b, 0);
        if i == b.len() {
            return Versions { lo, hi: lo };
        }
        if b[i] == b'+' && i + 1 == b.len() {
            return Versions { lo, hi: i16::MAX };
        }
        assert!(b[i] == b'-', "malformed version range");
        i += 1;
        let (hi, end) = number(b, i);
        assert!(end == b.len() && hi >= lo, "malformed version range");
        Versions { lo, hi }
    }

    /// contains tells whether `v` is in the range.
    #[inline]
    pub const fn contains(&self, v: i16) -> bool {
        self.lo <= v && v <= self.hi
    }

    /// is_empty tells whether the range holds no version.
    pub const fn is_empty(&self) -> bool {
        self.lo > self.hi
    }
}

const fn number(b: &[u8], mut i: usize) -> (i16, usize) {
    let start = i;
    let mut n: i16 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        n = n * 10 + (b[i] - b'0') as i16;
        i += 1;
    }
    assert!(i > start, "malformed version range");
    (n, i)
}

impl std::fmt::Display for Versions {
    /// Versions display in Kafka's syntax: `none`, `3`, `3+`, `0-4`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_empty() {
            f.write_str("none")
        } else if self.hi == i16::MAX {
            write!(f, "{}+", self.lo)
        } else if self.lo == self.hi {
            write!(f, "{}", self.lo)
        } else {
            write!(f, "{}-{}", self.lo, self.hi)
        }
    }
}

/// Type is a field's wire type, named as in Kafka's JSON (`int32`, `[]string`, ...). A struct's
/// fields live in [`Field::fields`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint16,
    Float64,
    Uuid,
    String,
    Bytes,
    /// Records: a record set carried as opaque bytes (nullable bytes on the wire).
    Records,
    Struct,
    Array(&'static Type),
}

impl Type {
    /// kafka_name is the type as Kafka's JSON spells it; structs are `"struct"` /
    /// `"[]struct"` since our tables do not name them.
    pub fn kafka_name(&self) -> String {
        match self {
            Type::Bool => "bool".into(),
            Type::Int8 => "int8".into(),
            Type::Int16 => "int16".into(),
            Type::Int32 => "int32".into(),
            Type::Int64 => "int64".into(),
            Type::Uint16 => "uint16".into(),
            Type::Float64 => "float64".into(),
            Type::Uuid => "uuid".into(),
            Type::String => "string".into(),
            Type::Bytes => "bytes".into(),
            Type::Records => "records".into(),
            Type::Struct => "struct".into(),
            Type::Array(t) => format!("[]{}", t.kafka_name()),
        }
    }
}

/// DefaultValue is a field's default value: what a decoder fills in for a field absent from a
/// version or a tagged field not sent, and what an encoder leaves out of a tagged section.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    /// The type's own zero: 0, false, "", empty bytes, empty array, the zero UUID, a struct of
    /// defaults.
    Zero,
    /// null (only for a nullable field).
    Null,
    Int(i64),
    Bool(bool),
    Float(f64),
    Str(&'static str),
}

/// Field is one field of a message or struct, as Kafka's JSON declares it.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// name is Kafka's name in snake_case (`RebalanceTimeoutMs` -> `rebalance_timeout_ms`).
    pub name: &'static str,
    pub ty: Type,
    /// versions are the versions the field exists in.
    pub versions: Versions,
    /// nullable are the versions in which it may be null.
    pub nullable: Versions,
    /// tag is the field's tag in the tagged-field section, for `tagged` versions.
    pub tag: Option<u32>,
    pub tagged: Versions,
    /// flexible overrides the message's flexible versions for this field's own encoding
    /// (only `RequestHeader.client_id`, which stays an INT16 string in v2).
    pub flexible: Option<Versions>,
    pub default: DefaultValue,
    /// ignorable: an encoder may drop a non-default value in a version the field is absent
    /// from; otherwise that is an error, as in Kafka.
    pub ignorable: bool,
    /// fields are the fields of a struct or of an array's struct elements.
    pub fields: &'static [Field],
}

/// f starts a field definition: name, type and versions; the builder methods add the rest.
pub const fn f(name: &'static str, ty: Type, versions: &str) -> Field {
    Field {
        name,
        ty,
        versions: Versions::parse(versions),
        nullable: Versions::NONE,
        tag: None,
        tagged: Versions::NONE,
        flexible: None,
        default: DefaultValue::Zero,
        ignorable: false,
        fields: &[],
    }
}

impl Field {
    /// nullable sets the versions in which the field may be null.
    pub const fn nullable(self, versions: &str) -> Field {
        Field {
            nullable: Versions::parse(versions),
            ..self
        }
    }
    /// tagged makes the field a tagged field with `tag` in `versions`.
    pub const fn tagged(self, tag: u32, versions: &str) -> Field {
        Field {
            tag: Some(tag),
            tagged: Versions::parse(versions),
            ..self
        }
    }
    /// flexible overrides the flexible versions for this field's encoding.
    pub const fn flexible(self, versions: &str) -> Field {
        Field {
            flexible: Some(Versions::parse(versions)),
            ..self
        }
    }
    /// default sets a default other than the type's zero.
    pub const fn default(self, default: DefaultValue) -> Field {
        Field { default, ..self }
    }
    /// ignorable lets encoders drop the field in versions that lack it.
    pub const fn ignorable(self) -> Field {
        Field {
            ignorable: true,
            ..self
        }
    }
    /// fields sets a struct's fields.
    pub const fn fields(self, fields: &'static [Field]) -> Field {
        Field { fields, ..self }
    }

    /// is_tagged_in tells whether the field travels in the tagged section at `version`.
    #[inline]
    pub fn is_tagged_in(&self, version: i16) -> bool {
        self.tag.is_some() && self.tagged.contains(version)
    }

    /// element is the type of an array's elements (the type itself otherwise).
    pub fn element(&self) -> Type {
        match self.ty {
            Type::Array(t) => *t,
            t => t,
        }
    }
}

/// Shorthands for the definitions.
pub const BOOL: Type = Type::Bool;
pub const INT8: Type = Type::Int8;
pub const INT16: Type = Type::Int16;
pub const INT32: Type = Type::Int32;
pub const INT64: Type = Type::Int64;
pub const UINT16: Type = Type::Uint16;
pub const FLOAT64: Type = Type::Float64;
pub const UUID: Type = Type::Uuid;
pub const STRING: Type = Type::String;
pub const BYTES: Type = Type::Bytes;
pub const RECORDS: Type = Type::Records;
pub const STRUCT: Type = Type::Struct;
/// STRUCTS is an array of structs (`[]SomeStruct` in Kafka's JSON).
pub const STRUCTS: Type = Type::Array(&Type::Struct);
pub const INT8S: Type = Type::Array(&Type::Int8);
pub const INT32S: Type = Type::Array(&Type::Int32);
pub const INT64S: Type = Type::Array(&Type::Int64);
pub const STRINGS: Type = Type::Array(&Type::String);

/// Kind tells a request from a response (and the two headers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Request,
    Response,
    Header,
}

/// Message is one top-level definition: a request, a response or a header.
#[derive(Debug)]
pub struct Message {
    /// name is Kafka's name, e.g. `JoinGroupRequest`.
    pub name: &'static str,
    pub api_key: i16,
    pub kind: Kind,
    /// valid are the versions Kafka 3.9 defines.
    pub valid: Versions,
    /// flexible are the versions that use compact lengths and tagged fields.
    pub flexible: Versions,
    pub fields: &'static [Field],
}

impl Message {
    /// is_flexible tells whether `version` uses the flexible encoding.
    #[inline]
    pub fn is_flexible(&self, version: i16) -> bool {
        self.flexible.contains(version)
    }
}

/// API_VERSIONS_KEY is ApiVersions' key, whose response header is always v0.
pub const API_VERSIONS_KEY: i16 = 18;

/// Api pairs a request with its response under one api key.
#[derive(Debug)]
pub struct Api {
    /// name is Kafka's name without the suffix, e.g. `JoinGroup`.
    pub name: &'static str,
    pub key: i16,
    pub request: &'static Message,
    pub response: &'static Message,
}

impl Api {
    /// versions is the range this api supports (the request's valid versions).
    pub fn versions(&self) -> Versions {
        self.request.valid
    }

    /// message is the request or the response.
    pub fn message(&self, kind: Kind) -> Option<&'static Message> {
        match kind {
            Kind::Request => Some(self.request),
            Kind::Response => Some(self.response),
            Kind::Header => None,
        }
    }

    /// request_header_version is 2 for a flexible request version, else 1.
    pub fn request_header_version(&self, version: i16) -> i16 {
        if self.request.is_flexible(version) {
            2
        } else {
            1
        }
    }

    /// response_header_version is 1 for a flexible response version, else 0, except that an
    /// ApiVersions response always uses header v0 (KIP-511: a client must be able to read it
    /// before it knows which versions the broker speaks).
    pub fn response_header_version(&self, version: i16) -> i16 {
        if self.key == API_VERSIONS_KEY || !self.response.is_flexible(version) {
            0
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kafka_version_syntax() {
        assert_eq!(Versions::parse("none"), Versions::NONE);
        assert!(Versions::parse("none").is_empty());
        assert_eq!(Versions::parse("3"), Versions { lo: 3, hi: 3 });
        assert_eq!(
            Versions::parse("3+"),
            Versions {
                lo: 3,
                hi: i16::MAX
            }
        );
        assert_eq!(Versions::parse("0-12"), Versions { lo: 0, hi: 12 });
        assert_eq!(Versions::parse("10+").to_string(), "10+");
        assert_eq!(Versions::parse("0-4").to_string(), "0-4");
        assert!(Versions::parse("4-6").contains(6));
        assert!(!Versions::parse("4-6").contains(7));
    }
}
