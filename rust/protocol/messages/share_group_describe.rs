//! ShareGroupDescribe (api key 77), v1: share groups (KIP-932) with their epochs, assignor and
//! members, each with its subscription and current assignment. v0 was Kafka 4.0's early access
//! and is gone since 4.1, so v1 is the only version. Flexible.
//!
//! Transcribed from Kafka 4.2's `ShareGroupDescribe{Request,Response}.json`.

use crate::protocol::schema::*;

/// ASSIGNMENT is Kafka's `Assignment` common struct of this api: topics by id and by name.
static ASSIGNMENT: [Field; 1] = [f("topic_partitions", STRUCTS, "0+").fields(&[
    f("topic_id", UUID, "0+"),
    f("topic_name", STRING, "0+"),
    f("partitions", INT32S, "0+"),
])];

pub static REQUEST: Message = Message {
    name: "ShareGroupDescribeRequest",
    api_key: 77,
    kind: Kind::Request,
    valid: Versions::parse("1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("group_ids", STRINGS, "0+"),
        f("include_authorized_operations", BOOL, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "ShareGroupDescribeResponse",
    api_key: 77,
    kind: Kind::Response,
    valid: Versions::parse("1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("groups", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+")
                .nullable("0+")
                .default(DefaultValue::Null),
            f("group_id", STRING, "0+"),
            f("group_state", STRING, "0+"),
            f("group_epoch", INT32, "0+"),
            f("assignment_epoch", INT32, "0+"),
            f("assignor_name", STRING, "0+"),
            f("members", STRUCTS, "0+").fields(&[
                f("member_id", STRING, "0+"),
                f("rack_id", STRING, "0+")
                    .nullable("0+")
                    .default(DefaultValue::Null),
                f("member_epoch", INT32, "0+"),
                f("client_id", STRING, "0+"),
                f("client_host", STRING, "0+"),
                f("subscribed_topic_names", STRINGS, "0+"),
                f("assignment", STRUCT, "0+").fields(&ASSIGNMENT),
            ]),
            f("authorized_operations", INT32, "0+").default(DefaultValue::Int(-2147483648)),
        ]),
    ],
};
