//! DescribeTransactions (api key 65), v0: the state of transactional ids, as their
//! coordinator holds it (KIP-664, `kafka-transactions.sh describe`); flexible from v0.
//!
//! Transcribed from Kafka 3.9's `DescribeTransactions{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DescribeTransactionsRequest",
    api_key: 65,
    kind: Kind::Request,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[f("transactional_ids", STRINGS, "0+")],
};

pub static RESPONSE: Message = Message {
    name: "DescribeTransactionsResponse",
    api_key: 65,
    kind: Kind::Response,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("transaction_states", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("transactional_id", STRING, "0+"),
            f("transaction_state", STRING, "0+"),
            f("transaction_timeout_ms", INT32, "0+"),
            f("transaction_start_time_ms", INT64, "0+"),
            f("producer_id", INT64, "0+"),
            f("producer_epoch", INT16, "0+"),
            f("topics", STRUCTS, "0+")
                .fields(&[f("topic", STRING, "0+"), f("partitions", INT32S, "0+")]),
        ]),
    ],
};
