//! AlterUserScramCredentials (api key 51), v0: delete and insert or update users' SCRAM
//! credentials (KIP-554). An upsertion carries the salt and the salted password, never the
//! password. Flexible from v0.
//!
//! Transcribed from Kafka 4.1's `AlterUserScramCredentials{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "AlterUserScramCredentialsRequest",
    api_key: 51,
    kind: Kind::Request,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("deletions", STRUCTS, "0+")
            .fields(&[f("name", STRING, "0+"), f("mechanism", INT8, "0+")]),
        f("upsertions", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("mechanism", INT8, "0+"),
            f("iterations", INT32, "0+"),
            f("salt", BYTES, "0+"),
            f("salted_password", BYTES, "0+"),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "AlterUserScramCredentialsResponse",
    api_key: 51,
    kind: Kind::Response,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("results", STRUCTS, "0+").fields(&[
            f("user", STRING, "0+"),
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+").nullable("0+"),
        ]),
    ],
};
