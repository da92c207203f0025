//! The record schemas of the coordinators' internal topics, declared as the protocol messages
//! are: `__consumer_offsets`'s offset commit and classic group metadata records, from Kafka's
//! `group-coordinator/src/main/resources/common/message/{OffsetCommitKey,OffsetCommitValue,
//! GroupMetadataKey,GroupMetadataValue}.json`, and the consumer groups' (KIP-848, record types
//! 3 to 8 and 16) from its `ConsumerGroup*{Key,Value}.json` of Kafka 4.x, and the share
//! groups' (KIP-932, record types 10 to 15) from its `ShareGroup*{Key,Value}.json` of Kafka
//! 4.2; `__share_group_state`'s (types 0 and 1), from the `share-coordinator` module's
//! `Share{Snapshot,Update}{Key,Value}.json` of Kafka 4.2; and `__transaction_state`'s, from
//! the `transaction-coordinator` module's `TransactionLog{Key,Value}.json` of Kafka 4.1.
//!
//! Kafka's JSON calls them `"type": "data"`: neither requests nor responses. They are
//! [`Kind::Header`] messages with api key -1 here, like the two headers. A record's key and its
//! value each start with their INT16 version; the key's version is the record type.
//! `rust/group/records.rs` and `rust/txn/records.rs` read and write them.

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

/// key declares the key of record type `ty` of a consumer group: the group id, then `more`.
macro_rules! key {
    ($name:literal, $ty:literal, $($field:literal),*) => {
        Message {
            name: $name,
            api_key: -1,
            kind: Kind::Header,
            valid: Versions::parse($ty),
            flexible: Versions::parse("none"),
            fields: &[f("group_id", STRING, $ty), $(f($field, STRING, $ty)),*],
        }
    };
}

/// value declares a version-0 value of a consumer group record: flexible, as all of them are.
const fn value(name: &'static str, fields: &'static [Field]) -> Message {
    Message {
        name,
        api_key: -1,
        kind: Kind::Header,
        valid: Versions::parse("0"),
        flexible: Versions::parse("0+"),
        fields,
    }
}

/// TOPIC_PARTITIONS is a topic by id and some of its partitions, as the target and current
/// assignment records hold them.
static TOPIC_PARTITIONS: [Field; 2] = [f("topic_id", UUID, "0+"), f("partitions", INT32S, "0+")];

/// CURRENT_TOPIC_PARTITIONS is [`TOPIC_PARTITIONS`] as the current assignment record holds it:
/// 4.3 adds the epoch each partition was assigned to the member at (KIP-1251), as long as the
/// partitions, tagged.
static CURRENT_TOPIC_PARTITIONS: [Field; 3] = [
    f("topic_id", UUID, "0+"),
    f("partitions", INT32S, "0+"),
    f("assignment_epochs", INT32S, "0+")
        .nullable("0+")
        .default(DefaultValue::Null)
        .tagged(0, "0+"),
];

/// CONSUMER_GROUP_METADATA_KEY is record type 3: a consumer group's epoch.
pub static CONSUMER_GROUP_METADATA_KEY: Message = key!("ConsumerGroupMetadataKey", "3",);

/// CONSUMER_GROUP_METADATA_VALUE holds the group epoch; 4.1 adds the hash of the subscribed
/// topics' metadata (KIP-1101) as a tagged field.
pub static CONSUMER_GROUP_METADATA_VALUE: Message = value(
    "ConsumerGroupMetadataValue",
    &[
        f("epoch", INT32, "0+"),
        f("metadata_hash", INT64, "0+").tagged(0, "0+"),
    ],
);

/// CONSUMER_GROUP_PARTITION_METADATA_KEY is record type 4, the subscribed topics' metadata,
/// which Kafka 4.0 writes and 4.1 only deletes (the metadata hash replaced it).
pub static CONSUMER_GROUP_PARTITION_METADATA_KEY: Message =
    key!("ConsumerGroupPartitionMetadataKey", "4",);

pub static CONSUMER_GROUP_PARTITION_METADATA_VALUE: Message = value(
    "ConsumerGroupPartitionMetadataValue",
    &[f("topics", STRUCTS, "0+").fields(&[
        f("topic_id", UUID, "0+"),
        f("topic_name", STRING, "0+"),
        f("num_partitions", INT32, "0+"),
        f("partition_metadata", STRUCTS, "0+")
            .fields(&[f("partition", INT32, "0+"), f("racks", STRINGS, "0+")]),
    ])],
);

/// CONSUMER_GROUP_MEMBER_METADATA_KEY is record type 5: a member's subscription.
pub static CONSUMER_GROUP_MEMBER_METADATA_KEY: Message =
    key!("ConsumerGroupMemberMetadataKey", "5", "member_id");

