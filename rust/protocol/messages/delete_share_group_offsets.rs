//! DeleteShareGroupOffsets (api key 92), v0: forgets an empty share group's (KIP-932) state in
//! whole topics. Flexible. New in Kafka 4.1.
//!
//! Transcribed from Kafka 4.2's `DeleteShareGroupOffsets{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DeleteShareGroupOffsetsRequest",
    api_key: 92,
    kind: Kind::Request,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("group_id", STRING, "0+"),
        f("topics", STRUCTS, "0+").fields(&[f("topic_name", STRING, "0+")]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "DeleteShareGroupOffsetsResponse",
    api_key: 92,
    kind: Kind::Response,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("error_message", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("responses", STRUCTS, "0+").fields(&[
            f("topic_name", STRING, "0+"),
            f("topic_id", UUID, "0+"),
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+")
                .nullable("0+")
                .default(DefaultValue::Null),
        ]),
    ],
};
