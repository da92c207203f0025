//! DeleteAcls (api key 31), v0-3: remove the ACL bindings matching each filter, answering with
//! the bindings each filter removed. v1 adds the pattern type (v0 means LITERAL), v2 is
//! flexible, v3 admits the USER resource type. Kafka 4.0 removed v0 (KIP-896); kgroup still
//! serves it.
//!
//! Transcribed from Kafka 3.9's `DeleteAcls{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DeleteAclsRequest",
    api_key: 31,
    kind: Kind::Request,
    valid: Versions::parse("0-3"),
    flexible: Versions::parse("2+"),
    fields: &[f("filters", STRUCTS, "0+").fields(&[
        f("resource_type_filter", INT8, "0+"),
        f("resource_name_filter", STRING, "0+").nullable("0+"),
        f("pattern_type_filter", INT8, "1+").default(DefaultValue::Int(3)),
        f("principal_filter", STRING, "0+").nullable("0+"),
        f("host_filter", STRING, "0+").nullable("0+"),
        f("operation", INT8, "0+"),
        f("permission_type", INT8, "0+"),
    ])],
};

pub static RESPONSE: Message = Message {
    name: "DeleteAclsResponse",
    api_key: 31,
    kind: Kind::Response,
    valid: Versions::parse("0-3"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("filter_results", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+").nullable("0+"),
            f("matching_acls", STRUCTS, "0+").fields(&[
                f("error_code", INT16, "0+"),
                f("error_message", STRING, "0+").nullable("0+"),
                f("resource_type", INT8, "0+"),
                f("resource_name", STRING, "0+"),
                f("pattern_type", INT8, "1+").default(DefaultValue::Int(3)),
                f("principal", STRING, "0+"),
                f("host", STRING, "0+"),
                f("operation", INT8, "0+"),
                f("permission_type", INT8, "0+"),
            ]),
        ]),
    ],
};
