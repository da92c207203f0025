//! DescribeUserScramCredentials (api key 50), v0: the SCRAM credentials of some users or of all
//! (KIP-554): for each user its mechanisms and iterations, never a secret. Flexible from v0.
//!
//! Transcribed from Kafka 4.1's `DescribeUserScramCredentials{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "DescribeUserScramCredentialsRequest",
    api_key: 50,
    kind: Kind::Request,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[f("users", STRUCTS, "0+")
        .nullable("0+")
        .fields(&[f("name", STRING, "0+")])],
};

pub static RESPONSE: Message = Message {
    name: "DescribeUserScramCredentialsResponse",
    api_key: 50,
    kind: Kind::Response,
    valid: Versions::parse("0"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("error_message", STRING, "0+").nullable("0+"),
        f("results", STRUCTS, "0+").fields(&[
            f("user", STRING, "0+"),
            f("error_code", INT16, "0+"),
            f("error_message", STRING, "0+").nullable("0+"),
            f("credential_infos", STRUCTS, "0+")
                .fields(&[f("mechanism", INT8, "0+"), f("iterations", INT32, "0+")]),
        ]),
    ],
};
