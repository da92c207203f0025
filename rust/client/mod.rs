//! The client's per-record work, below the Python Consumer and Producer: decoding fetched
//! batches into a queue of records ([`fetch`]) and exporting them as Arrow ([`arrow`]); the
//! producer's record accumulator ([`accumulator`]). Bindings live in `rust/py/client/`.

pub mod accumulator;
pub mod arrow;
pub mod fetch;
