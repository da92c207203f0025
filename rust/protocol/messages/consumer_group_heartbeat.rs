//! ConsumerGroupHeartbeat (api key 68), v0-1: a member of a consumer group (KIP-848) joins,
//! heartbeats, acknowledges revocations and leaves, all with this one request. v1 makes the
//! member id the client's to generate (KIP-1082) and adds the topic regex; both are flexible.
//!
//! Transcribed from Kafka 4.x's `ConsumerGroupHeartbeat{Request,Response}.json`.

use crate::protocol::schema::*;

/// TOPIC_PARTITIONS is Kafka's `TopicPartitions` common struct of this api: a topic by id and
/// some of its partitions.
static TOPIC_PARTITIONS: [Field; 2] = [f("topic_id", UUID, "0+"), f("partitions", INT32S, "0+")];

pub static REQUEST: Message = Message {
    name: "ConsumerGroupHeartbeatRequest",
    api_key: 68,
    kind: Kind::Request,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("group_id", STRING, "0+"),
        f("member_id", STRING, "0+"),
        f("member_epoch", INT32, "0+"),
        f("instance_id", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("rack_id", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("rebalance_timeout_ms", INT32, "0+").default(DefaultValue::Int(-1)),
        f("subscribed_topic_names", STRINGS, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("subscribed_topic_regex", STRING, "1+")
            .nullable("1+")
            .default(DefaultValue::Null),
        f("server_assignor", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("topic_partitions", STRUCTS, "0+")
            .nullable("0+")
            .default(DefaultValue::Null)
            .fields(&TOPIC_PARTITIONS),
    ],
};

pub static RESPONSE: Message = Message {
    name: "ConsumerGroupHeartbeatResponse",
    api_key: 68,
    kind: Kind::Response,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("0+"),
    fields: &[
        f("throttle_time_ms", INT32, "0+"),
        f("error_code", INT16, "0+"),
        f("error_message", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("member_id", STRING, "0+")
            .nullable("0+")
            .default(DefaultValue::Null),
        f("member_epoch", INT32, "0+"),
        f("heartbeat_interval_ms", INT32, "0+"),
        // A nullable struct: null says the assignment did not change.
        f("assignment", STRUCT, "0+")
            .nullable("0+")
            .default(DefaultValue::Null)
            .fields(&[f("topic_partitions", STRUCTS, "0+").fields(&TOPIC_PARTITIONS)]),
    ],
};
