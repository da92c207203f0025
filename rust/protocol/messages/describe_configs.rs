//! DescribeConfigs (api key 32), v0-4: configuration of brokers and topics. v1 adds synonyms
//! and config sources; v3 types and documentation; v4 flexible.
//!
//! Transcribed from Kafka 3.9's `DescribeConfigs{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DescribeConfigsRequest",
    api_key: 32,
    kind: Kind::Request,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("resources", STRUCTS, "0+").fields(&[
            f("resource_type", INT8, "0+"),
            f("resource_name", STRING, "0+"),
            f("configuration_keys", STRINGS, "0+").nullable("0+"),
        ]),
        f("include_synonyms", BOOL, "1+"),
        f("include_documentation", BOOL, "3+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "DescribeConfigsResponse",
    api_key: 32,
    kind: Kind::Response,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("results", STRUCTS, "0+").fields(&[
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+").nullable("0+"),
            f("resource_type", INT8, "0+"),
            f("resource_name", STRING, "0+"),
            f("configs", STRUCTS, "0+").fields(&[
                f("name", STRING, "0+"),
                f("value", STRING, "0+").nullable("0+"),
                f("read_only", BOOL, "0+"),
                f("is_default", BOOL, "0"),
                f("config_source", INT8, "1+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("is_sensitive", BOOL, "0+"),
                f("synonyms", STRUCTS, "1+").ignorable().fields(&[
                    f("name", STRING, "1+"),
                    f("value", STRING, "1+").nullable("0+"),
                    f("source", INT8, "1+"),
                ]),
                f("config_type", INT8, "3+").ignorable(),
                f("documentation", STRING, "3+").nullable("0+").ignorable(),
            ]),
        ]),
    ],
};
