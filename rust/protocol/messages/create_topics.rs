//! CreateTopics (api key 19), v0-7: create topics. v1 validate_only and error messages; v5
//! flexible, and the resulting configs and counts; v7 topic ids.
//!
//! Transcribed from Kafka 3.9's `CreateTopics{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "CreateTopicsRequest",
    api_key: 19,
    kind: Kind::Request,
    valid: Versions::parse("0-7"),
    flexible: Versions::parse("5+"),
    fields: &[
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("num_partitions", INT32, "0+"),
            f("replication_factor", INT16, "0+"),
            f("assignments", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("broker_ids", INT32S, "0+"),
            ]),
            f("configs", STRUCTS, "0+").fields(&[
                f("name", STRING, "0+"),
                f("value", STRING, "0+").nullable("0+"),
            ]),
        ]),
        f("timeout_ms", INT32, "0+").default(DefaultValue::Int(60000)),
        f("validate_only", BOOL, "1+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "CreateTopicsResponse",
    api_key: 19,
    kind: Kind::Response,
    valid: Versions::parse("0-7"),
    flexible: Versions::parse("5+"),
    fields: &[
        f("throttle_time_ms", INT32, "2+").ignorable(),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("topic_id", UUID, "7+").ignorable(),
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "1+").nullable("0+").ignorable(),
            f("topic_config_error_code", INT16, "5+")
                .tagged(0, "5+")
                .ignorable(),
            f("num_partitions", INT32, "5+")
                .default(DefaultValue::Int(-1))
                .ignorable(),
            f("replication_factor", INT16, "5+")
                .default(DefaultValue::Int(-1))
                .ignorable(),
            f("configs", STRUCTS, "5+")
                .nullable("5+")
                .ignorable()
                .fields(&[
                    f("name", STRING, "5+"),
                    f("value", STRING, "5+").nullable("5+"),
                    f("read_only", BOOL, "5+"),
                    f("config_source", INT8, "5+")
                        .default(DefaultValue::Int(-1))
                        .ignorable(),
                    f("is_sensitive", BOOL, "5+"),
                ]),
        ]),
    ],
};
