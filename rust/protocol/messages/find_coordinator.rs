//! FindCoordinator (api key 10), v0-6: the broker that coordinates a group or transactional
//! id. v1 adds the key type; v3 flexible; v4 batches keys (coordinator_keys, coordinators).
//!
//! Transcribed from Kafka 3.9's `FindCoordinator{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "FindCoordinatorRequest",
    api_key: 10,
    kind: Kind::Request,
    valid: Versions::parse("0-6"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("key", STRING, "0-3"),
        f("key_type", INT8, "1+"),
        f("coordinator_keys", STRINGS, "4+"),
    ],
};

pub static RESPONSE: Message = Message {
    name: "FindCoordinatorResponse",
    api_key: 10,
    kind: Kind::Response,
    valid: Versions::parse("0-6"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("throttle_time_ms", INT32, "1+").ignorable(),
        f("error_code", INT16, "0-3"),
        f("error_message", STRING, "1-3")
            .nullable("1-3")
            .ignorable(),
        f("node_id", INT32, "0-3"),
        f("host", STRING, "0-3"),
        f("port", INT32, "0-3"),
        f("coordinators", STRUCTS, "4+").fields(&[
            f("key", STRING, "4+"),
            f("node_id", INT32, "4+"),
            f("host", STRING, "4+"),
            f("port", INT32, "4+"),
            f("error_code", INT16, "4+"),
            f("error_message", STRING, "4+").nullable("4+").ignorable(),
        ]),
    ],
};
