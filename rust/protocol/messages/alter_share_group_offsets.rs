//! AlterShareGroupOffsets (api key 91), v0: sets the share-partition start offset of an empty
//! share group (KIP-932) in some partitions. Flexible. New in Kafka 4.1.
//!
//! Transcribed from Kafka 4.2's `AlterShareGroupOffsets{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "AlterShareGroupOffsetsRequest",
    api_key: 91,
    kind: Kind::Request,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("group_id", STRING, "0+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("topic_name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("start_offset", INT64, "0+"),
            ]),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "AlterShareGroupOffsetsResponse",
    api_key: 91,
    kind: Kind::Response,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("error_message", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("responses", STRUCTS, "0+").fields(&[
            f("topic_name", STRING, "0+"),
            f("topic_id", UUID, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
                f("error_message", STRING, "0+")
                    .nullable("0+")
                    .default(DefaultValue::Null),
            ]),
        ]),
    ],
};
