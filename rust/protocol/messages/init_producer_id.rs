//! InitProducerId (api key 22), v0-5: a producer id and epoch for idempotence and
//! transactions. v2 flexible; v3 bumping an existing producer id and epoch.
//!
//! Transcribed from Kafka 3.9's `InitProducerId{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "InitProducerIdRequest",
    api_key: 22,
    kind: Kind::Request,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("transactional_id", STRING, "0+").nullable("0+"),
        f("transaction_timeout_ms", INT32, "0+"),
        f("producer_id", INT64, "3+").default(DefaultValue::Int(-1)),
        f("producer_epoch", INT16, "3+").default(DefaultValue::Int(-1)),
    ],
};

pub static RESPONSE: Message = Message {
    name: "InitProducerIdResponse",
    api_key: 22,
    kind: Kind::Response,
    valid: Versions::parse("0-5"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+").ignorable(),
        f("error_code", INT16, "0+"),
        f("producer_id", INT64, "0+").default(DefaultValue::Int(-1)),
        f("producer_epoch", INT16, "0+"),
    ],
};
