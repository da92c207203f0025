//! The one place where core errors become Python exceptions (classes in `kgroup.errors`).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use crate::error::Error;

static INVALID_ARGUMENT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<Bound<'py, PyType>> {
    cell.import(py, "kgroup.errors", name).cloned()
}

/// to_pyerr converts a core error to its `kgroup.errors` class.
pub fn to_pyerr(py: Python<'_>, err: Error) -> PyErr {
    let (cell, name) = match &err {
        Error::InvalidArgument(_) => (&INVALID_ARGUMENT, "InvalidArgument"),
        Error::InvalidType(_) => (&INVALID_TYPE, "InvalidType"),
        Error::Decode(_) => (&DECODE_ERROR, "DecodeError"),
    };
    match class(py, cell, name) {
        Ok(ty) => PyErr::from_type(ty, err.to_string()),
        Err(e) => e,
    }
}

/// IntoPy lets binding code write `core_call().py_err(py)?`.
pub trait IntoPyResult<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_pyerr(py, e))
    }
}
