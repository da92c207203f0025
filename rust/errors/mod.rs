//! Error: the one error type of the kgroup core, and Kafka's error codes ([`ErrorCode`]).
//!
//! A caller acts on an error's variant, never on its text: a broker answers
//! [`Error::UnsupportedVersion`] with UNSUPPORTED_VERSION and [`Error::CorruptRecord`] with
//! CORRUPT_MESSAGE or INVALID_RECORD ([`Error::error_code`]), and closes the connection on
//! [`Error::FrameTooLarge`] and [`Error::Malformed`], as Kafka's broker does. `rust/py/errors.rs`
//! converts each variant to its class in `kgroup.errors`.

pub mod kafka;

use std::fmt;

pub use kafka::{ErrorCode, ERROR_CODES};

/// Error is every failure the core reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// UnsupportedVersion: an api key kgroup does not speak, or a version outside the range it
    /// speaks for that key. Python: `kgroup.errors.UnsupportedApiVersion`.
    UnsupportedVersion(Box<UnsupportedVersion>),
    /// FrameTooLarge: a frame's size prefix is above the limit (Kafka's
    /// `socket.request.max.bytes`). Nothing after it can be read. Python:
    /// `kgroup.errors.FrameTooLarge`.
    FrameTooLarge { size: i64, max: usize },
    /// Malformed: bytes that do not decode as the message they should hold: truncated, a length
    /// or count that cannot be, invalid UTF-8, bytes left over. Python:
    /// `kgroup.errors.MalformedMessage`.
    Malformed(Box<Malformed>),
    /// CorruptRecord: a record batch that fails Kafka's checks. Python:
    /// `kgroup.errors.CorruptRecord`.
    CorruptRecord(Box<CorruptRecord>),
    /// Kafka: a condition that Kafka answers with one of its error codes (a sequence out of
    /// order, a record too large, a fenced producer epoch...). Python: the code's
    /// `kgroup.errors.KafkaError` subclass.
    Kafka(Box<KafkaCondition>),
    /// Io: the storage failed (a full disk, a file that vanished). A broker answers
    /// KAFKA_STORAGE_ERROR. Python: `kgroup.errors.KafkaStorageError`.
    Io(Box<IoFailure>),
    /// InvalidArgument: an argument out of its range. Python: `kgroup.errors.InvalidArgument`,
    /// a ValueError.
    InvalidArgument(String),
    /// InvalidType: a value of the wrong type. Python: `kgroup.errors.InvalidType`, a TypeError.
    InvalidType(String),
}

/// UnsupportedVersion names the api key and version that were asked for, and what kgroup
/// knows of the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedVersion {
    pub api_key: i16,
    pub version: i16,
    /// api is Kafka's name of the api (or of the message) when kgroup speaks the key.
    pub api: Option<&'static str>,
    /// supported is the range of versions kgroup speaks for the key, as Kafka writes it (`0-9`).
    pub supported: Option<String>,
}

/// Malformed says what could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// context is what was being read (`JoinGroupRequest v5`); empty when not known.
    pub context: String,
    /// path is the field being read (`protocols[0].name`); empty outside a message's fields.
    pub path: String,
    /// reason is what was wrong (`truncated string: needs 5 bytes, 2 left`).
    pub reason: String,
}

/// KafkaCondition is a Kafka error code and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaCondition {
    pub code: ErrorCode,
    pub message: String,
    /// record_errors names the records of a produced batch that failed validation, in batch
    /// order (Kafka's `RecordValidationException`, which a Produce response from v8 carries as
    /// `record_errors`, KIP-467); empty for every other condition.
    pub record_errors: Vec<RecordError>,
}

/// RecordError is one record that failed validation: its index in its batch and why (Kafka's
/// `ProduceResponse.RecordError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    pub batch_index: i32,
    pub message: String,
}

/// IoFailure is a failed file operation: its kind and what was being done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoFailure {
    pub kind: std::io::ErrorKind,
    /// os_error is the OS error number (`ENOSPC`: 28), when the OS gave one.
    pub os_error: Option<i32>,
    /// sync says the failure was an fsync's: the data it covered may be lost even if a later
    /// fsync succeeds (the kernel may have dropped the pages it could not write).
    pub sync: bool,
    pub message: String,
}

