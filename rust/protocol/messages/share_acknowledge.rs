//! ShareAcknowledge (api key 79), v1-2: a share group member (KIP-932) acknowledges records
//! without fetching more, in its share session (epoch -1 closes the session). v0 was Kafka
//! 4.0's early access and is gone since 4.1; v1 is the first stable version, v2 adds renew
//! acknowledgements (KIP-1222) and, in the answer, the acquisition lock timeout they renew
//! to. Flexible.
//!
//! Transcribed from Kafka 4.2's `ShareAcknowledge{Request,Response}.json`.

use crate::protocol::schema::*;

/// ACKNOWLEDGEMENT_BATCH is Kafka's `AcknowledgementBatch`, as in ShareFetch: a range of
/// offsets and one acknowledge type for all of them, or one per offset (0 gap, 1 accept,
/// 2 release, 3 reject, 4 renew).
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
    name: "ShareAcknowledgeRequest",
    api_key: 79,
    kind: Kind::Request,
    valid: Versions::parse("1-2"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("group_id", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("member_id", STRING, "0+").nullable("0+"),
        f("share_session_epoch", INT32, "0+"),
        f("is_renew_ack", BOOL, "2+"),
        f("topics", STRUCTS, "0+").fields(&[
            f("topic_id", UUID, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("acknowledgement_batches", STRUCTS, "0+").fields(&ACKNOWLEDGEMENT_BATCH),
            ]),
        ]),
    ],
};

pub static RESPONSE: Message = Message {
    name: "ShareAcknowledgeResponse",
    api_key: 79,
    kind: Kind::Response,
    valid: Versions::parse("1-2"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("error_message", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("acquisition_lock_timeout_ms", INT32, "2+").ignorable(),
        f("responses", STRUCTS, "0+").fields(&[
            f("topic_id", UUID, "0+"),
            f("partitions", STRUCTS, "0+").fields(&[
                f("partition_index", INT32, "0+"),
                f("error_code", INT16, "0+"),
                f("error_message", STRING, "0+")
                    .nullable("0+")
                    .default(DefaultValue::Null),
                f("current_leader", STRUCT, "0+").fields(&CURRENT_LEADER),
            ]),
        ]),
        f("node_endpoints", STRUCTS, "0+").fields(&NODE_ENDPOINTS),
    ],
};
