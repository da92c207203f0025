//! Heartbeat (api key 12), v0-4: a member keeps its session alive. v1 adds throttle_time_ms; v3
//! group_instance_id; v4 flexible.
//!
//! Transcribed from Kafka 3.9's `Heartbeat{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "HeartbeatRequest",
    api_key: 12,
    kind: Kind::Request,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("group_id", STRING, "0+"),
        f("generation_id", INT32, "0+"),
        f("member_id", STRING, "0+"),
        f("group_instance_id", STRING, "3+")
            .nullable("3+")
            .default(DefaultValue::Null),
    ],
};

pub static RESPONSE: Message = Message {
    name: "HeartbeatResponse",
    api_key: 12,
    kind: Kind::Response,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("error_code", INT16, "0+"),
    ],
};
