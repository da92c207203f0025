//! DescribeClientQuotas (api key 48), v0-1: the client quotas set for the entities a filter
//! matches (users, client ids, IP addresses, and their defaults). v1 is flexible.
//!
//! Transcribed from Kafka 4.1's `DescribeClientQuotas{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DescribeClientQuotasRequest",
    api_key: 48,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[
        f("components", STRUCTS, "0+").fields(&[
            f("entity_type", STRING, "0+"),
            f("match_type", INT8, "0+"),
            f("match", STRING, "0+").nullable("0+"),
        ]),
        f("strict", BOOL, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "DescribeClientQuotasResponse",
    api_key: 48,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("error_message", STRING, "0+").nullable("0+"),
        f("entries", STRUCTS, "0+").nullable("0+").fields(&[
            f("entity", STRUCTS, "0+").fields(&[
                f("entity_type", STRING, "0+"),
                f("entity_name", STRING, "0+").nullable("0+"),
            ]),
            f("values", STRUCTS, "0+")
                .fields(&[f("key", STRING, "0+"), f("value", FLOAT64, "0+")]),
        ]),
    ],
};
