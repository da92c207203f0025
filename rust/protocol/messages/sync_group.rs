//! SyncGroup (api key 14), v0-5: the leader hands out assignments, every member gets its own.
//! v3 adds group_instance_id; v4 flexible; v5 protocol type and name.
//!
//! Transcribed from Kafka 3.9's `SyncGroup{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "SyncGroupRequest",
    api_key: 14,
    kind: Kind::Request,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("group_id", STRING, "0+"),
        f("generation_id", INT32, "0+"),
        f("member_id", STRING, "0+"),
        f("group_instance_id", STRING, "3+")
            .nullable("3+")
            .default(DefaultValue::Null),
        f("protocol_type", STRING, "5+")
            .nullable("5+")
            .default(DefaultValue::Null)
            .ignorable(),
        f("protocol_name", STRING, "5+")
            .nullable("5+")
            .default(DefaultValue::Null)
            .ignorable(),
        f("assignments", STRUCTS, "0+")
            .fields(&[f("member_id", STRING, "0+"), f("assignment", BYTES, "0+")]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "SyncGroupResponse",
    api_key: 14,
    kind: Kind::Response,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("error_code", INT16, "0+"),
        f("protocol_type", STRING, "5+")
            .nullable("5+")
            .default(DefaultValue::Null)
            .ignorable(),
        f("protocol_name", STRING, "5+")
            .nullable("5+")
            .default(DefaultValue::Null)
            .ignorable(),
        f("assignment", BYTES, "0+"),
    ],
};
