//! DescribeProducers (api key 61), v0: the active idempotent and transactional producers of
//! partitions, their epochs, last sequences and open transactions (KIP-664, as
//! `kafka-transactions.sh describe-producers` asks for them); flexible from v0.
//!
//! Transcribed from Kafka 3.9's `DescribeProducers{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DescribeProducersRequest",
    api_key: 61,
    kind: Kind::Request,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[f("topics", STRUCTS, "0+").fields(&[
        f("name", STRING, "0+"),
        f("partition_indexes", INT32S, "0+"),
    ])],
};

pub static RESPONSE: Message = Message {
    name: "DescribeProducersResponse",
    api_key: 61,
    kind: Kind::Response,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
                f("error_message", STRING, "0+")
                    .nullable("0+")
                    .default(DefaultValue::Null),
                f("active_producers", STRUCTS, "0+").fields(&[
                    f("producer_id", INT64, "0+"),
                    // An int32 here, as Kafka's spec has it, though producer epochs are int16
                    // everywhere else.
                    f("producer_epoch", INT32, "0+"),
                    f("last_sequence", INT32, "0+").default(DefaultValue::Int(-1)),
                    f("last_timestamp", INT64, "0+").default(DefaultValue::Int(-1)),
                    f("coordinator_epoch", INT32, "0+"),
                    f("current_txn_start_offset", INT64, "0+").default(DefaultValue::Int(-1)),
                ]),
            ]),
        ]),
    ],
};
