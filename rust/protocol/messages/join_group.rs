//! JoinGroup (api key 11), v0-9: a member joins (or rejoins) a group. v1 adds the rebalance
//! timeout; v4 MEMBER_ID_REQUIRED (KIP-394); v5 static membership (group_instance_id); v6
//! flexible; v7 protocol_type in the response; v8 a reason; v9 skip_assignment.
//!
//! Transcribed from Kafka 3.9's `JoinGroup{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "JoinGroupRequest",
    api_key: 11,
    kind: Kind::Request,
    valid: Versions::parse("0-9"),
    flexible: Versions::parse("6+"),
    fields: &[
        f("group_id", STRING, "0+"),
        f("session_timeout_ms", INT32, "0+"),
        f("rebalance_timeout_ms", INT32, "1+")
            .default(DefaultValue::Int(-1))
            .ignorable(),
        f("member_id", STRING, "0+"),
        f("group_instance_id", STRING, "5+")
            .nullable("5+")
            .default(DefaultValue::Null),
        f("protocol_type", STRING, "0+"),
        f("protocols", STRUCTS, "0+")
            .fields(&[f("name", STRING, "0+"), f("metadata", BYTES, "0+")]),
        f("reason", STRING, "8+")
            .nullable("8+")
            .default(DefaultValue::Null)
            .ignorable(),
    ],
};

pub static RESPONSE: Message = Message {
    name: "JoinGroupResponse",
    api_key: 11,
    kind: Kind::Response,
    valid: Versions::parse("0-9"),
    flexible: Versions::parse("6+"),
    fields: &[
        f("throttle_time_ms", INT32, "2+").ignorable(),
        f("error_code", INT16, "0+"),
        f("generation_id", INT32, "0+").default(DefaultValue::Int(-1)),
        f("protocol_type", STRING, "7+")
            .nullable("7+")
            .default(DefaultValue::Null)
            .ignorable(),
        f("protocol_name", STRING, "0+").nullable("7+"),
        f("leader", STRING, "0+"),
        f("skip_assignment", BOOL, "9+"),
        f("member_id", STRING, "0+"),
        f("members", STRUCTS, "0+").fields(&[
            f("member_id", STRING, "0+"),
            f("group_instance_id", STRING, "5+")
                .nullable("5+")
                .default(DefaultValue::Null)
                .ignorable(),
            f("metadata", BYTES, "0+"),
        ]),
    ],
};
