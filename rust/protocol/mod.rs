//! The Kafka wire protocol: primitives, headers, message bodies and record batches.

pub mod primitives;
pub mod records;
