//! ListConfigResources (api key 74), v0-1: the config resources the broker knows. v0 is Kafka's
//! ListClientMetricsResources (client metrics resources only); v1 (KIP-1142) asks for any of
//! topics, brokers, broker loggers, client metrics and groups, and names each one's type.
//! Flexible from v0.
//!
//! Transcribed from Kafka 4.1's `ListConfigResources{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "ListConfigResourcesRequest",
    api_key: 74,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[f("resource_types", INT8S, "1+")],
};

pub static RESPONSE: Message = Message {
    name: "ListConfigResourcesResponse",
    api_key: 74,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("config_resources", STRUCTS, "0+").fields(&[
            f("resource_name", STRING, "0+"),
            f("resource_type", INT8, "1+")
                .ignorable()
                .default(DefaultValue::Int(16)),
        ]),
    ],
};
