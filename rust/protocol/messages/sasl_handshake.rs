//! SaslHandshake (api key 17).

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
