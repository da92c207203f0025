//! Metadata (api key 3), v0-12: brokers, topics and partitions. v1 adds racks, the controller and
//! internal topics, and null topics for "all"; v2 the cluster id; v4 auto-creation; v5 offline
//! replicas; v7 leader epochs; v8 authorized operations; v9 flexible; v10 topic ids; v12 topic
//! names may be null (topics asked for by id).
//!
//! Transcribed from Kafka 3.9's `Metadata{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "MetadataRequest",
    api_key: 3,
    kind: Kind::Request,
    valid: Versions::parse("0-12"),
    flexible: Versions::parse("9+"),
    fields: &[
        f("topics", STRUCTS, "0+").nullable("1+").fields(&[
            f("topic_id", UUID, "10+").ignorable(),
            f("name", STRING, "0+").nullable("10+"),
        ]),
        f("allow_auto_topic_creation", BOOL, "4+").default(DefaultValue::Bool(true)),
        f("include_cluster_authorized_operations", BOOL, "8-10"),
        f("include_topic_authorized_operations", BOOL, "8+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "MetadataResponse",
    api_key: 3,
    kind: Kind::Response,
    valid: Versions::parse("0-12"),
    flexible: Versions::parse("9+"),
    fields: &[
        f("throttle_time_ms", INT32, "3+").ignorable(),
        f("brokers", STRUCTS, "0+").fields(&[
            f("node_id", INT32, "0+"),
            f("host", STRING, "0+"),
            f("port", INT32, "0+"),
            f("rack", STRING, "1+")
                .nullable("1+")
                .default(DefaultValue::Null)
                .ignorable(),
        ]),
        f("cluster_id", STRING, "2+")
            .nullable("2+")
            .default(DefaultValue::Null)
            .ignorable(),
        f("controller_id", INT32, "1+")
            .default(DefaultValue::Int(-1))
            .ignorable(),
        f("topics", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("name", STRING, "0+").nullable("12+"),
            f("topic_id", UUID, "10+").ignorable(),
            f("is_internal", BOOL, "1+").ignorable(),
            f("partitions", STRUCTS, "0+").fields(&[
                f("error_code", INT16, "0+"),
                f("partition_index", INT32, "0+"),
                f("leader_id", INT32, "0+"),
                f("leader_epoch", INT32, "7+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("replica_nodes", INT32S, "0+"),
                f("isr_nodes", INT32S, "0+"),
                f("offline_replicas", INT32S, "5+").ignorable(),
            ]),
            f("topic_authorized_operations", INT32, "8+").default(DefaultValue::Int(-2147483648)),
        ]),
        f("cluster_authorized_operations", INT32, "8-10").default(DefaultValue::Int(-2147483648)),
    ],
};
