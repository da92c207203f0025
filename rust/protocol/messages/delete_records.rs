//! DeleteRecords (api key 21), v0-2: move partitions' log start offsets forward, deleting the
//! records before them. v1 only changes throttling (the response comes before the throttle); v2
//! flexible.
//!
//! Transcribed from Kafka 3.9's `DeleteRecords{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DeleteRecordsRequest",
    api_key: 21,
    kind: Kind::Request,
    valid: Versions::parse("0-2"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+")
                .fields(&[f("partition_index", INT32, "0+"), f("offset", INT64, "0+")]),
        ]),
        f("timeout_ms", INT32, "0+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "DeleteRecordsResponse",
    api_key: 21,
    kind: Kind::Response,
    valid: Versions::parse("0-2"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("low_watermark", INT64, "0+"),
                f("error_code", INT16, "0+"),
            ]),
        ]),
    ],
};
