//! CreateAcls (api key 30), v0-3: add ACL bindings, one result per binding in request order.
//! v1 adds the pattern type (v0 means LITERAL), v2 is flexible, v3 admits the USER resource
//! type. Kafka 4.0 removed v0 (KIP-896); kgroup still serves it.
//!
//! Transcribed from Kafka 3.9's `CreateAcls{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "CreateAclsRequest",
    api_key: 30,
    kind: Kind::Request,
    valid: Versions::parse("0-3"),
    flexible: Versions::parse("2+"),
    fields: &[f("creations", STRUCTS, "0+").fields(&[
        f("resource_type", INT8, "0+"),
        f("resource_name", STRING, "0+"),
        f("resource_pattern_type", INT8, "1+").default(DefaultValue::Int(3)),
        f("principal", STRING, "0+"),
        f("host", STRING, "0+"),
        f("operation", INT8, "0+"),
        f("permission_type", INT8, "0+"),
    ])],
};

pub static RESPONSE: Message = Message {
    name: "CreateAclsResponse",
    api_key: 30,
    kind: Kind::Response,
    valid: Versions::parse("0-3"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("results", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+").nullable("0+"),
        ]),
    ],
};
