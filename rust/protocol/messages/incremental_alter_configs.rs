//! IncrementalAlterConfigs (api key 44), v0-1: set, delete, append to or subtract from single
//! configuration keys of brokers and topics (KIP-339). v1 flexible.
//!
//! Transcribed from Kafka 3.9's `IncrementalAlterConfigs{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "IncrementalAlterConfigsRequest",
    api_key: 44,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[
        f("resources", STRUCTS, "0+").fields(&[
            f("resource_type", INT8, "0+"),
            f("resource_name", STRING, "0+"),
            f("configs", STRUCTS, "0+").fields(&[
                f("name", STRING, "0+"),
                f("config_operation", INT8, "0+"),
                f("value", STRING, "0+").nullable("0+"),
            ]),
        ]),
        f("validate_only", BOOL, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "IncrementalAlterConfigsResponse",
    api_key: 44,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("responses", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+").nullable("0+"),
            f("resource_type", INT8, "0+"),
            f("resource_name", STRING, "0+"),
        ]),
    ],
};
