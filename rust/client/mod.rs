//! The client's per-record work, below the Python Consumer and Producer: decoding fetched
//! batches into a queue of records ([`fetch`]) and exporting them as Arrow ([`arrow`]).

pub mod arrow;
pub mod fetch;
