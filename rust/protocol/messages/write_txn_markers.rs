//! WriteTxnMarkers (api key 27), v0-1: the transaction coordinator asks a partition's leader
//! to write commit or abort markers; an admin client sends it too, to abort a hanging
//! transaction (KIP-664). v1 flexible.
//!
//! Transcribed from Kafka 3.9's `WriteTxnMarkers{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "WriteTxnMarkersRequest",
    api_key: 27,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[f("markers", STRUCTS, "0+").fields(&[
        f("producer_id", INT64, "0+"),
        f("producer_epoch", INT16, "0+"),
        f("transaction_result", BOOL, "0+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partition_indexes", INT32S, "0+"),
        ]),
        f("coordinator_epoch", INT32, "0+"),
    ])],
};

pub static RESPONSE: Message = Message {
    name: "WriteTxnMarkersResponse",
    api_key: 27,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[f("markers", STRUCTS, "0+").fields(&[
        f("producer_id", INT64, "0+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
            ]),
        ]),
    ])],
};
