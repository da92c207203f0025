//! The one place where core errors become Python exceptions (classes in `kgroup.errors`), and
//! the Kafka error-code table that `kgroup.errors` builds its classes from
//! (`kgroup._native.errors.ERROR_CODES`).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};

use crate::errors::{Error, Result, ERROR_CODES};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let table = PyList::empty(m.py());
    for e in ERROR_CODES {
        table.append((
            e.code(),
            e.name(),
            e.class_name(),
            e.retriable(),
            e.message(),
        ))?;
    }
    m.add("ERROR_CODES", table)?;
    Ok(())
}

static INVALID_ARGUMENT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNSUPPORTED_API_VERSION: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static FRAME_TOO_LARGE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static MALFORMED_MESSAGE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CORRUPT_RECORD: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ERROR_FOR_CODE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<&'py Bound<'py, PyType>> {
    cell.import(py, "kgroup.errors", name)
}

/// to_pyerr converts a core error to its `kgroup.errors` class, with the error's fields as
/// keyword arguments (`api_key`, `path`, `kind`, ...), so that Python code too acts on the kind
/// and the fields, never on the text.
pub fn to_pyerr(py: Python<'_>, err: Error) -> PyErr {
    build(py, &err).unwrap_or_else(|e| e)
}

fn build(py: Python<'_>, err: &Error) -> PyResult<PyErr> {
    let text = err.to_string();
    let kwargs = PyDict::new(py);
    let cls = match err {
        Error::InvalidArgument(_) => class(py, &INVALID_ARGUMENT, "InvalidArgument")?,
        Error::InvalidType(_) => class(py, &INVALID_TYPE, "InvalidType")?,
        Error::UnsupportedVersion(u) => {
            kwargs.set_item("api_key", u.api_key)?;
            kwargs.set_item("api_version", u.version)?;
            class(py, &UNSUPPORTED_API_VERSION, "UnsupportedApiVersion")?
        }
        Error::FrameTooLarge { size, max } => {
            kwargs.set_item("size", size)?;
            kwargs.set_item("max_size", max)?;
            class(py, &FRAME_TOO_LARGE, "FrameTooLarge")?
        }
        Error::Malformed(m) => {
            kwargs.set_item("context", &m.context)?;
            kwargs.set_item("path", &m.path)?;
            kwargs.set_item("reason", &m.reason)?;
            class(py, &MALFORMED_MESSAGE, "MalformedMessage")?
        }
        Error::CorruptRecord(c) => {
            kwargs.set_item("kind", c.kind.name())?;
            kwargs.set_item("error_code", c.kind.error_code().code())?;
            class(py, &CORRUPT_RECORD, "CorruptRecord")?
        }
        Error::Kafka(_) | Error::Io(_) => {
            // The code's own KafkaError subclass (KafkaStorageError for Io).
            let code = err.error_code().map_or(-1, |c| c.code());
            let for_code = ERROR_FOR_CODE.import(py, "kgroup.errors", "error_for_code")?;
            let value = for_code.call1((code,))?.call1((text,))?;
            if let Error::Io(io) = err {
                value.setattr("os_errno", io.os_error)?;
            }
            if let Error::Kafka(k) = err {
                if !k.record_errors.is_empty() {
                    let records: Vec<(i32, &str)> = k
                        .record_errors
                        .iter()
                        .map(|r| (r.batch_index, r.message.as_str()))
                        .collect();
                    value.setattr("record_errors", PyTuple::new(py, records)?)?;
                }
            }
            return Ok(PyErr::from_value(value));
        }
    };
    let value = cls.call((text,), Some(&kwargs))?;
    Ok(PyErr::from_value(value))
}

/// IntoPyResult lets binding code write `core_call().py_err(py)?`.
pub trait IntoPyResult<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_pyerr(py, e))
    }
}

/// detached runs `f` with the GIL released and converts its error on the way back: the one
/// helper for core work over many items (polars' `enter_polars`).
pub fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T> + Send) -> PyResult<T> {
    py.detach(f).py_err(py)
}
