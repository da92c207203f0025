//! DescribeCluster (api key 60), v0-1: the cluster id, the controller and the brokers, as the
//! admin client asks for them (KIP-700); flexible from v0. v1 adds the endpoint type, brokers or
//! controllers (KIP-919).
//!
//! Transcribed from Kafka 3.9's `DescribeCluster{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DescribeClusterRequest",
    api_key: 60,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("include_cluster_authorized_operations", BOOL, "0+"),
        f("endpoint_type", INT8, "1+").default(DefaultValue::Int(1)),
    ],
};

pub static RESPONSE: Message = Message {
    name: "DescribeClusterResponse",
    api_key: 60,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("error_message", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("endpoint_type", INT8, "1+").default(DefaultValue::Int(1)),
        f("cluster_id", STRING, "0+"),
        f("controller_id", INT32, "0+").default(DefaultValue::Int(-1)),
        f("brokers", STRUCTS, "0+").fields(&[
            f("broker_id", INT32, "0+"),
            f("host", STRING, "0+"),
            f("port", INT32, "0+"),
            f("rack", STRING, "0+")
                .nullable("0+")
                .default(DefaultValue::Null),
        ]),
        f("cluster_authorized_operations", INT32, "0+").default(DefaultValue::Int(-2147483648)),
    ],
};
