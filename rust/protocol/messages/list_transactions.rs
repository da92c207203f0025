//! ListTransactions (api key 66), v0-1: the transactions a coordinator holds, filtered by
//! state and producer id, and from v1 by how long they have been open (KIP-994); flexible
//! from v0.
//!
//! Transcribed from Kafka 3.9's `ListTransactions{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "ListTransactionsRequest",
    api_key: 66,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("state_filters", STRINGS, "0+"),
        f("producer_id_filters", INT64S, "0+"),
        f("duration_filter", INT64, "1+").default(DefaultValue::Int(-1)),
    ],
};

pub static RESPONSE: Message = Message {
    name: "ListTransactionsResponse",
    api_key: 66,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("unknown_state_filters", STRINGS, "0+"),
        f("transaction_states", STRUCTS, "0+").fields(&[
            f("transactional_id", STRING, "0+"),
            f("producer_id", INT64, "0+"),
            f("transaction_state", STRING, "0+"),
        ]),
    ],
};
