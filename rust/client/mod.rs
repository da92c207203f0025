//! The client's per-record and per-byte work, in plain Rust: the producer's record
//! accumulator (`accumulator`). Bindings live in `rust/py/client/`.

pub mod accumulator;
