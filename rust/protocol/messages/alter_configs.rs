//! AlterConfigs (api key 33), v0-2: replace the whole configuration of brokers and topics
//! (IncrementalAlterConfigs changes single keys). v1 only changes throttling (the response comes
//! before the throttle); v2 flexible.
//!
//! Transcribed from Kafka 3.9's `AlterConfigs{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "AlterConfigsRequest",
    api_key: 33,
    kind: Kind::Request,
    valid: Versions::parse("0-2"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("resources", STRUCTS, "0+").fields(&[
            f("resource_type", INT8, "0+"),
            f("resource_name", STRING, "0+"),
            f("configs", STRUCTS, "0+").fields(&[
                f("name", STRING, "0+"),
                f("value", STRING, "0+").nullable("0+"),
            ]),
        ]),
        f("validate_only", BOOL, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "AlterConfigsResponse",
    api_key: 33,
    kind: Kind::Response,
    valid: Versions::parse("0-2"),
    flexible: Versions::parse("2+"),
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
