//! EndTxn (api key 26), v0-4: commit or abort a transaction. v2 answers PRODUCER_FENCED, v3
//! flexible, v4 TRANSACTION_ABORTABLE. (Kafka 4.0's v5, transaction protocol 2, bumps the
//! epoch at every transaction end.)
//!
//! Transcribed from Kafka 3.9's `EndTxn{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "EndTxnRequest",
    api_key: 26,
    kind: Kind::Request,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("transactional_id", STRING, "0+"),
        f("producer_id", INT64, "0+"),
        f("producer_epoch", INT16, "0+"),
        f("committed", BOOL, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "EndTxnResponse",
    api_key: 26,
    kind: Kind::Response,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
    ],
};
