//! SaslAuthenticate (api key 36), v0-2: one SASL token exchange. v1 adds the session lifetime;
//! v2 flexible.
//!
//! Transcribed from Kafka 3.9's `SaslAuthenticate{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "SaslAuthenticateRequest",
    api_key: 36,
    kind: Kind::Request,
    valid: Versions::parse("0-2"),
    flexible: Versions::parse("2+"),
    fields: &[f("auth_bytes", BYTES, "0+")],
};

pub static RESPONSE: Message = Message {
    name: "SaslAuthenticateResponse",
    api_key: 36,
    kind: Kind::Response,
    valid: Versions::parse("0-2"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("error_code", INT16, "0+"),
        f("error_message", STRING, "0+").nullable("0+"),
        f("auth_bytes", BYTES, "0+"),
        f("session_lifetime_ms", INT64, "1+").ignorable(),
    ],
};
