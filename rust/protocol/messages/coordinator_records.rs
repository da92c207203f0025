//! The record schemas of the coordinators' internal topics, declared as the protocol messages
//! are: `__consumer_offsets`'s offset commit and group metadata records, from Kafka's
//! `group-coordinator/src/main/resources/common/message/{OffsetCommitKey,OffsetCommitValue,
//! GroupMetadataKey,GroupMetadataValue}.json`.
//!
//! Kafka's JSON calls them `"type": "data"`: neither requests nor responses. They are
//! [`Kind::Header`] messages with api key -1 here, like the two headers. A record's key and its
//! value each start with their INT16 version; the key's version is the record type.
//! `rust/group/records.rs` reads and writes them.

use crate::protocol::schema::*;

/// OFFSET_COMMIT_KEY is `OffsetCommitKey.json`: versions 0 and 1 have the same layout; Kafka
/// writes 1.
pub static OFFSET_COMMIT_KEY: Message = Message {
    name: "OffsetCommitKey",
    api_key: -1,
    kind: Kind::Header,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("none"),
    fields: &[
        f("group", STRING, "0-1"),
        f("topic", STRING, "0-1"),
        f("partition", INT32, "0-1"),
    ],
};

/// OFFSET_COMMIT_VALUE is `OffsetCommitValue.json`: v1 alone has an expire timestamp, v3 adds
/// the leader epoch, v4 is the first flexible version.
pub static OFFSET_COMMIT_VALUE: Message = Message {
    name: "OffsetCommitValue",
    api_key: -1,
    kind: Kind::Header,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("offset", INT64, "0+"),
        f("leader_epoch", INT32, "3+")
            .default(DefaultValue::Int(-1))
            .ignorable(),
        f("metadata", STRING, "0+"),
        f("commit_timestamp", INT64, "0+"),
        f("expire_timestamp", INT64, "1")
            .default(DefaultValue::Int(-1))
            .ignorable(),
    ],
};

/// GROUP_METADATA_KEY is `GroupMetadataKey.json`: version 2 only (the record type).
pub static GROUP_METADATA_KEY: Message = Message {
    name: "GroupMetadataKey",
    api_key: -1,
    kind: Kind::Header,
    valid: Versions::parse("2"),
    flexible: Versions::parse("none"),
    fields: &[f("group", STRING, "2")],
};

/// GROUP_METADATA_VALUE is `GroupMetadataValue.json`: v1 adds the rebalance timeout, v2 the
/// current state timestamp, v3 the group instance id, v4 is the first flexible version.
pub static GROUP_METADATA_VALUE: Message = Message {
    name: "GroupMetadataValue",
    api_key: -1,
    kind: Kind::Header,
    valid: Versions::parse("0-4"),
    flexible: Versions::parse("4+"),
    fields: &[
        f("protocol_type", STRING, "0+"),
        f("generation", INT32, "0+"),
        f("protocol", STRING, "0+").nullable("0+"),
        f("leader", STRING, "0+").nullable("0+"),
        f("current_state_timestamp", INT64, "2+")
            .default(DefaultValue::Int(-1))
            .ignorable(),
        f("members", STRUCTS, "0+").fields(&[
            f("member_id", STRING, "0+"),
            f("group_instance_id", STRING, "3+")
                .nullable("3+")
                .default(DefaultValue::Null)
                .ignorable(),
            f("client_id", STRING, "0+"),
            f("client_host", STRING, "0+"),
            f("rebalance_timeout", INT32, "1+")
                .default(DefaultValue::Int(-1))
                .ignorable(),
            f("session_timeout", INT32, "0+"),
            f("subscription", BYTES, "0+"),
            f("assignment", BYTES, "0+"),
        ]),
    ],
};

/// RECORDS lists every record schema declared here.
pub static RECORDS: &[&Message] = &[
    &OFFSET_COMMIT_KEY,
    &OFFSET_COMMIT_VALUE,
    &GROUP_METADATA_KEY,
    &GROUP_METADATA_VALUE,
];
