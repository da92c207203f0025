//! AddOffsetsToTxn (api key 25), v0-4: a transaction is about to commit offsets of a group,
//! which adds that group's `__consumer_offsets` partition to it. v2 answers PRODUCER_FENCED,
//! v3 flexible, v4 TRANSACTION_ABORTABLE.
//!
//! Transcribed from Kafka 3.9's `AddOffsetsToTxn{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "AddOffsetsToTxnRequest",
    api_key: 25,
    kind: Kind::Request,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("transactional_id", STRING, "0+"),
        f("producer_id", INT64, "0+"),
        f("producer_epoch", INT16, "0+"),
        f("group_id", STRING, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "AddOffsetsToTxnResponse",
    api_key: 25,
    kind: Kind::Response,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
    ],
};
