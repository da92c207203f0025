//! The PyO3 bindings: the private module `kgroup._native`, organised like the public package.
//! Each area is a submodule named after the Python module that wraps it (`kgroup._native.protocol`
//! behind `kgroup.protocol`, `kgroup._native.protocol.records` behind `kgroup.protocol.records`),
//! and lives at the same relative path here as its core in `rust/` and its wrapper in
//! `python/kgroup/`. Users import `kgroup`, whose Python wrappers add types and defaults.

use pyo3::prelude::*;
use pyo3::types::PyDict;

mod assignors;
mod client;
pub mod errors;
mod group;
pub(crate) mod log;
mod partitioners;
mod protocol;
mod share;
mod txn;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    submodule(m, "errors", errors::register)?;
    submodule(m, "partitioners", partitioners::register)?;
    submodule(m, "assignors", assignors::register)?;
    submodule(m, "protocol", protocol::register)?;
    submodule(m, "group", group::register)?;
    submodule(m, "txn", txn::register)?;
    submodule(m, "share", share::register)?;
    submodule(m, "log", log::register)?;
    submodule(m, "client", client::register)?;
    Ok(())
}

/// submodule adds a submodule `name` to `parent`, filled by `register`, and enters it in
/// `sys.modules` under its dotted name so that `import kgroup._native.protocol` and
/// `from kgroup._native.protocol import ...` work like for a package.
pub(crate) fn submodule<'py>(
    parent: &Bound<'py, PyModule>,
    name: &str,
    register: impl FnOnce(&Bound<'py, PyModule>) -> PyResult<()>,
) -> PyResult<Bound<'py, PyModule>> {
    let py = parent.py();
    let full = format!("{}.{name}", parent.name()?);
    let m = PyModule::new(py, name)?;
    m.setattr("__name__", &full)?;
    register(&m)?;
    parent.add_submodule(&m)?;
    py.import("sys")?
        .getattr("modules")?
        .cast_into::<PyDict>()?
        .set_item(&full, &m)?;
    Ok(m)
}
