//! The Kafka wire protocol: primitives, headers, message bodies and record batches.

pub mod codec;
pub mod frame;
pub mod messages;
pub mod primitives;
#[cfg(any(test, feature = "testing"))]
pub mod random;
pub mod records;
pub mod schema;
pub mod typed;
pub mod value;
