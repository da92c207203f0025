//! ListOffsets (api key 2), v0-9: offsets by timestamp. v0 returns a list of old-style offsets;
//! v1 one offset and its timestamp; v2 isolation level; v4 leader epochs; v6 flexible.
//!
//! Transcribed from Kafka 3.9's `ListOffsets{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "ListOffsetsRequest",
    api_key: 2,
    kind: Kind::Request,
    valid: Versions::parse("0-9"),
    flexible: Versions::parse("6+"),
    fields: &[
        f("replica_id", INT32, "0+"),
        f("isolation_level", INT8, "2+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("current_leader_epoch", INT32, "4+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("timestamp", INT64, "0+"),
                f("max_num_offsets", INT32, "0").default(DefaultValue::Int(1)),
            ]),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "ListOffsetsResponse",
    api_key: 2,
    kind: Kind::Response,
    valid: Versions::parse("0-9"),
    flexible: Versions::parse("6+"),
    fields: &[
        f("throttle_time_ms", INT32, "2+").ignorable(),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
                f("old_style_offsets", INT64S, "0"),
                f("timestamp", INT64, "1+").default(DefaultValue::Int(-1)),
                f("offset", INT64, "1+").default(DefaultValue::Int(-1)),
                f("leader_epoch", INT32, "4+").default(DefaultValue::Int(-1)),
            ]),
        ]),
    ],
};
