//! Error: the one error type of the kgroup core; rust/py/errors.rs converts it to Python.

use std::fmt;

/// Error is every failure the core reports. Each variant maps to one Python exception class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An argument is out of its range (Python: `kgroup.errors.InvalidArgument`, a ValueError).
    InvalidArgument(String),
    /// A value has the wrong type (Python: `kgroup.errors.InvalidType`, a TypeError).
    InvalidType(String),
    /// Bytes that do not decode (Python: `kgroup.errors.DecodeError`, a ValueError).
    Decode(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument(m) | Error::InvalidType(m) | Error::Decode(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
