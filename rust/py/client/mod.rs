//! Bindings for the client (`kgroup._native.client`): the consumer's fetch queue and messages
//! (`consumer.rs`).

use pyo3::prelude::*;

mod consumer;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    consumer::register(m)?;
    Ok(())
}
