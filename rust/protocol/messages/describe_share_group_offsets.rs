//! DescribeShareGroupOffsets (api key 90), v0-1: the share-partition start offset (and leader
//! epoch) of share groups (KIP-932) in some or all of the partitions they consume. v1 adds each
//! partition's lag (KIP-1226). Flexible. New in Kafka 4.1.
//!
//! Transcribed from Kafka 4.2's `DescribeShareGroupOffsets{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DescribeShareGroupOffsetsRequest",
    api_key: 90,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[f("groups", STRUCTS, "0+").fields(&[
        f("group_id", STRING, "0+"),
        // null: every topic-partition of the group.
        f("topics", STRUCTS, "0+")
            .nullable("0+")
            .fields(&[f("topic_name", STRING, "0+"), f("partitions", INT32S, "0+")]),
    ])],
};

pub static RESPONSE: Message = Message {
    name: "DescribeShareGroupOffsetsResponse",
    api_key: 90,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("groups", STRUCTS, "0+").fields(&[
            f("group_id", STRING, "0+"),
            f("topics", STRUCTS, "0+").fields(&[
                f("topic_name", STRING, "0+"),
                f("topic_id", UUID, "0+"),
                f("partitions", STRUCTS, "0+").fields(&[
                    f("partition_index", INT32, "0+"),
                    f("start_offset", INT64, "0+"),
                    f("leader_epoch", INT32, "0+"),
                    f("lag", INT64, "1+")
                        .default(DefaultValue::Int(-1))
                        .ignorable(),
                    f("error_code", INT16, "0+"),
                    f("error_message", STRING, "0+")
                        .nullable("0+")
                        .default(DefaultValue::Null),
                ]),
            ]),
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+")
                .nullable("0+")
                .default(DefaultValue::Null),
        ]),
    ],
};
