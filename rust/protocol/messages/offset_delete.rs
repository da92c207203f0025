//! OffsetDelete (api key 47), v0: delete a group's committed offsets for some partitions.
//!
//! Transcribed from Kafka 3.9's `OffsetDelete{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "OffsetDeleteRequest",
    api_key: 47,
    kind: Kind::Request,
    valid: Versions::parse("0"),
    flexible: Versions::parse("none"),
    fields: &[
        f("group_id", STRING, "0+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[f("partition_index", INT32, "0+")]),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "OffsetDeleteResponse",
    api_key: 47,
    kind: Kind::Response,
    valid: Versions::parse("0"),
    flexible: Versions::parse("none"),
    fields: &[
        f("error_code", INT16, "0+"),
        f("throttle_time_ms", INT32, "0+").ignorable(),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
            ]),
        ]),
    ],
};
