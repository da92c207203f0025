//! DeleteGroups (api key 42), v0-2: delete empty groups. v2 flexible.
//!
//! Transcribed from Kafka 3.9's `DeleteGroups{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DeleteGroupsRequest",
    api_key: 42,
    kind: Kind::Request,
    valid: Versions::parse("0-2"),
    flexible: Versions::parse("2+"),
    fields: &[f("groups_names", STRINGS, "0+")],
};

pub static RESPONSE: Message = Message {
    name: "DeleteGroupsResponse",
    api_key: 42,
    kind: Kind::Response,
    valid: Versions::parse("0-2"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("results", STRUCTS, "0+")
            .fields(&[f("group_id", STRING, "0+"), f("error_code", INT16, "0+")]),
    ],
};
