//! Bindings of the client's native parts (`kgroup._native.client`): the producer's
//! accumulator in `producer.rs`.

use pyo3::prelude::*;

mod producer;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    producer::register(m)?;
    Ok(())
}
