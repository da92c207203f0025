//! ApiVersions (api key 18), v0-4: what a broker speaks. v1 adds throttle_time_ms; v3 (flexible) adds the
//! client's software name and version and the feature lists (tagged); v4 only changes how
//! feature versions are read. The response header is always v0.
//!
//! Transcribed from Kafka 3.9's `ApiVersions{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "ApiVersionsRequest",
    api_key: 18,
    kind: Kind::Request,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("client_software_name", STRING, "3+").ignorable(),
        f("client_software_version", STRING, "3+").ignorable(),
    ],
};

pub static RESPONSE: Message = Message {
    name: "ApiVersionsResponse",
    api_key: 18,
    kind: Kind::Response,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("error_code", INT16, "0+"),
        f("api_keys", STRUCTS, "0+").fields(&[
            f("api_key", INT16, "0+"),
            f("min_version", INT16, "0+"),
            f("max_version", INT16, "0+"),
        ]),
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("supported_features", STRUCTS, "3+")
            .tagged(0, "3+")
            .ignorable()
            .fields(&[
                f("name", STRING, "3+"),
                f("min_version", INT16, "3+"),
                f("max_version", INT16, "3+"),
            ]),
        f("finalized_features_epoch", INT64, "3+")
            .tagged(1, "3+")
            .default(DefaultValue::Int(-1))
            .ignorable(),
        f("finalized_features", STRUCTS, "3+")
            .tagged(2, "3+")
            .ignorable()
            .fields(&[
                f("name", STRING, "3+"),
                f("max_version_level", INT16, "3+"),
                f("min_version_level", INT16, "3+"),
            ]),
        f("zk_migration_ready", BOOL, "3+")
            .tagged(3, "3+")
            .ignorable(),
    ],
};
