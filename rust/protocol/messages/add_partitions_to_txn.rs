//! AddPartitionsToTxn (api key 24), v0-5: partitions a transaction is about to write to.
//! v0-3 are the client's (one transaction); v4+ are broker to coordinator, several
//! transactions at once, each with `verify_only` to ask whether partitions are already in the
//! transaction (KIP-890 part 1). v2 answers PRODUCER_FENCED, v3 flexible, v5
//! TRANSACTION_ABORTABLE.
//!
//! Transcribed from Kafka 3.9's `AddPartitionsToTxn{Request,Response}.json`.

use crate::protocol::schema::*;

const TOPIC: &[Field] = &[f("name", STRING, "0+"), f("partitions", INT32S, "0+")];

const TOPIC_RESULT: &[Field] = &[
    f("name", STRING, "0+"),
    f("results_by_partition", STRUCTS, "0+").fields(&[
        f("partition_index", INT32, "0+"),
        f("partition_error_code", INT16, "0+"),
    ]),
];

pub static REQUEST: Message = Message {
    name: "AddPartitionsToTxnRequest",
    api_key: 24,
    kind: Kind::Request,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("transactions", STRUCTS, "4+").fields(&[
            f("transactional_id", STRING, "4+"),
            f("producer_id", INT64, "4+"),
            f("producer_epoch", INT16, "4+"),
            f("verify_only", BOOL, "4+"),
            f("topics", STRUCTS, "4+").fields(TOPIC),
        ]),
        f("v3_and_below_transactional_id", STRING, "0-3"),
        f("v3_and_below_producer_id", INT64, "0-3"),
        f("v3_and_below_producer_epoch", INT16, "0-3"),
        f("v3_and_below_topics", STRUCTS, "0-3").fields(TOPIC),
    ],
};

pub static RESPONSE: Message = Message {
    name: "AddPartitionsToTxnResponse",
    api_key: 24,
    kind: Kind::Response,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "4+").ignorable(),
        f("results_by_transaction", STRUCTS, "4+").fields(&[
            f("transactional_id", STRING, "4+"),
            f("topic_results", STRUCTS, "4+").fields(TOPIC_RESULT),
        ]),
        f("results_by_topic_v3_and_below", STRUCTS, "0-3").fields(TOPIC_RESULT),
    ],
};
