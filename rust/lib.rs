//! kgroup: Kafka's consumer-group machinery and Java-compatible partitioning.
//!
//! The pure core has no Python in it; the PyO3 bindings live in `py/` behind the
//! `python` feature so that `cargo test` runs without an interpreter.

pub mod assignors;
pub mod client;
pub mod coordinator;
pub mod errors;
pub mod group;
pub mod log;
pub mod partitioners;
pub mod protocol;
pub mod rng;
pub mod share;
pub mod txn;

#[cfg(test)]
mod module_cycles;
#[cfg(feature = "python")]
mod py;

pub use errors::Error;
pub use partitioners::hash::{crc32, fnv1a, murmur2, to_positive, KeyHash};
