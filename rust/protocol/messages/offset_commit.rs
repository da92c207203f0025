//! OffsetCommit (api key 8), v0-9: a group commits offsets. v1 adds generation and member (and
//! a per-partition timestamp, v1 only); v2-4 retention time; v6 leader epochs; v7
//! group_instance_id; v8 flexible; v9 member epochs (KIP-848).
//!
//! Transcribed from Kafka 3.9's `OffsetCommit{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "OffsetCommitRequest",
    api_key: 8,
    kind: Kind::Request,
    valid: Versions::parse("0-9"),
    flexible: Versions::parse("8+"),
    fields: &[
        f("group_id", STRING, "0+"),
        f("generation_id_or_member_epoch", INT32, "1+")
            .default(DefaultValue::Int(-1))
            .ignorable(),
        f("member_id", STRING, "1+").ignorable(),
        f("group_instance_id", STRING, "7+")
            .nullable("7+")
            .default(DefaultValue::Null),
        f("retention_time_ms", INT64, "2-4")
            .default(DefaultValue::Int(-1))
            .ignorable(),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("committed_offset", INT64, "0+"),
                f("committed_leader_epoch", INT32, "6+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("commit_timestamp", INT64, "1").default(DefaultValue::Int(-1)),
                f("committed_metadata", STRING, "0+").nullable("0+"),
            ]),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "OffsetCommitResponse",
    api_key: 8,
    kind: Kind::Response,
    valid: Versions::parse("0-9"),
    flexible: Versions::parse("8+"),
    fields: &[
        f("throttle_time_ms", INT32, "3+").ignorable(),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
            ]),
        ]),
    ],
};
