//! DeleteTopics (api key 20), v0-6: delete topics. v4 flexible; v5 error messages; v6 topics by
//! name or id.
//!
//! Transcribed from Kafka 3.9's `DeleteTopics{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DeleteTopicsRequest",
    api_key: 20,
    kind: Kind::Request,
    valid: Versions::parse("0-6"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("topics", STRUCTS, "6+").fields(&[
            f("name", STRING, "6+")
                .nullable("6+")
                .default(DefaultValue::Null),
            f("topic_id", UUID, "6+"),
        ]),
        f("topic_names", STRINGS, "0-5").ignorable(),
        f("timeout_ms", INT32, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "DeleteTopicsResponse",
    api_key: 20,
    kind: Kind::Response,
    valid: Versions::parse("0-6"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("responses", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+").nullable("6+"),
            f("topic_id", UUID, "6+").ignorable(),
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "5+")
                .nullable("5+")
                .default(DefaultValue::Null)
                .ignorable(),
        ]),
    ],
};