/// CONSUMER_GROUP_MEMBER_METADATA_VALUE is what a member said of itself; a classic-protocol
/// member inside a consumer group also has its session timeout and protocols (a tagged,
/// nullable struct).
pub static CONSUMER_GROUP_MEMBER_METADATA_VALUE: Message = value(
    "ConsumerGroupMemberMetadataValue",
    &[
        f("instance_id", STRING, "0+").nullable("0+"),
        f("rack_id", STRING, "0+").nullable("0+"),
        f("client_id", STRING, "0+"),
        f("client_host", STRING, "0+"),
        f("subscribed_topic_names", STRINGS, "0+"),
        f("subscribed_topic_regex", STRING, "0+").nullable("0+"),
        f("rebalance_timeout_ms", INT32, "0+").default(DefaultValue::Int(-1)),
        f("server_assignor", STRING, "0+").nullable("0+"),
        f("classic_member_metadata", STRUCT, "0+")
            .nullable("0+")
            .default(DefaultValue::Null)
            .tagged(0, "0+")
            .fields(&[
                f("session_timeout_ms", INT32, "0+"),
                f("supported_protocols", STRUCTS, "0+")
                    .fields(&[f("name", STRING, "0+"), f("metadata", BYTES, "0+")]),
            ]),
    ],
);

/// CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY is record type 6: the epoch of the target
/// assignment.
pub static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Message =
    key!("ConsumerGroupTargetAssignmentMetadataKey", "6",);

/// CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: 4.3 adds when the assignment was computed
/// (KIP-1263) as a tagged field.
pub static CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Message = value(
    "ConsumerGroupTargetAssignmentMetadataValue",
    &[
        f("assignment_epoch", INT32, "0+"),
        f("assignment_timestamp", INT64, "0+")
            .tagged(0, "0+")
            .ignorable(),
    ],
);

/// CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY is record type 7: a member's target.
pub static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Message =
    key!("ConsumerGroupTargetAssignmentMemberKey", "7", "member_id");

pub static CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Message = value(
    "ConsumerGroupTargetAssignmentMemberValue",
    &[f("topic_partitions", STRUCTS, "0+").fields(&TOPIC_PARTITIONS)],
);

/// CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY is record type 8: where a member's
/// reconciliation stands.
pub static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Message =
    key!("ConsumerGroupCurrentMemberAssignmentKey", "8", "member_id");

/// CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: the member's epochs, its state (0 stable,
/// 1 unrevoked partitions, 2 unreleased partitions), what it owns and what it must give back.
/// 4.3 adds each partition's assignment epoch (KIP-1251), tagged.
pub static CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Message = value(
    "ConsumerGroupCurrentMemberAssignmentValue",
    &[
        f("member_epoch", INT32, "0+"),
        f("previous_member_epoch", INT32, "0+"),
        f("state", INT8, "0+"),
        f("assigned_partitions", STRUCTS, "0+").fields(&CURRENT_TOPIC_PARTITIONS),
        f("partitions_pending_revocation", STRUCTS, "0+").fields(&CURRENT_TOPIC_PARTITIONS),
    ],
);

/// CONSUMER_GROUP_REGULAR_EXPRESSION_KEY is record type 16 (Kafka 4.0): a regex some member
/// subscribes with.
pub static CONSUMER_GROUP_REGULAR_EXPRESSION_KEY: Message = key!(
    "ConsumerGroupRegularExpressionKey",
    "16",
    "regular_expression"
);

/// CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE: the topics it matched, the metadata version and
/// the time of that resolution.
pub static CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE: Message = value(
    "ConsumerGroupRegularExpressionValue",
    &[
        f("topics", STRINGS, "0+"),
        f("version", INT64, "0+"),
        f("timestamp", INT64, "0+"),
    ],
);

/// SHARE_GROUP_MEMBER_METADATA_KEY is record type 10: a share group member's (KIP-932)
/// subscription.
pub static SHARE_GROUP_MEMBER_METADATA_KEY: Message =
    key!("ShareGroupMemberMetadataKey", "10", "member_id");

/// SHARE_GROUP_MEMBER_METADATA_VALUE is what a share group member said of itself.
pub static SHARE_GROUP_MEMBER_METADATA_VALUE: Message = value(
    "ShareGroupMemberMetadataValue",
    &[
        f("rack_id", STRING, "0+").nullable("0+"),
        f("client_id", STRING, "0+"),
        f("client_host", STRING, "0+"),
        f("subscribed_topic_names", STRINGS, "0+"),
    ],
);

/// SHARE_GROUP_METADATA_KEY is record type 11: a share group's epoch.
pub static SHARE_GROUP_METADATA_KEY: Message = key!("ShareGroupMetadataKey", "11",);

