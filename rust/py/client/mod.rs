//! Bindings for the client (`kgroup._native.client`): the consumer's fetch queue and messages
//! (`consumer.rs`), the producer's accumulator (`producer.rs`).

use pyo3::prelude::*;

mod consumer;
mod producer;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    consumer::register(m)?;
    producer::register(m)?;
    Ok(())
}
