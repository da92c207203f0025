//! DescribeGroups (api key 15), v0-6: state and members of groups. v3 adds authorized
//! operations; v4 group_instance_id; v5 flexible; v6 (KIP-1043) an error message, and an unknown
//! group is GROUP_ID_NOT_FOUND instead of Dead.
//!
//! Transcribed from Kafka 3.9's `DescribeGroups{Request,Response}.json`; v6 from Kafka 4.4's
//! (`DescribeGroupsResponseData`: error_message right after error_code, nullable).

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DescribeGroupsRequest",
    api_key: 15,
    kind: Kind::Request,
    valid: Versions::parse("0-6"),
    flexible: Versions::parse("5+"),
    fields: &[
        f("groups", STRINGS, "0+"),
        f("include_authorized_operations", BOOL, "3+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "DescribeGroupsResponse",
    api_key: 15,
    kind: Kind::Response,
    valid: Versions::parse("0-6"),
    flexible: Versions::parse("5+"),
    fields: &[
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("groups", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "6+")
                .nullable("6+")
                .default(DefaultValue::Null),
            f("group_id", STRING, "0+"),
            f("group_state", STRING, "0+"),
            f("protocol_type", STRING, "0+"),
            f("protocol_data", STRING, "0+"),
            f("members", STRUCTS, "0+").fields(&[
                f("member_id", STRING, "0+"),
                f("group_instance_id", STRING, "4+")
                    .nullable("4+")
                    .default(DefaultValue::Null)
                    .ignorable(),
                f("client_id", STRING, "0+"),
                f("client_host", STRING, "0+"),
                f("member_metadata", BYTES, "0+"),
                f("member_assignment", BYTES, "0+"),
            ]),
            f("authorized_operations", INT32, "3+").default(DefaultValue::Int(-2147483648)),
        ]),
    ],
};
