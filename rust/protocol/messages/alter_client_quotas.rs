//! AlterClientQuotas (api key 49), v0-1: set or remove client quotas of entities (users,
//! client ids, IP addresses, and their defaults), or only validate the change. v1 is flexible.
//!
//! Transcribed from Kafka 4.1's `AlterClientQuotas{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "AlterClientQuotasRequest",
    api_key: 49,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[
        f("entries", STRUCTS, "0+").fields(&[
            f("entity", STRUCTS, "0+").fields(&[
                f("entity_type", STRING, "0+"),
                f("entity_name", STRING, "0+").nullable("0+"),
            ]),
            f("ops", STRUCTS, "0+").fields(&[
                f("key", STRING, "0+"),
                f("value", FLOAT64, "0+"),
                f("remove", BOOL, "0+"),
            ]),
        ]),
        f("validate_only", BOOL, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "AlterClientQuotasResponse",
    api_key: 49,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("entries", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+").nullable("0+"),
            f("entity", STRUCTS, "0+").fields(&[
                f("entity_type", STRING, "0+"),
                f("entity_name", STRING, "0+").nullable("0+"),
            ]),
        ]),
    ],
};
