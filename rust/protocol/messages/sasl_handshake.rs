//! SaslHandshake (api key 17), v0-1: pick a SASL mechanism. After v0 the SASL tokens travel
//! unframed; after v1 in SaslAuthenticate requests.
//!
//! Transcribed from Kafka 3.9's `SaslHandshake{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "SaslHandshakeRequest",
    api_key: 17,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("none"),
    fields: &[f("mechanism", STRING, "0+")],
};

pub static RESPONSE: Message = Message {
    name: "SaslHandshakeResponse",
    api_key: 17,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("none"),
    fields: &[f("error_code", INT16, "0+"), f("mechanisms", STRINGS, "0+")],
};
