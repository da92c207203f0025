//! Produce (api key 0), v0-11: record batches to partitions. v3 adds the transactional id (and
//! message format v2); v5 log_start_offset; v8 record errors; v9 flexible; v10 the current leader
//! and node endpoints on NOT_LEADER errors (tagged).
//!
//! Transcribed from Kafka 3.9's `Produce{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "ProduceRequest",
    api_key: 0,
    kind: Kind::Request,
    valid: Versions::parse("0-11"),
    flexible: Versions::parse("9+"),
    fields: &[
        f("transactional_id", STRING, "3+")
            .nullable("3+")
            .default(DefaultValue::Null),
        f("acks", INT16, "0+"),
        f("timeout_ms", INT32, "0+"),
        f("topic_data", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partition_data", STRUCTS, "0+").fields(&[
                f("index", INT32, "0+"),
                f("records", RECORDS, "0+").nullable("0+"),
            ]),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "ProduceResponse",
    api_key: 0,
    kind: Kind::Response,
    valid: Versions::parse("0-11"),
    flexible: Versions::parse("9+"),
    fields: &[
        f("responses", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partition_responses", STRUCTS, "0+").fields(&[
                f("index", INT32, "0+"),
                f("error_code", INT16, "0+"),
                f("base_offset", INT64, "0+"),
                f("log_append_time_ms", INT64, "2+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("log_start_offset", INT64, "5+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("record_errors", STRUCTS, "8+").ignorable().fields(&[
                    f("batch_index", INT32, "8+"),
                    f("batch_index_error_message", STRING, "8+")
                        .nullable("8+")
                        .default(DefaultValue::Null),
                ]),
                f("error_message", STRING, "8+")
                    .nullable("8+")
                    .default(DefaultValue::Null)
                    .ignorable(),
                f("current_leader", STRUCT, "10+")
                    .tagged(0, "10+")
                    .fields(&[
                        f("leader_id", INT32, "10+").default(DefaultValue::Int(-1)),
                        f("leader_epoch", INT32, "10+").default(DefaultValue::Int(-1)),
                    ]),
            ]),
        ]),
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("node_endpoints", STRUCTS, "10+")
            .tagged(0, "10+")
            .fields(&[
                f("node_id", INT32, "10+"),
                f("host", STRING, "10+"),
                f("port", INT32, "10+"),
                f("rack", STRING, "10+")
                    .nullable("10+")
                    .default(DefaultValue::Null),
            ]),
    ],
};
