//! ListGroups (api key 16), v0-5: the groups a broker coordinates. v3 flexible; v4 state filter;
//! v5 type filter.
//!
//! Transcribed from Kafka 3.9's `ListGroups{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "ListGroupsRequest",
    api_key: 16,
    kind: Kind::Request,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("states_filter", STRINGS, "4+"),
        f("types_filter", STRINGS, "5+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "ListGroupsResponse",
    api_key: 16,
    kind: Kind::Response,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("error_code", INT16, "0+"),
        f("groups", STRUCTS, "0+").fields(&[
            f("group_id", STRING, "0+"),
            f("protocol_type", STRING, "0+"),
            f("group_state", STRING, "4+").ignorable(),
            f("group_type", STRING, "5+").ignorable(),
        ]),
    ],
};
