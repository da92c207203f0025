//! ShareFetch (api key 78), v1-2: a share group member (KIP-932) fetches records from the
//! partitions of its share session and acknowledges records it was given before; the answer
//! holds the records and which of their offsets the member acquired, and how often each was
//! delivered. v0 was Kafka 4.0's early access and is gone since 4.1 (with it, v0's
//! per-partition max bytes); v1 is the first stable version, v2 adds the acquire mode
//! (KIP-1206: MaxRecords as a hard limit) and renew acknowledgements (KIP-1222). Flexible.
//!
//! Transcribed from Kafka 4.2's `ShareFetch{Request,Response}.json`.

use crate::protocol::schema::*;

/// ACKNOWLEDGEMENT_BATCH is Kafka's `AcknowledgementBatch`: a range of offsets and one
/// acknowledge type for all of them, or one per offset (0 gap, 1 accept, 2 release, 3 reject,
/// 4 renew).
static ACKNOWLEDGEMENT_BATCH: [Field; 3] = [
    f("first_offset", INT64, "0+"),
    f("last_offset", INT64, "0+"),
    f("acknowledge_types", INT8S, "0+"),
];

/// CURRENT_LEADER is Kafka's `LeaderIdAndEpoch` of the share responses.
static CURRENT_LEADER: [Field; 2] = [f("leader_id", INT32, "0+"), f("leader_epoch", INT32, "0+")];

/// NODE_ENDPOINTS are the leaders named by partitions answered NOT_LEADER_OR_FOLLOWER.
static NODE_ENDPOINTS: [Field; 4] = [
    f("node_id", INT32, "0+"),
    f("host", STRING, "0+"),
    f("port", INT32, "0+"),
    f("rack", STRING, "0+")
        .nullable("0+")
        .default(DefaultValue::Null),
];

pub static REQUEST: Message = Message {
    name: "ShareFetchRequest",
    api_key: 78,
    kind: Kind::Request,
    valid: Versions::parse("1-2"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("group_id", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("member_id", STRING, "0+").nullable("0+"),
        // 0 opens a share session, -1 closes it; otherwise one more than the last.
        f("share_session_epoch", INT32, "0+"),
        f("max_wait_ms", INT32, "0+"),
        f("min_bytes", INT32, "0+"),
        f("max_bytes", INT32, "0+").default(DefaultValue::Int(0x7fffffff)),
        f("max_records", INT32, "1+"),
        f("batch_size", INT32, "1+"),
        // 0 batch-optimized, 1 record limit.
        f("share_acquire_mode", INT8, "2+").ignorable(),
        f("is_renew_ack", BOOL, "2+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("topic_id", UUID, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                // v0 only, which no broker serves since Kafka 4.1.
                f("partition_max_bytes", INT32, "0"),
                f("acknowledgement_batches", STRUCTS, "0+").fields(&ACKNOWLEDGEMENT_BATCH),
            ]),
        ]),
        f("forgotten_topics_data", STRUCTS, "0+")
            .fields(&[f("topic_id", UUID, "0+"), f("partitions", INT32S, "0+")]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "ShareFetchResponse",
    api_key: 78,
    kind: Kind::Response,
    valid: Versions::parse("1-2"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("error_message", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("acquisition_lock_timeout_ms", INT32, "1+"),
        f("responses", STRUCTS, "0+").fields(&[
            f("topic_id", UUID, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
                f("error_message", STRING, "0+")
                    .nullable("0+")
                    .default(DefaultValue::Null),
                f("acknowledge_error_code", INT16, "0+"),
                f("acknowledge_error_message", STRING, "0+")
                    .nullable("0+")
                    .default(DefaultValue::Null),
                f("current_leader", STRUCT, "0+").fields(&CURRENT_LEADER),
                // Nullable in v0 only: from v1 an empty record set, never null.
                f("records", RECORDS, "0+").nullable("0"),
                f("acquired_records", STRUCTS, "0+").fields(&[
                    f("first_offset", INT64, "0+"),
                    f("last_offset", INT64, "0+"),
                    f("delivery_count", INT16, "0+"),
                ]),
            ]),
        ]),
        f("node_endpoints", STRUCTS, "0+").fields(&NODE_ENDPOINTS),
    ],
};
