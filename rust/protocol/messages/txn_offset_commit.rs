//! TxnOffsetCommit (api key 28), v0-4: offsets committed inside a transaction, sent to the
//! group's coordinator; they count once the transaction commits. v2 adds the leader epoch, v3
//! the member, generation and instance id (KIP-447) and flexible versions, v4
//! TRANSACTION_ABORTABLE.
//!
//! Transcribed from Kafka 3.9's `TxnOffsetCommit{Request,Response}.json`.

use crate::protocol::schema::*;

pub static REQUEST: Message = Message {
    name: "TxnOffsetCommitRequest",
    api_key: 28,
    kind: Kind::Request,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("transactional_id", STRING, "0+"),
        f("group_id", STRING, "0+"),
        f("producer_id", INT64, "0+"),
        f("producer_epoch", INT16, "0+"),
        f("generation_id", INT32, "3+").default(DefaultValue::Int(-1)),
        f("member_id", STRING, "3+"),
        f("group_instance_id", STRING, "3+")
            .nullable("3+")
            .default(DefaultValue::Null),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("committed_offset", INT64, "0+"),
                f("committed_leader_epoch", INT32, "2+")
                    .default(DefaultValue::Int(-1))
                    .ignorable(),
                f("committed_metadata", STRING, "0+").nullable("0+"),
            ]),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "TxnOffsetCommitResponse",
    api_key: 28,
    kind: Kind::Response,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("3+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("name", STRING, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
            ]),
        ]),
    ],
};
