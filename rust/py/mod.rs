//! The PyO3 bindings: the private module `kgroup._native`. Users import `kgroup`, whose Python
//! wrappers add types and defaults. Each area registers its own items.

use pyo3::prelude::*;

mod arrow;
mod assignors;
pub mod errors;
mod partition;
mod partitioners;
mod protocol;
mod records;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    partition::register(m)?;
    assignors::register(m)?;
    partitioners::register(m)?;
    records::register(m)?;
    protocol::register(m)?;
    Ok(())
}
