//! DescribeLogDirs (api key 35), v0-4: the broker's log directories, the size of each
//! partition in them, and each directory's error. v1 only changes throttling; v2 is flexible;
//! v3 adds a top-level error code; v4 each directory's total and usable bytes.
//!
//! Transcribed from Kafka 3.9's `DescribeLogDirs{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DescribeLogDirsRequest",
    api_key: 35,
    kind: Kind::Request,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("2+"),
    fields: &[f("topics", STRUCTS, "0+")
        .nullable("0+")
        .fields(&[f("topic", STRING, "0+"), f("partitions", INT32S, "0+")])],
};

pub static RESPONSE: Message = Message {
    name: "DescribeLogDirsResponse",
    api_key: 35,
    kind: Kind::Response,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "3+").ignorable(),
        f("results", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("log_dir", STRING, "0+"),
            f("topics", STRUCTS, "0+").fields(&[
                f("name", STRING, "0+"),
                f("partitions", STRUCTS, "0+").fields(&[
                    f("partition_index", INT32, "0+"),
                    f("partition_size", INT64, "0+"),
                    f("offset_lag", INT64, "0+"),
                    f("is_future_key", BOOL, "0+"),
                ]),
            ]),
            f("total_bytes", INT64, "4+")
                .default(DefaultValue::Int(-1))
                .ignorable(),
            f("usable_bytes", INT64, "4+")
                .default(DefaultValue::Int(-1))
                .ignorable(),
        ]),
    ],
};
