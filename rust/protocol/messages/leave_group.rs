//! LeaveGroup (api key 13), v0-5: members leave a group. v3 turns it into a batch of members;
//! v4 flexible; v5 a reason per member.
//!
//! Transcribed from Kafka 3.9's `LeaveGroup{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "LeaveGroupRequest",
    api_key: 13,
    kind: Kind::Request,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("group_id", STRING, "0+"),
        f("member_id", STRING, "0-2"),
        f("members", STRUCTS, "3+").fields(&[
            f("member_id", STRING, "3+"),
            f("group_instance_id", STRING, "3+")
                .nullable("3+")
                .default(DefaultValue::Null),
            f("reason", STRING, "5+")
                .nullable("5+")
                .default(DefaultValue::Null)
                .ignorable(),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "LeaveGroupResponse",
    api_key: 13,
    kind: Kind::Response,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("error_code", INT16, "0+"),
        f("members", STRUCTS, "3+").fields(&[
            f("member_id", STRING, "3+"),
            f("group_instance_id", STRING, "3+").nullable("3+"),
            f("error_code", INT16, "3+"),
        ]),
    ],
};
