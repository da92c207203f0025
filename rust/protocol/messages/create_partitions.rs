//! CreatePartitions (api key 37), v0-3: raise topics' partition counts. v1 only changes
//! throttling (the response comes before the throttle); v2 flexible; v3 may answer
//! THROTTLING_QUOTA_EXCEEDED (KIP-599).
//!
//! Transcribed from Kafka 3.9's `CreatePartitions{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "CreatePartitionsRequest",
    api_key: 37,
    kind: Kind::Request,
    valid: Versions::parse("0-3"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("count", INT32, "0+"),
            f("assignments", STRUCTS, "0+")
                .nullable("0+")
                .fields(&[f("broker_ids", INT32S, "0+")]),
        ]),
        f("timeout_ms", INT32, "0+"),
        f("validate_only", BOOL, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "CreatePartitionsResponse",
    api_key: 37,
    kind: Kind::Response,
    valid: Versions::parse("0-3"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("results", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+")
                .nullable("0+")
                .default(DefaultValue::Null),
        ]),
    ],
};
