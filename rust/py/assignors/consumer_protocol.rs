//! Bindings for the ConsumerProtocol payloads and the sticky assignors' user data
//! (`kgroup.assignors.consumer_protocol` wraps these).

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use super::{
    bytes_of, invalid_type, partitions_of, partitions_tuple, type_name, PyAssignment,
    PySubscription,
};
use crate::assignors::consumer_protocol as cp;
use crate::py::errors::IntoPyResult;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_subscription, m)?)?;
    m.add_function(wrap_pyfunction!(decode_subscription, m)?)?;
    m.add_function(wrap_pyfunction!(encode_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(decode_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(encode_sticky_user_data, m)?)?;
    m.add_function(wrap_pyfunction!(decode_sticky_user_data, m)?)?;
    m.add("HIGHEST_VERSION", cp::HIGHEST_VERSION)?;
    Ok(())
}

fn data_of<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    match bytes_of(data, "data")? {
        Some(v) => Ok(Cow::Owned(v)),
        None => Err(invalid_type(
            data.py(),
            "data must be bytes, got None".into(),
        )),
    }
}

#[pyfunction]
#[pyo3(signature = (subscription, version=3))]
fn encode_subscription<'py>(
    py: Python<'py>,
    subscription: &Bound<'py, PyAny>,
    version: i16,
) -> PyResult<Bound<'py, PyBytes>> {
    let s = subscription.cast::<PySubscription>().map_err(|_| {
        invalid_type(
            py,
            format!(
                "expected a kgroup Subscription, got {}",
                type_name(subscription)
            ),
        )
    })?;
    let b = cp::encode_subscription(&s.get().inner, version).py_err(py)?;
    Ok(PyBytes::new(py, &b))
}

#[pyfunction]
fn decode_subscription(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<(PySubscription, i16)> {
    let (s, v) = cp::decode_subscription(&data_of(data)?).py_err(py)?;
    Ok((PySubscription::wrap(s), v))
}

#[pyfunction]
#[pyo3(signature = (assignment, version=3))]
fn encode_assignment<'py>(
    py: Python<'py>,
    assignment: &Bound<'py, PyAny>,
    version: i16,
) -> PyResult<Bound<'py, PyBytes>> {
    let a = assignment.cast::<PyAssignment>().map_err(|_| {
        invalid_type(
            py,
            format!(
                "expected a kgroup Assignment, got {}",
                type_name(assignment)
            ),
        )
    })?;
    let b = cp::encode_assignment(&a.get().inner, version).py_err(py)?;
    Ok(PyBytes::new(py, &b))
}

#[pyfunction]
fn decode_assignment(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<(PyAssignment, i16)> {
    let (a, v) = cp::decode_assignment(&data_of(data)?).py_err(py)?;
    Ok((PyAssignment::wrap(a), v))
}

#[pyfunction]
#[pyo3(signature = (partitions, generation=None))]
fn encode_sticky_user_data<'py>(
    py: Python<'py>,
    partitions: &Bound<'py, PyAny>,
    generation: Option<i32>,
) -> PyResult<Bound<'py, PyBytes>> {
    let parts = partitions_of(partitions, "partitions")?;
    let b = cp::encode_sticky_user_data(&parts, generation).py_err(py)?;
    Ok(PyBytes::new(py, &b))
}

#[pyfunction]
fn decode_sticky_user_data<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyTuple>, Option<i32>)> {
    let (parts, generation) = cp::decode_sticky_user_data(&data_of(data)?).py_err(py)?;
    Ok((partitions_tuple(py, &parts)?, generation))
}