/// SHARE_GROUP_METADATA_VALUE holds the group epoch and the hash of the subscribed topics'
/// metadata, both untagged (a consumer group's hash is tagged: it came later).
pub static SHARE_GROUP_METADATA_VALUE: Message = value(
    "ShareGroupMetadataValue",
    &[f("epoch", INT32, "0+"), f("metadata_hash", INT64, "0+")],
);

/// SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY is record type 12: the epoch of a share group's
/// target assignment.
pub static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY: Message =
    key!("ShareGroupTargetAssignmentMetadataKey", "12",);

/// SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: as the consumer group's, 4.3 adds when the
/// assignment was computed (KIP-1263) as a tagged field, which 4.2 lacks.
pub static SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE: Message = value(
    "ShareGroupTargetAssignmentMetadataValue",
    &[
        f("assignment_epoch", INT32, "0+"),
        f("assignment_timestamp", INT64, "0+")
            .tagged(0, "0+")
            .ignorable(),
    ],
);

/// SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY is record type 13: a share group member's target.
pub static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY: Message =
    key!("ShareGroupTargetAssignmentMemberKey", "13", "member_id");

pub static SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE: Message = value(
    "ShareGroupTargetAssignmentMemberValue",
    &[f("topic_partitions", STRUCTS, "0+").fields(&TOPIC_PARTITIONS)],
);

/// SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY is record type 14: a share group member's epochs
/// and assignment.
pub static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY: Message =
    key!("ShareGroupCurrentMemberAssignmentKey", "14", "member_id");

/// SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: the member's epochs, its state and what it is
/// assigned; a share member revokes nothing, so there is no pending revocation.
pub static SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE: Message = value(
    "ShareGroupCurrentMemberAssignmentValue",
    &[
        f("member_epoch", INT32, "0+"),
        f("previous_member_epoch", INT32, "0+"),
        f("state", INT8, "0+"),
        f("assigned_partitions", STRUCTS, "0+").fields(&TOPIC_PARTITIONS),
    ],
);

/// SHARE_GROUP_STATE_PARTITION_METADATA_KEY is record type 15: where the share coordinator's
/// state of a share group's topics stands.
pub static SHARE_GROUP_STATE_PARTITION_METADATA_KEY: Message =
    key!("ShareGroupStatePartitionMetadataKey", "15",);

/// TOPIC_PARTITIONS_INFO is a topic by id and name with some of its partitions.
static TOPIC_PARTITIONS_INFO: [Field; 3] = [
    f("topic_id", UUID, "0+"),
    f("topic_name", STRING, "0+"),
    f("partitions", INT32S, "0+"),
];

/// SHARE_GROUP_STATE_PARTITION_METADATA_VALUE: the topic-partitions whose share state is being
/// initialized, those initialized, and the topics whose state is being deleted.
pub static SHARE_GROUP_STATE_PARTITION_METADATA_VALUE: Message = value(
    "ShareGroupStatePartitionMetadataValue",
    &[
        f("initializing_topics", STRUCTS, "0+").fields(&TOPIC_PARTITIONS_INFO),
        f("initialized_topics", STRUCTS, "0+").fields(&TOPIC_PARTITIONS_INFO),
        f("deleting_topics", STRUCTS, "0+")
            .fields(&[f("topic_id", UUID, "0+"), f("topic_name", STRING, "0+")]),
    ],
);

/// share_key declares the key of record type `ty` of `__share_group_state`: a share-partition,
/// by group id, topic id and partition.
macro_rules! share_key {
    ($name:literal, $ty:literal) => {
        Message {
            name: $name,
            api_key: -1,
            kind: Kind::Header,
            valid: Versions::parse($ty),
            flexible: Versions::parse("none"),
            fields: &[
                f("group_id", STRING, $ty),
                f("topic_id", UUID, $ty),
                f("partition", INT32, $ty),
            ],
        }
    };
}

/// STATE_BATCH is a range of offsets of a share-partition in one delivery state (0 available,
/// 2 acknowledged, 4 archived) with its delivery count.
static STATE_BATCH: [Field; 4] = [
    f("first_offset", INT64, "0+"),
    f("last_offset", INT64, "0+"),
    f("delivery_state", INT8, "0+"),
    f("delivery_count", INT16, "0+"),
];

/// SHARE_SNAPSHOT_KEY is `__share_group_state`'s record type 0: a share-partition's whole
/// state.
pub static SHARE_SNAPSHOT_KEY: Message = share_key!("ShareSnapshotKey", "0");

