//! Fetch (api key 1), v0-17: records from partitions. v3 max_bytes; v4 isolation level, last stable
//! offset and aborted transactions; v7 fetch sessions; v11 rack and preferred read replica; v12
//! flexible; v13 topic ids instead of names; v15 replica state (tagged); v16 node endpoints; v17
//! replica directory ids.
//!
//! Transcribed from Kafka 3.9's `Fetch{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "FetchRequest",
    api_key: 1,
    kind: Kind::Request,
    valid: Versions::parse("0-17"),
    flexible: Versions::parse("12+"),
    fields: &[
        f("cluster_id", STRING, "12+")
            .nullable("12+")
            .tagged(0, "12+")
            .default(DefaultValue::Null)
            .ignorable(),
        f("replica_id", INT32, "0-14").default(DefaultValue::Int(-1)),
        f("replica_state", STRUCT, "15+").tagged(1, "15+").fields(&[
            f("replica_id", INT32, "15+").default(DefaultValue::Int(-1)),
            f("replica_epoch", INT64, "15+").default(DefaultValue::Int(-1)),
        ]),
        f("max_wait_ms", INT32, "0+"),
        f("min_bytes", INT32, "0+"),
        f("max_bytes", INT32, "3+")
            .default(DefaultValue::Int(2147483647))
            .ignorable(),
        f("isolation_level", INT8, "4+").ignorable(),
        f("session_id", INT32, "7+").ignorable(),
        f("session_epoch", INT32, "7+")
            .default(DefaultValue::Int(-1))
            .ignorable(),
        f("topics", STRUCTS, "0+").fields(&[
            f("topic", STRING, "0-12").ignorable(),
            f("topic_id", UUID, "13+").ignorable(),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition", INT32, "0+"),
                f("current_leader_epoch", INT32, "9+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("fetch_offset", INT64, "0+"),
                f("last_fetched_epoch", INT32, "12+").default(DefaultValue::Int(-1)),
                f("log_start_offset", INT64, "5+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("partition_max_bytes", INT32, "0+"),
                f("replica_directory_id", UUID, "17+")
                    .tagged(0, "17+")
                    .ignorable(),
            ]),
        ]),
        f("forgotten_topics_data", STRUCTS, "7+").fields(&[
            f("topic", STRING, "7-12").ignorable(),
            f("topic_id", UUID, "13+").ignorable(),
            f("partitions", INT32S, "7+"),
        ]),
        f("rack_id", STRING, "11+").ignorable(),
    ],
};

pub static RESPONSE: Message = Message {
    name: "FetchResponse",
    api_key: 1,
    kind: Kind::Response,
    valid: Versions::parse("0-17"),
    flexible: Versions::parse("12+"),
    fields: &[
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("error_code", INT16, "7+").ignorable(),
        f("session_id", INT32, "7+"),
        f("responses", STRUCTS, "0+").fields(&[
            f("topic", STRING, "0-12").ignorable(),
            f("topic_id", UUID, "13+").ignorable(),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
                f("high_watermark", INT64, "0+"),
                f("last_stable_offset", INT64, "4+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("log_start_offset", INT64, "5+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("diverging_epoch", STRUCT, "12+")
                    .tagged(0, "12+")
                    .fields(&[
                        f("epoch", INT32, "12+").default(DefaultValue::Int(-1)),
                        f("end_offset", INT64, "12+").default(DefaultValue::Int(-1)),
                    ]),
                f("current_leader", STRUCT, "12+")
                    .tagged(1, "12+")
                    .fields(&[
                        f("leader_id", INT32, "12+").default(DefaultValue::Int(-1)),
                        f("leader_epoch", INT32, "12+").default(DefaultValue::Int(-1)),
                    ]),
                f("snapshot_id", STRUCT, "12+").tagged(2, "12+").fields(&[
                    f("end_offset", INT64, "0+").default(DefaultValue::Int(-1)),
                    f("epoch", INT32, "0+").default(DefaultValue::Int(-1)),
                ]),
                f("aborted_transactions", STRUCTS, "4+")
                    .nullable("4+")
                    .ignorable()
                    .fields(&[
                        f("producer_id", INT64, "4+"),
                        f("first_offset", INT64, "4+"),
                    ]),
                f("preferred_read_replica", INT32, "11+").default(DefaultValue::Int(-1)),
                f("records", RECORDS, "0+").nullable("0+"),
            ]),
        ]),
        f("node_endpoints", STRUCTS, "16+")
            .tagged(0, "16+")
            .fields(&[
                f("node_id", INT32, "16+"),
                f("host", STRING, "16+"),
                f("port", INT32, "16+"),
                f("rack", STRING, "16+")
                    .nullable("16+")
                    .default(DefaultValue::Null),
            ]),
    ],
};