/// Corruption is what is wrong with a record batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Corruption {
    /// Crc: the batch's CRC-32C (or a legacy message's CRC-32) does not match its bytes.
    Crc,
    /// Compression: the compressed records do not decompress (or decompress to more than
    /// allowed), or the codec id is unknown.
    Compression,
    /// RecordCount: the records do not match the batch's record count.
    RecordCount,
    /// Framing: a batch's size, length or magic cannot be, or the batch is cut short.
    Framing,
    /// Record: a record inside the batch does not read (a bad size, key, value or header).
    Record,
}

impl Corruption {
    /// name is the kind in lower case (`crc`, `compression`, `record_count`, `framing`,
    /// `record`), as Python's `CorruptRecord.kind` gives it.
    pub const fn name(self) -> &'static str {
        match self {
            Corruption::Crc => "crc",
            Corruption::Compression => "compression",
            Corruption::RecordCount => "record_count",
            Corruption::Framing => "framing",
            Corruption::Record => "record",
        }
    }

    /// error_code is what Kafka's broker answers a produce with: CORRUPT_MESSAGE for a batch
    /// that does not hold together (Kafka's `CorruptRecordException`), INVALID_RECORD for one
    /// whose records do not match it (`InvalidRecordException`).
    pub const fn error_code(self) -> ErrorCode {
        match self {
            Corruption::Crc | Corruption::Compression | Corruption::Framing => {
                ErrorCode::CorruptMessage
            }
            Corruption::RecordCount | Corruption::Record => ErrorCode::InvalidRecord,
        }
    }
}

/// CorruptRecord says what is wrong with a record batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptRecord {
    pub kind: Corruption,
    pub reason: String,
}

impl Error {
    /// malformed is a [`Error::Malformed`] with only a reason; decoders add the context and path.
    #[cold]
    pub fn malformed(reason: impl Into<String>) -> Error {
        Error::Malformed(Box::new(Malformed {
            context: String::new(),
            path: String::new(),
            reason: reason.into(),
        }))
    }

    /// corrupt is a [`Error::CorruptRecord`] of `kind`.
    #[cold]
    pub fn corrupt(kind: Corruption, reason: impl Into<String>) -> Error {
        Error::CorruptRecord(Box::new(CorruptRecord {
            kind,
            reason: reason.into(),
        }))
    }

    /// kafka is an [`Error::Kafka`] with `code`.
    #[cold]
    pub fn kafka(code: ErrorCode, message: impl Into<String>) -> Error {
        Error::Kafka(Box::new(KafkaCondition {
            code,
            message: message.into(),
            record_errors: Vec::new(),
        }))
    }

    /// record_validation is an [`Error::Kafka`] for records that failed validation, each named
    /// in `record_errors` (Kafka's `RecordValidationException`).
    #[cold]
    pub fn record_validation(
        code: ErrorCode,
        message: impl Into<String>,
        record_errors: Vec<RecordError>,
    ) -> Error {
        Error::Kafka(Box::new(KafkaCondition {
            code,
            message: message.into(),
            record_errors,
        }))
    }

    /// io is an [`Error::Io`]: `what` says what was being done (`appending to 00000.log`).
    #[cold]
    pub fn io(err: &std::io::Error, what: impl std::fmt::Display) -> Error {
        Error::Io(Box::new(IoFailure {
            kind: err.kind(),
            os_error: err.raw_os_error(),
            sync: false,
            message: format!("{what}: {err}"),
        }))
    }

