//! The client's per-record and per-byte work, in plain Rust, below the Python Consumer and
//! Producer: decoding fetched batches into a queue of records ([`fetch`]) and exporting them
//! as Arrow ([`arrow`]); the producer's record accumulator ([`accumulator`]) and the Arrow
//! header lists it appends ([`headers`]). Bindings live in `rust/py/client/`.

pub mod accumulator;
pub mod arrow;
pub mod fetch;
pub mod headers;
