//! OffsetFetch (api key 9), v0-9: a group's committed offsets. v2 null topics fetch all and a
//! top-level error; v5 leader epochs; v6 flexible; v7 require_stable; v8 several groups at once;
//! v9 member id and epoch.
//!
//! Transcribed from Kafka 3.9's `OffsetFetch{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "OffsetFetchRequest",
    api_key: 9,
    kind: Kind::Request,
    valid: Versions::parse("0-9"),
    flexible: Versions::parse("6+"),
    fields: &[
        f("group_id", STRING, "0-7"),
        f("topics", STRUCTS, "0-7").nullable("2-7").fields(&[
            f("name", STRING, "0-7"),
            f("partition_indexes", INT32S, "0-7"),
        ]),
        f("groups", STRUCTS, "8+").fields(&[
            f("group_id", STRING, "8+"),
            f("member_id", STRING, "9+")
                .nullable("9+")
                .default(DefaultValue::Null)
                .ignorable(),
            f("member_epoch", INT32, "9+")
                .default(DefaultValue::Int(-1))
                .ignorable(),
            f("topics", STRUCTS, "8+").nullable("8+").fields(&[
                f("name", STRING, "8+"),
                f("partition_indexes", INT32S, "8+"),
            ]),
        ]),
        f("require_stable", BOOL, "7+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "OffsetFetchResponse",
    api_key: 9,
    kind: Kind::Response,
    valid: Versions::parse("0-9"),
    flexible: Versions::parse("6+"),
    fields: &[
        f("throttle_time_ms", INT32, "3+").ignorable(),
        f("topics", STRUCTS, "0-7").fields(&[
            f("name", STRING, "0-7"),
            f("partitions", STRUCTS, "0-7").fields(&[
                f("partition_index", INT32, "0-7"),
                f("committed_offset", INT64, "0-7"),
                f("committed_leader_epoch", INT32, "5-7")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("metadata", STRING, "0-7").nullable("0-7"),
                f("error_code", INT16, "0-7"),
            ]),
        ]),
        f("error_code", INT16, "2-7").ignorable(),
        f("groups", STRUCTS, "8+").fields(&[
            f("group_id", STRING, "8+"),
            f("topics", STRUCTS, "8+").fields(&[
                f("name", STRING, "8+"),
                f("partitions", STRUCTS, "8+").fields(&[
                    f("partition_index", INT32, "8+"),
                    f("committed_offset", INT64, "8+"),
                    f("committed_leader_epoch", INT32, "8+")
                        .default(DefaultValue::Int(-1))
                        .ignorable(),
                    f("metadata", STRING, "8+").nullable("8+"),
                    f("error_code", INT16, "8+"),
                ]),
            ]),
            f("error_code", INT16, "8+"),
        ]),
    ],
};