    /// unsupported_version is a [`Error::UnsupportedVersion`]; `known` is the api's name and the
    /// versions kgroup speaks for it, when it speaks the key at all.
    #[cold]
    pub fn unsupported_version(
        api_key: i16,
        version: i16,
        known: Option<(&'static str, String)>,
    ) -> Error {
        let (api, supported) = match known {
            Some((name, versions)) => (Some(name), Some(versions)),
            None => (None, None),
        };
        Error::UnsupportedVersion(Box::new(UnsupportedVersion {
            api_key,
            version,
            api,
            supported,
        }))
    }

    /// error_code is the Kafka error a broker answers this error with, or `None` where Kafka's
    /// broker closes the connection instead (a frame too large, a request it cannot parse) or
    /// where the error is the caller's own (a bad argument).
    pub fn error_code(&self) -> Option<ErrorCode> {
        match self {
            Error::UnsupportedVersion(_) => Some(ErrorCode::UnsupportedVersion),
            Error::CorruptRecord(c) => Some(c.kind.error_code()),
            Error::Kafka(k) => Some(k.code),
            Error::Io(_) => Some(ErrorCode::KafkaStorageError),
            _ => None,
        }
    }

    /// in_context gives a [`Error::Malformed`] (or a [`Error::CorruptRecord`]) the name of what
    /// was being read, unless it has one; other errors pass through.
    #[cold]
    pub fn in_context(self, context: impl FnOnce() -> String) -> Error {
        match self {
            Error::Malformed(mut m) if m.context.is_empty() => {
                m.context = context();
                Error::Malformed(m)
            }
            e => e,
        }
    }

    /// into_corrupt reads a [`Error::Malformed`] met inside a record batch as a corrupt
    /// record of `kind`; other errors pass through.
    #[cold]
    pub fn into_corrupt(self, kind: Corruption) -> Error {
        match self {
            Error::Malformed(m) => Error::corrupt(kind, m.to_string()),
            e => e,
        }
    }

    /// into_argument reads a decoding error met while checking a caller's input (a version to
    /// encode, bytes to encode with) as an [`Error::InvalidArgument`].
    #[cold]
    pub fn into_argument(self) -> Error {
        match self {
            Error::InvalidArgument(_) | Error::InvalidType(_) => self,
            e => Error::InvalidArgument(e.to_string()),
        }
    }
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in [&self.context, &self.path] {
            if !part.is_empty() {
                write!(f, "{part}: ")?;
            }
        }
        f.write_str(&self.reason)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnsupportedVersion(u) => match (&u.api, &u.supported) {
                (Some(api), Some(supported)) => write!(
                    f,
                    "{api} (api key {}) version {} is not supported (versions {supported})",
                    u.api_key, u.version
                ),
                _ => write!(f, "unknown api key {}", u.api_key),
            },
            Error::FrameTooLarge { size, max } => {
                write!(f, "frame size {size} is above the limit of {max} bytes")
            }
            Error::Malformed(m) => m.fmt(f),
            Error::CorruptRecord(c) => f.write_str(&c.reason),
            Error::Kafka(k) => f.write_str(&k.message),
            Error::Io(io) => f.write_str(&io.message),
            Error::InvalidArgument(m) | Error::InvalidType(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_choose_the_kafka_answer() {
        let unsupported = Error::unsupported_version(11, 10, Some(("JoinGroup", "0-9".into())));
        assert_eq!(
            unsupported.to_string(),
            "JoinGroup (api key 11) version 10 is not supported (versions 0-9)"
        );
        assert_eq!(
            Error::unsupported_version(99, 0, None).to_string(),
            "unknown api key 99"
        );
        assert_eq!(
            unsupported.error_code(),
            Some(ErrorCode::UnsupportedVersion)
        );
        for (kind, code) in [
            (Corruption::Crc, ErrorCode::CorruptMessage),
            (Corruption::Compression, ErrorCode::CorruptMessage),
            (Corruption::Framing, ErrorCode::CorruptMessage),
            (Corruption::RecordCount, ErrorCode::InvalidRecord),
            (Corruption::Record, ErrorCode::InvalidRecord),
        ] {
            assert_eq!(Error::corrupt(kind, "x").error_code(), Some(code));
        }
        let frame = Error::FrameTooLarge {
            size: 1 << 30,
            max: 100,
        };
        assert_eq!(frame.error_code(), None);
        assert_eq!(Error::malformed("x").error_code(), None);
        assert_eq!(Error::InvalidArgument("x".into()).error_code(), None);
    }

    #[test]
    fn malformed_reads_context_path_reason() {
        let Error::Malformed(mut m) = Error::malformed("truncated string") else {
            unreachable!()
        };
        m.path = "protocols[0].name".into();
        let e = Error::Malformed(m).in_context(|| "JoinGroupRequest v5".into());
        assert_eq!(
            e.to_string(),
            "JoinGroupRequest v5: protocols[0].name: truncated string"
        );
        // A context is set once: the innermost reader's stays.
        let e = e.in_context(|| "outer".into());
        assert!(e.to_string().starts_with("JoinGroupRequest v5: "));
        let c = Error::malformed("truncated varint").into_corrupt(Corruption::Record);
        assert_eq!(c, Error::corrupt(Corruption::Record, "truncated varint"));
    }

    #[test]
    fn errors_stay_small() {
        // Result<T, Error> is on every decoding path.
        assert!(std::mem::size_of::<Error>() <= 32);
    }
}
