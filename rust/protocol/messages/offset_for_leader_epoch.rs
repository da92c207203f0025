//! OffsetForLeaderEpoch (api key 23), v0-4: the end offset of a leader epoch, with which
//! consumers detect log truncation after a leader change (KIP-320). v1 returns the leader epoch;
//! v2 the current leader epoch for fencing and the throttle time; v3 the replica id (-2, a
//! consumer that may read past the high watermark, by default); v4 flexible.
//!
//! Transcribed from Kafka 3.9's `OffsetForLeaderEpoch{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "OffsetForLeaderEpochRequest",
    api_key: 23,
    kind: Kind::Request,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("replica_id", INT32, "3+")
            .default(DefaultValue::Int(-2))
            .ignorable(),
        f("topics", STRUCTS, "0+").fields(&[
            f("topic", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition", INT32, "0+"),
                f("current_leader_epoch", INT32, "2+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("leader_epoch", INT32, "0+"),
            ]),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "OffsetForLeaderEpochResponse",
    api_key: 23,
    kind: Kind::Response,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("throttle_time_ms", INT32, "2+").ignorable(),
        f("topics", STRUCTS, "0+").fields(&[
            f("topic", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("error_code", INT16, "0+"),
                f("partition", INT32, "0+"),
                f("leader_epoch", INT32, "1+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("end_offset", INT64, "0+").default(DefaultValue::Int(-1)),
            ]),
        ]),
    ],
};