/// SHARE_SNAPSHOT_VALUE: the epochs, the share-partition start offset, when the state was
/// created and written, and its state batches. 4.2 adds how many offsets from the start offset
/// on are done (KIP-1226) as a tagged field.
pub static SHARE_SNAPSHOT_VALUE: Message = value(
    "ShareSnapshotValue",
    &[
        f("snapshot_epoch", INT32, "0+"),
        f("state_epoch", INT32, "0+"),
        f("leader_epoch", INT32, "0+"),
        f("start_offset", INT64, "0+"),
        f("delivery_complete_count", INT32, "0+")
            .default(DefaultValue::Int(-1))
            .tagged(0, "0+"),
        f("create_timestamp", INT64, "0+"),
        f("write_timestamp", INT64, "0+"),
        f("state_batches", STRUCTS, "0+").fields(&STATE_BATCH),
    ],
);

/// SHARE_UPDATE_KEY is `__share_group_state`'s record type 1: a change to a share-partition's
/// state since its snapshot.
pub static SHARE_UPDATE_KEY: Message = share_key!("ShareUpdateKey", "1");

/// SHARE_UPDATE_VALUE: the epochs, the start offset (-1: unchanged), the tagged count of done
/// offsets (4.2) and only the state batches that changed.
pub static SHARE_UPDATE_VALUE: Message = value(
    "ShareUpdateValue",
    &[
        f("snapshot_epoch", INT32, "0+"),
        f("leader_epoch", INT32, "0+"),
        f("start_offset", INT64, "0+"),
        f("delivery_complete_count", INT32, "0+")
            .default(DefaultValue::Int(-1))
            .tagged(0, "0+"),
        f("state_batches", STRUCTS, "0+").fields(&STATE_BATCH),
    ],
);

/// TRANSACTION_LOG_KEY is `__transaction_state`'s key, Kafka's `TransactionLogKey.json` of the
/// `transaction-coordinator` module: record type 0, the transactional id.
pub static TRANSACTION_LOG_KEY: Message = Message {
    name: "TransactionLogKey",
    api_key: -1,
    kind: Kind::Header,
    valid: Versions::parse("0"),
    flexible: Versions::parse("none"),
    fields: &[f("transactional_id", STRING, "0")],
};

/// TRANSACTION_LOG_VALUE is `TransactionLogValue.json`: a transactional id's metadata. v1 is
/// the first flexible version (written once `transaction.version` is 1 or more) and carries the
/// tagged previous and next producer ids, next epoch and client transaction version. The
/// partitions are null in an Empty record.
pub static TRANSACTION_LOG_VALUE: Message = Message {
    name: "TransactionLogValue",
    api_key: -1,
    kind: Kind::Header,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[
        f("producer_id", INT64, "0+"),
        f("previous_producer_id", INT64, "1+")
            .default(DefaultValue::Int(-1))
            .tagged(0, "1+"),
        f("next_producer_id", INT64, "1+")
            .default(DefaultValue::Int(-1))
            .tagged(1, "1+"),
        f("producer_epoch", INT16, "0+"),
        f("next_producer_epoch", INT16, "1+")
            .default(DefaultValue::Int(-1))
            .tagged(3, "1+"),
        f("transaction_timeout_ms", INT32, "0+"),
        f("transaction_status", INT8, "0+"),
        f("transaction_partitions", STRUCTS, "0+")
            .nullable("0+")
            .fields(&[f("topic", STRING, "0+"), f("partition_ids", INT32S, "0+")]),
        f("transaction_last_update_timestamp_ms", INT64, "0+"),
        f("transaction_start_timestamp_ms", INT64, "0+"),
        f("client_transaction_version", INT16, "1+").tagged(2, "1+"),
    ],
};

/// RECORDS lists every record schema declared here.
pub static RECORDS: &[&Message] = &[
    &OFFSET_COMMIT_KEY,
    &OFFSET_COMMIT_VALUE,
    &GROUP_METADATA_KEY,
    &GROUP_METADATA_VALUE,
    &CONSUMER_GROUP_METADATA_KEY,
    &CONSUMER_GROUP_METADATA_VALUE,
    &CONSUMER_GROUP_PARTITION_METADATA_KEY,
    &CONSUMER_GROUP_PARTITION_METADATA_VALUE,
    &CONSUMER_GROUP_MEMBER_METADATA_KEY,
    &CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    &CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    &CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    &CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    &CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    &CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    &CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    &CONSUMER_GROUP_REGULAR_EXPRESSION_KEY,
    &CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE,
    &SHARE_GROUP_MEMBER_METADATA_KEY,
    &SHARE_GROUP_MEMBER_METADATA_VALUE,
    &SHARE_GROUP_METADATA_KEY,
    &SHARE_GROUP_METADATA_VALUE,
    &SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    &SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    &SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    &SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    &SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    &SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    &SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
    &SHARE_GROUP_STATE_PARTITION_METADATA_VALUE,
    &SHARE_SNAPSHOT_KEY,
    &SHARE_SNAPSHOT_VALUE,
    &SHARE_UPDATE_KEY,
    &SHARE_UPDATE_VALUE,
    &TRANSACTION_LOG_KEY,
    &TRANSACTION_LOG_VALUE,
];
